"""MS-MQRR 3.1: the RemoteRead server model, opnum by opnum, with waits in model time."""

from __future__ import annotations

import dataclasses
import struct
import uuid
from pathlib import Path

import pytest

from mqconform.model import calls as c
from mqconform.model.adm import (
    LocalMessage,
    LocalMessageType,
    MessagePositionState,
    Queue,
    QueueType,
)
from mqconform.model.formats import parse_format_name, to_queue_format
from mqconform.model.message_ops import enqueue_message
from mqconform.model.mqrr import RemoteReadServer, adjust_time_to_reach_queue
from mqconform.model.runtime import Pending
from mqconform.model.status import (
    MQ_ERROR_INVALID_HANDLE,
    MQ_ERROR_INVALID_PARAMETER,
    MQ_ERROR_IO_TIMEOUT,
    MQ_ERROR_MESSAGE_NOT_FOUND,
    MQ_ERROR_OPERATION_CANCELLED,
    MQ_ERROR_QUEUE_NOT_FOUND,
    MQ_ERROR_TRANSACTION_USAGE,
    MQ_OK,
    STATUS_ACCESS_DENIED,
    is_failure,
)

Available, Locked, Deleted, PurgePending = (MessagePositionState.Available,
                                            MessagePositionState.Locked,
                                            MessagePositionState.Deleted,
                                            MessagePositionState.PurgePending)
CLIENT = uuid.UUID("6a4e2f5c-0000-4000-8000-000000000001")


def packet(body: bytes, sent_time: int = 1000, ttrq: int = 60, trailers: bytes = b"") -> bytes:
    """A packet with the two fields 3.1.4.7 adjusts at their MS-MQMQ offsets."""
    base = struct.pack("<BBHIII", 0x10, 0, 3, 0x524F494C, 0, ttrq)
    user = bytes(32) + struct.pack("<II", 0xFFFFFFFF, sent_time) + bytes(4)  # 60 in all
    return base + user + body + trailers


class Rig:
    def __init__(self, world):
        self.world = world
        self.env = world.env
        world.qm.identifier = uuid.UUID("11111111-2222-4333-8444-555555555555")
        self.orders = world.queue("mqref\\private$\\orders", private_queue_number=1)
        self.server = RemoteReadServer(self.env, port=2103, cleanup_ms=60_000)

    def fmt(self, name="DIRECT=OS:mqref\\private$\\orders"):
        return to_queue_format(parse_format_name(name))

    def open(self, name="DIRECT=OS:mqref\\private$\\orders", access=c.RECEIVE_ACCESS,
             share=c.MQ_DENY_NONE):
        out = self.server.call(c.R_OpenQueue(pQueueFormat=self.fmt(name), dwAccess=access,
                                             dwShareMode=share, pClientId=CLIENT))
        return out

    def context(self, **kw) -> bytes:
        out = self.open(**kw)
        assert out.status == MQ_OK, out
        return out.result.pphContext

    def send(self, body=b"hello", queue=None, trailers=b"", **kw) -> LocalMessage:
        m = LocalMessage(body=body, type=LocalMessageType.Binary, arrival_time=1234, **kw)
        m.packet = packet(body, trailers=trailers)
        m.offset = [(0, 60), (60, len(body)), (60 + len(body), len(trailers))]
        assert enqueue_message(self.env, queue or self.orders, m) == 0
        return m

    def receive(self, ctx, action=c.MQ_ACTION_RECEIVE, timeout=0, request=1, token=None,
                max_body=1 << 20, **kw):
        return self.server.call(c.R_StartReceive(
            phContext=ctx, ulAction=action, ulTimeout=timeout, dwRequestId=request,
            dwMaxBodySize=max_body, dwMaxCompoundMessageSize=1 << 20, **kw), token=token)


@pytest.fixture
def rig(world) -> Rig:
    return Rig(world)


@pytest.mark.req("MS-MQRR/3.1.4.1/R1", "MS-MQRR/3.1.4.1/R6")
def test_get_server_port_returns_the_remoteread_port(rig):
    assert rig.server.call(c.R_GetServerPort()).status == 2103


@pytest.mark.req("MS-MQRR/3.1.4.2/R30", "MS-MQRR/3.1.4.2/R19")
def test_open_queue_returns_a_context_handle(rig):
    out = rig.open()
    assert out.status == MQ_OK and len(out.result.pphContext) == c.CONTEXT_HANDLE_SIZE
    assert rig.server.descriptor(out.result.pphContext).queue_reference is rig.orders


