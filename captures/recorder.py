"""The run recorder: the bytes the suite sends to and receives from an endpoint, per TCP
connection, written as a pcap that Wireshark and tshark read as TCP carrying DCE/RPC.

How it is used::

    recorder = Recorder()
    client = RpcClient(recorder=recorder)       # conformance.client taps each connection it opens
    mark = recorder.mark()
    client.call(c.R_GetServerPort())
    frames = recorder.exchange(mark)            # {"request": [4, 4], "response": [5, 5], ...}
    recorder.close()
    recorder.write("wire.pcap")

Decisions:

1. What is recorded: the octets of each TCP connection, as the client's socket sent and
   received them (``Tap.sent``, ``Tap.received``), not packets off an interface: no root, no
   capture driver, and the same file whatever the network. The frames around them are
   synthesized: Ethernet II (locally administered MACs 02:00:00:00:00:01 for the client,
   ...:02 for the server), IPv4 or IPv6 with the connection's real addresses, TCP with its
   real ports, a SYN / SYN-ACK / ACK handshake when the connection is tapped, and FIN-ACK /
   FIN-ACK / ACK when it closes (or when the recorder is closed with the connection open).
   Sequence and acknowledgement numbers are consistent; every segment acknowledges all the
   peer has sent so far. Initial sequence numbers are derived from the 4-tuple plus the
   connection's index, so a file is reproducible from the same exchanges, and a connection
   on ports the system gave out again (a long run does reuse them) starts with another
   number than the one before: Wireshark takes a SYN with the number of the stream before
   on those ports for a retransmission and dissects nothing of the new connection.
   Timestamps are the clock's (``time.time``) at the moment the octets were handed over.
2. Segmentation follows DCE/RPC PDUs (C706 12.6.3.1: ``frag_length`` at offset 8 of the
   common header): each PDU starts a new segment and is cut into segments of at most ``mss``
   octets (1460, Ethernet), so a frame never mixes two PDUs and every PDU has a first and a
   last frame. Octets that are not a version-5 PDU are written as they came.
3. Frame numbers are Wireshark's (1 for the first frame), known as soon as a frame is
   recorded; ``exchange(mark)`` gives the PDUs the calling thread sent and received since
   ``mark``: request frames, response (or fault) frames, call_id, opnum, and the TCP stream
   index (Wireshark's ``tcp.stream``: connections are numbered in the order they open).
4. Frames are built with struct when written, not with scapy: scapy takes ~0.6 ms per frame,
   which a full run's tens of thousands of frames would feel; tests/captures/ holds the
   builder byte-identical to scapy's ``Ether()/IP()/TCP()/Raw()`` (and IPv6) for every kind
   of frame written here. The file is classic pcap (microsecond timestamps, LINKTYPE_ETHERNET).
5. Secrets: an authenticated run's binds carry the NTLMSSP exchange in their auth_value
   (MS-RPCE 2.2.2.11: the NEGOTIATE in the bind or alter_context, the CHALLENGE in the
   bind_ack or alter_context_resp, the AUTHENTICATE in the rpc_auth_3 or alter_context),
   and the server challenge with the NTLMv2 response is enough to try passwords offline.
   ``Recorder(redact_auth=True)`` (``mqconform run --redact-auth``) replaces the auth_value of
   those five PDU types with zeros of the same length: every length and offset stays, so the
   DCE/RPC layer still dissects, and no NTLMSSP message is left. The signatures of requests
   and responses (keyed with the session key) are kept.
"""

from __future__ import annotations

import ipaddress
import struct
import threading
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

__all__ = ["Recorder", "Tap", "Pdu", "build_frame", "pcap_header", "pcap_record",
           "redact_auth", "CLIENT_MAC", "SERVER_MAC"]

