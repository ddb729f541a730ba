# boardsize, clear_board, komi, showboard.
# `#? [.*]*` marks a command that must be rejected (an accepted one is an unexpected pass);
# the failure texts themselves are checked in tests/test_gtp_commands.py.

1 boardsize 1
#? [.*]*
2 boardsize 26
#? [.*]*
3 boardsize nineteen
#? [.*]*
4 boardsize 5
#? []
5 showboard
#? [\n?\s*A B C D E\n 5 \. \. \. \. \. 5\n.* 1 \. \. \. \. \. 1\n\s*A B C D E\n.*]
6 play b e5
7 showboard
#? [.* 5 \. \. \. \. X 5\n.*]
8 clear_board
9 showboard
#? [.* 5 \. \. \. \. \. 5\n.*]
10 boardsize 25
11 play w z25
12 showboard
#? [.*Y Z\n25 (\. ){24}O 25\n.*]
13 komi 0.5
14 get_komi
#? [0.5]
15 komi -12
16 get_komi
#? [-12]
17 komi abc
#? [.*]*
18 get_komi
#? [-12]
# boardsize keeps komi
19 boardsize 9
20 get_komi
#? [-12]
