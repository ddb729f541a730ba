"""The protocol's own stdout: servers (GTP, the JSON analysis engine) write their answers to a
private handle on the real stdout, and file descriptor 1 is pointed at stderr so that stray
prints, from C libraries too, cannot corrupt the protocol stream."""

import os
import sys


def protocol_stream():
    """A private binary handle on the real stdout; fd 1 and sys.stdout then go to stderr."""
    sys.stdout.flush()
    out = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return out