@pytest.mark.req("MS-MQRR/3.1.4.2/R24")
def test_open_of_a_queue_that_does_not_exist_throws_queue_not_found(rig):
    out = rig.open("DIRECT=OS:mqref\\private$\\nope")
    assert out.status == MQ_ERROR_QUEUE_NOT_FOUND and out.result.raised


@pytest.mark.req("MS-MQRR/3.1.4.2/R23")
@pytest.mark.parametrize("change", [
    dict(pQueueFormat=None), dict(dwAccess=0x4), dict(dwShareMode=7), dict(pClientId=None)])
def test_open_with_an_invalid_parameter_throws_invalid_parameter(rig, change):
    call = dataclasses.replace(c.R_OpenQueue(pQueueFormat=rig.fmt(), dwAccess=c.RECEIVE_ACCESS,
                                             pClientId=CLIENT), **change)
    out = rig.server.call(call)
    assert out.status == MQ_ERROR_INVALID_PARAMETER and out.result.raised


@pytest.mark.req("MS-MQRR/3.1.4.7/R17", "MS-MQRR/3.1.4.7/R29", "MS-MQRR/3.1.4.7/R45")
def test_receive_returns_the_whole_packet_and_locks_the_message(rig):
    ctx = rig.context()
    m = rig.send(b"hello")
    out = rig.receive(ctx)
    r = out.result
    assert out.status == MQ_OK and r.pdwNumberOfSections == 1
    [section] = r.ppPacketSections
    assert section.SectionBufferType == c.stFullPacket
    assert section.SectionSize == section.SectionSizeAlloc == len(m.packet)
    assert section.pSectionBuffer == adjust_time_to_reach_queue(m.packet)
    assert struct.unpack_from("<I", section.pSectionBuffer, 12)[0] == 1060  # sent + ttrq
    assert r.pSequenceId == m.lookup_identifier & 0x00FFFFFFFFFFFFFF
    assert r.pdwArriveTime == 1234
    assert m.message_position_reference.state is Locked


@pytest.mark.req("MS-MQRR/3.1.4.9/R7")
def test_end_receive_with_ack_removes_the_message(rig):
    ctx = rig.context()
    m = rig.send()
    rig.receive(ctx, request=7)
    out = rig.server.call(c.R_EndReceive(phContext=ctx, dwAck=c.RR_ACK, dwRequestId=7))
    assert out.status == MQ_OK
    assert m.message_position_reference.state is Deleted
    assert rig.receive(ctx, request=8).status == MQ_ERROR_IO_TIMEOUT


@pytest.mark.req("MS-MQRR/3.1.4.9/R8")
def test_end_receive_with_nack_returns_the_message(rig):
    ctx = rig.context()
    m = rig.send()
    rig.receive(ctx, request=7)
    assert rig.server.call(c.R_EndReceive(phContext=ctx, dwAck=c.RR_NACK,
                                          dwRequestId=7)).status == MQ_OK
    assert m.message_position_reference.state is Available
    assert rig.receive(ctx, request=8).result.pSequenceId == m.lookup_identifier & (2**56 - 1)


@pytest.mark.req("MS-MQRR/3.1.4.9/R13", "MS-MQRR/3.1.4.9/R14")
def test_end_receive_without_or_with_a_wrong_request_is_refused(rig):
    ctx = rig.context()
    rig.send()
    assert rig.server.call(c.R_EndReceive(phContext=ctx, dwAck=c.RR_ACK,
                                          dwRequestId=1)).status == MQ_ERROR_INVALID_HANDLE
    rig.receive(ctx, request=1)
    assert rig.server.call(c.R_EndReceive(phContext=ctx, dwAck=c.RR_ACK,
                                          dwRequestId=2)).status == MQ_ERROR_INVALID_PARAMETER


def test_a_waiting_receive_completes_when_a_message_arrives(rig):
    ctx = rig.context()
    assert rig.receive(ctx, timeout=5000, token="t") == Pending("t")
    m = rig.send(b"late")
    [done] = rig.server.take_completions()
    assert done.token == "t" and done.result.status == MQ_OK
    assert m.message_position_reference.state is Locked


