# Protocol edge cases: ids, unknown commands, administration commands, argument errors.
# Run: python -m dosaku.tournament.regress --engine "python ../../run_engine.py" protocol.tst
# `#? [.*]*` marks a command that must be rejected (an accepted one is an unexpected pass);
# the failure texts themselves are checked in tests/test_gtp_commands.py.

1 protocol_version
#? [2]
# with a network, name and version carry the net's name: `Dosaku (NET)`, `0.1.0+NET`
2 name
#? [Dosaku( \([\w.-]+\))?]
3 version
#? [\d+\.\d+\.\d+(\+[\w.-]+)?]
# an id of several digits and leading zeros is echoed as a number
0004 known_command play
#? [true]
5 known_command foo
#? [false]
# names are case-sensitive
6 known_command PLAY
#? [false]
7 known_command analyze
#? [false]
8 list_commands
#? [.*\bboardsize\n.*\bgg-undo\n.*\bkata-analyze\n.*\blz-genmove_analyze\n.*\bundo\nversion]
9 foo
#? [.*]*
10 known_command
#? [.*]*
11 name extra
#? [.*]*
12 play
#? [.*]*
# trailing comment on a command line
13 get_komi # what is komi?
#? [7\.5]
