"""MS-MQDMPR 3.2 Cursor (model/cursor.py): the state machine of 3.2.1.1 is the table
TRANSITIONS, and the event functions take every next state from it. Random walks over the
events of a queue with a cursor (peeks, peek-nexts and receives through the cursor, with and
without waiting; messages sent, taken by another reader, timers firing; two operations at once
on one cursor) must reach every row of the table, and every transition taken must be one of
its rows (an event reaching a pair the table lacks raises CursorStateError)."""

from __future__ import annotations

import random

import pytest

from mqconform.model import cursor as cursor_events
from mqconform.model.adm import Cursor, CursorState
from mqconform.model.message_ops import dequeue_message, peek_message, peek_next_message
from mqconform.model.runtime import Pending

WALKS = 400
STEPS = 30


def _walk(world, rnd: random.Random) -> None:
    q = world.queue()
    desc = world.open(q)
    other = world.open(q)
    cursor = Cursor(handle=world.env.ids.handle())
    cursor_events.initialize(world.env, cursor, desc)
    desc.cursor_collection.append(cursor)
    for _ in range(rnd.randrange(3)):
        world.send(q)
    tokens = iter(range(10_000))
    for _ in range(STEPS):
        action = rnd.choice(("peek", "peek", "next", "next", "receive", "receive", "send",
                             "steal", "tick", "event"))
        timeout = rnd.choice((0, 0, 50))
        if action == "peek":
            world.env.call(peek_message(world.env, desc, timeout=timeout, cursor=cursor),
                           token=next(tokens))
        elif action == "next":
            world.env.call(peek_next_message(world.env, desc, cursor, timeout=timeout),
                           token=next(tokens))
        elif action == "receive":
            world.env.call(dequeue_message(world.env, desc, timeout=timeout, cursor=cursor),
                           token=next(tokens))
        elif action == "send":
            world.send(q)
        elif action == "steal":  # another reader takes the first available message
            out = world.env.call(dequeue_message(world.env, other, timeout=0),
                                 token=next(tokens))
            assert not isinstance(out, Pending)
        elif action == "event" and cursor.cursor_state in (CursorState.Unread, CursorState.Read):
            # 3.2.7.5 R5 and 3.2.7.6 R3 say what a cursor that does not wait does when the
            # events reach it; the queue's own operations raise them only for waiting cursors,
            # so these four rows are reached by raising the events as the sections state them
            if rnd.random() < 0.5:
                cursor_events.wait_time_expired(cursor)
            elif cursor.message_position_reference is not None:
                cursor_events.message_available(cursor, cursor.message_position_reference)
        else:
            world.env.advance(world.env.now + rnd.choice((10, 60)))
        world.env.take_completions()


def test_every_row_of_the_state_table_is_reachable_and_no_other_transition_is_taken(
        world, monkeypatch):
    fresh = type(world)  # tests/model/conftest.py World: a new queue manager per walk
    taken: list[tuple[CursorState, str, str]] = []
    original = cursor_events._transition

    def recording(cursor, event, outcome):
        taken.append((cursor.cursor_state, event, outcome))
        original(cursor, event, outcome)

    monkeypatch.setattr(cursor_events, "_transition", recording)
    rnd = random.Random(20261126)
    for _ in range(WALKS):
        _walk(fresh(), rnd)
    assert set(taken) <= set(cursor_events.TRANSITIONS)
    missing = sorted(set(cursor_events.TRANSITIONS) - set(taken),
                     key=lambda row: (row[0].name, row[1], row[2]))
    assert not missing, f"rows never reached in {WALKS} walks: {missing}"


def test_a_pair_the_table_lacks_is_a_model_error_not_a_status():
    cursor = Cursor(handle=1, cursor_state=CursorState.WaitPeek)
    with pytest.raises(cursor_events.CursorStateError):
        cursor_events._transition(cursor, "get_message_for_peek", "Succeeded")
