"""Steps for MS-MQRR 3.1.4.10-3.1.4.15, 3.1.5.1 and 3.1.6 scenarios (move, transactions,
acknowledgement class, cleanup timer, rundown). Reuses the steps of remoteread.py.

Every call goes to the target and to the model oracle (``mq.call``); a result the documents do
not allow fails the step that made it. Places are named as the scenarios name them: ``the
queue``, ``subqueue "retry"``, ``the other queue``, ``subqueue "retry" of the other queue``.
Messages are named by their body; their lookup identifiers are learned from what the target
returns (pSequenceId, MS-MQRR 3.1.4.7), never assumed. The state of one scenario lives in the
``scenario`` fixture of remoteread.py (the feature module imports both step modules):

* ``places``: place -> QueueFormat; ``receive``: place -> receive handle; ``move``: place ->
  (handle, pMoveContext); ``move_map``: the target's pMoveContext -> the oracle's (the Case maps
  them too, as it maps context handles, cursors and lookup identifiers);
* ``lookup`` / ``arrive``: body -> lookup identifier / arrival time, as the target gave them;
* ``tx``: name -> XACTUOW (16 octets); ``request``: the last dwRequestId; ``last``: the last
  call's result on the target.
"""

from __future__ import annotations

import dataclasses
import uuid
from typing import Any

from pytest_bdd import given, parsers, then, when

from mqconform.conformance import preconditions as pre
from mqconform.conformance import sources
from mqconform.conformance import verdicts as v
from mqconform.conformance.session import (
    FOREIGN_MOVE_CONTEXT,
    CaseFailed,
    NotApplicable,
    lookup_id_of,
    message_body,
    status_text,
)
from mqconform.conformance.steps.remoteread import check_time_to_reach_queue
from mqconform.conformance.targets import RpcTarget
from mqconform.model import calls as c
from mqconform.model import status as st
from mqconform.model.formats import parse_format_name, to_queue_format

PLACE = r'(?:the queue|the other queue|subqueue "[^"]+"(?: of the other queue)?)'
#: a propagation token ([MS-DTCO] 2.2.5.4) as far as the model reads one: opaque octets
TOKEN = bytes(range(1, 33))
ZERO_XACTUOW = bytes(c.XACTUOW_SIZE)
MAX_BODY = 1 << 16
#: a lookup identifier no queue of the suite holds (the model's counters and Windows' start
#: low; the high octet is zero, as for every non-transactional message)
UNKNOWN_LOOKUP_ID = 0x00FFFFFFFFFF0F0F
#: a pMoveContext no R_OpenQueueForMove returned
UNKNOWN_MOVE_CONTEXT = 0x0123456789ABCDEF
#: MQMSG_CLASS_NACK_RECEIVE_REJECTED (MS-MQMQ 2.2.18.1.6), the class a client rejects with
NACK_RECEIVE_REJECTED = 0xC004


def _re(pattern: str) -> parsers.re:
    return parsers.re(pattern.replace("PLACE", PLACE))


# ------------------------------------------------------------------------------ helpers

def _state(sc: dict) -> dict:
    for key in ("places", "receive", "move", "move_map", "lookup", "arrive", "tx"):
        sc.setdefault(key, {})
    return sc


def _bodies(text: str) -> list[bytes]:
    return [part.strip().encode() for part in text.split(",") if part.strip()]


def _names(text: str | None) -> tuple[str, ...]:
    return tuple(part.strip() for part in (text or "").split(",") if part.strip())


def _place(sc: dict, place: str) -> Any:
    sc = _state(sc)
    if place == "the queue" and place not in sc["places"] and "queue" in sc:
        sc["places"][place] = sc["queue"]  # made by remoteread.py's queue steps
    if place not in sc["places"]:
        raise KeyError(f"the scenario made no {place}")
    return sc["places"][place]


def _assert(mq, ok: bool, what: str) -> None:
    """A check of the target's result that the documents state directly."""
    checker = getattr(mq, "assert_that", None)
    if checker is not None:
        checker(ok, what)
        return
    mq.checks.append(v.Check(mq.record.ids, bool(ok), what))
    if not ok:
        raise CaseFailed(what)


def _no_null_on_the_wire(mq, what: str) -> None:
    """A NULL [ref] pointer cannot be sent over RPC (C706 14.3.10): such a case can run only
    in process."""
    if isinstance(mq.target, RpcTarget):
        raise NotApplicable(f"{what} is a [ref] pointer: NDR cannot carry it NULL "
                            f"(C706 14.3.10), so only an in-process target can be given one")


def _body(result: c.Result) -> bytes | None:
    return message_body(result)


def _to_oracle(mq, call: c.Call, target: Any) -> c.Call:
    try:
        return mq._to_oracle(call, target)
    except TypeError:  # a Case without association groups
        return mq._to_oracle(call)


def _learn(mq, call: c.Call, observed: c.Result, expected: c.Result, target: Any) -> None:
    try:
        mq._learn(call, observed, expected, target)
    except TypeError:
        mq._learn(call, observed, expected)


def _call(mq, sc: dict, call: c.Call, target: Any = None) -> c.Result:
    """``mq.call``, and for R_OpenQueueForMove and R_MoveMessage the same with the move
    context mapped: the oracle's pMoveContext for the target's (``move_map``)."""
    sc = _state(sc)
    if not isinstance(call, (c.R_OpenQueueForMove, c.R_MoveMessage)):
        out = mq.call(call, target=target) if target is not None else mq.call(call)
        _keep(sc, out)
        return out
    target = target or mq.target
    oracle_call = _to_oracle(mq, call, target)
    if isinstance(call, c.R_MoveMessage) and oracle_call.ullContextTo != FOREIGN_MOVE_CONTEXT:
        oracle_call = dataclasses.replace(
            oracle_call, ullContextTo=sc["move_map"].get(call.ullContextTo, call.ullContextTo))
    observed = target.call(call)
    outcome = mq.oracle.outcome(oracle_call)
    _learn(mq, call, observed, outcome.result, target)
    if isinstance(call, c.R_OpenQueueForMove) and observed.pMoveContext and \
            outcome.result.pMoveContext:
        sc["move_map"][observed.pMoveContext] = outcome.result.pMoveContext
    _keep(sc, observed)
    mq.check(outcome, observed, call=call)
    return observed


def _keep(sc: dict, result: c.Result) -> None:
    """The last result, where remoteread.py's Then steps ("the call returns ...") read it."""
    sc["result"] = sc["last"] = result