@pytest.mark.req("MS-MQRR/3.1.2.1/R2")
def test_a_waiting_receive_times_out_after_ul_timeout(rig):
    ctx = rig.context()
    rig.receive(ctx, timeout=250, token="t")
    rig.env.advance(249)
    assert rig.server.take_completions() == []
    rig.env.advance(250)
    [done] = rig.server.take_completions()
    assert done.result.status == MQ_ERROR_IO_TIMEOUT


@pytest.mark.req("MS-MQRR/3.1.4.8/R11", "MS-MQRR/3.1.4.8/R16")
def test_cancel_receive_ends_the_wait_with_operation_cancelled(rig):
    ctx = rig.context()
    rig.receive(ctx, timeout=c.INFINITE_TIMEOUT, request=9, token="t")
    out = rig.server.call(c.R_CancelReceive(phContext=ctx, dwRequestId=9))
    assert out.status == MQ_OK
    [done] = rig.server.take_completions()
    assert done.result.status == MQ_ERROR_OPERATION_CANCELLED
    again = rig.server.call(c.R_CancelReceive(phContext=ctx, dwRequestId=9))
    assert is_failure(again.status)


@pytest.mark.req("MS-MQRR/3.1.4.8/R2", "MS-MQRR/3.1.4.8/R11", "MS-MQDMPR/3.1.7.1.17/R3")
@pytest.mark.parametrize("own_handle", [True, False])
def test_cancel_through_another_handle_of_the_queue_follows_the_choice(rig, own_handle):
    """spec/choices.yaml mqrr-cancel-own-handle: the reference cancels only a read waiting
    through the handle the cancel names, so a peek-only handle of the queue cannot end another
    client's receive; the alternate reads the text as written."""
    rig.env.choices = dataclasses.replace(rig.env.choices, cancel_through_own_handle=own_handle)
    receiver = rig.context()
    peeker = rig.context(access=c.PEEK_ACCESS)
    rig.receive(receiver, timeout=c.INFINITE_TIMEOUT, request=5, token="t")
    out = rig.server.call(c.R_CancelReceive(phContext=peeker, dwRequestId=5))
    if own_handle:
        assert is_failure(out.status)
        assert rig.server.take_completions() == []
        m = rig.send()  # the receive still waits, and takes it
        [done] = rig.server.take_completions()
        assert done.result.status == MQ_OK
        assert m.message_position_reference.state is not Available
    else:
        assert out.status == MQ_OK
        [done] = rig.server.take_completions()
        assert done.result.status == MQ_ERROR_OPERATION_CANCELLED
    # through its own handle the receiver's cancel works either way
    rig.receive(receiver, timeout=c.INFINITE_TIMEOUT, request=6, token="u")
    assert rig.server.call(c.R_CancelReceive(phContext=receiver, dwRequestId=6)).status == MQ_OK


@pytest.mark.req("MS-MQRR/3.1.5.1/R4", "MS-MQRR/3.1.5.1/R8", "MS-MQRR/3.1.2.2/R1")
def test_the_cleanup_timer_returns_an_unacknowledged_message(rig):
    ctx = rig.context()
    m = rig.send()
    rig.receive(ctx, request=3)
    rig.env.advance(60_000)
    assert m.message_position_reference.state is Available
    assert rig.server.pending_request_table.entries == {}


@pytest.mark.req("MS-MQRR/3.1.6.2/R8", "MS-MQRR/3.1.6.2/R12")
def test_rundown_returns_locked_messages_and_closes_the_handle(rig):
    ctx = rig.context()
    m = rig.send()
    rig.receive(ctx, request=3)
    assert rig.server.rundown(ctx) == MQ_OK
    assert m.message_position_reference.state is Available
    assert rig.server.descriptor(ctx) is None
    assert rig.orders.open_queue_descriptor_collection == []


@pytest.mark.req("MS-MQRR/3.1.4.7/R50")
@pytest.mark.parametrize("kw", [
    dict(LookupId=5, ulTimeout=10, ulAction=c.MQ_LOOKUP_PEEK_CURRENT),
    dict(LookupId=5, ulAction=c.MQ_ACTION_RECEIVE),
    dict(LookupId=0, ulAction=c.MQ_LOOKUP_RECEIVE_CURRENT),
    dict(ulAction=c.MQ_ACTION_PEEK_NEXT),
    dict(ulAction=0x12345678),
    dict(hCursor=1, ulAction=c.MQ_LOOKUP_PEEK_NEXT),
])
def test_start_receive_parameter_table(rig, kw):
    ctx = rig.context()
    out = rig.server.call(c.R_StartReceive(phContext=ctx, **kw))
    assert out.status == MQ_ERROR_INVALID_PARAMETER


