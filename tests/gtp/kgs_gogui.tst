# KGS and GoGui extensions: kgs-genmove_cleanup, kgs-game_over, kgs-chat,
# gogui-analyze_commands and the analyze commands it lists.
# `#? [.*]*` marks a command that must be rejected (an accepted one is an unexpected pass).

# A finished 9x9 game: Black wall on C, White wall on D, a dead white stone at B5 (its
# liberties A5 B4 B6); komi favours Black so that Black has no reason to resign.
boardsize 9
clear_board
komi -40.5
play b c1
play w d1
play b c2
play w d2
play b c3
play w d3
play b c4
play w d4
play b c5
play w d5
play b c6
play w d6
play b c7
play w d7
play b c8
play w d8
play b c9
play w d9
play w b5
play b pass
play w pass
1 final_status_list dead
#? [B5]
# cleanup must not pass while B5 stands: it fills B5's liberties, one per move
2 kgs-genmove_cleanup b
#? [A5|B4|B6]
play w pass
3 kgs-genmove_cleanup b
#? [A5|B4|B6]
play w pass
4 kgs-genmove_cleanup black
#? [A5|B4|B6]
5 showboard
#? [.*\n 5 X \. X O .*Black \(X\) captured 1,.*]
6 final_status_list dead
#? []
7 kgs-genmove_cleanup
#? [.*]*
8 kgs-genmove_cleanup x
#? [.*]*

# kgsGtp's notices: acknowledged, never refused
10 kgs-game_over
#? []
11 kgs-chat game alice hello there
#? [Dosaku [^\n]+]
12 kgs-chat
#? [Dosaku [^\n]+]

# GoGui: the menu, then every entry in the format its type promises
20 gogui-analyze_commands
#? [((gfx|dboard|cboard|sboard|pspairs|var|plist|string|param)/[^/\n]+/[a-z_-]+( [^\n]+)?\n){8,}(gfx|dboard|cboard|sboard|pspairs|var|plist|string|param)/[^/\n]+/[a-z_-]+( [^\n]+)?]
21 dosaku-ownership
#? [(-?[01]\.\d\d ){8}-?[01]\.\d\d(\n(-?[01]\.\d\d ){8}-?[01]\.\d\d){8}]
22 dosaku-policy b
#? [([01]\.\d{3} ){8}[01]\.\d{3}(\n([01]\.\d{3} ){8}[01]\.\d{3}){8}]
23 dosaku-policy w
#? [([01]\.\d{3} ){8}[01]\.\d{3}(\n([01]\.\d{3} ){8}[01]\.\d{3}){8}]
24 dosaku-visits b
#? [[A-HJ][1-9] \d+( [A-HJ][1-9] \d+)*]
25 dosaku-pv w
#? [w ([A-HJ][1-9]|pass)( b ([A-HJ][1-9]|pass) w ([A-HJ][1-9]|pass))*( b ([A-HJ][1-9]|pass))?]
# without a colour: the colour to move (White, after Black's capture)
26 dosaku-pv
#? [w .*]
27 dosaku-ownership b
#? [.*]*
28 dosaku-visits q
#? [.*]*
40 dosaku-territory
#? [((black|white|"") ){8}(black|white|"")(\n((black|white|"") ){8}(black|white|"")){8}]
41 dosaku-winrates w
#? [((\d{1,3}|"") ){8}(\d{1,3}|"")(\n((\d{1,3}|"") ){8}(\d{1,3}|"")){8}]
# White is far behind (komi -40.5), so pass may be its best line's first move
42 dosaku-gfx
#? [VAR w ([A-HJ][1-9]|pass)( [bw] ([A-HJ][1-9]|pass))*\nLABEL [A-HJ][1-9] \d+( [A-HJ][1-9] \d+)*\nINFLUENCE [A-HJ][1-9] -?[01]\.\d\d( [A-HJ][1-9] -?[01]\.\d\d){80}\nTEXT White to move: winrate \d+\.\d%, score lead [-+]\d+\.\d, \d+ visits]
43 final_score
#? [[BW]\+\d+(\.\d+)?|0]
44 dosaku-territory b
#? [.*]*
# the analyze commands played nothing: the record still ends with Black's last cleanup move,
# the last of B5's liberties A5 B4 B6 (which one depends on the search)
29 printsgf
#? [.*;B\[(ae|bf|bd)\]\)]
