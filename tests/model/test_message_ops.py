"""MS-MQDMPR 3.1.7.1.9-3.1.7.1.16 message operations, with waits resolved in model time."""

from __future__ import annotations

import pytest

from mqconform.model import cursor as cursor_events
from mqconform.model.adm import Cursor, MessagePositionState, MessageSeekAction, Transaction
from mqconform.model.message_ops import (
    QUEUE_QUOTA_EXCEEDED,
    dequeue_message,
    dequeue_message_begin,
    dequeue_message_end,
    enqueue_message,
    move_message,
    peek_message,
    peek_next_message,
    read_message_by_lookup_identifier,
)
from mqconform.model.runtime import Completion, Pending
from mqconform.model.status import (
    MQ_ERROR_ILLEGAL_CURSOR_ACTION,
    MQ_ERROR_IO_TIMEOUT,
    MQ_ERROR_MESSAGE_NOT_FOUND,
    MQ_ERROR_QUEUE_NOT_AVAILABLE,
    MQ_ERROR_TRANSACTION_SEQUENCE,
    MQ_OK,
)

Available, Locked, Deleted, PurgePending = (MessagePositionState.Available,
                                            MessagePositionState.Locked,
                                            MessagePositionState.Deleted,
                                            MessagePositionState.PurgePending)


def _cursor(world, desc):
    c = Cursor()
    cursor_events.initialize(world.env, c, desc)
    desc.cursor_collection.append(c)
    return c


@pytest.mark.req("MS-MQDMPR/3.1.7.1.9/R10", "MS-MQDMPR/3.1.7.1.9/R12", "MS-MQDMPR/3.1.7.1.9/R13")
def test_enqueue_assigns_increasing_lookup_identifiers_and_makes_the_message_available(world):
    q = world.queue()
    a, b = world.send(q), world.send(q)
    assert b.lookup_identifier > a.lookup_identifier
    assert a.lookup_identifier & 0x00FFFFFFFFFFFFFF == 1
    assert [p.message_reference for p in q.message_position_list] == [a, b]
    assert a.message_position_reference.state is Available
    assert q.total_bytes == 2


@pytest.mark.req("MS-MQDMPR/3.1.7.1.9/R6", "MS-MQDMPR/3.1.7.1.9/R7")
def test_enqueue_over_the_queue_quota_is_refused(world):
    from mqconform.model.adm import Message

    q = world.queue(quota=1)  # kilobytes
    assert enqueue_message(world.env, q, Message(body=b"x" * 2000)) == QUEUE_QUOTA_EXCEEDED
    assert len(q.message_position_list) == 0


@pytest.mark.req("MS-MQDMPR/3.1.7.1.9/R16")
def test_transactional_enqueue_locks_the_message_until_commit(world):
    from mqconform.model.adm import Message

    q = world.queue()
    tx = Transaction(identifier="t1")
    m = Message(body=b"x")
    assert enqueue_message(world.env, q, m, transaction=tx) == 0
    assert m.message_position_reference.state is Locked
    assert len(tx.transactional_operation_collection) == 1


@pytest.mark.req("MS-MQDMPR/3.1.7.1.10/R67", "MS-MQDMPR/3.1.7.1.10/R71")
def test_dequeue_returns_the_first_message_and_deletes_it(world):
    q = world.queue()
    desc = world.open(q)
    first, second = world.send(q, b"1"), world.send(q, b"2")
    result = world.env.call(dequeue_message(world.env, desc, timeout=0))
    assert result.status == MQ_OK and result.message is first
    assert first.message_position_reference.state is Deleted
    assert [p.message_reference for p in q.message_position_list] == [second]


def test_dequeue_takes_the_highest_priority_first(world):
    q = world.queue()
    desc = world.open(q)
    world.send(q, b"low", priority=1)
    high = world.send(q, b"high", priority=6)
    assert world.env.call(dequeue_message(world.env, desc, timeout=0)).message is high


