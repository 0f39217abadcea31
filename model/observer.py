"""The model as observer: given the calls one server answered (requests *and* responses, as a
capture shows them), decide whether each response is one the documents allow, and whether each
client kept its own obligations.

An oracle knows the state and predicts the answer; an observer does not know the state (what
was in the queues before the capture began, which handles were open, which receives were
pending) and must learn it from what it sees. So every rule here is one a capture can settle:
a violation is reported only when what was seen *proves* the departure; what the capture does
not show is never assumed. Where proof needs the whole history of a handle (every
R_StartReceive on it), the rule runs only for handles whose R_OpenQueue is in the capture and
only while no call of that server was lost (a request without its response, or a stub that
did not decode, makes the server "incomplete" for those rules).

How it is fed: ``Observer(server).feed(observed)`` for each call of one server in order of
request time (across connections and capture files), then ``finish()``. Each call becomes two
events, its request at ``request_time`` and its response at ``response_time``, processed in
time order, so a call that overlaps another (a receive waiting while another connection
acknowledges) is judged by what had happened when it was sent and when it was answered.
``Observed`` rows are built from the captures' calls table; ``observation_fields`` (below)
gives the columns of that table the observer reads, from the typed calls and results.

The rules (``RULES``; requirement, actor, severity, the sentence a violation carries):

Server obligations
  MS-MQRR/3.1.4.9/R7 — a message acknowledged with RR_ACK (R_EndReceive returned MQ_OK) is
      returned again, by a later receive or peek on the same queue: "The server MUST remove
      the message from the queue and make it unavailable for subsequent consumption."
  MS-MQDMPR/3.1.7.3.2/R10 — a receive returns a message another receive holds Locked. Proof
      that the lock was held: its holder's R_EndReceive, sent after this call was answered,
      succeeds (a lock released earlier, by the Pending Request Cleanup Timer or a rundown,
      would have made that R_EndReceive fail). A peek returning such a message is reported
      under MS-MQDMPR/3.1.7.3.2/R11 as a warning: it is allowed when the message's
      AllowPeekWhenLocked is set, which no call shows.
  MS-MQRR/3.1.4.3/R5 — R_CloseQueue returned MQ_OK and a non-NULL pphContext.
  MS-MQRR/3.1.4.2/R19 — R_OpenQueue succeeded without a handle; MS-MQDMPR/3.1.7.1.5/R21 — it
      returned a handle that is still open (one handle, two OpenQueueDescriptors). Proof
      that the first is still open: it was not closed by an R_CloseQueue, and its holder's
      connection is alive after the second was returned (the second open came on it, or
      the holder names the handle in a later call): a handle whose connection ended was run
      down (MS-MQRR 3.1.6.2), so a server restarted, or one that reuses the values of
      handles run down, may return the value again.
  MS-MQRR/3.1.4.6/R14 — R_PurgeQueue returned MQ_OK on a handle opened without
      RECEIVE_ACCESS (3.1.4.2/R27 makes it PeekAccess); or another failure than
      STATUS_ACCESS_DENIED, when the purge came on the connection that opened the handle (so
      no rundown can have closed it and the "not found" failure of 3.1.4.6/R9 cannot apply).
  MS-MQRR/3.1.4.6/R11 — a message a call on a handle returned before a successful
      R_PurgeQueue on that handle is returned again by a call on the handle sent after the
      purge was answered. The Purge Queue event (MS-MQDMPR 3.1.7.1.7) deletes every Available
      MessagePosition and makes every other one PurgePending, which never becomes Available
      again (MS-MQDMPR 3.1.7.1.12/R12, 3.1.4.5/R7 delete it when its lock ends). Only the
      purging handle's own calls are compared: a handle names one queue or subqueue, and the
      calls table does not say whether two handles name the same subqueue. A warning: a
      Move Message (MS-MQDMPR 3.1.7.1.16) may take a message to a subqueue before the purge
      and bring it back after (MS-MQRR 3.1.4.10 moves between a queue and its subqueues both
      ways), and a local application's move is not on the wire; an R_MoveMessage the
      capture shows for the message clears it.
  MS-MQRR/3.1.4.7/R6 — a receive action (MQ_ACTION_RECEIVE, MQ_LOOKUP_RECEIVE_*) returned
      MQ_OK on a handle whose R_OpenQueue (in the capture) asked for PEEK_ACCESS, or on an
      R_OpenQueueForMove handle (MQ_MOVE_ACCESS): "The handle MUST have been opened with a
      dwAccess parameter value that permits the operation specified by the ulAction
      parameter" (3.1.4.2: a PEEK_ACCESS handle is used "with the ulAction parameter set only
      to a Peek action type").
  MS-MQRR/3.1.4.13/R69 — R_StartTransactionalReceive returned MQ_OK for a peek action (it
      MUST return MQ_ERROR_TRANSACTION_USAGE).
  MS-MQRR/3.1.4.7/R17, 3.1.4.13/R15 (pSequenceId) — MQ_LOOKUP_PEEK_CURRENT or
      MQ_LOOKUP_RECEIVE_CURRENT returned MQ_OK with a pSequenceId that is not the low 7 bytes
      of the LookupId asked for (Seek Available Message Position With Id, SeekCurrent, finds
      the position whose LookupIdentifier equals iLookupId: MS-MQDMPR 3.1.7.3.3/R24).
  The return-value rule of each HRESULT method (STATUS_RULES: 3.1.4.3/R7, 3.1.4.4/R7, ...,
      MS-MQMR 3.1.4.1/R10, 3.1.4.2/R4) — a status that is neither MQ_OK nor a failure
      HRESULT (severity bit set, MS-ERREF 2.1): "On success, this method MUST return MQ_OK
      (0x00000000). If an error occurs, the server MUST return a failure HRESULT". S_FALSE,
      an MQ_INFORMATION_* code or any other success code is neither.
  The "if not found, return a failure HRESULT" rule of each method (3.1.4.3/R10, 3.1.4.4/R11,
      3.1.4.5/R13, 3.1.4.6/R9, 3.1.4.7/R52, 3.1.4.8/R10, 3.1.4.9/R15, 3.1.4.10/R16,
      3.1.4.13/R66, 3.1.4.14/R12, 3.1.4.15/R16) — MQ_OK for a handle R_CloseQueue closed
      (and no R_OpenQueue returned again); 3.1.4.7/R53 and 3.1.4.13/R67 for a cursor
      R_CloseCursor closed; 3.1.4.5/R13 for closing a closed cursor.
  MS-MQRR/3.1.4.9/R14, 3.1.4.15/R14 — R_EndReceive (R_EndTransactionalReceive) returned
      MQ_OK for a dwRequestId with no pending receive on the handle (handle fully observed).
  MS-MQRR/3.1.4.1/R6 — R_GetServerPort returned a value that is neither a TCP port nor the
      failure value 0 (3.1.4.1/R7).
  MS-MQMR/3.1.4.1/R7 — R_QMMgmtGetInfo returned MQ_OK with a property value whose VARTYPE is
      neither the property's (2.2.3) nor VT_NULL; MS-MQMR/3.1.4.1/R14 — MQ_OK for
      MGMT_SESSION.
  MS-MQMR/3.1.4.2/R3 — R_QMMgmtAction returned MQ_OK for MGMT_SESSION or for an action that
      is not in the table of 3.1.4.2.

Client obligations
  MS-MQRR/3.1.4.7/R11, 3.1.4.13/R9 — a dwRequestId used again on the same handle before
      R_EndReceive / R_CancelReceive ended the first use (or while the first is in flight).
  MS-MQRR/3.1.4.7/R1, 3.1.4.13/R1 — a receive that returned a message not paired with
      R_EndReceive (R_EndTransactionalReceive) before the client closed the handle.
  MS-MQRR/3.1.4.9/R9, 3.1.4.15/R9 — R_EndReceive for a dwRequestId no receive on the handle
      used (handle fully observed).
  The "handle MUST have been returned ... and MUST NOT have been closed" rule of each method
      (3.1.4.3/R3, 3.1.4.4/R3, 3.1.4.5/R4, 3.1.4.6/R3, 3.1.4.7/R3, 3.1.4.8/R3, 3.1.4.9/R4,
      3.1.4.10/R4, 3.1.4.13/R4, 3.1.4.14/R4, 3.1.4.15/R4), and 3.1.4.5/R7 for cursors — a
      closed handle or cursor used again.
  MS-MQMR 3.2.4's obligations (return values unmodified to the higher layer, ignore
  out-parameters on failure, NDR consistency checks) are about what the client does inside,
  after the response: no capture shows them, so ``NOT_OBSERVABLE`` lists them with that reason.
"""

