"""An independent fault corpus: clean captures with one server answer (or request) edited in
place, to measure the recall of ``mqconform captures validate`` on faults nobody seeded in a
server.

    python -m mqconform.conformance.faultcorpus OUT [CLEAN...]   (default: the golden pcaps)

Each *fault kind* (``KINDS``) names what a departing server does, the requirement IDs whose
sentences it breaks (a violation with any of them, at the edited call, counts as the fault
found), and how to find a place for it in a clean capture (a *site*: one call, and the octets
of its stub to overwrite). The builder decodes each clean capture (captures/decode.py), runs
the observer over it (the clean capture's own client violations say where a client used a
closed handle, cursor or dwRequestId: places where a server answer must be a failure), asks
each kind for its sites and writes, for each site, a copy of the capture with that one call's
stub changed: ``OUT/<kind>/<NN>-<capture>.pcap``. ``OUT/labels.json`` lists every faulty call
(capture, connection, call_id, frames, kind, requirements).

The edits keep the framing valid: only single-fragment PDUs without an authentication trailer
are edited, each edit overwrites octets of the stub with as many octets (a status, a
pSequenceId, a context handle), so frag_length, the TCP segments and the IP lengths stay as
they were; the TCP checksum of each edited segment is recomputed (RFC 1071) when the original
one was right. Only classic pcap files are edited (the golden pcaps are).

None of these kinds is one of server/faults.py's seeded faults: those make the synthetic
corpus (conformance/synth.py); these are made without any server, from the golden vectors.

Departures that are not kinds here, because no capture proves them: an R_EndReceive that
fails for a receive still pending (the Pending Request Cleanup Timer may have removed the
entry; its duration is implementation-dependent, MS-MQRR 3.1.2.2), a wrong but valid port
from R_GetServerPort (the call itself comes over a dynamic endpoint, MS-MQRR 3.1.4.1 note
<13>, so the connection's port is no witness), and a peek that removes its message (a later
"not found" may be a local consumer, an expiry or a lock the capture does not show).
"""

from __future__ import annotations

import json
import shutil
import struct
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mqconform.captures import decode as capdecode
from mqconform.captures import expected
from mqconform.model import calls as c
from mqconform.model.formats import MgmtObjectType
from mqconform.model.mqrr import PEEK_ACTIONS, RECEIVE_ACTIONS
from mqconform.model.observer import CLOSED_HANDLE_RULES, STATUS_RULES, observe
from mqconform.model.status import (
    MQ_ERROR_INVALID_HANDLE,
    MQ_INFORMATION_OPERATION_PENDING,
    MQ_INFORMATION_PROPERTY,
    MQ_OK,
)
from mqconform.wire.dcerpc import PFC_FIRST_FRAG, PFC_LAST_FRAG, PFC_OBJECT_UUID, PType

GOLDEN = Path(__file__).resolve().parent.parent / "captures" / "golden"

S_FALSE = 0x00000001  # a success HRESULT other than S_OK (MS-ERREF 2.1)
UNDOCUMENTED = 0x12345678  # a success-severity code no document gives

PFC_FIRST_LAST = PFC_FIRST_FRAG | PFC_LAST_FRAG


# ------------------------------------------------------------------------------ kinds


@dataclass(frozen=True)
class Edit:
    """Octets to write over a stub: ``side`` request or response, ``offset`` from the stub's
    start (negative: from its end, -4 is an HRESULT's place)."""

    side: str
    offset: int
    data: bytes


@dataclass(frozen=True)
class Site:
    call: Any  # the decoded call (captures/decode.py Call)
    edits: tuple[Edit, ...]
    detail: str = ""


@dataclass
class Clean:
    """One clean capture as the finders see it: its calls in order and what the observer
    says about them (client violations mark the calls that broke a client rule)."""

    path: Path
    calls: list
    violations: list
    by_rule: dict = field(default_factory=dict)  # requirement -> [(connection, call_id)]

    def flagged(self, requirement: str) -> set:
        return set(self.by_rule.get(requirement, ()))


@dataclass(frozen=True)
class Kind:
    name: str
    requirements: tuple[str, ...]
    what: str
    find: Callable[[Clean], Iterator[Site]]


