"""Steps for MS-MQRR scenarios that use a value with a queue handle other than the one it
belongs to (a cursor, a dwRequestId, a lookup identifier of another queue's message), that
close a handle or a cursor while a receive on it waits, and that read messages whose lookup
identifier is above 2^56. Reuses the state and helpers of remoteread.py and
remoteread_more.py (the feature module imports all three).

Handles are named as the scenarios name them: ``the queue`` and ``the other queue`` (the
client's receive handle on each, opened on first use, as remoteread_more.py opens them) and
``a second handle on the queue`` (another R_OpenQueue of the same queue). Cursors are named by
the handle they were created on.

Where the documents read two ways (spec/errata.yaml cursor-of-another-handle,
close-queue-while-receive-waits, transactional-message-priority), a step accepts the answer of
either reading, holds the case to the one it saw and says which it was.
"""

from __future__ import annotations

import time
from typing import Any

from pytest_bdd import given, parsers, then, when

from mqconform.conformance.session import SEQUENCE_MASK, message_body
from mqconform.conformance.steps.remoteread_more import (
    MAX_BODY,
    _assert,
    _call,
    _handle,
    _next_request,
    _peek_all,
    _place,
    _remember,
    _state,
    _xid,
)
from mqconform.model import calls as c
from mqconform.model import status as st
from mqconform.model.outcome import status_only

SECOND = "a second handle on the queue"
HANDLE = r"(?:the queue|the other queue|a second handle on the queue)"
#: the receive actions a cursor allows (MS-MQRR 3.1.4.7, hCursor)
CURSOR_VERBS = {"peeks": c.MQ_ACTION_PEEK_CURRENT, "peeks next": c.MQ_ACTION_PEEK_NEXT,
                "receives": c.MQ_ACTION_RECEIVE}
#: errata cursor-of-another-handle: what each reading does with another handle's cursor
CURSOR_READINGS = {
    "refused": "MS-MQRR 3.1.4.4 and 3.1.4.5: a cursor belongs to the handle it was created on, "
               "so another handle's cursor is refused",
    "served": "MS-MQRR 3.1.4.7 and 3.1.4.13 read literally: the cursor is found among all the "
              "queue manager's cursors and read on its own queue",
}
#: errata cancel-receive-across-handles (spec/choices.yaml mqrr-cancel-own-handle)
CANCEL_READINGS = {
    "own handle": "MS-MQRR 3.1.4.8's phContext: only a read waiting through the handle the "
                  "cancel names is cancelled",
    "as written": "MS-MQRR 3.1.4.8 with MS-MQDMPR 3.1.7.1.17 as written: the first read "
                  "waiting with that dwRequestId on any handle of the queue is cancelled",
}
#: errata close-queue-while-receive-waits
CLOSE_READINGS = {
    "cancelled": "MS-MQRR 3.1.4.3 with MS-MQDMPR 3.1.7.1.6: Close Queue cancels the waiting "
                 "receive at once with MQ_ERROR_OPERATION_CANCELLED",
    "serialized": "MS-MQRR 2.2.4.2: R_CloseQueue's QUEUE_CONTEXT_HANDLE_SERIALIZE call waits "
                  "until the receive pending on the handle has ended (at its ulTimeout)",
}


def _re(pattern: str) -> parsers.re:
    return parsers.re(pattern.replace("HANDLE", HANDLE))


def _context(mq, sc: dict, name: str) -> bytes:
    """The client's receive handle of that name, opened on first use."""
    sc = _state(sc)
    if name == SECOND:
        if SECOND not in sc["receive"]:
            sc["receive"][SECOND] = mq.open(_place(sc, "the queue"))
        return sc["receive"][SECOND]
    return _handle(mq, sc, name)


def _cursor_of(sc: dict, owner: str) -> int:
    """The cursor the client created on that handle."""
    if owner == "the queue" and "the queue" not in sc.setdefault("cursor_of", {}):
        return sc["cursor"]  # made by remoteread_more.py's "holds a cursor on the queue"
    return sc["cursor_of"][owner]