CLIENT_MAC = bytes.fromhex("020000000001")
SERVER_MAC = bytes.fromhex("020000000002")
FIN, SYN, PSH, ACK = 0x01, 0x02, 0x08, 0x10
WINDOW = 65535
TTL = 64
SNAPLEN = 262144
LINKTYPE_ETHERNET = 1
PTYPE_REQUEST, PTYPE_RESPONSE, PTYPE_FAULT = 0, 2, 3  # C706 12.6.4
#: C706 12.6.4: bind, bind_ack, alter_context, alter_context_resp; MS-RPCE 2.2.2.10 rpc_auth_3
#: (the PDUs whose auth_value carries a security provider's token, not a signature)
AUTH_TOKEN_PTYPES = frozenset({11, 12, 14, 15, 16})
_HEADER = 16  # the DCE/RPC common header
_SEC_TRAILER = 8  # C706 13.2.6.1 auth_verifier_co_t before auth_value


# ============================================================================== frames


def _checksum(data: bytes) -> bytes:
    """The Internet checksum (RFC 1071) of ``data``, as the two octets to write. Summed in the
    machine's byte order (RFC 1071 2(B): the result is then in that order too)."""
    if len(data) % 2:
        data += b"\0"
    total = sum(memoryview(data).cast("H"))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return struct.pack("=H", ~total & 0xFFFF)


def build_frame(src: str, dst: str, sport: int, dport: int, seq: int, ack: int, flags: int,
                payload: bytes = b"", ip_id: int = 1, src_mac: bytes = CLIENT_MAC,
                dst_mac: bytes = SERVER_MAC) -> bytes:
    """One Ethernet II / IPv4 (or IPv6) / TCP frame with correct lengths and checksums; IPv4
    with DF set, TTL 64, the given identification; TCP without options, window 65535."""
    tcp = struct.pack("!HHLLBBHHH", sport, dport, seq & 0xFFFFFFFF, ack & 0xFFFFFFFF, 5 << 4,
                      flags, WINDOW, 0, 0)
    a, b = ipaddress.ip_address(src), ipaddress.ip_address(dst)
    segment = tcp + payload
    if a.version == 4:
        pseudo = a.packed + b.packed + struct.pack("!BBH", 0, 6, len(segment))
        csum = _checksum(pseudo + segment)
        ip = bytearray(struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(segment), ip_id & 0xFFFF,
                                   0x4000, TTL, 6, 0, a.packed, b.packed))
        ip[10:12] = _checksum(bytes(ip))
        ether_type = 0x0800
    else:
        pseudo = a.packed + b.packed + struct.pack("!L3xB", len(segment), 6)
        csum = _checksum(pseudo + segment)
        ip = bytearray(struct.pack("!LHBB16s16s", 0x60000000, len(segment), 6, TTL, a.packed,
                                   b.packed))
        ether_type = 0x86DD
    return (dst_mac + src_mac + struct.pack("!H", ether_type) + bytes(ip) + segment[:16]
            + csum + segment[18:])


def pcap_header(snaplen: int = SNAPLEN, linktype: int = LINKTYPE_ETHERNET) -> bytes:
    """The classic pcap global header (little-endian, version 2.4, microseconds)."""
    return struct.pack("<LHHlLLL", 0xA1B2C3D4, 2, 4, 0, 0, snaplen, linktype)


def pcap_record(timestamp: float, frame: bytes, orig_len: int | None = None) -> bytes:
    """One record; ``orig_len`` longer than the frame: a frame cut by the snap length."""
    micros = int(round(timestamp * 1_000_000))
    return struct.pack("<LLLL", micros // 1_000_000, micros % 1_000_000, len(frame),
                       len(frame) if orig_len is None else orig_len) + frame


# pcapng (draft-ietf-opsawg-pcapng): a block is its type, its total length, its body padded to
# 4 octets and its total length again, every integer in the section's byte order ``order``

def _pcapng_block(block_type: int, body: bytes, order: str) -> bytes:
    body += bytes(-len(body) % 4)
    length = 12 + len(body)
    return struct.pack(order + "II", block_type, length) + body + struct.pack(order + "I", length)