def _status(code: int) -> Edit:
    return Edit("response", -4, struct.pack("<I", code))


def _sequence(value: int) -> Edit:
    return Edit("response", 8, struct.pack("<Q", value))  # pSequenceId @8, NDR and NDR64


def _answered(call: Any) -> bool:
    return call.status is not None and call.fault is None and call.decode_error is None


def _method(name: str) -> Callable[[Any], bool]:
    return lambda call: call.method == name


def _status_kind(method: type, code: int, label: str) -> Kind:
    rule, success = STATUS_RULES[method]

    def find(clean: Clean) -> Iterator[Site]:
        for call in clean.calls:
            if call.method == method.__name__ and _answered(call):
                yield Site(call, (_status(code),), f"status 0x{call.status:08X} -> 0x{code:08X}")
    return Kind(f"{label}-{method.__name__}", (rule, success),
                f"{method.__name__} answers 0x{code:08X}, neither MQ_OK nor a failure HRESULT",
                find)


def _opened(clean: Clean) -> dict:
    """result handle -> its R_OpenQueue / R_OpenQueueForMove call (successful ones)."""
    out = {}
    for call in clean.calls:
        if call.method in ("R_OpenQueue", "R_OpenQueueForMove") and call.status == MQ_OK \
                and call.result_handle:
            out[call.result_handle] = call
    return out


def _failed_where(rule: str, method: str | None = None,
                  open_handle: bool = False) -> Callable[[Clean], Iterator[Site]]:
    """Calls the clean capture's client broke ``rule`` with and the server refused: made to
    succeed. ``open_handle``: only on a handle the client had not closed (a success on a
    closed handle is the closed-handle kind's fault)."""
    def find(clean: Clean) -> Iterator[Site]:
        marked = clean.flagged(rule)
        if open_handle:
            marked -= {key for m in CLOSED_HANDLE_RULES.values() for key in clean.flagged(m[1])}
        for call in clean.calls:
            if ((call.connection, call.call_id) in marked and _answered(call)
                    and call.status & 0x80000000 and (method is None or call.method == method)):
                yield Site(call, (_status(MQ_OK),), f"status 0x{call.status:08X} -> MQ_OK")
    return find


def _closed_handle_kind(method: type) -> Kind:
    server_rule, client_rule = CLOSED_HANDLE_RULES[method]
    return Kind(f"closed-handle-ok-{method.__name__}", (server_rule,),
                f"{method.__name__} answers MQ_OK on a handle R_CloseQueue closed",
                _failed_where(client_rule, method.__name__))


def _open_null(clean: Clean) -> Iterator[Site]:
    for call in clean.calls:
        if call.method == "R_OpenQueue" and call.status == MQ_OK and call.result_handle:
            yield Site(call, (Edit("response", 0, bytes(20)),), "pphContext -> NULL")


def _open_twice(clean: Clean) -> Iterator[Site]:
    """A second R_OpenQueue answered with the handle of one still open."""
    live: dict[str, Any] = {}
    for call in clean.calls:
        if call.method == "R_CloseQueue" and call.status == MQ_OK and call.handle:
            live.pop(call.handle, None)
        if call.method in ("R_OpenQueue", "R_OpenQueueForMove") and call.status == MQ_OK \
                and call.result_handle:
            earlier = [h for h, o in live.items() if o.response_time < call.request_time]
            if earlier and call.method == "R_OpenQueue":
                yield Site(call, (Edit("response", 0, bytes.fromhex(earlier[0])),),
                           f"pphContext -> {earlier[0][:16]}... (open since call_id "
                           f"{live[earlier[0]].call_id})")
            live[call.result_handle] = call


def _receive_on_peek_handle(clean: Clean) -> Iterator[Site]:
    opened = _opened(clean)
    for call in clean.calls:
        o = opened.get(call.handle)
        if (call.method == "R_StartReceive" and o is not None and o.access != c.RECEIVE_ACCESS
                and call.action in RECEIVE_ACTIONS and _answered(call)
                and call.status != MQ_OK):
            yield Site(call, (_status(MQ_OK),),
                       f"receive on a dwAccess 0x{o.access:08X} handle: 0x{call.status:08X} -> "
                       f"MQ_OK")


