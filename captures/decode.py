"""The capture decoder: pcap and pcapng files to a table of DCE/RPC calls (RemoteRead, qmmgmt,
and any other interface by its UUID and opnum), with the errors met on the way and counts that
reconcile: every frame read is decoded (it belongs to a TCP connection that carries DCE/RPC),
rejected (malformed: its error is in ``errors``) or not DCE/RPC.

    for item in decode_file("capture.pcap"):   # Call, DecodeError, then one FileSummary
        ...

Layers, each by struct (the fast path; ``tests/captures/slowpath.py`` reads the same files with
scapy and tests/captures hold the two equal):

1. Records (captures/pcapio.py), link layers (Ethernet with 802.1Q/802.1ad tags, Linux cooked
   v1 and v2, BSD loopback, raw IP), IPv4 and IPv6 (extension headers skipped; IP fragments are
   not reassembled: such a frame is rejected), TCP.
2. TCP reassembly per direction: sequence numbers from the SYN (or the first segment seen),
   segments out of order held until the hole before them fills, retransmitted and overlapping
   octets delivered once. A hole that does not fill (more than ``MAX_PENDING`` octets wait
   behind it, or the connection ends) is a **gap**: reported with its size, never filled in;
   the PDU it cuts is dropped and reading resumes at the next segment that begins a PDU.
3. DCE/RPC (C706 12.6): PDUs framed by frag_length; bind / alter_context and their acks give
   each presentation context its interface and transfer syntax (NDR or NDR64) and the
   association group; request and response fragments are reassembled per call_id (the auth
   trailer, MS-RPCE 2.2.2.11, stripped); a response or fault completes the call its call_id
   names.
4. Stubs of RemoteRead and qmmgmt are decoded by wire/ndr.py into the typed calls and results
   of model/calls.py, written as JSON; a stub that does not decode keeps its call row, with
   ``decode_error`` saying why (and an error row).

A connection is DCE/RPC once a valid PDU header is read at the start of a segment (checked
strictly: version 5.0/5.1, a known PDU type, a valid data representation, a plausible
frag_length): a capture that begins in the middle of a connection synchronizes at the first
segment that begins a PDU.

``scan(path)`` is the same decoder compiled (captures/_cdecode.c, built by pip where a C
compiler is found): for a pcap or pcapng file, gzipped or not, it makes the rows and error rows
Decoder(json_fields=False) makes, as columns, and raises Unsupported for any file it does not
take — the caller then uses Decoder. tests/captures/test_cdecode.py holds the two equal.
"""

from __future__ import annotations

import base64
import bisect
import dataclasses
import enum
import functools
import ipaddress
import json
import struct
import uuid
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mqconform.captures import columns, fastpath, pcapio
from mqconform.model import calls as c
from mqconform.model.observer import observation_fields
from mqconform.wire import association as assoc
from mqconform.wire import dcerpc as dce
from mqconform.wire import ndr

#: decode_error of a call row whose answer, or request, is not in the capture (the capture or
#: the connection ended first, or began after the request)
NO_ANSWER = "no answer to this request in the capture"
NO_REQUEST = "no request for this answer in the capture"
SEALED = columns.SEALED
#: octets waiting behind a hole before the hole is declared a gap
MAX_PENDING = 4 << 20
#: PDU types sent by a client (the side that sends one of them is the connection's client)
_FROM_CLIENT = frozenset(int(t) for t in (dce.PType.REQUEST, dce.PType.BIND,
                                          dce.PType.ALTER_CONTEXT))
_REQUEST = int(dce.PType.REQUEST)
#: every PDU type a header may carry (C706 12.6.4; MS-RPCE 2.2.2.x)
_PTYPES = frozenset(int(t) for t in dce.PType)
TCP_FIN, TCP_SYN, TCP_RST = 0x01, 0x02, 0x04

_IPV6_EXT = frozenset({0, 43, 60, 51, 135, 139, 140})  # hop-by-hop, routing, dest opts, AH, ...


# --------------------------------------------------------------------------- the tables

_PYTHON_TYPES = {"string": str, "int32": int, "int64": int, "uint16": int, "uint32": int,
                 "uint64": int, "float64": float}


def _call_class() -> type:
    """Call: one row of the calls table, its fields the columns of captures/columns.py in
    their order (the first ones, up to response_time, always given; the trace validator's
    filled where the stubs tell), then the raw stubs when they are kept."""
    base = columns.NAMES.index("handle")
    spec = []
    for i, col in enumerate(columns.CALLS):
        kind = _PYTHON_TYPES.get(col.type, tuple) | None
        spec.append((col.name, kind) if i < base else
                    (col.name, kind, field(default=None)))
    spec += [("request_stub", bytes | None, field(default=None)),
             ("response_stub", bytes | None, field(default=None))]
    klass = dataclasses.make_dataclass("Call", spec, slots=True)
    klass.__module__ = __name__  # so that a Call pickles (make_dataclass(module=) is 3.12's)
    klass.__doc__ = "One row of the calls table (captures/columns.py defines each column)."
    return klass


Call = _call_class()


@dataclass(slots=True)
class DecodeError:
    capture: str
    frame: int | None
    kind: str  # io, format, truncated, corrupt, link, ip, tcp, gap, desync, pdu, fragment, stub
    message: str
    connection: int | None = None


@dataclass(slots=True)
class FileSummary:
    capture: str
    frames: int = 0  # frames in
    decoded: int = 0  # in a TCP connection carrying DCE/RPC
    rejected: int = 0  # malformed (an error row says why)
    not_dcerpc: int = 0  # well formed, not DCE/RPC over TCP
    pdus: int = 0
    calls: int = 0
    errors: int = 0
    bytes_read: int = 0
    gaps: int = 0

    @property
    def reconciles(self) -> bool:
        return self.frames == self.decoded + self.rejected + self.not_dcerpc


class FrameError(ValueError):
    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind


# --------------------------------------------------------------------------- link, IP, TCP