from __future__ import annotations

import functools
import heapq
from dataclasses import dataclass, field
from typing import Any

from mqconform.model import calls as c
from mqconform.model.formats import MgmtObjectType, QueueSuffixType, from_queue_format
from mqconform.model.mqmr import ACTIONS, MACHINE_PROPERTIES, QUEUE_PROPERTIES, _action_key

# what an answer says about pending requests, locks and handles: the oracle's own predicates
from mqconform.model.mqrr import (
    PEEK_ACTIONS,
    RECEIVE_ACTIONS,
    closes_handle,
    ends_pending_request,
    holds_lock,
    registers_pending_request,
)

MQ_OK = 0

#: requirement -> (actor, severity, what a violation says)
RULES: dict[str, tuple[str, str, str]] = {
    "MS-MQRR/3.1.4.9/R7": ("server", "error",
                           "a message acknowledged with RR_ACK was returned again"),
    "MS-MQDMPR/3.1.7.3.2/R10": ("server", "error",
                                "a receive returned a message another receive held locked"),
    "MS-MQDMPR/3.1.7.3.2/R11": ("server", "warning",
                                "a peek returned a message another receive held locked"),
    "MS-MQRR/3.1.4.3/R5": ("server", "error",
                           "R_CloseQueue returned MQ_OK without setting pphContext to NULL"),
    "MS-MQRR/3.1.4.2/R19": ("server", "error", "R_OpenQueue succeeded without a handle"),
    "MS-MQDMPR/3.1.7.1.5/R21": ("server", "error",
                                "R_OpenQueue returned a handle that is already open"),
    "MS-MQRR/3.1.4.6/R14": ("server", "error",
                            "R_PurgeQueue succeeded on a handle without receive access"),
    "MS-MQRR/3.1.4.9/R14": ("server", "error",
                            "R_EndReceive succeeded for a request that was not pending"),
    "MS-MQRR/3.1.4.15/R14": ("server", "error", "R_EndTransactionalReceive succeeded for a "
                             "request that was not pending"),
    "MS-MQRR/3.1.4.1/R6": ("server", "error",
                           "R_GetServerPort returned a value that is not a TCP port"),
    "MS-MQMR/3.1.4.1/R7": ("server", "error",
                           "R_QMMgmtGetInfo returned a property value of the wrong type"),
    "MS-MQMR/3.1.4.1/R14": ("server", "error", "R_QMMgmtGetInfo succeeded for MGMT_SESSION"),
    "MS-MQMR/3.1.4.2/R3": ("server", "error",
                           "R_QMMgmtAction succeeded for an action or object it must refuse"),
    "MS-MQRR/3.1.4.7/R53": ("server", "error",
                            "R_StartReceive succeeded with a cursor that was closed"),
    "MS-MQRR/3.1.4.13/R67": ("server", "error", "R_StartTransactionalReceive succeeded with "
                             "a cursor that was closed"),
    "MS-MQRR/3.1.4.7/R11": ("client", "error",
                            "a dwRequestId was used again before the first use ended"),
    "MS-MQRR/3.1.4.13/R9": ("client", "error",
                            "a dwRequestId was used again before the first use ended"),
    "MS-MQRR/3.1.4.7/R1": ("client", "error", "a receive was not paired with R_EndReceive"),
    "MS-MQRR/3.1.4.13/R1": ("client", "error", "a transactional receive was not paired with "
                            "R_EndTransactionalReceive"),
    "MS-MQRR/3.1.4.9/R9": ("client", "error",
                           "R_EndReceive named a dwRequestId no receive used"),
    "MS-MQRR/3.1.4.15/R9": ("client", "error",
                            "R_EndTransactionalReceive named a dwRequestId no receive used"),
    "MS-MQRR/3.1.4.5/R7": ("client", "error", "a cursor was used after R_CloseCursor"),
    "MS-MQRR/3.1.4.6/R11": ("server", "warning",
                            "a message was returned again after R_PurgeQueue succeeded"),
    "MS-MQRR/3.1.4.7/R6": ("server", "error", "a receive succeeded on a handle whose "
                           "dwAccess does not permit receiving"),
    "MS-MQRR/3.1.4.13/R69": ("server", "error",
                             "R_StartTransactionalReceive succeeded for a peek action"),
    "MS-MQRR/3.1.4.7/R17": ("server", "error", "a receive by LookupId returned another "
                            "message than the one asked for"),
    "MS-MQRR/3.1.4.13/R15": ("server", "error", "a transactional receive by LookupId "
                             "returned another message than the one asked for"),
}