@pytest.mark.req("MS-MQRR/3.1.4.7/R50")
def test_lookup_receive_prev_with_lookup_id_0_allows_either_reading(rig):
    """Errata lookup-receive-prev-lookup-id: the ulAction table allows LookupId 0 for
    MQ_LOOKUP_RECEIVE_PREV, the LookupId list forbids it; any failure follows one reading or
    the other. The other MQ_LOOKUP_ actions with LookupId 0 stay MQ_ERROR_INVALID_PARAMETER
    exactly (the table and the list agree there)."""
    ctx = rig.context()
    prev = rig.server.call(c.R_StartReceive(phContext=ctx, LookupId=0,
                                            ulAction=c.MQ_LOOKUP_RECEIVE_PREV))
    assert prev.status == MQ_ERROR_INVALID_PARAMETER and prev.any_failure
    peek = rig.server.call(c.R_StartReceive(phContext=ctx, LookupId=0,
                                            ulAction=c.MQ_LOOKUP_PEEK_PREV))
    assert peek.status == MQ_ERROR_INVALID_PARAMETER and not peek.any_failure


@pytest.mark.req("MS-MQRR/3.1.4.7/R6")
def test_a_peek_handle_cannot_receive(rig):
    ctx = rig.context(access=c.PEEK_ACCESS)
    rig.send()
    out = rig.receive(ctx)
    assert is_failure(out.status) and out.any_failure
    assert rig.receive(ctx, action=c.MQ_ACTION_PEEK_CURRENT).status == MQ_OK


@pytest.mark.req("MS-MQRR/3.1.4.7/R52")
def test_an_unknown_context_handle_fails(rig):
    out = rig.receive(bytes(20))
    assert is_failure(out.status) and out.any_failure


@pytest.mark.req("MS-MQRR/3.1.4.7/R76", "MS-MQRR/3.1.4.7/R81", "MS-MQRR/3.1.4.7/R86")
def test_peek_by_lookup_identifier_current_next_previous(rig):
    ctx = rig.context()
    a, b, d = rig.send(b"a"), rig.send(b"b"), rig.send(b"d")

    def seq(action, lookup):
        out = rig.receive(ctx, action=action, LookupId=lookup)
        return out.result.pSequenceId if out.status == MQ_OK else out.status

    low = 2**56 - 1
    assert seq(c.MQ_LOOKUP_PEEK_CURRENT, b.lookup_identifier) == b.lookup_identifier & low
    assert seq(c.MQ_LOOKUP_PEEK_NEXT, b.lookup_identifier) == d.lookup_identifier & low
    assert seq(c.MQ_LOOKUP_PEEK_PREV, b.lookup_identifier) == a.lookup_identifier & low
    assert seq(c.MQ_LOOKUP_PEEK_CURRENT, 999) == MQ_ERROR_MESSAGE_NOT_FOUND


def test_receive_by_lookup_identifier_is_two_phase(rig):
    ctx = rig.context()
    rig.send(b"a")
    b = rig.send(b"b")
    out = rig.receive(ctx, action=c.MQ_LOOKUP_RECEIVE_CURRENT, LookupId=b.lookup_identifier,
                      request=4)
    assert out.status == MQ_OK and b.message_position_reference.state is Locked
    assert rig.server.call(c.R_EndReceive(phContext=ctx, dwAck=c.RR_ACK,
                                          dwRequestId=4)).status == MQ_OK
    assert b.message_position_reference.state is Deleted


@pytest.mark.req("MS-MQDMPR/3.1.7.3.3/R23", "MS-MQDMPR/3.1.7.3.3/R28")
def test_a_receive_by_lookup_identifier_of_a_held_message_fails_with_any_failure(rig):
    """Choice 8: the seek sets no status for a receive of a message that is not Available;
    MQ_ERROR_MESSAGE_NOT_FOUND, marked any_failure, and the message stays Locked. A message
    the queue does not hold, or a peek at a held one, keeps its exact status."""
    ctx = rig.context()
    a = rig.send(b"a")
    assert rig.receive(ctx, request=1).status == MQ_OK
    held = rig.receive(ctx, action=c.MQ_LOOKUP_RECEIVE_CURRENT, LookupId=a.lookup_identifier,
                       request=2)
    assert held.status == MQ_ERROR_MESSAGE_NOT_FOUND and held.any_failure
    assert a.message_position_reference.state is Locked
    gone = rig.receive(ctx, action=c.MQ_LOOKUP_RECEIVE_CURRENT, LookupId=999, request=3)
    assert gone.status == MQ_ERROR_MESSAGE_NOT_FOUND and not gone.any_failure
    peek = rig.receive(ctx, action=c.MQ_LOOKUP_PEEK_CURRENT, LookupId=a.lookup_identifier)
    assert is_failure(peek.status) and not peek.any_failure


