"""The capture decoder (captures/decode.py): what tshark sees in a capture of a real run, the
same calls from pcapng, from reordered and retransmitted segments; gaps, truncation, corrupt
records, foreign traffic and garbage stubs reported as errors with frame counts that reconcile."""

from __future__ import annotations

import gzip
import re
import shutil
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from mqconform.captures import pcapio
from mqconform.captures.decode import decode_all
from mqconform.captures.dissector import TSHARK_OPTIONS
from mqconform.captures.recorder import ACK, PSH, SYN, build_frame, pcap_header, pcap_record
from mqconform.model import calls as c

TSHARK = shutil.which("tshark")


@pytest.fixture(scope="module")
def run_pcap(tmp_path_factory) -> Path:
    """wire.pcap of a real run: the suite over TCP against the reference server."""
    out = tmp_path_factory.mktemp("run")
    done = subprocess.run([sys.executable, "-m", "mqconform.cli", "run", "--select",
                           "MS-MQRR/3.1.4.10", "--select", "MS-MQMR/3.1.4.2",  # trace: ignore
                           "--report-dir", str(out)], capture_output=True, text=True,
                          timeout=300, cwd=out)
    assert done.returncode == 0, done.stdout + done.stderr
    return out / "wire.pcap"


def _records(path: Path) -> list[tuple[float, bytes]]:
    return [(r.ts, r.data) for r in pcapio.records(path) if isinstance(r, pcapio.Record)]


def _write(path: Path, frames: list[tuple[float, bytes]]) -> Path:
    path.write_bytes(pcap_header() + b"".join(pcap_record(ts, f) for ts, f in frames))
    return path


def _key(decoded) -> list[tuple]:
    return sorted(repr((x.call_id, x.connection, x.opnum, x.method, x.status, x.fault,
                        x.request, x.response)) for x in decoded.calls)


# ------------------------------------------------------------------------- agreement


@pytest.mark.skipif(TSHARK is None, reason="tshark is not installed")
def test_tshark_and_the_decoder_agree_on_frames_call_ids_types_interfaces_and_opnums(run_pcap):
    d = decode_all([run_pcap])
    [s] = d.summaries
    assert s.reconciles and s.frames == s.decoded and s.calls == len(d.calls) > 50
    out = subprocess.run([TSHARK, *TSHARK_OPTIONS, "-r", str(run_pcap), "-Y", "dcerpc", "-T", "fields",
                          "-E", "occurrence=a", "-e", "frame.number", "-e", "dcerpc.pkt_type",
                          "-e", "dcerpc.cn_call_id", "-e", "dcerpc.opnum",
                          "-e", "dcerpc.cn_flags", "-e", "dcerpc.cn_bind_to_uuid"],
                         capture_output=True, text=True, timeout=120, check=True).stdout
    theirs_req, theirs_ans, theirs_binds = set(), set(), set()
    for line in out.splitlines():
        frame, ptypes, call_ids, opnums, flags, binds = (line.split("\t") + [""] * 6)[:6]
        opnums = opnums.split(",") if opnums else []
        for i, (ptype, call_id, flag) in enumerate(zip(ptypes.split(","), call_ids.split(","),
                                                       flags.split(","), strict=False)):
            if not int(flag, 16) & 0x02:  # the last fragment completes the PDU
                continue
            if ptype == "0":
                theirs_req.add((int(frame), int(call_id), int(opnums[i]) if i < len(opnums)
                                else None))
            elif ptype in ("2", "3"):
                theirs_ans.add((int(frame), int(call_id), ptype))
        theirs_binds |= {b.lower() for b in binds.split(",") if b}
    ours_req = {(x.request_last_frame, x.call_id, x.opnum) for x in d.calls
                if x.request_last_frame is not None}
    ours_ans = {(x.response_last_frame, x.call_id, "3" if x.fault is not None else "2")
                for x in d.calls if x.response_last_frame is not None}
    assert ours_req == theirs_req
    assert ours_ans == theirs_ans
    assert {x.interface for x in d.calls} <= theirs_binds
    assert {x.interface_name for x in d.calls} == {c.REMOTEREAD, c.QMMGMT}


