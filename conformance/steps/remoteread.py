"""Steps for MS-MQRR scenarios (2.2.x wire rules, 3.1.4.1-3.1.4.9). State shared between the
steps of one scenario lives in the ``scenario`` fixture (a dict): the queue's format, the open
handle, the cursors, the lookup identifiers noted, the last result, the calls started and not
yet finished.

Every call goes through ``mq`` (conformance/session.py), which checks the target's result
against the model's Outcome as it is made; the Then steps restate, for the reader and as a
second check, what the documents say the result is. Checks the model cannot make (a relation
between output fields, a time from the wall clock) are ``mq.assert_that`` with the requirement
IDs they check.

Step texts are written so that no two definitions match one step: pytest-bdd takes whichever
matching definition it meets last, so values are typed (``{action:w}``, ``{request:d}``) and
the few free-form places use regular expressions.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import re
import time
import uuid

import pytest
from pytest_bdd import given, parsers, then, when

from mqconform.conformance import sources
from mqconform.conformance.session import message_body
from mqconform.conformance.sut import Inconclusive
from mqconform.model import calls as c
from mqconform.model import status as st
from mqconform.model.formats import (
    FormatName,
    QueueFormat,
    parse_format_name,
    to_queue_format,
)
from mqconform.model.packet import time_to_reach_queue
from mqconform.model.status import MQ_ERROR_IO_TIMEOUT, is_failure

ACCESS = {"RECEIVE_ACCESS": c.RECEIVE_ACCESS, "PEEK_ACCESS": c.PEEK_ACCESS,
          "MQ_MOVE_ACCESS": c.MQ_MOVE_ACCESS}
SHARE = {"MQ_DENY_NONE": c.MQ_DENY_NONE, "MQ_DENY_SHARE": c.MQ_DENY_SHARE}
ACTIONS = {name: getattr(c, name) for name in (
    "MQ_ACTION_RECEIVE", "MQ_ACTION_PEEK_CURRENT", "MQ_ACTION_PEEK_NEXT",
    "MQ_LOOKUP_PEEK_CURRENT", "MQ_LOOKUP_PEEK_NEXT", "MQ_LOOKUP_PEEK_PREV",
    "MQ_LOOKUP_RECEIVE_CURRENT", "MQ_LOOKUP_RECEIVE_NEXT", "MQ_LOOKUP_RECEIVE_PREV")}
ACKS = {"RR_ACK": c.RR_ACK, "RR_NACK": c.RR_NACK}
#: a lookup identifier no queue manager has handed out (they count up from 1)
UNKNOWN_LOOKUP_ID = 0x00FF_FFFF_FFFF_FF00
#: the body of a message made by size: 16 distinct octets, repeated
PATTERN = b"0123456789ABCDEF"
BIG = 1 << 16  # a dwMaxBodySize / dwMaxCompoundMessageSize that holds every body here
CURSOR = r"(?P<cursor>the cursor|the second cursor)"



class State(dict):
    """A scenario's state. The last result is kept under "result" and, for the steps of
    conformance/steps/remoteread_more.py that read it there, under "last" too (pytest-bdd
    binds a step text shared by both modules, "the call fails", to one definition only)."""

    def __setitem__(self, key, value) -> None:
        super().__setitem__(key, value)
        if key == "result":
            super().__setitem__("last", value)


@pytest.fixture
def scenario() -> dict:
    return State(cursors={}, lookup={}, pending={}, started_at={})


def _bodies(text: str) -> list[bytes]:
    return [part.strip().encode() for part in text.split(",") if part.strip()]


def _number(text: str) -> int:
    return int(text, 0)


def _action(text: str) -> int:
    return ACTIONS[text] if text in ACTIONS else _number(text)


def _status(name: str) -> int:
    value = getattr(st, name, None)
    if not isinstance(value, int):
        raise KeyError(f"no status named {name}")
    return value


def _body_of(size: int) -> bytes:
    return (PATTERN * (size // len(PATTERN) + 1))[:size]


def _result(scenario: dict) -> c.Result:
    return scenario["last"]  # the latest result, whichever module's step made the call


def _lookup(scenario: dict, text: str) -> int:
    text = text.strip().strip('"')
    if text in ("0", "none"):
        return 0
    if text == "unknown":
        return UNKNOWN_LOOKUP_ID
    return scenario["lookup"][text]


def _cursor(scenario: dict, text: str) -> int:
    text = text.strip()
    if text in ("0", "none"):
        return 0
    key = {"cursor": "the cursor", "the cursor": "the cursor",
           "second": "the second cursor", "the second cursor": "the second cursor"}.get(text)
    return scenario["cursors"][key] if key else _number(text)


def _receive(mq, scenario: dict, action: int, request: int = 1, target=None,
             context: bytes | None | str = "open", **fields) -> c.Result:
    fields.setdefault("dwMaxBodySize", BIG)
    fields.setdefault("dwMaxCompoundMessageSize", BIG)
    ctx = scenario["context"] if context == "open" else context
    call = c.R_StartReceive(phContext=ctx, ulAction=action, dwRequestId=request, **fields)
    scenario["result"] = mq.call(call, target=target)
    scenario["received_at"] = sources.now()
    return scenario["result"]


# ============================================================================ Given: queues

@given(parsers.parse('a queue with messages "{bodies}"'))
def a_queue_with_messages(mq, scenario, bodies):
    scenario["sent_at"] = sources.now()
    scenario["queue"] = mq.queue(_bodies(bodies))


@given(parsers.parse('a public queue with messages "{bodies}"'))
def a_public_queue_with_messages(mq, scenario, bodies):
    """A queue whose path name has no private$: QueueType Public (MS-MQMQ 2.1.1, MS-MQDMPR
    3.1.7.1.3); Inconclusive where SUT control cannot make one."""
    scenario["sent_at"] = sources.now()
    scenario["queue"] = mq.queue(_bodies(bodies), public=True)


@given(parsers.parse('a journaled queue with messages "{bodies}"'))
def a_journaled_queue_with_messages(mq, scenario, bodies):
    """Queue.Journaling True (MS-MQDMPR 3.1.1.2); Inconclusive where SUT control cannot."""
    scenario["sent_at"] = sources.now()
    scenario["queue"] = mq.queue(_bodies(bodies), journal=True)


@given(parsers.parse('a queue with messages "{bodies}" of priorities {priorities}'))
@given(parsers.parse('a queue with a message "{bodies}" of priority {priorities}'))
def a_queue_with_priorities(mq, scenario, bodies, priorities):
    """Messages of these Priority values (MS-MQDMPR 3.1.1.12; SUT control's ``priority``), sent
    in this order: the queue keeps them by Priority, then by arrival (3.1.1.2)."""
    levels = [int(p) for p in priorities.split(",")]
    bodies_ = _bodies(bodies)
    if len(levels) != len(bodies_):
        raise ValueError(f"{len(bodies_)} messages, {len(levels)} priorities")
    scenario["sent_at"] = sources.now()
    scenario["queue"] = mq.queue([{"body": b, "priority": p}
                                  for b, p in zip(bodies_, levels, strict=True)])


@given("an empty queue")
def an_empty_queue(mq, scenario):
    scenario["queue"] = mq.queue([])


@given(parsers.parse('a queue whose name ends in "{suffix}" with messages "{body}"'))
def a_queue_named(mq, scenario, suffix, body):
    """A queue name with characters the path name grammar allows (MS-MQMQ 2.1.1)."""
    scenario["queue"] = mq.queue([body.encode()], suffix=suffix)


@given(parsers.parse("a queue with a message of {size:d} bytes"))
def a_queue_with_a_message_of(mq, scenario, size):
    scenario["body"] = _body_of(size)
    scenario["sent_at"] = sources.now()
    scenario["queue"] = mq.queue([scenario["body"]])


# ============================================================================ Given: handles

@given(parsers.parse("the client has opened the queue with {access:w} and {share:w}"))
def opened_with_share(mq, scenario, access, share):
    scenario["context"] = mq.open(scenario["queue"], access=ACCESS[access],
                                  share=SHARE[share])


@given(parsers.parse("the client has opened the queue with {access:w}"))
def opened_with(mq, scenario, access):
    scenario["context"] = mq.open(scenario["queue"], access=ACCESS[access])


@given(parsers.parse("the client has opened the queue a second time with {access:w}"))
def opened_again_with(mq, scenario, access):
    scenario["second handle"] = mq.open(scenario["queue"], access=ACCESS[access])


@given(parsers.parse("the client has opened the queue {count:d} times with {access:w}"))
def opened_many_times(mq, scenario, count, access):
    scenario["handles"] = [mq.open(scenario["queue"], access=ACCESS[access])
                           for _ in range(count)]


@given("the client has closed the queue")
def has_closed_the_queue(mq, scenario):
    mq.call(c.R_CloseQueue(pphContext=scenario["context"]))


@given("the client has created a cursor")
def has_created_a_cursor(mq, scenario):
    out = mq.call(c.R_CreateCursor(phContext=scenario["context"]))
    scenario["cursors"]["the cursor"] = scenario["cursor"] = out.phCursor


@given("the client has created a second cursor")
def has_created_a_second_cursor(mq, scenario):
    out = mq.call(c.R_CreateCursor(phContext=scenario["context"]))
    scenario["cursors"]["the second cursor"] = out.phCursor


@given("the client has closed the cursor")
def has_closed_the_cursor(mq, scenario):
    mq.call(c.R_CloseCursor(phContext=scenario["context"], hCursor=scenario["cursor"]))


@given("the client has noted the lookup identifiers of the messages")
def noted_lookup_identifiers(mq, scenario):
    """Walk a cursor of its own over the queue and note each message's pSequenceId, the
    identifier a client passes back as LookupId."""
    ctx = scenario["context"]
    cursor = mq.call(c.R_CreateCursor(phContext=ctx)).phCursor
    action = c.MQ_ACTION_PEEK_CURRENT
    while True:
        out = mq.receive(ctx, action, hCursor=cursor)
        if out.status != 0:
            break
        scenario["lookup"][message_body(out).decode()] = out.pSequenceId
        action = c.MQ_ACTION_PEEK_NEXT
    mq.call(c.R_CloseCursor(phContext=ctx, hCursor=cursor))


@given(parsers.parse('the client has received "{body}" as request {request:d}'))
def has_received(mq, scenario, body, request):
    out = _receive(mq, scenario, c.MQ_ACTION_RECEIVE, request)
    _the_message_is_returned(mq, scenario, body)
    scenario["lookup"].setdefault(body, out.pSequenceId)


@given(parsers.re(r'the client has peeked "(?P<body>[^"]*)" on ' + CURSOR + "$"))
def has_peeked_on_cursor(mq, scenario, body, cursor):
    _receive(mq, scenario, c.MQ_ACTION_PEEK_CURRENT, hCursor=_cursor(scenario, cursor))
    _the_message_is_returned(mq, scenario, body)


@given("the client has a second connection in the same association group")
def has_a_second_connection(mq, scenario):
    scenario["second"] = mq.second()


@given("the client has a connection in another association group")
def has_a_separate_connection(mq, scenario):
    scenario["separate"] = mq.separate()


@given(parsers.parse("the client has called R_EndReceive with {ack:w} for request "
                     "{request:d}"))
def has_ended(mq, scenario, ack, request):
    call_end(mq, scenario, ack, request)
    the_call_succeeds(mq, scenario)


@given(parsers.parse("the client has called R_StartReceive with {action:w} as request "
                     "{request:d}"))
def has_called_receive(mq, scenario, action, request):
    _receive(mq, scenario, _action(action), request)


@given("the client has called R_PurgeQueue")
def has_purged(mq, scenario):
    mq.call(c.R_PurgeQueue(phContext=scenario["context"]))


# ============================================================================ When: R_GetServerPort

@when("the client calls R_GetServerPort")
def call_get_server_port(mq, scenario):
    scenario["result"] = mq.call(c.R_GetServerPort())


# ============================================================================ When: R_OpenQueue

def _open(mq, scenario, fmt: QueueFormat, access: int = c.RECEIVE_ACCESS, **fields
          ) -> c.Result:
    fields.setdefault("pClientId", uuid.UUID(int=0x4D51))
    fields.setdefault("fNonRoutingServer", 1)
    call = c.R_OpenQueue(pQueueFormat=fmt, dwAccess=access, **fields)
    scenario["result"] = out = mq.call(call)
    if out.pphContext and not out.raised:
        scenario["context"] = out.pphContext
    return out


@when(parsers.parse("the client calls R_OpenQueue with {access:w} and {share:w}"))
def call_open_with_share(mq, scenario, access, share):
    _open(mq, scenario, scenario["queue"], access=ACCESS[access], dwShareMode=SHARE[share])


@when(parsers.parse("the client calls R_OpenQueue with {access:w}"))
def call_open(mq, scenario, access):
    _open(mq, scenario, scenario["queue"], access=ACCESS[access])


@when(parsers.parse("the client calls R_OpenQueue with dwAccess {access:w}"))
def call_open_with_access_value(mq, scenario, access):
    _open(mq, scenario, scenario["queue"], access=_number(access))


@when(parsers.parse("the client calls R_OpenQueue with dwShareMode {share:w}"))
def call_open_with_share_value(mq, scenario, share):
    _open(mq, scenario, scenario["queue"], dwShareMode=_number(share))


@when(parsers.parse("the client calls R_OpenQueue with pClientId {client:S} and "
                    "fNonRoutingServer {routing:d}"))
def call_open_with_client(mq, scenario, client, routing):
    _open(mq, scenario, scenario["queue"], pClientId=uuid.UUID(client),
          fNonRoutingServer=routing)


@when(parsers.parse("the client calls R_OpenQueue with Major {major:d}, Minor {minor:d}, "
                    "BuildNumber {build:d} and fWorkgroup {workgroup:d}"))
def call_open_with_versions(mq, scenario, major, minor, build, workgroup):
    _open(mq, scenario, scenario["queue"], Major=major, Minor=minor, BuildNumber=build,
          fWorkgroup=workgroup)


def _format_naming_no_queue(mq, scenario: dict, kind: str) -> QueueFormat:
    computer = mq.suite.spec.computer_name
    missing = f"mqc-missing-{sources.uuid4().hex[:12]}"
    names = {
        "PUBLIC": f"PUBLIC={sources.uuid4()}",
        "PRIVATE": f"PRIVATE={sources.uuid4()}\\7ffffff0",
        "DIRECT": f"DIRECT=OS:{computer}\\private$\\{missing}",
        "MACHINE": f"MACHINE={sources.uuid4()};JOURNAL",
        "SUBQUEUE": f"DIRECT=OS:{computer}\\{mq.path_of(scenario['queue'])};{missing}",
    }
    return to_queue_format(parse_format_name(names[kind]))


def _format_of_type(kind: str) -> QueueFormat:
    if kind == "UNKNOWN":
        return QueueFormat(m_qft=0)
    names = {"CONNECTOR": f"CONNECTOR={sources.uuid4()}", "DL": f"DL={sources.uuid4()}",
             "MULTICAST": "MULTICAST=234.1.1.1:8001"}
    return to_queue_format(parse_format_name(names[kind]))


@when(parsers.parse("the client calls R_OpenQueue with a {kind:w} queue format that names no "
                    "queue"))
def call_open_naming_no_queue(mq, scenario, kind):
    _open(mq, scenario, _format_naming_no_queue(mq, scenario, kind))


@when(parsers.parse("the client calls R_OpenQueue with a queue format of type {kind:w}"))
def call_open_of_type(mq, scenario, kind):
    _open(mq, scenario, _format_of_type(kind))


@when("the client calls R_OpenQueue with the queue's DIRECT=OS format name")
def call_open_direct_os(mq, scenario):
    _open(mq, scenario, scenario["queue"])


def _spelled(mq, scenario: dict, text: str) -> str:
    """``text`` with ``<computer>`` and ``<queue>`` read as the target's computer name and the
    path name of the scenario's queue, and ``<U+XXXX>`` as that character (a control character
    a feature file cannot show)."""
    text = re.sub(r"<U\+([0-9A-Fa-f]{4})>", lambda m: chr(int(m.group(1), 16)), text)
    return text.replace("<computer>", mq.suite.spec.computer_name).replace(
        "<queue>", mq.path_of(scenario["queue"]))


def _named(mq, scenario: dict, text: str) -> QueueFormat:
    return to_queue_format(parse_format_name(_spelled(mq, scenario, text)))


@when("the client calls R_OpenQueue with the queue's DIRECT=OS format name in another case")
def call_open_direct_os_other_case(mq, scenario):
    # path names compare without case (spec/choices.yaml formats-case, fixed): MS-MQDMPR
    # 3.1.7.1.5 finds the queue "which matches" the format name
    _open(mq, scenario, to_queue_format(parse_format_name(
        "DIRECT=OS:" + _spelled(mq, scenario, "<computer>\\<queue>").swapcase())))


@when("the client calls R_OpenQueue with the queue's DIRECT=HTTP format name")
def call_open_direct_http(mq, scenario):
    _open(mq, scenario, _named(mq, scenario, "DIRECT=HTTP://<computer>/msmq\\<queue>"))


@when(parsers.parse("the client calls R_OpenQueue on the queue's journal with {access:w}"))
def call_open_journal(mq, scenario, access):
    _open(mq, scenario, _named(mq, scenario, "DIRECT=OS:<computer>\\<queue>;JOURNAL"),
          access=ACCESS[access])


@when(parsers.parse('the client calls R_OpenQueue with the DIRECT string "{text}"'))
def call_open_direct_string(mq, scenario, text):
    """A QUEUE_FORMAT of m_qft DIRECT whose m_pDirectID is this text as written (``<computer>``
    and ``<queue>``: the target's computer name and the queue's path name), not checked by the
    client: a direct format name or not."""
    _open(mq, scenario, QueueFormat(m_qft=3, value=_spelled(mq, scenario, text)))


@when(parsers.re(r'the client calls R_OpenQueue with a (?P<kind>DIRECT|SUBQUEUE) queue format '
                 r'"(?P<text>[^"]*)" and m_SuffixAndFlags (?P<saf>0x[0-9A-Fa-f]{2})$'))
def call_open_direct_suffix(mq, scenario, kind, text, saf):
    """A QUEUE_FORMAT of m_qft DIRECT (3) or SUBQUEUE (8) whose string is this text as written
    (``<computer>``, ``<queue>`` as above) and whose m_SuffixAndFlags is ``saf``: the suffix
    travels in m_SuffixAndFlags, the subqueue's name in the string (MS-MQMQ 2.2.7)."""
    qft = 3 if kind == "DIRECT" else 8
    _open(mq, scenario, QueueFormat(m_qft=qft, m_SuffixAndFlags=int(saf, 16),
                                    value=_spelled(mq, scenario, text)))


