"""model/choices.py: every switch of ALTERNATE changes what the model answers to another value
the documents allow, and REFERENCE keeps the model's own."""

from __future__ import annotations

import dataclasses
import uuid

import pytest

from mqconform.model import calls as c
from mqconform.model.choices import ALTERNATE, PROFILES, REFERENCE, Choices
from mqconform.model.formats import (
    MgmtObject,
    MgmtObjectType,
    parse_format_name,
    to_queue_format,
)
from mqconform.model.host import QueueManagerHost
from mqconform.model.provisioning import make_message, provision
from mqconform.model.status import (
    MQ_ERROR,
    MQ_ERROR_INVALID_HANDLE,
    MQ_ERROR_INVALID_PARAMETER,
    MQ_OK,
)

CLIENT = uuid.UUID("6a4e2f5c-0000-4000-8000-000000000001")
DOCUMENT = {"queue_manager": {"computer_name": "MQREF"},
            "queues": [{"path": "private$\\orders",
                        "messages": [{"body": "one"}, {"body": "two"}]}]}


def make(choices: Choices) -> QueueManagerHost:
    made = provision({"queue_manager": DOCUMENT["queue_manager"]})
    made.env.choices = choices
    provision({"queues": DOCUMENT["queues"]}, made.env)
    return QueueManagerHost(made.env)


def open_orders(h: QueueManagerHost) -> bytes:
    fmt = to_queue_format(parse_format_name("DIRECT=OS:MQREF\\private$\\orders"))
    out = h.remote_read.call(c.R_OpenQueue(pQueueFormat=fmt, dwAccess=c.RECEIVE_ACCESS,
                                           dwShareMode=c.MQ_DENY_NONE, pClientId=CLIENT))
    assert out.status == MQ_OK
    return out.result.pphContext


def count(h: QueueManagerHost) -> int:
    queue = next(q for q in h.env.local_queue_manager.queue_collection
                 if q.pathname.lower().endswith("orders"))
    return sum(1 for p in queue.message_position_list if p.state.name == "Available")


def test_profiles_name_themselves_and_every_switch_differs():
    assert PROFILES == {"reference": REFERENCE, "alternate": ALTERNATE}
    for field in dataclasses.fields(Choices):
        assert getattr(REFERENCE, field.name) != getattr(ALTERNATE, field.name), field.name


@pytest.mark.parametrize("choices,status", [(REFERENCE, MQ_ERROR_INVALID_HANDLE),
                                            (ALTERNATE, MQ_ERROR)])
def test_a_failure_the_document_leaves_open_takes_the_switched_code(choices, status):
    h = make(choices)
    out = h.remote_read.call(c.R_CloseCursor(phContext=bytes(20), hCursor=1))
    assert out.status == status and out.any_failure
    # where the model's own code is the alternate's, another failure is answered
    assert ALTERNATE.answer(dataclasses.replace(out, result=dataclasses.replace(
        out.result, status=MQ_ERROR))).status == MQ_ERROR_INVALID_PARAMETER


def test_a_status_the_document_fixes_is_never_switched():
    h = make(ALTERNATE)
    ctx = open_orders(h)
    out = h.remote_read.call(c.R_CloseQueue(pphContext=ctx))
    assert out.status == MQ_OK and not out.any_failure


def test_qmmgmt_failures_are_switched_too():
    h = make(ALTERNATE)
    out = h.qmmgmt.call(c.R_QMMgmtAction(
        pObjectFormat=MgmtObject(type=MgmtObjectType.MGMT_MACHINE), lpwszAction="NO SUCH"))
    assert out.status == MQ_ERROR and out.any_failure


@pytest.mark.parametrize("choices,left", [(REFERENCE, 0), (ALTERNATE, 2)])
def test_tidy_purges_or_keeps(choices, left):
    h = make(choices)
    out = h.qmmgmt.call(c.R_QMMgmtAction(
        pObjectFormat=MgmtObject(type=MgmtObjectType.MGMT_MACHINE), lpwszAction="TIDY"))
    assert out.status == MQ_OK
    assert count(h) == left


@pytest.mark.parametrize("choices,available", [(REFERENCE, 1), (ALTERNATE, 2)])
def test_close_with_an_unacknowledged_message(choices, available):
    h = make(choices)
    ctx = open_orders(h)
    out = h.remote_read.call(c.R_StartReceive(
        phContext=ctx, hCursor=0, ulAction=c.MQ_ACTION_RECEIVE, ulTimeout=0, dwRequestId=7,
        dwMaxBodySize=1024, dwMaxCompoundMessageSize=1024))
    assert out.status == MQ_OK
    assert count(h) == 1
    assert h.remote_read.call(c.R_CloseQueue(pphContext=ctx)).status == MQ_OK
    assert count(h) == available


def test_the_cleanup_timer_and_the_default_time_to_reach_queue():
    assert make(REFERENCE).remote_read.cleanup_ms == 300_000
    assert make(ALTERNATE).remote_read.cleanup_ms == 240_000
    for choices in (REFERENCE, ALTERNATE):
        message = make_message({"body": "x"}, "m", choices=choices)
        assert message.time_to_reach_queue == choices.default_time_to_reach_queue
        given = make_message({"body": "x", "time_to_reach_queue": 60}, "m", choices=choices)
        assert given.time_to_reach_queue == 60


def test_private_queue_numbers_start_where_the_switch_says():
    for choices in (REFERENCE, ALTERNATE):
        h = make(choices)
        orders = next(q for q in h.env.local_queue_manager.queue_collection
                      if q.pathname.lower().endswith("orders"))
        assert orders.private_queue_number >= choices.first_private_queue_number
        assert orders.private_queue_number < choices.first_private_queue_number + 16


def test_a_bad_cursor_answers_one_of_the_two_readings_never_a_third():
    """3.1.4.7 names STATUS_INVALID_HANDLE for an unknown cursor, its Return Values table
    MQ_ERROR_INVALID_HANDLE (errata cursor-invalid-handle-status): the alternate takes the
    table's code, not its generic MQ_ERROR."""
    from mqconform.model.status import STATUS_INVALID_HANDLE

    for choices, status in ((REFERENCE, STATUS_INVALID_HANDLE),
                            (ALTERNATE, MQ_ERROR_INVALID_HANDLE)):
        h = make(choices)
        out = h.remote_read.call(c.R_StartReceive(
            phContext=open_orders(h), hCursor=0x7777, ulAction=c.MQ_ACTION_PEEK_CURRENT,
            dwRequestId=1, dwMaxBodySize=64, dwMaxCompoundMessageSize=64))
        assert out.status == status
