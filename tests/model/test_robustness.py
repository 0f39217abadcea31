"""Invalid input gives the documents' status codes, never an exception: any typed call with any
field values (unknown handles, NULLs, out-of-range numbers, wrong types of format) is answered
with an Outcome or a Pending, by both protocol servers."""

from __future__ import annotations

import dataclasses
import uuid

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mqconform.model import calls as c
from mqconform.model.adm import LocalMessage, LocalMessageType, Queue, QueueManager, QueueType
from mqconform.model.formats import (
    MgmtObject,
    MgmtObjectType,
    QueueFormat,
    parse_format_name,
    to_queue_format,
)
from mqconform.model.message_ops import enqueue_message
from mqconform.model.mqmr import QMMgmtServer
from mqconform.model.mqrr import RemoteReadServer
from mqconform.model.outcome import Outcome
from mqconform.model.runtime import Environment, Pending

GOOD_FORMAT = to_queue_format(parse_format_name("DIRECT=OS:mqref\\private$\\q"))

u32 = st.integers(0, 0xFFFFFFFF)
u64 = st.integers(0, 0xFFFFFFFFFFFFFFFF)
queue_formats = st.one_of(
    st.none(), st.just(GOOD_FORMAT),
    st.builds(QueueFormat, m_qft=st.integers(0, 255), m_SuffixAndFlags=st.integers(0, 255),
              m_reserved=st.integers(0, 0xFFFF),
              value=st.one_of(st.none(), st.uuids(), st.text(max_size=40))))
blobs = st.one_of(st.none(), st.binary(max_size=24))


def field_values(name: str, server_handles: list[bytes]):
    if name in ("phContext", "pphContext", "phContextFrom"):
        return st.one_of(st.none(), st.binary(max_size=24), st.sampled_from(server_handles))
    if name in ("pQueueFormat",):
        return queue_formats
    if name == "pObjectFormat":
        return st.one_of(st.none(), st.builds(MgmtObject, type=st.integers(0, 5),
                                              pQueueFormat=queue_formats))
    if name in ("pTransactionId",):
        return blobs
    if name == "pClientId":
        return st.one_of(st.none(), st.uuids())
    if name == "pbPropagationToken":
        return st.binary(max_size=40)
    if name == "lpwszAction":
        return st.one_of(st.none(), st.sampled_from(["CONNECT", "DISCONNECT", "TIDY", "PAUSE",
                                                     "RESUME", "EOD_RESEND"]),
                         st.text(max_size=20))
    if name == "aProp":
        return st.lists(u32, max_size=5).map(tuple)
    if name == "apVar":
        return st.lists(st.builds(c.PropVariant, vt=st.integers(0, 0xFFFF)), max_size=5).map(
            tuple)
    if name in ("LookupId", "ullContextTo"):
        return st.one_of(st.integers(0, 3), u64)
    if name in ("ulAction",):
        return st.one_of(st.sampled_from([c.MQ_ACTION_RECEIVE, c.MQ_ACTION_PEEK_CURRENT,
                                          c.MQ_ACTION_PEEK_NEXT, c.MQ_LOOKUP_PEEK_NEXT,
                                          c.MQ_LOOKUP_RECEIVE_CURRENT]), u32)
    if name in ("ulTimeout",):
        return st.sampled_from([0, 1, 10, c.INFINITE_TIMEOUT])
    if name in ("Major", "Minor"):
        return st.integers(0, 255)
    return st.one_of(st.integers(0, 3), u32)


def setup():
    qm = QueueManager(computer_name="MQREF", queue_manager_quota=1 << 40,
                      identifier=uuid.UUID("11111111-2222-4333-8444-555555555555"))
    env = Environment(qm)
    q = Queue(pathname="mqref\\private$\\q", queue_type=QueueType.Private, queue_manager=qm,
              private_queue_number=1)
    qm.queue_collection.append(q)
    for i in range(3):
        enqueue_message(env, q, LocalMessage(body=bytes([i]) * 10, type=LocalMessageType.Binary))
    rr, mgmt = RemoteReadServer(env), QMMgmtServer(env)
    handle = rr.call(c.R_OpenQueue(pQueueFormat=GOOD_FORMAT, dwAccess=c.RECEIVE_ACCESS,
                                   pClientId=uuid.uuid4())).result.pphContext
    return env, rr, mgmt, [handle]


@st.composite
def call_sequences(draw):
    env, rr, mgmt, handles = setup()
    kinds = list(c.CALLS.values())
    calls = []
    for _ in range(draw(st.integers(1, 8))):
        kind = draw(st.sampled_from(kinds))
        values = {f.name: draw(field_values(f.name, handles))
                  for f in dataclasses.fields(kind)}
        calls.append(kind(**values))
    return env, rr, mgmt, calls


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(call_sequences(), st.integers(0, 400_000))
def test_any_call_is_answered_with_an_outcome_never_an_exception(seq, later):
    env, rr, mgmt, calls = seq
    for call in calls:
        server = mgmt if call.interface == c.QMMGMT else rr
        out = server.call(call)
        assert isinstance(out, Outcome | Pending), out
        if isinstance(out, Outcome):
            assert isinstance(out.status, int) and 0 <= out.status <= 0xFFFFFFFF
    env.advance(later)
    for done in env.take_completions():
        assert isinstance(done.result, Outcome)


def test_a_management_object_of_any_type_is_answered():
    env, rr, mgmt, _ = setup()
    for t in (0, MgmtObjectType.MGMT_MACHINE, MgmtObjectType.MGMT_QUEUE,
              MgmtObjectType.MGMT_SESSION, 99):
        out = mgmt.call(c.R_QMMgmtGetInfo(pObjectFormat=MgmtObject(type=t, pQueueFormat=None),
                                          cp=1, aProp=(1,), apVar=(c.PropVariant(1),)))
        assert isinstance(out, Outcome)
