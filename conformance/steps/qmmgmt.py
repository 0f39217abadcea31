"""Steps for MS-MQMR scenarios (qmmgmt: R_QMMgmtGetInfo properties, R_QMMgmtAction).

Every call goes to the target and to the oracle (the model, provisioned in lockstep). The status
is checked against the model's Outcome as for every call of the suite; for R_QMMgmtGetInfo the
values are compared too, entry by entry: the VARTYPE always, and the value as the model computes
it from the tables of MS-MQMR 3.1.4.1, except where the value depends on state the scenario did
not make:

* PROPID_MGMT_MSMQ_ACTIVEQUEUES and PROPID_MGMT_MSMQ_PRIVATEQ: for each queue the scenario made,
  the target lists it exactly when the model does (a queue manager has other queues);
* PROPID_MGMT_MSMQ_TYPE: any string (the row says only that it MAY be empty);
* PROPID_MGMT_MSMQ_BYTES_IN_ALL_QUEUES: the type; the value is checked by its change when the
  scenario adds a queue (the sum of TotalBytes, MS-MQMR 3.1.4.1).

Where the oracle would only agree with a server that shares its model, a scenario writes the
value the documents give (``queue "O" has PROPID_MGMT_QUEUE_EOD_NEXT_SEQ of type VT_BLOB
0807...``): the transfer state of an outgoing queue and the incoming transfers of a queue, which
SUT control provisions as the ADM names them (MS-MQDMPR 3.1.1.3 to 3.1.1.5), and the formats
MS-MQMQ gives their properties (SEQUENCE_INFO 2.2.5.1, TxSequenceID 2.2.18.1.2, the vectors of
2.3.12.24 and 2.3.12.25 and the Status codes of the latter).

PROPID_MGMT_MSMQ_CONNECTED depends on the queue manager's connection state, which the scenario
reads first ("the client has noted the connection state"): the oracle is put in the same state,
and the target is put back in it when the scenario ends, whatever happened (R_QMMgmtAction
CONNECT or DISCONNECT).

Steps about the RPC runtime (the bind, strict NDR checks) speak to an RpcTarget's endpoint
directly; on the in-process model, which has no RPC runtime, they read what the model's server
tells the runtime it registers with (model.mqmr.QMMGMT_RPC_SETTINGS) and send the typed call.
"""

from __future__ import annotations

import ast
import dataclasses
import re
import struct
import uuid
from typing import Any

import pytest
from pytest_bdd import given, parsers, then, when

from mqconform.conformance import client as wc
from mqconform.conformance import sources
from mqconform.conformance.preconditions_mqmr import (
    configure_queue_manager,
    connector_queue,
    incoming_transfers,
    outgoing_queue,
    public_queue,
    queue_format,
    queue_with_journal_quota,
    queue_with_subqueues,
    remote_format_name,
    send_to,
)
from mqconform.conformance.session import CaseFailed, status_text
from mqconform.conformance.sut import Inconclusive
from mqconform.conformance.targets import RpcTarget
from mqconform.model import calls as c
from mqconform.model.formats import (
    DlId,
    MgmtObject,
    MgmtObjectType,
    ObjectId,
    QueueFormat,
    QueueFormatType,
    from_queue_format,
    parse_format_name,
    to_queue_format,
)
from mqconform.model.mqmr import (
    MACHINE_PROPERTIES,
    PROPID_MGMT_MSMQ_ACTIVEQUEUES,
    PROPID_MGMT_MSMQ_BYTES_IN_ALL_QUEUES,
    PROPID_MGMT_MSMQ_CONNECTED,
    PROPID_MGMT_MSMQ_PRIVATEQ,
    PROPID_MGMT_MSMQ_TYPE,
    QMMGMT_RPC_SETTINGS,
    QUEUE_PROPERTIES,
    VT_BLOB,
    VT_CLSID,
    VT_EMPTY,
    VT_I4,
    VT_I8,
    VT_LPWSTR,
    VT_NULL,
    VT_UI4,
    VT_UI8,
    VT_VARIANT,
    VT_VECTOR,
)
from mqconform.model.status import is_failure
from mqconform.wire.impacket_ndr import (
    NDR64_SYNTAX,
    NDR_SYNTAX,
    EncodeError,
    decode_response,
    encode_request,
)

MACHINE = MgmtObject(MgmtObjectType.MGMT_MACHINE)
SESSION = MgmtObject(MgmtObjectType.MGMT_SESSION)
NULL = c.PropVariant(VT_NULL)
MACHINE_IDS = {row.name: propid for propid, row in MACHINE_PROPERTIES.items()}
QUEUE_IDS = {row.name: propid for propid, row in QUEUE_PROPERTIES.items()}
VT_BY_NAME = {"VT_EMPTY": c.PropVariant(VT_EMPTY), "VT_UI4": c.PropVariant(VT_UI4, 5),
              "VT_LPWSTR": c.PropVariant(VT_LPWSTR, "x"), "VT_NULL": NULL,
              "VT_BLOB": c.PropVariant(VT_BLOB, b"\x01\x02\x03\x04"),
              # an empty BLOB: cbSize 0 and a NULL pointer (wire/types.py choice 1)
              "VT_BLOB of no octets": c.PropVariant(VT_BLOB, b""),
              "VT_CLSID": c.PropVariant(VT_CLSID, uuid.UUID(int=0x5EED)),
              "VT_VECTOR | VT_UI4": c.PropVariant(VT_VECTOR | VT_UI4, [7, 8]),
              "VT_VECTOR | VT_LPWSTR": c.PropVariant(VT_VECTOR | VT_LPWSTR, ["a", "bc"]),
              "VT_VECTOR | VT_CLSID": c.PropVariant(VT_VECTOR | VT_CLSID,
                                                    [uuid.UUID(int=1), uuid.UUID(int=2)]),
              # a CAPROPVARIANT holding one VT_UI4 (MS-MQMQ 2.2.13: one level, as MSMQ nests)
              "VT_VECTOR | VT_VARIANT": c.PropVariant(VT_VECTOR | VT_VARIANT,
                                                      [c.PropVariant(VT_UI4, 9)])}
ACCESS = {"RECEIVE_ACCESS": c.RECEIVE_ACCESS, "PEEK_ACCESS": c.PEEK_ACCESS}
#: the VARTYPEs a scenario names (MS-MQMQ 2.2.12), joined with " | " for a vector
VARTYPE_NAMES = {"VT_NULL": VT_NULL, "VT_I4": VT_I4, "VT_UI4": VT_UI4, "VT_I8": VT_I8,
                 "VT_UI8": VT_UI8, "VT_LPWSTR": VT_LPWSTR, "VT_BLOB": VT_BLOB,
                 "VT_CLSID": VT_CLSID, "VT_VARIANT": VT_VARIANT, "VT_VECTOR": VT_VECTOR}
#: what the value checks of the queue table hold a server to: the value of each row, computed
#: from the attributes of the Queue and OutgoingQueue elements (and, for the EOD rows, of the
#: OutgoingTransferInfo element: R17)
QUEUE_VALUE_IDS = ("MS-MQMR/3.1.4.1/R20", "MS-MQMR/3.1.4.1/R27")
EOD_VALUE_IDS = ("MS-MQMR/3.1.4.1/R17", *QUEUE_VALUE_IDS)


@pytest.fixture
def mgmt(mq, request) -> dict:
    """The scenario's state: queues by label, the last call and results, the connection state
    noted at the start (restored on the target when the scenario ends)."""
    state: dict[str, Any] = {"queues": {}, "contexts": {}, "cleanups": []}

    def restore() -> None:
        for cleanup in reversed(state["cleanups"]):
            try:
                cleanup()
            except Exception:  # noqa: BLE001 - a target gone away cannot be restored
                pass
        connected = state.get("connected")
        if connected is None:
            return
        action = "CONNECT" if connected else "DISCONNECT"
        call = c.R_QMMgmtAction(pObjectFormat=MACHINE, lpwszAction=action)
        for side in (mq.target, mq.oracle):
            try:
                side.call(call)
            except Exception:  # noqa: BLE001 - a target gone away cannot be restored
                pass
        for raw in state.pop("connections", []):
            raw.close()

    request.addfinalizer(restore)
    return state


# ------------------------------------------------------------------------------ helpers