@pytest.mark.req("MS-MQRR/3.1.4.6/R11", "MS-MQRR/3.1.4.6/R14")
def test_purge_needs_receive_access_and_leaves_locked_messages_purge_pending(rig):
    ctx = rig.context()
    peek_ctx = rig.context(access=c.PEEK_ACCESS)
    locked, free = rig.send(b"1"), rig.send(b"2")
    rig.receive(ctx, request=1)
    assert rig.server.call(c.R_PurgeQueue(phContext=peek_ctx)).status == STATUS_ACCESS_DENIED
    assert rig.server.call(c.R_PurgeQueue(phContext=ctx)).status == MQ_OK
    assert free.message_position_reference.state is Deleted
    assert locked.message_position_reference.state is PurgePending
    rig.server.call(c.R_EndReceive(phContext=ctx, dwAck=c.RR_NACK, dwRequestId=1))
    assert locked.message_position_reference.state is Deleted


@pytest.mark.req("MS-MQRR/3.1.4.4/R14", "MS-MQRR/3.1.4.5/R14")
def test_cursor_peeks_walk_the_queue_and_close(rig):
    ctx = rig.context()
    a, b = rig.send(b"a"), rig.send(b"b")
    cursor = rig.server.call(c.R_CreateCursor(phContext=ctx)).result.phCursor
    assert cursor != 0
    first = rig.receive(ctx, action=c.MQ_ACTION_PEEK_CURRENT, hCursor=cursor)
    second = rig.receive(ctx, action=c.MQ_ACTION_PEEK_NEXT, hCursor=cursor)
    low = 2**56 - 1
    assert first.result.pSequenceId == a.lookup_identifier & low
    assert second.result.pSequenceId == b.lookup_identifier & low
    assert rig.server.call(c.R_CloseCursor(phContext=ctx, hCursor=cursor)).status == MQ_OK
    assert is_failure(rig.server.call(c.R_CloseCursor(phContext=ctx, hCursor=cursor)).status)


@pytest.mark.req("MS-MQRR/3.1.4.7/R32", "MS-MQRR/3.1.4.7/R39")
def test_a_small_max_body_size_splits_the_packet_into_sections(rig):
    ctx = rig.context()
    rig.send(b"0123456789", trailers=b"TRAILER")
    out = rig.receive(ctx, max_body=4)
    first, second = out.result.ppPacketSections
    assert first.SectionBufferType == c.stBinaryFirstSection
    assert first.pSectionBuffer[60:] == b"0123"
    assert first.SectionSize == 64 and first.SectionSizeAlloc == 70
    assert second.SectionBufferType == c.stBinarySecondSection
    assert second.pSectionBuffer == b"TRAILER" and second.SectionSize == 7


@pytest.mark.req("MS-MQRR/3.1.4.3/R14", "MS-MQRR/3.1.4.3/R15", "MS-MQRR/3.1.4.3/R10")
def test_close_queue_nulls_the_handle_and_a_second_close_fails(rig):
    ctx = rig.context()
    out = rig.server.call(c.R_CloseQueue(pphContext=ctx))
    assert out.status == MQ_OK and out.result.pphContext is None
    again = rig.server.call(c.R_CloseQueue(pphContext=ctx))
    assert is_failure(again.status) and again.any_failure


@pytest.mark.req("MS-MQRR/3.1.4.10/R29", "MS-MQRR/3.1.4.11/R34")
def test_move_a_message_to_a_subqueue(rig):
    sub = Queue(pathname="mqref\\private$\\orders;retry", queue_type=QueueType.Private,
                queue_manager=rig.world.qm)
    rig.orders.subqueue_collection.append(sub)
    ctx = rig.context()
    m = rig.send()
    moved = rig.server.call(c.R_OpenQueueForMove(
        pQueueFormat=rig.fmt("DIRECT=OS:mqref\\private$\\orders;retry"), pClientId=CLIENT))
    assert moved.status == MQ_OK, moved
    out = rig.server.call(c.R_MoveMessage(phContextFrom=ctx,
                                          ullContextTo=moved.result.pMoveContext,
                                          LookupId=m.lookup_identifier,
                                          pTransactionId=bytes(16)))
    assert out.status == MQ_OK
    assert m.message_position_reference.queue_reference is sub