@when(parsers.re(r"the client calls R_OpenQueue with a (?P<kind>DIRECT|SUBQUEUE) queue format "
                 r"whose string pointer is NULL$"))
def call_open_null_string(mq, scenario, kind):
    """A QUEUE_FORMAT of m_qft DIRECT (3) or SUBQUEUE (8) whose [string] wchar_t* arm is a NULL
    unique pointer, which NDR carries (a union's embedded pointer is unique): no direct format
    name at all (MS-MQMQ 2.2.7)."""
    qft = 3 if kind == "DIRECT" else 8
    _open(mq, scenario, QueueFormat(m_qft=qft, m_SuffixAndFlags=0x05 if qft == 8 else 0,
                                    value=None))


def _private_names(mq, scenario: dict) -> tuple[FormatName, FormatName]:
    """The queue's PRIVATE= format name on the target and on the oracle (SUT control tells
    them: the queue manager's identifier and the queue's number differ between the two)."""
    path = mq.path_of(scenario["queue"])
    return (parse_format_name(mq.sut.private_format_name(path)),
            parse_format_name(mq.suite.oracle_sut.private_format_name(path)))


def _public_names(mq, scenario: dict) -> tuple[FormatName, FormatName]:
    """The public queue's PUBLIC= format name on the target and on the oracle (SUT control
    tells them: each queue manager gives the queue its own Identifier)."""
    path = mq.path_of(scenario["queue"])
    return (parse_format_name(mq.sut.public_format_name(path)),
            parse_format_name(mq.suite.oracle_sut.public_format_name(path)))