def _names(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def _bodies(text: str) -> list[bytes]:
    return [name.encode() for name in _names(text)]


def _snake(name: str) -> str:
    """An ADM attribute or structure member as the control API names it: EodFirstNonAck ->
    eod_first_non_ack, SeqID -> seq_id, TimeStamp -> time_stamp."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


def _literal(text: str, where: str) -> Any:
    """A value as a scenario writes it: a number (decimal or 0x hex, negative for a signed
    one), a quoted string, a list, or an object of document-spelled members
    ({"SeqID": 0x0102030405060708, "SeqNo": 10, "PrevNo": 9})."""
    try:
        return ast.literal_eval(text.strip())
    except (ValueError, SyntaxError):
        raise AssertionError(f"{where}: {text!r} is not a value the scenario can read") \
            from None


def _adm(value: Any) -> Any:
    """A scenario's value as the control API takes it: the members of a structure named in
    snake case."""
    if isinstance(value, dict):
        return {_snake(key): _adm(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_adm(item) for item in value]
    return value


def _rows(datatable: list[list[str]]) -> list[dict[str, str]]:
    """A scenario's table as one mapping per row, by the header's names."""
    header, *rows = datatable
    return [dict(zip(header, row, strict=True)) for row in rows]


def _vartype(text: str) -> int:
    """``VT_UI4``, ``VT_VECTOR | VT_LPWSTR``: a VARTYPE by the names of MS-MQMQ 2.2.12."""
    vt = 0
    for part in text.split("|"):
        if part.strip() not in VARTYPE_NAMES:
            raise AssertionError(f"{part.strip()!r} is not a VARTYPE the scenarios name")
        vt |= VARTYPE_NAMES[part.strip()]
    return vt


def _plain(vt: int, value: Any) -> Any:
    """A value as the scenarios write it: a GUID as its lower-case text, a BLOB as bytes."""
    if vt & VT_VECTOR and vt != VT_VECTOR | VT_VARIANT:
        return [_plain(vt & ~VT_VECTOR, item) for item in value or []]
    if isinstance(value, uuid.UUID):
        return str(value)
    if vt == VT_BLOB and value is not None:
        return bytes(value)
    return value


def _shown(value: Any) -> str:
    """A value for a message: octets in hex, numbers in decimal and, past 0xFFFF, in hex."""
    if isinstance(value, bytes | bytearray):
        return bytes(value).hex().upper() or "(no octets)"
    if isinstance(value, list):
        return "[" + ", ".join(_shown(item) for item in value) + "]"
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 0xFFFF:
        return f"{value} ({'-' if value < 0 else ''}0x{abs(value):X})"
    return repr(value)


def _written(vt: int, text: str, where: str) -> Any:
    """The value a scenario writes for a VARTYPE: the octets in hex for a VT_BLOB (spaces
    between groups allowed), else a literal (GUIDs as text, compared without regard to
    case)."""
    if vt == VT_BLOB:
        try:
            return bytes.fromhex(text.replace(" ", ""))
        except ValueError:
            raise AssertionError(f"{where}: {text!r} is not hexadecimal octets") from None
    value = _literal(text, where)
    if vt & 0xFFF == VT_CLSID:
        value = [v.lower() for v in value] if isinstance(value, list) else value.lower()
    return value


def _queue(mgmt: dict, label: str) -> dict:
    try:
        return mgmt["queues"][label]
    except KeyError:
        raise AssertionError(f"the scenario has no queue {label!r}") from None


def _object(mgmt: dict, text: str) -> MgmtObject:
    """``machine``, ``queue "A"``, ``a MGMT_SESSION object``, ``an MGMT_OBJECT of type N``."""
    text = text.strip()
    if text in ("machine", "the machine"):
        return MACHINE
    if text.startswith(("queue ", "the queue ")):
        return MgmtObject(MgmtObjectType.MGMT_QUEUE, _queue(mgmt, text.split('"')[1])["fmt"])
    if "MGMT_SESSION" in text:
        return SESSION
    if text.startswith("an MGMT_OBJECT of type"):
        return MgmtObject(int(text.rsplit(" ", 1)[1]))
    if text == NO_QUEUE_FORMAT:
        # pQueueFormat is a unique pointer (MS-MQMR 2.2.1.2): NDR carries it NULL
        return MgmtObject(MgmtObjectType.MGMT_QUEUE, None)
    if text.startswith(UNDEFINED_SUFFIX):
        # a private queue's QUEUE_FORMAT whose suffix type (the low 4 bits of m_SuffixAndFlags)
        # is none of QUEUE_SUFFIX_TYPE's values (MS-MQMQ 2.2.11: 0 to 5)
        suffix = int(text.rsplit(" ", 1)[1])
        return MgmtObject(MgmtObjectType.MGMT_QUEUE, QueueFormat(
            QueueFormatType.QUEUE_FORMAT_TYPE_PRIVATE, m_SuffixAndFlags=suffix,
            value=ObjectId(sources.uuid4(), 1)))
    raise AssertionError(f"no management object {text!r}")


def _via(mq, mgmt: dict):
    return mgmt.get("via") or mq.target


def _oracle_call(mq, call: c.Call):
    return mq.oracle.outcome(call)


def _get_info(mq, mgmt: dict, obj: MgmtObject, props: list[int],
              ap_var: tuple | None = None, ids: tuple[str, ...] = ()) -> c.Result:
    """R_QMMgmtGetInfo on the target and the oracle; the status is checked (and that a method
    does not throw, MS-MQMR/3.1.4/R4); the two results are kept for the Then steps."""
    call = c.R_QMMgmtGetInfo(pObjectFormat=obj, cp=len(props), aProp=tuple(props),
                             apVar=ap_var if ap_var is not None else (NULL,) * len(props))
    observed = _via(mq, mgmt).call(call)
    outcome = _oracle_call(mq, call)
    mgmt.update(call=call, observed=observed, expected=outcome.result, outcome=outcome)
    mq.check(outcome, observed, ids=ids, call=call)
    if not observed.raised:
        return observed
    mq.assert_that(False, f"R_QMMgmtGetInfo threw {status_text(observed)}: a well-formed "
                          f"request is answered with an HRESULT", "MS-MQMR/3.1.4/R4")
    return observed


def _action(mq, mgmt: dict, obj: MgmtObject, action: str, ids: tuple[str, ...] = ()
            ) -> c.Result:
    call = c.R_QMMgmtAction(pObjectFormat=obj, lpwszAction=action)
    observed = _via(mq, mgmt).call(call)
    outcome = _oracle_call(mq, call)
    mgmt.update(call=call, observed=observed, expected=outcome.result, outcome=outcome)
    mq.check(outcome, observed, ids=ids, call=call)
    if observed.raised and obj.type in (1, 2, 3):
        mq.assert_that(False, f"R_QMMgmtAction threw {status_text(observed)}: a well-formed "
                              f"request is answered with an HRESULT", "MS-MQMR/3.1.4/R4")
    return observed


def _known(mgmt: dict) -> list[tuple[str, str]]:
    """(label, path) of the local queues the scenario made."""
    return [(label, q["path"]) for label, q in mgmt["queues"].items() if q.get("path")]


def _lists(values: Any, path: str) -> bool:
    """Whether a vector of queue names names the queue of this path (a path name or a format
    name ending in it, compared without regard to case)."""
    want = "\\" + path.lower()
    return any(isinstance(v, str) and (v.lower().endswith(want) or v.lower() == path.lower())
               for v in (values or []))


def _compare_entry(mgmt: dict, table: dict, propid: int, got: c.PropVariant,
                   want: c.PropVariant) -> str | None:
    """None if the target's entry agrees with the model's, else why not."""
    name = table[propid].name if propid in table else f"property {propid}"
    if not isinstance(got, c.PropVariant):
        return f"{name}: no PROPVARIANT returned"
    if got.vt != want.vt:
        return f"{name}: VARTYPE 0x{got.vt:04X}, the documents give 0x{want.vt:04X} " \
               f"({want.value!r}; MS-MQMR/3.1.4.1/R7)"
    if table is MACHINE_PROPERTIES and propid in (PROPID_MGMT_MSMQ_ACTIVEQUEUES,
                                                  PROPID_MGMT_MSMQ_PRIVATEQ):
        if not isinstance(got.value, list) or not all(isinstance(v, str) for v in got.value):
            return f"{name}: {got.value!r} is not a vector of strings"
        for label, path in _known(mgmt):
            if _lists(got.value, path) != _lists(want.value, path):
                verb = "lists" if _lists(got.value, path) else "does not list"
                return f"{name} {verb} queue {label!r} ({path}); the documents say otherwise"
        return None
    if table is MACHINE_PROPERTIES and propid == PROPID_MGMT_MSMQ_TYPE:
        return None if isinstance(got.value, str) else f"{name}: {got.value!r} is not a string"
    if table is MACHINE_PROPERTIES and propid == PROPID_MGMT_MSMQ_BYTES_IN_ALL_QUEUES:
        return None if isinstance(got.value, int) else f"{name}: {got.value!r} is no integer"
    if _normal(got) != _normal(want):
        return f"{name}: {got.value!r}, the documents give {want.value!r}"
    return None


def _normal(pv: c.PropVariant) -> Any:
    value = pv.value
    if isinstance(value, list):
        return [(_normal(v) if isinstance(v, c.PropVariant) else v) for v in value]
    if pv.vt == VT_BLOB and value is not None:
        return bytes(value)
    return (pv.vt, value) if isinstance(pv, c.PropVariant) else value


def _table(obj: MgmtObject) -> dict:
    return MACHINE_PROPERTIES if obj.type == MgmtObjectType.MGMT_MACHINE else QUEUE_PROPERTIES


def _check_values(mq, mgmt: dict, ids: tuple[str, ...] = ()) -> None:
    call, observed, expected = mgmt["call"], mgmt["observed"], mgmt["expected"]
    mq.assert_that(observed.status == 0,
                   f"R_QMMgmtGetInfo returned {status_text(observed)}, not MQ_OK",
                   "MS-MQMR/3.1.4.1/R9")
    mq.assert_that(len(observed.apVar) == call.cp,
                   f"apVar has {len(observed.apVar)} entries for cp {call.cp}",
                   "MS-MQMR/3.1.4.1/R4")
    table = _table(call.pObjectFormat)
    problems = [p for propid, got, want in zip(call.aProp, observed.apVar,
                                                expected.apVar, strict=False)
                if (p := _compare_entry(mgmt, table, propid, got, want)) is not None]
    mq.assert_that(not problems, "R_QMMgmtGetInfo values: " + ("; ".join(problems)
                                                               or "as the documents give"),
                   ids)


def _value(mq, mgmt: dict, obj: MgmtObject, name: str) -> c.PropVariant:
    """Ask one property (checked against the model) and return the target's entry."""
    table = MACHINE_IDS if obj.type == MgmtObjectType.MGMT_MACHINE else QUEUE_IDS
    _get_info(mq, mgmt, obj, [table[name]])
    _check_values(mq, mgmt)
    return mgmt["observed"].apVar[0]


def _unchecked(mq, target, obj: MgmtObject, propid: int) -> Any:
    """One property of the target, read without comparing it with the oracle (only the
    status is checked): where the oracle's value is not the one to hold the target to."""
    call = c.R_QMMgmtGetInfo(pObjectFormat=obj, cp=1, aProp=(propid,), apVar=(NULL,))
    observed = target.call(call)
    mq.check(c.R_QMMgmtGetInfoResult(status=0), observed, ids=("MS-MQMR/3.1.4.1/R9",), call=call)
    [value] = observed.apVar or [None]
    return value


def _connected(mq, mgmt: dict) -> bool:
    """The target's PROPID_MGMT_MSMQ_CONNECTED, read without comparing it with the oracle
    (whose state is then aligned)."""
    value = _unchecked(mq, mq.target, MACHINE, PROPID_MGMT_MSMQ_CONNECTED)
    mq.assert_that(isinstance(value, c.PropVariant) and value.vt == VT_LPWSTR,
                   f"PROPID_MGMT_MSMQ_CONNECTED is {value!r}, not a VT_LPWSTR",
                   "MS-MQMR/3.1.4.1/R7")
    mq.assert_that(value.value in ("CONNECTED", "DISCONNECTED"),
                   f"PROPID_MGMT_MSMQ_CONNECTED is {value!r}, not the string CONNECTED or "
                   f"DISCONNECTED", "MS-MQMR/3.1.4.1/R18")
    return value.value == "CONNECTED"


# ------------------------------------------------------------------------------ Given

@given("the client has noted the connection state of the queue manager")
def noted_connection(mq, mgmt):
    connected = _connected(mq, mgmt)
    mgmt["connected"] = connected
    mq.oracle.call(c.R_QMMgmtAction(pObjectFormat=MACHINE,
                                    lpwszAction="CONNECT" if connected else "DISCONNECT"))


def _add_local(mq, mgmt: dict, label: str, messages: list[bytes | dict], transactional: bool,
               journal: bool = False) -> None:
    fmt = mq.queue(messages, transactional=transactional, journal=journal)
    mgmt["queues"][label] = {"fmt": fmt, "path": mq.path_of(fmt)}


@given(parsers.parse('a private queue "{label}" with messages "{bodies}"'))
def private_queue(mq, mgmt, label, bodies):
    _add_local(mq, mgmt, label, _bodies(bodies), False)


@given(parsers.parse('a private queue "{label}" with messages "{bodies}", each with a time to '
                     'be received of {seconds:d} seconds'))
def private_queue_ttbr(mq, mgmt, label, bodies, seconds):
    """Messages whose Message.TimeToBeReceived is ``seconds`` (SUT control's
    time_to_be_received): their timer starts when they are put in the queue (MS-MQDMPR
    3.1.2.4)."""
    messages = [{"body": body, "time_to_be_received": seconds} for body in _bodies(bodies)]
    _add_local(mq, mgmt, label, messages, False)


@given(parsers.parse('a private queue "{label}" with no message'))
def private_queue_empty(mq, mgmt, label):
    _add_local(mq, mgmt, label, [], False)


@given(parsers.parse('a journaled private queue "{label}" with messages "{bodies}"'))
def journaled_queue(mq, mgmt, label, bodies):
    """A private queue with Queue.Journaling True (MS-MQDMPR 3.1.1.2): a copy of each message
    received from it goes to its queue journal; Inconclusive where SUT control cannot make
    one."""
    _add_local(mq, mgmt, label, _bodies(bodies), False, journal=True)


@given(parsers.parse('a journaled private queue "{label}" whose queue journal quota is '
                     '{kilobytes:d} kilobytes'))
def journaled_queue_with_quota(mq, mgmt, label, kilobytes):
    """Queue.JournalQuota (MS-MQDMPR 3.1.1.2): the storage, in kilobytes, allocated to the
    queue's journal; a copy that would exceed it is refused as Enqueue Message refuses a message
    over a queue's quota (3.1.7.1.9 R6-R8). Inconclusive where SUT control cannot set it."""
    path, fmt = queue_with_journal_quota(mq, kilobytes)
    mgmt["queues"][label] = {"fmt": fmt, "path": path}


def _storage_of(mq, mgmt: dict, label: str, body: bytes) -> int:
    """Send ``body`` to the queue: the octets of storage the target says the message takes
    (what its PROPID_MGMT_QUEUE_BYTES_IN_QUEUE, Queue.TotalBytes, grew by; MS-MQDMPR 3.1.1.2
    leaves the measure to the queue manager)."""
    obj = _object(mgmt, f'queue "{label}"')
    propid = QUEUE_IDS["PROPID_MGMT_QUEUE_BYTES_IN_QUEUE"]
    before = _unchecked(mq, mq.target, obj, propid)
    send_to(mq, _queue(mgmt, label)["path"], body)
    after = _unchecked(mq, mq.target, obj, propid)
    if not all(isinstance(v, c.PropVariant) and isinstance(v.value, int)
               for v in (before, after)):
        raise CaseFailed(f"PROPID_MGMT_QUEUE_BYTES_IN_QUEUE of queue {label!r} is "
                         f"{before!r}, then {after!r}: not a number (MS-MQMR/3.1.4.1/R20)")
    return after.value - before.value


@given(parsers.parse('a message of {length:d} octets in queue "{label}", whose storage the '
                     'client has measured'))
def measured_message(mq, mgmt, label, length):
    size = _storage_of(mq, mgmt, label, b"m" * length)
    if size <= 0:
        raise CaseFailed(f"PROPID_MGMT_QUEUE_BYTES_IN_QUEUE of queue {label!r} grew by {size} "
                         f"when a message of {length} octets arrived (MS-MQMR/3.1.4.1/R20)")
    mgmt.setdefault("measured", {})[label] = (length, size)


@given(parsers.parse('a message in queue "{label}" that takes {total:d} octets of storage with '
                     'the measured one'))
def message_of_storage(mq, mgmt, label, total):
    """A message whose storage is ``total`` less the measured message's: its body is as much
    longer than the measured one's as its storage must be larger. A target whose storage does
    not grow octet for octet with the body (granularity) cannot be brought to the exact edge
    the case needs: Inconclusive, before anything is received."""
    length, size = mgmt["measured"][label]
    want = total - size
    body_length = length + want - size
    if body_length < 0:
        raise Inconclusive(f"a message of {total - size} octets of storage is smaller than one "
                           f"with an empty body on this target")
    got = _storage_of(mq, mgmt, label, b"n" * body_length)
    if got != want:
        raise Inconclusive(f"a message of {body_length} octets takes {got} octets of storage "
                           f"on the target, not {want}: its storage does not grow octet for "
                           f"octet with the body, so the case cannot reach its exact size")


@given(parsers.parse('a transactional queue "{label}" with messages "{bodies}"'))
def transactional_queue(mq, mgmt, label, bodies):
    _add_local(mq, mgmt, label, _bodies(bodies), True)


@given(parsers.parse('a queue "{label}" with subqueues "{names}" and messages "{bodies}"'))
def queue_with_subqueues_step(mq, mgmt, label, names, bodies):
    path, fmt = queue_with_subqueues(mq, _names(names), _bodies(bodies))
    mgmt["queues"][label] = {"fmt": fmt, "path": path}


@given(parsers.parse('the queue journal of queue "{label}" as queue "{journal}"'))
def queue_journal_of(mq, mgmt, label, journal):
    """The queue journal of a queue this case made (its DIRECT format name with the JOURNAL
    suffix, MS-MQMQ 2.1.2), known from now on by its own label: it opens as a queue does."""
    path = _queue(mgmt, label)["path"]
    mgmt["queues"][journal] = {
        "fmt": queue_format(f"DIRECT=OS:{mq.suite.spec.computer_name}\\{path};JOURNAL")}


#: the system queues MS-MQDMPR 3.1.3 Initialization puts in the QueueCollection, by the name
#: a step gives them: the LocalQueueManager attribute, and the suffix of their direct format
#: name (MS-MQMQ 2.1.2: DIRECT=...\\SYSTEM$;suffix)
SYSTEM_QUEUES = {"journal": ("system_journal_queue", "JOURNAL"),
                 "dead-letter": ("system_deadletter_queue", "DEADLETTER"),
                 "transactional dead-letter": ("system_transactional_deadletter_queue",
                                               "DEADXACT")}


@given(parsers.re(r'the system (?P<kind>journal|dead-letter|transactional dead-letter) queue '
                  r'"(?P<label>[^"]+)"'))
def system_queue(mq, mgmt, kind, label):
    """A system queue that MS-MQDMPR 3.1.3 Initialization creates; Inconclusive on a queue
    manager that has none (the oracle's, or the target's, where the queue cannot be
    opened)."""
    attribute, suffix = SYSTEM_QUEUES[kind]
    if getattr(mq.oracle.qm.env.local_queue_manager, attribute) is None:
        raise Inconclusive("the oracle's queue manager has no system queues: it was built "
                           "without MS-MQDMPR 3.1.3 Initialization, as the reference server is")
    fmt = queue_format(f"DIRECT=OS:{mq.suite.spec.computer_name}\\SYSTEM$;{suffix}")
    probe = c.R_QMMgmtGetInfo(pObjectFormat=MgmtObject(MgmtObjectType.MGMT_QUEUE, fmt), cp=1,
                              aProp=(QUEUE_IDS["PROPID_MGMT_QUEUE_TYPE"],), apVar=(NULL,))
    if mq.target.call(probe).status != 0:
        raise Inconclusive(f"the target's system {kind} queue cannot be opened")
    mgmt["queues"][label] = {"fmt": fmt}


@given(parsers.parse('a connector queue "{label}"'))
def connector(mq, mgmt, label):
    path, fmt = connector_queue(mq)
    mgmt["queues"][label] = {"fmt": fmt, "path": path}


@given(parsers.parse('a public queue "{label}"'))
def public(mq, mgmt, label):
    """Deleted again when the scenario ends: a queue manager without a directory may give its
    public queues no Identifier of their own (GUID_NULL), which a later case's PUBLIC= name
    must not find."""
    path, fmt = public_queue(mq)
    mgmt["queues"][label] = {"fmt": fmt, "path": path}

    def delete() -> None:
        mq.sut.delete_queue(path)
        mq.suite.oracle_sut.delete_queue(path)

    mgmt["cleanups"].append(delete)


@given(parsers.re(r"the queue manager is configured with (?P<settings>.+)$"))
def configured(mq, mgmt, settings):
    """``directory_integrated true, directory_offline true`` and the like; a list value is
    written ``directory_server_list [DS1 DS2]``."""
    values: dict[str, Any] = {}
    for item in settings.split(", "):
        key, _, text = item.strip().partition(" ")
        if text.startswith("["):
            values[key] = text.strip("[]").split()
        else:
            values[key] = {"true": True, "false": False}[text]
    configure_queue_manager(mq, mgmt["cleanups"], **values)


@given(parsers.parse('a queue "{label}" that does not exist'))
def missing_queue(mq, mgmt, label):
    path = mq.suite.queue_path() + "-never-created"
    mgmt["queues"][label] = {"fmt": mq.format_of(path)}


@given(parsers.parse('a remote queue "{label}" with no outgoing queue'))
def remote_without_outgoing(mq, mgmt, label):
    mgmt["queues"][label] = {"fmt": queue_format(remote_format_name(mq))}


@given(parsers.re(r'an outgoing queue "(?P<label>[^"]+)" to a remote queue'
                  r'(?: in state (?P<state>\w+))?$'))
def outgoing(mq, mgmt, label, state):
    name, fmt = outgoing_queue(mq, state=state)
    mgmt["queues"][label] = {"fmt": fmt, "format_name": name}


@given(parsers.parse('an outgoing queue "{label}" to a remote queue with a message awaiting '
                     'transfer'))
def outgoing_with_a_message(mq, mgmt, label):
    """An outgoing queue holding a message the transfer protocol has not sent yet (SUT
    control's ``messages``): Active, as MS-MQDMPR 3.1.1.2 defines it for an outgoing queue."""
    name, fmt = outgoing_queue(mq, messages=[{"body": "awaiting transfer"}])
    mgmt["queues"][label] = {"fmt": fmt, "format_name": name}


@then(parsers.parse('the machine lists outgoing queue "{label}" in '
                    'PROPID_MGMT_MSMQ_ACTIVEQUEUES by a name of its destination'))
def machine_lists_outgoing(mq, mgmt, label):
    """MS-MQMR 3.1.4.1: ACTIVEQUEUES is "a vector of all the queue names" of the queues whose
    Active is True (R18); an outgoing queue with a message awaiting transfer is Active
    (MS-MQDMPR 3.1.1.2). An outgoing queue has no Pathname of its own: the name it is listed
    by is its destination's format name, or that name's address part (``OS:host\\path``) or
    path name, compared without regard to case; an empty name names no queue."""
    call, observed = mgmt["call"], mgmt["observed"]
    index = list(call.aProp).index(MACHINE_IDS["PROPID_MGMT_MSMQ_ACTIVEQUEUES"])
    name = mgmt["queues"][label]["format_name"]
    address = name.split("=", 1)[1]
    accepted = {name.lower(), address.lower(), address.split(":", 1)[-1].lower()}
    values = observed.apVar[index].value or []
    listed = any(isinstance(v, str) and v.lower() in accepted for v in values)
    mq.assert_that(listed, f"PROPID_MGMT_MSMQ_ACTIVEQUEUES {'lists' if listed else 'omits'} "
                           f"outgoing queue {label!r} ({name}) among {values!r}",
                   ("MS-MQMR/3.1.4.1/R18", "MS-MQDMPR/3.1.1.2/R9"))


#: format names of a queue on another computer (a GUID no queue manager has): a private queue by
#: its PRIVATE= name (MS-MQMQ 2.1.4: ComputerGuid\QueueNumber, 1-8 hex digits), a connector's
#: transactional queue (2.1.6: CONNECTOR=ConnectorGuid;XACTONLY)
REMOTE_NAMES = {
    "PRIVATE=": lambda: f"PRIVATE={sources.uuid4()}\\0000001a",
    "CONNECTOR=;XACTONLY": lambda: f"CONNECTOR={sources.uuid4()};XACTONLY",
}


@given(parsers.parse('an outgoing queue "{label}" to a {kind} format name of another computer'))
def outgoing_named(mq, mgmt, label, kind):
    name, fmt = outgoing_queue(mq, REMOTE_NAMES[kind]())
    mgmt["queues"][label] = {"fmt": fmt, "format_name": name}


@given(parsers.parse('an outgoing queue "{label}" to the multicast address "{address}"'))
def outgoing_multicast(mq, mgmt, label, address):
    name, fmt = outgoing_queue(mq, f"MULTICAST={address}")
    mgmt["queues"][label] = {"fmt": fmt, "format_name": name}


@given(parsers.parse('an outgoing queue "{label}" to an HTTP host name of {size:d} characters'))
def outgoing_long_http_host(mq, mgmt, label, size):
    """DIRECT=HTTP://Host/msmq\\private$\\Queue whose Host is ``size`` characters long: a
    computer name is 1-256 characters (MS-MQMQ 2.1.1), an HTTP address Host [":" Port] "/MSMQ"
    (MS-MQMQ 2.1.2)."""
    queue = mq.suite.queue_path().split("\\")[-1]
    name, fmt = outgoing_queue(mq, f"DIRECT=HTTP://{'h' * size}/msmq\\private$\\{queue}")
    mgmt["queues"][label] = {"fmt": fmt, "format_name": name}


@given(parsers.parse('queue "{alias}" is queue "{label}" spelled in another case'))
def spelled_in_another_case(mq, mgmt, alias, label):
    """The same queue under a format name whose every letter has the other case: keywords and
    GUID digits match in any case, path names compare without case (spec/choices.yaml
    formats-case, fixed)."""
    queue = _queue(mgmt, label)
    name = str(from_queue_format(queue["fmt"])).swapcase()
    mgmt["queues"][alias] = {"fmt": to_queue_format(parse_format_name(name)), "format_name": name}


@given(parsers.parse('queue "{alias}" is queue "{label}" with slashes between its path\'s parts'))
def spelled_with_slashes(mq, mgmt, alias, label):
    """An HTTP(S) outgoing queue's DIRECT QUEUE_FORMAT whose string separates /MSMQ, PRIVATE$
    and the queue name with '/' where the queue's name has '\\' (spec/choices.yaml
    formats-http-separator: both name the same queue), sent as written."""
    queue = _queue(mgmt, label)
    text = queue["fmt"].value
    head, sep, path = text.partition("/msmq\\")
    assert sep, f"not an HTTP direct name: {text!r}"
    slashed = head + "/msmq/" + path.replace("\\", "/")
    mgmt["queues"][alias] = {"fmt": dataclasses.replace(queue["fmt"], value=slashed),
                             "format_name": "DIRECT=" + slashed}


@given(parsers.re(r'an outgoing queue "(?P<label>[^"]+)" to a remote queue in state '
                  r'(?P<state>\w+) whose OutgoingTransferInfo is$'))
def outgoing_with_transfer_info(mq, mgmt, label, state, datatable):
    """An outgoing queue whose OutgoingTransferInfoReference is an OutgoingTransferInfo with
    the attributes of the table (MS-MQDMPR 3.1.1.4: ``| attribute | value |``, the attribute
    as the document spells it, a SEQUENCE_INFO as an object of SeqID, SeqNo and PrevNo);
    Inconclusive where SUT control cannot make one."""
    info = {_snake(row["attribute"]): _adm(_literal(row["value"], row["attribute"]))
            for row in _rows(datatable)}
    name, fmt = outgoing_queue(mq, state=state, outgoing_transfer_info=info)
    mgmt["queues"][label] = {"fmt": fmt, "format_name": name}


@given(parsers.re(r'an outgoing queue "(?P<label>[^"]+)" to a remote queue in state '
                  r'(?P<state>\w+) whose ConnectionHistory is$'))
def outgoing_with_history(mq, mgmt, label, state, datatable):
    """An outgoing queue whose ConnectionHistory holds one entry per row (MS-MQDMPR 3.1.1.3:
    ``| Status | ConnectionHistoryTime | Error | AddressList |``, a Status by its name);
    Inconclusive where SUT control cannot make one."""
    history = [{_snake(key): text if key == "Status" else _literal(text, key)
                for key, text in row.items()} for row in _rows(datatable)]
    name, fmt = outgoing_queue(mq, state=state, connection_history=history)
    mgmt["queues"][label] = {"fmt": fmt, "format_name": name}


@given(parsers.re(r'an outgoing queue "(?P<label>[^"]+)" to a remote queue in state '
                  r'(?P<state>\w+) with NextHops (?P<hops>\[.*\])$'))
def outgoing_with_next_hops(mq, mgmt, label, state, hops):
    """An outgoing queue whose NextHops are these addresses (MS-MQDMPR 3.1.1.3); Inconclusive
    where SUT control cannot make one."""
    name, fmt = outgoing_queue(mq, state=state, next_hops=_literal(hops, "NextHops"))
    mgmt["queues"][label] = {"fmt": fmt, "format_name": name}


@given(parsers.re(r'a transactional queue "(?P<label>[^"]+)" whose '
                  r'IncomingTransactionalTransferInfoCollection is$'))
def queue_with_incoming_transfers(mq, mgmt, label, datatable):
    """A new transactional queue whose IncomingTransactionalTransferInfoCollection holds one
    element per row (MS-MQDMPR 3.1.1.5: ``| FormatName | SenderIdentifier |
    SequenceIdentifier | SequenceNumber | LastAccessTime | RejectCount |``, a
    SequenceIdentifier as an object of Ordinal and TimeStamp); Inconclusive where SUT control
    cannot set one."""
    _add_local(mq, mgmt, label, [], True)
    texts = ("FormatName", "SenderIdentifier")
    entries = [{_snake(key): text if key in texts else _adm(_literal(text, key))
                for key, text in row.items()} for row in _rows(datatable)]
    incoming_transfers(mq, mgmt["queues"][label]["path"], entries)


@given(parsers.re(r'the client has opened queue "(?P<label>[^"]+)" with (?P<access>\w+)'
                  r'(?P<deny> and MQ_DENY_RECEIVE_SHARE)?$'))
def opened(mq, mgmt, label, access, deny):
    share = c.MQ_DENY_SHARE if deny else c.MQ_DENY_NONE
    mgmt["contexts"][label] = mq.open(_queue(mgmt, label)["fmt"], access=ACCESS[access],
                                      share=share)


@given("the client has read PROPID_MGMT_MSMQ_BYTES_IN_ALL_QUEUES")
def read_bytes_in_all(mq, mgmt):
    mgmt["bytes_before"] = (_value(mq, mgmt, MACHINE, "PROPID_MGMT_MSMQ_BYTES_IN_ALL_QUEUES")
                            .value, mgmt["expected"].apVar[0].value)


@given(parsers.parse('the client has read PROPID_MGMT_QUEUE_BYTES_IN_QUEUE of queue "{label}"'))
def read_queue_bytes(mq, mgmt, label):
    mgmt.setdefault("queue_bytes", {})[label] = _value(
        mq, mgmt, _object(mgmt, f'queue "{label}"'), "PROPID_MGMT_QUEUE_BYTES_IN_QUEUE").value


@given(parsers.re(r'the client has called R_QMMgmtAction "(?P<action>[^"]*)" on '
                  r'(?P<obj>.+)$'))
def has_called_action(mq, mgmt, action, obj):
    _action(mq, mgmt, _object(mgmt, obj), action)
    mq.assert_that(mgmt["observed"].status == 0,
                   f"R_QMMgmtAction {action!r}: {status_text(mgmt['observed'])}",
                   "MS-MQMR/3.1.4.2/R2")


# ------------------------------------------------------------------------------ When

@when("the client asks the machine for all 6 machine properties")
def ask_machine_all(mq, mgmt):
    _get_info(mq, mgmt, MACHINE, sorted(MACHINE_PROPERTIES))


@when(parsers.re(r'the client asks queue "(?P<label>[^"]+)" for all 27 queue properties$'))
def ask_queue_all(mq, mgmt, label):
    _get_info(mq, mgmt, _object(mgmt, f'queue "{label}"'), sorted(QUEUE_PROPERTIES))


@when(parsers.re(r"the client asks the machine for (?P<names>PROPID_MGMT_MSMQ_\w+"
                 r"(?:, PROPID_MGMT_MSMQ_\w+)*)$"))
def ask_machine(mq, mgmt, names):
    _get_info(mq, mgmt, MACHINE, [MACHINE_IDS[n] for n in _names(names)])


@when(parsers.re(r'the client asks queue "(?P<label>[^"]+)" for (?P<names>PROPID_MGMT_QUEUE_'
                 r'\w+(?:, PROPID_MGMT_QUEUE_\w+)*)$'))
def ask_queue(mq, mgmt, label, names):
    _get_info(mq, mgmt, _object(mgmt, f'queue "{label}"'),
              [QUEUE_IDS[n] for n in _names(names)])


@when(parsers.re(r'the client asks queue "(?P<label>[^"]+)" with m_SuffixAndFlags '
                 r'(?P<saf>0x[0-9A-Fa-f]{2}) for (?P<names>PROPID_MGMT_QUEUE_\w+'
                 r'(?:, PROPID_MGMT_QUEUE_\w+)*)$'))
def ask_queue_suffix_and_flags(mq, mgmt, label, saf, names):
    """The queue's MGMT_QUEUE object with the m_SuffixAndFlags octet of its QUEUE_FORMAT set
    to ``saf`` (MS-MQMQ 2.2.7: the suffix type in the low nibble, Flags in the high one)."""
    obj = _object(mgmt, f'queue "{label}"')
    fmt = dataclasses.replace(obj.pQueueFormat, m_SuffixAndFlags=int(saf, 16))
    _get_info(mq, mgmt, dataclasses.replace(obj, pQueueFormat=fmt),
              [QUEUE_IDS[n] for n in _names(names)])


@when(parsers.re(r"the client asks the machine for property identifiers? "
                 r"(?P<ids>\d+(?:, \d+)*)$"))
def ask_machine_ids(mq, mgmt, ids):
    _get_info(mq, mgmt, MACHINE, [int(i) for i in _names(ids)], ids=("MS-MQMR/3.1.4.1/R15",))


@when(parsers.re(r'the client asks queue "(?P<label>[^"]+)" for property identifier '
                 r'(?P<propid>\d+)$'))
def ask_queue_id(mq, mgmt, label, propid):
    _get_info(mq, mgmt, _object(mgmt, f'queue "{label}"'), [int(propid)],
              ids=("MS-MQMR/3.1.4.1/R16",))


@when(parsers.parse("the client asks the machine for PROPID_MGMT_MSMQ_CONNECTED {count:d} "
                    "times in one call"))
def ask_machine_many(mq, mgmt, count):
    _get_info(mq, mgmt, MACHINE, [PROPID_MGMT_MSMQ_CONNECTED] * count)


@when(parsers.parse("the client asks the machine for PROPID_MGMT_MSMQ_CONNECTED with apVar[0] "
                    "of type {vt}"))
def ask_machine_not_null(mq, mgmt, vt):
    _get_info(mq, mgmt, MACHINE, [PROPID_MGMT_MSMQ_CONNECTED], ap_var=(VT_BY_NAME[vt],))


@when(parsers.re(r"the client asks (?P<obj>a MGMT_SESSION object|an MGMT_OBJECT of type \d+|"
                 r"a queue object whose queue format has the undefined suffix type \d+|"
                 r"a queue object without a queue format) for PROPID_MGMT_MSMQ_CONNECTED$"))
def ask_other_object(mq, mgmt, obj):
    target_obj = _object(mgmt, obj)
    if target_obj.type in (1, 2, 3):
        _get_info(mq, mgmt, target_obj, [PROPID_MGMT_MSMQ_CONNECTED])
    else:  # not an MgmtObjectType: the RPC runtime may reject the union's discriminant
        _raw_or_typed(mq, mgmt, c.R_QMMgmtGetInfo(
            pObjectFormat=target_obj, cp=1, aProp=(PROPID_MGMT_MSMQ_CONNECTED,), apVar=(NULL,)))


@when(parsers.re(r"the client asks a MGMT_SESSION object for (?P<name>PROPID_MGMT_QUEUE_\w+)$"))
def ask_session_queue_property(mq, mgmt, name):
    """A queue property asked of an MGMT_SESSION object: refused as a session (MS-MQMR
    3.1.4.1 R14) whichever table the property belongs to."""
    _get_info(mq, mgmt, _object(mgmt, "a MGMT_SESSION object"), [QUEUE_IDS[name]])


#: a management object (``_object``): an MGMT_QUEUE whose QUEUE_FORMAT has the suffix type N
UNDEFINED_SUFFIX = "a queue object whose queue format has the undefined suffix type"
#: a management object (``_object``): an MGMT_QUEUE whose pQueueFormat is NULL
NO_QUEUE_FORMAT = "a queue object without a queue format"
#: queue formats that are well formed on the wire and name no queue Open Queue can open for
#: receive: UNKNOWN (no union arm: MS-MQMQ 2.2.6, 2.2.7); DL, a distribution list (MS-MQMQ
#: 2.2.9 DL_ID: a GUID no list has, no domain): Expand Format Name must resolve it through a
#: directory (MS-MQDMPR 3.1.7.3.8), and a list is never a queue to receive from (3.1.7.1.5)
UNOPENABLE_FORMATS = {
    "UNKNOWN": lambda: QueueFormat(QueueFormatType.QUEUE_FORMAT_TYPE_UNKNOWN),
    "DL": lambda: QueueFormat(QueueFormatType.QUEUE_FORMAT_TYPE_DL,
                              value=DlId(sources.uuid4())),
}


@when(parsers.re(r"the client asks a queue object whose queue format is of type "
                 r"(?P<kind>UNKNOWN|DL) for (?P<name>PROPID_MGMT_QUEUE_\w+)$"))
def ask_unknown_queue_format(mq, mgmt, kind, name):
    """An MGMT_QUEUE object whose QUEUE_FORMAT is well formed on the wire and names nothing
    Open Queue can open (``UNOPENABLE_FORMATS``)."""
    obj = MgmtObject(MgmtObjectType.MGMT_QUEUE, UNOPENABLE_FORMATS[kind]())
    call = c.R_QMMgmtGetInfo(pObjectFormat=obj, cp=1, aProp=(QUEUE_IDS[name],), apVar=(NULL,))
    # not compared with the oracle's MQ_ERROR here: R26's MQ_ERROR is a SHOULD, and a warning
    # there would end the case before the Then steps check the MUSTs (a failure, R10; no
    # exception, 3.1.4 R4)
    mgmt.update(call=call, observed=_via(mq, mgmt).call(call))


@when(parsers.parse("the client calls R_QMMgmtGetInfo on the machine with cp {cp:d} and as "
                    "many elements"))
def get_info_cp(mq, mgmt, cp):
    _raw_or_typed(mq, mgmt, c.R_QMMgmtGetInfo(
        pObjectFormat=MACHINE, cp=cp, aProp=(PROPID_MGMT_MSMQ_CONNECTED,) * cp,
        apVar=(NULL,) * cp))


@when(parsers.parse("the client calls R_QMMgmtGetInfo on the machine with cp {cp:d}, {props:d} "
                    "elements in aProp and {vars:d} in apVar"))
def get_info_mismatch(mq, mgmt, cp, props, vars):  # noqa: A002 - the feature's word
    _raw_or_typed(mq, mgmt, c.R_QMMgmtGetInfo(
        pObjectFormat=MACHINE, cp=cp, aProp=(PROPID_MGMT_MSMQ_CONNECTED,) * props,
        apVar=(NULL,) * vars))


@when(parsers.re(r'the client calls R_QMMgmtAction "(?P<action>[^"]*)" on '
                 r'(?P<obj>.+)$'))
def call_action(mq, mgmt, action, obj):
    target_obj = _object(mgmt, obj)
    if target_obj.type in (1, 2, 3):
        _action(mq, mgmt, target_obj, action)
    else:
        _raw_or_typed(mq, mgmt, c.R_QMMgmtAction(pObjectFormat=target_obj, lpwszAction=action))


@when(parsers.parse('the client closes its handle to queue "{label}"'))
def close_handle(mq, mgmt, label):
    ctx = mgmt["contexts"].pop(label)
    mq.call(c.R_CloseQueue(pphContext=ctx))


@when(parsers.parse('the client purges queue "{label}"'))
def purge(mq, mgmt, label):
    mq.call(c.R_PurgeQueue(phContext=mgmt["contexts"][label]))


@given(parsers.parse('the client has started a two-phase receive from queue "{label}"'))
@when(parsers.parse('the client starts a two-phase receive from queue "{label}"'))
def two_phase_receive(mq, mgmt, label):
    ctx = mgmt["contexts"][label]
    result = mq.receive(ctx, c.MQ_ACTION_RECEIVE, request=0x51)
    mq.assert_that(result.status == 0, f"R_StartReceive: {status_text(result)}")
    mgmt["receive"] = (ctx, 0x51)


@when(parsers.parse('the client peeks at queue "{label}"'))
def peek(mq, mgmt, label):
    result = mq.receive(mgmt["contexts"][label], c.MQ_ACTION_PEEK_CURRENT, request=0x52)
    mq.assert_that(result.status == 0, f"R_StartReceive (peek): {status_text(result)}")


@when("the client acknowledges the receive")
def acknowledge(mq, mgmt):
    ctx, request = mgmt.pop("receive")
    mq.call(c.R_EndReceive(phContext=ctx, dwAck=c.RR_ACK, dwRequestId=request))


@when("the client gives the receive back with RR_NACK")
def give_back(mq, mgmt):
    ctx, request = mgmt.pop("receive")
    mq.call(c.R_EndReceive(phContext=ctx, dwAck=c.RR_NACK, dwRequestId=request))


# ------------------------------------------------------------------------------ Then

@then("R_QMMgmtGetInfo returns MQ_OK with the values the documents give")
def values_as_documented(mq, mgmt):
    _check_values(mq, mgmt)


@then("R_QMMgmtGetInfo fails without setting apVar")
def fails_without_out(mq, mgmt):
    observed, call = mgmt["observed"], mgmt["call"]
    mq.assert_that(is_failure(observed.status) or (observed.raised and observed.status != 0),
                   f"R_QMMgmtGetInfo returned {status_text(observed)}, not a failure",
                   "MS-MQMR/3.1.4.1/R10")
    sent = tuple(call.apVar)
    mq.assert_that(not observed.apVar or tuple(observed.apVar) == sent
                   or all(v.vt == VT_NULL for v in observed.apVar),
                   f"a failed R_QMMgmtGetInfo set apVar to {observed.apVar!r}",
                   "MS-MQMR/3.1.4.1/R10")


@then("R_QMMgmtAction returns MQ_OK")
def action_ok(mq, mgmt):
    mq.assert_that(mgmt["observed"].status == 0,
                   f"R_QMMgmtAction returned {status_text(mgmt['observed'])}", "MS-MQMR/3.1.4.2/R2")


@then("R_QMMgmtAction fails")
def action_fails(mq, mgmt):
    observed = mgmt["observed"]
    mq.assert_that(is_failure(observed.status) or (observed.raised and observed.status != 0),
                   f"R_QMMgmtAction returned {status_text(observed)}, not a failure",
                   "MS-MQMR/3.1.4.2/R4")


@then("the qmmgmt method returns a failure HRESULT without an exception")
def failure_not_thrown(mq, mgmt):
    observed = mgmt["observed"]
    mq.assert_that(not observed.raised and is_failure(observed.status),
                   f"{type(mgmt['call']).__name__} answered {status_text(observed)}: a "
                   f"method does not throw", "MS-MQMR/3.1.4/R4")


@then(parsers.parse('the machine property {name} is "{value}"'))
def machine_property_is(mq, mgmt, name, value):
    got = _value(mq, mgmt, MACHINE, name)
    mq.assert_that(got.value == value, f"{name} is {got.value!r}, not {value!r}")


@then(parsers.parse("the machine property {name} is VT_NULL"))
def machine_property_null(mq, mgmt, name):
    got = _value(mq, mgmt, MACHINE, name)
    mq.assert_that(got.vt == VT_NULL, f"{name} is {got!r}, not VT_NULL", "MS-MQMR/3.1.4.1/R18")


@then(parsers.parse("the machine property {name} is a string"))
def machine_property_string(mq, mgmt, name):
    got = _value(mq, mgmt, MACHINE, name)
    mq.assert_that(got.vt == VT_LPWSTR and isinstance(got.value, str),
                   f"{name} is {got!r}, not a VT_LPWSTR", "MS-MQMR/3.1.4.1/R19")


@then(parsers.parse("the machine property {name} has the value the documents give"))
def machine_property_documented(mq, mgmt, name):
    _value(mq, mgmt, MACHINE, name)


@then(parsers.re(r'queue "(?P<label>[^"]+)" has (?P<name>PROPID_MGMT_QUEUE_\w+) '
                 r'(?:"(?P<text>[^"]*)"|(?P<number>\d+))$'))
def queue_property_is(mq, mgmt, label, name, text, number):
    got = _value(mq, mgmt, _object(mgmt, f'queue "{label}"'), name)
    want = text if text is not None else int(number)
    mq.assert_that(got.value == want, f"{name} of queue {label!r} is {got.value!r}, "
                                      f"not {want!r}")


@then(parsers.re(r'the target\'s queue "(?P<label>[^"]+)" has (?P<name>PROPID_MGMT_QUEUE_\w+) '
                 r'(?P<number>\d+)$'))
def target_queue_property_is(mq, mgmt, label, name, number):
    """The target's value, not compared with the oracle's: where the case sized its messages by
    the target's own storage measure, which the oracle need not share."""
    got = _unchecked(mq, mq.target, _object(mgmt, f'queue "{label}"'), QUEUE_IDS[name])
    value = got.value if isinstance(got, c.PropVariant) else got
    mq.assert_that(value == int(number), f"{name} of queue {label!r} is {value!r}, "
                                         f"not {number}")


@then(parsers.re(r'queue "(?P<label>[^"]+)" has (?P<name>PROPID_MGMT_QUEUE_\w+) of type '
                 r'(?P<vt>VT_\w+(?: \| VT_\w+)?)(?: (?P<value>[^|].*))?$'))
def queue_property_typed(mq, mgmt, label, name, vt, value):
    """The property's VARTYPE and value as the scenario writes them from the documents (a
    VT_BLOB in hex octets, VT_NULL with no value), besides the oracle's."""
    got = _value(mq, mgmt, _object(mgmt, f'queue "{label}"'), name)
    want_vt = _vartype(vt)
    mq.assert_that(got.vt == want_vt, f"{name} of queue {label!r} has the VARTYPE "
                                      f"0x{got.vt:04X}, the documents give {vt} "
                                      f"(0x{want_vt:04X})", "MS-MQMR/3.1.4.1/R7")
    if (want_vt == VT_NULL) != (value is None):
        raise AssertionError(f"the scenario gives {name} a VT_NULL with a value, or another "
                             f"VARTYPE without one")
    if want_vt == VT_NULL:
        return
    want = _written(want_vt, value, name)
    mq.assert_that(_plain(got.vt, got.value) == want,
                   f"{name} of queue {label!r} is {_shown(_plain(got.vt, got.value))}, the "
                   f"documents give {_shown(want)}",
                   EOD_VALUE_IDS if name.startswith("PROPID_MGMT_QUEUE_EOD_") else QUEUE_VALUE_IDS)


@then(parsers.re(r'queue "(?P<label>[^"]+)" has (?P<name>PROPID_MGMT_QUEUE_\w+), a VT_VECTOR '
                 r'\| VT_VARIANT of$'))
def queue_property_vectors(mq, mgmt, label, name, datatable):
    """A VT_VECTOR | VT_VARIANT property whose items are vectors (MS-MQMQ 2.3.12.24,
    2.3.12.25): the table lists its first items in order (``| item | vector of | entries |``:
    the item's name in MS-MQMQ, the VARTYPE of its entries, and the entries), each checked for
    its VARTYPE and entries; the oracle checks the whole value."""
    got = _value(mq, mgmt, _object(mgmt, f'queue "{label}"'), name)
    mq.assert_that(got.vt == VT_VECTOR | VT_VARIANT,
                   f"{name} of queue {label!r} has the VARTYPE 0x{got.vt:04X}, the documents "
                   f"give VT_VECTOR | VT_VARIANT (0x{VT_VECTOR | VT_VARIANT:04X})",
                   "MS-MQMR/3.1.4.1/R7")
    items, rows = list(got.value or []), _rows(datatable)
    mq.assert_that(len(items) >= len(rows), f"{name} of queue {label!r} holds {len(items)} "
                                            f"items, fewer than the {len(rows)} the documents "
                                            f"give first", QUEUE_VALUE_IDS)
    for index, (item, row) in enumerate(zip(items, rows, strict=False)):
        what = f"{name} of queue {label!r}, item {index} ({row['item']})"
        want_vt = VT_VECTOR | _vartype(row["vector of"])
        vt = item.vt if isinstance(item, c.PropVariant) else None
        mq.assert_that(vt == want_vt, f"{what}: the VARTYPE "
                                      f"{'none' if vt is None else f'0x{vt:04X}'}, the "
                                      f"documents give VT_VECTOR | {row['vector of']} "
                                      f"(0x{want_vt:04X})", "MS-MQMR/3.1.4.1/R7")
        want = _written(want_vt, row["entries"], what)
        mq.assert_that(_plain(item.vt, item.value) == want,
                       f"{what}: {_shown(_plain(item.vt, item.value))}, the documents give "
                       f"{_shown(want)}", QUEUE_VALUE_IDS)


#: errata tidy-purges-queues: the two readings of TIDY (``mqconform spec errata``)
TIDY_READINGS = {"purged": "MS-MQMR 3.1.4.2's processing rules: every queue purged",
                 "kept": "3.1.4.2's action table: only empty message files cleaned up, every "
                         "message kept"}


def _tidy_reading(mq, mgmt: dict, reading: str) -> None:
    """Both readings pass, but one case holds the server to one: the first check that tells
    them apart fixes it, and the case says which one the server follows."""
    seen = mgmt.setdefault("readings", {}).setdefault("tidy-purges-queues", reading)
    mq.assert_that(seen == reading, f"TIDY: the queues read as {seen} before and as {reading} "
                                    f"now; neither reading allows both (errata "
                                    f"tidy-purges-queues)", "MS-MQMR/3.1.4.2/R17")
    if reading == seen and not mgmt.get("tidy_said"):
        mgmt["tidy_said"] = True
        mq.record.messages.append(f"errata tidy-purges-queues: the server follows "
                                  f"{TIDY_READINGS[reading]}")


@then(parsers.re(r'queue "(?P<label>[^"]+)" has PROPID_MGMT_QUEUE_MESSAGE_COUNT '
                 r'(?P<purged>\d+), or (?P<kept>\d+) where TIDY keeps the messages$'))
def message_count_after_tidy(mq, mgmt, label, purged, kept):
    """Errata tidy-purges-queues: MS-MQMR 3.1.4.2's rules purge every queue on TIDY; its table
    calls TIDY a clean-up of empty message files, which keeps every message. The count is read
    without the oracle (which purges) and must be one reading's, the same one for the case."""
    value = _unchecked(mq, _via(mq, mgmt), _object(mgmt, f'queue "{label}"'),
                       QUEUE_IDS["PROPID_MGMT_QUEUE_MESSAGE_COUNT"])
    now = value.value if isinstance(value, c.PropVariant) else None
    readings = {int(purged): "purged", int(kept): "kept"}
    mq.assert_that(now in readings,
                   f"PROPID_MGMT_QUEUE_MESSAGE_COUNT of queue {label!r} is {now!r} after TIDY: "
                   f"{purged} if TIDY purges the queues, {kept} if it keeps the messages "
                   f"(errata tidy-purges-queues)", "MS-MQMR/3.1.4.2/R17")
    _tidy_reading(mq, mgmt, readings[now])


@then(parsers.parse('queue "{label}" has PROPID_MGMT_QUEUE_BYTES_IN_QUEUE 0 if TIDY purged it'))
def bytes_after_tidy(mq, mgmt, label):
    """Errata tidy-purges-queues: 0 where the case saw TIDY purge; a positive count where it
    saw TIDY keep the messages."""
    value = _unchecked(mq, _via(mq, mgmt), _object(mgmt, f'queue "{label}"'),
                       QUEUE_IDS["PROPID_MGMT_QUEUE_BYTES_IN_QUEUE"])
    now = value.value if isinstance(value, c.PropVariant) else None
    reading = mgmt.get("readings", {}).get("tidy-purges-queues", "purged")
    ok = now == 0 if reading == "purged" else isinstance(now, int) and now > 0
    mq.assert_that(ok, f"PROPID_MGMT_QUEUE_BYTES_IN_QUEUE of queue {label!r} is {now!r} after a "
                       f"TIDY that {reading} the messages (errata tidy-purges-queues)",
                   "MS-MQMR/3.1.4.1/R20")


@then(parsers.parse('PROPID_MGMT_QUEUE_BYTES_IN_QUEUE of queue "{label}" is what it was'))
def queue_bytes_unchanged(mq, mgmt, label):
    """Errata total-bytes (``mqconform spec errata``): MS-MQDMPR 3.1.1.2 defines TotalBytes as
    the bytes of the messages in the queue, so a NACK changes nothing; 3.1.7.2.2 read
    literally adds the message's size again at each NACK. Both readings pass; the case says
    which one the server follows. The value is read without the oracle, which keeps 3.1.1.2."""
    before = mgmt["queue_bytes"][label]
    value = _unchecked(mq, _via(mq, mgmt), _object(mgmt, f'queue "{label}"'),
                       QUEUE_IDS["PROPID_MGMT_QUEUE_BYTES_IN_QUEUE"])
    now = value.value if isinstance(value, c.PropVariant) else None
    mq.assert_that(isinstance(now, int) and now >= before,
                   f"PROPID_MGMT_QUEUE_BYTES_IN_QUEUE of queue {label!r} went from {before} to "
                   f"{now!r} with the same messages in it: neither reading of TotalBytes "
                   f"allows that (errata total-bytes)", "MS-MQMR/3.1.4.1/R20")
    reading = ("MS-MQDMPR 3.1.1.2: the bytes of the messages present" if now == before else
               f"MS-MQDMPR 3.1.7.2.2 read literally: {now - before} bytes added by the NACKs")
    mq.record.messages.append(f"errata total-bytes: the server follows {reading}")


@then(parsers.parse('PROPID_MGMT_QUEUE_BYTES_IN_JOURNAL of queue "{label}" is what '
                    'PROPID_MGMT_QUEUE_BYTES_IN_QUEUE lost'))
def journal_bytes_are_the_received_bytes(mq, mgmt, label):
    """The queue journal holds a copy of each message received (errata queue-journal): the
    copies take the bytes the messages took in the queue (MS-MQDMPR 3.1.7.2.1 and 3.1.7.2.2
    count the storage of a message's headers and body, which a copy shares). Both counts are
    read from the target and compared with each other, not with the model's measure of a
    message's size (spec/choices.yaml consumed-storage-size)."""
    before = mgmt["queue_bytes"][label]
    obj = _object(mgmt, f'queue "{label}"')
    values = [_unchecked(mq, _via(mq, mgmt), obj, QUEUE_IDS[name]) for name in
              ("PROPID_MGMT_QUEUE_BYTES_IN_QUEUE", "PROPID_MGMT_QUEUE_BYTES_IN_JOURNAL")]
    now, journal = (v.value if isinstance(v, c.PropVariant) else None for v in values)
    mq.assert_that(isinstance(now, int) and isinstance(journal, int)
                   and journal == before - now > 0,
                   f"PROPID_MGMT_QUEUE_BYTES_IN_JOURNAL of queue {label!r} is {journal!r}; the "
                   f"messages received took {before} - {now!r} bytes in the queue, which their "
                   f"copies in the queue journal take", "MS-MQMR/3.1.4.1/R20")


@then(parsers.parse('every queue property of queue "{label}" has the value the documents give'))
def every_queue_property(mq, mgmt, label):
    _get_info(mq, mgmt, _object(mgmt, f'queue "{label}"'), sorted(QUEUE_PROPERTIES))
    _check_values(mq, mgmt)


@then(parsers.re(r'the machine (?P<neg>lists|does not list) queue "(?P<label>[^"]+)" in '
                 r'(?P<name>PROPID_MGMT_MSMQ_\w+)$'))
def machine_lists(mq, mgmt, neg, label, name):
    call, observed = mgmt["call"], mgmt["observed"]
    index = list(call.aProp).index(MACHINE_IDS[name])
    listed = _lists(observed.apVar[index].value, _queue(mgmt, label)["path"])
    mq.assert_that(listed == (neg == "lists"), f"{name} {'lists' if listed else 'omits'} "
                                               f"queue {label!r}", "MS-MQMR/3.1.4.1/R18")


@then(parsers.parse("PROPID_MGMT_MSMQ_BYTES_IN_ALL_QUEUES grew by "
                    'PROPID_MGMT_QUEUE_BYTES_IN_QUEUE of queue "{label}"'))
def bytes_grew(mq, mgmt, label):
    before, oracle_before = mgmt["bytes_before"]
    after, oracle_after = mgmt["observed"].apVar[0].value, mgmt["expected"].apVar[0].value
    queue_bytes = _value(mq, mgmt, _object(mgmt, f'queue "{label}"'),
                         "PROPID_MGMT_QUEUE_BYTES_IN_QUEUE").value
    mq.assert_that(after - before == queue_bytes == oracle_after - oracle_before,
                   f"PROPID_MGMT_MSMQ_BYTES_IN_ALL_QUEUES went from {before} to {after}; the "
                   f"queue made in between holds {queue_bytes} bytes (the model: "
                   f"{oracle_after - oracle_before})", "MS-MQMR/3.1.4.1/R18")


# ------------------------------------------------------------------------------ RPC runtime

class _RawQmmgmt:
    """A qmmgmt binding of its own on an RpcTarget's endpoint (a new TCP connection), for the
    steps about the bind; ``call`` sends typed calls on it."""

    def __init__(self, target: RpcTarget, interface: tuple[str, str],
                 syntax: tuple[str, str]):
        from impacket.uuid import uuidtup_to_bin

        client = target.client
        host, port = client.endpoint.host, client._port(c.QMMGMT)
        self.recorder = getattr(target, "recorder", None)
        # authenticated as the suite's own client is, on a target that requires it
        credentials = getattr(client, "credentials", None)
        try:
            self.dce = wc._open_dce(host, port, client.timeout, self.recorder, credentials)
        except TypeError:  # a wire client that records nothing
            self.recorder = None
            self.dce = wc._open_dce(host, port, client.timeout, credentials=credentials)
        try:
            self.dce.bind(uuidtup_to_bin(interface), transfer_syntax=syntax)
        except Exception as exc:  # noqa: BLE001 - the refusal is the result
            self.close()
            raise ConnectionRefusedError(" ".join(str(exc).split())) from None
        self.syntax = self.dce.transfer_syntax

    def call(self, typed_call: c.Call) -> c.Result:
        mark = self.recorder.mark() if self.recorder is not None else None
        self.dce.call(typed_call.opnum, encode_request(typed_call, False))
        try:
            answer = self.dce.recv()
        except wc._Fault as fault:
            return c.RESULTS[type(typed_call)](status=fault.status, raised=True)
        finally:
            if mark is not None:
                self.recorder.note_call(mark)
        return decode_response(type(typed_call), answer, False)

    def close(self) -> None:
        try:
            self.dce.disconnect()
        except Exception:  # noqa: BLE001
            pass


def _bind(mq, mgmt: dict, interface: tuple[str, str], syntax: tuple[str, str]) -> None:
    target = mq.target
    if not isinstance(target, RpcTarget):
        # the in-process model: what its server registers with the runtime
        settings = QMMGMT_RPC_SETTINGS
        wanted = {NDR_SYNTAX: "NDR", NDR64_SYNTAX: "NDR64"}[syntax]
        ok = (uuid.UUID(interface[0]) == settings.uuid
              and interface[1] == "{}.{}".format(*settings.version)
              and wanted in settings.transfer_syntaxes)
        mgmt["bind"] = ("accepted", wanted) if ok else ("refused", "not registered")
        return
    try:
        raw = _RawQmmgmt(target, interface, syntax)
    except ConnectionRefusedError as exc:
        mgmt["bind"] = ("refused", str(exc))
        return
    from impacket.uuid import uuidtup_to_bin

    mgmt.setdefault("connections", []).append(raw)
    mgmt["via"] = raw
    mgmt["bind"] = ("accepted", "NDR64" if raw.syntax == uuidtup_to_bin(NDR64_SYNTAX)
                    else "NDR")


@when(parsers.parse("the client binds the interface {uid} version {version}"))
def bind_interface(mq, mgmt, uid, version):
    _bind(mq, mgmt, (uid, version), NDR_SYNTAX)
    mq.assert_that(mgmt["bind"][0] == "accepted",
                   f"the bind to {uid} v{version} was refused: {mgmt['bind'][1]}",
                   "MS-MQMR/2.1/R1")


@when(parsers.parse("the client binds the qmmgmt interface offering only the {syntax} "
                    "transfer syntax"))
def bind_syntax(mq, mgmt, syntax):
    _bind(mq, mgmt, (str(c.QMMGMT_UUID), "1.0"),
          {"NDR": NDR_SYNTAX, "NDR64": NDR64_SYNTAX}[syntax])


@then("the server refuses the presentation context")
def bind_refused(mq, mgmt):
    mq.assert_that(mgmt["bind"][0] == "refused",
                   f"the bind offering only NDR64 was {mgmt['bind']}", "MS-MQMR/2.2/R1")


@then("the server accepts the presentation context with NDR")
def bind_accepted(mq, mgmt):
    mq.assert_that(mgmt["bind"] == ("accepted", "NDR"),
                   f"the bind offering NDR was {mgmt['bind']}", "MS-MQMR/2.2/R1")


@when("the client establishes a new RPC connection to the qmmgmt interface")
def new_connection(mq, mgmt):
    mgmt["via"] = mq.second()


def _stub(cp: int, props: int, vars_: int) -> bytes:
    """An NDR stub of R_QMMgmtGetInfo on MGMT_MACHINE whose arrays announce ``props`` and
    ``vars_`` elements (VT_NULL PROPVARIANTs) whatever ``cp`` says."""
    def encoded(n: int) -> bytes:
        return encode_request(c.R_QMMgmtGetInfo(
            pObjectFormat=MACHINE, cp=n, aProp=(PROPID_MGMT_MSMQ_CONNECTED,) * n,
            apVar=(NULL,) * n), False)

    head = struct.pack("<HHI", 1, 1, 0) + struct.pack("<I", cp)
    a_prop = struct.pack("<I", props) + struct.pack("<I", PROPID_MGMT_MSMQ_CONNECTED) * props
    # apVar as the encoder lays it out for vars_ elements: from its conformance on
    full = encoded(vars_)
    start = 12 + 4 + 4 * vars_
    ap_var = full[start:]
    body = head + a_prop
    pad = (-(len(body) + 4)) % 8  # the PROPVARIANTs start on 8 after the conformance
    own_pad = (-(start + 4)) % 8
    return body + ap_var[:4] + b"\0" * pad + ap_var[4 + own_pad:]


def _raw_or_typed(mq, mgmt: dict, call: c.Call) -> c.Result:
    """Send a call the encoder may refuse to build: over RPC as raw octets when the stub
    itself is malformed (its arrays disagree with cp, a type outside MgmtObjectType), on the
    model as the typed call."""
    target = mq.target
    observed = None
    if isinstance(target, RpcTarget):
        try:
            observed = target.call(call)
        except EncodeError:
            observed = None
        if observed is None and isinstance(call, c.R_QMMgmtGetInfo):
            observed = _send_raw(target, call.opnum,
                                 _stub(call.cp, len(call.aProp), len(call.apVar)))
        if observed is None:
            raise CaseFailed(f"cannot encode {call}")
    else:
        observed = target.call(call)
    outcome = _oracle_call(mq, call)
    mgmt.update(call=call, observed=observed, expected=outcome.result, outcome=outcome)
    mq.check(outcome, observed, call=call)
    return observed


def _send_raw(target: RpcTarget, opnum: int, stub: bytes) -> c.Result:
    recorder = getattr(target, "recorder", None)
    mark = recorder.mark() if recorder is not None else None
    assoc = target.client._association(c.QMMGMT)
    assoc.dce.call(opnum, stub)
    try:
        answer = assoc.dce.recv()
    except wc._Fault as fault:
        return c.R_QMMgmtGetInfoResult(status=fault.status, raised=True)
    finally:
        if mark is not None:  # the frames, for the call record (wire.pcap)
            recorder.note_call(mark)
    return decode_response(c.R_QMMgmtGetInfo, answer, False)


@when(parsers.parse("the client sends R_QMMgmtGetInfo with cp {cp:d} and array conformances "
                    "{props:d} and {vars:d}"))
def send_inconsistent(mq, mgmt, cp, props, vars):  # noqa: A002
    call = c.R_QMMgmtGetInfo(pObjectFormat=MACHINE, cp=cp,
                             aProp=(PROPID_MGMT_MSMQ_CONNECTED,) * props, apVar=(NULL,) * vars)
    if isinstance(mq.target, RpcTarget):
        observed = _send_raw(mq.target, 0, _stub(cp, props, vars))
    else:
        mq.assert_that(QMMGMT_RPC_SETTINGS.strict_ndr_consistency_check_target_level == "6.0",
                       "the model's server does not ask for strict NDR checks at level 6.0",
                       "MS-MQMR/3.1.4/R1")
        observed = mq.target.call(call)
    outcome = _oracle_call(mq, call)
    mgmt.update(call=call, observed=observed, expected=outcome.result, outcome=outcome)
    mq.check(outcome, observed, call=call)


@when("the client sends R_QMMgmtGetInfo whose apVar[0] is a VT_BLOB of 4 octets with a NULL "
      "pointer")
def send_null_blob(mq, mgmt):
    call = c.R_QMMgmtGetInfo(pObjectFormat=MACHINE, cp=1, aProp=(PROPID_MGMT_MSMQ_CONNECTED,),
                             apVar=(c.PropVariant(VT_BLOB, b"\xab" * 4),))
    if isinstance(mq.target, RpcTarget):
        stub = encode_request(call, False)
        # cbSize 4, then the referent of pBlobData (nonzero), then the deferred array
        at = stub.rindex(struct.pack("<I", 4), 0, len(stub) - 12)
        stub = stub[:at + 4] + b"\0\0\0\0"  # a NULL pointer, no array
        observed = _send_raw(mq.target, 0, stub)
    else:
        mq.assert_that(QMMGMT_RPC_SETTINGS.reject_null_pointer_with_nonzero_conformant_value,
                       "the model's server does not ask the runtime to reject NULL pointers "
                       "with a nonzero conformant value", "MS-MQMR/3.1.4/R2")
        observed = mq.target.call(call)
    outcome = _oracle_call(mq, call)
    mgmt.update(call=call, observed=observed, expected=outcome.result, outcome=outcome)
    mq.check(outcome, observed, call=call)


@then("the RPC runtime rejects the qmmgmt call")
def runtime_rejects(mq, mgmt):
    observed = mgmt["observed"]
    if isinstance(mq.target, RpcTarget):
        mq.assert_that(observed.raised and observed.status != 0,
                       f"the malformed stub was answered {status_text(observed)}, not "
                       f"rejected with an RPC fault")
    else:
        mq.assert_that(is_failure(observed.status), f"answered {status_text(observed)}")
