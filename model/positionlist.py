"""MS-MQDMPR 3.1.1.2 Queue.MessagePositionList: the ordered linked list of MessagePosition
elements, with its special locations Head, Tail, Start and End.

The document's rules:

* entries are arranged in ascending order by arrival time within priority
  (MS-MQDMPR/3.1.1.2/R11): higher priority first, then first come first;
* Head is the first entry, and equals End when the list is empty (MS-MQDMPR/3.1.1.2/R12);
  Tail is the last entry;
* Start is a reserved entry not linked to the list by its Next reference, referenced by new
  cursors; End is a reserved entry referenced by cursors that advanced past the Tail.

A removed position keeps being a valid place to step from: a cursor whose current position was
deleted steps to the entry that would follow it if it were still in the list
(``next_of``/``previous_of`` compare the list's order key, so positions inserted after the
removal are seen exactly where the order puts them). Positions carry three attributes that
belong to this list and not to the ADM: ``_key`` (order key), ``_linked`` and the ``next`` /
``previous`` links the ADM names.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any


class _Reserved:
    """Start and End: reserved entries of one list (not messages)."""

    __slots__ = ("name", "next", "previous", "state", "message_reference", "_key", "_linked")

    def __init__(self, name: str, key: tuple[int, int]):
        self.name = name
        self.next: Any = None
        self.previous: Any = None
        self.state = None
        self.message_reference = None
        self._key = key
        self._linked = False

    def __repr__(self) -> str:
        return f"<MessagePositionList.{self.name}>"


class MessagePositionList:
    """The Queue's MessagePositionList (MS-MQDMPR 3.1.1.2)."""

    def __init__(self) -> None:
        self.start = _Reserved("Start", (-(1 << 62), 0))
        self.end = _Reserved("End", (1 << 62, 0))
        self._first: Any = None
        self._last: Any = None
        self._count = 0
        self._arrivals = 0
        #: last linked entry of each priority, for O(levels) insertion
        self._last_of_priority: dict[int, Any] = {}
        #: counts inserts and removals: a store (server/store.py) rewrites a queue's messages
        #: only when its list changed
        self.version = 0

    # ------------------------------------------------------------------ special locations
    @property
    def head(self) -> Any:
        """The first entry; End when the list is empty (MS-MQDMPR/3.1.1.2/R12)."""
        return self._first if self._first is not None else self.end

    @property
    def tail(self) -> Any:
        """The last entry; Start when the list is empty."""
        return self._last if self._last is not None else self.start

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[Any]:
        node = self._first
        while node is not None:
            yield node
            node = node.next if node.next is not self.end else None

    # ------------------------------------------------------------------ order
    @staticmethod
    def _priority_of(position: Any) -> int:
        message = position.message_reference
        return int(getattr(message, "priority", 0) or 0) if message is not None else 0

    def insert(self, position: Any) -> None:
        """Insert by priority (higher first), then arrival (MS-MQDMPR/3.1.1.2/R11)."""
        priority = self._priority_of(position)
        self._arrivals += 1
        position._key = (-priority, self._arrivals)
        position._linked = True
        after = None
        for p in range(priority, max(self._last_of_priority, default=priority) + 1):
            candidate = self._last_of_priority.get(p)
            if candidate is not None:
                after = candidate  # nearest equal-or-higher priority group ends here
                break
        if after is None:
            # no entry of this or higher priority: goes first
            nxt = self._first
            position.previous = self.start
            position.next = nxt if nxt is not None else self.end
            if nxt is not None:
                nxt.previous = position
            else:
                self._last = position
                self.end.previous = position
            self._first = position
        else:
            nxt = after.next
            position.previous = after
            position.next = nxt
            after.next = position
            if nxt is self.end:
                self._last = position
                self.end.previous = position
            else:
                nxt.previous = position
        self._last_of_priority[priority] = position
        self._count += 1
        self.version += 1

    def remove(self, position: Any) -> None:
        """Unlink an entry. Its own next/previous stay as they were; next_of/previous_of use
        the order key, so a cursor resting on it still steps to the right neighbour."""
        if not position._linked:
            return
        prev, nxt = position.previous, position.next
        priority = self._priority_of(position)
        if self._last_of_priority.get(priority) is position:
            if prev is not self.start and self._priority_of(prev) == priority:
                self._last_of_priority[priority] = prev
            else:
                del self._last_of_priority[priority]
        if prev is self.start:
            self._first = nxt if nxt is not self.end else None
        else:
            prev.next = nxt
        if nxt is self.end:
            self._last = prev if prev is not self.start else None
            self.end.previous = self._last
        else:
            nxt.previous = prev
        position._linked = False
        self._count -= 1
        self.version += 1

    def reinsert(self, position: Any) -> None:
        """Link a removed entry again at the place its order key gives it, among the entries
        linked now: a queue manager whose storage could not keep a removal takes it back
        (server/store.py). An entry never linked is inserted as new."""
        if position._linked:
            return
        if position._key is None:
            self.insert(position)
            return
        key = position._key
        after = self.start
        node = self._first
        while node is not None and node._key < key:
            after = node
            node = node.next if node.next is not self.end else None
        position.previous = after
        position.next = node if node is not None else self.end
        if after is self.start:
            self._first = position
        else:
            after.next = position
        if node is None:
            self._last = position
            self.end.previous = position
        else:
            node.previous = position
        priority = self._priority_of(position)
        last = self._last_of_priority.get(priority)
        if last is None or last._key < key:
            self._last_of_priority[priority] = position
        position._linked = True
        self._count += 1
        self.version += 1

    def last_of_priority(self, priority: int) -> Any:
        """The last entry of this priority in the list (None when it holds none)."""
        return self._last_of_priority.get(priority)

    @staticmethod
    def arrival_of(position: Any) -> int:
        """The entry's arrival number in this list (its order within its priority)."""
        return position._key[1]

    # ------------------------------------------------------------------ stepping
    def next_of(self, position: Any) -> Any:
        """The entry after ``position`` in list order (End after the last; the Head after
        Start). For an unlinked (removed) position: the first linked entry ordered after it."""
        if position is self.start:
            return self.head
        if position is self.end:
            return self.end
        if position._linked:
            return position.next
        node = position.previous
        while node is not self.start and not node._linked:
            node = node.previous
        node = self.head if node is self.start else node.next
        while node is not self.end and node._key < position._key:
            node = node.next
        return node

    def previous_of(self, position: Any) -> Any:
        """The entry before ``position`` (Start before the Head; the Tail before End)."""
        if position is self.end:
            return self.tail
        if position is self.start:
            return self.start
        if position._linked:
            return position.previous
        node = position.next
        while node is not self.end and not node._linked:
            node = node.next
        node = self.tail if node is self.end else node.previous
        while node is not self.start and node._key > position._key:
            node = node.previous
        return node

    def contains(self, position: Any) -> bool:
        return bool(position._linked) and position in set(self)