def _ip(raw: bytes) -> str:
    return str(ipaddress.ip_address(raw))


def tcp_segment(linktype: int, data: bytes) -> tuple | None:
    """(src, dst, sport, dport, seq, flags, payload) of a TCP segment; None for a frame that is
    well formed but not TCP over IP; FrameError for a malformed one."""
    if linktype == pcapio.LINKTYPE_ETHERNET:
        if len(data) < 14:
            raise FrameError("link", f"Ethernet frame of {len(data)} bytes")
        ethertype = (data[12] << 8) | data[13]
        pos = 14
        while ethertype in (0x8100, 0x88A8, 0x9100):
            if len(data) < pos + 4:
                raise FrameError("link", "VLAN tag cut short")
            ethertype = (data[pos + 2] << 8) | data[pos + 3]
            pos += 4
    elif linktype in (pcapio.LINKTYPE_RAW, 12, 14, pcapio.LINKTYPE_IPV4,
                      pcapio.LINKTYPE_IPV6):
        if not data:
            raise FrameError("link", "empty raw IP frame")
        version = data[0] >> 4
        ethertype, pos = (0x0800 if version == 4 else 0x86DD if version == 6 else 0), 0
    elif linktype == pcapio.LINKTYPE_LINUX_SLL:
        if len(data) < 16:
            raise FrameError("link", "Linux cooked header cut short")
        ethertype, pos = (data[14] << 8) | data[15], 16
    elif linktype == pcapio.LINKTYPE_LINUX_SLL2:
        if len(data) < 20:
            raise FrameError("link", "Linux cooked v2 header cut short")
        ethertype, pos = (data[0] << 8) | data[1], 20
    elif linktype == pcapio.LINKTYPE_NULL:
        if len(data) < 4:
            raise FrameError("link", "loopback header cut short")
        family = struct.unpack_from("<I", data)[0]
        if family > 0xFFFF:
            family = struct.unpack_from(">I", data)[0]
        ethertype = 0x0800 if family == 2 else 0x86DD if family in (10, 24, 28, 30) else 0
        pos = 4
    else:
        return None
    if ethertype == 0x0800:
        if len(data) < pos + 20:
            raise FrameError("ip", "IPv4 header cut short")
        vihl = data[pos]
        ihl = (vihl & 0x0F) * 4
        if vihl >> 4 != 4 or ihl < 20:
            raise FrameError("ip", f"IPv4 version/IHL byte 0x{vihl:02X}")
        total = (data[pos + 2] << 8) | data[pos + 3]
        if total < ihl or len(data) < pos + total:
            raise FrameError("ip", f"IPv4 total length {total} but {len(data) - pos} bytes "
                                   f"captured")
        if data[pos + 6] & 0x20 or ((data[pos + 6] & 0x1F) << 8 | data[pos + 7]):
            raise FrameError("ip", "IPv4 fragment (IP fragments are not reassembled)")
        if data[pos + 9] != 6:
            return None
        src, dst = data[pos + 12:pos + 16], data[pos + 16:pos + 20]
        tcp, end = pos + ihl, pos + total
    elif ethertype == 0x86DD:
        if len(data) < pos + 40:
            raise FrameError("ip", "IPv6 header cut short")
        if data[pos] >> 4 != 6:
            raise FrameError("ip", "IPv6 version is not 6")
        plen = (data[pos + 4] << 8) | data[pos + 5]
        nxt = data[pos + 6]
        src, dst = data[pos + 8:pos + 24], data[pos + 24:pos + 40]
        end = pos + 40 + plen
        if len(data) < end:
            raise FrameError("ip", f"IPv6 payload length {plen} but {len(data) - pos - 40} "
                                   f"bytes captured")
        tcp = pos + 40
        while nxt in _IPV6_EXT or nxt == 44:
            if nxt == 44:
                raise FrameError("ip", "IPv6 fragment (IP fragments are not reassembled)")
            if tcp + 8 > end:
                raise FrameError("ip", "IPv6 extension header cut short")
            nxt, size = data[tcp], (data[tcp + 1] + (2 if nxt == 51 else 1)) * (4 if nxt == 51
                                                                                  else 8)
            tcp += size
        if nxt != 6:
            return None
    else:
        return None
    if end - tcp < 20:
        raise FrameError("tcp", "TCP header cut short")
    sport, dport, seq, _ack, off, flags = struct.unpack_from(">HHIIBB", data, tcp)
    hlen = (off >> 4) * 4
    if hlen < 20 or tcp + hlen > end:
        raise FrameError("tcp", f"TCP data offset {hlen}")
    return src, dst, sport, dport, seq, flags, data[tcp + hlen:end]


def valid_header(data: bytes | memoryview, pos: int = 0) -> bool:
    """A DCE/RPC connection-oriented PDU header at ``pos`` (strict)."""
    if len(data) - pos < 16:
        return False
    if data[pos] != 5 or data[pos + 1] > 1 or data[pos + 2] not in _PTYPES:
        return False
    if data[pos + 4] not in (0x00, 0x01, 0x10, 0x11) or data[pos + 5] > 3 or data[pos + 6] \
            or data[pos + 7]:
        return False
    le = data[pos + 4] & 0x10
    frag = (data[pos + 8] | data[pos + 9] << 8) if le else (data[pos + 8] << 8 | data[pos + 9])
    auth = (data[pos + 10] | data[pos + 11] << 8) if le else \
        (data[pos + 10] << 8 | data[pos + 11])
    return frag >= 16 and auth + 16 <= frag


def _header_prefix(data: bytes) -> bool:
    """Could these few octets (fewer than 16) begin a PDU header?"""
    checks = (lambda b: b == 5, lambda b: b <= 1, lambda b: b in _PTYPES, lambda b: True,
              lambda b: b in (0x00, 0x01, 0x10, 0x11), lambda b: b <= 3, lambda b: b == 0,
              lambda b: b == 0)
    return all(check(b) for check, b in zip(checks, data, strict=False))


# --------------------------------------------------------------------------- connections

