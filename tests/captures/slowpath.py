"""A second, independent reading of a capture with scapy: the reference the fast decoder
(captures/decode.py) is held to by differential tests (tests/captures/test_slowpath.py) on the
golden pcaps, on real runs and on generated conversations.

Everything here is done differently from the fast path: scapy reads the file (PcapReader,
pcapng too) and dissects Ethernet/IP/TCP and the DCE/RPC headers (scapy.layers.dcerpc.DceRpc5);
each direction of a connection is rebuilt by sorting its segments by sequence number and
laying them into one buffer (no streaming, no gap handling: it is for captures without gaps);
fragments are joined by call_id. It is slow (scapy dissects every frame) and keeps a whole
file in memory: a test oracle, not a tool.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from pathlib import Path

NDR64 = "71710533-beba-4937-8319-b5dbef9ccc36"


@dataclass(frozen=True)
class SlowCall:
    client: str
    server: str
    call_id: int
    opnum: int | None
    interface: str | None
    transfer_syntax: str | None
    request_stub: bytes | None
    response_stub: bytes | None
    fault: int | None
    request_frames: tuple[int, int] | None
    response_frames: tuple[int, int] | None


def _endpoint(ip: str, port: int) -> str:
    return f"[{ip}]:{port}" if ":" in ip else f"{ip}:{port}"


def read_calls(path: str | Path) -> list[SlowCall]:
    from scapy.layers.inet import IP, TCP
    from scapy.layers.inet6 import IPv6
    from scapy.utils import PcapReader

    segments: dict[tuple, list[tuple[int, int, bytes, int]]] = {}
    syn: dict[tuple, int] = {}
    opener: dict[frozenset, tuple] = {}
    with PcapReader(str(path)) as reader:
        for number, pkt in enumerate(reader, 1):
            if TCP not in pkt:
                continue
            ip = pkt[IP] if IP in pkt else pkt[IPv6] if IPv6 in pkt else None
            if ip is None:
                continue
            tcp = pkt[TCP]
            side = (ip.src, tcp.sport, ip.dst, tcp.dport)
            flags = int(tcp.flags)
            if flags & 0x02:
                syn[side] = (tcp.seq + 1) & 0xFFFFFFFF
                if not flags & 0x10:
                    opener[frozenset((side[:2], side[2:]))] = side[:2]
            data = bytes(tcp.payload)
            if data:
                segments.setdefault(side, []).append((tcp.seq, number, data, flags))
    streams: dict[tuple, tuple[bytes, list[int], list[int]]] = {}
    for side, segs in segments.items():
        base = syn.get(side, segs[0][0])
        laid = sorted(((seq - base) % 0x100000000, number, data) for seq, number, data, _ in
                      segs)
        buf = bytearray()
        starts: list[int] = []
        frames: list[int] = []
        for rel, number, data in laid:
            if rel + len(data) <= len(buf):
                continue  # retransmitted
            new = data[len(buf) - rel:] if rel < len(buf) else data
            starts.append(len(buf))
            frames.append(number)
            buf += new
        streams[side] = (bytes(buf), starts, frames)
    calls: list[SlowCall] = []
    done: set[frozenset] = set()
    for side in streams:
        pair = frozenset((side[:2], side[2:]))
        if pair in done:
            continue
        done.add(pair)
        calls += _connection(side, streams, opener.get(pair))
    return calls


def _pdus(stream: tuple[bytes, list[int], list[int]]):
    from scapy.layers.dcerpc import DceRpc5

    buf, starts, frames = stream
    pos = 0
    while len(buf) - pos >= 16:
        frag = DceRpc5(buf[pos:pos + 16]).frag_len  # the common header alone
        if not frag or len(buf) - pos < frag:
            return
        pdu = DceRpc5(buf[pos:pos + frag])
        first = frames[bisect.bisect_right(starts, pos) - 1]
        last = frames[bisect.bisect_right(starts, pos + frag - 1) - 1]
        yield pdu, buf[pos:pos + frag], first, last
        pos += frag


def _connection(side: tuple, streams: dict, opened_by: tuple | None) -> list[SlowCall]:
    from scapy.layers.dcerpc import (
        DceRpc5AlterContext,
        DceRpc5AlterContextResp,
        DceRpc5Bind,
        DceRpc5BindAck,
        DceRpc5Fault,
        DceRpc5Request,
        DceRpc5Response,
    )

    a, b = side[:2], side[2:]
    parts = {}
    for one, other in ((a, b), (b, a)):
        stream = streams.get((*one, *other))
        parts[one] = list(_pdus(stream)) if stream else []
    client = opened_by
    if client is None:  # whoever sends requests or binds
        for one in (a, b):
            if any(p.ptype in (0, 11, 14) for p, *_ in parts[one]):
                client = one
                break
    if client is None:
        return []
    server = b if client == a else a
    proposed: dict[int, list] = {}
    contexts: dict[int, tuple[str, str]] = {}
    for pdu, _raw, _f, _l in parts[client]:
        if pdu.haslayer(DceRpc5Bind) or pdu.haslayer(DceRpc5AlterContext):
            layer = pdu[DceRpc5Bind] if pdu.haslayer(DceRpc5Bind) else pdu[DceRpc5AlterContext]
            proposed[pdu.call_id] = [(ctx.cont_id, str(ctx.abstract_syntax.if_uuid))
                                     for ctx in layer.context_elem]
    for pdu, _raw, _f, _l in parts[server]:
        if pdu.haslayer(DceRpc5BindAck) or pdu.haslayer(DceRpc5AlterContextResp):
            layer = pdu[DceRpc5BindAck] if pdu.haslayer(DceRpc5BindAck) \
                else pdu[DceRpc5AlterContextResp]
            for (ctx, uuid), result in zip(proposed.get(pdu.call_id, []), layer.results,
                                           strict=False):
                if result.result == 0:
                    contexts[ctx] = (uuid, "NDR64" if str(result.transfer_syntax.if_uuid)
                                     == NDR64 else "NDR")

    def calls_of(pdus, kinds):
        out: dict[int, dict] = {}
        open_: dict[int, dict] = {}
        for pdu, raw, first, last in pdus:
            if pdu.ptype not in kinds:
                continue
            if pdu.ptype == 3:
                fault = pdu[DceRpc5Fault]
                out[pdu.call_id] = {"fault": fault.status, "stub": None,
                                    "frames": (first, last), "ctx": fault.cont_id}
                continue
            layer = pdu[DceRpc5Request] if pdu.ptype == 0 else pdu[DceRpc5Response]
            header = 24 + (16 if pdu.pfc_flags & 0x80 else 0)
            body = raw[header:len(raw) - (pdu.auth_len + 8 if pdu.auth_len else 0)]
            if pdu.pfc_flags & 0x01:
                open_[pdu.call_id] = {"stub": bytearray(), "first": first,
                                      "opnum": getattr(layer, "opnum", None),
                                      "ctx": layer.cont_id}
            cur = open_.get(pdu.call_id)
            if cur is None:
                continue
            cur["stub"] += body
            if pdu.pfc_flags & 0x02:
                del open_[pdu.call_id]
                out[pdu.call_id] = {"fault": None, "stub": bytes(cur["stub"]),
                                    "frames": (cur["first"], last), "ctx": cur["ctx"],
                                    "opnum": cur["opnum"]}
        return out

    requests = calls_of(parts[client], (0,))
    answers = calls_of(parts[server], (2, 3))
    result = []
    for call_id in sorted(set(requests) | set(answers)):
        req, ans = requests.get(call_id), answers.get(call_id)
        ctx = (req or ans)["ctx"]
        interface, syntax = contexts.get(ctx, (None, None))
        result.append(SlowCall(
            client=_endpoint(*client), server=_endpoint(*server), call_id=call_id,
            opnum=req["opnum"] if req else None, interface=interface,
            transfer_syntax=syntax, request_stub=req["stub"] if req else None,
            response_stub=ans["stub"] if ans else None,
            fault=ans["fault"] if ans else None,
            request_frames=req["frames"] if req else None,
            response_frames=ans["frames"] if ans else None))
    return result