def _reading(mq, sc: dict, erratum: str, readings: dict[str, str], reading: str,
             requirement: str) -> None:
    """Both readings pass, but one case holds the server to one: the first answer that tells
    them apart fixes it, and the case says which one the server follows."""
    seen = sc.setdefault("readings", {}).setdefault(erratum, reading)
    mq.assert_that(seen == reading, f"the server answered as under {readings[seen]} before, "
                                    f"and as under {readings[reading]} now (errata {erratum})",
                   requirement)
    said = sc.setdefault("readings_said", set())
    if erratum not in said:
        said.add(erratum)
        mq.record.messages.append(f"errata {erratum}: the server follows {readings[reading]}")


# ------------------------------------------------------------------------------ handles

@given(_re(r"the client holds a cursor on (?P<owner>the other queue|a second handle on the "
           r"queue)"))
def holds_cursor_on(mq, scenario, owner):
    sc = _state(scenario)
    out = mq.call(c.R_CreateCursor(phContext=_context(mq, sc, owner)))
    _assert(mq, out.status == 0 and bool(out.phCursor), f"R_CreateCursor on {owner} gave a "
                                                        f"cursor")
    sc.setdefault("cursor_of", {})[owner] = out.phCursor


# ------------------------------------------------------------------------------ 3.1.4.5

@when(_re(r"the client closes the cursor of (?P<owner>HANDLE) with the handle of "
          r"(?P<other>HANDLE)"))
def closes_cursor_with(mq, scenario, owner, other):
    sc = _state(scenario)
    _call(mq, sc, c.R_CloseCursor(phContext=_context(mq, sc, other),
                                  hCursor=_cursor_of(sc, owner)))


@then(_re(r'peeking through the cursor of (?P<owner>HANDLE) returns "(?P<body>[^"]*)"'))
def peeking_through_cursor(mq, scenario, owner, body):
    sc = _state(scenario)
    out = mq.call(c.R_StartReceive(phContext=_context(mq, sc, owner),
                                   hCursor=_cursor_of(sc, owner),
                                   ulAction=c.MQ_ACTION_PEEK_CURRENT, dwMaxBodySize=MAX_BODY,
                                   dwMaxCompoundMessageSize=MAX_BODY))
    _assert(mq, out.status == 0 and message_body(out) == body.encode(),
            f'a peek through the cursor of {owner} returned "{body}" (it returned '
            f"{message_body(out)!r}, status 0x{out.status:08X})")


# ------------------------------------------------------------------------------ 3.1.4.7, 13

def _through_cursor(mq, sc: dict, call: c.Call, owner: str) -> None:
    """Send a receive that names another handle's cursor to the target and to the oracle.
    The oracle refuses it; a target that serves it at that cursor follows the other reading
    of errata cursor-of-another-handle, which the Then step judges (the answer is kept under
    "through_cursor")."""
    observed = mq.target.call(call)
    outcome = mq.oracle.outcome(mq._to_oracle(call, mq.target))
    sc["result"] = sc["last"] = observed
    sc["through_cursor"] = (call, observed, outcome, owner)


@when(_re(r"the client (?P<verb>peeks|peeks next|receives) with the cursor of (?P<owner>HANDLE) "
          r"through the handle of (?P<other>HANDLE)"))
def receives_through_cursor(mq, scenario, verb, owner, other):
    sc = _state(scenario)
    call = c.R_StartReceive(phContext=_context(mq, sc, other), hCursor=_cursor_of(sc, owner),
                            ulAction=CURSOR_VERBS[verb], dwRequestId=_next_request(sc),
                            dwMaxBodySize=MAX_BODY, dwMaxCompoundMessageSize=MAX_BODY)
    _through_cursor(mq, sc, call, owner)


@when(_re(r'the client receives in transaction "(?P<tx>\w+)" with the cursor of '
          r"(?P<owner>HANDLE) through the handle of (?P<other>HANDLE)"))
def receives_in_transaction_through_cursor(mq, scenario, tx, owner, other):
    sc = _state(scenario)
    mq.require("transactions")
    call = c.R_StartTransactionalReceive(
        phContext=_context(mq, sc, other), hCursor=_cursor_of(sc, owner),
        ulAction=c.MQ_ACTION_RECEIVE, dwRequestId=_next_request(sc), dwMaxBodySize=MAX_BODY,
        dwMaxCompoundMessageSize=MAX_BODY, pTransactionId=_xid(sc, tx))
    _through_cursor(mq, sc, call, owner)


