"""The fast decoder (captures/decode.py) and the scapy reading (tests/captures/slowpath.py) agree
call by call: connection ends, call_id, opnum, interface, transfer syntax, the stubs' octets,
fault status and frame numbers; on a real run's capture and on generated conversations
(random stubs, fragmentation, segmentation, retransmissions and reordering)."""

from __future__ import annotations

import struct
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mqconform.captures.decode import decode_all
from mqconform.captures.recorder import ACK, PSH, SYN, build_frame, pcap_header, pcap_record
from mqconform.model import calls as c
from mqconform.wire import dcerpc as d

sys.path.insert(0, str(Path(__file__).resolve().parent))
from slowpath import read_calls  # noqa: E402
from tcp_frames import tcp_frames  # noqa: E402


def _fast(path) -> set[tuple]:
    out = set()
    for x in decode_all([path], keep_stubs=True, decode_stubs=False).calls:
        ans_stub = None if x.fault is not None else x.response_stub
        out.add((x.client, x.server, x.call_id, x.opnum, x.interface, x.transfer_syntax,
                 x.request_stub, ans_stub, x.fault,
                 (x.request_first_frame, x.request_last_frame)
                 if x.request_first_frame is not None else None,
                 (x.response_first_frame, x.response_last_frame)
                 if x.response_first_frame is not None else None))
    return out


def _slow(path) -> set[tuple]:
    return {(x.client, x.server, x.call_id, x.opnum, x.interface, x.transfer_syntax,
             x.request_stub, x.response_stub, x.fault, x.request_frames, x.response_frames)
            for x in read_calls(path)}


def test_fast_and_slow_readings_agree_on_a_real_run(tmp_path):
    done = subprocess.run([sys.executable, "-m", "mqconform.cli", "run", "--select",
                           "MS-MQRR/3.1.4.7/R36", "--select", "MS-MQRR/2.2/R1",
                           "--select", "MS-MQMR/3.1.4.1/R1",  # trace: ignore
                           "--report-dir", str(tmp_path)], capture_output=True, text=True,
                          timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    fast, slow = _fast(tmp_path / "wire.pcap"), _slow(tmp_path / "wire.pcap")
    assert fast == slow and len(fast) > 10
    assert "NDR" in {x[5] for x in fast}  # NDR64: the generated conversations below


# --------------------------------------------------------------------- generated inputs

CLI, SRV = ("10.1.0.1", 50123), ("10.1.0.2", 2103)


def _conversation(draw) -> list[tuple[int, bytes]]:
    """(direction, PDU) in order: 0 client -> server, 1 back."""
    ndr64 = draw(st.booleans())
    syntax = d.NDR64 if ndr64 else d.NDR
    max_frag = draw(st.sampled_from([64, 100, 1432, 5840]))
    out = [(0, d.encode_pdu(d.Bind(max_frag, max_frag, 0, (d.ContextElement(
        0, d.SyntaxId(c.REMOTEREAD_UUID, 1, 0), (syntax,)),)), call_id=1)),
        (1, d.encode_pdu(d.BindAck(max_frag, max_frag, 0x77, b"2103", (d.ContextResultItem(
            0, 0, syntax),)), call_id=1))]
    for call_id in range(2, 2 + draw(st.integers(1, 6))):
        stub = draw(st.binary(max_size=600))
        opnum = draw(st.integers(0, 15))
        for flags, piece in d.fragment_stub(stub, max_frag, 24):
            out.append((0, d.encode_pdu(d.Request(context_id=0, opnum=opnum, stub=piece,
                                                  alloc_hint=len(stub)), call_id=call_id,
                                        pfc_flags=flags)))
        if draw(st.booleans()):
            answer = draw(st.binary(max_size=600))
            for flags, piece in d.fragment_stub(answer, max_frag, 24):
                out.append((1, d.encode_pdu(d.Response(context_id=0, stub=piece,
                                                       alloc_hint=len(answer)),
                                            call_id=call_id, pfc_flags=flags)))
        else:
            out.append((1, d.encode_pdu(d.Fault(context_id=0, status=0x1C010002),
                                        call_id=call_id)))
    return out


@st.composite
def captures(draw):
    pdus = _conversation(draw)
    mss = draw(st.sampled_from([7, 40, 536, 1460]))
    frames, _ = tcp_frames(pdus, CLI, SRV, mss, draw(st.booleans()))
    # reorder neighbours and retransmit some segments (never the SYN or the FINs)
    body = frames[2:-2]
    for i in draw(st.lists(st.integers(0, max(0, len(body) - 2)), max_size=5)):
        if i + 1 < len(body):
            body[i], body[i + 1] = body[i + 1], body[i]
    for i in draw(st.lists(st.integers(0, max(0, len(body) - 1)), max_size=3)):
        if body:
            body.insert(min(len(body), i + 2), body[i])
    return frames[:2] + body + frames[-2:]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.data_too_large])
@given(frames=captures())
def test_fast_and_slow_readings_agree_on_generated_conversations(tmp_path_factory, frames):
    path = tmp_path_factory.mktemp("gen") / "gen.pcap"
    path.write_bytes(pcap_header() + b"".join(pcap_record(1.0 + i / 1000, f)
                                              for i, f in enumerate(frames)))
    fast = _fast(path)
    assert fast == _slow(path)
    decoded = decode_all([path], decode_stubs=False)
    s = decoded.summaries[0]
    assert s.reconciles and s.frames == s.decoded == len(frames)
    assert not [e for e in decoded.errors if e.kind in ("gap", "desync")]


@pytest.mark.parametrize("order", ["<", ">"])
def test_a_big_endian_pdu_is_framed_too(tmp_path, order):
    # frag_length and call_id in the sender's byte order (drep 0x00: big-endian integers)
    drep = b"\x10\0\0\0" if order == "<" else b"\x00\0\0\0"
    body = struct.pack(order + "IHH", 3, 0, 0) + b"abc"
    pdu = struct.pack(order + "BBBB4sHHI", 5, 0, 0, 3, drep, 16 + len(body), 0, 9) + body
    frames = [build_frame(CLI[0], SRV[0], CLI[1], SRV[1], 999, 0, SYN, b"", 1),
              build_frame(CLI[0], SRV[0], CLI[1], SRV[1], 1000, 0, PSH | ACK, pdu, 2)]
    path = tmp_path / "be.pcap"
    path.write_bytes(pcap_header() + b"".join(pcap_record(1.0, f) for f in frames))
    [call] = decode_all([path], keep_stubs=True).calls
    assert (call.call_id, call.opnum, call.request_stub) == (9, 0, b"abc")


def test_fast_and_slow_readings_agree_on_every_golden_pcap():
    """Every pcap of captures/golden/ (one per scenario, one per opnum and transfer syntax)."""
    from mqconform.conformance import golden

    files = sorted(golden.GOLDEN.rglob("*.pcap"))
    assert len(files) > 400
    differ = []
    for path in files:
        fast, slow = _fast(path), _slow(path)
        if fast != slow:
            differ.append((path.relative_to(golden.GOLDEN).as_posix(),
                           sorted(fast ^ slow, key=repr)[:2]))
    assert not differ, f"{len(differ)} golden pcap(s) read differently, e.g. {differ[:3]}"