def _open_call(fmt: Any, access: int = c.RECEIVE_ACCESS, share: int = c.MQ_DENY_NONE
               ) -> c.R_OpenQueue:
    return c.R_OpenQueue(pQueueFormat=fmt, dwAccess=access, dwShareMode=share,
                         pClientId=uuid.UUID(int=0x4D51), fNonRoutingServer=1)


def _move_open_call(fmt: Any, **fields: Any) -> c.R_OpenQueueForMove:
    fields.setdefault("pClientId", uuid.UUID(int=0x4D51))
    fields.setdefault("fNonRoutingServer", 1)
    return c.R_OpenQueueForMove(pQueueFormat=fmt, **fields)


def _handle(mq, sc: dict, place: str) -> bytes:
    """The client's receive handle on a place, opened on first use."""
    sc = _state(sc)
    if place == "the queue" and place not in sc["receive"] and sc.get("context"):
        sc["receive"][place] = sc["context"]  # opened by remoteread.py's steps
    if place not in sc["receive"]:
        sc["receive"][place] = mq.open(_place(sc, place))
    return sc["receive"][place]


def _move_handle(mq, sc: dict, place: str) -> tuple[bytes, int]:
    """The client's move handle on a place and its pMoveContext, opened on first use."""
    sc = _state(sc)
    if place not in sc["move"]:
        out = _call(mq, sc, _move_open_call(_place(sc, place)))
        _assert(mq, not out.raised and bool(out.pphContext),
                f"R_OpenQueueForMove of {place} gave a handle")
        sc["move"][place] = (out.pphContext, out.pMoveContext)
    return sc["move"][place]


def _peek(mq, ctx: bytes, target: Any = None, **fields: Any) -> c.Result:
    fields.setdefault("ulAction", c.MQ_ACTION_PEEK_CURRENT)
    call = c.R_StartReceive(phContext=ctx, dwMaxBodySize=MAX_BODY,
                            dwMaxCompoundMessageSize=MAX_BODY, **fields)
    return mq.call(call, target=target) if target is not None else mq.call(call)


def _remember(sc: dict, result: c.Result) -> None:
    """Learn the lookup identifier and arrival time of the message a receive returned."""
    body = _body(result) if result.status == 0 and not result.raised else None
    if body is not None:
        _state(sc)["lookup"].setdefault(body.decode(errors="replace"), lookup_id_of(result))
        sc["arrive"].setdefault(body.decode(errors="replace"), result.pdwArriveTime)


def _peek_all(mq, ctx: bytes) -> list[c.Result]:
    """Every message of the handle's queue, peeked through a cursor (R_CreateCursor,
    R_StartReceive PEEK_CURRENT then PEEK_NEXT until one fails, at most 64, R_CloseCursor)."""
    cursor = mq.call(c.R_CreateCursor(phContext=ctx)).phCursor
    action = c.MQ_ACTION_PEEK_CURRENT
    found = []
    for _ in range(64):
        out = mq.call(c.R_StartReceive(phContext=ctx, hCursor=cursor, ulAction=action,
                                       dwMaxBodySize=MAX_BODY,
                                       dwMaxCompoundMessageSize=MAX_BODY))
        if out.status != 0:
            break
        found.append(out)
        action = c.MQ_ACTION_PEEK_NEXT
    mq.call(c.R_CloseCursor(phContext=ctx, hCursor=cursor))
    return found


def _walk(mq, sc: dict, place: str) -> None:
    """Peek at every message of a place through a cursor, learning their lookup identifiers."""
    for out in _peek_all(mq, _handle(mq, sc, place)):
        _remember(sc, out)


def _lookup(mq, sc: dict, place: str, body: str) -> int:
    sc = _state(sc)
    if body not in sc["lookup"]:
        _walk(mq, sc, place)
    if body not in sc["lookup"]:
        raise KeyError(f'no message "{body}" in {place}')
    return sc["lookup"][body]


def _xid(sc: dict, name: str) -> bytes:
    return _state(sc)["tx"].setdefault(name, sources.uuid4().bytes)


def _next_request(sc: dict) -> int:
    sc["request"] = sources.count("request")
    return sc["request"]


# ------------------------------------------------------------------------------ queues

@given(_re(r'(?P<which>a|another) (?P<kind>transactional )?queue holding "(?P<bodies>[^"]*)"'
           r'(?:, each message with the SOAP header "(?P<soap_header>[^"]*)" and the SOAP body '
           r'"(?P<soap_body>[^"]*)",)?'
           r'(?:, each message with a time to be received of (?P<ttbr>\d+) seconds?,)?'
           r'(?: with subqueues "(?P<subs>[^"]*)")?'))
def a_queue_holding(mq, scenario, which, kind, bodies, subs, soap_header=None, soap_body=None,
                    ttbr=None):
    sc = _state(scenario)
    messages: list = [{"body": body} for body in _bodies(bodies)]
    if soap_header is not None:  # SUT control's soap_header and soap_body (conformance/sut.py)
        for m in messages:
            m.update(soap_header=soap_header, soap_body=soap_body)
        scenario["soap"] = (soap_header, soap_body)
    if ttbr is not None:  # Message.TimeToBeReceived, seconds (SUT control's time_to_be_received)
        for m in messages:
            m["time_to_be_received"] = int(ttbr)
    fmt, subqueues = pre.queue_with_subqueues(mq, messages, _names(subs),
                                              transactional=bool(kind))
    name = "the queue" if which == "a" else "the other queue"
    sc["places"][name] = fmt
    if which == "a":
        sc["queue"] = fmt
    for sub, sub_fmt in subqueues.items():
        suffix = "" if which == "a" else " of the other queue"
        sc["places"][f'subqueue "{sub}"{suffix}'] = sub_fmt


@when(_re(r"the client waits (?P<seconds>\d+(?:\.\d+)?) seconds?"))
def the_client_waits(mq, scenario, seconds):
    """Time passes with no call: the target's timers run, and the oracle's clock moves on as
    far."""
    pre.let_time_pass(mq, float(seconds))


@given(_re(r"the client holds a receive handle on (?P<place>PLACE)"))
def holds_receive_handle(mq, scenario, place):
    _handle(mq, scenario, place)


@given(_re(r"the client holds a move handle on (?P<place>PLACE)"))
def holds_move_handle(mq, scenario, place):
    _move_handle(mq, scenario, place)


@given(_re(r"the client knows the lookup identifiers of the messages in (?P<place>PLACE)"))
def knows_lookup_ids(mq, scenario, place):
    _walk(mq, scenario, place)


@given("the client holds a cursor on the queue")
def holds_cursor(mq, scenario):
    ctx = _handle(mq, scenario, "the queue")
    scenario["cursor"] = mq.call(c.R_CreateCursor(phContext=ctx)).phCursor


