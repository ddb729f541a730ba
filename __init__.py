"""The `dosaku` package an install makes of this folder, so that site-packages gets one name.

setup.cfg installs the repository's root as the package `dosaku`, its packages (engine, gtp,
launch, ...) and run_engine.py inside it, rather than as generic top-level names that any other
distribution could also install. The packages import one another by their own names, so
importing dosaku puts this folder first on sys.path: the `dosaku` command (dosaku.run_engine)
does, and so may a program that embeds the engine. In a checkout nothing needs it: commands run
from the root, which Python puts on sys.path.
"""

import os
import sys

HOME = os.path.dirname(os.path.abspath(__file__))
if sys.path[:1] != [HOME]:
    sys.path.insert(0, HOME)
