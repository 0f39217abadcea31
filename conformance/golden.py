"""The golden pcaps (captures/golden/): what every scenario of features/ puts on the wire, and
one typical call of every opnum in NDR and NDR64, built from the model's calls through wire/.

    python -m mqconform.conformance.golden        # regenerate captures/golden/ (all, ~15 s)
    python -m mqconform.conformance.golden --check          # exit 1 if any file would change
    python -m mqconform.conformance.golden --check --verify # and read every file back
                                                            # (decoder, tshark)
    python -m mqconform.conformance.golden --only features/MS-MQRR/3.1.4.7.feature --out DIR

How a scenario's pcap is made:

1. The suite's scenarios run against the model target in process (pytest on
   conformance/cases/test_features.py with conformance.plugin and ``--mq-target model``, as
   ``mqconform run --target model`` runs them), each case on a fresh Suite, so that what a case
   sees does not depend on the cases before it: the model's identifiers (context handles,
   cursors, lookup identifiers, GUIDs) come from its counters (model.runtime.SequentialIds,
   deterministic); queue names are ``private$\\mqc-gold-N``; the client GUIDs the steps draw
   with uuid.uuid4 come from a generator seeded with the case's id; the steps' module-level
   counters (request ids) start afresh; a message's arrival time is 2026-01-01T00:00:00Z and
   the wall clock the steps read starts there with each case (conformance/sources.py: the
   builder installs a source of its own; no module is patched).
2. While a case runs, every typed call that reaches the model target is logged in order, with
   the connection it was made on: the suite's connection, a second one of its association
   group (``connect_second``: a call started to wait, R_CancelReceive from elsewhere), or a
   client of an association group of its own (``Case.separate``, ``client_of_its_own``).
   A call that waits is answered when the model completes it (its place in the log is taken
   under the model's lock, when the call completes, not when its thread wakes). Calls the
   in-process stand-in for the RPC runtime refuses (a context handle of another association:
   session.ModelAssociation) are logged with the fault it answers. A connection that is
   closed (a case's own connection after its call, a client whose connection fails) ends
   with FIN there. The model target's queue manager tells its listener of each call
   (conformance/targets.py CallListener); the builder's CaseLog is that listener.
3. The log becomes TCP conversations (``render``): 10.0.0.1:49152 (49153, ... for later
   connections) to 10.0.0.2:2103, fixed MACs and initial sequence numbers, SYN / SYN-ACK /
   ACK, a bind (RemoteRead on presentation context 0, NDR; qmmgmt on context 1, bound with
   alter_context if the connection has RemoteRead already) and its bind_ack, then each call
   as a request and a response, or a fault (a void method's failure, status from the model;
   a context handle refused), stubs from wire/ndr.py, cut into fragments of at most
   ``MAX_FRAG`` octets (impacket's and the reference server's 4280) and TCP segments of at
   most ``MSS`` octets; call_ids count from 1 on each connection (the bind is call 1);
   timestamps 1 ms apart from 2026-01-01T00:00:00Z; FIN / FIN-ACK / ACK at the end. Frames
   are built with captures.recorder.build_frame (byte-identical to scapy's
   Ether()/IP()/TCP()/Raw(), tests/captures/test_recorder.py).
4. What the model target cannot carry is rendered as the scenario sends it over RPC: the steps
   that speak to the RPC runtime itself (a bind proposing NDR and/or NDR64, a stub cut
   short, an opnum RemoteRead does not have, a qmmgmt bind offering one syntax) are not
   applicable on the model, and appear as the PDUs they send with the answers of the
   reference runtime (wire/association.py's negotiate_contexts; a fault for a stub that does not
   decode or an opnum out of range); the NULL VT_BLOB pointer
   of MS-MQMR 3.1.4 is sent as the step sends it. A request stub that wire/ndr.py's strict
   decoder refuses (the scenarios' deliberately malformed stubs) is answered with the fault
   the runtime sends (RPC_X_BAD_STUB_DATA), the model's own answer noted in the index. A call
   NDR cannot carry at all (a NULL [ref] pointer: not applicable over RPC) is left out and
   noted.

The per-opnum pcaps (opnums/<interface>/<opnum>-<method>-<ndr|ndr64>.pcap; qmmgmt in NDR only)
hold one call each, on a connection of its own: the typical call of the method from one
session on the model through the suite's Case (``typical_session``: open, receive, end,
cursors, a cancelled wait, a move to a subqueue, an enlisted transaction's receive, ...).

captures/golden/index.json lists every file: the case, its requirement IDs and verdict on the
model, its frames, connections and calls (CALL_COLUMNS), and notes. tests/captures/
test_golden.py regenerates everything into a temporary directory and compares the octets, and
reads every file back with captures.decode and tshark.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import itertools
import json
import random
import re
import shutil
import socket
import struct
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from mqconform.captures.dissector import TSHARK_OPTIONS
from mqconform.captures.recorder import (
    ACK,
    CLIENT_MAC,
    FIN,
    PSH,
    SERVER_MAC,
    SYN,
    build_frame,
    pcap_header,
)
from mqconform.conformance import sources
from mqconform.model import calls as c
from mqconform.wire import dcerpc as d
from mqconform.wire import ndr
from mqconform.wire.association import negotiate_contexts

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "captures" / "golden"
INDEX = "index.json"
FEATURES_TEST = ROOT / "conformance" / "cases" / "test_features.py"

EPOCH = 1767225600  # 2026-01-01T00:00:00Z, seconds since 1970
FRAME_STEP_US = 1000
CLIENT_IP, SERVER_IP = "10.0.0.1", "10.0.0.2"
CLIENT_PORT, SERVER_PORT = 49152, 2103
CLIENT_ISN, SERVER_ISN = 0x10000000, 0x80000000  # + 0x01000000 per connection
MSS = 1460
MAX_FRAG = 4280  # impacket's max_xmit_frag/max_recv_frag; the reference server agrees to it
ASSOC_GROUP = 0x00001000  # the first association group the server hands out; then + 1
QUEUE_RUN = "gold"  # queue names: private$\mqc-gold-N
INTERFACE_SYNTAX = {c.REMOTEREAD: d.SyntaxId(c.REMOTEREAD_UUID, 1, 0),
                    c.QMMGMT: d.SyntaxId(c.QMMGMT_UUID, 1, 0)}
CONTEXT_ID = {c.REMOTEREAD: 0, c.QMMGMT: 1}
#: the reference runtime's interfaces (server/app.py ReferenceQueueManager.interfaces)
SERVED = {c.REMOTEREAD_UUID: (1, 0, frozenset({"ndr", "ndr64"})),
          c.QMMGMT_UUID: (1, 0, frozenset({"ndr"}))}
#: the status a server gives a void method's failure without one (server/app.py)
E_FAIL = 0x80004005
#: a call in index.json: [connection (tcp.stream), call_id, opnum, method, NDR or NDR64,
#: status (the method's return value) or None, fault status or None, first frame, last frame]
CALL_COLUMNS = ("connection", "call_id", "opnum", "method", "syntax", "status", "fault",
                "first_frame", "last_frame")


# ============================================================================== the log


@dataclasses.dataclass(eq=False)
class Conn:
    """One client connection of a case (a TCP connection on the wire) in association group
    ``group`` (0: the suite's)."""

    group: int
    ndr64: bool = False


@dataclasses.dataclass
class Event:
    seq: int
    kind: str  # request, answer, close, bind, raw
    conn: Conn
    ref: int = 0  # the call a request and its answer share
    call: c.Call | None = None
    result: c.Result | None = None
    stub: bytes | None = None  # a request stub the scenario sends as octets
    contexts: tuple = ()  # bind: ((interface SyntaxId, (transfer SyntaxId, ...)), ...)
    raw: tuple | None = None  # raw: (interface name, opnum, stub)


class CaseLog:
    """The calls one case makes on the model target, in order (module doc, 2)."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.events: list[Event] = []
        self.completed: dict[int, int] = {}  # the model's token -> seq of its completion
        self.stub_override: Callable[[c.Call], bytes | None] | None = None
        self._seq = itertools.count()
        self._refs = itertools.count(1)
        self._groups = itertools.count(1)
        self._conns: dict[int, tuple[Any, Conn]] = {}

    def stamp(self) -> int:
        with self.lock:
            return next(self._seq)

    def conn(self, obj: Any, group: int | None = None) -> Conn:
        """The open connection ``obj`` stands for (a new one, of a new group unless given)."""
        with self.lock:
            entry = self._conns.get(id(obj))
            if entry is not None and entry[0] is obj:
                return entry[1]
            conn = Conn(next(self._groups) if group is None else group)
            self._conns[id(obj)] = (obj, conn)
            return conn

    def new_conn(self) -> Conn:
        with self.lock:
            return Conn(next(self._groups))

    def request(self, conn: Conn, call: c.Call, stub: bytes | None = None) -> int:
        with self.lock:
            if stub is None and self.stub_override is not None:
                stub = self.stub_override(call)
            ref = next(self._refs)
            self.events.append(Event(next(self._seq), "request", conn, ref, call, stub=stub))
            return ref

    def answer(self, ref: int, conn: Conn, result: c.Result | None,
               seq: int | None = None) -> None:
        with self.lock:
            if result is not None:
                self.events.append(Event(next(self._seq) if seq is None else seq, "answer",
                                         conn, ref, result=result))

    def close(self, obj: Any) -> None:
        with self.lock:
            entry = self._conns.get(id(obj))
            if entry is None or entry[0] is not obj:
                return
            del self._conns[id(obj)]
            self.events.append(Event(next(self._seq), "close", entry[1]))

    def add(self, kind: str, conn: Conn, **fields: Any) -> None:
        with self.lock:
            self.events.append(Event(next(self._seq), kind, conn, **fields))

    # the model queue manager's listener (conformance/targets.py CallListener)
    def on_connect(self, conn: Any, like: Any | None = None) -> None:
        self.conn(conn, group=self.conn(like).group if like is not None else None)

    def on_request(self, conn: Any, call: c.Call) -> int:
        return self.request(self.conn(conn), call)

    def on_answer(self, conn: Any, ref: int, result: c.Result, token: int | None = None
                  ) -> None:
        seq = self.completed.pop(token, None) if token is not None else None
        self.answer(ref, self.conn(conn), result, seq)

    def on_completion(self, token: int) -> None:
        self.completed[token] = self.stamp()

    def on_close(self, conn: Any) -> None:
        self.close(conn)


def attach(qm: Any, log: CaseLog) -> None:
    """Log the calls to the ModelQueueManager ``qm`` (a target's, not the oracle's)."""
    qm.listener = log


# ============================================================================== determinism


class _Determinism(sources.Source):
    """What a case draws from outside the model, fixed (conformance/sources.py, installed for
    the builder's run): GUIDs from a generator seeded per case, counters afresh per case, a
    message's arrival time EPOCH, and a wall clock that reads EPOCH when the case begins (a
    step that notes when a message was sent compares it with the message's arrival time)."""

    def __init__(self) -> None:
        super().__init__()
        self._rng = random.Random(0)
        self.start = time.monotonic()
        self._installed: Any = None

    def __enter__(self) -> _Determinism:
        self._installed = sources.use(self)
        self._installed.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        installed, self._installed = self._installed, None
        if installed is not None:
            installed.__exit__(*exc)

    def case(self, case_id: str) -> None:
        """Before a case: the seed from its id; the counters anew; the wall clock at EPOCH."""
        self._rng.seed(f"golden:{case_id}")
        self.start = time.monotonic()
        with self._lock:
            self._counters.clear()

    def uuid4(self) -> uuid.UUID:
        return uuid.UUID(int=self._rng.getrandbits(128), version=4)

    def now(self) -> float:
        return EPOCH + (time.monotonic() - self.start)

    def arrival_time(self) -> int:
        return EPOCH


def new_suite(catalog: Any) -> Any:
    """A fresh Suite on the model target, its target's queue manager logging to a CaseLog
    (``suite.golden_log``)."""
    from mqconform.conformance.session import Suite
    from mqconform.conformance.targetfile import load

    suite = Suite(load("model", catalog), catalog=catalog)
    suite._run = QUEUE_RUN
    log = CaseLog()
    attach(suite.target.qm, log)
    log.conn(suite.target, group=0)
    suite.golden_log = log
    return suite


# ============================================================================== rendering


@dataclasses.dataclass
class _Tcp:
    stream: int
    client_port: int
    seq: list[int]  # next sequence number: [client, server]
    ip_id: list[int] = dataclasses.field(default_factory=lambda: [1, 1])
    contexts: dict[str, tuple[int, bool]] = dataclasses.field(default_factory=dict)
    call_ids: Iterator[int] = dataclasses.field(default_factory=lambda: itertools.count(1))
    open: bool = True


class Pcap:
    """Frames of TCP conversations between CLIENT_IP and SERVER_IP:2103, 1 ms apart."""

    def __init__(self) -> None:
        self.records: list[bytes] = []
        self.streams: list[_Tcp] = []

    @property
    def frames(self) -> int:
        return len(self.records)

    def _frame(self, tcp: _Tcp, from_client: bool, flags: int, payload: bytes = b"") -> int:
        side = 0 if from_client else 1
        src, dst = (CLIENT_IP, SERVER_IP) if from_client else (SERVER_IP, CLIENT_IP)
        sport, dport = (tcp.client_port, SERVER_PORT) if from_client \
            else (SERVER_PORT, tcp.client_port)
        macs = (CLIENT_MAC, SERVER_MAC) if from_client else (SERVER_MAC, CLIENT_MAC)
        ack = tcp.seq[1 - side] if flags & ACK else 0
        frame = build_frame(src, dst, sport, dport, tcp.seq[side], ack, flags, payload,
                            tcp.ip_id[side], *macs)
        tcp.ip_id[side] = (tcp.ip_id[side] + 1) & 0xFFFF
        tcp.seq[side] = (tcp.seq[side] + len(payload) + (1 if flags & (SYN | FIN) else 0)) \
            & 0xFFFFFFFF
        micros = len(self.records) * FRAME_STEP_US
        self.records.append(struct.pack("<LLLL", EPOCH + micros // 1_000_000,
                                        micros % 1_000_000, len(frame), len(frame)) + frame)
        return len(self.records)

    def connect(self) -> _Tcp:
        index = len(self.streams)
        tcp = _Tcp(index, CLIENT_PORT + index,
                   [CLIENT_ISN + (index << 24), SERVER_ISN + (index << 24)])
        self.streams.append(tcp)
        self._frame(tcp, True, SYN)
        self._frame(tcp, False, SYN | ACK)
        self._frame(tcp, True, ACK)
        return tcp

    def send(self, tcp: _Tcp, from_client: bool, pdu: bytes) -> tuple[int, int]:
        """One PDU in segments of at most MSS octets: (first frame, last frame)."""
        first = last = 0
        for start in range(0, len(pdu), MSS):
            last = self._frame(tcp, from_client, PSH | ACK, pdu[start:start + MSS])
            first = first or last
        return first, last

    def close(self, tcp: _Tcp) -> None:
        if tcp.open:
            self._frame(tcp, True, FIN | ACK)
            self._frame(tcp, False, FIN | ACK)
            self._frame(tcp, True, ACK)
            tcp.open = False

    def getvalue(self) -> bytes:
        return pcap_header() + b"".join(self.records)


def _fragments(make: Callable[[bytes, int], d.Body], stub: bytes, header: int
               ) -> list[tuple[int, d.Body]]:
    out, offset = [], 0
    for flags, chunk in d.fragment_stub(stub, MAX_FRAG, header):
        out.append((flags, make(chunk, len(stub) - offset)))  # alloc_hint: what is left
        offset += len(chunk)
    return out


class Renderer:
    """A CaseLog's events as a pcap, and the calls it holds (module doc, 3)."""

    def __init__(self) -> None:
        self.pcap = Pcap()
        self.calls: list[dict] = []
        self.notes: list[str] = []
        self._tcp: dict[int, _Tcp] = {}  # id(Conn) -> its TCP connection while open
        self._groups: dict[int, int] = {}  # group -> the assoc_group_id the server gave it
        self._refs: dict[int, dict] = {}
        #: calls NDR cannot carry (ref -> name); one that succeeds on the model changed what
        #: the later calls see, and no capture can show it: the pcap ends there (``cut``),
        #: so that a trace validator never reads a history with a hole in it
        self._unseen: dict[int, str] = {}
        self.cut: str | None = None

    # ---------------------------------------------------------------- connections
    def _open(self, conn: Conn, contexts: list[d.ContextElement]) -> _Tcp:
        tcp = self.pcap.connect()
        self._tcp[id(conn)] = tcp
        group = self._groups.get(conn.group, 0)
        bind = d.Bind(MAX_FRAG, MAX_FRAG, group, tuple(contexts))
        call_id = next(tcp.call_ids)
        self.pcap.send(tcp, True, d.encode_pdu(bind, call_id))
        results, _, _ = _negotiate(contexts)
        if not group:
            group = self._groups[conn.group] = ASSOC_GROUP + len(self._groups)
        ack = d.BindAck(MAX_FRAG, MAX_FRAG, group, str(SERVER_PORT).encode(), results)
        self.pcap.send(tcp, False, d.encode_pdu(ack, call_id))
        self._accepted(tcp, contexts, results)
        return tcp

    @staticmethod
    def _accepted(tcp: _Tcp, contexts: list[d.ContextElement], results: tuple) -> None:
        names = {s: n for n, s in INTERFACE_SYNTAX.items()}
        for element, result in zip(contexts, results, strict=False):
            name = names.get(element.abstract_syntax)
            if name is not None and result.result == d.ContResult.ACCEPTANCE:
                tcp.contexts[name] = (element.context_id, result.transfer_syntax == d.NDR64)

    def _context(self, conn: Conn, interface: str) -> tuple[_Tcp, int, bool]:
        """The connection's presentation context for ``interface``: bound with the connection,
        or added with alter_context."""
        ndr64 = conn.ndr64 and interface == c.REMOTEREAD
        element = d.ContextElement(CONTEXT_ID[interface], INTERFACE_SYNTAX[interface],
                                   (d.NDR64 if ndr64 else d.NDR,))
        tcp = self._tcp.get(id(conn))
        if tcp is None:
            tcp = self._open(conn, [element])
        elif interface not in tcp.contexts:
            call_id = next(tcp.call_ids)
            group = self._groups.get(conn.group, 0)
            alter = d.AlterContext(MAX_FRAG, MAX_FRAG, group, (element,))
            self.pcap.send(tcp, True, d.encode_pdu(alter, call_id))
            results, _, _ = _negotiate([element])
            resp = d.AlterContextResp(MAX_FRAG, MAX_FRAG, group, b"", results)
            self.pcap.send(tcp, False, d.encode_pdu(resp, call_id))
            self._accepted(tcp, [element], results)
        context_id, ndr64 = tcp.contexts[interface]
        return tcp, context_id, ndr64

    def close(self, conn: Conn) -> None:
        tcp = self._tcp.pop(id(conn), None)
        if tcp is not None:
            self.pcap.close(tcp)

    # ---------------------------------------------------------------- calls
    def request(self, conn: Conn, ref: int, call: c.Call, stub: bytes | None = None) -> None:
        name = type(call).__name__
        ndr64 = conn.ndr64 and call.interface == c.REMOTEREAD
        if stub is None:
            try:
                stub = ndr.encode_request(call, ndr64)
            except ndr.StubError as exc:
                self.notes.append(f"{name} not on the wire: NDR cannot carry it ({exc})")
                self._unseen[ref] = name
                return
        tcp, context_id, ndr64 = self._context(conn, call.interface)
        call_id = next(tcp.call_ids)
        first = last = 0
        for flags, body in _fragments(
                lambda chunk, hint: d.Request(context_id, call.opnum, chunk, hint), stub,
                d.REQUEST_SIZE):
            f, last = self.pcap.send(tcp, True, d.encode_pdu(body, call_id, flags))
            first = first or f
        rejected = None
        try:
            ndr.decode_request(call.interface, call.opnum, stub, ndr64)
        except ndr.StubError as exc:
            rejected = str(exc)
        entry = {"connection": tcp.stream, "call_id": call_id, "method": name,
                 "opnum": call.opnum, "syntax": "NDR64" if ndr64 else "NDR",
                 "status": None, "fault": None, "frames": [first, last]}
        self.calls.append(entry)
        self._refs[ref] = {"entry": entry, "tcp": tcp, "context_id": context_id,
                           "call": call, "ndr64": ndr64, "rejected": rejected}

    def answer(self, ref: int, result: c.Result) -> None:
        unseen = self._unseen.pop(ref, None)
        if unseen is not None and not result.raised and result.status == 0:
            self.cut = unseen
            self.notes.append(f"{unseen} succeeded on the model: the calls after it are left "
                              f"off the pcap (what they see depends on a call no capture "
                              f"can show)")
        pending = self._refs.pop(ref, None)
        if pending is None:
            return  # its request is not on the wire
        entry, tcp, call = pending["entry"], pending["tcp"], pending["call"]
        if not tcp.open:
            self.notes.append(f"{entry['method']} call_id {entry['call_id']}: answered after "
                              f"its connection closed (not on the wire)")
            return
        name = entry["method"]
        fault = None
        if pending["rejected"] is not None:
            fault = d.RPC_X_BAD_STUB_DATA
            self.notes.append(f"{name} call_id {entry['call_id']}: the stub does not decode "
                              f"({pending['rejected']}): the runtime answers with a fault; "
                              f"the model answered 0x{result.status:08X}")
        elif result.raised:
            fault = result.status or E_FAIL
        else:
            try:
                stub = ndr.encode_response(call, result, pending["ndr64"])
            except ndr.StubError as exc:
                fault = d.RPC_X_BAD_STUB_DATA
                self.notes.append(f"{name} call_id {entry['call_id']}: the result does not "
                                  f"encode ({exc}): a fault")
        if fault is not None:
            body = d.Fault(pending["context_id"], fault)
            _, last = self.pcap.send(tcp, False, d.encode_pdu(body, entry["call_id"]))
            entry["fault"] = fault
        else:
            for flags, part in _fragments(
                    lambda chunk, hint: d.Response(pending["context_id"], chunk, hint), stub,
                    d.RESPONSE_SIZE):
                _, last = self.pcap.send(tcp, False, d.encode_pdu(part, entry["call_id"],
                                                                  flags))
            entry["status"] = result.status
        entry["frames"][1] = last

    # ---------------------------------------------------------------- what the model cannot
    def bind(self, conn: Conn, contexts: tuple) -> None:
        """A bind the scenario sends itself (module doc, 4), on a connection of its own."""
        elements = [d.ContextElement(i, iface, syntaxes)
                    for i, (iface, syntaxes) in enumerate(contexts)]
        self._open(conn, elements)

    def raw(self, conn: Conn, interface: str, opnum: int, stub: bytes) -> None:
        """A request the scenario sends as octets, and the reference runtime's answer: the
        fault for an opnum the interface does not have, or for a stub that does not decode
        (server/app.py)."""
        tcp, context_id, ndr64 = self._context(conn, interface)
        call_id = next(tcp.call_ids)
        request = d.Request(context_id, opnum, stub, len(stub))
        first, _ = self.pcap.send(tcp, True, d.encode_pdu(request, call_id))
        call_type = c.CALLS.get((interface, opnum))
        if call_type is None:
            fault = d.NCA_S_OP_RNG_ERROR
        else:
            try:
                ndr.decode_request(interface, opnum, stub, ndr64)
            except ndr.StubError as exc:
                fault = d.RPC_X_BAD_STUB_DATA
                self.notes.append(f"{call_type.__name__} call_id {call_id}: the stub does not "
                                  f"decode ({exc}): the runtime answers with a fault (the "
                                  f"scenario's own stub)")
            else:
                raise ValueError(f"{call_type.__name__}: a raw stub that decodes")
        _, last = self.pcap.send(tcp, False, d.encode_pdu(d.Fault(context_id, fault), call_id))
        self.calls.append({"connection": tcp.stream, "call_id": call_id,
                           "method": call_type.__name__ if call_type else None,
                           "opnum": opnum, "syntax": "NDR64" if ndr64 else "NDR",
                           "status": None, "fault": fault, "frames": [first, last]})

    # ---------------------------------------------------------------- all of it
    def render(self, events: list[Event]) -> bytes:
        for ev in sorted(events, key=lambda e: e.seq):
            if self.cut is not None and ev.kind != "close":
                continue
            if ev.kind == "request":
                self.request(ev.conn, ev.ref, ev.call, ev.stub)
            elif ev.kind == "answer":
                self.answer(ev.ref, ev.result)
            elif ev.kind == "close":
                self.close(ev.conn)
            elif ev.kind == "bind":
                self.bind(ev.conn, ev.contexts)
            elif ev.kind == "raw":
                self.raw(ev.conn, *ev.raw)
        for key in sorted(self._refs):
            entry = self._refs[key]["entry"]
            self.notes.append(f"{entry['method']} call_id {entry['call_id']}: no answer")
        for tcp in self.pcap.streams:
            self.pcap.close(tcp)
        return self.pcap.getvalue()


def _negotiate(contexts: list[d.ContextElement]) -> tuple:
    return negotiate_contexts(contexts, SERVED)


# ============================================================================== scenarios


#: steps that speak to the RPC runtime itself (not applicable on the model): what they send
_BIND_RR = re.compile(r"the client binds RemoteRead over ncacn_ip_tcp proposing (?P<syntaxes>.+)"
                      r" in separate presentation contexts")
_CUT = re.compile(r"the client sends R_OpenQueue with a stub cut to (?P<size>\d+) octets")
_OPNUM = re.compile(r"the client sends a RemoteRead request with opnum (?P<opnum>\d+)")
_BIND_MGMT = re.compile(r"the client binds the qmmgmt interface offering only the "
                        r"(?P<syntax>NDR64|NDR) transfer syntax")
_BIND_IF = re.compile(r"the client binds the interface (?P<uuid>[0-9a-fA-F-]{36}) version "
                      r"(?P<major>\d+)\.(?P<minor>\d+)")
_NULL_BLOB = ("the client sends R_QMMgmtGetInfo whose apVar[0] is a VT_BLOB of 4 octets with "
              "a NULL pointer")


def _null_blob_stub(call: c.Call) -> bytes | None:
    """The stub conformance/steps/qmmgmt.py sends over RPC for _NULL_BLOB: the VT_BLOB's
    cbSize 4, then a NULL pBlobData and no array."""
    if not isinstance(call, c.R_QMMgmtGetInfo):
        return None
    stub = ndr.encode_request(call, False)
    at = stub.rindex(struct.pack("<I", 4), 0, len(stub) - 12)
    return stub[:at + 4] + b"\0\0\0\0"


def runtime_step(log: CaseLog, text: str) -> None:
    """Log what a step that speaks to the RPC runtime sends (module doc, 4)."""
    text = " ".join(text.split())
    rr = INTERFACE_SYNTAX[c.REMOTEREAD]
    if m := _BIND_RR.fullmatch(text):
        names = [s.strip().lower() for s in m["syntaxes"].split(" and ")]
        conn = log.new_conn()
        log.add("bind", conn, contexts=tuple((rr, (d.TRANSFER_SYNTAXES[n],)) for n in names))
        log.add("close", conn)
    elif m := _CUT.fullmatch(text):
        conn = log.new_conn()
        log.add("raw", conn, raw=(c.REMOTEREAD, c.R_OpenQueue.opnum,
                                  bytes(range(256))[:int(m["size"])]))
        log.add("close", conn)
    elif m := _OPNUM.fullmatch(text):
        conn = log.new_conn()
        log.add("raw", conn, raw=(c.REMOTEREAD, int(m["opnum"]), bytes(8)))
        log.add("close", conn)
    elif m := _BIND_MGMT.fullmatch(text):
        conn = log.new_conn()
        syntax = d.TRANSFER_SYNTAXES[m["syntax"].lower()]
        log.add("bind", conn, contexts=((INTERFACE_SYNTAX[c.QMMGMT], (syntax,)),))
        if m["syntax"] == "NDR64":  # refused: the client gives up the connection
            log.add("close", conn)
    elif m := _BIND_IF.fullmatch(text):
        iface = d.SyntaxId(uuid.UUID(m["uuid"]), int(m["major"]), int(m["minor"]))
        log.add("bind", log.new_conn(), contexts=((iface, (d.NDR,)),))
    elif text == _NULL_BLOB:
        log.stub_override = _null_blob_stub


@dataclasses.dataclass
class CaseRecord:
    case: str
    name: str  # the test's name: test_<scenario>[<example>]
    source: dict
    ids: tuple[str, ...]
    verdict: str
    events: list[Event]


class _Plugin:
    """Runs each case of features/ on a fresh logged Suite and keeps its log."""

    def __init__(self, only: list[str] | None) -> None:
        self.only = only
        self.records: list[CaseRecord] = []
        self.determinism = _Determinism()
        self._log: CaseLog | None = None

    def pytest_collection_modifyitems(self, config: Any, items: list) -> None:
        if not self.only:
            return
        wanted = [_relative(p) for p in self.only]
        keep = [i for i in items if _feature_of(i) is not None and any(
            _feature_of(i) == p or _feature_of(i).startswith(p.rstrip("/") + "/")
            for p in wanted)]
        dropped = [i for i in items if i not in keep]
        if dropped:
            config.hook.pytest_deselected(items=dropped)
            items[:] = keep

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: Any) -> None:
        from mqconform.conformance.suite_plugin import STATE

        state = item.config.stash[STATE]
        self.determinism.case(item.nodeid)
        suite = new_suite(state["catalog"])
        if state["suite"] is not None:
            state["suite"].close()
        state["suite"] = suite
        self._log = suite.golden_log

    def pytest_bdd_before_step(self, request: Any, feature: Any, scenario: Any, step: Any,
                               step_func: Any) -> None:
        if self._log is not None:
            runtime_step(self._log, step.name)

    def pytest_bdd_after_step(self, *args: Any, **kwargs: Any) -> None:
        if self._log is not None:
            self._log.stub_override = None

    def pytest_bdd_step_error(self, *args: Any, **kwargs: Any) -> None:
        if self._log is not None:
            self._log.stub_override = None

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_teardown(self, item: Any, nextitem: Any):
        yield
        from mqconform.conformance.suite_plugin import STATE

        log, self._log = self._log, None
        if log is None:
            return
        state = item.config.stash[STATE]
        result = next((r for r in reversed(state["results"]) if r.case == item.nodeid), None)
        state["suite"].target.qm.listener = None
        with log.lock:
            events = list(log.events)
        self.records.append(CaseRecord(
            case=item.nodeid, name=item.name,
            source=result.source if result is not None and result.source else {},
            ids=tuple(result.ids) if result is not None else (),
            verdict=result.verdict if result is not None else "error", events=events))


def _relative(path: str | Path) -> str:
    """A path as the repository names it (features/MS-MQRR/2.1.feature)."""
    p = Path(path)
    p = p.resolve() if p.is_absolute() or p.exists() else ROOT / p
    try:
        return p.resolve().relative_to(ROOT).as_posix()
    except ValueError:
        return p.as_posix()


def _feature_of(item: Any) -> str | None:
    """The feature file of a scenario's test (features/MS-MQRR/2.1.feature): pytest-bdd
    writes "<feature file>: <scenario name>" as the test's doc."""
    doc = getattr(getattr(item, "function", None), "__doc__", None) or ""
    m = re.match(r"(.*?\.feature): ", doc)
    return None if m is None else _relative(m[1])


def run_scenarios(only: list[str] | None = None, quiet: bool = True) -> list[CaseRecord]:
    """Run the scenarios of features/ (those of the ``only`` feature files or directories)
    on the model, logged."""
    cases = FEATURES_TEST.parent
    plugin = _Plugin(only)
    argv = [str(FEATURES_TEST), "-c", str(cases / "suite.ini"), "--rootdir", str(ROOT),
            "-p", "mqconform.conformance.plugin", "-p", "no:cacheprovider", "--mq-target", "model"]
    argv += ["-p", "no:terminal"] if quiet else ["-q"]
    with plugin.determinism:
        rc = pytest.main(argv, plugins=[plugin])
    if rc not in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
        raise RuntimeError(f"the scenarios did not run (pytest exit {int(rc)})")
    return plugin.records


def scenario_path(record: CaseRecord) -> str:
    """scenarios/<document>/<section>/<slug>.pcap"""
    feature = Path(record.source.get("path", "features/unknown/unknown.feature"))
    name = record.name.removeprefix("test_")
    base, _, example = name.partition("[")
    slug = base + (f"-{example.rstrip(']')}" if example else "")
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", slug)
    if len(slug) > 96:
        slug = slug[:87] + "-" + hashlib.sha1(slug.encode()).hexdigest()[:8]
    return f"scenarios/{feature.parent.name}/{feature.stem}/{slug}.pcap"


def _entry(renderer: Renderer, **fields: Any) -> dict:
    return {**fields, "frames": renderer.pcap.frames,
            "connections": len(renderer.pcap.streams),
            "calls": [[e[k] for k in CALL_COLUMNS[:-2]] + e["frames"] for e in renderer.calls],
            "notes": renderer.notes}


def build_scenarios(only: list[str] | None = None) -> dict[str, tuple[bytes, dict]]:
    out: dict[str, tuple[bytes, dict]] = {}
    for record in run_scenarios(only):
        renderer = Renderer()
        data = renderer.render(record.events)
        path = scenario_path(record)
        if path in out:
            raise RuntimeError(f"two cases would write {path}")
        out[path] = (data, _entry(renderer, case=record.case,
                                  scenario=record.source.get("name", ""),
                                  feature=record.source.get("path"),
                                  line=record.source.get("line"), ids=sorted(record.ids),
                                  verdict=record.verdict))
    return out


# ============================================================================== opnums


def typical_session() -> dict[type[c.Call], tuple[c.Call, c.Result]]:
    """One typical call of every method, made through the suite's Case on the model (each
    checked against the oracle), with the result the model gave."""
    from mqconform.conformance import preconditions as pre
    from mqconform.conformance.session import Case
    from mqconform.model.formats import MgmtObject, MgmtObjectType
    from mqconform.spec.catalog import load

    suite = new_suite(load())
    case = Case(suite, "golden/opnums", ())
    log = suite.golden_log
    typical: dict[type[c.Call], tuple[c.Call, c.Result]] = {}
    refs: dict[int, c.Call] = {}

    def keep(out: c.Result) -> c.Result:
        """The last call logged (the one that gave ``out``) is its method's typical call."""
        with log.lock:
            ref = max(e.ref for e in log.events if e.kind == "answer" and e.result is out)
            call = next(e.call for e in log.events if e.kind == "request" and e.ref == ref)
        refs[ref] = call
        typical.setdefault(type(call), (call, out))
        return out

    xid = uuid.UUID(int=0x6F6C64).bytes  # "old": a fixed transaction identifier
    token = bytes(range(1, 33))
    keep(case.call(c.R_GetServerPort()))
    q1 = case.queue([b"one", b"two", b"three"])
    opened = keep(case.call(c.R_OpenQueue(pQueueFormat=q1, dwAccess=c.RECEIVE_ACCESS,
                                          pClientId=uuid.UUID(int=0x4D51),
                                          fNonRoutingServer=1)))
    ctx = opened.pphContext
    keep(case.receive(ctx, request=1))
    keep(case.call(c.R_EndReceive(phContext=ctx, dwAck=c.RR_ACK, dwRequestId=1)))
    cursor = keep(case.call(c.R_CreateCursor(phContext=ctx))).phCursor
    keep(case.call(c.R_CloseCursor(phContext=ctx, hCursor=cursor)))
    empty = case.open(case.queue())
    waiting = case.start(c.R_StartReceive(phContext=empty, ulTimeout=c.INFINITE_TIMEOUT,
                                          dwRequestId=2, dwMaxBodySize=1 << 16,
                                          dwMaxCompoundMessageSize=1 << 16))
    keep(case.call(c.R_CancelReceive(phContext=empty, dwRequestId=2)))
    case.finish_call(waiting)
    q3, subs = pre.queue_with_subqueues(case, [b"move me"], ("retry",))
    ctx3 = case.open(q3)
    peeked = case.receive(ctx3, action=c.MQ_ACTION_PEEK_CURRENT, request=3)
    moving = keep(case.call(c.R_OpenQueueForMove(pQueueFormat=subs["retry"],
                                                 pClientId=uuid.UUID(int=0x4D51),
                                                 fNonRoutingServer=1)))
    keep(case.call(c.R_MoveMessage(phContextFrom=ctx3, ullContextTo=moving.pMoveContext,
                                   LookupId=peeked.pSequenceId,
                                   pTransactionId=bytes(c.XACTUOW_SIZE))))
    tq = case.queue([b"tx one"], transactional=True)
    keep(case.call(c.R_QMEnlistRemoteTransaction(pTransactionId=xid,
                                                 cbPropagationToken=len(token),
                                                 pbPropagationToken=token, pQueueFormat=tq)))
    tctx = case.open(tq)
    got = keep(case.call(c.R_StartTransactionalReceive(
        phContext=tctx, dwRequestId=4, dwMaxBodySize=1 << 16,
        dwMaxCompoundMessageSize=1 << 16, pTransactionId=xid)))
    keep(case.call(c.R_EndTransactionalReceive(phContext=tctx, dwAck=c.RR_ACK, dwRequestId=4)))
    lookup = got.pSequenceId | ((7 - 3) << 56)  # priority 3 (MS-MQDMPR 3.1.7.1.9)
    keep(case.call(c.R_SetUserAcknowledgementClass(phContext=tctx, LookupId=lookup,
                                                   usClass=0xC004)))
    pre.end_transaction(case, xid, commit=True)
    keep(case.call(c.R_PurgeQueue(phContext=ctx)))
    keep(case.call(c.R_CloseQueue(pphContext=ctx)))
    machine = MgmtObject(MgmtObjectType.MGMT_MACHINE)
    from mqconform.conformance.steps.qmmgmt import MACHINE_IDS, NULL

    props = (MACHINE_IDS["PROPID_MGMT_MSMQ_CONNECTED"], MACHINE_IDS["PROPID_MGMT_MSMQ_TYPE"])
    keep(case.call(c.R_QMMgmtGetInfo(pObjectFormat=machine, cp=len(props), aProp=props,
                                     apVar=(NULL,) * len(props))))
    keep(case.call(c.R_QMMgmtAction(pObjectFormat=machine, lpwszAction="CONNECT")))
    result = case.finish()
    suite.target.qm.listener = None
    if result.verdict != "pass":
        raise RuntimeError(f"the typical session does not conform: {result.messages}")
    missing = [k.__name__ for k in c.CALLS.values() if k not in typical]
    if missing:
        raise RuntimeError(f"no typical call of {missing}")
    return typical


def opnum_path(call_type: type[c.Call], ndr64: bool) -> str:
    return (f"opnums/{call_type.interface}/{call_type.opnum:02d}-{call_type.__name__}-"
            f"{'ndr64' if ndr64 else 'ndr'}.pcap")


def build_opnums() -> dict[str, tuple[bytes, dict]]:
    out: dict[str, tuple[bytes, dict]] = {}
    with _Determinism() as determinism:
        determinism.case("golden/opnums")
        typical = typical_session()
    for (interface, opnum), call_type in sorted(c.CALLS.items()):
        call, result = typical[call_type]
        for ndr64 in (False, True) if interface == c.REMOTEREAD else (False,):
            conn = Conn(0, ndr64=ndr64)
            renderer = Renderer()
            data = renderer.render([Event(0, "request", conn, 1, call),
                                    Event(1, "answer", conn, 1, result=result)])
            out[opnum_path(call_type, ndr64)] = (data, _entry(
                renderer, case="golden/opnums", interface=interface, opnum=opnum,
                method=call_type.__name__, syntax="NDR64" if ndr64 else "NDR"))
    return out


# ============================================================================== reading back


def _index(root: Path) -> dict[str, dict]:
    return json.loads((root / INDEX).read_text(encoding="utf-8"))["files"]


def decoder_disagreements(root: Path = GOLDEN, paths: list[str] | None = None) -> list[str]:
    """Where captures.decode reads a golden pcap otherwise than index.json says: every frame
    decoded, no error but a stub error for each deliberately malformed stub, the same calls
    (connection, call_id, opnum, method, syntax, status, fault)."""
    from mqconform.captures.decode import decode_all

    index = _index(root)
    out = []
    for path in sorted(paths if paths is not None else index):
        entry = index[path]
        decoded = decode_all([root / path])
        summary = decoded.summaries[-1]
        if not (summary.frames == summary.decoded == entry["frames"] and summary.reconciles
                and not summary.rejected):
            out.append(f"{path}: {summary.frames} frames, {summary.decoded} decoded, "
                       f"{summary.rejected} rejected; the index says {entry['frames']}")
        stubs = [e for e in decoded.errors if e.kind == "stub"]
        others = [e for e in decoded.errors if e.kind != "stub"]
        malformed = sum("does not decode" in note for note in entry["notes"])
        if others or len(stubs) != malformed:
            out.append(f"{path}: errors {[f'{e.kind}: {e.message}' for e in decoded.errors]}; "
                       f"{malformed} deliberately malformed stub(s)")
        got = sorted(([r.connection, r.call_id, r.opnum, r.method, r.transfer_syntax, r.status,
                       r.fault] for r in decoded.calls), key=lambda r: r[:2])
        want = sorted((row[:7] for row in entry["calls"]), key=lambda r: r[:2])
        if got != want:
            out.append(f"{path}: the decoder's calls {got} differ from the index's {want}")
    return out


def _shifted(frame: bytes, shift: int) -> bytes:
    """A golden frame (Ethernet, IPv4 without options, TCP without options) with the client's
    port moved up by ``shift``, checksums made again."""
    ip, tcp = frame[14:34], frame[34:54]
    src, dst = socket.inet_ntoa(ip[12:16]), socket.inet_ntoa(ip[16:20])
    sport, dport, seq, ack, _, flags = struct.unpack("!HHLLBB", tcp[:14])
    if sport == SERVER_PORT:
        dport += shift
    else:
        sport += shift
    return build_frame(src, dst, sport, dport, seq, ack, flags, frame[54:],
                       struct.unpack("!H", ip[4:6])[0], frame[6:12], frame[0:6])


def concatenate(paths: list[Path]) -> tuple[bytes, list[int]]:
    """Golden pcaps as one pcap, for one tshark run over many: each file's client ports moved
    up by 8 per file (every golden conversation starts at the same ports and sequence numbers,
    which tshark would take for retransmissions). Returns the pcap and, per file, the number
    of frames before its first."""
    records, frame_starts, frames = [pcap_header()], [], 0
    for n, path in enumerate(paths):
        data = Path(path).read_bytes()
        frame_starts.append(frames)
        pos = 24
        while pos < len(data):
            sec, usec, size, _ = struct.unpack_from("<LLLL", data, pos)
            frame = _shifted(data[pos + 16:pos + 16 + size], 8 * n)
            records.append(struct.pack("<LLLL", sec, usec, len(frame), len(frame)) + frame)
            pos += 16 + size
            frames += 1
    return b"".join(records), frame_starts


def tshark_disagreements(root: Path = GOLDEN, paths: list[str] | None = None) -> list[str]:
    """Where tshark's DCE/RPC dissection (``-Y dcerpc``) of golden pcaps misses a call of
    index.json: its request (call_id, opnum) and its response or fault, in the call's frames
    and TCP stream; and any request tshark sees that the index does not list.

    tshark starts slowly (a quarter of a second), so it reads the files once, concatenated:
    each file's client ports moved up by 8 per file (every golden conversation starts at the
    same ports and sequence numbers, which tshark would otherwise take for retransmissions);
    frames and streams are mapped back to each file by its offsets."""
    import bisect
    import subprocess

    index = _index(root)
    paths = sorted(paths if paths is not None else index)
    if len(paths) * 8 + CLIENT_PORT + 8 > 0xFFFF:
        half = len(paths) // 2
        return tshark_disagreements(root, paths[:half]) + \
            tshark_disagreements(root, paths[half:])
    data, frame_starts = concatenate([root / path for path in paths])
    stream_starts, streams = [], 0
    for path in paths:
        stream_starts.append(streams)
        streams += index[path]["connections"]
    with tempfile.TemporaryDirectory() as tmp:
        merged = Path(tmp) / "golden.pcap"
        merged.write_bytes(data)
        argv = ["tshark", *TSHARK_OPTIONS, "-r", str(merged), "-Y", "dcerpc", "-T", "fields"]
        for f in ("frame.number", "tcp.stream", "dcerpc.pkt_type", "dcerpc.cn_call_id",
                  "dcerpc.opnum"):
            argv += ["-e", f]
        run = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    if run.returncode != 0:
        return [f"tshark exit {run.returncode}: {run.stderr.strip()[-300:]}"]
    seen: list[dict[tuple[int, int], list[tuple[int, int, str]]]] = [{} for _ in paths]
    for line in run.stdout.splitlines():
        frame, stream, ptypes, call_ids, opnums = (line.split("\t") + [""] * 5)[:5]
        n = bisect.bisect_right(frame_starts, int(frame) - 1) - 1
        local_frame, local_stream = int(frame) - frame_starts[n], int(stream) - stream_starts[n]
        opnum_list = opnums.split(",") if opnums else []
        for i, (ptype, call_id) in enumerate(zip(ptypes.split(","), call_ids.split(","),
                                                 strict=False)):
            opnum = opnum_list[i] if i < len(opnum_list) else ""
            seen[n].setdefault((local_stream, int(call_id)), []).append(
                (local_frame, int(ptype), opnum))
    problems = []
    for n, path in enumerate(paths):
        listed = set()
        for conn, call_id, opnum, method, _, status, fault, first, last in index[path]["calls"]:
            listed.add((conn, call_id))
            pdus = [p for p in seen[n].get((conn, call_id), []) if first <= p[0] <= last]
            requests = [p for p in pdus if p[1] == d.PType.REQUEST and p[2] == str(opnum)]
            if status is None and fault is None:
                # answered after its connection closed: the request alone is on the wire
                answers = [p for p in seen[n].get((conn, call_id), [])
                           if p[1] in (d.PType.RESPONSE, d.PType.FAULT)]
                if not requests or answers:
                    problems.append(f"{path}: tshark has no request (opnum {opnum}) of "
                                    f"{method} call_id {call_id} on stream {conn} in frames "
                                    f"{first}-{last}, or an answer the index says is not on "
                                    f"the wire (it has {pdus}, answers {answers})")
                continue
            answers = [p for p in pdus if p[1] == (d.PType.FAULT if fault is not None
                                                    else d.PType.RESPONSE)]
            if not requests or not answers:
                problems.append(f"{path}: tshark has no request (opnum {opnum}) and "
                                f"{'fault' if fault is not None else 'response'} of {method} "
                                f"call_id {call_id} on stream {conn} in frames {first}-{last} "
                                f"(it has {pdus})")
        extra = sorted(k for k, pdus in seen[n].items() if k not in listed
                       and any(p[1] == d.PType.REQUEST for p in pdus))
        if extra:
            problems.append(f"{path}: tshark sees requests the index does not list: {extra}")
    return problems


# ============================================================================== the command


def build(only: list[str] | None = None, opnums: bool = True
          ) -> tuple[dict[str, bytes], dict]:
    """Every golden file's octets by its path under captures/golden/, and the index."""
    built = build_scenarios(only)
    if opnums:
        built.update(build_opnums())
    # a scenario none of whose calls NDR can carry (a NULL [ref] pointer, a step of the RPC
    # runtime the model does not see) has nothing to show: no pcap, its notes say why
    unseen = {path: {"case": entry.get("case"), "feature": entry.get("feature"),
                     "notes": entry["notes"] or [
        "no call of the scenario is rendered: its steps speak to the RPC runtime or to "
        "authentication (a verification trailer, a signed bind), which only a run over TCP "
        "shows (mqconform run: wire.pcap)"]}
              for path, (_, entry) in built.items() if not entry["frames"]}
    built = {path: item for path, item in built.items() if path not in unseen}
    files = {path: data for path, (data, _) in built.items()}
    files.update(_sidecars(built))
    index = {
        "about": "golden pcaps: python -m mqconform.conformance.golden "
                 "(conformance/golden.py); one per scenario of features/ on the model, one per "
                 "opnum and transfer syntax",
        "client": f"{CLIENT_IP}:{CLIENT_PORT}+", "server": f"{SERVER_IP}:{SERVER_PORT}",
        "epoch": EPOCH, "frame_step_us": FRAME_STEP_US, "max_frag": MAX_FRAG, "mss": MSS,
        "call_columns": list(CALL_COLUMNS),
        "files": {path: entry for path, (_, entry) in sorted(built.items())},
        "not_on_the_wire": dict(sorted(unseen.items())),
    }
    files[INDEX] = (json.dumps(index, indent=1, sort_keys=True) + "\n").encode()
    return files, index


def _sidecars(built: dict[str, tuple[bytes, dict]]) -> dict[str, bytes]:
    """Beside each pcap whose scenario breaks a client rule or sends a malformed request on
    purpose, its list of deliberate departures (captures/expected.py, as ``mqconform run``
    writes beside wire.pcap), so that ``mqconform captures validate captures/golden``
    reports those as expected."""
    import tempfile

    from mqconform.captures import expected

    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        for path, (data, entry) in sorted(built.items()):
            capture = Path(tmp) / Path(path).name
            capture.write_bytes(data)
            case = {"case": entry.get("case") or path,
                    "frames": {"first": 1, "last": entry["frames"]}}
            listed = expected.deliberate(capture, [case])
            capture.unlink()
            if listed["expected"]:
                name = expected.sidecar(path).as_posix()
                out[name] = (json.dumps(listed, indent=1) + "\n").encode()
    return out


def _existing(root: Path) -> set[str]:
    if not root.exists():
        return set()
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}


