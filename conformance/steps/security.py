"""Steps for the access checks a server makes with its caller's identity (MS-MQRR 2.1: "The
server SHOULD use this identity to perform method-specific access checks"; MS-MQMR 3: "The
client MUST have administrator privileges on the server machine").

The callers are the target file's ``identities`` (conformance/targetfile.py: an
``administrator`` and a ``reader`` who is not one); the embedded reference server is started
with both. Their calls go to the target only, on connections of their own that authenticate
with NTLM: the model knows no identities, so each Then step states what the documents require
(``mq.assert_that``). A target file without the identities makes these cases inconclusive,
never passed.
"""

from __future__ import annotations

import uuid

from pytest_bdd import given, parsers, then, when

from mqconform.conformance import sources
from mqconform.conformance.client import ArgumentError
from mqconform.conformance.session import message_body
from mqconform.conformance.sut import Inconclusive
from mqconform.conformance.targets import NotApplicable, TargetError
from mqconform.model import calls as c
from mqconform.model.formats import MgmtObject, MgmtObjectType
from mqconform.model.status import MQ_ERROR_ACCESS_DENIED, is_failure, name_of

ACCESS = {"RECEIVE_ACCESS": c.RECEIVE_ACCESS, "PEEK_ACCESS": c.PEEK_ACCESS}
#: an RPC runtime's refusal of a caller an authorization policy turns away (MS-RPCE
#: 3.2.3.5.1: fault status 5)
RPC_ACCESS_DENIED = 0x00000005


def _refused(result: c.Result) -> bool:
    return result.status in (MQ_ERROR_ACCESS_DENIED, RPC_ACCESS_DENIED)


def _text(result: c.Result) -> str:
    kind = "raised" if result.raised else "returned"
    return f"{kind} {name_of(result.status) or hex(result.status)} ({result.status:#010x})"


@given(parsers.parse('a queue that "{reader}" may only peek and "{admin}" may receive from, '
                     'with messages "{bodies}"'))
def a_guarded_queue(mq, scenario, reader, admin, bodies):
    messages = [b.strip().encode() for b in bodies.split(",") if b.strip()]
    scenario["queue"] = mq.guarded_queue({"peek": [reader], "receive": [admin],
                                          "purge": [admin]}, messages)


@given(parsers.parse('a queue that "{role}" may {rights} and nothing more, with messages '
                     '"{bodies}"'))
def a_queue_for_one_role(mq, scenario, role, rights, bodies):
    """``rights``: "peek", "peek and receive from", ...: the rights of peek, receive and purge
    named there go to ``role`` (``anonymous``: the caller who does not authenticate), the
    others to nobody."""
    messages = [b.strip().encode() for b in bodies.split(",") if b.strip()]
    given = {word for word in rights.replace(" from", "").replace(",", " ").split()
             if word != "and"}
    unknown = given - {"peek", "receive", "purge"}
    if unknown:
        raise ValueError(f"rights {rights!r}: {sorted(unknown)} are not peek, receive, purge")
    scenario["queue"] = mq.guarded_queue({right: [role] if right in given else []
                                          for right in ("peek", "receive", "purge")}, messages)


def _open_as(scenario, role: str, access: str, conn) -> None:
    """R_OpenQueue of the scenario's queue on ``role``'s connection ``conn``, kept as that
    role's; the handle it returns is the role's from now on."""
    scenario.setdefault("as", {})[role] = conn
    call = c.R_OpenQueue(pQueueFormat=scenario["queue"], dwAccess=ACCESS[access],
                         pClientId=sources.uuid4())
    scenario["result"] = conn.call(call)
    scenario["who"] = role
    if not scenario["result"].raised and scenario["result"].pphContext:
        scenario.setdefault("handles", {})[role] = scenario["result"].pphContext


def _refused_by(result: c.Result) -> bool:
    """A returned failure HRESULT, or a fault, whose status is not ERROR_SUCCESS (MS-RPCE
    3.3.3.5.1: a fault never carries 0)."""
    return result.status != 0 if result.raised else is_failure(result.status)


@when(parsers.parse('"{role}" opens the queue with {access:w}'))
def identity_opens(mq, scenario, role, access):
    _open_as(scenario, role, access,
             scenario.setdefault("as", {}).get(role) or mq.as_identity(role))


@when(parsers.parse('"{role}" purges the queue'))
def identity_purges(mq, scenario, role):
    """R_PurgeQueue (MS-MQRR 3.1.4.6) through the handle ``role`` opened last."""
    conn = scenario["as"][role]
    scenario["result"] = conn.call(c.R_PurgeQueue(phContext=scenario["handles"][role]))
    scenario["who"] = role