def _open_by_name(mq, scenario: dict, theirs: FormatName, ours: FormatName) -> None:
    fmt = to_queue_format(theirs)
    mq.note_format(fmt, to_queue_format(ours))
    _open(mq, scenario, fmt)


@when(parsers.parse('the client calls R_OpenQueue with the format name "{text}"'))
def call_open_format_name(mq, scenario, text):
    """The QUEUE_FORMAT of this format name (MS-MQMQ 2.1; ``<computer>`` and ``<queue>``: the
    target's computer name and the queue's path name)."""
    _open(mq, scenario, _named(mq, scenario, text))


@when("the client calls R_OpenQueue with the queue's PRIVATE= format name")
def call_open_by_name(mq, scenario):
    _open_by_name(mq, scenario, *_private_names(mq, scenario))


@when("the client calls R_OpenQueue with the queue's PUBLIC= format name")
def call_open_public(mq, scenario):
    _open_by_name(mq, scenario, *_public_names(mq, scenario))


@when(parsers.re(r"the client calls R_OpenQueue with the server's own MACHINE= format name "
                 r"and suffix (?P<suffix>JOURNAL|DEADLETTER|DEADXACT)"))
def call_open_machine(mq, scenario, suffix):
    """MACHINE=ComputerGuid;suffix (MS-MQMQ 2.1.6) of the server's own queue manager: the
    ComputerGuid its queue's PRIVATE= name carries (SUT control tells it, for the target and
    for the oracle alike)."""
    theirs, ours = _private_names(mq, scenario)
    _open_by_name(mq, scenario, parse_format_name(f"MACHINE={theirs.guid};{suffix}"),
                  parse_format_name(f"MACHINE={ours.guid};{suffix}"))


