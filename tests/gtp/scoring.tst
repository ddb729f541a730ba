# final_score and final_status_list.
# `#? [.*]*` marks a command that must be rejected (an accepted one is an unexpected pass);
# the failure texts themselves are checked in tests/test_gtp_commands.py.

boardsize 5
clear_board
komi 7.5
1 final_score
#? [W\+7\.5]
komi 0.5
play b c3
2 final_score
#? [B\+24\.5]
komi 0
clear_board
3 final_score
#? [0]
# black owns columns A-B (10 points), white D-E (10), C is dame
play b b1
play w d1
play b b2
play w d2
play b b3
play w d3
play b b4
play w d4
play b b5
play w d5
4 final_score
#? [0]
komi 0.5
5 final_score
#? [W\+0\.5]
# territory scoring: 3 points each, no prisoners, komi decides
kata-set-rules japanese
6 final_score
#? [W\+0\.5]
7 final_status_list alive
#? [(B[1-5] ){4}B[1-5]\n(D[1-5] ){4}D[1-5]|(D[1-5] ){4}D[1-5]\n(B[1-5] ){4}B[1-5]]
8 final_status_list dead
#? []
9 final_status_list seki
#? []
10 final_status_list foo
#? [.*]*