def pcapng_section(order: str = "<") -> bytes:
    """A Section Header Block (version 1.0, the section's length not given)."""
    return _pcapng_block(0x0A0D0D0A, struct.pack(order + "IHHq", 0x1A2B3C4D, 1, 0, -1), order)


def pcapng_interface(linktype: int = LINKTYPE_ETHERNET, tsresol: int | None = None,
                     snaplen: int = SNAPLEN, order: str = "<") -> bytes:
    """An Interface Description Block; ``tsresol``: its if_tsresol octet (none: the default,
    microseconds; 9: nanoseconds; 0x80 | n: 2**-n seconds)."""
    body = struct.pack(order + "HHI", linktype, 0, snaplen)
    if tsresol is not None:
        body += struct.pack(order + "HH", 9, 1) + bytes([tsresol, 0, 0, 0]) \
            + struct.pack(order + "HH", 0, 0)
    return _pcapng_block(1, body, order)


def pcapng_packet(interface: int, timestamp: float, frame: bytes, tsresol: int | None = None,
                  orig_len: int | None = None, order: str = "<") -> bytes:
    """An Enhanced Packet Block, its time in the ticks of its interface's ``tsresol``."""
    per_second = 10 ** 6 if tsresol is None else \
        2 ** (tsresol & 0x7F) if tsresol & 0x80 else 10 ** tsresol
    ticks = int(round(timestamp * per_second))
    return _pcapng_block(6, struct.pack(order + "IIIII", interface, ticks >> 32,
                                        ticks & 0xFFFFFFFF, len(frame),
                                        len(frame) if orig_len is None else orig_len) + frame,
                         order)


def pcapng_simple(frame: bytes, order: str = "<") -> bytes:
    """A Simple Packet Block: no interface (the section's first), no time."""
    return _pcapng_block(3, struct.pack(order + "I", len(frame)) + frame, order)


# ============================================================================== recording


@dataclass(frozen=True)
class Pdu:
    """One DCE/RPC PDU (or run of non-PDU octets: ptype None) on one connection."""

    stream: int  # Wireshark's tcp.stream: the connection's index
    from_client: bool
    ptype: int | None
    call_id: int | None
    opnum: int | None  # requests only
    first: int  # frame numbers, 1-based
    last: int
    thread: int
    flags: int | None = None  # pfc_flags; PFC_FIRST_FRAG (0x01) starts a call's request or answer


@dataclass
class _Frame:
    timestamp: float
    stream: int
    from_client: bool
    flags: int
    seq: int
    ack: int
    ip_id: int
    payload: bytes = b""


@dataclass
class _Connection:
    index: int
    client: tuple[str, int]
    server: tuple[str, int]
    seq: list[int]  # next sequence number: [client, server]
    ip_id: list[int] = field(default_factory=lambda: [1, 1])
    pending: list[bytearray] = field(default_factory=lambda: [bytearray(), bytearray()])
    open: bool = True


def _isn(text: str, index: int) -> int:
    """A connection's initial sequence number: distinct for each index on one 4-tuple."""
    return (zlib.crc32(text.encode()) + (index << 20)) & 0xFFFFFFFF


def _address(sockaddr: Any) -> tuple[str, int]:
    host, port = sockaddr[0], sockaddr[1]
    ip = ipaddress.ip_address(host.split("%")[0])
    if ip.version == 6 and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return str(ip), int(port)


class Tap:
    """One recorded TCP connection: what conformance.client hands over."""

    def __init__(self, recorder: Recorder, connection: _Connection):
        self._recorder = recorder
        self._connection = connection

    @property
    def stream(self) -> int:
        return self._connection.index

    def sent(self, data: bytes) -> None:
        self._recorder._data(self._connection, True, bytes(data))

    def received(self, data: bytes) -> None:
        self._recorder._data(self._connection, False, bytes(data))

    def closed(self) -> None:
        self._recorder._close(self._connection)