# ------------------------------------------------------------------------------ 3.1.4.10

def _move(mq, sc, body, src, dst, tx=None, source=None, destination=None):
    lookup = _lookup(mq, sc, src, body)
    ctx = source if source is not None else _handle(mq, sc, src)
    to = destination if destination is not None else _move_handle(mq, sc, dst)[1]
    return _call(mq, sc, c.R_MoveMessage(phContextFrom=ctx, ullContextTo=to, LookupId=lookup,
                                         pTransactionId=_xid(sc, tx) if tx else ZERO_XACTUOW))


@when(_re(r'the client moves "(?P<body>[^"]*)" from (?P<src>PLACE) to (?P<dst>PLACE)'
          r'(?: in transaction "(?P<tx>\w+)")?'))
def moves(mq, scenario, body, src, dst, tx):
    _move(mq, scenario, body, src, dst, tx)


@given(_re(r'the client has moved "(?P<body>[^"]*)" from (?P<src>PLACE) to (?P<dst>PLACE)'
           r'(?: in transaction "(?P<tx>\w+)")?'))
def has_moved(mq, scenario, body, src, dst, tx):
    out = _move(mq, scenario, body, src, dst, tx)
    _assert(mq, out.status == 0 and not out.raised, f'R_MoveMessage moved "{body}"')


@when(_re(r"the client moves an unknown lookup identifier from (?P<src>PLACE) to "
          r"(?P<dst>PLACE)"))
def moves_unknown(mq, scenario, src, dst):
    sc = _state(scenario)
    _call(mq, sc, c.R_MoveMessage(phContextFrom=_handle(mq, sc, src),
                                  ullContextTo=_move_handle(mq, sc, dst)[1],
                                  LookupId=UNKNOWN_LOOKUP_ID, pTransactionId=ZERO_XACTUOW))


@when(_re(r'the client moves "(?P<body>[^"]*)" from (?P<how>a closed|a NULL|a PEEK_ACCESS|an '
          r"R_OpenQueueForMove) handle on (?P<src>PLACE) to (?P<dst>PLACE)"))
def moves_from_bad_handle(mq, scenario, body, how, src, dst):
    """phContextFrom is not an open RECEIVE_ACCESS handle of R_OpenQueue (MS-MQRR 3.1.4.10)."""
    sc = _state(scenario)
    lookup = _lookup(mq, sc, src, body)
    to = _move_handle(mq, sc, dst)[1]
    if how == "a closed":
        source = mq.open(_place(sc, src))
        mq.call(c.R_CloseQueue(pphContext=source))
    elif how == "a PEEK_ACCESS":
        source = mq.open(_place(sc, src), access=c.PEEK_ACCESS)
    elif how == "an R_OpenQueueForMove":
        opened = mq.call(c.R_OpenQueueForMove(pQueueFormat=_place(sc, src),
                                              pClientId=uuid.UUID(int=0x4D51),
                                              fNonRoutingServer=1))
        if opened.raised or not opened.pphContext:
            raise CaseFailed(f"R_OpenQueueForMove gave no context handle ({status_text(opened)})")
        source = opened.pphContext
    else:
        source = None
    _call(mq, sc, c.R_MoveMessage(phContextFrom=source, ullContextTo=to, LookupId=lookup,
                                  pTransactionId=ZERO_XACTUOW))


@when(_re(r'the client moves "(?P<body>[^"]*)" from (?P<src>PLACE) to (?P<dest>a move context '
          r"of zero|a move context the server never returned|the move context of a closed "
          r"move handle on (?P<closed>PLACE))"))
def moves_to_bad_destination(mq, scenario, body, src, dest, closed):
    sc = _state(scenario)
    if closed:
        handle, to = _move_handle(mq, sc, closed)
        mq.call(c.R_CloseQueue(pphContext=handle))
        del sc["move"][closed]
    elif "zero" in dest:
        to = 0
    else:
        to = UNKNOWN_MOVE_CONTEXT
    _move(mq, sc, body, src, None, destination=to)


@when(_re(r'a connection in another association group moves "(?P<body>[^"]*)" from its own '
          r"receive handle on (?P<src>PLACE) to the move context of the client's move handle "
          r"on (?P<place>PLACE)"))
def another_group_moves_to_the_clients_context(mq, scenario, body, src, place):
    """pMoveContext "logically references" the handle R_OpenQueueForMove returned (MS-MQRR
    3.1.4.11), a strict context handle valid in its association group only (2.2.4.2): to
    another group the client's move context names nothing, though that group may receive
    from the source queue itself."""
    sc = _state(scenario)
    lookup = _lookup(mq, sc, src, body)
    to = _move_handle(mq, sc, place)[1]
    other = mq.separate()
    opened = _call(mq, sc, _open_call(_place(sc, src)), target=other)
    _assert(mq, not opened.raised and bool(opened.pphContext),
            f"R_OpenQueue of {src} in another association group gave a handle")
    _call(mq, sc, c.R_MoveMessage(phContextFrom=opened.pphContext, ullContextTo=to,
                                  LookupId=lookup, pTransactionId=ZERO_XACTUOW), target=other)


# ------------------------------------------------------------------------------ 3.1.4.11

ACCESS = {"MQ_MOVE_ACCESS": c.MQ_MOVE_ACCESS, "RECEIVE_ACCESS": c.RECEIVE_ACCESS,
          "PEEK_ACCESS": c.PEEK_ACCESS}
SHARE = {"MQ_DENY_NONE": c.MQ_DENY_NONE, "MQ_DENY_SHARE": c.MQ_DENY_SHARE}


def _number(names: dict[str, int], text: str) -> int:
    return names[text] if text in names else int(text, 0)


def _opened_for_move(sc: dict, place: str, out: c.Result) -> None:
    if not out.raised and out.pphContext:
        sc["move"].setdefault(place, (out.pphContext, out.pMoveContext))
        sc.setdefault("move_contexts", []).append(out.pMoveContext)


@when(_re(r"the client opens (?P<place>PLACE|a queue that does not exist) for move with "
          r"dwAccess (?P<access>\w+) and dwShareMode (?P<share>\w+)"))
def opens_for_move(mq, scenario, place, access, share):
    sc = _state(scenario)
    if place == "a queue that does not exist":
        fmt = to_queue_format(parse_format_name(
            f"DIRECT=OS:{mq.suite.spec.computer_name}\\private$\\mqc-missing-"
            f"{sources.uuid4().hex[:12]}"))
    else:
        fmt = _place(sc, place)
    out = _call(mq, sc, _move_open_call(fmt, dwAccess=_number(ACCESS, access),
                                        dwShareMode=_number(SHARE, share)))
    _opened_for_move(sc, place, out)


