"""Where the suite takes what differs from one run to the next: fresh GUIDs (client ids, names
of queues that must not exist), the wall clock, a message's arrival time, and numbers counted
per run. By default the real ones; a builder that needs every run of a case alike
(conformance/golden.py: the golden vectors are byte-identical from one build to the next)
installs a source of its own with ``use``, instead of patching the modules that draw them.

    sources.uuid4()          # a fresh GUID
    sources.now()            # seconds since 1970 (the wall clock the steps compare with)
    sources.arrival_time()   # Message.ArrivalTime of a message the suite enqueues in process
    sources.count("remote")  # 1, 2, 3, ... per name
"""

from __future__ import annotations

import contextlib
import itertools
import threading
import time
import uuid
from collections.abc import Iterator


class Source:
    """The real ones: uuid.uuid4, time.time, counters that start at 1 once per process."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counters: dict[str, itertools.count] = {}

    def uuid4(self) -> uuid.UUID:
        return uuid.uuid4()

    def now(self) -> float:
        return time.time()

    def arrival_time(self) -> int:
        """Message.ArrivalTime for a message enqueued now: seconds since 1970, 32 bits (as
        the reference's server/provision.py gives it, MS-MQRR/3.1.4.7/R16)."""
        return int(self.now()) & 0xFFFFFFFF

    def count(self, name: str) -> int:
        with self._lock:
            counter = self._counters.setdefault(name, itertools.count(1))
            return next(counter)


_current: Source = Source()


def current() -> Source:
    return _current


@contextlib.contextmanager
def use(source: Source) -> Iterator[Source]:
    """Draw from ``source`` in this block (every thread of the suite alike)."""
    global _current
    previous, _current = _current, source
    try:
        yield source
    finally:
        _current = previous


def uuid4() -> uuid.UUID:
    return _current.uuid4()


def now() -> float:
    return _current.now()


def arrival_time() -> int:
    return _current.arrival_time()


def count(name: str) -> int:
    return _current.count(name)