#: a PRIVATE= name changed in one part (MS-MQMQ 2.1.4): the queue's number with its top bit
#: flipped (no queue the case made has it), or a computer GUID no queue manager has
_PRIVATE_CHANGES = {
    "queue number": lambda name, guid: dataclasses.replace(
        name, queue_number=name.queue_number ^ 0x80000000),
    "computer GUID": lambda name, guid: dataclasses.replace(name, guid=guid),
}


@when(parsers.parse("the client calls R_OpenQueue with the queue's PRIVATE= format name and "
                    "another {part}"))
def call_open_private_changed(mq, scenario, part):
    change, guid = _PRIVATE_CHANGES[part], sources.uuid4()
    theirs, ours = _private_names(mq, scenario)
    _open_by_name(mq, scenario, change(theirs, guid), change(ours, guid))


@when(parsers.re(r"the client calls R_OpenQueue with the queue's PRIVATE= format name and "
                 r"m_SuffixAndFlags (?P<saf>0x[0-9A-Fa-f]{2})"))
def call_open_private_suffix(mq, scenario, saf):
    """The queue's PRIVATE= QUEUE_FORMAT with its m_SuffixAndFlags octet (MS-MQMQ 2.2.7: the
    suffix type in the low nibble, the flags in the high one) set to ``saf``."""
    theirs, ours = _private_names(mq, scenario)
    fmt = dataclasses.replace(to_queue_format(theirs), m_SuffixAndFlags=int(saf, 16))
    mq.note_format(fmt, dataclasses.replace(to_queue_format(ours),
                                            m_SuffixAndFlags=int(saf, 16)))
    _open(mq, scenario, fmt)


@when(parsers.re(r"the client calls R_OpenQueue with the queue's PRIVATE= format name and "
                 r"m_reserved (?P<reserved>0x[0-9A-Fa-f]{4})"))
def call_open_private_reserved(mq, scenario, reserved):
    """The queue's PRIVATE= QUEUE_FORMAT with its m_reserved padding (MS-MQMQ 2.2.7: the
    sender SHOULD send 0, the receiver does not use it) set to ``reserved``."""
    theirs, ours = _private_names(mq, scenario)
    fmt = dataclasses.replace(to_queue_format(theirs), m_reserved=int(reserved, 16))
    mq.note_format(fmt, dataclasses.replace(to_queue_format(ours), m_reserved=int(reserved, 16)))
    _open(mq, scenario, fmt)


@when("the client calls R_OpenQueue with the queue's DIRECT=TCP format name")
def call_open_direct_tcp(mq, scenario):
    address = mq.suite.address
    try:
        ipaddress.IPv4Address(address)
    except ValueError:
        raise Inconclusive(f"the target's address {address!r} is not an IPv4 address, "
                           f"which DIRECT=TCP needs") from None
    fmt = to_queue_format(parse_format_name(
        f"DIRECT=TCP:{address}\\{mq.path_of(scenario['queue'])}"))
    _open(mq, scenario, fmt)


# ============================================================================ When: close, cursors

@when("the client calls R_CloseQueue")
def call_close(mq, scenario):
    scenario["result"] = mq.call(c.R_CloseQueue(pphContext=scenario["context"]))


@when("the client calls R_CloseQueue with a NULL handle")
def call_close_null(mq, scenario):
    scenario["result"] = mq.call(c.R_CloseQueue(pphContext=None))


@when("the client calls R_CloseQueue from the connection in another association group")
def call_close_separate(mq, scenario):
    scenario["result"] = mq.call(c.R_CloseQueue(pphContext=scenario["context"]),
                                 target=scenario["separate"])


@when("the client calls R_CloseQueue from the second connection")
def call_close_second(mq, scenario):
    scenario["result"] = mq.call(c.R_CloseQueue(pphContext=scenario["context"]),
                                 target=scenario["second"])


@when(parsers.parse("the client closes all but {kept:d} of those handles"))
def close_all_but(mq, scenario, kept):
    """The latest handles first, each close answered MQ_OK (MS-MQRR/3.1.4.3/R15)."""
    handles = scenario["handles"]
    for ctx in reversed(handles[kept:]):
        mq.call(c.R_CloseQueue(pphContext=ctx), ids=("MS-MQRR/3.1.4.3/R15",))
    scenario["handles"] = handles[:kept]


