"""How the model waits without threads or clocks: the Environment that events run in.

MS-MQDMPR writes blocking steps as "Wait for one of the following events to occur" (Wait For New
Message, 3.1.7.3.1; Message Position Available waiting for Release Next Reader, 3.1.7.2.2). The
model transcribes an event that can wait as a generator function: at the wait it ``yield``s a
:class:`Wait` naming what it waits on, and the step after the wait reads the value it is resumed
with. Events that call such an event use ``yield from``. Events that never wait are plain
functions.

The Environment drives them:

* ``env.call(gen, token)`` runs an operation until it returns (its result is returned) or waits
  (:class:`Pending` is returned and the operation is parked under the object it waits on);
* ``env.resume(key, value)`` continues a parked operation (an event such as Waiting Message Read
  Satisfied or Waiting Message Read Timer Stop does this); when the operation returns, its
  result is queued as a :class:`Completion` for ``env.take_completions()``;
* ``env.advance(now)`` moves model time forward (milliseconds) and fires the timers that are
  due, in deadline order (ties in start order).

Nothing here reads a clock or draws a random number: ``now`` is given by the caller and
identifiers come from ``env.ids`` (sequential by default; inject another source to vary them).
"""

from __future__ import annotations

import heapq
import itertools
import uuid
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from typing import Any

from mqconform.model.choices import REFERENCE, Choices
from mqconform.model.refs import taken

#: MS-MQDMPR's "Infinite" timeout
INFINITE = float("inf")


@dataclass(frozen=True)
class Wait:
    """Yielded by an event at "Wait for one of the following events to occur"."""

    key: Any  # the object the wait is keyed on (a WaitingMessageReadOperation, a Queue, ...)
    what: str = ""


@dataclass(frozen=True)
class Pending:
    """Returned by ``Environment.call`` when the operation waits; its result comes later as a
    Completion with the same token."""

    token: Any


@dataclass(frozen=True)
class Completion:
    token: Any
    result: Any


class SequentialIds:
    """Identifier source: handles, context values and GUIDs from counters (replayable)."""

    def __init__(self, start: int = 1):
        self._handles = itertools.count(start)
        self._guids = itertools.count(start)

    def handle(self) -> int:
        return next(self._handles)

    def guid(self) -> uuid.UUID:
        """A version-4-shaped GUID whose last 48 bits count up."""
        n = next(self._guids)
        return uuid.UUID(f"00000000-0000-4000-8000-{n & 0xFFFFFFFFFFFF:012x}")


def _CANCELLED() -> None:  # noqa: N802 - the handler of a cancelled timer
    """A cancelled timer never fires."""


@dataclass(order=True)
class _Timer:
    deadline: float
    seq: int
    handler: Callable[[], None] = field(compare=False)
    key: Any = field(compare=False, default=None)
    cancelled: bool = field(compare=False, default=False)


Operation = Generator[Wait, Any, Any]


