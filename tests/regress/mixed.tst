# One test of each outcome against GNU Go 3.8 (see tests/test_regress.py).
boardsize 5
clear_board
play b zz
10 play b c3
#? [ ]
20 genmove w
#? [!pass]
30 name
#? [Leela]
40 name
#? [Leela]*
50 name
#? [GNU.*]*
60 play w c3
70 play w c3
#? [.*]*
80 play w c3
#? [!pass]