class _Direction:
    """One direction of a TCP connection: reassembly, then PDU framing."""

    __slots__ = ("next_seq", "pending", "pending_size", "buf", "base", "frames", "synced",
                 "fin", "skipped", "probe")

    def __init__(self) -> None:
        self.next_seq: int | None = None
        self.pending: dict[int, tuple[bytes, int, float]] = {}
        self.pending_size = 0
        self.buf = bytearray()
        self.base = 0  # stream offset of buf[0]
        self.frames: list[tuple[int, int, float]] = []  # (end offset, frame, ts) in order
        self.synced = False
        self.fin: int | None = None  # the sequence number a FIN closes at
        self.skipped = 0  # octets skipped before a PDU began
        self.probe: list | None = None  # short segments that may begin a header


class _Connection:
    __slots__ = ("index", "key", "client", "server", "dirs", "frames", "dcerpc", "assoc",
                 "client_side", "closed", "syn", "names", "inferred", "held")

    def __init__(self, index: int, key: tuple, first: tuple[bytes, int]):
        self.index = index
        self.key = key
        self.client = first  # (ip, port) of the side that opened it, until a PDU says
        self.server: tuple[bytes, int] | None = None
        self.dirs: dict[tuple[bytes, int], _Direction] = {}
        self.frames = 0
        self.dcerpc = False
        #: the DCE/RPC association on it: contexts, fragments, calls paired (wire/association.py)
        self.assoc = assoc.Association(assoc.OBSERVER)
        self.client_side: tuple[bytes, int] | None = None
        self.closed = 0
        self.syn: tuple | None = None
        self.names: tuple | None = None  # the endpoints as text, once
        #: presentation contexts whose bind is not in the capture: context id -> the
        #: interface and syntax their stubs settled (_Inference)
        self.inferred: dict[int, tuple] = {}
        #: calls of such contexts waiting for a later call to settle them: context id -> calls
        self.held: dict[int, list] = {}


def _endpoint(ip: bytes, port: int) -> str:
    text = _ip(ip)
    return f"[{text}]:{port}" if ":" in text else f"{text}:{port}"


# --------------------------------------------------------------------------- JSON of calls

def jsonable(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, (bytes, bytearray, memoryview)):
        return {"hex": bytes(value).hex()} if len(value) <= 4096 else \
            {"base64": base64.b64encode(bytes(value)).decode()}
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, enum.Enum):
        return value.name
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    return value


def _json(value: Any) -> str:
    return json.dumps(jsonable(value), separators=(",", ":"), sort_keys=False)


# --------------------------------------------------------------------------- the decoder

@functools.lru_cache(maxsize=256)
def interface_info(abstract: uuid.UUID | None, syntax: uuid.UUID | None) -> tuple:
    """What a call row says of the interface and transfer syntax a presentation context
    accepted: (RemoteRead, qmmgmt or None, NDR64?, the UUID as text, NDR, NDR64 or None)."""
    name = {c.REMOTEREAD_UUID: c.REMOTEREAD, c.QMMGMT_UUID: c.QMMGMT}.get(abstract)
    return (name, syntax == dce.NDR64.uuid, str(abstract) if abstract else None,
            "NDR64" if syntax == dce.NDR64.uuid
            else "NDR" if syntax == dce.NDR.uuid else None)


@functools.lru_cache(maxsize=256)
def _binding_columns(binding: assoc.Binding | None) -> tuple:
    """interface_info of a presentation context, and its interface version as text."""
    if binding is None:
        return interface_info(None, None) + (None,)
    return interface_info(binding.interface, binding.transfer_syntax.uuid) + (
        f"{binding.version[0]}.{binding.version[1]}",)