@when(parsers.parse('"{role}", whose first request carries a verification trailer as Windows '
                    'clients send it, opens the queue with {access:w}'))
def identity_with_trailer_opens(mq, scenario, role, access):
    """MS-RPCE 2.2.2.13: a verification trailer after the stub, signed or sealed with it at
    the target file's authentication level."""
    conn = mq.as_identity(role, trailer=True)
    scenario.setdefault("as", {})[role] = conn
    scenario["result"] = conn.call(c.R_OpenQueue(pQueueFormat=scenario["queue"],
                                                 dwAccess=ACCESS[access],
                                                 pClientId=sources.uuid4()))
    scenario["who"] = role


@when(parsers.parse('"{role}", sealing its calls (packet privacy), opens the queue with '
                    '{access:w}'))
def identity_seals_and_opens(mq, scenario, role, access):
    """MS-RPCE 2.2.1.1.8 RPC_C_AUTHN_LEVEL_PKT_PRIVACY: every request and answer of the
    connection sealed; a level above the target's minimum (MS-MQRR 3.1.4.2 <19>)."""
    _open_as(scenario, role, access, mq.as_identity(role, level=6))


#: the object a request names (C706 12.6.4.9): one RemoteRead never defined
NAMED_OBJECT = uuid.UUID("6d2f1f4e-5b8a-4c3e-9f61-0a7b2c4d8e19")


@when(parsers.parse('"{role}", sealing its calls (packet privacy), calls R_GetServerPort '
                    'naming an object'))
def identity_seals_and_names_an_object(mq, scenario, role):
    """R_GetServerPort on a connection of ``role`` at packet privacy, its request naming an
    object (conformance/client.py decision 9): the object field lies between the opnum and
    the sealed stub."""
    conn = mq.as_identity(role, level=6)
    conn.client.name_an_object(NAMED_OBJECT)
    scenario["who"] = role
    scenario["result"] = conn.call(c.R_GetServerPort())


@then(parsers.parse("R_GetServerPort returns the port the target listens on ({ids})"))
def returns_the_port(mq, scenario, ids):
    result = scenario["result"]
    mq.assert_that(not result.raised and result.status == mq.target.port,
                   f"R_GetServerPort returns {mq.target.port}, the port the target listens "
                   f"on; it {_text(result)}", tuple(i.strip() for i in ids.split(",")))


@when(parsers.parse('"{role}" purges the queue, the request\'s signature altered on its way'))
def identity_purges_altered(mq, scenario, role):
    """R_PurgeQueue through the handle ``role`` opened last, one octet of the request's NTLM
    checksum changed after signing (conformance/client.py decision 7): not the caller's
    request. The connection is closed after it; ``role``'s next call opens another."""
    conn = scenario["as"].pop(role)
    try:
        conn.client.alter_next_signature()
    except ArgumentError as exc:
        raise NotApplicable(f'"{role}" does not sign its requests: {exc}') from None
    _call_closing(scenario, role, conn, c.R_PurgeQueue(phContext=scenario["handles"][role]))


@when(parsers.parse('"{role}" purges the queue, the request\'s verifier naming another '
                    "security context than its bind's"))
def identity_purges_in_another_context(mq, scenario, role):
    """R_PurgeQueue through the handle ``role`` opened last, its sec_trailer naming another
    auth_context_id than the bind's and signed so (conformance/client.py decision 8). The
    connection is closed after it."""
    conn = scenario["as"].pop(role)
    try:
        conn.client.name_another_security_context(c.REMOTEREAD)
    except ArgumentError as exc:
        raise NotApplicable(f'"{role}" does not sign its requests: {exc}') from None
    scenario["not_theirs"] = "naming another security context than its bind's"
    _call_closing(scenario, role, conn, c.R_PurgeQueue(phContext=scenario["handles"][role]))


def _call_closing(scenario, role: str, conn, call: c.Call) -> None:
    """One call as ``role`` whose answer may be a closed connection; ``conn`` closed after."""
    scenario["who"] = role
    try:
        scenario["result"] = conn.call(call)
    except TargetError as exc:
        scenario["result"] = None
        scenario["closed"] = str(exc)
    finally:
        conn.close()


@when(parsers.parse('"{role}", whose rpc_auth_3 names another security context than its '
                    "bind's, asks R_QMMgmtGetInfo for the machine's active queues"))
def identity_asks_qmmgmt_in_another_context(mq, scenario, role):
    """R_QMMgmtGetInfo on a qmmgmt association whose NTLM handshake ends with an rpc_auth_3
    naming another auth_context_id (conformance/client.py decision 8)."""
    conn = mq.as_identity(role)
    try:
        conn.client.name_another_security_context(c.QMMGMT, auth3=True)
    except ArgumentError as exc:
        raise NotApplicable(f'"{role}" does not sign its requests: {exc}') from None
    scenario["not_theirs"] = "made after an rpc_auth_3 naming another security context"
    _call_closing(scenario, role, conn, _active_queues())