#: method -> the requirement of its Return Values that a status neither MQ_OK nor a failure
#: HRESULT breaks ("If an error occurs, the server MUST return a failure HRESULT"; the
#: sentence before it, "On success ... MUST return MQ_OK", is the other half of the set)
STATUS_RULES: dict[type[c.Call], tuple[str, str]] = {
    c.R_CloseQueue: ("MS-MQRR/3.1.4.3/R7", "MS-MQRR/3.1.4.3/R6"),
    c.R_CreateCursor: ("MS-MQRR/3.1.4.4/R7", "MS-MQRR/3.1.4.4/R6"),
    c.R_CloseCursor: ("MS-MQRR/3.1.4.5/R9", "MS-MQRR/3.1.4.5/R8"),
    c.R_PurgeQueue: ("MS-MQRR/3.1.4.6/R6", "MS-MQRR/3.1.4.6/R5"),
    c.R_StartReceive: ("MS-MQRR/3.1.4.7/R47", "MS-MQRR/3.1.4.7/R46"),
    c.R_CancelReceive: ("MS-MQRR/3.1.4.8/R7", "MS-MQRR/3.1.4.8/R6"),
    c.R_EndReceive: ("MS-MQRR/3.1.4.9/R11", "MS-MQRR/3.1.4.9/R10"),
    c.R_MoveMessage: ("MS-MQRR/3.1.4.10/R13", "MS-MQRR/3.1.4.10/R12"),
    c.R_QMEnlistRemoteTransaction: ("MS-MQRR/3.1.4.12/R12", "MS-MQRR/3.1.4.12/R11"),
    c.R_StartTransactionalReceive: ("MS-MQRR/3.1.4.13/R45", "MS-MQRR/3.1.4.13/R44"),
    c.R_SetUserAcknowledgementClass: ("MS-MQRR/3.1.4.14/R9", "MS-MQRR/3.1.4.14/R8"),
    c.R_EndTransactionalReceive: ("MS-MQRR/3.1.4.15/R11", "MS-MQRR/3.1.4.15/R10"),
    c.R_QMMgmtGetInfo: ("MS-MQMR/3.1.4.1/R10", "MS-MQMR/3.1.4.1/R9"),
    c.R_QMMgmtAction: ("MS-MQMR/3.1.4.2/R4", "MS-MQMR/3.1.4.2/R2"),
}
for _method, (_rule, _success) in STATUS_RULES.items():
    RULES.setdefault(_rule, ("server", "error", f"{_method.__name__} returned a status that is "
                                                f"neither MQ_OK nor a failure HRESULT"))

#: an HRESULT is a failure when its severity bit is set (MS-ERREF 2.1: S, bit 31); NTSTATUS
#: failures the documents return as HRESULTs (STATUS_ACCESS_DENIED 0xC0000022) have it too
SEVERITY_FAILURE = 0x80000000
STATUS_ACCESS_DENIED = 0xC0000022
#: the actions that read the message a LookupId names (MS-MQRR 3.1.4.7 ulAction table; the
#: Read Message By Lookup Identifier event with SeekCurrent)
LOOKUP_CURRENT = frozenset({c.MQ_LOOKUP_PEEK_CURRENT, c.MQ_LOOKUP_RECEIVE_CURRENT})
#: pSequenceId carries "the least significant 7 bytes" of the LookupIdentifier
SEQUENCE_MASK = (1 << 56) - 1

#: method -> (the server's "if not found, return a failure" rule, the client's "MUST have been
#: returned ... and MUST NOT have been closed" rule) for a handle
CLOSED_HANDLE_RULES: dict[type[c.Call], tuple[str, str]] = {
    c.R_CloseQueue: ("MS-MQRR/3.1.4.3/R10", "MS-MQRR/3.1.4.3/R3"),
    c.R_CreateCursor: ("MS-MQRR/3.1.4.4/R11", "MS-MQRR/3.1.4.4/R3"),
    c.R_CloseCursor: ("MS-MQRR/3.1.4.5/R13", "MS-MQRR/3.1.4.5/R4"),
    c.R_PurgeQueue: ("MS-MQRR/3.1.4.6/R9", "MS-MQRR/3.1.4.6/R3"),
    c.R_StartReceive: ("MS-MQRR/3.1.4.7/R52", "MS-MQRR/3.1.4.7/R3"),
    c.R_CancelReceive: ("MS-MQRR/3.1.4.8/R10", "MS-MQRR/3.1.4.8/R3"),
    c.R_EndReceive: ("MS-MQRR/3.1.4.9/R15", "MS-MQRR/3.1.4.9/R4"),
    c.R_MoveMessage: ("MS-MQRR/3.1.4.10/R16", "MS-MQRR/3.1.4.10/R4"),
    c.R_StartTransactionalReceive: ("MS-MQRR/3.1.4.13/R66", "MS-MQRR/3.1.4.13/R4"),
    c.R_SetUserAcknowledgementClass: ("MS-MQRR/3.1.4.14/R12", "MS-MQRR/3.1.4.14/R4"),
    c.R_EndTransactionalReceive: ("MS-MQRR/3.1.4.15/R16", "MS-MQRR/3.1.4.15/R4"),
}
for _method, (_server_rule, _client_rule) in CLOSED_HANDLE_RULES.items():
    RULES.setdefault(_server_rule, ("server", "error", f"{_method.__name__} succeeded on a "
                                                      f"handle R_CloseQueue closed"))
    RULES.setdefault(_client_rule, ("client", "error",
                                    f"{_method.__name__} used a handle R_CloseQueue closed"))

