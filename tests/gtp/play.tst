# play/undo: coordinates, captures, ko, superko, suicide.
# `#? [.*]*` marks a command that must be rejected (an accepted one is an unexpected pass);
# the failure texts themselves are checked in tests/test_gtp_commands.py.

boardsize 9
clear_board

# coordinates: no column I; J9 is the top right corner
1 play b j9
2 play b i5
#? [.*]*
3 play b k1
#? [.*]*
4 play purple a1
#? [.*]*
5 play b j9
#? [.*]*
6 play w pass
7 showboard
#? [.* 9 (\. ){8}X 9\n.*]

# capture in the corner: white A1 is taken by B1 + A2
clear_board
10 play w a1
11 play b b1
12 play b a2
13 showboard
#? [.*\n 2 X .*\n 1 \. X .*Black \(X\) captured 1.*]
# undo restores the captured stone and the prisoner count
14 undo
15 showboard
#? [.*\n 1 O X .*Black \(X\) captured 0.*]

# simple ko in the centre
clear_board
play b e6
play b d5
play b e4
play w f6
play w g5
play w f4
play w e5
20 play b f5
#? []
21 play w e5
#? [.*]*
22 play w a1
23 play b a9
24 play w e5
#? []
25 showboard
#? [.*\n 5 \. \. \. X O \. O \. \. 5\n.*]

# suicide: illegal under the default (chinese) rules, legal multi-stone suicide under
# tromp-taylor, where single-stone suicide repeats the position (positional superko)
clear_board
play b b1
play b b2
play b a3
play w a1
play b e5
30 play w a2
#? [.*]*
31 kata-set-rules tromp-taylor
32 play w a2
#? []
33 showboard
#? [.*\n 3 X .*\n 2 \. X .*\n 1 \. X .*Black \(X\) captured 2.*]
34 play w a1
#? [.*]*

# superko on 3x3: B1 takes A1 and recreates the position after move 4 (not a simple ko)
boardsize 3
kata-set-rules chinese
play b a2
play w c2
play b b1
play w b2
play b c1
play w a1
40 play b b1
#? []
undo
41 kata-set-rules chinese-ogs
42 play b b1
#? [.*]*
# situational superko: the repeated position had Black to move, now White is to move
43 kata-set-rules aga
44 play b b1
#? []

# undo and gg-undo
boardsize 9
clear_board
50 undo
#? [.*]*
play b c3
play w d4
play b e5
51 gg-undo 4
#? [.*]*
52 gg-undo 2
53 showboard
#? [.*\n 3 \. \. X (\. ){6}3\n.*]
54 gg-undo
55 undo
#? [.*]*
