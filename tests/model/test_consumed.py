"""MS-MQDMPR 3.1.7.2 consumed events: Message Position Deleted and the queue journal a queue with
Journaling True keeps (model/consumed.py choice 2, errata queue-journal)."""

from __future__ import annotations

import pytest

from mqconform.model.adm import (
    Message,
    MessageClass,
    MessagePositionState,
    MessageSeekAction,
    Queue,
    QueueType,
    Transaction,
)
from mqconform.model.consumed import (
    copy_of_message,
    journal_message,
    message_position_deleted,
    storage_size,
    time_to_be_received_timer_expired,
)
from mqconform.model.higher_layer import transaction_abort, transaction_commit
from mqconform.model.invariants import check_invariants
from mqconform.model.message_ops import (
    QUEUE_QUOTA_EXCEEDED,
    dequeue_message,
    dequeue_message_begin,
    dequeue_message_end,
    move_message,
    peek_message,
    read_message_by_lookup_identifier,
)
from mqconform.model.queue_management import (
    create_queue,
    delete_queue,
    purge_queue,
    set_queue_defaults,
)
from mqconform.model.status import MQ_OK

Available, Deleted = MessagePositionState.Available, MessagePositionState.Deleted


def _queue(world, name: str = "orders", journaling: bool = True, **attributes) -> Queue:
    """A private queue made as Create Queue makes one: with its queue journal."""
    template = Queue()
    set_queue_defaults(world.env, template)
    template.pathname = f"MQREF\\private$\\{name}"
    template.journaling = journaling
    for key, value in attributes.items():
        setattr(template, key, value)
    result = create_queue(world.env, template, skip_directory=True)
    assert result.status == MQ_OK
    return result.queue


def _journal(queue: Queue) -> list[Message]:
    return [p.message_reference for p in queue.journal_queue_reference.message_position_list]


def _receive(world, desc):
    """A two-phase receive acknowledged (Dequeue Message Begin, then End with delete)."""
    result = world.env.call(dequeue_message_begin(world.env, desc, timeout=0))
    assert result.status == MQ_OK
    assert dequeue_message_end(world.env, desc, result.message, delete_message=True) == MQ_OK
    return result.message


@pytest.mark.req("MS-MQDMPR/3.1.7.1.12/R12", "MS-MQDMPR/3.1.7.1.12/R16",
                 "MS-MQDMPR/3.1.7.2.1/R5", "MS-MQDMPR/3.1.7.1.3/R8")
def test_a_received_and_acknowledged_message_is_copied_to_the_queue_journal(world):
    q = _queue(world)
    desc = world.open(q)
    one = world.send(q, b"one", label="first")
    two = world.send(q, b"two!", priority=5)
    received = _receive(world, desc)
    assert received is two  # the higher priority first
    [copy] = _journal(q)
    assert copy is not two and copy.body == b"two!" and copy.priority == 5
    assert copy.message_position_reference.state is Available
    assert copy.message_position_reference.queue_reference is q.journal_queue_reference
    assert copy.lookup_identifier > one.lookup_identifier  # Enqueue Message's next one
    assert two.message_position_reference.state is Deleted  # the original is gone
    assert q.journal_queue_reference.total_bytes == storage_size(two) == 4
    assert q.total_bytes == storage_size(one) == 3
    _receive(world, desc)
    assert [m.body for m in _journal(q)] == [b"two!", b"one"]
    assert [m.label for m in _journal(q)] == ["", "first"]
    assert q.journal_queue_reference.total_bytes == 7 and q.total_bytes == 0
    assert check_invariants(world.qm) == []


@pytest.mark.req("MS-MQDMPR/3.1.7.1.10/R67", "MS-MQDMPR/3.1.7.1.10/R70")
def test_a_receive_without_two_phases_journals_too(world):
    q = _queue(world)
    desc = world.open(q)
    world.send(q, b"abc")
    assert world.env.call(dequeue_message(world.env, desc, timeout=0)).status == MQ_OK
    assert [m.body for m in _journal(q)] == [b"abc"]


@pytest.mark.req("MS-MQDMPR/3.1.7.1.15/R58", "MS-MQDMPR/3.1.7.1.13/R2")
def test_peeks_journal_nothing(world):
    q = _queue(world)
    desc = world.open(q)
    m = world.send(q, b"abc")
    assert world.env.call(peek_message(world.env, desc, timeout=0)).message is m
    peeked = read_message_by_lookup_identifier(world.env, desc, m.lookup_identifier,
                                               peek_operation=True,
                                               lookup_operation=MessageSeekAction.SeekCurrent)
    assert peeked.status == MQ_OK and peeked.message is m
    assert _journal(q) == [] and q.journal_queue_reference.total_bytes == 0
    assert m.message_position_reference.state is Available


