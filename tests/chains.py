"""Test helper: the chain facts the board keeps at each chain's head, read straight from the array.

The engine itself reads them inline in its kernels; only tests ask for them by point.
"""

from dosaku.engine.rules import board as B


def chain_liberties(b, p: int) -> int:
    """Liberty count of the chain through stone p."""
    return int(b[B.ROW_LIBS, b[B.ROW_HEAD, p]])


def chain_size(b, p: int) -> int:
    """Stone count of the chain through stone p."""
    return int(b[B.ROW_SIZE, b[B.ROW_HEAD, p]])