@pytest.mark.req("MS-MQRR/3.1.4.13/R68", "MS-MQRR/3.1.4.13/R69")
def test_transactional_receive_needs_a_transactional_queue_and_a_receive_action(rig):
    ctx = rig.context()
    rig.send()
    xact = bytes(range(16))
    assert rig.server.call(c.R_QMEnlistRemoteTransaction(
        pTransactionId=xact, cbPropagationToken=4, pbPropagationToken=b"tokn")).status == MQ_OK
    out = rig.server.call(c.R_StartTransactionalReceive(phContext=ctx, pTransactionId=xact))
    assert out.status == MQ_ERROR_TRANSACTION_USAGE
    rig.orders.transactional = True
    peek = rig.server.call(c.R_StartTransactionalReceive(
        phContext=ctx, pTransactionId=xact, ulAction=c.MQ_ACTION_PEEK_CURRENT))
    assert peek.status == MQ_ERROR_TRANSACTION_USAGE


@pytest.mark.req("MS-MQRR/3.1.4.13/R83", "MS-MQRR/3.1.4.15/R23")
def test_transactional_receive_locks_the_message_in_the_transaction(rig):
    rig.orders.transactional = True
    ctx = rig.context()
    m = rig.send()
    xact = bytes(range(16))
    rig.server.call(c.R_QMEnlistRemoteTransaction(pTransactionId=xact, cbPropagationToken=4,
                                                  pbPropagationToken=b"tokn"))
    out = rig.server.call(c.R_StartTransactionalReceive(phContext=ctx, pTransactionId=xact,
                                                        dwRequestId=5,
                                                        dwMaxBodySize=1 << 20))
    assert out.status == MQ_OK and m.message_position_reference.state is Locked
    [tx] = rig.world.qm.transaction_collection
    assert [op.message_position_reference for op in tx.transactional_operation_collection] \
        == [m.message_position_reference]
    end = rig.server.call(c.R_EndTransactionalReceive(phContext=ctx, dwAck=c.RR_ACK,
                                                      dwRequestId=5))
    assert end.status == MQ_OK and m.message_position_reference.state is Locked


@pytest.mark.req("MS-MQRR/3.1.4.9/R19", "MS-MQRR/3.1.4.9/R22", "MS-MQDMPR/3.1.4.4/R10",
                 "MS-MQDMPR/3.1.4.5/R6")
@pytest.mark.parametrize("commit", [True, False])
def test_r_endreceive_of_a_transactional_receive_then_the_transactions_end(rig, commit):
    """errata end-receive-of-transactional-receive: R_EndReceive with RR_ACK takes the
    entry of an R_StartTransactionalReceive and deletes the message; the transaction's commit
    or abort then has nothing left to do for it, and TotalBytes stays what the queue holds."""
    from mqconform.model.higher_layer import transaction_abort, transaction_commit
    from mqconform.model.invariants import check_invariants

    rig.orders.transactional = True
    ctx = rig.context()
    m = rig.send()
    xact = bytes(range(16))
    rig.server.call(c.R_QMEnlistRemoteTransaction(pTransactionId=xact, cbPropagationToken=4,
                                                  pbPropagationToken=b"tokn"))
    rig.server.call(c.R_StartTransactionalReceive(phContext=ctx, pTransactionId=xact,
                                                  dwRequestId=5, dwMaxBodySize=1 << 20))
    end = rig.server.call(c.R_EndReceive(phContext=ctx, dwAck=c.RR_ACK, dwRequestId=5))
    assert end.status == MQ_OK
    assert m.message_position_reference.state is MessagePositionState.Deleted
    [tx] = rig.world.qm.transaction_collection
    end_tx = transaction_commit if commit else transaction_abort
    assert end_tx(rig.env, tx.identifier) == MQ_OK
    assert list(rig.orders.message_position_list) == [] and rig.orders.total_bytes == 0
    assert check_invariants(rig.world.qm) == []