class Recorder:
    """Every exchange on the connections it taps, as pcap frames (module doc)."""

    def __init__(self, mss: int = 1460, clock: Callable[[], float] = time.time,
                 redact_auth: bool = False):
        """``redact_auth``: zero the security tokens of the binds (module doc, 5)."""
        if not 1 <= mss <= 65495 - 20:
            raise ValueError(f"mss {mss} out of range")
        self.mss = mss
        self.redact_auth = redact_auth
        self.clock = clock
        self._lock = threading.RLock()
        self._frames: list[_Frame] = []
        self._connections: list[_Connection] = []
        self.pdus: list[Pdu] = []
        self.calls = 0  # exchanges noted with note_call
        self._pending = threading.local()

    # ---------------------------------------------------------------- connections
    def connection(self, sock: Any) -> Tap:
        """Tap a connected socket: its local and peer addresses make the frames."""
        return self.open(_address(sock.getsockname()), _address(sock.getpeername()))

    def open(self, client: tuple[str, int], server: tuple[str, int]) -> Tap:
        """Tap a connection from ``client`` to ``server`` (host, port): the handshake."""
        if ipaddress.ip_address(client[0]).version != ipaddress.ip_address(server[0]).version:
            raise ValueError(f"{client[0]} and {server[0]} are not of one IP version")
        with self._lock:
            index = len(self._connections)
            isn_c = _isn(f"{client}>{server}", index)
            isn_s = _isn(f"{server}>{client}", index)
            conn = _Connection(index, client, server, [isn_c + 1, isn_s + 1])
            self._connections.append(conn)
            now = self.clock()
            self._append(conn, True, SYN, isn_c, 0, b"", now)
            self._append(conn, False, SYN | ACK, isn_s, isn_c + 1, b"", now)
            self._append(conn, True, ACK, isn_c + 1, isn_s + 1, b"", now)
            return Tap(self, conn)

    def _append(self, conn: _Connection, from_client: bool, flags: int, seq: int, ack: int,
                payload: bytes, now: float) -> int:
        side = 0 if from_client else 1
        ip_id = conn.ip_id[side]
        conn.ip_id[side] = (ip_id + 1) & 0xFFFF
        self._frames.append(_Frame(now, conn.index, from_client, flags, seq, ack, ip_id,
                                   payload))
        return len(self._frames)

    def _segments(self, conn: _Connection, from_client: bool, data: bytes, now: float
                  ) -> tuple[int, int]:
        side = 0 if from_client else 1
        first = last = 0
        for start in range(0, len(data), self.mss):
            chunk = data[start:start + self.mss]
            last = self._append(conn, from_client, PSH | ACK, conn.seq[side],
                                conn.seq[1 - side], chunk, now)
            first = first or last
            conn.seq[side] = (conn.seq[side] + len(chunk)) & 0xFFFFFFFF
        return first, last

    def _data(self, conn: _Connection, from_client: bool, data: bytes) -> None:
        if not data:
            return
        with self._lock:
            if not conn.open:
                return
            buf = conn.pending[0 if from_client else 1]
            buf += data
            now = self.clock()
            while buf:
                size = _pdu_size(buf)
                if size is None:
                    return  # the rest of this PDU is still to come
                pdu = bytes(buf[:size])
                del buf[:size]
                if self.redact_auth:
                    pdu = redact_auth(pdu)
                first, last = self._segments(conn, from_client, pdu, now)
                ptype, call_id, opnum = _pdu_fields(pdu)
                self.pdus.append(Pdu(conn.index, from_client, ptype, call_id, opnum, first,
                                     last, threading.get_ident(),
                                     pdu[3] if ptype is not None else None))

    def _flush(self, conn: _Connection, now: float) -> None:
        for side, from_client in ((0, True), (1, False)):
            buf = conn.pending[side]
            if buf:
                first, last = self._segments(conn, from_client, bytes(buf), now)
                self.pdus.append(Pdu(conn.index, from_client, None, None, None, first, last,
                                     threading.get_ident()))
                buf.clear()

    def _close(self, conn: _Connection) -> None:
        with self._lock:
            if not conn.open:
                return
            now = self.clock()
            self._flush(conn, now)
            c, s = conn.seq
            self._append(conn, True, FIN | ACK, c, s, b"", now)
            self._append(conn, False, FIN | ACK, s, c + 1, b"", now)
            self._append(conn, True, ACK, c + 1, s + 1, b"", now)
            conn.seq = [(c + 1) & 0xFFFFFFFF, (s + 1) & 0xFFFFFFFF]
            conn.open = False

    def close(self) -> None:
        """End every connection still open (FIN both ways)."""
        with self._lock:
            for conn in self._connections:
                self._close(conn)

    # ---------------------------------------------------------------- calls
    @property
    def frame_count(self) -> int:
        return len(self._frames)

    @property
    def connection_count(self) -> int:
        return len(self._connections)

    def wire_calls(self) -> tuple[int, int]:
        """(calls, unanswered) as the capture shows them: the requests whose first fragment
        (PFC_FIRST_FRAG) the client sent, and those of them no response or fault followed on
        their connection (a call its client gave up, a connection that failed under it).
        Counted from the octets, not from when a caller's thread got its answer, so two runs
        that put the same frames on the wire count alike."""
        with self._lock:
            pdus = list(self.pdus)
        asked: list[tuple[int, int]] = []
        answered: set[tuple[int, int]] = set()
        for p in pdus:
            if p.flags is None or not p.flags & 0x01:
                continue
            if p.from_client and p.ptype == PTYPE_REQUEST:
                asked.append((p.stream, p.call_id))
            elif not p.from_client and p.ptype in (PTYPE_RESPONSE, PTYPE_FAULT):
                answered.add((p.stream, p.call_id))
        return len(asked), sum(1 for key in asked if key not in answered)

    def mark(self) -> int:
        """A point to ask ``exchange`` from."""
        with self._lock:
            return len(self.pdus)

    def exchange(self, mark: int) -> dict | None:
        """The frames of what the calling thread sent and received since ``mark``: ``first``
        and ``last`` frame, ``request`` and ``response`` ([first, last] of each; a fault is a
        response with ``fault`` true), ``call_id``, ``opnum``, ``tcp_stream`` (Wireshark's
        tcp.stream: the connection, by its place in the capture rather than its ephemeral
        ports, so that two runs' records compare); other PDUs (bind, bind_ack,
        alter_context) widen first/last only. None if nothing was exchanged."""
        me = threading.get_ident()
        with self._lock:
            mine = [p for p in self.pdus[mark:] if p.thread == me]
        if not mine:
            return None
        requests = [p for p in mine if p.from_client and p.ptype == PTYPE_REQUEST]
        responses = [p for p in mine
                     if not p.from_client and p.ptype in (PTYPE_RESPONSE, PTYPE_FAULT)]
        main = (requests or mine)[0]
        out: dict[str, Any] = {
            "first": min(p.first for p in mine), "last": max(p.last for p in mine),
            "tcp_stream": main.stream,
        }
        if requests:
            out.update(request=[requests[0].first, requests[-1].last],
                       call_id=requests[0].call_id, opnum=requests[0].opnum)
        if responses:
            out.update(response=[responses[0].first, responses[-1].last],
                       fault=responses[-1].ptype == PTYPE_FAULT)
        return out

    def note_call(self, mark: int) -> dict | None:
        """``exchange(mark)``, kept for this thread until ``claim`` takes it."""
        frames = self.exchange(mark)
        self._pending.frames = frames
        if frames is not None:
            with self._lock:
                self.calls += 1
        return frames

    def claim(self) -> dict | None:
        """The frames of this thread's last noted call, once."""
        frames = getattr(self._pending, "frames", None)
        self._pending.frames = None
        return frames

    # ---------------------------------------------------------------- writing
    def frames(self) -> list[tuple[float, bytes]]:
        with self._lock:
            return [(f.timestamp, self._build(f)) for f in self._frames]

    def _build(self, f: _Frame) -> bytes:
        conn = self._connections[f.stream]
        (src, sport), (dst, dport) = (conn.client, conn.server) if f.from_client \
            else (conn.server, conn.client)
        macs = (CLIENT_MAC, SERVER_MAC) if f.from_client else (SERVER_MAC, CLIENT_MAC)
        return build_frame(src, dst, sport, dport, f.seq, f.ack, f.flags, f.payload, f.ip_id,
                           *macs)

    def write(self, path: str | Path | BinaryIO) -> int:
        """Write the pcap; returns the number of frames."""
        with self._lock:
            frames = list(self._frames)
        if hasattr(path, "write"):
            return self._write(path, frames)
        with open(path, "wb") as out:
            return self._write(out, frames)

    def write_exchange(self, path: str | Path, spans: list[dict]) -> int:
        """Write the connections these calls went over (``spans``: their frames as
        ``note_call`` gave them, {"first", "last"} numbers of this recorder's frames), each
        from its first frame (the handshake and the binds, so a dissector can read the calls)
        up to the last of the calls' frames. Returns the number of frames written."""
        numbers = {n for span in spans if span for n in range(span["first"], span["last"] + 1)}
        with self._lock:
            frames = list(self._frames)
        if not numbers:
            frames = []
        else:
            last = min(max(numbers), len(frames))
            streams = {frames[n - 1].stream for n in numbers if 0 < n <= len(frames)}
            frames = [f for f in frames[:last] if f.stream in streams]
        with open(path, "wb") as out:
            return self._write(out, frames)

    def _write(self, out: BinaryIO, frames: list[_Frame]) -> int:
        out.write(pcap_header())
        for f in frames:
            out.write(pcap_record(f.timestamp, self._build(f)))
        return len(frames)