@when(_re(r"the client opens (?P<place>PLACE) for move with pClientId (?P<client>GUID_NULL|a "
          r"random GUID|NULL) and fNonRoutingServer (?P<routing>TRUE|FALSE)"))
def opens_for_move_as_client(mq, scenario, place, client, routing):
    sc = _state(scenario)
    if client == "NULL":
        _no_null_on_the_wire(mq, "pClientId")
    client_id = {"GUID_NULL": uuid.UUID(int=0), "NULL": None}.get(client, sources.uuid4())
    out = _call(mq, sc, _move_open_call(_place(sc, place), pClientId=client_id,
                                        fNonRoutingServer=int(routing == "TRUE")))
    _opened_for_move(sc, place, out)


@when(_re(r"the client opens (?P<place>PLACE) for move as version (?P<major>\d+)\.(?P<minor>\d+)"
          r"\.(?P<build>\d+) with fWorkgroup (?P<workgroup>TRUE|FALSE)"))
def opens_for_move_as_version(mq, scenario, place, major, minor, build, workgroup):
    sc = _state(scenario)
    out = _call(mq, sc, _move_open_call(_place(sc, place), Major=int(major), Minor=int(minor),
                                        BuildNumber=int(build),
                                        fWorkgroup=int(workgroup == "TRUE")))
    _opened_for_move(sc, place, out)


@when(_re(r"the client opens (?P<what>a MULTICAST format name|a DL format name|a NULL queue "
          r"format) for move"))
def opens_format_for_move(mq, scenario, what):
    sc = _state(scenario)
    if "NULL" in what:
        _no_null_on_the_wire(mq, "pQueueFormat")
        fmt = None
    elif "MULTICAST" in what:
        fmt = to_queue_format(parse_format_name("MULTICAST=234.1.1.1:8001"))
    else:
        fmt = to_queue_format(parse_format_name(f"DL={sources.uuid4()}"))
    _call(mq, sc, _move_open_call(fmt))


@then("the call returned a context handle and a nonzero move context")
def returned_move_context(mq, scenario):
    out = scenario["last"]
    _assert(mq, not out.raised and out.pphContext is not None
            and len(out.pphContext) == c.CONTEXT_HANDLE_SIZE,
            "R_OpenQueueForMove set pphContext to a context handle")
    _assert(mq, out.pMoveContext != 0, "R_OpenQueueForMove set a nonzero pMoveContext")


@then("the two move handles have different move contexts")
def different_move_contexts(mq, scenario):
    contexts = scenario.get("move_contexts", [])
    _assert(mq, len(contexts) == 2 and contexts[0] != contexts[1],
            f"two R_OpenQueueForMove calls returned different pMoveContext values "
            f"({', '.join(f'0x{x:X}' for x in contexts)})")


# ------------------------------------------------------------------------------ 3.1.4.12

def _enlist(mq, sc: dict, tx: str, token: bytes = TOKEN, size: int | None = None,
            fmt: Any = None, xid: bytes | None = None) -> c.Result:
    mq.require("transactions")
    if fmt is None:
        fmt = sc.get("queue") or _state(sc)["places"].get("the queue")
    if fmt is None:
        fmt = mq.format_of("private$\\mqc-enlist")
    return _call(mq, sc, c.R_QMEnlistRemoteTransaction(
        pTransactionId=_xid(sc, tx) if xid is None else xid,
        cbPropagationToken=len(token) if size is None else size, pbPropagationToken=token,
        pQueueFormat=fmt))


@given(_re(r'the client has enlisted transaction "(?P<tx>\w+)"'))
def has_enlisted(mq, scenario, tx):
    out = _enlist(mq, scenario, tx)
    _assert(mq, out.status == 0, f"R_QMEnlistRemoteTransaction enlisted {tx}")


@when(_re(r'the client enlists transaction "(?P<tx>\w+)" with (?P<token>a propagation token|a '
          r"propagation token of (?P<n>\d+) octets|an empty propagation token|cbPropagationToken"
          r" (?P<delta>one more|one less) than the token|a NULL transaction identifier)"
          r"(?P<missing> naming a queue that does not exist)?"))
def enlists(mq, scenario, tx, token, n, delta, missing):
    sc = _state(scenario)
    fmt = None
    if missing:
        fmt = to_queue_format(parse_format_name(
            f"DIRECT=OS:{mq.suite.spec.computer_name}\\private$\\mqc-missing-"
            f"{sources.uuid4().hex[:12]}"))
    if n:
        _enlist(mq, sc, tx, token=bytes(int(n)), fmt=fmt)
    elif token.startswith("an empty"):
        _enlist(mq, sc, tx, token=b"", fmt=fmt)
    elif delta:
        if isinstance(mq.target, RpcTarget):
            raise NotApplicable("cbPropagationToken is the conformance of pbPropagationToken "
                                "in NDR ([size_is]): a size other than the token's is not "
                                "expressible over RPC")
        _enlist(mq, sc, tx, size=len(TOKEN) + (1 if delta == "one more" else -1), fmt=fmt)
    elif "NULL" in token:
        _no_null_on_the_wire(mq, "pTransactionId")
        _call(mq, sc, c.R_QMEnlistRemoteTransaction(
            pTransactionId=None, cbPropagationToken=len(TOKEN), pbPropagationToken=TOKEN,
            pQueueFormat=fmt or sc.get("queue")))
    else:
        _enlist(mq, sc, tx, fmt=fmt)


@when(_re(r'transaction "(?P<tx>\w+)" is (?P<how>committed|aborted)'))
def transaction_ends(mq, scenario, tx, how):
    pre.end_transaction(mq, _xid(scenario, tx), commit=how == "committed")


# ------------------------------------------------------------------------------ 3.1.4.13

def _tx_receive(mq, sc: dict, tx: str | None, action: int = c.MQ_ACTION_RECEIVE,
                ctx: bytes | None = None, **fields: Any) -> c.Result:
    fields.setdefault("dwMaxBodySize", MAX_BODY)
    fields.setdefault("dwMaxCompoundMessageSize", MAX_BODY)
    call = c.R_StartTransactionalReceive(
        phContext=ctx if ctx is not None else _handle(mq, sc, "the queue"), ulAction=action,
        dwRequestId=_next_request(sc), pTransactionId=_xid(sc, tx) if tx else None, **fields)
    sc.setdefault("transactional_requests", []).append(call.dwRequestId)
    out = _call(mq, sc, call)
    _remember(sc, out)
    return out