@then(_re(r'the call is refused, or served at that cursor with "(?P<body>[^"]*)"'))
def refused_or_served_at_cursor(mq, scenario, body):
    """Errata cursor-of-another-handle. MS-MQRR 3.1.4.7 (R53) and 3.1.4.13 (R67) look hCursor
    up among all the cursors of the queue manager and the MS-MQDMPR cursor events read the
    cursor's own queue; 3.1.4.4 associates a cursor with the handle it was made on and 3.1.4.5
    looks it up among that handle's cursors only. Either the call fails, or it returns the
    message at that cursor in the cursor's own queue: never a message of the handle's queue
    at some position of its own."""
    sc = _state(scenario)
    call, observed, outcome, owner = sc.pop("through_cursor")
    section = "3.1.4.13" if isinstance(call, c.R_StartTransactionalReceive) else "3.1.4.7"
    rule = "MS-MQRR/3.1.4.13/R67" if section == "3.1.4.13" else "MS-MQRR/3.1.4.7/R53"
    if outcome.conforms(observed) or observed.status != 0 or observed.raised:
        mq._learn(call, observed, outcome.result, mq.target)
        mq.check(outcome, observed, ids=(rule,), call=call)
        _reading(mq, sc, "cursor-of-another-handle", CURSOR_READINGS, "refused", rule)
        sc.setdefault("cursor_reading", {})[owner] = "refused"
        return
    got = message_body(observed)
    mq.assert_that(got == body.encode(),
                   f"{type(call).__name__} through the cursor of {owner} returned {got!r}: "
                   f"neither a failure nor \"{body}\", the message at that cursor in its own "
                   f"queue (errata cursor-of-another-handle)", (rule,))
    _reading(mq, sc, "cursor-of-another-handle", CURSOR_READINGS, "served", rule)
    sc.setdefault("cursor_reading", {})[owner] = "served"


@then(_re(r'where it was refused, peeking through the cursor of (?P<owner>HANDLE) returns '
          r'"(?P<body>[^"]*)"'))
def where_refused_cursor_unchanged(mq, scenario, owner, body):
    """A refused call leaves the cursor as it was (MS-MQRR 3.1.4.7: the refusal comes before
    any event on the cursor). Where the server served the call at the cursor, the cursor
    moved or its message is locked: the target's cursor is then no longer the oracle's, and
    the scenario's other checks hold it."""
    sc = _state(scenario)
    if sc.get("cursor_reading", {}).get(owner) == "refused":
        peeking_through_cursor(mq, scenario, owner, body)


# ------------------------------------------------------------------------------ request ids

def _receive_on(mq, sc: dict, name: str, request: int, tx: str | None = None) -> c.Result:
    fields: dict[str, Any] = dict(phContext=_context(mq, sc, name),
                                  ulAction=c.MQ_ACTION_RECEIVE, dwRequestId=request,
                                  dwMaxBodySize=MAX_BODY, dwMaxCompoundMessageSize=MAX_BODY)
    if tx is None:
        call: c.Call = c.R_StartReceive(**fields)
    else:
        mq.require("transactions")
        call = c.R_StartTransactionalReceive(pTransactionId=_xid(sc, tx), **fields)
    out = _call(mq, sc, call)
    _remember(sc, out)
    return out


@given(_re(r'the client has received "(?P<body>[^"]*)" from the other queue as request '
           r'(?P<request>\d+)(?: in transaction "(?P<tx>\w+)")?'))
def has_received_from_other(mq, scenario, body, tx, request):
    out = _receive_on(mq, _state(scenario), "the other queue", int(request), tx)
    _assert(mq, out.status == 0 and message_body(out) == body.encode(),
            f'the receive from the other queue returned "{body}"')


@given(_re(r'the client has received "(?P<body>[^"]*)" through (?P<name>HANDLE) as request '
           r'(?P<request>\d+)'))
def has_received_through(mq, scenario, body, name, request):
    out = _receive_on(mq, _state(scenario), name, int(request))
    _assert(mq, out.status == 0 and message_body(out) == body.encode(),
            f'the receive through {name} returned "{body}"')


@given("another empty queue")
def another_empty_queue(mq, scenario):
    sc = _state(scenario)
    sc["places"]["the other queue"] = mq.queue([])


@when(_re(r"the client starts a receive on (?P<name>HANDLE) with ulTimeout (?P<timeout>\d+) as "
          r"request (?P<request>\d+)"))
