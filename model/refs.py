"""Collections of references to ADM element instances whose membership tests, removals and
look-ups cost the same however many elements they hold.

MS-MQDMPR 3.1.1 gives an element's collections no structure beyond "a collection"; the model
keeps them in the order elements were added (the order the events walk them in). A plain list
makes every ``remove`` and ``in`` walk the whole collection, and Open Queue's sharing checks
(MS-MQDMPR 3.1.7.1.5 R101-R115: is there a descriptor with this ShareMode and AccessType?)
walked every descriptor of the queue: an open, a close, a cursor's close got slower with
every handle any client held on the queue. These collections keep the elements in an
insertion-ordered dict (an ordered set: elements are compared by identity, ``eq=False``
dataclasses) and, where an event asks, an index:

- ``References``: append, remove, ``in``, ``len``, iteration in order, indexing (for tests);
- ``DescriptorCollection`` (Queue.OpenQueueDescriptorCollection): counts of the descriptors by
  (ShareMode, AccessType), so Open Queue's checks are ``has(share_mode, *access)`` in constant
  time;
- ``CursorCollection`` (OpenQueueDescriptor.CursorCollection): ``find(handle)``, the cursor a
  handle names (MS-MQRR 3.1.4.5 and 3.1.4.7 look a cursor up by hCursor), in constant time
  amortized. A cursor's Handle is set by Initialize (MS-MQDMPR 3.2.7.1) after Open Cursor adds
  it (3.1.7.1.1 R7, R8), so a cursor is indexed at the first look-up after it was added.

Each compares equal to a list of the same elements in the same order, as the list it replaces
did.

CPython keeps a dict's table at the size it grew to when entries are deleted (only a copy is
compact): a collection that held 100,000 references and holds ten would keep megabytes, and
walking it from its first element would step over every deleted one. A dict that has held
at least SHRINK_FROM entries is therefore copied once it holds an eighth of its peak
(``sparse``); the copy costs an eighth of the deletions that led to it. The tables of waits
and timers, empty between bursts, give theirs back when their last entry goes (``taken``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

#: the fewest entries a dict must have held before it is copied when sparse (module doc)
SHRINK_FROM = 1024


def sparse(table: dict, peak: int) -> bool:
    """Does ``table``, which once held ``peak`` entries, hold no more than an eighth of them
    (and was it large)? Then its owner replaces it with a copy (module doc)."""
    return peak >= SHRINK_FROM and len(table) <= peak >> 3


def taken(table: dict, key: Any, default: Any = None) -> Any:
    """``table.pop(key, default)``; the last entry gone, the table it grew to goes too (a
    dict emptied keeps it: module doc)."""
    value = table.pop(key, default)
    if not table:
        table.clear()
    return value


class References:
    """An ordered collection of distinct element references."""

    __slots__ = ("_items", "_peak")

    def __init__(self, items: Iterable[Any] = ()) -> None:
        self._items: dict[Any, None] = {}
        self._peak = 0
        for item in items:
            self.append(item)

    def append(self, item: Any) -> None:
        if item in self._items:
            return  # a collection of references holds an element once
        self._items[item] = None
        if len(self._items) > self._peak:
            self._peak = len(self._items)
        self._added(item)

    def extend(self, items: Iterable[Any]) -> None:
        for item in items:
            self.append(item)

    def __iadd__(self, items: Iterable[Any]) -> References:
        self.extend(items)
        return self

    def remove(self, item: Any) -> None:
        """Take ``item`` out; ValueError if it is not in the collection (as list.remove)."""
        try:
            del self._items[item]
        except KeyError:
            raise ValueError(f"{item!r} is not in the collection") from None
        if sparse(self._items, self._peak):
            self._items = dict(self._items)
            self._peak = len(self._items)
        self._removed(item)

    def discard(self, item: Any) -> bool:
        """Take ``item`` out if it is in; whether it was."""
        if item not in self._items:
            return False
        self.remove(item)
        return True

    def clear(self) -> None:
        for item in list(self._items):
            self.remove(item)

    def first(self) -> Any:
        """The earliest element still in the collection, or None."""
        return next(iter(self._items), None)

    # hooks for the indexes of subclasses
    def _added(self, item: Any) -> None:
        pass

    def _removed(self, item: Any) -> None:
        pass

    def __contains__(self, item: Any) -> bool:
        return item in self._items

    def __iter__(self) -> Iterator[Any]:
        return iter(list(self._items))  # a snapshot: the events remove while they walk

    def __len__(self) -> int:
        return len(self._items)

    def __bool__(self) -> bool:
        return bool(self._items)

    def __getitem__(self, index: int | slice) -> Any:
        return list(self._items)[index]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, References):
            return list(self._items) == list(other._items)
        if isinstance(other, (list, tuple)):
            return list(self._items) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable, as the list it replaces

    def __repr__(self) -> str:
        return f"{type(self).__name__}({list(self._items)!r})"

    def __reduce__(self) -> tuple:
        return (type(self), (list(self._items),))


class DescriptorCollection(References):
    """Queue.OpenQueueDescriptorCollection (MS-MQDMPR 3.1.1.2), counted by (ShareMode,
    AccessType) for Open Queue's sharing checks (MS-MQDMPR 3.1.7.1.5). A descriptor's
    ShareMode and AccessType are set when Open Queue creates it and never change."""

    __slots__ = ("_counts",)

    def __init__(self, items: Iterable[Any] = ()) -> None:
        self._counts: dict[tuple[Any, Any], int] = {}
        super().__init__(items)

    def _added(self, item: Any) -> None:
        key = (item.share_mode, item.access_type)
        self._counts[key] = self._counts.get(key, 0) + 1

    def _removed(self, item: Any) -> None:
        key = (item.share_mode, item.access_type)
        left = self._counts[key] - 1
        if left:
            self._counts[key] = left
        else:
            del self._counts[key]

    def has(self, share_mode: Any, *access: Any) -> bool:
        """Is there a descriptor with ``share_mode`` and one of the ``access`` types?"""
        return any(self._counts.get((share_mode, a)) for a in access)


class CursorCollection(References):
    """OpenQueueDescriptor.CursorCollection (MS-MQDMPR 3.1.1.16), with its cursors by Handle."""

    __slots__ = ("_by_handle", "_unindexed")

    def __init__(self, items: Iterable[Any] = ()) -> None:
        self._by_handle: dict[int, Any] = {}
        self._unindexed: list[Any] = []
        super().__init__(items)

    def _added(self, item: Any) -> None:
        self._unindexed.append(item)

    def _removed(self, item: Any) -> None:
        if self._by_handle.get(item.handle) is item:
            del self._by_handle[item.handle]
        if len(self._unindexed) > 2 * len(self._items) + 16:  # added and gone, never looked up
            self._unindexed = [c for c in self._unindexed if c in self._items]

    def find(self, handle: int) -> Any:
        """The cursor in the collection whose Handle is ``handle``, or None."""
        if self._unindexed:
            for cursor in self._unindexed:
                if cursor in self._items:
                    self._by_handle[cursor.handle] = cursor
            self._unindexed.clear()
        cursor = self._by_handle.get(handle)
        return cursor if cursor is not None and cursor in self._items else None