@when("the client calls R_CreateCursor")
def call_create_cursor(mq, scenario):
    scenario["result"] = out = mq.call(c.R_CreateCursor(phContext=scenario["context"]))
    scenario["cursor"] = scenario["cursors"]["the cursor"] = out.phCursor


@when("the client calls R_CreateCursor again")
def call_create_cursor_again(mq, scenario):
    scenario["result"] = out = mq.call(c.R_CreateCursor(phContext=scenario["context"]))
    scenario["cursors"]["the second cursor"] = out.phCursor


@when("the client calls R_CreateCursor with a NULL handle")
def call_create_cursor_null(mq, scenario):
    scenario["result"] = mq.call(c.R_CreateCursor(phContext=None))


@when("the client calls R_CreateCursor from the second connection")
def call_create_cursor_second(mq, scenario):
    scenario["result"] = out = mq.call(c.R_CreateCursor(phContext=scenario["context"]),
                                       target=scenario["second"])
    scenario["cursor"] = scenario["cursors"]["the cursor"] = out.phCursor


@when("the client calls R_CreateCursor from the connection in another association group")
def call_create_cursor_separate(mq, scenario):
    scenario["result"] = mq.call(c.R_CreateCursor(phContext=scenario["context"]),
                                 target=scenario["separate"])


@when("the client calls R_CloseCursor")
def call_close_cursor(mq, scenario):
    scenario["result"] = mq.call(c.R_CloseCursor(phContext=scenario["context"],
                                                 hCursor=scenario["cursor"]))


@when(parsers.parse("the client calls R_CloseCursor with hCursor {value:w}"))
def call_close_cursor_value(mq, scenario, value):
    scenario["result"] = mq.call(c.R_CloseCursor(phContext=scenario["context"],
                                                 hCursor=_number(value)))


@when("the client calls R_CloseCursor with a NULL handle")
def call_close_cursor_null(mq, scenario):
    scenario["result"] = mq.call(c.R_CloseCursor(phContext=None,
                                                 hCursor=scenario.get("cursor") or 1))


# ============================================================================ When: R_PurgeQueue

@when("the client calls R_PurgeQueue")
def call_purge(mq, scenario):
    scenario["result"] = mq.call(c.R_PurgeQueue(phContext=scenario["context"]))


@when("the client calls R_PurgeQueue with a NULL handle")
def call_purge_null(mq, scenario):
    scenario["result"] = mq.call(c.R_PurgeQueue(phContext=None))


@when("the client calls R_PurgeQueue from the connection in another association group")
def call_purge_separate(mq, scenario):
    scenario["result"] = mq.call(c.R_PurgeQueue(phContext=scenario["context"]),
                                 target=scenario["separate"])


# ============================================================================ When: R_StartReceive

@when(parsers.parse("the client calls R_StartReceive with LookupId {lookup:S}, hCursor "
                    "{cursor:w}, ulAction {action:w} and ulTimeout {timeout:w}"))
def call_receive_table(mq, scenario, lookup, cursor, action, timeout):
    _receive(mq, scenario, _action(action), LookupId=_lookup(scenario, lookup),
             hCursor=_cursor(scenario, cursor), ulTimeout=_number(timeout))


@when(parsers.parse('the client calls R_StartReceive with {action:w} and the LookupId of '
                    '"{body}" as request {request:d}'))
def call_receive_lookup_request(mq, scenario, action, body, request):
    _receive(mq, scenario, _action(action), request, LookupId=_lookup(scenario, body))


@when(parsers.parse('the client calls R_StartReceive with {action:w} and the LookupId of '
                    '"{body}"'))
def call_receive_lookup(mq, scenario, action, body):
    _receive(mq, scenario, _action(action), LookupId=_lookup(scenario, body))


@when(parsers.parse("the client calls R_StartReceive with {action:w} and an unknown LookupId"))
def call_receive_unknown_lookup(mq, scenario, action):
    _receive(mq, scenario, _action(action), LookupId=UNKNOWN_LOOKUP_ID)


@when(parsers.re(r"the client calls R_StartReceive with (?P<action>\w+) on " + CURSOR
                 + r" as request (?P<request>\d+)"))
def call_receive_cursor_request(mq, scenario, action, cursor, request):
    _receive(mq, scenario, _action(action), int(request), hCursor=_cursor(scenario, cursor))


@when(parsers.re(r"the client calls R_StartReceive with (?P<action>\w+) on " + CURSOR))
def call_receive_cursor(mq, scenario, action, cursor):
    _receive(mq, scenario, _action(action), hCursor=_cursor(scenario, cursor))


@when(parsers.parse("the client calls R_StartReceive with {action:w} on hCursor {value:w}"))
def call_receive_cursor_value(mq, scenario, action, value):
    _receive(mq, scenario, _action(action), hCursor=_number(value))


@when(parsers.parse("the client calls R_StartReceive with {action:w} and dwMaxBodySize "
                    "{size:d}"))
def call_receive_max_body(mq, scenario, action, size):
    _receive(mq, scenario, _action(action), dwMaxBodySize=size)


@when(parsers.parse("the client calls R_StartReceive with {action:w}, dwMaxBodySize {size:d} "
                    "and dwMaxCompoundMessageSize {compound:d}"))
def call_receive_max_sizes(mq, scenario, action, size, compound):
    _receive(mq, scenario, _action(action), dwMaxBodySize=size,
             dwMaxCompoundMessageSize=compound)


@when(parsers.parse("the client calls R_StartReceive with {action:w} and ulTimeout {timeout:d}"))
def call_receive_timeout(mq, scenario, action, timeout):
    _receive(mq, scenario, _action(action), ulTimeout=timeout)


@when(parsers.parse("the client calls R_StartReceive with {action:w} as request {request:d}"))
def call_receive_request(mq, scenario, action, request):
    _receive(mq, scenario, _action(action), request)


@when(parsers.parse("the client calls R_StartReceive with {action:w} as request {request:d} "
                    "on the second handle"))
def call_receive_second_handle(mq, scenario, action, request):
    _receive(mq, scenario, _action(action), request, context=scenario["second handle"])


@when(parsers.parse("the client calls R_StartReceive with {action:w} with a NULL handle"))
def call_receive_null(mq, scenario, action):
    _receive(mq, scenario, _action(action), context=None)


@when(parsers.parse("the client calls R_StartReceive with {action:w} from the second "
                    "connection"))