def starts_receive_on(mq, scenario, name, timeout, request):
    """An MQ_ACTION_RECEIVE that waits, sent on a connection of its own in the client's
    association group (Case.start); the handle's name keeps it."""
    sc = _state(scenario)
    call = c.R_StartReceive(phContext=_context(mq, sc, name), ulAction=c.MQ_ACTION_RECEIVE,
                            ulTimeout=int(timeout), dwRequestId=int(request),
                            dwMaxBodySize=MAX_BODY, dwMaxCompoundMessageSize=MAX_BODY)
    sc.setdefault("started", {})[name] = mq.start(call)


@when(_re(r'the client starts a receive in transaction "(?P<tx>\w+)" on (?P<name>HANDLE)'
          r"(?P<cursor> through its cursor)? with ulTimeout (?P<timeout>\d+) as request "
          r"(?P<request>\d+)"))
def starts_transactional_receive_on(mq, scenario, tx, name, cursor, timeout, request):
    """An R_StartTransactionalReceive (MQ_ACTION_RECEIVE) that waits, in the scenario's
    transaction ``tx`` (one the client never enlisted is one the server does not know, MS-MQRR
    3.1.4.13), through the handle's cursor if asked, on a connection of its own as ``starts a
    receive on`` does."""
    sc = _state(scenario)
    call = c.R_StartTransactionalReceive(
        phContext=_context(mq, sc, name), ulAction=c.MQ_ACTION_RECEIVE, ulTimeout=int(timeout),
        dwRequestId=int(request), dwMaxBodySize=MAX_BODY, dwMaxCompoundMessageSize=MAX_BODY,
        pTransactionId=_xid(sc, tx), hCursor=_cursor_of(sc, name) if cursor else 0)
    sc.setdefault("started", {})[name] = mq.start(call)


@then(_re(r"the receive started on (?P<name>HANDLE) is still waiting"))
def started_on_still_waiting(mq, scenario, name):
    pending = _state(scenario)["started"][name]
    mq.assert_that(not pending.done.is_set(),
                   f"the receive on {name} answered while the documents keep it waiting",
                   ("MS-MQRR/3.1.4.7/R64",))


def _finish_started(mq, sc: dict, name: str, also=None) -> c.Result:
    pending = sc["started"].pop(name)
    sc["result"] = sc["last"] = out = mq.finish_call(pending, also=also)
    return out


@then(_re(r'the receive started on (?P<name>HANDLE) returns the message "(?P<body>[^"]*)"'))
def started_on_returns_message(mq, scenario, name, body):
    out = _finish_started(mq, _state(scenario), name)
    _assert(mq, out.status == 0 and message_body(out) == body.encode(),
            f'the receive on {name} returned "{body}" (it returned {message_body(out)!r}, '
            f"status 0x{out.status:08X})")


@then(_re(r"the receive started on (?P<name>HANDLE) returns (?P<status>MQ_\w+)"))
def started_on_returns(mq, scenario, name, status):
    out = _finish_started(mq, _state(scenario), name)
    _assert(mq, out.status == getattr(st, status) and not out.raised,
            f"the receive on {name} returned {status} (it returned 0x{out.status:08X})")


@when(_re(r'a message "(?P<body>[^"]*)" arrives in the other queue'))
def arrives_in_other(mq, scenario, body):
    mq.send(_place(_state(scenario), "the other queue"), body.encode())


@when(_re(r"the client cancels request (?P<request>\d+) with the handle of (?P<name>HANDLE)"))
def cancels_with(mq, scenario, request, name):
    sc = _state(scenario)
    _call(mq, sc, c.R_CancelReceive(phContext=_context(mq, sc, name),
                                    dwRequestId=int(request)))


@when(_re(r"the client cancels request (?P<request>\d+) through (?P<name>HANDLE), which has "
          r"no receive waiting with it"))