#: client obligations no capture can show, and why (the report lists them)
NOT_OBSERVABLE: dict[str, str] = {
    "MS-MQMR/3.2.4/R1": "what the client returns to its higher layer is not on the wire",
    "MS-MQMR/3.2.4/R2": "what the client does with an error is not on the wire",
    "MS-MQMR/3.2.4/R3": "whether the client reads out-parameters after a failure is not on "
                        "the wire",
    "MS-MQMR/3.2.4/R4": "the client runtime's NDR consistency check acts on what it "
                        "received; a capture shows only that the octets arrived",
    "MS-MQMR/3.2.4/R5": "the client runtime's rejection of a NULL pointer with nonzero "
                        "conformance is not on the wire",
}

START = (c.R_StartReceive, c.R_StartTransactionalReceive)
END = {c.R_EndReceive: ("MS-MQRR/3.1.4.9/R14", "MS-MQRR/3.1.4.9/R9"),
       c.R_EndTransactionalReceive: ("MS-MQRR/3.1.4.15/R14", "MS-MQRR/3.1.4.15/R9")}
PAIRING = {c.R_StartReceive: "MS-MQRR/3.1.4.7/R1",
           c.R_StartTransactionalReceive: "MS-MQRR/3.1.4.13/R1"}
REUSE = {c.R_StartReceive: "MS-MQRR/3.1.4.7/R11",
         c.R_StartTransactionalReceive: "MS-MQRR/3.1.4.13/R9"}
CURSOR_CLOSED = {c.R_StartReceive: "MS-MQRR/3.1.4.7/R53",
                 c.R_StartTransactionalReceive: "MS-MQRR/3.1.4.13/R67"}


# ------------------------------------------------------------------------------ inputs


@dataclass(slots=True)
class Observed:
    """One call as a capture shows it (the observer's columns of the calls table)."""

    method: str | None
    request_time: float | None
    response_time: float | None
    status: int | None  # None: a fault, or no response
    capture: str = ""
    server: str = ""
    client: str = ""
    connection: int = 0
    call_id: int = 0
    request_frame: int | None = None
    response_frame: int | None = None
    complete: bool = True  # request and response both seen and decoded (a fault counts)
    handle: str | None = None  # the context handle the call names (hex)
    result_handle: str | None = None  # pphContext of R_OpenQueue / R_CloseQueue's response
    queue: str | None = None  # the queue a R_OpenQueue or qmmgmt call names
    access: int | None = None
    action: int | None = None  # ulAction
    action_text: str | None = None  # lpwszAction
    request_id: int | None = None
    lookup_id: int | None = None
    cursor: int | None = None  # hCursor, or phCursor of R_CreateCursor
    ack: int | None = None
    sequence_id: int | None = None
    object_type: int | None = None
    props: tuple[int, ...] | None = None
    vts: tuple[int, ...] | None = None


def queue_key(queue_format: Any) -> str | None:
    """The queue a QUEUE_FORMAT names, as one string: its format name without a subqueue
    (messages of a subqueue are messages of its queue), case folded."""
    try:
        return _queue_key(queue_format)  # QUEUE_FORMATs are frozen: remembered
    except TypeError:  # a value that cannot be hashed
        return _queue_key.__wrapped__(queue_format)


@functools.lru_cache(maxsize=4096)
def _queue_key(queue_format: Any) -> str | None:
    from dataclasses import replace

    if queue_format is None:
        return None
    try:
        name = from_queue_format(queue_format)
        if name.subqueue is not None:
            name = replace(name, subqueue=None,
                           suffix=QueueSuffixType.QUEUE_SUFFIX_TYPE_NONE)
        return str(name).lower()
    except Exception:  # a format the model cannot name: the structure itself
        return repr(queue_format).lower()


def _hex(handle: Any) -> str | None:
    return bytes(handle).hex() if handle else None


#: the observer's columns read straight from a parameter of the request: parameter ->
#: (column, a context handle?); the first of a call's parameters that feeds a column wins.
#: captures/fastpath.py and the compiled decoder read the same parameters at their offsets.
REQUEST_PARAMETERS: dict[str, tuple[str, bool]] = {
    "phContext": ("handle", True), "pphContext": ("handle", True),
    "phContextFrom": ("handle", True), "ulAction": ("action", False),
    "dwRequestId": ("request_id", False), "LookupId": ("lookup_id", False),
    "hCursor": ("cursor", False), "dwAck": ("ack", False),
}
#: the same, from a parameter of the result (the response)
RESULT_PARAMETERS: dict[str, tuple[str, bool]] = {
    "pphContext": ("result_handle", True), "pSequenceId": ("sequence_id", False),
    "phCursor": ("cursor", False),
}


def observation_fields(call: c.Call, result: c.Result | None) -> dict[str, Any]:
    """The observer's columns for one decoded call (and its result, None for a fault or no
    response); absent fields are None."""
    out: dict[str, Any] = {}
    for name, (column, handle) in REQUEST_PARAMETERS.items():
        if column not in out and hasattr(call, name):
            value = getattr(call, name)
            out[column] = _hex(value) if handle else value
    if isinstance(call, (c.R_OpenQueue, c.R_OpenQueueForMove)):
        out["queue"] = queue_key(call.pQueueFormat)
        out["access"] = call.dwAccess
    elif isinstance(call, (c.R_QMMgmtGetInfo, c.R_QMMgmtAction)):
        obj = call.pObjectFormat
        out["object_type"] = getattr(obj, "type", None)
        out["queue"] = queue_key(getattr(obj, "pQueueFormat", None))
        if isinstance(call, c.R_QMMgmtGetInfo):
            out["props"] = tuple(call.aProp)
        else:
            out["action_text"] = call.lpwszAction
    if result is not None:
        for name, (column, handle) in RESULT_PARAMETERS.items():
            if hasattr(result, name):
                value = getattr(result, name)
                out[column] = _hex(value) if handle else value
        if isinstance(result, c.R_QMMgmtGetInfoResult):
            out["vts"] = tuple(v.vt for v in result.apVar)
    return out


# ------------------------------------------------------------------------------ outputs


