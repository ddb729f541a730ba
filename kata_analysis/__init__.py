"""KataGo's JSON analysis engine protocol served by Dosaku (`dosaku analysis`)."""
