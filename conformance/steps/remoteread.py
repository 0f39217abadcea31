"""Steps for MS-MQRR scenarios. State shared between the steps of one scenario lives in the
``scenario`` fixture (a dict): the queue's format, the open handle, the last result."""

from __future__ import annotations

import pytest
from pytest_bdd import given, parsers, then, when

from model import calls as c
from model.status import MQ_ERROR_IO_TIMEOUT

ACCESS = {"RECEIVE_ACCESS": c.RECEIVE_ACCESS, "PEEK_ACCESS": c.PEEK_ACCESS}


@pytest.fixture
def scenario() -> dict:
    return {}


def _bodies(text: str) -> list[bytes]:
    return [part.strip().encode() for part in text.split(",") if part.strip()]


@given(parsers.parse('a queue with messages "{bodies}"'))
def a_queue_with_messages(mq, scenario, bodies):
    scenario["queue"] = mq.queue(_bodies(bodies))


@given("an empty queue")
def an_empty_queue(mq, scenario):
    scenario["queue"] = mq.queue([])


@given(parsers.parse("the client has opened the queue with {access}"))
def opened_with(mq, scenario, access):
    scenario["context"] = mq.open(scenario["queue"], access=ACCESS[access])


@when("the client calls R_GetServerPort")
def call_get_server_port(mq, scenario):
    scenario["result"] = mq.call(c.R_GetServerPort())


@when("the client calls R_PurgeQueue")
def call_purge(mq, scenario):
    scenario["result"] = mq.call(c.R_PurgeQueue(phContext=scenario["context"]))


@then("the returned port is a nonzero TCP port")
def nonzero_port(scenario):
    assert 0 < scenario["result"].status < 0x10000


@then("a peek finds no message")
def peek_finds_nothing(mq, scenario):
    result = mq.receive(scenario["context"], c.MQ_ACTION_PEEK_CURRENT)
    assert result.status == MQ_ERROR_IO_TIMEOUT


@then(parsers.parse('a peek finds the message "{body}"'))
def peek_finds(mq, scenario, body):
    from conformance.session import message_body

    result = mq.receive(scenario["context"], c.MQ_ACTION_PEEK_CURRENT)
    assert message_body(result) == body.encode()