@pytest.mark.req("MS-MQDMPR/3.1.7.1.13/R34", "MS-MQDMPR/3.1.7.1.13/R37")
def test_a_receive_by_lookup_identifier_journals(world):
    q = _queue(world)
    desc = world.open(q)
    world.send(q, b"first")
    second = world.send(q, b"second")
    got = read_message_by_lookup_identifier(world.env, desc, second.lookup_identifier,
                                            peek_operation=False,
                                            lookup_operation=MessageSeekAction.SeekCurrent)
    assert got.status == MQ_OK and got.message is second
    assert [m.body for m in _journal(q)] == [b"second"]


@pytest.mark.req("MS-MQDMPR/3.1.7.1.12/R17", "MS-MQDMPR/3.1.7.1.12/R18")
def test_a_receive_given_back_is_not_journaled_until_it_is_acknowledged(world):
    q = _queue(world)
    desc = world.open(q)
    m = world.send(q, b"abc")
    begun = world.env.call(dequeue_message_begin(world.env, desc, timeout=0))
    assert begun.message is m and _journal(q) == []  # Locked, not consumed yet
    assert dequeue_message_end(world.env, desc, m, delete_message=False) == MQ_OK
    assert _journal(q) == [] and m.message_position_reference.state is Available
    _receive(world, desc)
    assert [c.body for c in _journal(q)] == [b"abc"]


@pytest.mark.req("MS-MQDMPR/3.1.7.1.7/R7", "MS-MQDMPR/3.1.7.1.7/R10",
                 "MS-MQDMPR/3.1.7.1.12/R16")
def test_purged_messages_are_not_journaled(world):
    q = _queue(world)
    desc = world.open(q)
    world.send(q, b"received")
    waiting = world.send(q, b"waiting")
    # the first message is locked by a receive, so the purge marks it PurgePending; the
    # second, Available, is deleted at once
    begun = world.env.call(dequeue_message_begin(world.env, desc, timeout=0))
    assert begun.message.body == b"received"
    purge_queue(world.env, q)
    assert waiting.message_position_reference.state is Deleted
    assert begun.message.message_position_reference.state is MessagePositionState.PurgePending
    # the acknowledgement of a PurgePending message deletes it as purged (NackQueuePurged)
    assert dequeue_message_end(world.env, desc, begun.message, delete_message=True) == MQ_OK
    assert begun.message.message_position_reference._deleted_reason is \
        MessageClass.NackQueuePurged
    assert _journal(q) == [] and q.journal_queue_reference.total_bytes == 0


@pytest.mark.req("MS-MQDMPR/3.1.7.2.7/R11", "MS-MQDMPR/3.1.7.2.7/R14")
def test_an_expired_message_is_not_journaled(world):
    q = _queue(world)
    m = world.send(q, b"short-lived", time_to_be_received=1)
    world.env.advance(1000)
    assert m.message_position_reference.state is Deleted
    assert _journal(q) == []
    other = world.send(q, b"x")
    time_to_be_received_timer_expired(world.env, other)
    assert _journal(q) == []


@pytest.mark.req("MS-MQDMPR/3.1.7.1.4/R5", "MS-MQDMPR/3.1.7.1.4/R8")
def test_the_messages_of_a_deleted_queue_are_not_journaled(world):
    q = _queue(world)
    world.send(q, b"x")
    journal = q.journal_queue_reference
    delete_queue(world.env, q, skip_directory=True)
    assert len(journal.message_position_list) == 0


@pytest.mark.req("MS-MQDMPR/3.1.4.4/R11", "MS-MQDMPR/3.1.4.4/R14", "MS-MQDMPR/3.1.4.5/R13")
def test_a_transactional_receive_is_journaled_when_it_commits(world):
    q = _queue(world, transactional=True)
    desc = world.open(q)
    world.send(q, b"one")
    world.send(q, b"two")
    for identifier in ("tx-abort", "tx-commit"):
        tx = Transaction(identifier=identifier)
        world.qm.transaction_collection.append(tx)
        result = world.env.call(dequeue_message(world.env, desc, timeout=0, transaction=tx))
        assert result.status == MQ_OK and result.message.body == b"one"
        assert _journal(q) == []  # Locked in the transaction
        if identifier == "tx-abort":
            assert transaction_abort(world.env, identifier) == MQ_OK
            assert _journal(q) == []
        else:
            assert transaction_commit(world.env, identifier) == MQ_OK
    assert [m.body for m in _journal(q)] == [b"one"]


@pytest.mark.req("MS-MQDMPR/3.1.4.4/R14", "MS-MQRR/3.1.4.14/R17")
def test_a_receive_its_transaction_rejected_is_not_journaled(world):
    q = _queue(world, transactional=True)
    desc = world.open(q)
    world.send(q, b"one")
    tx = Transaction(identifier="tx-1")
    world.qm.transaction_collection.append(tx)
    world.env.call(dequeue_message(world.env, desc, timeout=0, transaction=tx))
    [operation] = tx.transactional_operation_collection
    operation.dequeue_reason = MessageClass.NackReceiveRejected  # R_SetUserAcknowledgementClass
    assert transaction_commit(world.env, "tx-1") == MQ_OK
    assert len(q.message_position_list) == 0 and _journal(q) == []


