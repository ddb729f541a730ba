# Every test here passes against GNU Go 3.8.
boardsize 5
clear_board
komi 0.5

1 play b c3
#? []
2 name
#? [GNU Go]
3 play w c3
#? [!.*]*
# plain numbered command: passes unless the answer is '?'
4 showboard
5 loadsgf games/corner.sgf
#? [black|white]
6 list_stones black
#? [C5 C4 C3]
7 known_command play
#? [true]
