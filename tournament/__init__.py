"""The tournament kit: drives other GTP engines (controller, match runner with Elo, `.tst`
regression runner). It uses engine/ for rules and game records and never the gtp/ server, so it
can referee any engine, Dosaku included, from outside.
"""