@when(_re(r'the client receives in transaction "(?P<tx>\w+)" from (?P<place>the queue|the other '
          r"queue)(?P<via> through the cursor| through a closed cursor| through a closed "
          r"handle)?(?: reading at most (?P<n>\d+) body octets)?(?: with "
          r"dwMaxCompoundMessageSize (?P<compound>\d+))?"))
def receives_in_transaction(mq, scenario, tx, place, via, n, compound):
    sc = _state(scenario)
    fields: dict[str, Any] = {}
    ctx = None if place == "the queue" else _handle(mq, sc, place)
    if n:
        fields["dwMaxBodySize"] = int(n)
    if compound:
        fields["dwMaxCompoundMessageSize"] = int(compound)
    if via == " through the cursor":
        fields["hCursor"] = sc["cursor"]
    elif via == " through a closed cursor":
        handle = _handle(mq, sc, "the queue")
        cursor = mq.call(c.R_CreateCursor(phContext=handle)).phCursor
        mq.call(c.R_CloseCursor(phContext=handle, hCursor=cursor))
        fields["hCursor"] = cursor
    elif via == " through a closed handle":
        ctx = mq.open(_place(sc, "the queue"))
        mq.call(c.R_CloseQueue(pphContext=ctx))
    _tx_receive(mq, sc, tx, ctx=ctx, **fields)


@given(_re(r'the client has received "(?P<body>[^"]*)" in transaction "(?P<tx>\w+)"'
           r"(?: and ended the receive with (?P<ack>RR_ACK|RR_NACK))?"))
def has_received_in_transaction(mq, scenario, body, tx, ack):
    out = _tx_receive(mq, scenario, tx)
    _assert(mq, _body(out) == body.encode(), f'R_StartTransactionalReceive returned "{body}"')
    if ack:
        end = mq.call(c.R_EndTransactionalReceive(
            phContext=_handle(mq, scenario, "the queue"), dwAck=getattr(c, ack),
            dwRequestId=scenario["request"]))
        _assert(mq, end.status == 0, f"R_EndTransactionalReceive with {ack} answered MQ_OK")


@when(_re(r'the client receives in transaction "(?P<tx>\w+)" with (?P<action>MQ_LOOKUP_RECEIVE_'
          r'(?:CURRENT|NEXT|PREV)) at "(?P<body>[^"]*)"'))
def receives_by_lookup_in_transaction(mq, scenario, tx, action, body):
    lookup = _lookup(mq, scenario, "the queue", body)
    _tx_receive(mq, scenario, tx, getattr(c, action), LookupId=lookup)


@when(_re(r'the client peeks in transaction "(?P<tx>\w+)" with (?P<action>MQ_\w+)'))
def peeks_in_transaction(mq, scenario, tx, action):
    sc = _state(scenario)
    value = getattr(c, action)
    fields: dict[str, Any] = {}
    if value == c.MQ_ACTION_PEEK_NEXT:
        ctx = _handle(mq, sc, "the queue")
        fields["hCursor"] = mq.call(c.R_CreateCursor(phContext=ctx)).phCursor
    elif action.startswith("MQ_LOOKUP_"):
        fields["LookupId"] = _first_lookup(mq, sc)
    _tx_receive(mq, sc, tx, value, **fields)


def _first_lookup(mq, sc: dict) -> int:
    """The lookup identifier of a message of the queue (learned by a walk if none is known)."""
    if not _state(sc)["lookup"]:
        _walk(mq, sc, "the queue")
    return next(iter(sc["lookup"].values()))


#: invalid parameter combinations of the ulAction / LookupId / hCursor / ulTimeout table
INVALID = {
    "a LookupId and a timeout": dict(ulAction=c.MQ_LOOKUP_RECEIVE_CURRENT, lookup=True,
                                     ulTimeout=100),
    "a LookupId and MQ_ACTION_RECEIVE": dict(ulAction=c.MQ_ACTION_RECEIVE, lookup=True),
    "a LookupId and a cursor": dict(ulAction=c.MQ_LOOKUP_RECEIVE_CURRENT, lookup=True,
                                    cursor=True),
    "MQ_LOOKUP_RECEIVE_CURRENT and no LookupId": dict(ulAction=c.MQ_LOOKUP_RECEIVE_CURRENT),
    "a cursor and MQ_LOOKUP_RECEIVE_NEXT": dict(ulAction=c.MQ_LOOKUP_RECEIVE_NEXT, cursor=True),
    "MQ_ACTION_PEEK_NEXT and no cursor": dict(ulAction=c.MQ_ACTION_PEEK_NEXT),
    "an unknown action": dict(ulAction=0x12345678),
}


@when(_re(r'the client starts a transactional receive in transaction "(?P<tx>\w+)" with '
          r"(?P<problem>.+)"))
def starts_invalid_transactional_receive(mq, scenario, tx, problem):
    sc = _state(scenario)
    spec = dict(INVALID[problem])
    fields: dict[str, Any] = {}
    if spec.pop("lookup", False):
        fields["LookupId"] = _first_lookup(mq, sc)
    if spec.pop("cursor", False):
        ctx = _handle(mq, sc, "the queue")
        fields["hCursor"] = mq.call(c.R_CreateCursor(phContext=ctx)).phCursor
    action = spec.pop("ulAction")
    fields.update(spec)
    _tx_receive(mq, sc, tx, action, **fields)


@when(_re(r"the client calls R_StartTransactionalReceive without a transaction with "
          r"(?P<action>MQ_ACTION_RECEIVE|MQ_ACTION_PEEK_CURRENT)"))
def starts_receive_without_transaction(mq, scenario, action):
    _no_null_on_the_wire(mq, "pTransactionId")
    _tx_receive(mq, scenario, None, getattr(c, action))


def _time_to_reach_queue(mq, result: c.Result) -> None:
    check_time_to_reach_queue(mq, result.ppPacketSections[0].pSectionBuffer,
                              "MS-MQRR/3.1.4.13/R43")


@then("the message came back whole in one stFullPacket section")
def whole_in_one_section(mq, scenario):
    out = scenario["last"]
    _assert(mq, out.pdwNumberOfSections == len(out.ppPacketSections) == 1,
            f"pdwNumberOfSections {out.pdwNumberOfSections} counts the one section returned")
    section = out.ppPacketSections[0]
    buffer = section.pSectionBuffer or b""
    _assert(mq, section.SectionBufferType == c.stFullPacket,
            f"SectionBufferType {section.SectionBufferType} is stFullPacket")
    _assert(mq, section.SectionSize == section.SectionSizeAlloc == len(buffer),
            f"SectionSize {section.SectionSize} and SectionSizeAlloc {section.SectionSizeAlloc}"
            f" are the packet size {len(buffer)}")
    _time_to_reach_queue(mq, out)