class Decoder:
    """Decodes one capture file; ``run()`` yields Call, DecodeError and, last, FileSummary."""

    def __init__(self, name: str, decode_stubs: bool = True, keep_stubs: bool = False,
                 json_fields: bool = True):
        """``json_fields``: fill the request/response JSON columns (the observer's columns are
        filled whenever stubs are decoded)."""
        self.name = name
        self.decode_stubs = decode_stubs
        self.json_fields = json_fields
        self.keep_stubs = keep_stubs
        self.summary = FileSummary(name)
        self.conns: dict[tuple, _Connection] = {}
        #: ended connections: key -> (carried DCE/RPC, (client, ISN) of its SYN)
        self.ended: dict[tuple, tuple[bool, tuple | None]] = {}
        self.count = 0
        self.out: list[Call | DecodeError] = []
        self._calls = c.CALLS
        #: run_chain: (the first frame number of each file, counted across the files, the
        #: file's name, its summary), in order; empty for one file
        self._files: list[tuple[int, str, FileSummary]] = []

    # ------------------------------------------------------------------ driving
    def run(self, source: Any) -> Iterator[Call | DecodeError | FileSummary]:
        yield from self._records(source, 0)
        for conn in list(self.conns.values()):
            self._close(conn)
        yield from self.out
        self.out.clear()
        yield self.summary

    def run_chain(self, sources: list[tuple[str, Any]]
                  ) -> Iterator[Call | DecodeError | FileSummary]:
        """Files that continue each other (the pieces of one capture: dumpcap's ring buffer,
        editcap -c) read as one stream: a connection, its binds, a PDU or a call cut by a file
        boundary go on in the next file. ``sources``: (name, path or binary file) in order.
        Each row names the file its first frame is in (a call: its request's), and frame
        numbers are those of the file each frame is in; connections are numbered across the
        files. Yields the rows, then one FileSummary per file, in order."""
        offset = 0
        for name, source in sources:
            if self._files:  # the frames of open connections so far: the file just read's
                for conn in self.conns.values():
                    self._count_frames(conn)
            self.name, self.summary = name, FileSummary(name)
            self._files.append((offset + 1, name, self.summary))
            yield from self._records(source, offset)
            offset += self.summary.frames
        for conn in list(self.conns.values()):
            self._close(conn)
        yield from self.out
        self.out.clear()
        for _, _, summary in self._files:
            yield summary

    def _records(self, source: Any, offset: int) -> Iterator[Call | DecodeError]:
        s = self.summary
        for rec in pcapio.records(source):
            if isinstance(rec, pcapio.RecordError):
                if rec.number is not None:
                    s.frames += 1
                    s.rejected += 1
                    rec.number += offset
                self._error(rec.number, rec.kind, rec.message)
            else:
                s.frames += 1
                s.bytes_read += len(rec.data)
                if offset:
                    rec.number += offset
                self._frame(rec)
            if self.out:
                yield from self.out
                self.out.clear()

    def _file_of(self, frame: int | None) -> tuple[str, int | None, FileSummary]:
        """run_chain: the file a frame (numbered across the files) is in, its number there and
        the file's summary."""
        if frame is None or not self._files:
            return self.name, frame, self.summary
        i = bisect.bisect_right(self._files, frame, key=lambda f: f[0]) - 1
        first, name, summary = self._files[max(i, 0)]
        return name, frame - first + 1, summary

    def _local(self, frame: int | None) -> int | None:
        return frame if frame is None or not self._files else self._file_of(frame)[1]

    def _error(self, frame: int | None, kind: str, message: str,
               connection: int | None = None) -> None:
        capture, frame, summary = self._file_of(frame)
        summary.errors += 1
        self.out.append(DecodeError(capture, frame, kind, message, connection))

    def _frame(self, rec: pcapio.Record) -> None:
        try:
            seg = tcp_segment(rec.linktype, rec.data)
        except FrameError as exc:
            self.summary.rejected += 1
            self._error(rec.number, exc.kind, str(exc))
            return
        if seg is None:
            self.summary.not_dcerpc += 1
            return
        src, dst, sport, dport, seq, flags, payload = seg
        a, b = (src, sport), (dst, dport)
        key = (a, b) if a <= b else (b, a)
        conn = self.conns.get(key)
        if conn is None and key in self.ended and (
                not flags & TCP_SYN or self.ended[key][1] == (a, seq)):
            # a late segment of a connection that has ended (the last ACK, a retransmitted
            # segment, FIN, RST or even its SYN): counted as its connection was
            if self.ended[key][0]:
                self.summary.decoded += 1
            else:
                self.summary.not_dcerpc += 1
            return
        if conn is None or (flags & TCP_SYN and not flags & 0x10 and conn.closed):
            if conn is not None:
                self._close(conn)
            conn = _Connection(self.count, key, a)
            self.count += 1
            self.conns[key] = conn
        conn.frames += 1
        if flags & TCP_SYN and not flags & 0x10:  # a SYN: the sender opens, it is the client
            conn.client = a
            conn.syn = (a, seq)
        d = conn.dirs.get(a)
        if d is None:
            d = conn.dirs[a] = _Direction()
        if flags & TCP_FIN:
            d.fin = (seq + len(payload) + (1 if flags & TCP_SYN else 0)) & 0xFFFFFFFF
        self._segment(conn, a, d, seq, flags, payload, rec.number, rec.ts)
        if flags & TCP_RST:
            self._close(conn)
        elif flags & TCP_FIN or conn.closed:
            # closed when both sides have sent FIN and every octet before each FIN has come
            # (a FIN that overtakes data leaves the connection open until the data arrives)
            done = [x for x in conn.dirs.values() if x.fin is not None
                    and (x.next_seq is None or x.next_seq == x.fin) and not x.pending]
            conn.closed = len(done)
            if len(done) == 2:
                self._close(conn)

    def _close(self, conn: _Connection) -> None:
        """The connection ends (FIN both ways, RST, or the end of the capture): flush what
        waits, report what never completed, and count its frames."""
        if self.conns.get(conn.key) is conn:
            del self.conns[conn.key]
        if len(self.ended) >= 65536:  # remember the most recent ones only
            self.ended.pop(next(iter(self.ended)))
        self.ended[conn.key] = (conn.dcerpc, conn.syn)
        for side, d in conn.dirs.items():
            while d.pending:  # each hole that did not fill, in turn (frames cut by a snap
                self._gap(conn, side, d, None)  # length leave one each)
            if d.synced and d.buf:
                self._error(d.frames[-1][1] if d.frames else None, "truncated",
                            f"{len(d.buf)} octets of a PDU end the connection unfinished",
                            conn.index)
        self._events(conn, conn.assoc.close())
        if conn.held:
            self._unsettled(conn)
        self._count_frames(conn)

    def _count_frames(self, conn: _Connection) -> None:
        if conn.dcerpc:
            self.summary.decoded += conn.frames
        else:
            self.summary.not_dcerpc += conn.frames
        conn.frames = 0

    # ------------------------------------------------------------------ TCP
    def _segment(self, conn: _Connection, side: tuple, d: _Direction, seq: int, flags: int,
                 payload: bytes, frame: int, ts: float) -> None:
        if flags & TCP_SYN:
            d.next_seq = (seq + 1) & 0xFFFFFFFF  # data on a SYN (TFO) follows it
            seq = d.next_seq
            if not payload:
                return
        if not payload:
            return
        if d.next_seq is None:
            d.next_seq = seq
        rel = (seq - d.next_seq + 0x80000000) % 0x100000000 - 0x80000000
        if rel < 0:  # retransmitted or overlapping octets: deliver only what is new
            if rel + len(payload) <= 0:
                return
            payload, seq = payload[-rel:], d.next_seq
            rel = 0
        if rel > 0:  # out of order: hold it until the hole fills
            held = d.pending.get(seq)
            if held is None or len(held[0]) < len(payload):
                d.pending_size += len(payload) - (len(held[0]) if held else 0)
                d.pending[seq] = (payload, frame, ts)
            if d.pending_size > MAX_PENDING:
                self._gap(conn, side, d, frame)
            return
        self._deliver(conn, side, d, payload, frame, ts)
        self._drain(conn, side, d)

    def _drain(self, conn: _Connection, side: tuple, d: _Direction) -> None:
        while d.pending:
            best = None
            for s in d.pending:
                rel = (s - d.next_seq + 0x80000000) % 0x100000000 - 0x80000000
                if rel <= 0:
                    best = s
                    break
            if best is None:
                return
            payload, frame, ts = d.pending.pop(best)
            d.pending_size -= len(payload)
            rel = (best - d.next_seq + 0x80000000) % 0x100000000 - 0x80000000
            if rel + len(payload) > 0:
                self._deliver(conn, side, d, payload[-rel:] if rel else payload, frame, ts)

    def _gap(self, conn: _Connection, side: tuple, d: _Direction, frame: int | None) -> None:
        """The hole before the held segments will not fill: report it, drop the PDU it cuts,
        and go on from the first held segment."""
        first = min(d.pending, key=lambda s: (s - d.next_seq) % 0x100000000)
        missing = (first - d.next_seq) % 0x100000000
        self.summary.gaps += 1
        where = d.pending[first][1]
        self._error(frame if frame is not None else where, "gap",
                    f"{missing} octets from {_endpoint(*side)} are missing before frame "
                    f"{where} (not in the capture)", conn.index)
        if d.synced and d.buf:
            self._error(where, "gap", f"a PDU of {_endpoint(*side)} is cut by the gap: its "
                                      f"{len(d.buf)} octets read are dropped", conn.index)
        d.buf.clear()
        d.frames.clear()
        d.synced = False
        d.next_seq = first
        self._drain(conn, side, d)

    def _deliver(self, conn: _Connection, side: tuple, d: _Direction, payload: bytes,
                 frame: int, ts: float) -> None:
        d.next_seq = (d.next_seq + len(payload)) & 0xFFFFFFFF
        if not d.synced:
            if d.probe:  # a header begun in an earlier, short segment
                d.probe.append((payload, frame, ts))
            elif len(payload) < 16 and _header_prefix(payload):
                d.probe = [(payload, frame, ts)]
            if d.probe:
                head = b"".join(p for p, _, _ in d.probe)
                if len(head) < 16:
                    return
                pieces, d.probe = d.probe, None
                if not valid_header(head):
                    d.skipped += len(head)
                    return
            elif not valid_header(payload):
                d.skipped += len(payload)
                return
            else:
                pieces = None
            d.synced = True
            if d.skipped and conn.dcerpc:
                self._error(frame, "desync", f"{d.skipped} octets from {_endpoint(*side)} "
                                             f"skipped before a PDU began", conn.index)
            d.skipped = 0
            d.buf = bytearray()
            d.frames = []
            if pieces is not None:
                for piece, piece_frame, piece_ts in pieces:
                    d.buf += piece
                    d.frames.append((d.base + len(d.buf), piece_frame, piece_ts))
                self._pdus(conn, side, d)
                return
        if not d.buf:  # the common case: the segment begins a PDU; whole PDUs go straight
            pos, size = 0, len(payload)
            while size - pos >= 16 and valid_header(payload, pos):
                le = payload[pos + 4] & 0x10
                frag = (payload[pos + 8] | payload[pos + 9] << 8) if le else \
                    (payload[pos + 8] << 8 | payload[pos + 9])
                if size - pos < frag:
                    break
                self._pdu(conn, side, payload[pos:pos + frag] if pos or frag != size
                          else payload, frame, frame, ts, ts)
                pos += frag
            d.base += pos
            if pos == size:
                return
            payload = payload[pos:]
        d.buf += payload
        d.frames.append((d.base + len(d.buf), frame, ts))
        self._pdus(conn, side, d)

    # ------------------------------------------------------------------ DCE/RPC PDUs
    def _pdus(self, conn: _Connection, side: tuple, d: _Direction) -> None:
        buf = d.buf
        pos = 0
        while len(buf) - pos >= 16:
            if not valid_header(buf, pos):
                self._error(self._frame_at(d, d.base + pos), "desync",
                            f"octets from {_endpoint(*side)} do not begin a PDU where one "
                            f"should begin: the rest of the segment is dropped", conn.index)
                d.synced = False
                del buf[:]
                d.frames.clear()
                return
            le = buf[pos + 4] & 0x10
            frag = (buf[pos + 8] | buf[pos + 9] << 8) if le else (buf[pos + 8] << 8
                                                                    | buf[pos + 9])
            if len(buf) - pos < frag:
                break
            start = d.base + pos
            first, first_ts = self._frame_ts(d, start)
            last, last_ts = self._frame_ts(d, start + frag - 1)
            self._pdu(conn, side, bytes(buf[pos:pos + frag]), first, last, first_ts, last_ts)
            pos += frag
        if pos:
            del buf[:pos]
            d.base += pos
            frames = d.frames
            i = 0
            while i < len(frames) and frames[i][0] <= d.base:
                i += 1
            if i:
                del frames[:i]

    @staticmethod
    def _frame_ts(d: _Direction, offset: int) -> tuple[int, float]:
        for end, frame, ts in d.frames:
            if offset < end:
                return frame, ts
        return d.frames[-1][1], d.frames[-1][2]

    def _frame_at(self, d: _Direction, offset: int) -> int | None:
        return self._frame_ts(d, offset)[0] if d.frames else None

    def _pdu(self, conn: _Connection, side: tuple, pdu: bytes, first: int, last: int,
             first_ts: float, last_ts: float) -> None:
        self.summary.pdus += 1
        if not conn.dcerpc:
            conn.dcerpc = True
        ptype = pdu[2]
        if ptype in _FROM_CLIENT and (ptype != _REQUEST or conn.client_side is None):
            conn.client_side = side
        events = conn.assoc.feed(pdu, (first, first_ts), (last, last_ts))
        if events:
            self._events(conn, events)

    def _events(self, conn: _Connection, events: Any) -> None:
        for event in events:
            kind = type(event)
            if kind is assoc.Call:
                self._emit(conn, event)
            elif kind is assoc.Error:
                self._error(event.at[0] if event.at else None, event.kind, event.message,
                            conn.index)
            # binds and their answers: the association keeps what they put in force

    # ------------------------------------------------------------------ binds not captured
    def _infer(self, conn: _Connection, event: assoc.Call) -> tuple | None:
        """The interface and transfer syntax of a call whose presentation context's bind is
        not in the capture (it began before the capture, or is in an earlier file), inferred
        from the stubs: the candidates (_CANDIDATES) with a method of the call's opnum whose
        request stub, and response stub if any, wire/ndr.py decodes exactly (it refuses
        trailing octets, short stubs, counts that disagree and out-of-range values; the
        stubs of RemoteRead and qmmgmt and of NDR and NDR64 differ in size and alignment).
        One candidate fits: the context is settled, for this call and every later one, and
        calls held before are emitted. Several fit and read the same columns (R_GetServerPort
        is 4 octets in both syntaxes): the call is read by the first, the context not settled
        and the syntax left unknown. Several fit and disagree: the call is held (_HELD) until
        a later call settles its context or the connection ends (_unsettled). None fits: no
        interface (the row is not checked; _unsettled counts it).

        Returns the row's binding columns (interface_info's, and the interface version None:
        the mark of an inferred context, which no bind_ack leaves), None or _HELD."""
        req, ans = event.request, event.answer
        ctx = req.context_id
        settled = conn.inferred.get(ctx)
        if settled is not None:
            return settled
        if not req.little_endian:
            fits = []
        else:
            response = ans.stub if ans is not None and ans.fault is None else None
            fits = []
            for name, iface, syntax in _CANDIDATES:
                if (name, req.opnum) not in self._calls:
                    continue
                ndr64 = syntax is dce.NDR64
                status, observed, _, _, exc = codec_columns(name, req.opnum, ndr64, req.stub,
                                                            response, False, req.padding)
                if exc is None:
                    fits.append((interface_info(iface, syntax.uuid) + (None,),
                                 (name, status, observed)))
        held = conn.held.get(ctx)
        if len(fits) == 1:
            settled = conn.inferred[ctx] = fits[0][0]
            if held:
                del conn.held[ctx]
                for call in held:
                    self._emit(conn, call, settled)
            return settled
        if fits and all(f[1] == fits[0][1] for f in fits):
            name, ndr64, interface_text, _, _ = fits[0][0]
            same = all(f[0][3] == fits[0][0][3] for f in fits)
            return (name, ndr64, interface_text, fits[0][0][3] if same else None, None)
        if fits:
            conn.held.setdefault(ctx, []).append(event)
            return _HELD
        if held is not None:  # the context fits nothing that came before either
            conn.held[ctx].append(event)
            return _HELD
        conn.held[ctx] = [event]
        return _HELD

    def _unsettled(self, conn: _Connection) -> None:
        """The connection ends with calls of contexts their stubs did not settle: each is
        emitted without an interface (not checked), and one error row per context says why."""
        for ctx, calls in conn.held.items():
            for call in calls:
                self._emit(conn, call, _binding_columns(None))
            first = next((x.request.at for x in calls if x.request is not None), None)
            self._error(first[0] if first else None, "unbound",
                        f"{len(calls)} call(s) on presentation context {ctx} not checked: "
                        f"the bind of the context is not in the capture, and their stubs "
                        f"fit no single interface and syntax (RemoteRead or qmmgmt, NDR or "
                        f"NDR64)", conn.index)
        conn.held.clear()

    # ------------------------------------------------------------------ call rows
    def _emit(self, conn: _Connection, event: assoc.Call, inferred: tuple | None = None
              ) -> None:
        req, ans, call_id = event.request, event.answer, event.call_id
        client = conn.client_side or conn.client
        server = next((s for s in (conn.key[0], conn.key[1]) if s != client), conn.key[1])
        ctx = req.context_id if req is not None else ans.context_id
        sealed = (req is not None and req.sealed) or (ans is not None and ans.sealed)
        if (event.binding is None and inferred is None and req is not None and self.decode_stubs
                and not sealed):  # nothing to infer from encrypted octets
            inferred = self._infer(conn, event)
            if inferred is _HELD:
                return
        if inferred is not None:
            name, ndr64, interface_text, syntax_text, version = inferred
            decode_as = syntax_text is not None or name is not None
        else:
            name, ndr64, interface_text, syntax_text, version = _binding_columns(event.binding)
            decode_as = syntax_text is not None
        opnum = req.opnum if req is not None else None
        klass = self._calls.get((name, opnum)) if name else None
        status = fault = None
        request_json = response_json = error = None
        observed: dict = {}
        if ans is not None and ans.fault is not None:
            fault = ans.fault
        if req is None:
            error = NO_REQUEST
        elif ans is None:
            error = NO_ANSWER
        if sealed:
            error = SEALED
        elif self.decode_stubs and name and klass is not None and decode_as:
            big = not req.little_endian
            response = ans.stub if ans is not None and fault is None else None
            fast = None
            if not self.json_fields and not big and not req.padding:
                # captures/fastpath.py, or None: decline
                fast = fastpath.observe(name, opnum, ndr64, req.stub, response)
            if fast is not None:
                status, observed = fast
            else:
                if big:
                    exc = ndr.StubError("drep", "big-endian NDR is not decoded")
                else:
                    status, observed, request_json, response_json, exc = codec_columns(
                        name, opnum, ndr64, req.stub, response, self.json_fields, req.padding)
                if exc is not None:
                    error = f"{exc}"
                    self._error(req.at[0], "stub", f"call_id {call_id} {klass.__name__}: {exc}",
                                conn.index)
        elif name and req is not None and klass is None:
            error = f"{name} has no method with opnum {opnum}"
        frames = (req.at[0] if req else None, req.until[0] if req else None,
                  ans.at[0] if ans else None, ans.until[0] if ans else None)
        capture = self.name
        if self._files:  # run_chain: the file of the call's first frame, frames local to theirs
            capture, _, summary = self._file_of(frames[0] if req else frames[2])
            summary.calls += 1
            frames = tuple(self._local(f) for f in frames)
        else:
            self.summary.calls += 1
        names = conn.names
        if names is None or names[0] != client:
            cip, cport = client
            sip, sport = server
            names = conn.names = (client, _endpoint(cip, cport), _endpoint(sip, sport),
                                  _ip(cip), cport, _ip(sip), sport)
        _, client_text, server_text, cip_text, cport, sip_text, sport = names
        keep = self.keep_stubs
        if keep:
            observed = dict(observed, request_stub=req.stub if req else None,
                            response_stub=ans.stub if ans else None)
        self.out.append(Call(  # positional, in the order of the columns (the hot path)
            capture, conn.index, client_text, server_text, cip_text, cport, sip_text, sport,
            conn.assoc.assoc_group, ctx, interface_text, version, name, syntax_text, call_id,
            opnum, klass.__name__ if klass else None, request_json, response_json, status,
            fault, error,
            *frames, req.at[1] if req else None, ans.at[1] if ans else None, **observed))


