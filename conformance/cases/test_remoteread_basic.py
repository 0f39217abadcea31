"""MS-MQRR 3.1.4.1-3.1.4.7 and 3.1.4.9: the target against the model oracle. Every call goes
through ``mq.call``, which checks the target's result against the model's Outcome."""

from __future__ import annotations

import pytest

from mqconform.conformance import sources
from mqconform.model import calls as c
from mqconform.model.formats import parse_format_name, to_queue_format
from mqconform.model.status import MQ_ERROR_QUEUE_NOT_FOUND


@pytest.mark.req("MS-MQRR/3.1.4.1/R1", "MS-MQRR/3.1.4.1/R6")
def test_get_server_port_returns_the_remoteread_port(mq):
    out = mq.call(c.R_GetServerPort())
    mq.assert_that(0 < out.status < 0x10000, f"R_GetServerPort returned {out.status:#x}, not a "
                   f"TCP port", "MS-MQRR/3.1.4.1/R6")


@pytest.mark.req("MS-MQRR/3.1.4.2/R29", "MS-MQRR/3.1.4.2/R30")
def test_open_an_existing_queue_returns_a_context_handle(mq):
    fmt = mq.queue()
    ctx = mq.open(fmt)
    mq.assert_that(len(ctx) == c.CONTEXT_HANDLE_SIZE, f"pphContext has {len(ctx)} octets, not "
                   f"{c.CONTEXT_HANDLE_SIZE}")


@pytest.mark.req("MS-MQRR/3.1.4.2/R24")
def test_open_a_missing_queue_raises_queue_not_found(mq):
    mq.queue()  # the queue manager exists and works; the queue asked for does not
    missing = to_queue_format(parse_format_name(
        f"DIRECT=OS:{mq.suite.spec.computer_name}\\private$\\mqc-missing-{sources.uuid4().hex}"))
    out = mq.call(c.R_OpenQueue(pQueueFormat=missing, dwAccess=c.RECEIVE_ACCESS,
                                pClientId=sources.uuid4()))
    mq.assert_that(out.raised and out.status == MQ_ERROR_QUEUE_NOT_FOUND,
                   f"R_OpenQueue of a missing queue: {out!r}")


@pytest.mark.parametrize("access", [0, 0x2, c.MQ_MOVE_ACCESS, 0x21, 0xFFFFFFFF])
@pytest.mark.req("MS-MQRR/3.1.4.2/R23")
def test_open_with_an_invalid_access_raises_invalid_parameter(mq, access):
    fmt = mq.queue()
    mq.call(c.R_OpenQueue(pQueueFormat=fmt, dwAccess=access, pClientId=sources.uuid4()))


@pytest.mark.req("MS-MQRR/3.1.4.3/R14", "MS-MQRR/3.1.4.3/R15")
def test_close_queue_returns_ok_and_a_null_handle(mq):
    ctx = mq.open(mq.queue())
    out = mq.call(c.R_CloseQueue(pphContext=ctx))
    mq.assert_that(out.pphContext is None, f"R_CloseQueue returned pphContext "
                   f"{out.pphContext!r}, not NULL", "MS-MQRR/3.1.4.3/R5")


@pytest.mark.req("MS-MQRR/3.1.4.4/R15", "MS-MQRR/3.1.4.5/R16", "MS-MQRR/3.1.4.7/R7")
def test_cursor_create_peek_next_and_close(mq):
    ctx = mq.open(mq.queue([b"one", b"two"]))
    cursor = mq.call(c.R_CreateCursor(phContext=ctx)).phCursor
    mq.assert_that(cursor != 0, "R_CreateCursor returned hCursor 0")
    mq.receive(ctx, c.MQ_ACTION_PEEK_NEXT, hCursor=cursor)
    mq.receive(ctx, c.MQ_ACTION_PEEK_NEXT, hCursor=cursor)
    mq.receive(ctx, c.MQ_ACTION_PEEK_CURRENT, hCursor=cursor)
    mq.call(c.R_CloseCursor(phContext=ctx, hCursor=cursor))