@pytest.mark.req("MS-MQRR/3.1.4.14/R17", "MS-MQRR/3.1.4.14/R14", "MS-MQRR/3.1.4.14/R16")
def test_set_user_acknowledgement_class_marks_the_transactional_receive_rejected(rig):
    from mqconform.model.adm import MessageClass

    rig.orders.transactional = True
    ctx = rig.context()
    m, other = rig.send(), rig.send()
    xact = bytes(range(16))
    rig.server.call(c.R_QMEnlistRemoteTransaction(pTransactionId=xact, cbPropagationToken=4,
                                                  pbPropagationToken=b"tokn"))
    rig.server.call(c.R_StartTransactionalReceive(phContext=ctx, pTransactionId=xact,
                                                  dwRequestId=5, dwMaxBodySize=1 << 20))
    out = rig.server.call(c.R_SetUserAcknowledgementClass(phContext=ctx,
                                                          LookupId=m.lookup_identifier,
                                                          usClass=0x0004))
    assert out.status == MQ_OK
    [tx] = rig.world.qm.transaction_collection
    assert tx.transactional_operation_collection[0].dequeue_reason is \
        MessageClass.NackReceiveRejected
    assert rig.server.call(c.R_SetUserAcknowledgementClass(
        phContext=ctx, LookupId=12345, usClass=4)).status == MQ_ERROR_MESSAGE_NOT_FOUND
    assert rig.server.call(c.R_SetUserAcknowledgementClass(
        phContext=ctx, LookupId=other.lookup_identifier, usClass=4)).status == \
        MQ_ERROR_TRANSACTION_USAGE


@pytest.mark.req("MS-MQRR/3.1.6.2/R8")
def test_a_message_returned_by_rundown_goes_to_a_receive_waiting_on_another_handle(rig):
    first, second = rig.context(), rig.context()
    m = rig.send()
    assert rig.receive(first, request=1).status == MQ_OK
    assert isinstance(rig.receive(second, request=2, timeout=5000, token="w"), Pending)
    assert rig.server.rundown(first) == MQ_OK
    [done] = rig.server.take_completions()
    assert done.token == "w" and done.result.status == MQ_OK
    assert m.message_position_reference.state is Locked
    assert (2, second) in rig.server.pending_request_table.entries


@pytest.mark.req("MS-MQRR/2.2.5.3/R5", "MS-MQRR/2.2.5.3/R6", "MS-MQRR/2.2.5.3/R7")
@pytest.mark.parametrize("subqueue", [None, "retry", "x" * 31, "y" * 40])
@pytest.mark.parametrize("cut", [False, True])
def test_the_subqueue_header_names_the_subqueue_the_message_is_read_from(subqueue, cut):
    from mqconform.model.mqrr import packet_sections
    from mqconform.model.packet import decode_packet
    from mqconform.model.provisioning import make_message

    message = make_message({"body": "hello"}, "message")
    sections = packet_sections(message, 1 if cut else 1 << 16, 1 << 16, subqueue)
    want = (subqueue or "")[:31].encode("utf-16-le")
    if cut:  # the second section is the trailers: ExtensionHeader (12), then SubqueueHeader
        assert len(sections) == 2
        trailers = bytes(sections[1].pSectionBuffer)
        field = trailers[12 + 20:12 + 20 + 64]
    else:
        packet = bytes(sections[0].pSectionBuffer)
        assert decode_packet(packet).extras.subqueue_header.subqueue_name == (subqueue or "")[:31]
        field = packet[-28 - 128:-28 - 64]  # SubqueueName, before TargetSubqueueName
    # the name, its null, then 0x00 to the end of the 64 bytes; all 0x00 outside a subqueue
    assert field == want.ljust(64, b"\0")
    # the message itself is not changed: a later read from the queue names no subqueue
    again = packet_sections(message, 1 << 16, 1 << 16, None)
    assert decode_packet(bytes(again[0].pSectionBuffer)).extras.subqueue_header.subqueue_name == ""