#: _Inference: the interfaces and syntaxes a presentation context whose bind was not
#: captured may have, in the order an unsettled call is decoded by when they all agree
_CANDIDATES = tuple((name, iface, syntax) for name, iface in (
    (c.REMOTEREAD, c.REMOTEREAD_UUID), (c.QMMGMT, c.QMMGMT_UUID)) for syntax in (dce.NDR,
                                                                                  dce.NDR64))
_HELD = ()  # _infer: the call waits for a later one of its context to settle it


@functools.lru_cache(maxsize=4096)
def _decoded_request(name: str, opnum: int, stub: bytes, ndr64: bool, padding: int = 0) -> Any:
    """ndr.decode_request, remembered: a capture repeats the same requests (the same queues
    opened and asked about again and again); the typed calls are not changed by anyone."""
    return ndr.decode_request(name, opnum, stub, ndr64, padding)


def _short_response(call: Any, stub: bytes) -> Any:
    """The two fixed-size responses among the methods the compiled parsers leave to the
    codec, read at once: R_OpenQueue's (a 20-octet context handle, NULL when all zero; the
    method returns void) and R_QMMgmtAction's (an HRESULT), NDR and NDR64 alike; None for any
    other (the codec decides). tests/captures/test_cdecode.py holds them to the codec."""
    kind = type(call)
    if kind is c.R_OpenQueue and len(stub) == 20:
        return c.R_OpenQueueResult(pphContext=stub if any(stub) else None)
    if kind is c.R_QMMgmtAction and len(stub) == 4:
        return c.R_QMMgmtActionResult(status=int.from_bytes(stub, "little"))
    return None