def cancels_through_other_handle(mq, scenario, request, name):
    """Errata cancel-receive-across-handles. The cancel goes to the target; the oracle answers
    it under the reading the target's answer shows (model/choices.py
    cancel_through_own_handle): a failure is the phContext reading, MQ_OK the text's, which
    cancels the read waiting through another handle of the queue. The Then step judges it."""
    import dataclasses

    sc = _state(scenario)
    call = c.R_CancelReceive(phContext=_context(mq, sc, name), dwRequestId=int(request))
    observed = mq.target.call(call)
    reading = "as written" if observed.status == 0 and not observed.raised else "own handle"
    env = mq.oracle.qm.env
    kept = env.choices
    env.choices = dataclasses.replace(kept, cancel_through_own_handle=reading == "own handle")
    try:
        outcome = mq.oracle.outcome(mq._to_oracle(call, mq.target))
    finally:
        env.choices = kept
    sc["result"] = sc["last"] = observed
    sc["cancel_reading"] = reading
    mq.check(outcome, observed, ids=("MS-MQRR/3.1.4.8/R11", "MS-MQDMPR/3.1.7.1.17/R3"),
             call=call)
    _reading(mq, sc, "cancel-receive-across-handles", CANCEL_READINGS, reading,
             "MS-MQRR/3.1.4.8/R11")


@then(_re(r"where the cancel failed, the receive started on (?P<name>HANDLE) still waits; where "
          r"it returned MQ_OK, that receive returns MQ_ERROR_OPERATION_CANCELLED"))
def cancelled_or_waiting(mq, scenario, name):
    sc = _state(scenario)
    if sc["cancel_reading"] == "own handle":
        started_on_still_waiting(mq, scenario, name)
    else:
        out = _finish_started(mq, sc, name)
        _assert(mq, out.status == st.MQ_ERROR_OPERATION_CANCELLED and not out.raised,
                f"the receive on {name} returned MQ_ERROR_OPERATION_CANCELLED after a cancel "
                f"through another handle returned MQ_OK (it returned 0x{out.status:08X})")


@then(_re(r'where it still waited, the receive started on (?P<name>HANDLE) returns the message '
          r'"(?P<body>[^"]*)"; else a peek finds it'))
def waited_returns_or_peek(mq, scenario, name, body):
    sc = _state(scenario)
    if sc["cancel_reading"] == "own handle":
        started_on_returns_message(mq, scenario, name, body)
    else:
        out = _call(mq, sc, c.R_StartReceive(phContext=_context(mq, sc, name),
                                             ulAction=c.MQ_ACTION_PEEK_CURRENT,
                                             dwMaxBodySize=MAX_BODY,
                                             dwMaxCompoundMessageSize=MAX_BODY))
        _assert(mq, out.status == 0 and message_body(out) == body.encode(),
                f'a peek found "{body}" (it found {message_body(out)!r})')


@when(_re(r"the client ends (?P<kind>request|transactional request) (?P<request>\d+) with "
          r"(?P<ack>RR_ACK|RR_NACK) through the handle of (?P<name>HANDLE)"))
def ends_with(mq, scenario, kind, request, ack, name):
    sc = _state(scenario)
    method = c.R_EndReceive if kind == "request" else c.R_EndTransactionalReceive
    _call(mq, sc, method(phContext=_context(mq, sc, name), dwAck=getattr(c, ack),
                         dwRequestId=int(request)))


# ------------------------------------------------------------------------------ 3.1.4.3

@when(_re(r"the client closes (?P<name>HANDLE)(?: while a receive waits on it)?"))
def closes_while_waiting(mq, scenario, name):
    sc = _state(scenario)
    context = _context(mq, sc, name)
    out = _call(mq, sc, c.R_CloseQueue(pphContext=context))
    sc.setdefault("closed_at", {})[name] = time.monotonic()
    if out.status == 0 and not out.raised:  # later steps open the queue again
        sc["receive"].pop(name, None)
        if name == "the queue":
            sc.pop("context", None)


@then(_re(r"the receive started on (?P<name>HANDLE) returns MQ_ERROR_OPERATION_CANCELLED, or "
          r"MQ_ERROR_IO_TIMEOUT at its ulTimeout where R_CloseQueue waited for it"))