def _transactional_peek(clean: Clean) -> Iterator[Site]:
    for call in clean.calls:
        if (call.method == "R_StartTransactionalReceive" and call.action in PEEK_ACTIONS
                and _answered(call) and call.status != MQ_OK):
            yield Site(call, (_status(MQ_OK),), f"0x{call.status:08X} -> MQ_OK")


def _lookup_other(method: str, action: int) -> Callable[[Clean], Iterator[Site]]:
    def find(clean: Clean) -> Iterator[Site]:
        for call in clean.calls:
            if (call.method == method and call.action == action and call.status == MQ_OK
                    and _answered(call) and call.sequence_id):
                other = call.sequence_id ^ 0x5A5A
                yield Site(call, (_sequence(other),),
                           f"pSequenceId {call.sequence_id} -> {other}")
    return find


def _purge_wrong_denial(clean: Clean) -> Iterator[Site]:
    opened = _opened(clean)
    for call in clean.calls:
        o = opened.get(call.handle)
        if (call.method == "R_PurgeQueue" and o is not None and o.access != c.RECEIVE_ACCESS
                and o.connection == call.connection and _answered(call)
                and call.status == 0xC0000022):
            yield Site(call, (_status(MQ_ERROR_INVALID_HANDLE),),
                       "STATUS_ACCESS_DENIED -> MQ_ERROR_INVALID_HANDLE")


def _purge_keeps(clean: Clean) -> Iterator[Site]:
    """After a successful purge on a handle, a receive or peek on it that found nothing is
    made to return a message the handle returned before the purge."""
    seen: dict[str, dict[int, float]] = {}
    purged: dict[str, tuple[Any, dict[int, float]]] = {}
    for call in clean.calls:
        h = call.handle
        if call.method in ("R_StartReceive", "R_StartTransactionalReceive") and h:
            if (h in purged and _answered(call) and call.status != MQ_OK
                    and call.request_time > purged[h][0].response_time
                    and call.lookup_id in (0, None) and not call.cursor):
                lookup = sorted(purged[h][1])[0]
                yield Site(call, (_status(MQ_OK), _sequence(lookup)),
                           f"0x{call.status:08X} -> MQ_OK with message {lookup}, returned before "
                           f"the purge of call_id {purged[h][0].call_id}")
            elif call.status == MQ_OK and call.sequence_id:
                seen.setdefault(h, {})[call.sequence_id] = call.response_time
        if call.method == "R_PurgeQueue" and call.status == MQ_OK and seen.get(h):
            before = {k: t for k, t in seen[h].items() if t < call.request_time}
            if before:
                purged[h] = (call, before)


def _mgmt_session(method: str) -> Callable[[Clean], Iterator[Site]]:
    def find(clean: Clean) -> Iterator[Site]:
        for call in clean.calls:
            if (call.method == method and call.object_type == MgmtObjectType.MGMT_SESSION
                    and _answered(call) and call.status != MQ_OK):
                yield Site(call, (_status(MQ_OK),), f"0x{call.status:08X} -> MQ_OK")
    return find


