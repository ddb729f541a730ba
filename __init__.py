"""Dosaku, a Go engine in Python that speaks GTP: the package `dosaku`.

setup.cfg installs the repository's root as this one package, with its packages (engine, gtp,
launch, ...) and run_engine.py inside it, so that site-packages gets the one name `dosaku` and
nothing else: every module imports the others through it (`from dosaku.engine.rules import
board`), and importing dosaku makes no other name importable. The `dosaku` command is
dosaku.run_engine:main; the tools run as `python -m dosaku.tournament.match` and the like, from
any folder, once the package is installed (`pip install -e .` in a checkout).
"""