@pytest.mark.req("MS-MQDMPR/3.1.7.1.10/R5", "MS-MQDMPR/3.1.7.1.10/R6")
def test_dequeue_from_a_closed_descriptor_is_queue_not_available(world):
    desc = world.open(world.queue())
    desc.queue_reference = None
    result = world.env.call(dequeue_message(world.env, desc, timeout=0))
    assert result.status == MQ_ERROR_QUEUE_NOT_AVAILABLE


def test_dequeue_with_zero_timeout_on_an_empty_queue_times_out_at_once(world):
    desc = world.open(world.queue())
    assert world.env.call(dequeue_message(world.env, desc, timeout=0)).status == MQ_ERROR_IO_TIMEOUT


@pytest.mark.req("MS-MQDMPR/3.1.7.3.1/R18", "MS-MQDMPR/3.1.6.3/R5", "MS-MQDMPR/3.1.2.3/R2")
def test_a_waiting_dequeue_times_out_when_its_timer_expires(world):
    desc = world.open(world.queue())
    pending = world.env.call(dequeue_message(world.env, desc, timeout=500), token="r1")
    assert pending == Pending("r1")
    assert len(desc.waiting_message_read_operation_collection) == 1
    world.env.advance(499)
    assert world.env.take_completions() == []
    world.env.advance(500)
    [done] = world.env.take_completions()
    assert done.token == "r1" and done.result.status == MQ_ERROR_IO_TIMEOUT
    assert desc.waiting_message_read_operation_collection == []


@pytest.mark.req("MS-MQDMPR/3.1.7.2.2/R7", "MS-MQDMPR/3.1.7.2.2/R11")
def test_a_waiting_dequeue_gets_the_next_message_and_later_readers_stay_blocked(world):
    q = world.queue()
    desc = world.open(q)
    world.env.call(dequeue_message(world.env, desc, timeout=10_000), token="first")
    world.env.call(dequeue_message(world.env, desc, timeout=10_000), token="second")
    m = world.send(q, b"hello")
    assert world.env.take_completions() == [Completion("first", _ok(m))]
    assert m.message_position_reference.state is Deleted
    assert world.env.waiting_tokens() == ["second"]


def _ok(message):
    from mqconform.model.message_ops import EventResult

    return EventResult(MQ_OK, message)


def test_waiting_readers_are_served_in_arrival_order(world):
    q = world.queue()
    desc = world.open(q)
    for token in ("a", "b"):
        world.env.call(dequeue_message(world.env, desc, timeout=10_000), token=token)
    m1, m2 = world.send(q, b"1"), world.send(q, b"2")
    done = world.env.take_completions()
    assert [(c.token, c.result.message) for c in done] == [("a", m1), ("b", m2)]


def test_a_waiting_peek_sees_the_message_and_a_waiting_receive_still_gets_it(world):
    q = world.queue()
    peeker, receiver = world.open(q), world.open(q)
    world.env.call(peek_message(world.env, peeker, timeout=10_000), token="peek")
    world.env.call(dequeue_message(world.env, receiver, timeout=10_000), token="recv")
    m = world.send(q, b"x")
    done = {c.token: c.result for c in world.env.take_completions()}
    assert done["peek"] == _ok(m) and done["recv"] == _ok(m)
    assert m.message_position_reference.state is Deleted


@pytest.mark.req("MS-MQDMPR/3.1.7.1.11/R13", "MS-MQDMPR/3.1.7.1.10/R65")
def test_dequeue_begin_locks_and_end_with_delete_removes(world):
    q = world.queue()
    desc = world.open(q)
    m = world.send(q)
    result = world.env.call(dequeue_message_begin(world.env, desc, timeout=0))
    assert result == _ok(m) and m.message_position_reference.state is Locked
    assert dequeue_message_end(world.env, desc, m, delete_message=True) == MQ_OK
    assert m.message_position_reference.state is Deleted
    assert len(q.message_position_list) == 0