def call_receive_second(mq, scenario, action):
    _receive(mq, scenario, _action(action), target=scenario["second"])


@when(parsers.parse("the client calls R_StartReceive with {action:w} from the connection in "
                    "another association group"))
def call_receive_separate(mq, scenario, action):
    _receive(mq, scenario, _action(action), target=scenario["separate"])


@when(parsers.parse("the client calls R_StartReceive with {action:w}"))
def call_receive(mq, scenario, action):
    _receive(mq, scenario, _action(action))


# ---------------------------------------------------------------------------- calls that wait

def _start(mq, scenario: dict, request: int, action: int, timeout: int, **fields) -> None:
    fields.setdefault("dwMaxBodySize", BIG)
    fields.setdefault("dwMaxCompoundMessageSize", BIG)
    call = c.R_StartReceive(phContext=scenario["context"], ulAction=action, ulTimeout=timeout,
                            dwRequestId=request, **fields)
    scenario["started_at"][request] = time.monotonic()
    scenario["pending"][request] = mq.start(call)


@when(parsers.re(r"the client starts R_StartReceive with (?P<action>\w+) on " + CURSOR
                 + r" and ulTimeout (?P<timeout>\d+) as request (?P<request>\d+)"))
def start_receive_cursor(mq, scenario, action, cursor, timeout, request):
    _start(mq, scenario, int(request), _action(action), int(timeout),
           hCursor=_cursor(scenario, cursor))


@when(parsers.parse("the client starts R_StartReceive with {action:w} and ulTimeout "
                    "{timeout:w} as request {request:d}"))
def start_receive(mq, scenario, action, timeout, request):
    value = c.INFINITE_TIMEOUT if timeout == "INFINITE" else _number(timeout)
    _start(mq, scenario, request, _action(action), value)


@when(parsers.parse('a message "{body}" of priority {priority:d} arrives in the queue'))
def a_message_of_priority_arrives(mq, scenario, body, priority):
    mq.send(scenario["queue"], {"body": body.encode(), "priority": priority})


@when(parsers.parse('a message "{body}" arrives in the queue'))
def a_message_arrives(mq, scenario, body):
    mq.send(scenario["queue"], body.encode())


def _finish(mq, scenario: dict, request: int) -> c.Result:
    pending = scenario["pending"].pop(request)
    scenario["result"] = out = mq.finish_call(pending)
    scenario["received_at"] = sources.now()
    scenario["waited"] = time.monotonic() - scenario["started_at"][request]
    return out


@then(parsers.parse('the started request {request:d} returns the message "{body}"'))
def started_returns_message(mq, scenario, request, body):
    _finish(mq, scenario, request)
    _the_message_is_returned(mq, scenario, body)


@then(parsers.parse("the started request {request:d} returns {status:w}"))
def started_returns_status(mq, scenario, request, status):
    _finish(mq, scenario, request)
    the_call_returns(mq, scenario, status)


@then(parsers.parse("the started request {request:d} is still waiting"))
def started_still_waiting(mq, scenario, request):
    pending = scenario["pending"][request]
    mq.assert_that(not pending.done.is_set(),
                   f"request {request} answered while the documents keep it waiting",
                   ("MS-MQRR/3.1.4.7/R64",))


@then(parsers.parse("it answered no sooner than {ms:d} ms after it started"))
def it_waited(mq, scenario, ms):
    waited = scenario["waited"] * 1000
    mq.assert_that(waited >= ms - 50, f"the call answered after {waited:.0f} ms, before its "
                   f"ulTimeout of {ms} ms", ("MS-MQRR/3.1.2.1/R1",))


# ============================================================================ When: cancel, end

@when(parsers.parse("the client calls R_CancelReceive for request {request:d} from the second "
                    "connection"))
def call_cancel_second(mq, scenario, request):
    scenario["result"] = mq.call(c.R_CancelReceive(phContext=scenario["context"],
                                                   dwRequestId=request),
                                 target=scenario["second"])


@when(parsers.parse("the client calls R_CancelReceive for request {request:d} with a NULL "
                    "handle"))
def call_cancel_null(mq, scenario, request):
    scenario["result"] = mq.call(c.R_CancelReceive(phContext=None, dwRequestId=request))


@when(parsers.parse("the client calls R_CancelReceive for request {request:d}"))
def call_cancel(mq, scenario, request):
    scenario["result"] = mq.call(c.R_CancelReceive(phContext=scenario["context"],
                                                   dwRequestId=request))


@when(parsers.parse("the client calls R_EndReceive with {ack:w} for request {request:d} with a "
                    "NULL handle"))
def call_end_null(mq, scenario, ack, request):
    scenario["result"] = mq.call(c.R_EndReceive(phContext=None, dwAck=ACKS[ack],
                                                dwRequestId=request))


@when(parsers.parse("the client calls R_EndReceive with {ack:w} for request {request:d}"))
def call_end(mq, scenario, ack, request):
    value = ACKS[ack] if ack in ACKS else _number(ack)
    scenario["result"] = mq.call(c.R_EndReceive(phContext=scenario["context"], dwAck=value,
                                                dwRequestId=request))


# ============================================================================ Then: statuses

def _rule(mq) -> tuple[str, ...]:
    """The requirement that decided the answer to the scenario's last call, as the model
    says (its Outcome's rule): what a check of that answer's status enforces."""
    outcome = getattr(mq, "last_outcome", None)
    return tuple(outcome.rule.split()) if outcome is not None and outcome.rule else ()


def _status_of(out: c.Result) -> str:
    return f"status 0x{out.status:08X}{' (raised)' if out.raised else ''}"


@then("the returned port is a nonzero TCP port")
def nonzero_port(mq, scenario):
    out = scenario["result"]
    mq.assert_that(0 < out.status < 0x10000, f"R_GetServerPort returned {out.status:#x}, not a "
                   f"TCP port", "MS-MQRR/3.1.4.1/R6")


@then("the call succeeds")
def the_call_succeeds(mq, scenario):
    out = _result(scenario)
    mq.assert_that(out.status == 0 and not out.raised, f"{_status_of(out)}, not MQ_OK",
                   _rule(mq))


@then("the call fails")
def the_call_fails(mq, scenario):
    out = _result(scenario)
    mq.assert_that(out.raised or is_failure(out.status), f"{_status_of(out)}, not a failure",
                   _rule(mq))


@then("the call returns a failure HRESULT")
def the_call_returns_a_failure(mq, scenario):
    """A failure the method returns, as MS-MQRR 3.1.4 asks of every method that throws no
    exception but the RPC protocol's own: an RPC fault (a server that broke down in the call)
    is not a returned HRESULT."""
    out = _result(scenario)
    mq.assert_that(not out.raised and is_failure(out.status),
                   f"{_status_of(out)}, not a returned failure", _rule(mq))