@then(parsers.parse("the server does not carry it out: it answers with a fault or closes the "
                    "connection ({ids})"))
def it_is_not_carried_out(mq, scenario, ids):
    result = scenario["result"]
    mq.assert_that(result is None or _refused_by(result),
                   f'the request {scenario.get("not_theirs", "altered on its way")} is not '
                   f'"{scenario["who"]}"\'s; the target '
                   f"{_text(result) if result is not None else 'closed the connection'}",
                   tuple(i.strip() for i in ids.split(",")))


@when(parsers.parse('"{role}" peeks the first message'))
def identity_peeks(mq, scenario, role):
    conn = scenario["as"][role]
    handle = scenario.get("handles", {}).get(role) or scenario["result"].pphContext
    scenario["result"] = conn.call(c.R_StartReceive(
        phContext=handle, ulAction=c.MQ_ACTION_PEEK_CURRENT, dwMaxBodySize=1 << 16,
        dwMaxCompoundMessageSize=1 << 16))


@when(parsers.parse('"{role}" asks R_QMMgmtGetInfo for the machine\'s active queues'))
def identity_asks_qmmgmt(mq, scenario, role):
    conn = mq.as_identity(role)
    scenario["result"] = conn.call(_active_queues())
    scenario["who"] = role


def _active_queues() -> c.R_QMMgmtGetInfo:
    """R_QMMgmtGetInfo of the machine's active queues (MS-MQMR 3.1.4.1: one property)."""
    machine = MgmtObject(type=MgmtObjectType.MGMT_MACHINE)
    return c.R_QMMgmtGetInfo(pObjectFormat=machine, cp=1, aProp=(1,), apVar=(c.PropVariant(1),))


@then(parsers.parse("the server refuses it: access denied ({ids})"))
def it_is_refused(mq, scenario, ids):
    result = scenario["result"]
    mq.assert_that(_refused(result),
                   f'"{scenario["who"]}" was to be refused (MQ_ERROR_ACCESS_DENIED, or the RPC '
                   f"runtime's access denied); the target {_text(result)}",
                   tuple(i.strip() for i in ids.split(",")))


@then(parsers.parse("the server allows it ({ids})"))
def it_is_allowed(mq, scenario, ids):
    result = scenario["result"]
    mq.assert_that(not result.raised and result.status == 0,
                   f'"{scenario["who"]}" was to be allowed; the target {_text(result)}',
                   tuple(i.strip() for i in ids.split(",")))


@then(parsers.parse('the peek returns the message "{body}" ({ids})'))
def the_peek_returns(mq, scenario, body, ids):
    result = scenario["result"]
    got = message_body(result) if not result.raised and result.status == 0 else None
    mq.assert_that(got == body.encode(),
                   f'the queue still holds the message {body!r}; the peek {_text(result)}'
                   f'{f" with the body {got!r}" if got is not None else ""}',
                   tuple(i.strip() for i in ids.split(",")))


@when(parsers.parse('"{role}" binds naming the client\'s association group and calls '
                    'R_StartReceive with MQ_ACTION_RECEIVE and the client\'s handle'))
def identity_joins(mq, scenario, role):
    """Another principal that learnt the client's assoc_group_id (C706 12.6.4.3) binds naming
    it and tries the client's handle. MS-RPCE 3.3.1.5.7 lets a server tie a join to the
    client; the handles of a group are its client's (MS-MQRR 2.2.4)."""
    identity = mq.suite.spec.identities.get(role)
    own = (getattr(mq.target, "_options", None) or {}).get("credentials")
    if identity is not None and own is not None and \
            identity.user.lower() == (own.user or "").lower():
        raise Inconclusive(f"the target file's {role!r} is the suite's own user: the join "
                           "would be the client's own")
    conn = mq.as_identity(role, join=True)
    scenario["who"] = role
    scenario["result"] = conn.call(c.R_StartReceive(
        phContext=scenario["context"], ulAction=c.MQ_ACTION_RECEIVE, dwRequestId=78,
        dwMaxBodySize=1 << 16, dwMaxCompoundMessageSize=1 << 16))


@then(parsers.parse("the server refuses it: the group's handles are not that caller's ({ids})"))
def not_the_callers_handles(mq, scenario, ids):
    result = scenario["result"]
    mq.assert_that(_refused_by(result),
                   f'"{scenario["who"]}", in the client\'s association group by naming it, '
                   f"was to be refused the client's handle; the target {_text(result)}",
                   tuple(i.strip() for i in ids.split(",")))