KINDS: tuple[Kind, ...] = (
    # the return values of each method: a status neither MQ_OK nor a failure HRESULT
    _status_kind(c.R_CloseQueue, S_FALSE, "s-false"),
    _status_kind(c.R_CreateCursor, UNDOCUMENTED, "undocumented-status"),
    _status_kind(c.R_CloseCursor, MQ_INFORMATION_PROPERTY, "information-status"),
    _status_kind(c.R_PurgeQueue, S_FALSE, "s-false"),
    _status_kind(c.R_StartReceive, UNDOCUMENTED, "undocumented-status"),
    _status_kind(c.R_CancelReceive, MQ_INFORMATION_OPERATION_PENDING, "information-status"),
    _status_kind(c.R_EndReceive, S_FALSE, "s-false"),
    _status_kind(c.R_MoveMessage, UNDOCUMENTED, "undocumented-status"),
    _status_kind(c.R_QMEnlistRemoteTransaction, S_FALSE, "s-false"),
    _status_kind(c.R_StartTransactionalReceive, MQ_INFORMATION_PROPERTY, "information-status"),
    _status_kind(c.R_SetUserAcknowledgementClass, UNDOCUMENTED, "undocumented-status"),
    _status_kind(c.R_EndTransactionalReceive, S_FALSE, "s-false"),
    _status_kind(c.R_QMMgmtGetInfo, UNDOCUMENTED, "undocumented-status"),
    _status_kind(c.R_QMMgmtAction, S_FALSE, "s-false"),
    # handles, cursors and pending requests the server must not find
    Kind("open-null-handle", ("MS-MQRR/3.1.4.2/R19",),
         "R_OpenQueue succeeds with a NULL pphContext", _open_null),
    Kind("open-handle-already-open", ("MS-MQDMPR/3.1.7.1.5/R21",),
         "R_OpenQueue answers with the handle of another descriptor still open", _open_twice),
    *(_closed_handle_kind(m) for m in (
        c.R_CloseQueue, c.R_CreateCursor, c.R_CloseCursor, c.R_PurgeQueue, c.R_StartReceive,
        c.R_CancelReceive, c.R_EndReceive, c.R_MoveMessage, c.R_StartTransactionalReceive,
        c.R_SetUserAcknowledgementClass, c.R_EndTransactionalReceive)),
    Kind("end-receive-not-pending-ok", ("MS-MQRR/3.1.4.9/R14",),
         "R_EndReceive answers MQ_OK for a dwRequestId no receive on the handle used",
         _failed_where("MS-MQRR/3.1.4.9/R9", "R_EndReceive", open_handle=True)),
    Kind("end-transactional-receive-not-pending-ok", ("MS-MQRR/3.1.4.15/R14",),
         "R_EndTransactionalReceive answers MQ_OK for a dwRequestId no receive used",
         _failed_where("MS-MQRR/3.1.4.15/R9", "R_EndTransactionalReceive",
                       open_handle=True)),
    Kind("close-cursor-twice-ok", ("MS-MQRR/3.1.4.5/R13",),
         "R_CloseCursor answers MQ_OK for a cursor already closed",
         _failed_where("MS-MQRR/3.1.4.5/R7", "R_CloseCursor", open_handle=True)),
    Kind("receive-closed-cursor-ok", ("MS-MQRR/3.1.4.7/R53",),
         "R_StartReceive answers MQ_OK with a cursor R_CloseCursor closed",
         _failed_where("MS-MQRR/3.1.4.5/R7", "R_StartReceive", open_handle=True)),
    # what the open granted
    Kind("receive-on-peek-handle", ("MS-MQRR/3.1.4.7/R6",),
         "R_StartReceive removes a message through a handle opened for PEEK_ACCESS",
         _receive_on_peek_handle),
    Kind("purge-denied-with-wrong-code", ("MS-MQRR/3.1.4.6/R14",),
         "R_PurgeQueue on a handle without receive access fails, but not with "
         "STATUS_ACCESS_DENIED", _purge_wrong_denial),
    Kind("transactional-peek-ok", ("MS-MQRR/3.1.4.13/R69",),
         "R_StartTransactionalReceive succeeds for a peek action", _transactional_peek),
    # what a receive returns
    Kind("lookup-peek-returns-another", ("MS-MQRR/3.1.4.7/R17",),
         "MQ_LOOKUP_PEEK_CURRENT returns another message than the LookupId names",
         _lookup_other("R_StartReceive", c.MQ_LOOKUP_PEEK_CURRENT)),
    Kind("lookup-receive-returns-another", ("MS-MQRR/3.1.4.7/R17",),
         "MQ_LOOKUP_RECEIVE_CURRENT returns another message than the LookupId names",
         _lookup_other("R_StartReceive", c.MQ_LOOKUP_RECEIVE_CURRENT)),
    Kind("transactional-lookup-returns-another", ("MS-MQRR/3.1.4.13/R15",),
         "a transactional MQ_LOOKUP_RECEIVE_CURRENT returns another message",
         _lookup_other("R_StartTransactionalReceive", c.MQ_LOOKUP_RECEIVE_CURRENT)),
    Kind("purge-keeps-messages", ("MS-MQRR/3.1.4.6/R11",),
         "after R_PurgeQueue succeeded, a message the handle saw before is returned again",
         _purge_keeps),
    # qmmgmt
    Kind("mgmt-getinfo-session-ok", ("MS-MQMR/3.1.4.1/R14",),
         "R_QMMgmtGetInfo succeeds for MGMT_SESSION", _mgmt_session("R_QMMgmtGetInfo")),
    Kind("mgmt-action-session-ok", ("MS-MQMR/3.1.4.2/R3",),
         "R_QMMgmtAction succeeds for MGMT_SESSION", _mgmt_session("R_QMMgmtAction")),
)