def redact_auth(pdu: bytes) -> bytes:
    """``pdu`` with the auth_value of a bind, bind_ack, alter_context, alter_context_resp or
    rpc_auth_3 zeroed (module doc, 5); any other PDU as it is. auth_value ends the PDU
    (C706 12.6.3.1 auth_length at offset 10, in the PDU's byte order)."""
    if len(pdu) < _HEADER or pdu[0] != 5 or pdu[2] not in AUTH_TOKEN_PTYPES:
        return pdu
    order = "<" if pdu[4] & 0x10 else ">"
    auth_length = struct.unpack_from(order + "H", pdu, 10)[0]
    if not 0 < auth_length <= len(pdu) - _HEADER - _SEC_TRAILER:
        return pdu
    return pdu[:-auth_length] + bytes(auth_length)


def _pdu_size(buf: bytearray) -> int | None:
    """How many octets at the start of ``buf`` make one frame run: the whole PDU when it is a
    version-5 PDU, everything when it is not (or its frag_length is impossible); None while a
    PDU is incomplete."""
    if buf[0] != 5:
        return len(buf)
    if len(buf) < _HEADER:
        return None
    order = "<" if buf[4] & 0x10 else ">"
    size = struct.unpack_from(order + "H", buf, 8)[0]
    if size < _HEADER:
        return len(buf)
    return size if len(buf) >= size else None


def _pdu_fields(pdu: bytes) -> tuple[int | None, int | None, int | None]:
    if len(pdu) < _HEADER or pdu[0] != 5:
        return None, None, None
    order = "<" if pdu[4] & 0x10 else ">"
    ptype = pdu[2]
    call_id = struct.unpack_from(order + "L", pdu, 12)[0]
    opnum = None
    if ptype == PTYPE_REQUEST and len(pdu) >= 24:
        opnum = struct.unpack_from(order + "H", pdu, 22)[0]
    return ptype, call_id, opnum