@dataclass(slots=True)
class Violation:
    requirement: str
    actor: str  # server or client
    severity: str  # error or warning
    capture: str
    server: str
    client: str
    connection: int
    call_id: int
    method: str | None
    request_frame: int | None
    response_frame: int | None
    time: float | None
    explanation: str


# ------------------------------------------------------------------------------ state


@dataclass(slots=True, eq=False)
class _PendingRequestEntry:
    """What a capture shows of one MS-MQRR 3.1.1.2 PendingRequestEntry: the receive that made
    it (its dwRequestId and handle), the LookupIdentifier of the message it holds locked."""

    call: Observed
    lookup_identifier: int | None = None  # set when the receive returned a message (a lock)
    queue: str | None = None
    ended: float | None = None  # request time of the R_EndReceive / R_CancelReceive
    suspects: list = field(default_factory=list)  # (call, queue) returning it while locked
    #: the client paired it (an R_CancelReceive that failed: the entry stays on the server,
    #: locked, but the client's obligations of MS-MQRR/3.1.4.7/R1 and R11 are met)
    paired: bool = False


@dataclass(slots=True)
class _OpenQueueDescriptor:
    """What a capture shows of one MS-MQDMPR 3.1.1.16 OpenQueueDescriptor, by its handle: its
    queue, access, whether it is closed, and the PendingRequestEntry instances keyed on it."""

    queue: str
    access: int | None = None
    opened: bool = False  # its R_OpenQueue is in the capture: every call on it is seen
    closed: bool = False
    inflight: dict = field(default_factory=dict)  # dwRequestId -> Observed (no answer yet)
    #: dwRequestId -> its PendingRequestEntry (message locked)
    pending: dict = field(default_factory=dict)
    #: dwRequestId -> its PendingRequestEntry whose R_EndReceive / R_CancelReceive was sent
    ending: dict = field(default_factory=dict)
    unknown_ends: set = field(default_factory=set)  # (connection, call_id) of ends for none
    #: every receive on the handle not answered yet, by its (connection, call_id): a client
    #: may reuse a dwRequestId while the first is in flight (then ``inflight`` holds the last)
    waiting: dict = field(default_factory=dict)
    #: (connection, call_id) of receives still waiting when an R_CancelReceive or
    #: R_CloseQueue on this handle succeeded: their entries are gone whenever they answer
    cancelled: set = field(default_factory=set)
    #: (connection, call_id) of MQ_ACTION_RECEIVE calls still waiting when an end method
    #: removed their entry: they have one again only if they return a message (the model's
    #: _set_lookup adds it again, as after the Pending Request Cleanup Timer)
    emptied: set = field(default_factory=set)
    closed_cursors: set = field(default_factory=set)
    #: (capture, connection) of its R_OpenQueue: while that connection lives, no rundown
    #: (MS-MQRR 3.1.6.2) can have closed the handle
    opened_on: tuple | None = None
    opened_by: str | None = None  # the client endpoint of its R_OpenQueue
    #: LookupIdentifier (low 7 bytes) -> response time of the last call on the handle that
    #: returned the message
    seen: dict = field(default_factory=dict)
    #: LookupIdentifier -> the R_PurgeQueue on this handle that succeeded after it was seen
    purged: dict = field(default_factory=dict)


@dataclass(slots=True)
class _Queue:
    acked: dict = field(default_factory=dict)  # lookup -> (time removed, the R_EndReceive)
    #: LookupIdentifier -> the PendingRequestEntry instances that say they hold it locked
    locks: dict = field(default_factory=dict)