@pytest.mark.req("MS-MQDMPR/3.1.7.1.12/R18")
def test_dequeue_end_without_delete_returns_the_message_to_the_queue(world):
    q = world.queue()
    desc = world.open(q)
    m = world.send(q)
    world.env.call(dequeue_message_begin(world.env, desc, timeout=0))
    assert dequeue_message_end(world.env, desc, m, delete_message=False) == MQ_OK
    assert m.message_position_reference.state is Available
    assert world.env.call(dequeue_message(world.env, desc, timeout=0)) == _ok(m)


@pytest.mark.req("MS-MQDMPR/3.1.7.1.12/R6", "MS-MQDMPR/3.1.7.1.12/R7")
def test_dequeue_end_on_an_available_message_is_a_sequence_error(world):
    q = world.queue()
    desc = world.open(q)
    m = world.send(q)
    assert dequeue_message_end(world.env, desc, m, delete_message=True) == \
        MQ_ERROR_TRANSACTION_SEQUENCE


@pytest.mark.req("MS-MQDMPR/3.1.7.1.12/R12", "MS-MQDMPR/3.1.7.1.12/R16")
def test_a_purge_pending_message_is_deleted_even_on_a_nack(world):
    from mqconform.model.adm import MessageClass

    q = world.queue()
    desc = world.open(q)
    m = world.send(q)
    world.env.call(dequeue_message_begin(world.env, desc, timeout=0))
    m.message_position_reference.state = PurgePending
    assert dequeue_message_end(world.env, desc, m, delete_message=False) == MQ_OK
    assert m.message_position_reference.state is Deleted
    assert m.message_position_reference._deleted_reason is MessageClass.NackQueuePurged


@pytest.mark.req("MS-MQDMPR/3.1.7.3.3/R28", "MS-MQDMPR/3.1.7.3.3/R40")
def test_read_by_lookup_identifier_current_next_previous_first_last(world):
    q = world.queue()
    desc = world.open(q)
    a, b, c = (world.send(q, bytes([i])) for i in range(3))

    def peek(lookup_id, action):
        return read_message_by_lookup_identifier(world.env, desc, lookup_id, True, action)

    assert peek(b.lookup_identifier, MessageSeekAction.SeekCurrent) == _ok(b)
    assert peek(b.lookup_identifier, MessageSeekAction.SeekNext) == _ok(c)
    assert peek(b.lookup_identifier, MessageSeekAction.SeekPrevious) == _ok(a)
    assert peek(b.lookup_identifier, MessageSeekAction.SeekFirst) == _ok(a)
    assert peek(b.lookup_identifier, MessageSeekAction.SeekLast) == _ok(c)
    assert peek(c.lookup_identifier, MessageSeekAction.SeekNext).status == \
        MQ_ERROR_MESSAGE_NOT_FOUND
    assert peek(12345, MessageSeekAction.SeekCurrent).status == MQ_ERROR_MESSAGE_NOT_FOUND


def test_receive_by_lookup_identifier_deletes_that_message(world):
    q = world.queue()
    desc = world.open(q)
    a, b = world.send(q), world.send(q)
    result = read_message_by_lookup_identifier(world.env, desc, b.lookup_identifier, False,
                                               MessageSeekAction.SeekCurrent)
    assert result == _ok(b) and b.message_position_reference.state is Deleted
    assert [p.message_reference for p in q.message_position_list] == [a]


@pytest.mark.req("MS-MQDMPR/3.2.7.3/R6", "MS-MQDMPR/3.1.7.1.14/R14")
def test_peek_next_on_an_unread_cursor_is_an_illegal_cursor_action(world):
    q = world.queue()
    desc = world.open(q)
    world.send(q)
    c = _cursor(world, desc)
    result = world.env.call(peek_next_message(world.env, desc, c, timeout=0))
    assert result.status == MQ_ERROR_ILLEGAL_CURSOR_ACTION