def codec_columns(name: str, opnum: int, ndr64: bool, request: bytes, response: bytes | None,
                  json_fields: bool, padding: int = 0) -> tuple:
    """A call's stubs through wire/ndr.py: (status, the observer's columns, request JSON,
    response JSON, the StubError or None). ``response``: None when there is no response stub
    to decode (a fault, or none captured)."""
    status = request_json = response_json = None
    try:
        call = _decoded_request(name, opnum, request, ndr64, padding)
        result = None
        if response is not None:
            result = _short_response(call, response)
            if result is None:
                result = ndr.decode_response(call, response, ndr64)
            status = result.status
        if json_fields:
            request_json = _json(call)
            response_json = _json(result) if result is not None else None
        return status, observation_fields(call, result), request_json, response_json, None
    except ndr.StubError as exc:
        return None, {}, None, None, exc


# --------------------------------------------------------------------------- compiled

try:  # captures/_cdecode.c, built by pip where a C compiler is found (pyproject.toml)
    from mqconform.captures import _cdecode
except ImportError:  # not built: Decoder does all the work
    _cdecode = None

#: the calls table's columns, in the order of the rows (captures/columns.py)
ROW_COLUMNS = columns.NAMES
_COLUMN = {name: i for i, name in enumerate(ROW_COLUMNS)}


