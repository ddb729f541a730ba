"""Have the CPU treat subnormal float32 numbers as zero on the threads that run networks.

On Intel CPUs every product with a subnormal operand or result takes a microcode assist: a
transformer net's activations make enough of them to cost 1.4x on 19x19 evaluations
(docs/performance.md#subnormal-numbers). onnxruntime's own switch (`session.set_denormal_as_zero`)
reaches only its pool threads and the thread that created the process's first session, while
the engine builds its sessions on a loader thread and evaluates on others; so each thread that
runs a network sets the SSE control register's flush-to-zero and denormals-are-zero bits itself,
through glibc's `fegetenv`/`fesetenv` (x86-64 Linux only; elsewhere nothing changes).
"""

import ctypes
import ctypes.util
import platform
import sys
import threading

FTZ_DAZ = 0x8040  # MXCSR bits 15 (flush to zero) and 6 (denormals are zero)
FENV_SIZE = 32  # sizeof(fenv_t) in glibc on x86-64 ...
MXCSR_OFFSET = 28  # ... whose last field, __mxcsr, holds the SSE control register

_done = threading.local()
_noted = threading.Event()


def _libm():
    if platform.system() != "Linux" or platform.machine() != "x86_64":
        return None
    name = ctypes.util.find_library("m")
    return ctypes.CDLL(name) if name else None


_LIBM = _libm()


def _mxcsr_field(env) -> int:
    return int.from_bytes(bytes(env[MXCSR_OFFSET:MXCSR_OFFSET + 4]), "little")


def _current_env():
    """The calling thread's floating-point environment (glibc's fenv_t), None where unreadable."""
    env = (ctypes.c_uint8 * FENV_SIZE)()
    return env if _LIBM is not None and _LIBM.fegetenv(env) == 0 else None


def flush_subnormals_here() -> None:
    """Set flush-to-zero and denormals-are-zero on the calling thread (once per thread), with a
    note on stderr, once per process, where the bits would not stay set."""
    if getattr(_done, "tried", False):
        return
    _done.tried = True
    env = _current_env()
    if env is not None:
        env[MXCSR_OFFSET:MXCSR_OFFSET + 4] = list(
            (_mxcsr_field(env) | FTZ_DAZ).to_bytes(4, "little"))
        _LIBM.fesetenv(env)
        env = _current_env()
    on = env is not None and _mxcsr_field(env) & FTZ_DAZ == FTZ_DAZ
    if _LIBM is not None and not on and not _noted.is_set():
        _noted.set()
        print("dosaku: could not have the CPU treat subnormal numbers as zero; networks "
              "run, slower on Intel CPUs", file=sys.stderr)