def test_a_cursor_peeks_then_walks_the_queue(world):
    q = world.queue()
    desc = world.open(q)
    a, b = world.send(q), world.send(q)
    c = _cursor(world, desc)
    assert world.env.call(peek_message(world.env, desc, timeout=0, cursor=c)) == _ok(a)
    assert world.env.call(peek_next_message(world.env, desc, c, timeout=0)) == _ok(b)
    assert world.env.call(peek_next_message(world.env, desc, c, timeout=0)).status == \
        MQ_ERROR_IO_TIMEOUT


def test_a_cursor_receive_takes_the_message_under_the_cursor(world):
    q = world.queue()
    desc = world.open(q)
    a, b = world.send(q), world.send(q)
    c = _cursor(world, desc)
    world.env.call(peek_message(world.env, desc, timeout=0, cursor=c))
    world.env.call(peek_next_message(world.env, desc, c, timeout=0))  # now on b
    assert world.env.call(dequeue_message(world.env, desc, timeout=0, cursor=c)) == _ok(b)
    assert a.message_position_reference.state is Available


def test_a_peeking_cursor_that_waits_rests_on_the_new_message(world):
    q = world.queue()
    desc = world.open(q)
    a = world.send(q)
    c = _cursor(world, desc)
    world.env.call(peek_message(world.env, desc, timeout=0, cursor=c))
    world.env.call(peek_next_message(world.env, desc, c, timeout=5000), token="p")
    b = world.send(q)
    [done] = world.env.take_completions()
    assert done.result == _ok(b) and c.message_position_reference is b.message_position_reference
    assert a.message_position_reference.state is Available


@pytest.mark.req("MS-MQDMPR/3.1.7.1.16/R5", "MS-MQDMPR/3.1.7.1.16/R8")
def test_move_marks_the_source_deleted_and_makes_the_message_available_in_the_target(world):
    src, dst = world.queue("src"), world.queue("dst")
    m = world.send(src)
    old = m.message_position_reference
    move_message(world.env, old, dst)
    assert old.state is Deleted
    assert m.message_position_reference.queue_reference is dst
    assert m.message_position_reference.state is Available
    desc = world.open(dst)
    assert world.env.call(dequeue_message(world.env, desc, timeout=0)) == _ok(m)


@pytest.mark.req("MS-MQDMPR/3.1.7.1.10/R55", "MS-MQDMPR/3.1.7.1.10/R56", "MS-MQDMPR/3.1.7.2.2/R10",
                 "MS-MQDMPR/3.1.7.2.2/R11")
def test_a_receive_in_a_transaction_without_identifier_leaves_the_message_and_the_next_reader(world):
    """errata transactional-receive-unknown-transaction: read as written, a transaction with a
    NULL Identifier neither locks nor deletes what it receives, and the waiting receive it
    satisfied still ends Message Position Available, so the next reader stays blocked beside
    an Available message until another arrives, and then gets the newer one."""
    q = world.queue(transactional=True)
    desc = world.open(q)
    unnamed = Transaction(identifier=None)
    world.env.call(dequeue_message(world.env, desc, timeout=10_000, transaction=unnamed),
                   token="unnamed")
    world.env.call(dequeue_message(world.env, desc, timeout=10_000), token="plain")
    m = world.send(q, b"one")
    assert world.env.take_completions() == [Completion("unnamed", _ok(m))]
    assert m.message_position_reference.state is Available
    assert unnamed.transactional_operation_collection == []
    assert world.env.waiting_tokens() == ["plain"]
    second = world.send(q, b"two")
    [done] = world.env.take_completions()
    # Waiting Message Read Satisfied hands the reader the position that became Available
    assert done.token == "plain" and done.result.message is second
    assert second.message_position_reference.state is Deleted
    assert m.message_position_reference.state is Available
