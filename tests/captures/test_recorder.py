"""The run recorder (captures/recorder.py): frames byte-identical to scapy's, TCP sequence
numbers that add up, segmentation on DCE/RPC PDU boundaries, frame numbers per call (per
thread), and the tap conformance.client puts on each connection it opens."""

from __future__ import annotations

import io
import shutil
import struct
import subprocess
import threading

import pytest
from scapy.layers.inet import IP, TCP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Ether
from scapy.packet import Raw
from scapy.utils import rdpcap

from mqconform.captures.recorder import ACK, FIN, PSH, SYN, Recorder, build_frame
from mqconform.model import calls as c


def _scapy(src, dst, sport, dport, seq, ack, flags, payload, ip_id):
    ip = (IP(src=src, dst=dst, id=ip_id, flags="DF", ttl=64) if ":" not in src
          else IPv6(src=src, dst=dst, hlim=64))
    p = (Ether(dst="02:00:00:00:00:02", src="02:00:00:00:00:01") / ip
         / TCP(sport=sport, dport=dport, seq=seq, ack=ack, flags=flags, window=65535))
    return bytes(p / Raw(payload) if payload else p)


@pytest.mark.parametrize("src,dst", [("127.0.0.1", "10.9.8.7"), ("::1", "fe80::1:2")])
@pytest.mark.parametrize("flags", [SYN, SYN | ACK, ACK, PSH | ACK, FIN | ACK])
@pytest.mark.parametrize("payload", [b"", b"\x05", b"odd", bytes(range(256)) * 6])
def test_frames_are_byte_identical_to_scapys(src, dst, flags, payload):
    mine = build_frame(src, dst, 49152, 2103, 0xFFFFFFF0, 123, flags, payload, 77)
    assert mine == _scapy(src, dst, 49152, 2103, 0xFFFFFFF0, 123, flags, payload, 77)


def pdu(ptype: int, call_id: int, body: bytes = b"", opnum: int = 0) -> bytes:
    """A little-endian DCE/RPC PDU: common header, then for a request alloc_hint, p_cont_id
    and opnum, for a response alloc_hint, p_cont_id, cancel_count and a reserved octet."""
    extra = struct.pack("<LHH", len(body), 0, opnum) if ptype == 0 else \
        struct.pack("<LHBB", len(body), 0, 0, 0)
    size = 16 + len(extra) + len(body)
    return struct.pack("<BBBB4sHHL", 5, 0, ptype, 3, b"\x10\0\0\0", size, 0, call_id) \
        + extra + body


class Clock:
    def __init__(self):
        self.now = 1_700_000_000.0

    def __call__(self):
        self.now += 0.001
        return self.now


def _packets(rec: Recorder):
    buf = io.BytesIO()
    count = rec.write(buf)
    packets = rdpcap(io.BytesIO(buf.getvalue()))
    assert len(packets) == count == rec.frame_count
    return packets


def test_a_call_is_framed_on_pdu_boundaries_with_consistent_sequence_numbers():
    rec = Recorder(mss=100, clock=Clock())
    tap = rec.open(("192.0.2.1", 50000), ("192.0.2.2", 2103))
    mark = rec.mark()
    request = pdu(0, 7, b"q" * 250, opnum=7)
    tap.sent(request)  # 274 octets: three segments of at most 100
    response = pdu(2, 7, b"r" * 30)
    tap.received(response[:16])  # as impacket reads: the header, then the rest
    tap.received(response[16:20])
    tap.received(response[20:])
    frames = rec.exchange(mark)
    assert frames["request"] == [4, 6] and frames["response"] == [7, 7]
    assert frames["call_id"] == 7 and frames["opnum"] == 7 and not frames["fault"]
    # the connection by its tcp.stream, not its ephemeral ports (two runs compare)
    assert frames["tcp_stream"] == 0 and "connection" not in frames
    tap.closed()
    packets = _packets(rec)
    flags = [str(p[TCP].flags) for p in packets]
    assert flags == ["S", "SA", "A", "PA", "PA", "PA", "PA", "FA", "FA", "A"]
    sent = b"".join(bytes(p[TCP].payload) for p in packets if p[TCP].sport == 50000)
    got = b"".join(bytes(p[TCP].payload) for p in packets if p[TCP].sport == 2103)
    assert sent == request and got == response
    # every segment starts where the last one of its direction ended and acknowledges all
    # the peer sent
    nxt = {50000: packets[0][TCP].seq, 2103: packets[1][TCP].seq}
    for p in packets:
        t = p[TCP]
        peer = 2103 if t.sport == 50000 else 50000
        assert t.seq == nxt[t.sport]
        if "A" in str(t.flags):
            assert t.ack == nxt[peer]
        nxt[t.sport] = (t.seq + len(t.payload) + (1 if t.flags & (SYN | FIN) else 0)) \
            & 0xFFFFFFFF
    assert [p.time for p in packets] == sorted(p.time for p in packets)