def started_cancelled_or_serialized(mq, scenario, name):
    """Errata close-queue-while-receive-waits. R_CloseQueue generates Close Queue, which
    cancels every waiting read of the descriptor that has a Tag (a receive's dwRequestId) with
    MQ_ERROR_OPERATION_CANCELLED (MS-MQDMPR 3.1.7.1.6); R_CloseQueue's handle is a
    QUEUE_CONTEXT_HANDLE_SERIALIZE, with no more than one call pending on the server (2.2.4.2),
    under which the close waits until the receive has ended by its own ulTimeout. The close
    answers MQ_OK either way; the receive answers MQ_ERROR_OPERATION_CANCELLED before its
    ulTimeout, or MQ_ERROR_IO_TIMEOUT no sooner than its ulTimeout and before the close
    answered."""
    sc = _state(scenario)
    pending = sc["started"][name]
    serialized = status_only(c.R_StartReceiveResult, st.MQ_ERROR_IO_TIMEOUT,
                             "MS-MQRR/3.1.4.3/R11")
    out = _finish_started(mq, sc, name, also=serialized)
    waited = (pending.answered - pending.started) * 1000
    closed = sc.get("closed_at", {}).get(name)
    if out.status == st.MQ_ERROR_OPERATION_CANCELLED:
        mq.assert_that(waited < pending.wait_ms, f"the receive answered "
                       f"MQ_ERROR_OPERATION_CANCELLED after {waited:.0f} ms, its ulTimeout of "
                       f"{pending.wait_ms:.0f} ms having passed", "MS-MQDMPR/3.1.7.1.6/R13")
        _reading(mq, sc, "close-queue-while-receive-waits", CLOSE_READINGS, "cancelled",
                 "MS-MQRR/3.1.4.3/R11")
        return
    mq.assert_that(waited >= pending.wait_ms - 50,
                   f"the receive answered MQ_ERROR_IO_TIMEOUT after {waited:.0f} ms, before "
                   f"its ulTimeout of {pending.wait_ms:.0f} ms", "MS-MQRR/3.1.2.1/R1")
    mq.assert_that(closed is not None and closed >= pending.answered,
                   "the receive timed out after R_CloseQueue had answered: the close neither "
                   "cancelled it (MS-MQDMPR 3.1.7.1.6) nor waited for it (MS-MQRR 2.2.4.2)",
                   "MS-MQRR/3.1.4.3/R11")
    _reading(mq, sc, "close-queue-while-receive-waits", CLOSE_READINGS, "serialized",
             "MS-MQRR/3.1.4.3/R11")


# ------------------------------------------------------------------------------ 2^56

#: errata transactional-message-priority: the high-order byte of a transactional message's
#: LookupIdentifier is 0x07 - Priority (MS-MQDMPR 3.1.7.1.9); its Priority is the one it was
#: sent with (3 here: the ``transactional`` key allows no other), or 0 where the receiver
#: reads it from the PR its packet carries (3.1.7.1.31's table, against 3.1.7.1.32's "the
#: receiver MUST ignore it")
TRANSACTIONAL_HIGH_BYTES = {0x07 - 3: "MS-MQDMPR 3.1.7.1.32: PR ignored, the message keeps "
                                      "Priority 3",
                            0x07 - 0: "MS-MQDMPR 3.1.7.1.31's table: Priority read from PR, "
                                      "which is 0 beside a TransactionHeader"}


@given(_re(r'a transactional queue holding transactional messages "(?P<bodies>[^"]*)"'
           r'(?:, each with a time to be received of (?P<ttbr>\d+) seconds?,)?'))
def queue_of_transactional_messages(mq, scenario, bodies, ttbr=None):
    """A transactional queue whose messages are transactional messages (sent in a transaction:
    MS-MQDMPR 3.1.1.12 TransactionalMessageSequenceIdentifier set), so that Enqueue Message
    gives each a LookupIdentifier whose high-order byte is 0x07 - Priority (3.1.7.1.9): above
    2^56 for a Priority below 7. SUT control must be able to send such a message (the
    ``transactional`` message key); a target whose SUT control cannot is inconclusive."""
    sc = _state(scenario)
    messages = [{"body": part.strip().encode(), "transactional": True}
                for part in bodies.split(",") if part.strip()]
    if ttbr is not None:  # Message.TimeToBeReceived, seconds (SUT control's time_to_be_received)
        for m in messages:
            m["time_to_be_received"] = int(ttbr)
    fmt = mq.queue(messages, transactional=True)
    sc["queue"] = sc["places"]["the queue"] = fmt


def _lookup_peek(ctx: bytes, lookup: int) -> c.R_StartReceive:
    return c.R_StartReceive(phContext=ctx, LookupId=lookup, ulAction=c.MQ_LOOKUP_PEEK_CURRENT,
                            dwMaxBodySize=MAX_BODY, dwMaxCompoundMessageSize=MAX_BODY)