def test_calls_are_decoded_into_typed_fields_with_status(run_pcap):
    d = decode_all([run_pcap])
    opens = [x for x in d.calls if x.method == "R_OpenQueue" and x.fault is None]
    assert opens and all('"pQueueFormat"' in x.request and x.response for x in opens)
    gets = [x for x in d.calls if x.method == "R_QMMgmtGetInfo" and x.status == 0]
    assert gets and all(x.transfer_syntax == "NDR" for x in gets)
    assert all(x.client_port != x.server_port and x.assoc_group for x in d.calls)
    assert all(x.request_time <= x.response_time for x in d.calls
               if x.response_time is not None)


def _pcapng_of(run_pcap: Path, tmp_path: Path) -> Path:
    """The run's capture rewritten as pcapng by editcap."""
    editcap = shutil.which("editcap")
    if editcap is None:
        pytest.skip("editcap is not installed")
    ng = tmp_path / "run.pcapng"
    subprocess.run([editcap, "-F", "pcapng", str(run_pcap), str(ng)], check=True)
    return ng


def test_pcapng_decodes_to_the_same_calls(run_pcap, tmp_path):
    ng = _pcapng_of(run_pcap, tmp_path)
    assert ng.read_bytes()[:4] == b"\x0a\x0d\x0d\x0a"
    assert _key(decode_all([ng])) == _key(decode_all([run_pcap]))


def test_gzipped_pcap_and_pcapng_decode_to_the_same_calls(run_pcap, tmp_path):
    ng = _pcapng_of(run_pcap, tmp_path)
    want = _key(decode_all([run_pcap]))
    for plain in (run_pcap, ng):
        packed = tmp_path / (plain.name + ".gz")
        packed.write_bytes(gzip.compress(plain.read_bytes()))
        decoded = decode_all([packed])
        assert _key(decoded) == want and not decoded.errors, packed.name
    cut = tmp_path / "cut.pcap.gz"
    cut.write_bytes((tmp_path / "run.pcapng.gz").read_bytes()[:5000])
    decoded = decode_all([cut])
    assert [e.kind for e in decoded.errors] == ["truncated"]
    assert decoded.errors[0].message.startswith("gzip: ")