# ------------------------------------------------------------------------------ pcap editing


@dataclass
class _Pdu:
    ptype: int
    flags: int
    call_id: int
    auth_length: int
    first_frame: int
    #: (stream offset, length, file offset) pieces of the PDU, in order
    pieces: list


class _Capture:
    """A classic pcap file's octets, its frames and the DCE/RPC PDUs of its TCP streams, with
    the file offset of every stub octet."""

    def __init__(self, path: Path):
        self.path = path
        self.raw = bytearray(path.read_bytes())
        magic = self.raw[:4]
        if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1"):
            self.order = "<"
        elif magic in (b"\xa1\xb2\xc3\xd4", b"\xa1\xb2\x3c\x4d"):
            self.order = ">"
        else:
            raise ValueError(f"{path}: not a classic pcap file")
        self.linktype = struct.unpack_from(self.order + "I", self.raw, 20)[0]
        self.frames: list[tuple[int, int]] = []  # (data offset, captured length)
        pos = 24
        while pos + 16 <= len(self.raw):
            incl = struct.unpack_from(self.order + "I", self.raw, pos + 8)[0]
            self.frames.append((pos + 16, incl))
            pos += 16 + incl
        self.pdus = self._pdus()

    def _pdus(self) -> list[_Pdu]:
        streams: dict[tuple, dict] = {}
        for number, (offset, length) in enumerate(self.frames, 1):
            data = bytes(self.raw[offset:offset + length])
            try:
                seg = capdecode.tcp_segment(self.linktype, data)
            except capdecode.FrameError:
                continue
            if seg is None:
                continue
            src, dst, sport, dport, seq, flags, payload = seg
            s = streams.setdefault((src, sport, dst, dport), {"next": None, "buf": bytearray(),
                                                                "map": [], "pdus": []})
            if flags & 0x02:  # SYN
                s["next"] = (seq + 1) & 0xFFFFFFFF
                continue
            if not payload:
                continue
            if s["next"] is not None and seq != s["next"]:
                continue  # a retransmission or a gap: not edited
            s["next"] = (seq + len(payload)) & 0xFFFFFFFF
            at = data.rfind(payload)
            s["map"].append((len(s["buf"]), len(payload), offset + at, number))
            s["buf"] += payload
        out = []
        for s in streams.values():
            buf, pos = s["buf"], 0
            while pos + 16 <= len(buf):
                frag = struct.unpack_from("<H", buf, pos + 8)[0]
                if buf[pos] != 5 or frag < 16 or pos + frag > len(buf) or buf[pos + 4] != 0x10:
                    break  # not little-endian DCE/RPC, or cut: nothing further is edited
                pieces = _pieces(s["map"], pos, frag)
                out.append(_Pdu(ptype=buf[pos + 2], flags=buf[pos + 3],
                                call_id=struct.unpack_from("<I", buf, pos + 12)[0],
                                auth_length=struct.unpack_from("<H", buf, pos + 10)[0],
                                first_frame=pieces[0][3], pieces=pieces))
                pos += frag
        return out

    def pdu(self, ptype: int, frame: int | None, call_id: int) -> _Pdu | None:
        for p in self.pdus:
            if p.ptype == ptype and p.first_frame == frame and p.call_id == call_id:
                return p
        return None

    def write(self, pdu: _Pdu, edit: Edit) -> set[int]:
        """Overwrite stub octets; the frames touched."""
        total = sum(length for _, length, _, _ in pdu.pieces)
        start = 24 + (16 if pdu.ptype == PType.REQUEST and pdu.flags & PFC_OBJECT_UUID else 0)
        at = start + edit.offset if edit.offset >= 0 else total + edit.offset
        if at < start or at + len(edit.data) > total:
            raise ValueError("edit outside the stub")
        touched = set()
        for i, octet in enumerate(edit.data):
            k = at + i
            for _, length, file_at, number in pdu.pieces:
                if k < length:
                    self.raw[file_at + k] = octet
                    touched.add(number)
                    break
                k -= length
        return touched