@pytest.mark.req("MS-MQDMPR/3.1.7.1.16/R5", "MS-MQDMPR/3.1.7.1.16/R6")
def test_a_moved_message_is_not_journaled(world):
    q = _queue(world)
    sub = Queue(pathname=f"{q.pathname};retry", queue_type=q.queue_type, queue_manager=world.qm)
    q.subqueue_collection.append(sub)
    m = world.send(q, b"x")
    move_message(world.env, m.message_position_reference, sub)
    assert _journal(q) == [] and len(sub.message_position_list) == 1


def test_a_queue_without_journaling_keeps_its_journal_empty(world):
    q = _queue(world, journaling=False)
    desc = world.open(q)
    world.send(q, b"x")
    _receive(world, desc)
    assert _journal(q) == [] and q.journal_queue_reference.total_bytes == 0
    assert journal_message(world.env, q, Message(body=b"y")) is None


@pytest.mark.req("MS-MQDMPR/3.1.7.1.3/R7")
def test_a_queue_without_a_journal_queue_journals_nothing(world):
    q = world.queue(journaling=True)  # no JournalQueueReference, as a subqueue has none
    desc = world.open(q)
    world.send(q, b"x")
    assert world.env.call(dequeue_message(world.env, desc, timeout=0)).status == MQ_OK
    assert journal_message(world.env, q, Message(body=b"y")) is None
    assert q.journal_queue_reference is None


@pytest.mark.req("MS-MQDMPR/3.1.7.1.9/R6", "MS-MQDMPR/3.1.7.1.9/R7", "MS-MQDMPR/3.1.1.12/R20")
def test_a_copy_over_the_journal_quota_is_discarded_and_the_receive_goes_on(world):
    q = _queue(world, journal_quota=1)  # kilobytes: the journal queue's Quota
    assert q.journal_queue_reference.quota == 1
    desc = world.open(q)
    world.send(q, b"a" * 600)
    world.send(q, b"b" * 600)
    world.send(q, b"c" * 300)
    for _ in range(3):
        assert world.env.call(dequeue_message(world.env, desc, timeout=0)).status == MQ_OK
    # 600 fits in 1024 bytes; 600 more would not (the copy is discarded); 300 still fits
    assert [m.body[:1] for m in _journal(q)] == [b"a", b"c"]
    assert q.journal_queue_reference.total_bytes == 900
    assert len(q.message_position_list) == 0
    assert journal_message(world.env, q, Message(body=b"d" * 200)) == QUEUE_QUOTA_EXCEEDED


def test_copies_stay_in_arrival_order_within_priority_in_the_journal(world):
    q = _queue(world)
    desc = world.open(q)
    early = world.send(q, b"early", arrival_time=100)
    late = world.send(q, b"late", arrival_time=200)
    # the later message is received first, by its lookup identifier
    read_message_by_lookup_identifier(world.env, desc, late.lookup_identifier,
                                      peek_operation=False, lookup_operation=MessageSeekAction.SeekCurrent)
    assert world.env.call(dequeue_message(world.env, desc, timeout=0)).message is early
    copies = _journal(q)
    assert [m.body for m in copies] == [b"late", b"early"]
    assert [m.arrival_time for m in copies] == [200, 200]
    assert check_invariants(world.qm) == []


def test_the_journal_copy_is_a_message_of_its_own():
    original = Message(body=b"x", label="l", response_multi_queue_format_name=["A", "B"])
    copy = copy_of_message(original)
    assert copy is not original and copy.body == b"x" and copy.label == "l"
    assert copy.response_multi_queue_format_name == ["A", "B"]
    assert copy.response_multi_queue_format_name is not original.response_multi_queue_format_name
    assert copy.message_position_reference is None


def test_a_journal_copy_can_be_received_from_the_journal(world):
    """The journal is a queue: a reader waiting on it gets the copy, which is not journaled
    again (the journal queue's Journaling is False)."""
    q = _queue(world)
    journal = q.journal_queue_reference
    assert journal.queue_type is QueueType.System and journal.journaling is False
    reader = world.open(journal)
    world.env.call(dequeue_message(world.env, reader, timeout=10_000), token="journal")
    world.send(q, b"x")
    world.env.call(dequeue_message(world.env, world.open(q), timeout=0))
    [done] = world.env.take_completions()
    assert done.token == "journal" and done.result.status == MQ_OK
    assert done.result.message.body == b"x"
    assert len(journal.message_position_list) == 0


def test_message_position_deleted_journals_only_what_a_receiver_consumed(world):
    q = _queue(world)
    for reason in (MessageClass.NackQueuePurged, MessageClass.NackReceiveTimeout,
                   MessageClass.NackQueueDeleted, MessageClass.NackReceiveRejected,
                   MessageClass.AckReceive):
        m = world.send(q, reason.name.encode())
        message_position_deleted(world.env, q, m.message_position_reference, reason)
    assert [m.body for m in _journal(q)] == [b"AckReceive"]