class Unsupported(Exception):
    """The compiled decoder does not take this file (its message says why): use Decoder."""


def compiled() -> bool:
    """Whether the compiled decoder is built from the definitions this code runs with (its
    GENERATED digest is captures/columns.py's; a module built before a column or a parser
    changed would lay out rows wrongly), and not turned off by MQCONFORM_PURE_DECODER."""
    import os

    return (_cdecode is not None and not os.environ.get("MQCONFORM_PURE_DECODER")
            and getattr(_cdecode, "GENERATED", None) == columns.signature())


@functools.lru_cache(maxsize=256)
def _context_info(abstract: bytes | None, major: int, minor: int,
                  syntax: bytes | None) -> tuple:
    """What a call row says of its presentation context (as Decoder._emit): (interface name,
    NDR64?, interface UUID text, version text, transfer syntax text, {opnum: (method,
    compiled parser)} or None)."""
    if abstract is None:
        return None, False, None, None, None, None
    name, ndr64, interface_text, syntax_text = interface_info(uuid.UUID(bytes_le=abstract),
                                                              uuid.UUID(bytes_le=syntax))
    methods = None
    if name is not None:
        methods = {opnum: (klass.__name__, fastpath.C_PARSERS.get((name, opnum), 0))
                   for (iface, opnum), klass in c.CALLS.items() if iface == name}
    return name, ndr64, interface_text, f"{major}.{minor}", syntax_text, methods


def _endpoint_names(cip: bytes, cport: int, sip: bytes, sport: int) -> tuple:
    return _endpoint(cip, cport), _endpoint(sip, sport), _ip(cip), _ip(sip)


def _trailer_problem(stub: bytes) -> str | None:
    """What is wrong with a request stub's verification trailer, or None (association._request
    reports it when the request completes; the compiled decoder asks here at that moment)."""
    return assoc.strip_verification_trailer(stub)[2]


def _pdu_problem(pdu: bytes) -> str | None:
    """What decode_pdu says is wrong with a bind or bind_ack the compiled decoder cannot read
    (association.feed reports it), or None."""
    try:
        dce.decode_pdu(pdu)
    except dce.PduError as exc:
        return str(exc)
    return None


