"""MS-MQDMPR 3.1.1.2 MessagePositionList: order, special locations, stepping from removed
entries."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mqconform.model.positionlist import MessagePositionList


@dataclass(eq=False)
class Msg:
    priority: int = 3


@dataclass(eq=False)
class Pos:
    message_reference: Msg
    state: str = "Available"
    next: object = None
    previous: object = None


def _fill(priorities):
    lst = MessagePositionList()
    items = [Pos(Msg(p)) for p in priorities]
    for item in items:
        lst.insert(item)
    return lst, items


@pytest.mark.req("MS-MQDMPR/3.1.1.2/R12")
def test_empty_list_head_is_end_and_tail_is_start():
    lst = MessagePositionList()
    assert lst.head is lst.end and lst.tail is lst.start and len(lst) == 0


@pytest.mark.req("MS-MQDMPR/3.1.1.2/R11")
def test_entries_are_ordered_by_priority_then_arrival():
    lst, items = _fill([3, 5, 3, 0, 5, 7])
    assert [i.message_reference.priority for i in lst] == [7, 5, 5, 3, 3, 0]
    assert list(lst) == [items[5], items[1], items[4], items[0], items[2], items[3]]


def test_last_of_priority_is_the_latest_entry_of_that_priority_still_in_the_list():
    lst, items = _fill([3, 5, 3, 0])
    assert lst.last_of_priority(3) is items[2] and lst.last_of_priority(5) is items[1]
    assert lst.last_of_priority(7) is None
    lst.remove(items[2])
    assert lst.last_of_priority(3) is items[0]
    lst.remove(items[0])
    assert lst.last_of_priority(3) is None


def test_start_is_not_linked_by_next_and_steps_to_head():
    lst, items = _fill([1, 2])
    assert lst.start.next is None
    assert lst.next_of(lst.start) is lst.head is items[1]
    assert lst.next_of(items[0]) is lst.end
    assert lst.previous_of(lst.end) is lst.tail is items[0]


@pytest.mark.req("MS-MQDMPR/3.1.1.2/R12")
def test_removing_every_entry_makes_head_end_again():
    lst, items = _fill([1, 2, 3])
    for item in items:
        lst.remove(item)
    assert lst.head is lst.end and lst.tail is lst.start and list(lst) == []


def test_a_removed_entry_steps_to_what_would_follow_it():
    lst, items = _fill([3, 3, 3])
    lst.remove(items[1])
    assert lst.next_of(items[1]) is items[2]
    assert lst.previous_of(items[1]) is items[0]
    late = Pos(Msg(3))
    lst.insert(late)  # arrives after everything: still after the removed entry
    lst.remove(items[2])
    assert lst.next_of(items[1]) is late


def test_a_higher_priority_arrival_is_not_after_a_removed_entry():
    lst, items = _fill([3, 3])
    lst.remove(items[0])
    urgent = Pos(Msg(6))
    lst.insert(urgent)  # sorts before where items[0] stood
    assert lst.next_of(items[0]) is items[1]
    assert lst.previous_of(items[0]) is urgent


@given(st.lists(st.tuples(st.integers(0, 7), st.booleans()), max_size=40))
def test_order_holds_under_any_inserts_and_removals(ops):
    lst = MessagePositionList()
    alive = []
    for priority, remove in ops:
        if remove and alive:
            lst.remove(alive.pop(len(alive) // 2))
        else:
            p = Pos(Msg(priority))
            lst.insert(p)
            alive.append(p)
    got = list(lst)
    assert len(got) == len(alive) == len(lst)
    keys = [p._key for p in got]
    assert keys == sorted(keys)
    # walking backwards from End visits the same entries
    back, node = [], lst.tail
    while node is not lst.start:
        back.append(node)
        node = lst.previous_of(node)
    assert back[::-1] == got


@given(st.lists(st.integers(0, 7), min_size=1, max_size=30), st.data())
def test_removed_entries_linked_again_take_back_their_places(priorities, data):
    """reinsert (a change a store could not keep, taken back): removed entries linked again,
    in any order, give the list it was, and later inserts still go where the order puts
    them."""
    lst, items = _fill(priorities)
    before = list(lst)
    removed = data.draw(st.lists(st.sampled_from(items), unique=True))
    for item in removed:
        lst.remove(item)
    for item in data.draw(st.permutations(removed)):
        lst.reinsert(item)
    assert list(lst) == before and len(lst) == len(before)
    assert [lst.previous_of(i) for i in before] == [lst.start] + before[:-1]
    for p in set(priorities):
        assert lst.last_of_priority(p) is [i for i in before
                                           if i.message_reference.priority == p][-1]
    late = Pos(Msg(data.draw(st.integers(0, 7))))
    lst.insert(late)
    keys = [i._key for i in lst]
    assert keys == sorted(keys) and late in list(lst)