@then(parsers.parse("the call throws {status:w}"))
def the_call_throws(mq, scenario, status):
    out = _result(scenario)
    mq.assert_that(out.raised and out.status == _status(status),
                   f"{_status_of(out)}, not {status} raised", _rule(mq))


@then(parsers.parse("the call returns {status:w}"))
def the_call_returns(mq, scenario, status):
    """The status the scenario names; where the model marks the answer "any failure" (the
    documents allow any, or their readings disagree: ``mqconform spec errata``), a failure
    named otherwise passes too."""
    out = _result(scenario)
    outcome = getattr(mq, "last_outcome", None)
    loose = (outcome is not None and outcome.any_failure and is_failure(_status(status))
             and is_failure(out.status))
    mq.assert_that((not out.raised and out.status == _status(status)) or loose,
                   f"{_status_of(out)}, not {status}", _rule(mq))


@then("the returned context handle is not NULL")
def context_not_null(mq, scenario):
    ctx = _result(scenario).pphContext
    mq.assert_that(ctx is not None and len(ctx) == c.CONTEXT_HANDLE_SIZE and any(ctx[4:]),
                   f"pphContext {ctx!r} is NULL or not a context handle",
                   "MS-MQRR/3.1.4.2/R19")


@then("the returned context handle is NULL")
def context_null(mq, scenario):
    ctx = _result(scenario).pphContext
    mq.assert_that(ctx is None or not any(ctx), f"R_CloseQueue returned pphContext {ctx!r}, "
                   f"not NULL", "MS-MQRR/3.1.4.3/R5")


@then("the returned cursor handle is nonzero")
def cursor_nonzero(mq, scenario):
    mq.assert_that(_result(scenario).phCursor != 0, "R_CreateCursor returned hCursor 0",
                   _rule(mq))


@then("the two cursor handles differ")
def cursors_differ(mq, scenario):
    handles = list(scenario["cursors"].values())
    mq.assert_that(len(handles) == 2 and handles[0] != handles[1],
                   f"the two R_CreateCursor calls returned {handles}", _rule(mq))


# ============================================================================ Then: messages

def _the_message_is_returned(mq, scenario: dict, body: str) -> None:
    out = _result(scenario)
    mq.assert_that(out.status == 0 and not out.raised, f"{_status_of(out)}, not MQ_OK",
                   _rule(mq))
    mq.assert_that(message_body(out) == body.encode(),
                   f"body {message_body(out)!r}, not {body!r} (MS-MQRR/3.1.4.7/R31)")


@then(parsers.parse('the message "{body}" is returned'))
def the_message_is_returned(mq, scenario, body):
    _the_message_is_returned(mq, scenario, body)


@then("a peek finds no message")
def peek_finds_nothing(mq, scenario):
    result = mq.receive(scenario["context"], c.MQ_ACTION_PEEK_CURRENT)
    mq.assert_that(result.status == MQ_ERROR_IO_TIMEOUT,
                   f"a peek of an empty queue gave {_status_of(result)}, not "
                   f"MQ_ERROR_IO_TIMEOUT", _rule(mq))


@then(parsers.parse('a peek finds the message "{body}"'))
def peek_finds(mq, scenario, body):
    result = mq.receive(scenario["context"], c.MQ_ACTION_PEEK_CURRENT)
    mq.assert_that(message_body(result) == body.encode(),
                   f"a peek found body {message_body(result)!r}, not {body!r} "
                   f"(MS-MQRR/3.1.4.7/R31)")


@then(parsers.parse('a peek through each handle left finds the message "{body}"'))
def peek_through_each(mq, scenario, body):
    for number, ctx in enumerate(scenario["handles"], 1):
        result = mq.receive(ctx, c.MQ_ACTION_PEEK_CURRENT)
        mq.assert_that(message_body(result) == body.encode(),
                       f"a peek through handle {number} of those left found body "
                       f"{message_body(result)!r}, not {body!r} (MS-MQRR/3.1.4.7/R31)")


@then(parsers.re(r'a peek on ' + CURSOR + r' finds the message "(?P<body>[^"]*)"'))
def peek_on_cursor_finds(mq, scenario, cursor, body):
    result = mq.receive(scenario["context"], c.MQ_ACTION_PEEK_CURRENT,
                        hCursor=_cursor(scenario, cursor))
    mq.assert_that(message_body(result) == body.encode(),
                   f"a peek on the cursor found body {message_body(result)!r}, not {body!r} "
                   f"(MS-MQRR/3.1.4.7/R31)")


@then(parsers.parse('the pSequenceId is the one noted for "{body}"'))
def sequence_id_is_noted(mq, scenario, body):
    out = _result(scenario)
    mq.assert_that(out.pSequenceId == scenario["lookup"][body],
                   f"pSequenceId 0x{out.pSequenceId:X}, the message's lookup identifier is "
                   f"0x{scenario['lookup'][body]:X}", ("MS-MQRR/3.1.4.7/R17",))


@then("the pSequenceId fits in 7 bytes and is nonzero")
def sequence_id_7_bytes(mq, scenario):
    out = _result(scenario)
    mq.assert_that(0 < out.pSequenceId < 1 << 56,
                   f"pSequenceId 0x{out.pSequenceId:X} is not the least significant 7 bytes of "
                   f"a lookup identifier", ("MS-MQRR/3.1.4.7/R17",))


@then("the pdwArriveTime is the time the message arrived, in seconds since 1970 UTC")
def arrive_time(mq, scenario):
    out = _result(scenario)
    sent, received = scenario["sent_at"], scenario["received_at"]
    mq.assert_that(int(sent) - 2 <= out.pdwArriveTime <= int(received) + 2,
                   f"pdwArriveTime {out.pdwArriveTime}: the message arrived between "
                   f"{int(sent)} and {int(received)} seconds since 1970",
                   ("MS-MQRR/3.1.4.7/R16", "MS-MQRR/3.1.4.7/R111"))


# ============================================================================ Then: sections

def _sections(scenario: dict) -> tuple[c.SectionBuffer, ...]:
    return tuple(_result(scenario).ppPacketSections)