def test_a_fault_octets_that_are_not_dcerpc_and_a_second_connection():
    rec = Recorder(clock=Clock())
    one = rec.open(("127.0.0.1", 50001), ("127.0.0.1", 2103))
    two = rec.open(("127.0.0.1", 50002), ("127.0.0.1", 2103))
    mark = rec.mark()
    two.sent(pdu(0, 1, opnum=3))
    two.received(pdu(3, 1, struct.pack("<L", 0x1C00001A)))
    frames = rec.exchange(mark)
    assert frames["tcp_stream"] == 1 and frames["fault"] and frames["request"] == [7, 7]
    one.sent(b"GET / HTTP/1.0\r\n\r\n")  # not a PDU: as it came
    assert rec.frame_count == 9
    one.received(pdu(2, 1)[:10])  # an incomplete PDU stays pending until the close
    assert rec.frame_count == 9
    rec.close()
    assert rec.frame_count == 9 + 1 + 3 + 3  # the pending octets, then FINs for both
    rec.close()  # once only
    assert rec.frame_count == 16


@pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark is not installed")
def test_connections_on_ports_given_out_again_are_streams_of_their_own_for_tshark(tmp_path):
    """A long run gets the same client port more than once; each connection on it starts with
    another initial sequence number, so tshark dissects every call, each in its own stream
    (the same numbers made tshark take the second SYN for a retransmission and drop its calls)."""
    rec = Recorder(clock=Clock())
    marks = []
    for call_id in (1, 2, 3):
        tap = rec.open(("127.0.0.1", 50001), ("127.0.0.1", 2103))
        mark = rec.mark()
        tap.sent(pdu(0, call_id, opnum=call_id))
        tap.received(pdu(2, call_id))
        marks.append(rec.exchange(mark))
        tap.closed()
    rec.close()
    pcap = tmp_path / "reuse.pcap"
    rec.write(pcap)
    out = subprocess.run([shutil.which("tshark"), "-r", str(pcap), "-Y", "dcerpc", "-T", "fields",
                          "-e", "frame.number", "-e", "tcp.stream", "-e", "dcerpc.pkt_type",
                          "-e", "dcerpc.cn_call_id"], capture_output=True, text=True, check=True)
    rows = [line.split("\t") for line in out.stdout.splitlines()]
    want = []
    for call_id, frames in enumerate(marks, 1):
        assert frames["tcp_stream"] == call_id - 1
        want += [[str(frames["request"][1]), str(call_id - 1), "0", str(call_id)],
                 [str(frames["response"][1]), str(call_id - 1), "2", str(call_id)]]
    assert rows == want


def test_ipv6_connections():
    rec = Recorder(clock=Clock())
    tap = rec.open(("::1", 50000), ("::1", 2103))
    tap.sent(pdu(0, 1))
    packets = _packets(rec)
    assert all(p.haslayer(IPv6) for p in packets)
    assert rec.exchange(0)["tcp_stream"] == 0
    with pytest.raises(ValueError):
        rec.open(("127.0.0.1", 1), ("::1", 2))


def test_exchanges_belong_to_the_thread_that_made_them_and_are_claimed_once():
    rec = Recorder(clock=Clock())
    tap = rec.open(("127.0.0.1", 50000), ("127.0.0.1", 2103))
    other = rec.open(("127.0.0.1", 50001), ("127.0.0.1", 2103))
    mark = rec.mark()
    tap.sent(pdu(0, 1))

    def elsewhere():
        other.sent(pdu(0, 9, opnum=8))
        other.received(pdu(2, 9))

    worker = threading.Thread(target=elsewhere)
    worker.start()
    worker.join()
    tap.received(pdu(2, 1))
    frames = rec.note_call(mark)
    assert frames["call_id"] == 1 and frames["tcp_stream"] == 0
    assert frames["request"] == [7, 7] and frames["response"] == [10, 10]
    assert rec.claim() == frames and rec.claim() is None
    assert rec.note_call(rec.mark()) is None and rec.calls == 1


