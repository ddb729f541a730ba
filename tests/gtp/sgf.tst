# loadsgf / printsgf: size, komi, handicap and setup stones, move limits, round trip.
# `#? [.*]*` marks a command that must be rejected (an accepted one is an unexpected pass);
# the failure texts themselves are checked in tests/test_gtp_commands.py.

1 loadsgf sgf/handicap.sgf
#? [white]
2 get_komi
#? [0\.5]
3 showboard
#? [.*\n 7 (\. ){6}X \. \. 7\n.*\n 5 \. \. \. X O \. \. \. \. 5\n.*\n 3 \. \. X (\. ){6}3\n.*]
4 printsgf
#? [\(;GM\[1\]FF\[4\].*SZ\[9\]KM\[0\.5\].*HA\[2\]AB\[gc\]\[cg\]\n?;W\[ee\];B\[de\]\)|\(;GM\[1\]FF\[4\].*SZ\[9\]KM\[0\.5\].*HA\[2\]AB\[cg\]\[gc\]\n?;W\[ee\];B\[de\]\)]
# handicap stones are not moves
5 gg-undo 3
#? [.*]*
# position before move 2: only W[ee] played
6 loadsgf sgf/handicap.sgf 2
#? [black]
7 showboard
#? [.*\n 5 (\. ){4}O (\. ){4}5\n.*]

# setup stones in the root and later nodes, a capture, a pass
10 loadsgf sgf/setup.sgf
#? [white]
11 showboard
#? [\n?\s*A B C D E\n 5 X \. \. \. \. 5\n 4 O \. \. \. \. 4\n 3 \. \. O \. \. 3\n 2 \. \. \. X \. 2\n 1 \. \. \. X O 1\n.*]
12 loadsgf sgf/capture.sgf
#? [black]
13 showboard
#? [.*\n 9 \. X (\. ){7}9\n 8 X X (\. ){7}8\n.*Black \(X\) captured 1.*]
14 printsgf
#? [.*KM\[7\.5\].*;B\[ba\];W\[aa\];B\[bb\];W\[\];B\[ab\];W\[\]\)]

# errors leave the game as it was
20 loadsgf sgf/missing.sgf
#? [.*]*
21 loadsgf sgf/illegal.sgf
#? [.*]*
22 loadsgf
#? [.*]*
23 showboard
#? [.*\n 9 \. X (\. ){7}9\n.*]