class Observer:
    """The observer of one server (its address; see the module doc)."""

    def __init__(self, server: str = "") -> None:
        self.server = server
        self.handles: dict[str, _OpenQueueDescriptor] = {}
        self.queues: dict[str, _Queue] = {}
        self.incomplete = False
        self.violations: list[Violation] = []
        self.calls = 0
        self._events: list = []
        self._seq = 0
        self._flagged: set[tuple] = set()
        #: handle -> (the R_OpenQueue that returned it again, the descriptor it was open
        #: for): MS-MQDMPR/3.1.7.1.5/R21 once that descriptor's holder shows it alive
        self._reissued: dict[str, tuple[Observed, _OpenQueueDescriptor]] = {}

    # ------------------------------------------------------------------ feeding
    def feed(self, call: Observed) -> list[Violation]:
        """One call, in order of request time; returns the violations found so far that were
        not returned before (events up to this call's request)."""
        before = len(self.violations)
        self.calls += 1
        t = call.request_time if call.request_time is not None else call.response_time
        self._drain(t)
        if not call.complete:
            self.incomplete = True
        if call.request_time is not None:
            self._request(call)
            if call.response_time is not None:
                self._push(call.response_time, call)
        elif call.response_time is not None:  # an answer whose request was not captured
            self.incomplete = True
        return self.violations[before:]

    def finish(self) -> list[Violation]:
        before = len(self.violations)
        self._drain(None)
        return self.violations[before:]

    def _push(self, t: float, call: Observed) -> None:
        self._seq += 1
        heapq.heappush(self._events, (t, self._seq, call))

    def _drain(self, until: float | None) -> None:
        while self._events and (until is None or self._events[0][0] <= until):
            _, _, call = heapq.heappop(self._events)
            self._response(call)

    def _flag(self, requirement: str, call: Observed, detail: str) -> None:
        key = (requirement, call.capture, call.connection, call.call_id, call.request_frame)
        if key in self._flagged:  # one call, one violation of a rule
            return
        self._flagged.add(key)
        actor, severity, sentence = RULES[requirement]
        self.violations.append(Violation(
            requirement=requirement, actor=actor, severity=severity, capture=call.capture,
            server=call.server or self.server, client=call.client,
            connection=call.connection, call_id=call.call_id, method=call.method,
            request_frame=call.request_frame, response_frame=call.response_frame,
            time=call.request_time, explanation=f"{sentence}: {detail}"))

    def _handle(self, key: str) -> _OpenQueueDescriptor:
        h = self.handles.get(key)
        if h is None:  # learned: a handle opened before the capture began
            h = self.handles[key] = _OpenQueueDescriptor(queue=f"handle:{key}")
        return h

    def _queue(self, key: str) -> _Queue:
        q = self.queues.get(key)
        if q is None:
            q = self.queues[key] = _Queue()
        return q

    # ------------------------------------------------------------------ requests
    def _request(self, call: Observed) -> None:
        kind = c.BY_NAME.get(call.method)
        if call.handle is None or kind in (c.R_OpenQueue, c.R_OpenQueueForMove):
            return
        reissued = self._reissued.get(call.handle)
        if reissued is not None and call.client == reissued[1].opened_by and (
                call.request_time is not None and reissued[0].response_time is not None
                and call.request_time > reissued[0].response_time):
            del self._reissued[call.handle]
            self._reissued_open(reissued[0], reissued[1], call)
        h = self._handle(call.handle)
        if h.closed and kind in CLOSED_HANDLE_RULES:
            self._flag(CLOSED_HANDLE_RULES[kind][1], call,
                       f"handle {call.handle} was closed by an earlier R_CloseQueue")
        handler = _ON_REQUEST.get(kind)
        if handler is not None:
            handler(self, call, kind, h)

    def _start_request(self, call: Observed, kind: type, h: _OpenQueueDescriptor) -> None:
        rid = call.request_id
        pending = h.pending.get(rid)
        earlier = h.inflight.get(rid) or (pending if pending and not pending.paired else None) \
            or h.ending.get(rid)
        if earlier is not None and not self.incomplete:
            first = earlier if isinstance(earlier, Observed) else earlier.call
            self._flag(REUSE[kind], call, f"dwRequestId {rid} is still in use by call_id "
                                          f"{first.call_id} (frame {first.request_frame})")
        if call.cursor and call.cursor in h.closed_cursors:
            self._flag("MS-MQRR/3.1.4.5/R7", call,
                       f"hCursor {call.cursor} was closed by an earlier R_CloseCursor")
        h.inflight[rid] = call
        h.waiting[(call.connection, call.call_id)] = call

    def _end_request(self, call: Observed, kind: type, h: _OpenQueueDescriptor) -> None:
        """R_EndReceive, R_EndTransactionalReceive and R_CancelReceive: the pending request
        they name is ending (until their answer says whether it ended)."""
        rid = call.request_id
        pending = h.pending.pop(rid, None)
        if pending is not None:
            pending.ended = call.request_time
            h.ending[rid] = pending
        elif (kind in END and rid not in h.inflight and rid not in h.ending and h.opened
              and not self.incomplete):
            self._flag(END[kind][1], call, f"no receive on this handle used dwRequestId {rid}")
            h.unknown_ends.add((call.connection, call.call_id))

    def _close_request(self, call: Observed, kind: type, h: _OpenQueueDescriptor) -> None:
        if self.incomplete:
            return
        for rid, pending in h.pending.items():
            if pending.paired:
                continue
            self._flag(PAIRING[c.BY_NAME[pending.call.method]], pending.call,
                       f"dwRequestId {rid} returned message {pending.lookup_identifier} and the "
                       f"handle was closed (call_id {call.call_id}, frame "
                       f"{call.request_frame}) without R_EndReceive or R_CancelReceive")

    def _close_cursor_request(self, call: Observed, kind: type, h: _OpenQueueDescriptor) -> None:
        if call.cursor in h.closed_cursors:
            self._flag("MS-MQRR/3.1.4.5/R7", call,
                       f"hCursor {call.cursor} was closed by an earlier R_CloseCursor")

    # ------------------------------------------------------------------ responses
    def _response(self, call: Observed) -> None:
        kind = c.BY_NAME.get(call.method)
        ok = call.status == MQ_OK
        if kind is c.R_GetServerPort:
            if call.status is not None and call.status != 0 and call.status > 0xFFFF:
                self._flag("MS-MQRR/3.1.4.1/R6", call, f"returned 0x{call.status:08X}")
            return
        if kind in (c.R_OpenQueue, c.R_OpenQueueForMove):
            if ok:
                self._opened(call)
            return
        if (kind in STATUS_RULES and call.status is not None and call.status != MQ_OK
                and not call.status & SEVERITY_FAILURE):
            self._flag(STATUS_RULES[kind][0], call, f"returned 0x{call.status:08X}")
        if kind in (c.R_QMMgmtGetInfo, c.R_QMMgmtAction):
            if ok:
                self._qmmgmt(call)
            return
        if call.handle is None:
            return
        h = self._handle(call.handle)
        if kind in CLOSED_HANDLE_RULES and h.closed and ok:
            self._flag(CLOSED_HANDLE_RULES[kind][0], call,
                       f"handle {call.handle} was closed by an earlier R_CloseQueue")
        handler = _ON_RESPONSE.get(kind)
        if handler is not None:
            handler(self, call, kind, h, ok)

    def _cancelled(self, call: Observed, kind: type, h: _OpenQueueDescriptor, ok: bool) -> None:
        """MS-MQRR 3.1.4.8: a cancel that succeeded removed the PendingRequestEntry keyed on its
        handle and dwRequestId (R15), also the one of a receive still waiting when the cancel
        was sent, whether that receive's answer comes before the cancel's or after; one that
        failed (R14: no waiting read with that dwRequestId) left it in the table, locked, for
        a later R_EndReceive to end."""
        rid = call.request_id
        ending = h.ending.pop(rid, None)
        if not ends_pending_request(kind, call.status):
            if ending is not None:
                ending.ended = None
                ending.paired = True
                h.pending[rid] = ending
            return
        if ending is not None:
            self._unlock(ending)
        h.inflight.pop(rid, None)
        for key, receive in h.waiting.items():  # their answers are still to come
            if receive.request_id == rid:
                h.cancelled.add(key)
        entry = h.pending.get(rid)
        if entry is not None and entry.call.request_time < call.request_time:
            del h.pending[rid]  # it answered while the cancel was on its way
            self._unlock(entry)

    def _ended_while_waiting(self, call: Observed, h: _OpenQueueDescriptor) -> None:
        for key, receive in h.waiting.items():
            if (receive.request_id == call.request_id and receive.action == c.MQ_ACTION_RECEIVE
                    and receive.request_time < call.request_time):
                h.emptied.add(key)

    def _closed(self, call: Observed, kind: type, h: _OpenQueueDescriptor, ok: bool) -> None:
        if not closes_handle(kind, call.status):
            return
        if call.result_handle is not None:
            self._flag("MS-MQRR/3.1.4.3/R5", call,
                       f"pphContext came back as {call.result_handle}")
        h.closed = True
        for receive in (*h.pending.values(), *h.ending.values()):
            self._unlock(receive)
        h.pending.clear()
        h.ending.clear()
        h.cancelled.update(h.waiting)  # their entries went with the handle (3.1.4.3/R13)
        h.inflight.clear()

    def _cursor_created(self, call: Observed, kind: type,
                        h: _OpenQueueDescriptor, ok: bool) -> None:
        if ok and call.cursor is not None:
            h.closed_cursors.discard(call.cursor)

    def _cursor_closed(self, call: Observed, kind: type, h: _OpenQueueDescriptor, ok: bool) -> None:
        if ok and call.cursor is not None:
            if call.cursor in h.closed_cursors and not h.closed:
                self._flag("MS-MQRR/3.1.4.5/R13", call,
                           f"hCursor {call.cursor} was already closed")
            h.closed_cursors.add(call.cursor)

    def _purged(self, call: Observed, kind: type, h: _OpenQueueDescriptor, ok: bool) -> None:
        if h.access is not None and h.access != c.RECEIVE_ACCESS and not h.closed:
            # found for sure: its connection is alive, so no rundown closed it (3.1.4.6/R9)
            found = h.opened_on == (call.capture, call.connection)
            if ok or (found and call.status is not None
                      and call.status != STATUS_ACCESS_DENIED):
                self._flag("MS-MQRR/3.1.4.6/R14", call,
                           f"the handle was opened with dwAccess 0x{h.access:08X}; "
                           f"STATUS_ACCESS_DENIED was due, not "
                           f"0x{call.status or 0:08X}")
            return
        if ok and call.request_time is not None:
            for lookup, seen in h.seen.items():  # in the queue, or gone, when the purge began
                if seen < call.request_time:
                    h.purged[lookup] = call

    def _moved(self, call: Observed, kind: type, h: _OpenQueueDescriptor, ok: bool) -> None:
        """A message R_MoveMessage moved may come back to a purged queue (see 3.1.4.6/R11)."""
        if ok and call.lookup_id is not None:
            lookup = call.lookup_id & SEQUENCE_MASK
            for other in self.handles.values():
                other.purged.pop(lookup, None)
                other.seen.pop(lookup, None)

    def _opened(self, call: Observed) -> None:
        if call.result_handle is None:
            self._flag("MS-MQRR/3.1.4.2/R19", call, "pphContext is NULL")
            return
        old = self.handles.get(call.result_handle)
        if old is not None and not old.closed and old.opened_by is not None:
            if old.opened_by == call.client:  # on the holder's own connection: it lives
                self._reissued_open(call, old, call)
            else:  # proven only if the holder uses it later (_request)
                self._reissued[call.result_handle] = (call, old)
        self.handles[call.result_handle] = _OpenQueueDescriptor(
            queue=call.queue or f"handle:{call.result_handle}", access=call.access,
            opened=True, opened_on=(call.capture, call.connection), opened_by=call.client)

    def _reissued_open(self, call: Observed, old: _OpenQueueDescriptor,
                       alive: Observed) -> None:
        where = "" if alive is call else (f"; {alive.client}, which opened it, named it at "
                                          f"frame {alive.request_frame} of {alive.capture}")
        self._flag("MS-MQDMPR/3.1.7.1.5/R21", call,
                   f"handle {call.result_handle} is open on {old.queue}{where}")

    def _received(self, call: Observed, kind: type, h: _OpenQueueDescriptor, ok: bool) -> None:
        rid = call.request_id
        if h.inflight.get(rid) is call:
            del h.inflight[rid]
        key = (call.connection, call.call_id)
        h.waiting.pop(key, None)
        cancelled = key in h.cancelled  # a successful cancel or close removed its entry
        h.cancelled.discard(key)
        emptied = key in h.emptied  # an end removed it while it waited
        h.emptied.discard(key)
        if call.status is None:  # a fault or no answer: nothing is known
            return
        lookup = call.sequence_id if ok else None
        q = self._queue(h.queue)
        if lookup is not None:
            if not h.closed:
                self._received_checks(call, kind, h, lookup)
            if call.cursor and call.cursor in h.closed_cursors and not h.closed:
                self._flag(CURSOR_CLOSED[kind], call, f"hCursor {call.cursor} was closed")
            acked = q.acked.get(lookup)
            if acked is not None and acked[0] < call.request_time:
                end = acked[1]
                self._flag("MS-MQRR/3.1.4.9/R7", call,
                           f"message {lookup} of {h.queue} was acknowledged by call_id "
                           f"{end.call_id} ({end.capture}, frame {end.request_frame})")
            for holder in q.locks.get(lookup) or ():
                if holder.call.response_time < call.request_time:
                    holder.suspects.append(call)
        if cancelled or not registers_pending_request(call.action, call.status):
            return
        locked = lookup is not None and holds_lock(call.action, call.status)
        if emptied and not locked:
            return
        # a failed receive's entry holds no lock, and the client's pairing obligations are not
        # read into a failed receive: it counts as paired
        entry = _PendingRequestEntry(call, lookup_identifier=lookup if locked else None,
                                     queue=h.queue, paired=not locked)
        old = h.pending.get(rid)
        if old is not None:  # the server's table keeps one entry per key: the new one
            self._unlock(old)
        h.pending[rid] = entry
        if locked:
            q.locks.setdefault(lookup, []).append(entry)

    def _received_checks(self, call: Observed, kind: type, h: _OpenQueueDescriptor,
                         lookup: int) -> None:
        """What a receive or peek that returned a message (pSequenceId ``lookup``) on an open
        handle must agree with: the handle's access, the action, the LookupId asked for and
        the purges of the handle."""
        if (kind is c.R_StartReceive and call.action in RECEIVE_ACTIONS
                and h.access is not None and h.access != c.RECEIVE_ACCESS):
            self._flag("MS-MQRR/3.1.4.7/R6", call,
                       f"ulAction 0x{call.action:08X} removes a message; the handle was "
                       f"opened with dwAccess 0x{h.access:08X}, which permits peeking only")
        if kind is c.R_StartTransactionalReceive and call.action in PEEK_ACTIONS:
            self._flag("MS-MQRR/3.1.4.13/R69", call, f"ulAction 0x{call.action:08X} is a peek; "
                                                     f"MQ_ERROR_TRANSACTION_USAGE was due")
        if (call.action in LOOKUP_CURRENT and call.lookup_id is not None
                and lookup != call.lookup_id & SEQUENCE_MASK):
            rule = ("MS-MQRR/3.1.4.7/R17" if kind is c.R_StartReceive
                    else "MS-MQRR/3.1.4.13/R15")
            self._flag(rule, call, f"LookupId {call.lookup_id} was asked for; pSequenceId is "
                                   f"{lookup}")
        purge = h.purged.get(lookup)
        if (purge is not None and purge.response_time is not None
                and call.request_time is not None and purge.response_time < call.request_time):
            self._flag("MS-MQRR/3.1.4.6/R11", call,
                       f"message {lookup} was returned on this handle before the R_PurgeQueue "
                       f"of call_id {purge.call_id} ({purge.capture}, frame "
                       f"{purge.request_frame}) succeeded")
        if call.response_time is not None:
            h.seen[lookup] = call.response_time

    def _ended(self, call: Observed, kind: type, h: _OpenQueueDescriptor, ok: bool) -> None:
        rid = call.request_id
        pending = h.ending.pop(rid, None)
        if not ok:
            if pending is None:
                if ends_pending_request(kind, call.status):
                    # the entry it ended is that of a receive still waiting when it was sent
                    # (MQ_ACTION_RECEIVE has its entry from the start of its wait, 3.1.4.7):
                    # that receive has one again only if it returns a message
                    self._ended_while_waiting(call, h)
                return
            if ends_pending_request(kind, call.status) or call.ack in (c.RR_ACK, c.RR_NACK):
                # it ended here, or a valid end found no entry: the Pending Request Cleanup
                # Timer (or nothing the capture shows) had removed it before
                self._unlock(pending)
            else:  # refused for its dwAck before the entry was looked up: it is still there
                pending.ended = None
                h.pending[rid] = pending
            return
        if pending is None:
            if (call.connection, call.call_id) in h.unknown_ends:
                h.unknown_ends.discard((call.connection, call.call_id))
                self._flag(END[kind][0], call,
                           f"no receive on this handle was pending with dwRequestId {rid}")
            return
        for suspect in pending.suspects:
            if suspect.response_time < call.request_time:
                rule = ("MS-MQDMPR/3.1.7.3.2/R10" if suspect.action in RECEIVE_ACTIONS
                        else "MS-MQDMPR/3.1.7.3.2/R11")
                self._flag(rule, suspect,
                           f"message {pending.lookup_identifier} of {pending.queue} was locked "
                           f"by call_id {pending.call.call_id} ({pending.call.capture}, frame "
                           f"{pending.call.request_frame}) until its end at frame "
                           f"{call.request_frame}")
        pending.suspects.clear()
        self._unlock(pending)
        if (call.ack == c.RR_ACK and kind is c.R_EndReceive
                and pending.lookup_identifier is not None):
            self._queue(pending.queue).acked[pending.lookup_identifier] = (call.response_time, call)

    def _unlock(self, receive: _PendingRequestEntry) -> None:
        q = self.queues.get(receive.queue)
        holders = q.locks.get(receive.lookup_identifier) if q is not None else None
        for i, holder in enumerate(holders or ()):
            if holder is receive:
                del holders[i]
                if not holders:
                    del q.locks[receive.lookup_identifier]
                return

    def _qmmgmt(self, call: Observed) -> None:
        session = call.object_type == MgmtObjectType.MGMT_SESSION
        if c.BY_NAME.get(call.method) is c.R_QMMgmtGetInfo:
            if session:
                self._flag("MS-MQMR/3.1.4.1/R14", call, "the object is MGMT_SESSION")
                return
            table = (MACHINE_PROPERTIES if call.object_type == MgmtObjectType.MGMT_MACHINE
                     else QUEUE_PROPERTIES)
            for prop, vt in zip(call.props or (), call.vts or (), strict=False):
                row = table.get(prop)
                if row is not None and vt not in (row.vt, 0x0001):  # VT_NULL
                    self._flag("MS-MQMR/3.1.4.1/R7", call,
                               f"property {prop} ({row.name}) came back as VARTYPE 0x{vt:04X}, "
                               f"not 0x{row.vt:04X} or VT_NULL")
        else:
            if session:
                self._flag("MS-MQMR/3.1.4.2/R3", call, "the object is MGMT_SESSION")
            elif ACTIONS.get(_action_key(call.action_text)) is None:
                self._flag("MS-MQMR/3.1.4.2/R3", call,
                           f"lpwszAction {call.action_text!r} is not in the table")


