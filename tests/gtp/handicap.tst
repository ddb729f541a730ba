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


# Scoring a handicap game, whichever way the two stones (C3, G7) arrive: 9x9, komi 0.5,
# chinese rules (White gets N points for N handicap stones). Black walls C1-C7, C7-G7, G7-G9
# (39 points of area), White walls D1-D6, D6-H6, H6-H9 (42): 39 - 42 - 0.5 - 2 = -5.5.
boardsize 9
kata-set-rules chinese
komi 0.5
clear_board
40 fixed_handicap 2
#? [G7 C3]
play w D1
play b C1
play w D2
play b C2
play w D3
play b C4
play w D4
play b C5
play w D5
play b C6
play w D6
play b C7
play w E6
play b D7
play w F6
play b E7
play w G6
play b F7
play w H6
play b G8
play w H7
play b G9
play w H8
play b pass
play w H9
play b pass
play w pass
41 final_score
#? [W\+5\.5]
# AGA gives N-1, Japanese (territory: 26 - 29 - 0.5) nothing
42 kata-set-rules aga
43 final_score
#? [W\+4\.5]
44 kata-set-rules japanese
45 final_score
#? [W\+3\.5]
kata-set-rules chinese

clear_board
50 place_free_handicap 2
#? [G7 C3]
play w D1
play b C1
play w D2
play b C2
play w D3
play b C4
play w D4
play b C5
play w D5
play b C6
play w D6
play b C7
play w E6
play b D7
play w F6
play b E7
play w G6
play b F7
play w H6
play b G8
play w H7
play b G9
play w H8
play b pass
play w H9
play b pass
play w pass
51 final_score
#? [W\+5\.5]

clear_board
52 set_free_handicap C3 G7
play w D1
play b C1
play w D2
play b C2
play w D3
play b C4
play w D4
play b C5
play w D5
play b C6
play w D6
play b C7
play w E6
play b D7
play w F6
play b E7
play w G6
play b F7
play w H6
play b G8
play w H7
play b G9
play w H8
play b pass
play w H9
play b pass
play w pass
53 final_score
#? [W\+5\.5]

# handicap as consecutive black moves (as Sabaki, GoGui and gtp2ogs send it)
clear_board
play b C3
play b G7
play w D1
play b C1
play w D2
play b C2
play w D3
play b C4
play w D4
play b C5
play w D5
play b C6
play w D6
play b C7
play w E6
play b D7
play w F6
play b E7
play w G6
play b F7
play w H6
play b G8
play w H7
play b G9
play w H8
play b pass
play w H9
play b pass
play w pass
54 final_score
#? [W\+5\.5]

# komi changes after the game count too
55 komi 6.5
56 final_score
#? [W\+11\.5]
komi 0.5

# A set-up position is not handicap: a run of black moves followed by several white moves
# (KataGo's rule). Black D1-D9 (36 points), White E1-E9 (45): 36 - 45 - 0.5 = -9.5, no bonus.
clear_board
play b D1
play b D2
play b D3
play b D4
play b D5
play b D6
play b D7
play b D8
play b D9
play w E1
play w E2
play w E3
play w E4
play w E5
play w E6
play w E7
play w E8
play w E9
play b pass
play w pass
60 final_score
#? [W\+9\.5]