@then(_re(r'the message "(?P<body>[^"]*)" came back cut after (?P<n>\d+) body octets, its '
          r"trailers if any in a second section"))
def cut_in_sections(mq, scenario, body, n):
    out, n, body = scenario["last"], int(n), body.encode()
    sections = out.ppPacketSections
    _assert(mq, out.pdwNumberOfSections == len(sections) and len(sections) in (1, 2),
            f"pdwNumberOfSections {out.pdwNumberOfSections} counts the {len(sections)} "
            f"section(s) returned")
    first = sections[0]
    buffer = first.pSectionBuffer or b""
    _assert(mq, first.SectionBufferType == c.stBinaryFirstSection,
            f"SectionBufferType {first.SectionBufferType} is stBinaryFirstSection")
    _assert(mq, first.SectionSize == len(buffer) and buffer.endswith(body[:n]),
            f"the first section is the headers and the first {n} body octets "
            f"(SectionSize {first.SectionSize}, {len(buffer)} octets)")
    _assert(mq, first.SectionSizeAlloc - first.SectionSize == len(body) - n,
            f"SectionSizeAlloc {first.SectionSizeAlloc} is the headers plus the whole body "
            f"({len(body)} octets)")
    if len(sections) == 2:
        second = sections[1]
        trailers = second.pSectionBuffer or b""
        _assert(mq, second.SectionBufferType == c.stBinarySecondSection,
                f"SectionBufferType {second.SectionBufferType} is stBinarySecondSection")
        _assert(mq, second.SectionSize == second.SectionSizeAlloc == len(trailers) > 0,
                f"SectionSize {second.SectionSize} and SectionSizeAlloc "
                f"{second.SectionSizeAlloc} are the trailers' size {len(trailers)}")
    _time_to_reach_queue(mq, out)


@then(_re(r'its pSequenceId is the lookup identifier of "(?P<body>[^"]*)"'))
def sequence_id_is_lookup(mq, scenario, body):
    out = scenario["last"]
    known = _state(scenario)["lookup"][body]
    _assert(mq, out.pSequenceId == known & 0x00FFFFFFFFFFFFFF,
            f"pSequenceId 0x{out.pSequenceId:X} is the lower 7 octets of the lookup identifier"
            f" 0x{known:X} a peek gave")


@then(_re(r'its pdwArriveTime is the arrival time a peek at "(?P<body>[^"]*)" reported'))
def arrive_time_is_peeks(mq, scenario, body):
    out = scenario["last"]
    known = _state(scenario)["arrive"][body]
    _assert(mq, out.pdwArriveTime == known,
            f"pdwArriveTime {out.pdwArriveTime} is the message's arrival time a peek reported "
            f"({known})")


# ------------------------------------------------------------------------------ 3.1.4.14

@when(_re(r'the client sets the acknowledgement class of (?P<what>"[^"]*"|an unknown lookup '
          r"identifier) to (?P<cls>0x[0-9A-Fa-f]{4})(?P<via> through a closed handle| through "
          r"a NULL handle)?"))
def sets_acknowledgement_class(mq, scenario, what, cls, via):
    sc = _state(scenario)
    lookup = UNKNOWN_LOOKUP_ID if what.startswith("an unknown") \
        else _lookup(mq, sc, "the queue", what.strip('"'))
    ctx = _handle(mq, sc, "the queue")
    if via == " through a closed handle":
        ctx = mq.open(_place(sc, "the queue"))
        mq.call(c.R_CloseQueue(pphContext=ctx))
    elif via == " through a NULL handle":
        ctx = None
    _call(mq, sc, c.R_SetUserAcknowledgementClass(phContext=ctx, LookupId=lookup,
                                                  usClass=int(cls, 16)))


# ------------------------------------------------------------------------------ 3.1.4.15

@when(_re(r"the client ends the transactional receive with (?P<ack>RR_ACK|RR_NACK|dwAck \d+)"))
def ends_transactional_receive(mq, scenario, ack):
    value = getattr(c, ack) if ack.startswith("RR_") else int(ack.split()[1])
    _call(mq, scenario, c.R_EndTransactionalReceive(
        phContext=_handle(mq, scenario, "the queue"), dwAck=value,
        dwRequestId=scenario.get("request", 1)))


@when(_re(r"the client ends the first transactional receive with (?P<ack>RR_ACK|RR_NACK)"))
def ends_first_transactional_receive(mq, scenario, ack):
    _call(mq, scenario, c.R_EndTransactionalReceive(
        phContext=_handle(mq, scenario, "the queue"), dwAck=getattr(c, ack),
        dwRequestId=scenario["transactional_requests"][0]))


@when(_re(r"the client ends the first transactional receive through (?P<how>a closed|a NULL) "
          r"handle"))
def ends_first_transactional_receive_badly(mq, scenario, how):
    ctx = None
    if how == "a closed":
        ctx = mq.open(_place(scenario, "the queue"))
        mq.call(c.R_CloseQueue(pphContext=ctx))
    _call(mq, scenario, c.R_EndTransactionalReceive(
        phContext=ctx, dwAck=c.RR_ACK, dwRequestId=scenario["transactional_requests"][0]))


@when(_re(r"the client ends a transactional receive it never started with RR_ACK"))
def ends_unknown_transactional_receive(mq, scenario):
    _call(mq, scenario, c.R_EndTransactionalReceive(
        phContext=_handle(mq, scenario, "the queue"), dwAck=c.RR_ACK,
        dwRequestId=sources.count("request") + 0x10000))


@when(_re(r"the client receives from the queue"))
def receives_plainly(mq, scenario, place: str = "the queue"):
    sc = _state(scenario)
    out = mq.receive(_handle(mq, sc, place), c.MQ_ACTION_RECEIVE, request=_next_request(sc))
    _keep(sc, out)
    _remember(sc, out)


@when(_re(r"the client's receive from the queue finds no message within (?P<ms>\d+) "
          r"milliseconds"))
def receive_finds_none(mq, scenario, ms):
    sc = _state(scenario)
    out = mq.receive(_handle(mq, sc, "the queue"), c.MQ_ACTION_RECEIVE,
                     request=_next_request(sc), ulTimeout=int(ms))
    _keep(sc, out)
    _assert(mq, out.status != 0, "the receive found no message")


@given(_re(r'the client has received "(?P<body>[^"]*)" from (?P<place>PLACE) and acknowledged '
           r'it'))