@pytest.mark.req("MS-MQRR/3.1.4.5/R13")
def test_close_of_a_closed_cursor_fails(mq):
    ctx = mq.open(mq.queue())
    cursor = mq.call(c.R_CreateCursor(phContext=ctx)).phCursor
    mq.call(c.R_CloseCursor(phContext=ctx, hCursor=cursor))
    mq.call(c.R_CloseCursor(phContext=ctx, hCursor=cursor))


@pytest.mark.req("MS-MQRR/3.1.4.7/R46", "MS-MQRR/3.1.4.7/R29", "MS-MQRR/3.1.4.7/R31")
def test_peek_returns_the_first_message_and_leaves_it(mq):
    ctx = mq.open(mq.queue([b"first", b"second"]))
    mq.receive(ctx, c.MQ_ACTION_PEEK_CURRENT)
    mq.receive(ctx, c.MQ_ACTION_PEEK_CURRENT)


@pytest.mark.req("MS-MQRR/3.1.4.9/R7", "MS-MQRR/3.1.4.9/R19", "MS-MQRR/3.1.4.7/R46")
def test_receive_then_ack_removes_the_message(mq):
    ctx = mq.open(mq.queue([b"first", b"second"]))
    mq.receive(ctx, request=1)
    mq.call(c.R_EndReceive(phContext=ctx, dwAck=c.RR_ACK, dwRequestId=1))
    mq.receive(ctx, c.MQ_ACTION_PEEK_CURRENT)  # now "second"


@pytest.mark.req("MS-MQRR/3.1.4.9/R8", "MS-MQRR/3.1.4.9/R19")
def test_receive_then_nack_returns_the_message_to_the_queue(mq):
    ctx = mq.open(mq.queue([b"first", b"second"]))
    mq.receive(ctx, request=7)
    mq.call(c.R_EndReceive(phContext=ctx, dwAck=c.RR_NACK, dwRequestId=7))
    mq.receive(ctx, c.MQ_ACTION_PEEK_CURRENT)  # "first" again


@pytest.mark.req("MS-MQRR/3.1.4.9/R14")
def test_end_receive_of_an_unknown_request_fails(mq):
    ctx = mq.open(mq.queue([b"first"]))
    mq.receive(ctx, request=1)
    mq.call(c.R_EndReceive(phContext=ctx, dwAck=c.RR_ACK, dwRequestId=2))
    mq.call(c.R_EndReceive(phContext=ctx, dwAck=c.RR_ACK, dwRequestId=1))


@pytest.mark.req("MS-MQRR/3.1.4.7/R6")
def test_receive_on_a_peek_access_handle_fails(mq):
    ctx = mq.open(mq.queue([b"first"]), access=c.PEEK_ACCESS)
    mq.receive(ctx)
    mq.receive(ctx, c.MQ_ACTION_PEEK_CURRENT)


@pytest.mark.req("MS-MQRR/3.1.4.6/R13", "MS-MQRR/3.1.4.6/R11")
def test_purge_with_receive_access_empties_the_queue(mq):
    ctx = mq.open(mq.queue([b"a", b"b"]))
    mq.call(c.R_PurgeQueue(phContext=ctx))
    mq.receive(ctx, c.MQ_ACTION_PEEK_CURRENT)  # MQ_ERROR_IO_TIMEOUT: nothing left


@pytest.mark.req("MS-MQRR/3.1.4.6/R14")
def test_purge_without_receive_access_is_refused(mq):
    ctx = mq.open(mq.queue([b"a"]), access=c.PEEK_ACCESS)
    mq.call(c.R_PurgeQueue(phContext=ctx))
    mq.receive(ctx, c.MQ_ACTION_PEEK_CURRENT)  # still there