def _pieces(mapping: list, pos: int, length: int) -> list:
    out = []
    end = pos + length
    for stream_at, size, file_at, number in mapping:
        lo, hi = max(pos, stream_at), min(end, stream_at + size)
        if lo < hi:
            out.append((lo, hi - lo, file_at + (lo - stream_at), number))
    return out


def _checksum(data: bytes) -> int:
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def _fix_tcp_checksum(frame: bytearray, linktype: int, before: bytes) -> None:
    """Recompute the TCP checksum of an edited IPv4/IPv6 segment if ``before`` (the frame as it
    was) carried a right one (a capture of offloaded checksums keeps its wrong ones)."""
    link = {1: 14, 101: 0, 228: 0, 229: 0, 113: 16, 276: 20, 0: 4}.get(linktype)
    if link is None or len(frame) < link + 20:
        return
    if frame[link] >> 4 == 4:
        ihl = (frame[link] & 0x0F) * 4
        total = struct.unpack_from("!H", frame, link + 2)[0]
        tcp = link + ihl
        end = link + total
        pseudo = bytes(frame[link + 12:link + 20]) + struct.pack("!BBH", 0, 6, end - tcp)
    elif frame[link] >> 4 == 6 and frame[link + 6] == 6:
        plen = struct.unpack_from("!H", frame, link + 4)[0]
        tcp, end = link + 40, link + 40 + plen
        pseudo = bytes(frame[link + 8:link + 40]) + struct.pack("!IxxxB", plen, 6)
    else:
        return
    if _checksum(pseudo + bytes(before[tcp:end])) != 0:
        return  # it was not right before
    frame[tcp + 16:tcp + 18] = b"\0\0"
    frame[tcp + 16:tcp + 18] = struct.pack("!H", _checksum(pseudo + bytes(frame[tcp:end])))


def apply(source: Path, target: Path, site: Site) -> None:
    """Write ``source`` with ``site``'s edits to ``target``."""
    cap = _Capture(source)
    original = bytes(cap.raw)
    call = site.call
    touched: set[int] = set()
    for edit in site.edits:
        if edit.side == "request":
            pdu = cap.pdu(PType.REQUEST, call.request_first_frame, call.call_id)
        else:
            pdu = cap.pdu(PType.RESPONSE, call.response_first_frame, call.call_id)
        if pdu is None or pdu.auth_length or pdu.flags & PFC_FIRST_LAST != PFC_FIRST_LAST:
            raise ValueError(f"call_id {call.call_id}: its {edit.side} is not one plain PDU")
        touched |= cap.write(pdu, edit)
    for number in touched:
        offset, length = cap.frames[number - 1]
        frame = bytearray(cap.raw[offset:offset + length])
        _fix_tcp_checksum(frame, cap.linktype, original[offset:offset + length])
        cap.raw[offset:offset + length] = frame
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(bytes(cap.raw))


# ------------------------------------------------------------------------------ the corpus


def clean_captures(inputs: list[Path] | None = None) -> list[Path]:
    if not inputs:
        inputs = [GOLDEN]
    out = []
    for p in inputs:
        out += sorted(p.rglob("*.pcap")) if p.is_dir() else [p]
    return out


def study(path: Path) -> Clean:
    decoded = capdecode.decode_all([path])
    violations = []
    for server, calls in expected.observed_calls(decoded.calls).items():
        violations += observe(calls, server)
    clean = Clean(path=path, calls=decoded.calls, violations=violations)
    for v in violations:
        clean.by_rule.setdefault(v.requirement, []).append((v.connection, v.call_id))
    return clean


