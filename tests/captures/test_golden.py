"""The golden pcaps (captures/golden/, built by conformance/golden.py): regenerating them gives the
same octets; our decoder and tshark read every call the index lists; the frames are scapy's."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mqconform.conformance import golden
from mqconform.model import calls as c

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = golden.GOLDEN


def _files(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}


def _index() -> dict:
    return json.loads((GOLDEN / golden.INDEX).read_text(encoding="utf-8"))


def test_regeneration_is_byte_identical(tmp_path):
    """The one command, into a temporary directory: the same files, octet for octet (the
    whole set: a full regeneration takes well under a minute)."""
    out = tmp_path / "golden"
    run = subprocess.run([sys.executable, "-m", "mqconform.conformance.golden", "--out", str(out)],
                         cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    built, held = _files(out), _files(GOLDEN)
    assert built == held, (f"new: {sorted(built - held)[:10]}; gone: {sorted(held - built)[:10]}"
                           f" (regenerate: python -m mqconform.conformance.golden)")
    changed = [p for p in sorted(built) if (out / p).read_bytes() != (GOLDEN / p).read_bytes()]
    assert not changed, f"{len(changed)} file(s) differ, e.g. {changed[:5]} (regenerate: " \
                        f"python -m mqconform.conformance.golden)"


def test_no_golden_pcap_is_empty_and_every_scenario_left_off_says_why():
    """A pcap with no frame shows nothing: a scenario none of whose calls NDR can carry (or
    whose steps speak to the RPC runtime only) has no pcap; the index lists it with why."""
    from mqconform.captures import pcapio

    index = _index()
    for path in index["files"]:
        frames = sum(isinstance(r, pcapio.Record) for r in pcapio.records(GOLDEN / path))
        assert frames == index["files"][path]["frames"] > 0, path
    unseen = index["not_on_the_wire"]
    assert unseen and not set(unseen) & set(index["files"])
    for path, entry in unseen.items():
        assert entry["case"] and entry["notes"] and not (GOLDEN / path).exists(), path


def test_one_pcap_per_scenario_and_per_opnum_and_syntax():
    index = _index()["files"]
    files = _files(GOLDEN)
    sidecars = {f for f in files if f.endswith(".expected.json")}
    assert set(index) | {golden.INDEX} == files - sidecars
    # a scenario's deliberate departures beside its pcap (captures/expected.py)
    assert sidecars and all(f.replace(".expected.json", ".pcap") in index for f in sidecars)
    scenarios = [p for p in index if p.startswith("scenarios/")]
    features = {e["feature"] for p, e in index.items() if p.startswith("scenarios/")} | {
        e["feature"] for e in _index()["not_on_the_wire"].values()}
    assert features == {p.relative_to(ROOT).as_posix()
                        for p in (ROOT / "features").rglob("*.feature")}
    assert len({index[p]["case"] for p in scenarios}) == len(scenarios)
    for path in scenarios:
        entry = index[path]
        doc, section = Path(entry["feature"]).parent.name, Path(entry["feature"]).stem
        assert path.startswith(f"scenarios/{doc}/{section}/"), path
        assert entry["ids"] and all(i.startswith("MS-MQ") for i in entry["ids"])
    opnums = {p for p in index if p.startswith("opnums/")}
    want = {golden.opnum_path(k, ndr64) for (iface, _), k in c.CALLS.items()
            for ndr64 in ((False, True) if iface == c.REMOTEREAD else (False,))}
    assert opnums == want
    for path in opnums:  # one typical call, answered
        [call] = index[path]["calls"]
        assert call[3] == index[path]["method"] and call[4] == index[path]["syntax"]
        assert call[5] is not None and call[6] is None
    size = sum((GOLDEN / p).stat().st_size for p in _files(GOLDEN))
    assert size < 20 << 20, f"captures/golden/ holds {size} octets"


def test_our_decoder_reads_every_golden_pcap():
    """Every frame decoded; no error but the scenarios' own malformed stubs; the calls are the
    index's."""
    assert golden.decoder_disagreements(GOLDEN) == []


@pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark is not installed")
def test_tshark_reads_every_golden_pcap():
    """tshark's DCE/RPC dissection finds each call of the index: its request with its call_id
    and opnum, and its response or fault, in the call's TCP stream and frames."""
    assert golden.tshark_disagreements(GOLDEN) == []


@pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark is not installed")
def test_the_tshark_comparison_sees_a_wrong_opnum(tmp_path):
    copy = tmp_path / "golden"
    path = "opnums/RemoteRead/07-R_StartReceive-ndr64.pcap"
    (copy / path).parent.mkdir(parents=True)
    shutil.copy(GOLDEN / path, copy / path)
    index = _index()
    index["files"] = {path: index["files"][path]}
    index["files"][path]["calls"][0][2] = c.R_CancelReceive.opnum
    (copy / golden.INDEX).write_text(json.dumps(index))
    [problem] = golden.tshark_disagreements(copy)
    assert "no request (opnum 8)" in problem


def test_frames_are_scapys():
    """The frames of the opnum pcaps rebuilt by scapy from their own fields are the same
    octets (checksums, lengths, flags)."""
    from scapy.layers.inet import IP, TCP
    from scapy.layers.l2 import Ether
    from scapy.packet import Raw
    from scapy.utils import rdpcap

    frames = 0
    for path in sorted(GOLDEN.glob("opnums/*/*.pcap")):
        for pkt in rdpcap(str(path)):
            ip, tcp = pkt[IP], pkt[TCP]
            again = (Ether(dst=pkt.dst, src=pkt.src)
                     / IP(src=ip.src, dst=ip.dst, id=ip.id, flags="DF", ttl=64)
                     / TCP(sport=tcp.sport, dport=tcp.dport, seq=tcp.seq, ack=tcp.ack,
                           flags=tcp.flags, window=65535))
            payload = bytes(tcp.payload)
            assert bytes(again / Raw(payload) if payload else again) == bytes(pkt)
            frames += 1
    assert frames > 300


def test_a_long_stub_is_fragmented_and_segmented(tmp_path):
    """A request larger than max_xmit_frag goes as several request PDUs of at most MAX_FRAG
    octets, each cut into TCP segments of at most the MSS; frames are 1 ms apart from
    2026-01-01T00:00:00Z; the same events give the same octets."""
    import struct

    from scapy.utils import rdpcap

    from mqconform.captures.decode import decode_all
    from mqconform.model.formats import parse_format_name, to_queue_format
    from mqconform.wire import ndr

    fmt = to_queue_format(parse_format_name("DIRECT=OS:MQREF\\private$\\q"))
    call = c.R_QMEnlistRemoteTransaction(pTransactionId=bytes(16), cbPropagationToken=10000,
                                         pbPropagationToken=bytes(10000), pQueueFormat=fmt)
    conn = golden.Conn(0)

    def events():
        return [golden.Event(0, "request", conn, 1, call),
                golden.Event(1, "answer", conn, 1, result=c.R_QMEnlistRemoteTransactionResult())]

    data = golden.Renderer().render(events())
    assert data == golden.Renderer().render(events())
    path = tmp_path / "long.pcap"
    path.write_bytes(data)
    decoded = decode_all([path])
    [row] = decoded.calls
    assert (row.method, row.status, row.fault, decoded.errors) == (
        "R_QMEnlistRemoteTransaction", 0, None, [])
    packets = rdpcap(str(path))
    assert [float(p.time) for p in packets[:2]] == [golden.EPOCH, golden.EPOCH + 0.001]
    assert all(len(p["TCP"].payload) <= golden.MSS for p in packets)
    sent = b"".join(bytes(p["TCP"].payload) for p in packets if p["TCP"].dport == 2103)
    sizes, ptypes = [], []
    while sent:
        size = struct.unpack_from("<H", sent, 8)[0]
        sizes.append(size)
        ptypes.append(sent[2])
        sent = sent[size:]
    room = (golden.MAX_FRAG - 24) // 8 * 8  # stub octets per request PDU
    assert ptypes.count(0) == -(-len(ndr.encode_request(call, False)) // room) > 1
    assert max(sizes) <= golden.MAX_FRAG