def test_a_damaged_gzip_stream_loses_only_what_follows_the_damage(run_pcap, tmp_path):
    """A gzip stream cut short, or with its deflate data corrupt (zlib refuses it): the records
    decompressed before the damage are decoded, then one ``gzip:`` error row, never a crash."""
    whole = decode_all([run_pcap])
    packed = gzip.compress(run_pcap.read_bytes())
    cut = tmp_path / "cut.pcap.gz"
    cut.write_bytes(packed[:len(packed) * 3 // 4])
    d = decode_all([cut])
    assert len(whole.calls) // 2 < len(d.calls) < len(whole.calls)
    assert [e.message[:6] for e in d.errors if e.frame is None] == ["gzip: "]
    assert d.summaries[0].reconciles
    plain = run_pcap.read_bytes()
    deflate = zlib.compressobj(6, zlib.DEFLATED, 31)  # a gzip member
    head = deflate.compress(plain[:len(plain) * 3 // 4]) + deflate.flush(zlib.Z_FULL_FLUSH)
    corrupt = tmp_path / "corrupt.pcap.gz"
    corrupt.write_bytes(head + b"\x07" + bytes(100))  # then a block of the reserved type
    with pytest.raises(zlib.error):
        gzip.decompress(corrupt.read_bytes())
    d = decode_all([corrupt])
    assert [e.message[:6] for e in d.errors if e.frame is None] == ["gzip: "]
    assert 0 < len(d.calls) < len(whole.calls) and d.summaries[0].reconciles


def test_a_pcapng_packet_block_too_short_for_its_fields_is_an_error_row(run_pcap, tmp_path):
    ng = _pcapng_of(run_pcap, tmp_path)
    data = ng.read_bytes()
    short = tmp_path / "short.pcapng"
    section = struct.unpack_from("<I", data, 4)[0]  # the blocks after the section header
    short.write_bytes(data + struct.pack("<IIIIII", 6, 24, 0, 0, 0, 24) + data[section:])
    d = decode_all([short])
    [s], [w] = d.summaries, decode_all([ng]).summaries
    [error] = [e for e in d.errors if e.kind == "corrupt"]
    assert error.frame == w.frames + 1 and "too short for its fields" in error.message
    assert s.frames == 2 * w.frames + 1 and s.rejected >= 1 and s.reconciles  # read on


def test_reordered_and_retransmitted_segments_give_the_same_calls(run_pcap, tmp_path):
    frames = _records(run_pcap)
    shuffled = list(frames)
    for i in range(0, len(shuffled) - 1, 7):  # swap neighbours now and then
        shuffled[i], shuffled[i + 1] = shuffled[i + 1], shuffled[i]
    shuffled += frames[100:140]  # and send some segments again, late
    for i in range(50, len(frames), 97):
        shuffled.insert(i, frames[i])
    d = decode_all([_write(tmp_path / "mixed.pcap", shuffled)])
    assert _key(d) == _key(decode_all([run_pcap]))
    assert d.summaries[0].reconciles and not [e for e in d.errors if e.kind == "gap"]


# ------------------------------------------------------------------------- bad input


def _pdu(ptype: int, call_id: int, body: bytes, flags: int = 0x03) -> bytes:
    return struct.pack("<BBBB4sHHI", 5, 0, ptype, flags, b"\x10\0\0\0", 16 + len(body), 0,
                       call_id) + body


def _conversation(stub: bytes = b"") -> list[bytes]:
    """A bind to RemoteRead and one R_GetServerPort call (opnum 0) with this request stub."""
    from mqconform.wire import dcerpc as d

    bind = d.encode_pdu(d.Bind(5840, 5840, 0, (d.ContextElement(
        0, d.SyntaxId(c.REMOTEREAD_UUID, 1, 0), (d.NDR,)),)), call_id=1)
    ack = d.encode_pdu(d.BindAck(5840, 5840, 0x1234, b"2103", (d.ContextResultItem(
        0, 0, d.NDR),)), call_id=1)
    request = _pdu(0, 2, struct.pack("<IHH", len(stub), 0, 0) + stub)
    response = _pdu(2, 2, struct.pack("<IHBB", 4, 0, 0, 0) + struct.pack("<I", 2103))
    return [bind, ack, request, response]


def _frames(pdus: list[bytes], cut: set[int] = frozenset(),
            cli: tuple[str, int] = ("10.0.0.1", 50000)) -> list[tuple[float, bytes]]:
    srv = ("10.0.0.2", 2103)
    seq = {cli: 1000, srv: 9000}
    out = [(1.0, build_frame(*[cli[0], srv[0], cli[1], srv[1]], 999, 0, SYN, b"", 1)),
           (1.0, build_frame(srv[0], cli[0], srv[1], cli[1], 8999, 1000, SYN | ACK, b"", 1)),
           (1.0, build_frame(cli[0], srv[0], cli[1], srv[1], 1000, 9000, ACK, b"", 2))]
    for i, pdu in enumerate(pdus):
        a, b = (cli, srv) if i % 2 == 0 else (srv, cli)
        frame = build_frame(a[0], b[0], a[1], b[1], seq[a], seq[b], PSH | ACK, pdu, 3 + i)
        seq[a] += len(pdu)
        if i not in cut:
            out.append((2.0 + i, frame))
    return out


def test_a_clean_conversation_is_one_call_and_every_frame_is_decoded(tmp_path):
    d = decode_all([_write(tmp_path / "ok.pcap", _frames(_conversation()))])
    [call] = d.calls
    assert (call.method, call.status, call.assoc_group, call.server_port) == \
        ("R_GetServerPort", 2103, 0x1234, 2103)
    assert call.request_first_frame == 6 and call.response_last_frame == 7
    assert d.summaries[0].frames == d.summaries[0].decoded == 7 and not d.errors


def test_a_garbage_stub_is_a_call_with_a_decode_error_and_an_error_row(tmp_path):
    d = decode_all([_write(tmp_path / "g.pcap", _frames(_conversation(b"\xde\xad")))])
    [call] = d.calls
    assert call.decode_error and call.request is None and call.status is None
    assert [e.kind for e in d.errors] == ["stub"] and d.errors[0].frame == 6


def test_a_missing_segment_is_a_gap_reported_not_guessed(tmp_path):
    pdus = _conversation() + _conversation()[2:]  # a second call, call_id 2 again
    d = decode_all([_write(tmp_path / "gap.pcap", _frames(pdus, cut={2}))])
    gaps = [e for e in d.errors if e.kind == "gap"]
    assert gaps and "missing" in gaps[0].message
    # the request that was not captured is not invented; its response stands alone
    assert all(x.request is None or x.request_first_frame for x in d.calls)
    assert d.summaries[0].reconciles


def test_each_hole_in_a_stream_is_a_gap_and_what_follows_each_is_read(tmp_path):
    """Two responses of one connection not captured (a snap length cuts such frames): at the
    connection's end each hole is a gap, and the responses after each are paired with their
    requests; only the two whose response is missing say so."""
    calls = _conversation()[2:]
    pdus = _conversation()[:2]
    for call_id in range(2, 8):
        pdus += [p[:12] + struct.pack("<I", call_id) + p[16:] for p in calls]
    cut = {5, 9}  # the responses of call_ids 3 and 5
    d = decode_all([_write(tmp_path / "holes.pcap", _frames(pdus, cut=cut))])
    assert [e.kind for e in d.errors] == ["gap", "gap"]
    assert sorted((x.call_id, x.status) for x in d.calls) == [
        (2, 2103), (3, None), (4, 2103), (5, None), (6, 2103), (7, 2103)]
    assert [x.call_id for x in d.calls if x.decode_error] == [3, 5]
    assert d.summaries[0].gaps == 2 and d.summaries[0].reconciles


def test_truncated_corrupt_and_foreign_files_are_errors_and_counts_reconcile(tmp_path):
    good = _write(tmp_path / "ok.pcap", _frames(_conversation()))
    data = good.read_bytes()
    cut = tmp_path / "cut.pcap"
    cut.write_bytes(data[:-30])  # the last record cut mid-PDU
    corrupt = tmp_path / "corrupt.pcap"
    corrupt.write_bytes(data[:24] + struct.pack("<IIII", 1, 0, 0x7FFFFFFF, 60) + data[40:])
    foreign = tmp_path / "foreign.txt"
    foreign.write_bytes(b"GET / HTTP/1.1\r\n\r\n")
    empty = tmp_path / "empty.pcap"
    empty.write_bytes(b"")
    udp = tmp_path / "udp.pcap"
    frame = bytes(12) + b"\x08\x00" + bytes([0x45, 0, 0, 28]) + bytes(5) + b"\x11" + bytes(10) \
        + bytes(8)
    udp.write_bytes(pcap_header() + pcap_record(1.0, frame))
    d = decode_all([cut, corrupt, foreign, empty, udp, tmp_path / "missing.pcap"])
    by_file = {s.capture: s for s in d.summaries}
    assert all(s.reconciles for s in d.summaries), d.summaries
    assert by_file[str(cut)].rejected == 1 and by_file[str(cut)].decoded == 6
    assert by_file[str(corrupt)].frames == 1 and by_file[str(corrupt)].rejected == 1
    assert by_file[str(udp)].not_dcerpc == 1
    kinds = {(Path(e.capture).name, e.kind) for e in d.errors}
    assert {("cut.pcap", "truncated"), ("corrupt.pcap", "corrupt"), ("foreign.txt", "format"),
            ("empty.pcap", "format"), ("missing.pcap", "io")} <= kinds


def test_malformed_frames_are_rejected_one_by_one(tmp_path):
    frames = _frames(_conversation())
    bad_ip = frames[3][1][:14] + b"\x46" + frames[3][1][15:]  # IHL 24: options that are not
    short_tcp = frames[4][1][:14 + 20 + 10]
    d = decode_all([_write(tmp_path / "bad.pcap", [frames[0], (1.5, bad_ip),
                                                   (1.6, short_tcp)] + frames[1:])])
    s = d.summaries[0]
    assert s.reconciles and s.rejected == 2
    assert {e.kind for e in d.errors} >= {"ip"} or {e.kind for e in d.errors} >= {"tcp"}
    assert len(d.calls) == 1


# ------------------------------------------------------------------------- Parquet, command


def _mixed_corpus(tmp_path: Path) -> list[Path]:
    """Every kind of bad input at once, beside good traffic: one capture mixing a clean call, a
    garbage stub on a second connection, HTTP over TCP, a UDP datagram, a frame with a broken
    IP header and a last record cut mid-PDU; and files truncated, corrupt, foreign and empty."""
    clean = _frames(_conversation())
    garbage = _frames(_conversation(b"\xde\xad"), cli=("10.0.0.3", 50001))
    http = build_frame("10.0.0.4", "10.0.0.5", 40000, 80, 1, 1, PSH | ACK,
                       b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", 9)
    udp = bytes(12) + b"\x08\x00" + bytes([0x45, 0, 0, 28]) + bytes(5) + b"\x11" + bytes(10) \
        + bytes(8)
    bad_ip = clean[3][1][:14] + b"\x46" + clean[3][1][15:]
    frames = [x for pair in zip(clean, garbage, strict=True) for x in pair]
    frames[5:5] = [(1.5, http), (1.5, udp), (1.5, bad_ip)]
    cut = _frames(_conversation(), cli=("10.0.0.6", 50002))
    mixed = _write(tmp_path / "mixed.pcap", frames + cut)
    mixed.write_bytes(mixed.read_bytes()[:-25])  # the last frame's PDU cut short
    good = _write(tmp_path / "good.pcap", clean)
    truncated = tmp_path / "truncated.pcap"
    truncated.write_bytes(good.read_bytes()[:-11])
    corrupt = tmp_path / "corrupt.pcap"
    corrupt.write_bytes(good.read_bytes()[:24] + struct.pack("<IIII", 1, 0, 0x7FFFFFFF, 60)
                        + good.read_bytes()[40:])
    foreign = tmp_path / "notes.txt"
    foreign.write_bytes(b"not a capture\n")
    empty = tmp_path / "empty.pcap"
    empty.write_bytes(b"")
    return [mixed, good, truncated, corrupt, foreign, empty]


def test_a_corpus_mixing_every_kind_of_bad_input_reconciles_file_by_file(tmp_path):
    import pyarrow.parquet as pq

    files = _mixed_corpus(tmp_path)
    out = tmp_path / "out" / "calls.parquet"
    out.parent.mkdir()
    done = subprocess.run([sys.executable, "-m", "mqconform.cli", "captures", "decode",
                           *map(str, files), "--out", str(out)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stdout + done.stderr  # errors found, nothing crashed
    table = {Path(f["capture"]).name: f
             for f in pq.read_table(out.with_suffix(".files.parquet")).to_pylist()}
    assert set(table) == {p.name for p in files}
    for name, f in table.items():
        assert f["frames"] == f["decoded"] + f["rejected"] + f["not_dcerpc"], (name, f)
    mixed = table["mixed.pcap"]
    assert mixed["frames"] == 24 and mixed["not_dcerpc"] == 2
    assert mixed["rejected"] == 2  # the broken IP header, the record cut short
    assert table["good.pcap"]["decoded"] == 7 and table["good.pcap"]["rejected"] == 0
    kinds = {(Path(e["capture"]).name, e["kind"])
             for e in pq.read_table(out.with_suffix(".errors.parquet")).to_pylist()}
    assert kinds & {("mixed.pcap", "ip"), ("mixed.pcap", "tcp")}  # IHL 6: TCP read 4 late
    assert {("mixed.pcap", "stub"), ("mixed.pcap", "truncated"),
            ("truncated.pcap", "truncated"), ("corrupt.pcap", "corrupt"),
            ("notes.txt", "format"), ("empty.pcap", "format")} <= kinds, kinds
    assert not {k for k in kinds if k[0] == "good.pcap"}
    calls = pq.read_table(out).to_pylist()
    by_client = {x["client"]: x for x in calls if x["capture"].endswith("mixed.pcap")}
    assert by_client["10.0.0.1:50000"]["status"] == 2103
    assert by_client["10.0.0.3:50001"]["decode_error"]
    assert by_client["10.0.0.6:50002"]["method"] == "R_GetServerPort"  # its request survived


def test_mqconform_captures_decode_writes_the_three_tables(run_pcap, tmp_path):
    import pyarrow.parquet as pq

    from mqconform.captures.schema import schema

    bad = tmp_path / "bad.pcap"
    bad.write_bytes(run_pcap.read_bytes()[:-7])
    out = tmp_path / "calls.parquet"
    done = subprocess.run([sys.executable, "-m", "mqconform.cli", "captures", "decode",
                           str(run_pcap), str(bad), "--out", str(out)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stdout + done.stderr  # bad.pcap had an error
    calls = pq.read_table(out)
    assert calls.schema.equals(schema("calls"))
    d = decode_all([run_pcap])
    assert calls.num_rows == len(d.calls) + sum(
        1 for x in decode_all([bad]).calls)
    files = pq.read_table(tmp_path / "calls.files.parquet").to_pylist()
    assert [f["frames"] == f["decoded"] + f["rejected"] + f["not_dcerpc"] for f in files] \
        == [True, True]
    errors = pq.read_table(tmp_path / "calls.errors.parquet").to_pylist()
    assert any(e["capture"] == str(bad) and e["kind"] == "truncated" for e in errors)
    assert f"{run_pcap}: " in done.stdout and "calls: " in done.stdout
    # each error kind, and the reason of its errors with capture and frame; the progress as
    # plain lines (stdout is no terminal)
    assert "error truncated: 1" in done.stdout and "\x1b[" not in done.stdout
    assert re.search(re.escape(str(bad)) + r" frame \d+: \S", done.stdout), done.stdout
    assert "files: 2/2 done" in done.stdout


def test_mqconform_captures_decode_refuses_a_missing_file_in_one_line(tmp_path):
    done = subprocess.run([sys.executable, "-m", "mqconform.cli", "captures", "decode",
                           str(tmp_path / "nope.pcap"), "--out", str(tmp_path / "c.parquet")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stderr.strip().count("\n") == 0
    assert "no such file" in done.stderr


# ------------------------------------------------------------------------- binds not captured


def test_calls_whose_bind_is_not_in_the_capture_are_read_from_their_stubs(run_pcap, tmp_path):
    """A capture started after a connection's bind (as a late dumpcap, a ring-buffer chunk):
    the interface and transfer syntax are inferred from the stubs, and every call after the
    cut reads as in the whole capture; the interface version, which only the bind says, is
    left null as the mark of an inferred context."""
    whole = decode_all([run_pcap])
    by_connection: dict[int, list] = {}
    for call in whole.calls:
        by_connection.setdefault(call.connection, []).append(call)
    busiest = max(by_connection.values(), key=len)
    cut = min(x.request_first_frame for x in busiest if x.request_first_frame) - 1
    records = _records(run_pcap)
    late = decode_all([_write(tmp_path / "late.pcap", records[cut:])])
    inferred = [x for x in late.calls if x.interface_version is None and x.interface_name]
    assert len(inferred) >= len(busiest) - 1 > 5
    fields = ("client", "call_id", "interface_name", "method", "status", "fault", "handle",
              "result_handle", "queue", "request_id", "lookup_id", "cursor", "action")

    def key(x) -> tuple:
        return tuple(getattr(x, f) for f in fields) + (round(x.request_time, 6),)

    after = {key(x) for x in whole.calls if x.request_first_frame and x.request_first_frame > cut}
    assert {key(x) for x in late.calls if x.request_first_frame} == after
    assert not [e for e in late.errors if e.kind == "unbound"]
    syntaxes = {x.transfer_syntax for x in inferred}
    assert syntaxes <= {"NDR", "NDR64", None} and syntaxes & {"NDR", "NDR64"}


def test_a_context_whose_stubs_fit_no_interface_is_counted_in_an_unbound_error_row(tmp_path):
    # the capture begins after the handshake and the bind: at the request (frame 1)
    d = decode_all([_write(tmp_path / "u.pcap", _frames(_conversation(b"\xde\xad" * 9))[5:])])
    [call] = d.calls
    assert call.interface is None and call.method is None
    [error] = d.errors
    assert error.kind == "unbound" and error.frame == 1 and "not in the capture" in error.message


def test_a_call_that_reads_alike_in_ndr_and_ndr64_leaves_the_syntax_open(tmp_path):
    """R_GetServerPort's stubs are four octets in either syntax: the call is read, the
    transfer syntax is not guessed."""
    d = decode_all([_write(tmp_path / "p.pcap", _frames(_conversation())[5:])])
    [call] = d.calls
    assert (call.method, call.status, call.interface_name) == ("R_GetServerPort", 2103,
                                                               c.REMOTEREAD)
    assert call.transfer_syntax is None and call.interface_version is None and not d.errors