#: what a request does to the observer's state, by the call's type
_ON_REQUEST = {c.R_StartReceive: Observer._start_request,
               c.R_StartTransactionalReceive: Observer._start_request,
               c.R_EndReceive: Observer._end_request,
               c.R_EndTransactionalReceive: Observer._end_request,
               c.R_CancelReceive: Observer._end_request,
               c.R_CloseQueue: Observer._close_request,
               c.R_CloseCursor: Observer._close_cursor_request}
#: what a response does (and which rules it is held to), by the call's type
_ON_RESPONSE = {c.R_StartReceive: Observer._received,
                c.R_StartTransactionalReceive: Observer._received,
                c.R_EndReceive: Observer._ended,
                c.R_EndTransactionalReceive: Observer._ended,
                c.R_CancelReceive: Observer._cancelled,
                c.R_CloseQueue: Observer._closed,
                c.R_CreateCursor: Observer._cursor_created,
                c.R_CloseCursor: Observer._cursor_closed,
                c.R_PurgeQueue: Observer._purged,
                c.R_MoveMessage: Observer._moved}


def observe(calls: list[Observed], server: str = "") -> list[Violation]:
    """All violations of one server's calls (sorted by request time here)."""
    obs = Observer(server)
    for call in sorted(calls, key=lambda x: (x.request_time if x.request_time is not None
                                             else x.response_time or 0.0)):
        obs.feed(call)
    obs.finish()
    return obs.violations