@pytest.mark.req("MS-MQRR/2.2.5.3/R5", "MS-MQRR/3.1.4.7/R31")
@pytest.mark.parametrize("subqueue", [None, "retry"])
@pytest.mark.parametrize("store", [False, True])
def test_a_soap_header_between_body_and_extension_header_is_left_as_it_was_sent(subqueue, store):
    """The trailers of Message.Offset begin at the body's end, and a SoapHeader lies there
    before the ExtensionHeader: the SubqueueName is written after the UserMessage, not where
    the trailers begin (which overwrote the SOAP header's text). ``store``: a message read
    back from the store knows nothing of where its UserMessage ends and decodes it once."""
    from mqconform.model.mqrr import packet_sections
    from mqconform.model.packet import decode_packet
    from mqconform.model.provisioning import make_message

    message = make_message({"body": "hello", "soap_header": "b" * 32, "soap_body": "<b/>"},
                           "message")
    if store:
        message._user_message_size = None
    decoded = decode_packet(message.packet)
    assert decoded.trailers[0] < decoded.user_message_size  # the SoapHeader between them
    [section] = packet_sections(message, 1 << 16, 1 << 16, subqueue)
    out = decode_packet(bytes(section.pSectionBuffer))
    assert (out.extras.soap_header.header, out.extras.soap_header.body) == ("b" * 32, "<b/>")
    assert out.extras.subqueue_header.subqueue_name == (subqueue or "")
    assert message._user_message_size == decoded.user_message_size


@pytest.mark.req("MS-MQRR/3.1.4.7/R55", "MS-MQRR/3.1.4.7/R56", "MS-MQRR/3.1.4.7/R57",
                 "MS-MQRR/3.1.4.7/R58", "MS-MQRR/3.1.4.7/R59", "MS-MQRR/3.1.4.3/R13")
def test_a_receive_records_its_entry_with_the_time_and_close_queue_removes_it(rig):
    ctx = rig.context()
    rig.send()
    rig.env.advance(1_234)
    assert rig.receive(ctx, request=4).status == MQ_OK
    [(key, entry)] = rig.server.pending_request_table.entries.items()
    assert (entry.request_id, entry.queue_context_handle) == (4, ctx)
    assert entry.time_stamp == rig.env.now == 1_234  # the time of the receive, in ms
    other = rig.context()
    rig.send(b"second")
    assert rig.receive(other, request=4).status == MQ_OK
    assert len(rig.server.pending_request_table.entries) == 2
    assert rig.server.call(c.R_CloseQueue(pphContext=ctx)).status == MQ_OK
    # only the closed handle's entries go; the other handle's request stays pending
    assert [e.queue_context_handle for e in rig.server.pending_request_table.entries.values()] \
        == [other]


@pytest.mark.req("MS-MQRR/3.1.4.13/R76", "MS-MQRR/3.1.4.13/R80")
def test_a_transactional_receive_records_the_time_of_the_receive(rig):
    rig.orders.transactional = True
    ctx = rig.context()
    rig.send()
    xact = bytes(range(16))
    rig.server.call(c.R_QMEnlistRemoteTransaction(pTransactionId=xact, cbPropagationToken=4,
                                                  pbPropagationToken=b"tokn"))
    rig.env.advance(777)
    out = rig.server.call(c.R_StartTransactionalReceive(phContext=ctx, pTransactionId=xact,
                                                        dwRequestId=5,
                                                        dwMaxBodySize=1 << 20))
    assert out.status == MQ_OK
    [entry] = rig.server.pending_request_table.entries.values()
    assert entry.request_id == 5 and entry.time_stamp == 777


def test_calls_leave_no_object_behind_once_their_handles_are_closed(rig):
    """A flood of opens and closes leaves nothing of its own alive: no string made per call
    kept in the interpreter's lookup cache, no table at its peak size. Each such object lives
    somewhere in the heap the flood grew, and keeps that part from going back to the system
    (bench/floods.py measures the RSS)."""
    import gc
    import tracemalloc

    def open_and_close(n):
        for _ in range(n):
            ctx = rig.context()
            assert rig.server.call(c.R_CloseQueue(pphContext=ctx)).status == MQ_OK

    open_and_close(50)  # what the first calls set up once
    gc.collect()
    tracemalloc.start(8)
    try:
        before = tracemalloc.take_snapshot()
        open_and_close(3000)
        gc.collect()
        after = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    import mqconform.model

    model = tracemalloc.Filter(True, str(Path(mqconform.model.__file__).parent / "*"))
    kept = [stat for stat in after.filter_traces([model]).compare_to(
        before.filter_traces([model]), "traceback") if stat.count_diff > 0]
    assert sum(stat.count_diff for stat in kept) <= 8, "\n".join(
        f"{stat.count_diff} blocks, {stat.size_diff} octets:\n" + "\n".join(
            stat.traceback.format()) for stat in kept[:5])