def test_the_client_taps_every_connection_it_opens(tmp_path):
    from mqconform.conformance.targets import RpcTarget
    from mqconform.server.main import start

    server = start(host="127.0.0.1", port=0)
    rec = Recorder()
    try:
        port = server.rpc.address[1]
        target = RpcTarget(f"ncacn_ip_tcp:127.0.0.1[{port}]", recorder=rec)
        target.call(c.R_GetServerPort())
        first = rec.claim()
        assert first["request"] and first["response"] and first["opnum"] == 0
        second = target.connect_second()
        assert second.recorder is rec
        second.call(c.R_CloseQueue(pphContext=b"\1" * 20))
        assert rec.claim()["tcp_stream"] == 1
        second.close()
        target.close()
    finally:
        server.stop()
    packets = _packets(rec)
    streams = {(p[TCP].sport, p[TCP].dport) for p in packets if p[TCP].dport == port}
    assert len(streams) == 2 == rec.connection_count
    assert sum(1 for p in packets if p[TCP].flags & FIN) == 4
    assert rec.write(tmp_path / "wire.pcap") == len(packets)


def _pdu(ptype: int, body: bytes, auth_value: bytes, little: bool = True) -> bytes:
    """A version-5 PDU with a sec_trailer (auth_type 10, NTLM) and ``auth_value``."""
    import struct as st

    order = "<" if little else ">"
    frag = 16 + len(body) + 8 + len(auth_value)
    header = bytes([5, 0, ptype, 3, 0x10 if little else 0, 0, 0, 0]) + st.pack(
        order + "HHI", frag, len(auth_value), 1)
    return header + body + bytes([10, 5, 0, 0]) + st.pack(order + "I", 0) + auth_value


def test_redact_auth_zeroes_the_token_of_binds_and_rpc_auth_3_only():
    from mqconform.captures.recorder import redact_auth

    token = b"NTLMSSP\0\x03\0\0\0" + bytes(range(40))
    for ptype in (11, 12, 14, 15, 16):
        for little in (True, False):
            pdu = _pdu(ptype, b"\x01" * 12, token, little)
            redacted = redact_auth(pdu)
            assert len(redacted) == len(pdu) and redacted[:-len(token)] == pdu[:-len(token)]
            assert redacted[-len(token):] == bytes(len(token))
    request = _pdu(0, b"\x02" * 24, b"\x07" * 16)  # a request's signature stays
    assert redact_auth(request) == request
    no_auth = _pdu(11, b"\x01" * 12, b"")
    assert redact_auth(no_auth) == no_auth
    lying = bytearray(_pdu(11, b"", token))
    lying[10:12] = (200).to_bytes(2, "little")  # auth_length past the PDU: left as it is
    assert redact_auth(bytes(lying)) == bytes(lying)


def test_a_recorder_that_redacts_writes_no_ntlmssp_message():
    from mqconform.captures.recorder import Recorder

    token = b"NTLMSSP\0\x01\0\0\0" + b"\x55" * 20
    recorder = Recorder(redact_auth=True, clock=lambda: 0.0)
    tap = recorder.open(("127.0.0.1", 40000), ("127.0.0.1", 2103))
    bind = _pdu(11, b"\x01" * 12, token)
    tap.sent(bind[:10])  # in two pieces: the PDU is redacted once whole
    tap.sent(bind[10:])
    recorder.close()
    out = io.BytesIO()
    recorder.write(out)
    assert b"NTLMSSP" not in out.getvalue() and bind[:-len(token)] in out.getvalue()


def _fragment(ptype: int, call_id: int, flags: int, opnum: int = 0) -> bytes:
    raw = bytearray(pdu(ptype, call_id, b"abcd", opnum))
    raw[3] = flags
    return bytes(raw)


def test_wire_calls_count_requests_and_the_unanswered_from_the_octets():
    """A request in two fragments is one call; a fault answers a call as a response does; a
    request whose connection ends first is on the wire, unanswered. The count does not depend
    on note_call (which a caller's thread makes when it gets its answer, if ever)."""
    rec = Recorder(clock=Clock())
    tap = rec.open(("127.0.0.1", 50000), ("127.0.0.1", 2103))
    other = rec.open(("127.0.0.1", 50001), ("127.0.0.1", 2103))
    tap.sent(_fragment(0, 1, 0x01, opnum=7))
    tap.sent(_fragment(0, 1, 0x02, opnum=7))
    tap.received(pdu(2, 1))
    tap.sent(pdu(0, 2, opnum=8))
    tap.received(pdu(3, 2))
    other.sent(pdu(0, 1, opnum=7))  # the same call_id on another connection: another call
    tap.sent(pdu(0, 3, opnum=7))  # never answered
    assert rec.wire_calls() == (4, 2)
    assert rec.calls == 0  # nobody noted a call