def scan(source: Any, name: str, chunk: int = 4 << 20) -> Iterator[list | FileSummary]:
    """The compiled decoder over one file (a path or an open binary file; pcap or pcapng,
    gzipped or not): call rows as columns (a list per column of ROW_COLUMNS, the rows as
    Decoder(json_fields=False) makes them), then the errors (DecodeError, as Decoder makes
    them and in its order) and the FileSummary. Raises Unsupported, at any point, for a file
    it does not take: the caller decodes the file again with Decoder."""
    if _cdecode is None:
        raise Unsupported("the compiled decoder is not built")
    scanner = _cdecode.Scanner(name, _context_info, _endpoint_names, _trailer_problem,
                               _pdu_problem)
    errors: list[DecodeError] = []
    own = isinstance(source, (str, Path))
    f = open(source, "rb") if own else source  # noqa: SIM115 - closed below
    try:
        head = f.read(2)
        zipped = head == pcapio.GZIP_MAGIC
        stream: Any = pcapio._Prefixed(head, f)
        if zipped:  # .pcap.gz, .pcapng.gz: the decompressed octets are fed as they come
            import gzip

            stream = pcapio.Unzipped(gzip.GzipFile(fileobj=stream, mode="rb"))
        fed = False
        while True:
            try:
                data = stream.read(chunk)
            except (OSError, EOFError, zlib.error) as exc:
                if not zipped:
                    raise Unsupported(f"cannot read: {exc}") from None
                # a cut or corrupt gzip stream: what came before it was read (pcapio.records
                # says the same, at the same place)
                if not fed and isinstance(exc, OSError):
                    found = scanner.stop("io", f"cannot read: {exc}")
                else:
                    found = scanner.stop("truncated", f"gzip: {exc}")
                columns, declined, found = found
                _complete(name, columns, declined, found, errors)
                if columns[0]:
                    _bound(columns)
                    yield columns
                break
            if not data:
                break
            fed = True
            columns, declined, found = scanner.feed(data)
            _complete(name, columns, declined, found, errors)
            if columns[0]:
                _bound(columns)
                yield columns
        (columns, declined, found), counts = scanner.finish()
    except _cdecode.Unsupported as exc:
        raise Unsupported(str(exc)) from None
    finally:
        if own:
            f.close()
    _complete(name, columns, declined, found, errors)
    if columns[0]:
        _bound(columns)
        yield columns
    yield from errors
    yield FileSummary(name, frames=counts["frames"], decoded=counts["decoded"],
                      rejected=counts["rejected"], not_dcerpc=counts["not_dcerpc"],
                      pdus=counts["pdus"], calls=counts["calls"], errors=len(errors),
                      bytes_read=counts["bytes_read"], gaps=counts["gaps"])


_INTERFACE, _OPNUM = _COLUMN["interface"], _COLUMN["opnum"]


def _bound(columns: list[list]) -> None:
    """Unsupported for a request whose presentation context the file does not bind: Decoder
    infers its interface from the stubs (Decoder._infer), the compiled decoder does not."""
    if None in columns[_INTERFACE] and any(
            i is None and o is not None
            for i, o in zip(columns[_INTERFACE], columns[_OPNUM], strict=True)):
        raise Unsupported("a call whose bind is not in the capture (its interface is inferred "
                          "from the stubs)")


_BIG_ENDIAN = ndr.StubError("drep", "big-endian NDR is not decoded")  # as Decoder._emit says


def _complete(capture: str, columns: list[list], declined: list, found: list,
              errors: list) -> list[list]:
    """The rows whose stubs the compiled parsers declined, through wire/ndr.py; the error
    rows the compiled decoder found (``found``: (rows made before it, frame, kind, message,
    connection)) and those of the declined stubs, into ``errors`` in the order Decoder
    makes them."""
    c = {name: columns[i] for name, i in _COLUMN.items()}
    k = 0
    for i, request, response, big in declined:
        while k < len(found) and found[k][0] <= i:  # the errors met before row i was made
            errors.append(DecodeError(capture, *found[k][1:]))
            k += 1
        # the trailer's problem, if any, is among ``found`` (reported as the request came)
        stub, padding, problem = assoc.strip_verification_trailer(request or b"")
        if problem is None and padding >= 0:
            request = stub
        if big:
            status, observed, exc = None, {}, _BIG_ENDIAN
        else:
            status, observed, _, _, exc = codec_columns(
                c["interface_name"][i], c["opnum"][i], c["transfer_syntax"][i] == "NDR64",
                request, response, False, max(padding, 0))
        c["status"][i] = status
        if exc is not None:
            c["decode_error"][i] = f"{exc}"
            errors.append(DecodeError(capture, c["request_first_frame"][i], "stub",
                                      f"call_id {c['call_id'][i]} {c['method'][i]}: {exc}",
                                      c["connection"][i]))
        for key, value in observed.items():
            c[key][i] = value
    errors.extend(DecodeError(capture, *item[1:]) for item in found[k:])
    return columns


def decode_file(path: str | Path, decode_stubs: bool = True, keep_stubs: bool = False,
                name: str | None = None) -> Iterator[Call | DecodeError | FileSummary]:
    """Decode one capture file (a path, streamed)."""
    yield from Decoder(name or str(path), decode_stubs, keep_stubs).run(path)


@dataclass
class Decoded:
    """All of one or more files, in memory (for tests and small captures)."""

    calls: list[Call] = field(default_factory=list)
    errors: list[DecodeError] = field(default_factory=list)
    summaries: list[FileSummary] = field(default_factory=list)


def decode_all(paths: list[str | Path], **kw: Any) -> Decoded:
    out = Decoded()
    for path in paths:
        for item in decode_file(path, **kw):
            if isinstance(item, Call):
                out.calls.append(item)
            elif isinstance(item, DecodeError):
                out.errors.append(item)
            else:
                out.summaries.append(item)
    return out
