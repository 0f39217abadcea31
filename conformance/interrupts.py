"""Ctrl-C (SIGINT) and a CI job's cancellation (SIGTERM) before a run's session begins.

From its first moment `mqconform run` notes these signals instead of raising
KeyboardInterrupt wherever the interpreter happens to be (``install``). While pytest starts
(imports, plugins, the catalog), a KeyboardInterrupt raised inside a garbage-collector
callback or a ``__del__`` is swallowed, and one raised under pytest's output capture is not
even seen: the run then went on to a green end as if no signal had come. The note is taken
when the suite's session starts (suite_plugin.pytest_sessionstart): the run ends there,
incomplete, before its first case (exit 3). From then on the plugin's own handler takes the
signals (suite_plugin._on_signal)."""

from __future__ import annotations

import signal
import threading
from typing import Any

#: a signal came before the session began
PENDING = threading.Event()

_DEFAULTS = {signal.SIGINT: signal.default_int_handler, signal.SIGTERM: signal.SIG_DFL}


def note_early(signum: int, frame: Any) -> None:
    PENDING.set()


def install() -> dict[int, Any]:
    """(the main thread) ``note_early`` for SIGINT and SIGTERM where the process has their
    defaults (a signal the caller chose to ignore stays ignored); the handlers it replaced,
    for ``restore``."""
    PENDING.clear()
    replaced: dict[int, Any] = {}
    if threading.current_thread() is not threading.main_thread():
        return replaced
    for signum, default in _DEFAULTS.items():
        if signal.getsignal(signum) is default:
            replaced[signum] = signal.signal(signum, note_early)
    return replaced


def restore(replaced: dict[int, Any]) -> None:
    for signum, handler in replaced.items():
        signal.signal(signum, handler)