def _high_bytes(answer, call_of, body: bytes) -> list[int]:
    """The high-order bytes h for which a peek by lookup identifier h << 56 | the lower 7 bytes
    returns the message (``answer``: a call's result on one side; ``call_of``: the call for
    h)."""
    found = []
    for high in range(8):
        out = answer(call_of(high))
        if out.status == 0 and not out.raised and message_body(out) == body:
            found.append(high)
    return found


@given("the client has found the whole lookup identifier of each message of the queue")
def found_whole_lookup_identifiers(mq, scenario):
    """Walk a cursor over the queue (R_StartReceive PEEK_CURRENT, then PEEK_NEXT) for each
    message's pSequenceId, the lower 7 bytes of its lookup identifier (MS-MQRR 3.1.4.7); the
    high-order byte is then the one with which MQ_LOOKUP_PEEK_CURRENT finds the message, on
    the target and on the oracle alike (a lookup compares the whole LookupIdentifier: MS-MQDMPR
    3.1.7.3.3). The two whole identifiers are mapped for the calls that follow."""
    sc = _state(scenario)
    ctx = _context(mq, sc, "the queue")
    found = [(message_body(out), out.pSequenceId) for out in _peek_all(mq, ctx)]
    for body, low in found:
        def call_of(high: int, low: int = low) -> c.R_StartReceive:
            return _lookup_peek(ctx, high << 56 | low)
        mine = _high_bytes(mq.target.call, call_of, body)
        mq.assert_that(len(mine) == 1,
                       f"a peek by lookup identifier found {body!r} with the high-order "
                       f"byte(s) {mine} before its pSequenceId 0x{low:X}: a lookup identifier "
                       f"names one message, compared whole", ("MS-MQDMPR/3.1.7.3.3/R4",
                                                                "MS-MQDMPR/3.1.7.3.3/R5"))
        theirs = _high_bytes(lambda call: mq.oracle.outcome(mq._to_oracle(call)).result,
                             call_of, body)
        whole = mine[0] << 56 | low
        if theirs:
            mq.note_lookup(whole, theirs[0] << 56 | (mq._lookups.get(low, low)))
        sc["lookup"][body.decode()] = whole


@then(_re(r'the lookup identifier of "(?P<body>[^"]*)" is above 2\^56, its high-order byte '
          r"0x07 - Priority"))
def lookup_identifier_above(mq, scenario, body):
    """MS-MQDMPR 3.1.7.1.9: the high-order byte of a transactional message's LookupIdentifier
    is 0x07 - Priority (errata transactional-message-priority: the Priority of a
    transactional message is 3 as sent, or 0 as its packet's PR reads)."""
    sc = _state(scenario)
    high = sc["lookup"][body] >> 56
    mq.assert_that(high in TRANSACTIONAL_HIGH_BYTES,
                   f'the lookup identifier of "{body}" is 0x{sc["lookup"][body]:016X}: its '
                   f"high-order byte is not 0x07 - Priority for Priority 3 (0x04) or 0 (0x07)",
                   ("MS-MQDMPR/3.1.7.1.9/R11",))
    _reading(mq, sc, "transactional-message-priority", TRANSACTIONAL_HIGH_BYTES, high,
             "MS-MQDMPR/3.1.7.1.9/R11")


@when(_re(r'the client peeks at "(?P<body>[^"]*)" by its lookup identifier(?P<low> without its '
          r"high-order byte)?"))
def peeks_by_lookup_identifier(mq, scenario, body, low):
    sc = _state(scenario)
    lookup = sc["lookup"][body]
    _call(mq, sc, _lookup_peek(_context(mq, sc, "the queue"),
                               lookup & SEQUENCE_MASK if low else lookup))


@then(_re(r'its pSequenceId is the lower 7 bytes of the lookup identifier of "(?P<body>[^"]*)"'))
def sequence_id_is_lower_seven(mq, scenario, body):
    sc = _state(scenario)
    out = sc["last"]
    rule = ("MS-MQRR/3.1.4.13/R15" if isinstance(out, c.R_StartTransactionalReceiveResult)
            else "MS-MQRR/3.1.4.7/R17")
    lookup = sc["lookup"][body]
    mq.assert_that(out.status == 0 and out.pSequenceId == lookup & SEQUENCE_MASK,
                   f"pSequenceId 0x{out.pSequenceId:X}: the lower 7 bytes of the lookup "
                   f"identifier 0x{lookup:016X} are 0x{lookup & SEQUENCE_MASK:X}", (rule,))
