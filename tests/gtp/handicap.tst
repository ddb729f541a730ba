# Handicap layouts (GNU Go 3.8 answers), free handicap, handicap and history.
# `#? [.*]*` marks a command that must be rejected (an accepted one is an unexpected pass);
# the failure texts themselves are checked in tests/test_gtp_commands.py.

boardsize 19
clear_board
1 fixed_handicap 2
#? [Q16 D4]
clear_board
2 fixed_handicap 3
#? [D16 Q16 D4]
clear_board
3 fixed_handicap 4
#? [D16 Q16 D4 Q4]
clear_board
4 fixed_handicap 5
#? [D16 Q16 K10 D4 Q4]
clear_board
5 fixed_handicap 6
#? [D16 Q16 D10 Q10 D4 Q4]
clear_board
6 fixed_handicap 7
#? [D16 Q16 D10 K10 Q10 D4 Q4]
clear_board
7 fixed_handicap 8
#? [D16 K16 Q16 D10 Q10 D4 K4 Q4]
clear_board
8 fixed_handicap 9
#? [D16 K16 Q16 D10 K10 Q10 D4 K4 Q4]
9 fixed_handicap 2
#? [.*]*
# handicap stones are not moves: undo cannot remove them; white moves next
10 undo
#? [.*]*
11 showboard
#? [.*white to move.*]
clear_board
12 fixed_handicap 1
#? [.*]*
13 fixed_handicap 10
#? [.*]*
boardsize 13
14 fixed_handicap 5
#? [D10 K10 G7 D4 K4]
boardsize 9
15 fixed_handicap 2
#? [G7 C3]
boardsize 8
16 fixed_handicap 5
#? [.*]*
boardsize 7
17 fixed_handicap 4
#? [E5 C5 E3 C3|C5 E5 C3 E3]

# set_free_handicap
boardsize 19
clear_board
20 set_free_handicap D4 D4
#? [.*]*
21 set_free_handicap D4
#? [.*]*
22 set_free_handicap D4 pass
#? [.*]*
23 set_free_handicap Q4 D4 Q16
24 showboard
#? [.*\n 4 (\. ){3}X (\. ){11}X (\. ){3}4\n.*]
25 set_free_handicap K10 C3
#? [.*]*
26 undo
#? [.*]*

# place_free_handicap: the engine chooses; exactly N distinct stones
clear_board
30 place_free_handicap 4
#? [([A-HJ-T]\d+ ){3}[A-HJ-T]\d+]
clear_board
31 place_free_handicap 13
#? [([A-HJ-T]\d+ ){12}[A-HJ-T]\d+]
32 place_free_handicap 2
#? [.*]*
clear_board
33 place_free_handicap 1
#? [.*]*