def build(out: Path, inputs: list[Path] | None = None, per_kind: int = 3) -> dict:
    """Write the corpus under ``out``; return (and write) its labels: {"kinds": {name:
    {requirements, what, sites}}, "faults": [{capture, source, kind, requirements,
    connection, call_id, method, request_frame, response_frame, detail}], "clean": [paths]}."""
    out = Path(out)
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    cleans = [study(p) for p in clean_captures(inputs)]
    labels: dict[str, Any] = {"kinds": {}, "faults": [], "clean": [str(c.path) for c in cleans]}
    taken: set[tuple] = set()  # (source, connection, call_id): one edited call, one kind
    for kind in KINDS:
        made = 0
        used: set[Path] = set()
        for clean in cleans:
            if made >= per_kind:
                break
            if clean.path in used:
                continue
            for site in kind.find(clean):
                key = (clean.path, site.call.connection, site.call.call_id)
                if key in taken:
                    continue
                target = out / kind.name / f"{made:02d}-{clean.path.name}"
                try:
                    apply(clean.path, target, site)
                except ValueError:
                    continue
                call = site.call
                labels["faults"].append({
                    "capture": str(target), "source": str(clean.path), "kind": kind.name,
                    "requirements": list(kind.requirements), "connection": call.connection,
                    "call_id": call.call_id, "method": call.method,
                    "request_frame": call.request_first_frame,
                    "response_frame": call.response_last_frame, "detail": site.detail})
                made += 1
                used.add(clean.path)
                taken.add(key)
                break
        labels["kinds"][kind.name] = {"requirements": list(kind.requirements),
                                      "what": kind.what, "sites": made}
    (out / "labels.json").write_text(json.dumps(labels, indent=1) + "\n")
    return labels


# ------------------------------------------------------------------------------ the score


def score(labels: dict, violations: list[dict]) -> dict:
    """Recall over the faulty calls: a faulty call is found when a violation names its
    capture, connection and call_id with one of its kind's requirements. ``violations``:
    dicts with capture, connection, call_id, requirement, actor, severity (the violations
    table)."""
    at: dict[tuple, set[str]] = {}
    for v in violations:
        at.setdefault((str(Path(v["capture"]).resolve()), v["connection"], v["call_id"]),
                      set()).add(
            v["requirement"])
    per_kind: dict[str, dict] = {}
    missed = []
    for f in labels["faults"]:
        found = at.get((str(Path(f["capture"]).resolve()), f["connection"], f["call_id"]),
                       set())
        hit = bool(found & set(f["requirements"]))
        row = per_kind.setdefault(f["kind"], {"requirements": f["requirements"], "faulty": 0,
                                              "flagged": 0, "other": set()})
        row["faulty"] += 1
        row["flagged"] += hit
        row["other"] |= found - set(f["requirements"])
        if not hit:
            missed.append(f)
    for name, k in labels["kinds"].items():
        per_kind.setdefault(name, {"requirements": k["requirements"], "faulty": 0,
                                   "flagged": 0, "other": set()})
    faulty = len(labels["faults"])
    flagged = faulty - len(missed)
    return {"kinds": len([k for k in per_kind.values() if k["faulty"]]), "faulty": faulty,
            "flagged": flagged, "recall": flagged / faulty if faulty else 1.0,
            "missed": missed, "per_kind": per_kind}


def table(result: dict) -> str:
    lines = [f"fault corpus: {result['kinds']} kinds, {result['faulty']} faulty calls, "
             f"{result['flagged']} flagged at the edited call with a fitting requirement: "
             f"recall {result['recall']:.1%}"]
    for name, row in sorted(result["per_kind"].items()):
        lines.append(f"  {name:45s} {row['flagged']}/{row['faulty']}  "
                     f"{', '.join(row['requirements'])}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv:
        print(__doc__.strip().splitlines()[3].strip(), file=sys.stderr)
        return 2
    labels = build(Path(argv[0]), [Path(p) for p in argv[1:]] or None)
    for name, k in labels["kinds"].items():
        print(f"{name:45s} {k['sites']} site(s)  {', '.join(k['requirements'])}")
    print(f"{len(labels['faults'])} faulty captures in {argv[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