def _common_section_rules(mq, scenario: dict) -> None:
    out = _result(scenario)
    sections = _sections(scenario)
    mq.assert_that(out.pdwNumberOfSections == len(sections),
                   f"pdwNumberOfSections {out.pdwNumberOfSections}, the array holds "
                   f"{len(sections)}", ("MS-MQRR/3.1.4.7/R18",))
    for i, s in enumerate(sections):
        mq.assert_that(s.pSectionBuffer is not None and s.SectionSize == len(s.pSectionBuffer),
                       f"section {i}: SectionSize {s.SectionSize}, pSectionBuffer holds "
                       f"{len(s.pSectionBuffer or b'')} bytes",
                       ("MS-MQRR/2.2.6/R5", "MS-MQRR/2.2.6/R6", "MS-MQRR/3.1.4.7/R19"))
        mq.assert_that(s.SectionBufferType in c.SECTION_TYPES,
                       f"section {i}: SectionBufferType {s.SectionBufferType} is not a "
                       f"SectionType (2.2.7)", ("MS-MQRR/2.2.6/R1",))


@then("the packet comes back whole in one stFullPacket section")
def one_full_section(mq, scenario):
    _common_section_rules(mq, scenario)
    sections = _sections(scenario)
    mq.assert_that(len(sections) == 1 and sections[0].SectionBufferType == c.stFullPacket,
                   f"sections {[s.SectionBufferType for s in sections]}, not one stFullPacket",
                   ("MS-MQRR/3.1.4.7/R28", "MS-MQRR/3.1.4.7/R29"))
    full = sections[0]
    mq.assert_that(full.SectionSizeAlloc == full.SectionSize,
                   f"stFullPacket: SectionSizeAlloc {full.SectionSizeAlloc} is not SectionSize "
                   f"{full.SectionSize}", ("MS-MQRR/2.2.6/R3", "MS-MQRR/3.1.4.7/R30"))
    body = scenario.get("body")
    if body:
        mq.assert_that(body in full.pSectionBuffer,
                       "the stFullPacket section does not hold the whole message body",
                       ("MS-MQRR/3.1.4.7/R31",))
    _time_to_reach_queue(mq, scenario)


@then(parsers.parse("the packet comes back in a first section with {kept:d} body bytes and a "
                    "second section with the trailers"))
def split_sections(mq, scenario, kept):
    _common_section_rules(mq, scenario)
    sections = _sections(scenario)
    body = scenario["body"]
    mq.assert_that(len(sections) == 2, f"{len(sections)} section(s), not 2 (a message packet "
                   f"with trailers, cut short)", ("MS-MQRR/3.1.4.7/R32", "MS-MQRR/3.1.4.7/R39"))
    first, second = sections
    mq.assert_that(first.SectionBufferType == c.stBinaryFirstSection,
                   f"first SectionBufferType {first.SectionBufferType}, not "
                   f"stBinaryFirstSection",
                   ("MS-MQRR/3.1.4.7/R33", "MS-MQRR/3.1.4.7/R34", "MS-MQRR/2.2.6/R1"))
    mq.assert_that(first.SectionSizeAlloc >= first.SectionSize,
                   f"first section: SectionSizeAlloc {first.SectionSizeAlloc} < SectionSize "
                   f"{first.SectionSize}", ("MS-MQRR/2.2.6/R4",))
    mq.assert_that(first.SectionSizeAlloc - first.SectionSize == len(body) - kept,
                   f"first section: SectionSizeAlloc - SectionSize = "
                   f"{first.SectionSizeAlloc - first.SectionSize}, but {len(body) - kept} body "
                   f"bytes were not transferred", ("MS-MQRR/2.2.6/R2", "MS-MQRR/3.1.4.7/R37"))
    if kept:
        mq.assert_that(first.pSectionBuffer.endswith(body[:kept]),
                       f"the first section does not end with the first {kept} body bytes",
                       ("MS-MQRR/3.1.4.7/R36",))
    else:
        mq.assert_that(body[:8] not in first.pSectionBuffer,
                       "the first section holds body bytes, with dwMaxBodySize 0",
                       ("MS-MQRR/3.1.4.7/R36",))
    mq.assert_that(second.SectionBufferType == c.stBinarySecondSection,
                   f"second SectionBufferType {second.SectionBufferType}, not "
                   f"stBinarySecondSection",
                   ("MS-MQRR/3.1.4.7/R40", "MS-MQRR/3.1.4.7/R41", "MS-MQRR/2.2.6/R1"))
    mq.assert_that(second.SectionSizeAlloc == second.SectionSize,
                   f"second section: SectionSizeAlloc {second.SectionSizeAlloc} is not "
                   f"SectionSize {second.SectionSize}", ("MS-MQRR/2.2.6/R3", "MS-MQRR/3.1.4.7/R44"))
    mq.assert_that(body[kept:kept + 8] not in second.pSectionBuffer,
                   "the second section holds the rest of the body, not only the trailers",
                   ("MS-MQRR/3.1.4.7/R43",))
    _time_to_reach_queue(mq, scenario)


def _time_to_reach_queue(mq, scenario: dict) -> None:
    check_time_to_reach_queue(mq, _sections(scenario)[0].pSectionBuffer)


def check_time_to_reach_queue(mq, first: bytes | None,
                              requirement: str = "MS-MQRR/3.1.4.7/R45") -> None:
    """MS-MQRR 3.1.4.7 R45 (3.1.4.13 R43): in the first section, BaseHeader.TimeToReachQueue
    is UserHeader.SentTime + TimeToReachQueue. The message's own TimeToReachQueue is in the
    model's copy of the message too, so TimeToReachQueue - SentTime must agree with the model's;
    but
    only where the case gave the message its TimeToReachQueue: a message that names none has the
    target's default, which MS-MQDMPR 3.1.1.12 only recommends (spec/choices.yaml)."""
    expected = mq.last_outcome.result if mq.last_outcome is not None else None
    if (expected is None or not getattr(expected, "ppPacketSections", None)
            or time_to_reach_queue(first or b"") is None
            or "time_to_reach_queue" in mq.target_defaults):
        return
    want = expected.ppPacketSections[0].pSectionBuffer or b""

    def original(packet: bytes) -> int:
        ttrq, sent = time_to_reach_queue(packet) or (0, 0)
        return (ttrq - sent) & 0xFFFFFFFF

    mq.assert_that(original(first) == original(want),
                   f"TimeToReachQueue - SentTime is 0x{original(first):08X} in the first "
                   f"section, 0x{original(want):08X} for the model: TimeToReachQueue was not set "
                   f"to SentTime + TimeToReachQueue", (requirement,))


@when("the queue is deleted through SUT control")
def the_queue_is_deleted(mq, scenario):
    """Delete Queue (MS-MQDMPR 3.1.7.1.4) on the target and on the oracle, while the client
    still holds its handle."""
    path = mq.path_of(scenario["queue"])
    mq.sut.delete_queue(path)
    mq.suite.oracle_sut.delete_queue(path)
