"""A stand-in for OGS (online-go.com) on loopback, for running the real gtp2ogs in tests.

OGS's server is not ours to run, and gtp2ogs talks to it over a WebSocket and a few HTTP calls.
This package answers those as OGS does, learnt from gtp2ogs's and the goban library's public
sources: `wire.py` (HTTP and WebSocket on one port), `clock.py` (OGS's clocks),
`game.py` (the board, the moves, gamedata), `server.py` (authentication, challenges, games).
"""