class Environment:
    """The queue manager's surroundings: time, timers, identifiers and parked operations.

    ``local_queue_manager`` is the LocalQueueManager of MS-MQDMPR (a QueueManager ADM element).
    """

    def __init__(self, local_queue_manager: Any = None, ids: Any = None, now: int = 0):
        self.local_queue_manager = local_queue_manager
        # the directory service the queue manager talks to (model.directory.Directory), if any
        self.directory = None
        #: the addresses that name this computer in a DIRECT=TCP format name besides its own
        #: name (MS-MQMQ 2.1.2): the server sets the ones it listens on
        self.local_addresses: tuple[str, ...] = ()
        self.ids = ids if ids is not None else SequentialIds()
        #: what the queue manager does where the documents leave it free (model/choices.py)
        self.choices: Choices = REFERENCE
        self.now = now
        self._timers: list[_Timer] = []
        self._cancelled = 0  # cancelled timers still in the heap
        self._timer_seq = itertools.count()
        self._timers_by_key: dict[int, _Timer] = {}
        self._parked: dict[int, tuple[Operation, Any, Any]] = {}
        self._completions: list[Completion] = []
        self._tokens = itertools.count(1)

    # ------------------------------------------------------------------ operations
    def call(self, operation: Any, token: Any = None) -> Any:
        """Run ``operation`` (a generator from a waiting event, or a plain value returned by a
        non-waiting event). Returns the result, or Pending(token) if it waits."""
        if not isinstance(operation, Generator):
            return operation
        if token is None:
            token = next(self._tokens)
        return self._step(operation, token, None, first=True)

    def _step(self, operation: Operation, token: Any, value: Any, first: bool = False) -> Any:
        try:
            wait = next(operation) if first else operation.send(value)
        except StopIteration as done:
            if first:
                return done.value
            self._completions.append(Completion(token, done.value))
            return None
        if not isinstance(wait, Wait):
            raise TypeError(f"an event yielded {wait!r}; events yield only Wait")
        self._parked[id(wait.key)] = (operation, token, wait.key)
        return Pending(token)

    def is_waiting(self, key: Any) -> bool:
        return id(key) in self._parked

    def resume(self, key: Any, value: Any) -> bool:
        """Continue the operation waiting on ``key`` with ``value``; False if none waits."""
        parked = taken(self._parked, id(key))
        if parked is None:
            return False
        operation, token, _ = parked
        self._step(operation, token, value)
        return True

    def take_completions(self) -> list[Completion]:
        out, self._completions = self._completions, []
        return out

    def waiting_tokens(self) -> list[Any]:
        return [token for _, token, _ in self._parked.values()]

    # ------------------------------------------------------------------ timers
    def start_timer(self, delay_ms: float, handler: Callable[[], None], key: Any = None) -> None:
        """Start a timer that calls ``handler`` ``delay_ms`` after now; an infinite delay never
        fires. A timer started with a ``key`` can be cancelled by that key."""
        if delay_ms == INFINITE:
            return
        timer = _Timer(self.now + max(0.0, delay_ms), next(self._timer_seq), handler, key)
        heapq.heappush(self._timers, timer)
        if key is not None:
            self._timers_by_key[id(key)] = timer

    def cancel_timer(self, key: Any) -> bool:
        timer = taken(self._timers_by_key, id(key))
        if timer is None or timer.cancelled:
            return False
        timer.cancelled = True
        # what its handler holds (an operation, its descriptor, its queue) goes now, not at
        # the deadline, which may be an hour away; the heap is rebuilt once the cancelled
        # timers are half of it, so they do not pile up either
        timer.handler = _CANCELLED
        timer.key = None
        self._cancelled += 1
        if self._cancelled * 2 > len(self._timers):
            self._timers = [t for t in self._timers if not t.cancelled]
            heapq.heapify(self._timers)
            self._cancelled = 0
        return True

    def timer_deadline(self, key: Any) -> float | None:
        timer = self._timers_by_key.get(id(key))
        return None if timer is None or timer.cancelled else timer.deadline

    def next_deadline(self) -> float | None:
        while self._timers and self._timers[0].cancelled:
            heapq.heappop(self._timers)
            self._cancelled = max(0, self._cancelled - 1)
        return self._timers[0].deadline if self._timers else None

    def advance(self, now: int) -> int:
        """Set the time to ``now`` (it never goes back) and fire every timer due by then, each at
        its own deadline. Returns how many fired."""
        fired = 0
        while True:
            deadline = self.next_deadline()
            if deadline is None or deadline > now:
                break
            timer = heapq.heappop(self._timers)
            if timer.key is not None and self._timers_by_key.get(id(timer.key)) is timer:
                taken(self._timers_by_key, id(timer.key))
            self.now = max(self.now, int(timer.deadline))
            timer.handler()
            fired += 1
        self.now = max(self.now, now)
        return fired
