"""Builds the Engine in the background so the server can answer at once.

Constructing the engine may compile numba kernels or load a network, which takes seconds;
clients (Sabaki, GoGui) give up on an engine that does not answer `name`/`list_commands`
quickly. The commands that need the engine call `get()`, which waits for the build.
"""

import logging
import threading
import time
from typing import Callable

from dosaku.gtp.protocol import GtpError

log = logging.getLogger(__name__)


class EngineLoader:
    """Holds the Engine once built; `get()` blocks until then."""

    def __init__(self, network: bool | None = None):
        self._ready = threading.Event()
        self._engine = None
        self._error: str | None = None
        self._network_hint = network

    @classmethod
    def of(cls, engine) -> "EngineLoader":
        """A loader around an engine that already exists (tests)."""
        loader = cls()
        loader._engine = engine
        loader._ready.set()
        return loader

    @classmethod
    def start(cls, factory: Callable[[], object],
              network: bool | None = None) -> "EngineLoader":
        """Run `factory` on a daemon thread and hold its result.

        `network`: whether the engine will have a network evaluator, so that list_commands can
        answer exactly before the engine exists (None: unknown, assume not until it exists).
        """
        loader = cls(network)
        threading.Thread(target=loader._build, args=(factory,), name="engine-loader",
                         daemon=True).start()
        return loader

    def _build(self, factory) -> None:
        t0 = time.monotonic()
        try:
            self._engine = factory()
            log.info("engine ready after %.2f s", time.monotonic() - t0)
        except BaseException as exc:  # reported on every later command, never fatal
            log.exception("engine failed to start")
            self._error = f"engine failed to start: {exc}"
        finally:
            self._ready.set()

    @property
    def ready(self) -> bool:
        return self._ready.is_set()

    def has_network(self) -> bool:
        """Whether the engine has a network evaluator; the start hint while it is built."""
        if self._ready.is_set():
            return self._engine is not None and bool(self._engine.has_network)
        return bool(self._network_hint)

    def get(self):
        """The engine (waiting for it); GtpError if building it failed."""
        self._ready.wait()
        if self._engine is None:
            raise GtpError(self._error or "engine failed to start")
        return self._engine