@when(_re(r'the client receives "(?P<body>[^"]*)" from (?P<place>PLACE) and acknowledges it'))
def has_received_and_acknowledged(mq, scenario, body, place):
    receives_plainly(mq, scenario, place)
    _assert(mq, _body(scenario["last"]) == body.encode(), f'R_StartReceive returned "{body}"')
    ends_receive(mq, scenario, "RR_ACK", place)
    _assert(mq, scenario["last"].status == 0, "R_EndReceive with RR_ACK answered MQ_OK")


@when(_re(r"the client ends the receive with (?P<ack>RR_ACK|RR_NACK)"))
def ends_receive(mq, scenario, ack, place: str = "the queue"):
    _call(mq, scenario, c.R_EndReceive(phContext=_handle(mq, scenario, place),
                                       dwAck=getattr(c, ack), dwRequestId=scenario["request"]))


# ------------------------------------------------------------------------------ results

def _settled_peek(mq, sc: dict, place: str) -> c.Result:
    ctx = _handle(mq, sc, place)
    probe = sc.pop("probe", None)
    if probe is not None:
        pre.settle(mq, lambda: probe(ctx))
    return _peek(mq, ctx)


@then(_re(r'peeking (?P<place>PLACE) returns "(?P<body>[^"]*)"'))
def peeking_returns(mq, scenario, place, body):
    out = _settled_peek(mq, _state(scenario), place)
    _assert(mq, out.status == 0 and _body(out) == body.encode(),
            f'a peek at {place} returned "{body}" (it returned {_body(out)!r})')


def _queue_property(mq, sc: dict, place: str, name: str) -> int:
    """A numeric queue property of a place (MS-MQMR 3.1.4.1), read with R_QMMgmtGetInfo and
    checked for its status only (the Then steps compare what the documents fix)."""
    from mqconform.conformance.steps.qmmgmt import QUEUE_IDS, _unchecked
    from mqconform.model.formats import MgmtObject, MgmtObjectType

    _handle(mq, sc, place)  # the place opens (R_OpenQueue) before its properties are asked
    value = _unchecked(mq, mq.target, MgmtObject(MgmtObjectType.MGMT_QUEUE, _place(sc, place)),
                       QUEUE_IDS[name])
    # the property's VARTYPE (a number) is its row's (MS-MQMR 3.1.4.1 R7)
    mq.assert_that(isinstance(value, c.PropVariant) and isinstance(value.value, int)
                   and not isinstance(value.value, bool),
                   f"{name} of {place} is {value!r}, not a number", "MS-MQMR/3.1.4.1/R7")
    return value.value


def _bytes_in(mq, sc: dict, place: str) -> int:
    """PROPID_MGMT_QUEUE_BYTES_IN_QUEUE (Queue.TotalBytes): the storage a message takes is the
    implementation's to choose (MS-MQDMPR 3.1.1.2), so only sums of it are compared."""
    return _queue_property(mq, sc, place, "PROPID_MGMT_QUEUE_BYTES_IN_QUEUE")


@then(_re(r"PROPID_MGMT_QUEUE_MESSAGE_COUNT of (?P<place>PLACE) is (?P<n>\d+)"))
def message_count_is(mq, scenario, place, n):
    """The messages of the queue's MessagePositionList that are not Deleted (MS-MQMR 3.1.4.1
    R40): a moved message's position, Deleted in the source, is not counted there."""
    count = _queue_property(mq, _state(scenario), place, "PROPID_MGMT_QUEUE_MESSAGE_COUNT")
    _assert(mq, count == int(n), f"PROPID_MGMT_QUEUE_MESSAGE_COUNT of {place} is {count}, not {n}")


@given(_re(r"the client has read PROPID_MGMT_QUEUE_BYTES_IN_QUEUE of (?P<place>PLACE)"))
def has_read_bytes(mq, scenario, place):
    sc = _state(scenario)
    sc.setdefault("bytes", {})[place] = _bytes_in(mq, sc, place)


@then(_re(r"PROPID_MGMT_QUEUE_BYTES_IN_QUEUE of (?P<src>PLACE) and of (?P<dst>PLACE) add up to "
          r"what (?P=src) held, (?P=dst) holding some"))
def bytes_moved(mq, scenario, src, dst):
    """A move takes a message's storage from one queue's TotalBytes to the other's (MS-MQDMPR
    3.1.1.2: the storage consumed by all the messages in a queue)."""
    sc = _state(scenario)
    before = sc["bytes"][src]
    now_src, now_dst = _bytes_in(mq, sc, src), _bytes_in(mq, sc, dst)
    _assert(mq, now_dst > 0 and now_src + now_dst == before,
            f"PROPID_MGMT_QUEUE_BYTES_IN_QUEUE: {src} held {before}, now {now_src}, and {dst} "
            f"{now_dst}: the moved message's bytes left the one for the other")


@then(_re(r'peeking (?P<place>PLACE) by the lookup identifier of "(?P<body>[^"]*)" returns it'))
def peeking_by_lookup_returns(mq, scenario, place, body):
    """R_StartReceive with MQ_LOOKUP_PEEK_CURRENT and the message's LookupId (learned where it
    was before: a move keeps the Message, so its LookupIdentifier, MS-MQDMPR 3.1.7.1.16)."""
    sc = _state(scenario)
    out = _peek(mq, _handle(mq, sc, place), ulAction=c.MQ_LOOKUP_PEEK_CURRENT,
                LookupId=_lookup(mq, sc, place, body))
    _assert(mq, out.status == 0 and _body(out) == body.encode(),
            f'a peek at {place} by the LookupId of "{body}" returned it (0x{out.status:08X}, '
            f'{_body(out)!r})')


@then(_re(r'peeking (?P<place>PLACE) returns "(?P<body>[^"]*)" once the server has run the '
          r'second client down'))
def peeking_returns_after_rundown(mq, scenario, place, body):
    """As ``peeking PLACE returns``, after giving the server the time to notice the second
    client's departure and run its handles down (preconditions.settle)."""
    _state(scenario)["probe"] = _raw_peek_is(mq, body.encode())
    peeking_returns(mq, scenario, place, body)


@then(_re(r"peeking (?P<place>PLACE) finds no message"))
def peeking_finds_nothing(mq, scenario, place):
    out = _settled_peek(mq, _state(scenario), place)
    _assert(mq, out.status == st.MQ_ERROR_IO_TIMEOUT,
            f"a peek at {place} found no message (0x{out.status:08X})")


# ------------------------------------------------------------------------------ 3.1.5.1

@given("the Pending Request Cleanup Timer of the target is short")
def cleanup_timer_is_short(mq, scenario, request):
    wait, restore = pre.short_cleanup_timer(mq)
    request.addfinalizer(restore)
    scenario["cleanup_wait"] = wait