def differences(files: dict[str, bytes], root: Path, partial: bool) -> list[str]:
    """What writing ``files`` under ``root`` would change (with ``partial``, only the files
    built and their index entries)."""
    out = []
    for path, data in sorted(files.items()):
        target = root / path
        if path == INDEX and partial:
            continue
        if not target.exists():
            out.append(f"new: {path}")
        elif target.read_bytes() != data:
            out.append(f"changed: {path}")
    if partial:
        old = json.loads((root / INDEX).read_text()) if (root / INDEX).exists() else {}
        new = json.loads(files[INDEX])
        for path, entry in new["files"].items():
            if old.get("files", {}).get(path) != entry:
                out.append(f"index entry changed: {path}")
        for path, entry in new["not_on_the_wire"].items():
            if old.get("not_on_the_wire", {}).get(path) != entry:
                out.append(f"index entry changed: {path}")
            if (root / path).exists():
                out.append(f"stale: {path}")
    else:
        out += [f"stale: {p}" for p in sorted(_existing(root) - set(files))]
    return out


def write(files: dict[str, bytes], root: Path, partial: bool) -> None:
    if not partial:
        for stale in _existing(root) - set(files):
            (root / stale).unlink()
    elif (root / INDEX).exists():  # merge the entries built into the index there
        index = json.loads((root / INDEX).read_text())
        built = json.loads(files[INDEX])
        index["files"].update(built["files"])
        unseen = index.setdefault("not_on_the_wire", {})
        unseen.update(built["not_on_the_wire"])
        for path in built["not_on_the_wire"]:
            index["files"].pop(path, None)
            (root / path).unlink(missing_ok=True)
        for path in built["files"]:
            unseen.pop(path, None)
        files = {**files, INDEX: (json.dumps(index, indent=1, sort_keys=True) + "\n").encode()}
    for path, data in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.exists() or target.read_bytes() != data:
            target.write_bytes(data)
    for folder in sorted((p for p in root.rglob("*") if p.is_dir()), reverse=True):
        if not any(folder.iterdir()):
            folder.rmdir()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m mqconform.conformance.golden",
                                description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", type=Path, default=GOLDEN, help="where (captures/golden/)")
    p.add_argument("--check", action="store_true",
                   help="write nothing; exit 1 if any file would change")
    p.add_argument("--only", action="append", default=None, metavar="FEATURE",
                   help="the scenarios of this feature file (or directory) only, e.g. "
                        "features/MS-MQRR/2.1.feature; repeatable")
    p.add_argument("--no-opnums", action="store_true", help="no per-opnum pcaps")
    p.add_argument("--verify", action="store_true",
                   help="then read every file back with captures.decode and tshark and "
                        "compare with the index (exit 1 on a disagreement)")
    args = p.parse_args(argv)
    partial = bool(args.only) or args.no_opnums
    files, index = build(args.only, not args.no_opnums)
    pcaps = [f for f in files if f.endswith(".pcap")]
    frames = sum(e["frames"] for e in index["files"].values())
    size = sum(len(v) for v in files.values())
    summary = f"{len(pcaps)} pcaps, {frames} frames, {size / 1e6:.2f} MB"
    rc = 0
    if args.check:
        changes = differences(files, args.out, partial)
        for line in changes[:50]:
            print(line)
        print(f"{summary}: {'up to date' if not changes else f'{len(changes)} difference(s)'}")
        rc = 1 if changes else 0
    else:
        write(files, args.out, partial)
        print(f"{summary} in {args.out}")
    if args.verify:
        paths = sorted(f for f in files if f != INDEX)
        problems = decoder_disagreements(args.out, paths)
        if shutil.which("tshark") is None:
            print("tshark: not found; not compared")
        else:
            problems += tshark_disagreements(args.out, paths)
        for line in problems[:50]:
            print(line)
        print(f"read back: {len(paths)} files, {len(problems)} disagreement(s)")
        rc = rc or (1 if problems else 0)
    return rc


__all__ = ["CALL_COLUMNS", "CaseLog", "GOLDEN", "INDEX", "Renderer", "build",
           "decoder_disagreements", "differences", "main", "opnum_path", "run_scenarios",
           "scenario_path", "tshark_disagreements", "typical_session", "write"]

if __name__ == "__main__":
    sys.exit(main())
