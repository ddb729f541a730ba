# Time and rules commands; repeated time settings never reset the game.
# `#? [.*]*` marks a command that must be rejected (an accepted one is an unexpected pass);
# the failure texts themselves are checked in tests/test_gtp_commands.py.

boardsize 9
clear_board
play b e5
play w c3
1 time_settings 300 30 5
2 time_left b 290 0
3 time_left white 25.5 4
4 time_settings 300 30 5
5 kgs-time_settings byoyomi 600 30 5
6 kgs-time_settings canadian 600 300 25
7 kgs-time_settings absolute 900
8 kgs-time_settings none
9 time_settings 0 10 0
10 showboard
#? [.*\n 5 (\. ){4}X .*\n 3 \. \. O .*]
11 gg-undo 2
#? []
12 time_settings 1 2
#? [.*]*
13 time_settings a b c
#? [.*]*
14 kgs-time_settings fischer 10 5
#? [.*]*
15 time_left q 10 0
#? [.*]*

20 kata-get-rules
#? [\{"hasButton":false,"ko":"SIMPLE","scoring":"AREA","suicide":false,"tax":"NONE","whiteHandicapBonus":"N","friendlyPassOk":true\}]
21 kgs-rules japanese
22 kata-get-rules
#? [.*"ko":"SIMPLE","scoring":"TERRITORY".*"tax":"SEKI".*]
23 kgs-rules chinese
24 kata-get-rules
#? [.*"ko":"POSITIONAL","scoring":"AREA".*]
25 kgs-rules new_zealand
26 kata-get-rules
#? [.*"ko":"SITUATIONAL".*"suicide":true.*]
27 kata-set-rules {"ko":"SIMPLE","suicide":false}
28 kata-get-rules
#? [.*"ko":"SIMPLE","scoring":"AREA","suicide":false.*]
29 kata-set-rules foo
#? [.*]*
30 kgs-rules ing
#? [.*]*
31 kata-get-rules
#? [.*"ko":"SIMPLE".*]
32 clear_cache
33 cputime
#? [\d+\.\d+]