@when("the Pending Request Cleanup Timer expires")
def cleanup_timer_expires(mq, scenario):
    pre.let_cleanup_timer_expire(mq, scenario["cleanup_wait"])


# ------------------------------------------------------------------------------ 3.1.6

def _raw_peek_is(mq, body: bytes):
    def probe(ctx: bytes) -> bool:
        out = mq.target.call(c.R_StartReceive(
            phContext=ctx, ulAction=c.MQ_ACTION_PEEK_CURRENT, dwMaxBodySize=MAX_BODY,
            dwMaxCompoundMessageSize=MAX_BODY))
        return out.status == 0 and _body(out) == body
    return probe


def _raw_open_works(mq, fmt: Any):
    def probe(_: bytes | None = None) -> bool:
        out = mq.target.call(_open_call(fmt))
        if out.raised or not out.pphContext:
            return False
        mq.target.call(c.R_CloseQueue(pphContext=out.pphContext))
        return True
    return probe


@given(_re(r"a second client holds a receive handle on the queue(?P<deny> with MQ_DENY_SHARE "
           r"and a cursor)?"))
def second_client_holds_handle(mq, scenario, deny):
    sc = _state(scenario)
    client = pre.client_of_its_own(mq)
    fmt = _place(sc, "the queue")
    share = c.MQ_DENY_SHARE if deny else c.MQ_DENY_NONE
    out = mq.call(_open_call(fmt, share=share), target=client.target)
    _assert(mq, not out.raised and bool(out.pphContext), "the second client opened the queue")
    client.holds(out.pphContext)
    sc["second"], sc["second_context"] = client, out.pphContext
    if deny:
        mq.call(c.R_CreateCursor(phContext=out.pphContext), target=client.target)
        sc["second_probe"] = _raw_open_works(mq, fmt)


@given(_re(r'the second client has received "(?P<body>[^"]*)" without ending the receive'))
def second_client_has_received(mq, scenario, body):
    sc = _state(scenario)
    _second_client_receives(mq, sc, sc["second_context"], body, "")
    sc.setdefault("second_probe", _raw_peek_is(mq, body.encode()))


@given(_re(r"the second client holds a receive handle on the other queue with (?P<n>\d+) "
           r"cursors"))
def second_client_holds_other(mq, scenario, n):
    """A second handle of the second client (its first is on the queue), on the other queue,
    with ``n`` cursors (R_CreateCursor): its rundown closes them all (MS-MQRR 3.1.6.2)."""
    sc = _state(scenario)
    client = sc["second"]
    out = mq.call(_open_call(_place(sc, "the other queue")), target=client.target)
    _assert(mq, not out.raised and bool(out.pphContext),
            "the second client opened the other queue")
    client.holds(out.pphContext)
    sc["second_other"] = out.pphContext
    _second_client_cursors(mq, sc, out.pphContext, int(n))


def _second_client_cursors(mq, sc: dict, context: bytes, n: int) -> None:
    """``n`` cursors (R_CreateCursor) on one of the second client's handles."""
    for _ in range(n):
        made = mq.call(c.R_CreateCursor(phContext=context), target=sc["second"].target)
        _assert(mq, made.status == 0 and not made.raised, "the second client made a cursor")


@given(_re(r"the second client has made (?P<n>\d+) cursors on its handle to the queue"))
def second_client_cursors(mq, scenario, n):
    sc = _state(scenario)
    _second_client_cursors(mq, sc, sc["second_context"], int(n))


@given(_re(r'the second client has received "(?P<body>[^"]*)" from the other queue without '
           r'ending the receive'))
def second_client_has_received_other(mq, scenario, body):
    _second_client_receives(mq, _state(scenario), _state(scenario)["second_other"], body,
                            " from the other queue")


def _second_client_receives(mq, sc: dict, context: bytes, body: str, where: str) -> None:
    """An R_StartReceive (MQ_ACTION_RECEIVE) through one of the second client's handles that
    returns ``body`` and is not ended."""
    out = mq.call(c.R_StartReceive(phContext=context, ulAction=c.MQ_ACTION_RECEIVE,
                                   dwRequestId=_next_request(sc), dwMaxBodySize=MAX_BODY,
                                   dwMaxCompoundMessageSize=MAX_BODY), target=sc["second"].target)
    _assert(mq, out.status == 0 and _body(out) == body.encode(),
            f'the second client received "{body}"{where}')


@given(_re(r"the second client's receive has found no message within (?P<ms>\d+) milliseconds"))
def second_client_found_none(mq, scenario, ms):
    """An R_StartReceive (MQ_ACTION_RECEIVE) through the second client's handle on the queue
    that finds no message within its ulTimeout: its request stays in the PendingRequestTable
    (MS-MQRR 3.1.4.7 adds the entry before it reads) with no message."""
    sc = _state(scenario)
    out = mq.call(c.R_StartReceive(phContext=sc["second_context"], ulAction=c.MQ_ACTION_RECEIVE,
                                   ulTimeout=int(ms), dwRequestId=_next_request(sc),
                                   dwMaxBodySize=MAX_BODY, dwMaxCompoundMessageSize=MAX_BODY),
                  target=sc["second"].target)
    _assert(mq, out.status != 0, "the second client's receive found no message")


@given(_re(r'a message "(?P<body>[^"]*)" has arrived in the queue'))
def message_has_arrived(mq, scenario, body):
    mq.send(_place(_state(scenario), "the queue"), body.encode())


@given("the second client has started a receive that waits for a message")
def second_client_waits(mq, scenario):
    """An R_StartReceive (MQ_ACTION_RECEIVE, a minute's ulTimeout) on the second client's own
    connection, left waiting on an empty queue."""
    sc = _state(scenario)
    call = c.R_StartReceive(phContext=sc["second_context"], ulAction=c.MQ_ACTION_RECEIVE,
                            ulTimeout=60_000, dwRequestId=_next_request(sc),
                            dwMaxBodySize=MAX_BODY, dwMaxCompoundMessageSize=MAX_BODY)
    sc["second_waiting"] = mq.start(call, target=sc["second"].target)


@when("the second client's connection fails")
def second_client_drops(mq, scenario):
    sc = _state(scenario)
    sc["second"].drop()
    probe = sc.pop("second_probe", None)
    if probe is not None:
        sc["probe"] = probe


@when("the client opens the queue for receive")
def opens_for_receive(mq, scenario):
    sc = _state(scenario)
    fmt = _place(sc, "the queue")
    probe = sc.pop("probe", None)
    if probe is not None:
        pre.settle(mq, lambda: probe(None))
    out = _call(mq, sc, _open_call(fmt))
    if not out.raised and out.pphContext:
        sc["receive"].setdefault("the queue", out.pphContext)

