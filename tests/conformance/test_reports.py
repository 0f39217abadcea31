"""The reports beyond results.json and junit.xml: wire.pcap of a run over TCP (read back by
Wireshark's own dissector, tshark), the frame numbers each call record names in results.json,
and index.html (opened in headless Chromium).

tshark and chromium come from Debian (.ci/run installs both). Outside CI a test that needs one
is skipped when it is missing; under CI=true it fails instead (as tests/server/test_capture.py).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from mqconform.captures.dissector import TSHARK_OPTIONS
from mqconform.conformance.report import case_anchor
from mqconform.model import calls as c
from mqconform.server.main import start
from mqconform.spec.catalog import load

MQCONFORM = [sys.executable, "-m", "mqconform.cli"]
SELECT = "MS-MQRR/3.1.4"  # trace: ignore - every RemoteRead method section


def _tool(name: str, hint: str) -> str:
    path = shutil.which(name)
    if path is None:
        missing = f"{name} is not installed ({hint})"
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI must run the report tests: {missing}")
        pytest.skip(missing)
    return path


@pytest.fixture
def tshark() -> str:
    return _tool("tshark", "apt-get install tshark")


@pytest.fixture
def chromium() -> str:
    return _tool("chromium", "apt-get install chromium")


def _run(tmp: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*MQCONFORM, "run", *args], cwd=tmp, capture_output=True, text=True,
                          timeout=300)


def _target(tmp: Path, server, name: str, **extra: str) -> Path:
    host, port = server.rpc.address
    chost, cport = server.control.address
    lines = [f'endpoint: "ncacn_ip_tcp:{host}[{port}]"', f"name: {name}",
             f"sut_control: {{kind: reference, url: 'http://{chost}:{cport}'}}"]
    lines += [f"{k}: {v}" for k, v in extra.items()]
    path = tmp / f"{name}.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """One run against the embedded reference server over TCP, one against the same server
    told the wrong computer name (every R_OpenQueue fails: failing cases with frames), one on
    the model. Whether others' scenarios pass is not this file's business: no exit code is
    asserted beyond "not a usage error"."""
    tmp = tmp_path_factory.mktemp("reports")
    server = start(host="127.0.0.1", port=0, control_port=0, control_unauthenticated=True)
    try:
        out = {}
        for key, target, extra in (("tcp", "reference-over-tcp", {}),
                                   ("deviating", "deviating", {"computer_name": "ELSEWHERE"})):
            path = _target(tmp, server, target, **extra)
            done = _run(tmp, "--target", str(path), "--report-dir", str(tmp / key),
                        "--select", SELECT)
            assert done.returncode in (0, 1), done.stdout + done.stderr
            out[key] = (tmp / key, done)
        done = _run(tmp, "--target", "model", "--report-dir", str(tmp / "model"),
                    "--select", SELECT)
        assert done.returncode in (0, 1), done.stdout + done.stderr
        out["model"] = (tmp / "model", done)
        out["port"] = server.rpc.address[1]
        return out
    finally:
        server.stop()


def _results(directory: Path) -> dict:
    return json.loads((directory / "results.json").read_text())


def _fields(tshark: str, pcap: Path, display: str, *fields: str) -> list[list[str]]:
    out = subprocess.run([tshark, *TSHARK_OPTIONS, "-r", str(pcap), "-Y", display, "-T", "fields",
                          *sum((["-e", f] for f in fields), [])],
                         capture_output=True, text=True, timeout=120, check=True).stdout
    return [line.split("\t") for line in out.splitlines() if line.strip()]


def _calls(results: dict) -> list[dict]:
    return [call for case in results["cases"] for call in case["calls"]]


# ------------------------------------------------------------------------------ wire.pcap


def test_a_run_over_tcp_writes_wire_pcap_that_tshark_reads_as_dcerpc(runs, tshark):
    directory, done = runs["tcp"]
    pcap = directory / "wire.pcap"
    assert pcap.is_file()
    assert "wire: " in done.stdout and str(pcap) in done.stdout
    results = _results(directory)
    assert results["wire"]["pcap"] == "wire.pcap" and results["wire"]["calls"] > 0
    # no -d: Wireshark's own heuristics find DCE/RPC in the TCP streams
    rows = _fields(tshark, pcap, "dcerpc", "frame.number", "dcerpc.pkt_type",
                   "dcerpc.cn_bind_to_uuid", "tcp.stream", "dcerpc.cn_flags")
    binds = {r[2].lower() for r in rows if r[1] == "11"}  # 11: bind
    assert str(c.REMOTEREAD_UUID) in binds
    # one call is one request and one answer, each maybe in several fragments: count the
    # PDUs that carry PFC_FIRST_FRAG (0x01)
    pdus = []  # (pkt_type, flags) of each PDU; a frame may carry several, comma-separated
    for r in rows:
        types = r[1].split(",") if len(r) > 1 else []
        flags = r[4].split(",") if len(r) > 4 else []
        pdus += [(t, int(f, 16)) for t, f in zip(types, flags, strict=False) if t and f]
    requests = [p for p in pdus if p[0] == "0" and p[1] & 0x01]
    answers = [p for p in pdus if p[0] in ("2", "3") and p[1] & 0x01]  # response, fault
    assert len(requests) == len(answers) == results["wire"]["calls"]
    assert results["wire"]["unanswered"] == 0
    frames = _fields(tshark, pcap, "frame", "frame.number")
    assert len(frames) == results["wire"]["frames"]
    # consistent TCP (sequence numbers, handshake): no analysis complaint, nothing malformed.
    # A client port used again after its earlier connection closed (FIN both ways) is TCP as
    # it should be: Wireshark notes it (tcp.analysis.reused_ports), and a long run's many
    # connections may come to it
    assert _fields(tshark, pcap, "(tcp.analysis.flags && !tcp.analysis.reused_ports) || "
                   "_ws.malformed || _ws.expert.severity >= error", "frame.number") == []
    fins: dict[str, list[set[str]]] = {}  # client port -> its connections' FIN senders
    for src, dst, syn, fin in _fields(tshark, pcap, "tcp.flags.syn == 1 || tcp.flags.fin == 1",
                                      "tcp.srcport", "tcp.dstport", "tcp.flags.syn",
                                      "tcp.flags.fin"):
        client = src if dst == str(runs["port"]) else dst
        streams = fins.setdefault(client, [])
        if syn in ("1", "True") and src == client:
            streams.append(set())
        elif fin in ("1", "True") and streams:
            streams[-1].add(src)
    assert fins and any(len(senders) == 2 for streams in fins.values() for senders in streams)
    for client, streams in fins.items():
        assert all(len(senders) == 2 for senders in streams[:-1]), client  # used again: closed
    syn = _fields(tshark, pcap, "tcp.flags.syn == 1 && tcp.flags.ack == 0", "tcp.stream")
    fin = _fields(tshark, pcap, "tcp.flags.fin == 1", "tcp.stream")
    assert len(syn) == results["wire"]["connections"] and len(fin) == 2 * len(syn)


def test_frame_numbers_in_results_json_are_the_dcerpc_requests_and_responses(runs, tshark):
    for key in ("tcp", "deviating"):
        directory, _ = runs[key]
        results = _results(directory)
        calls = _calls(results)
        assert calls and all(call["frames"] for call in calls)
        pcap = directory / "wire.pcap"
        rows = _fields(tshark, pcap, "dcerpc.pkt_type == 0 || dcerpc.pkt_type == 2 || "
                       "dcerpc.pkt_type == 3", "frame.number", "dcerpc.pkt_type",
                       "dcerpc.cn_call_id", "dcerpc.opnum", "tcp.stream")
        by_frame = {int(r[0]): r for r in rows}
        for call in calls:
            f = call["frames"]
            request = by_frame[f["request"][1]]  # tshark shows the PDU on its last frame
            assert request[1] == "0" and int(request[2]) == f["call_id"]
            assert int(request[3]) == f["opnum"]
            assert int(request[4]) == f["tcp_stream"]
            answer = by_frame[f["response"][1]]
            assert answer[1] == ("3" if f["fault"] else "2")
            assert int(answer[2]) == f["call_id"] and int(answer[4]) == f["tcp_stream"]
            assert f["first"] <= f["request"][0] <= f["request"][1] < f["response"][0] \
                <= f["response"][1] <= f["last"]
        for case in results["cases"]:
            if case["calls"]:
                assert case["frames"]["first"] <= case["calls"][0]["frames"]["first"]
                assert case["calls"][-1]["frames"]["last"] <= case["frames"]["last"]


def test_the_opnums_of_the_recorded_calls_are_the_methods_called(runs):
    methods = {cls.__name__: cls.opnum for cls in c.CALLS.values()}
    results = _results(runs["tcp"][0])
    for call in _calls(results):
        assert call["frames"]["opnum"] == methods[call["call"].split("(", 1)[0]]


def test_failing_cases_name_the_frames_of_their_calls(runs):
    directory, done = runs["deviating"]
    results = _results(directory)
    failing = [case for case in results["cases"] if case["verdict"] == "fail" and case["calls"]]
    assert failing and done.returncode == 1
    html = (directory / "index.html").read_text()
    for case in failing:
        last = case["calls"][-1]["frames"]
        assert "QUEUE_NOT_FOUND" in case["calls"][-1]["observed"]
        assert last["fault"] or last["response"]
        first, final = last["first"], last["last"]
        shown = f"frame {first}" if first == final else f"frames {first}\u2013{final}"
        # a failing case's calls are in the page itself, each linking wire.pcap with its
        # frames and their Wireshark filter
        assert f'title="frame.number &gt;= {first} &amp;&amp; frame.number &lt;= {final}">'\
               f"{shown}</a>" in html
        assert f'id="frame-{first}"' in html


def test_a_model_run_has_no_wire_and_says_so(runs):
    directory, done = runs["model"]
    results = _results(directory)
    assert not (directory / "wire.pcap").exists()
    assert results["wire"]["pcap"] is None and "model" in results["wire"]["note"]
    assert all(call["frames"] is None for call in _calls(results))
    assert (directory / "index.html").is_file() and "report: " in done.stdout
    assert 'href="wire.pcap"' not in (directory / "index.html").read_text()


# ------------------------------------------------------------------------------ index.html


class _Dom(HTMLParser):
    def __init__(self):
        super().__init__()
        self.rows: set[str] = set()
        self.ids: set[str] = set()
        self.scripts = 0
        self.script_sources: list[str] = []
        self.remote: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.add(a["id"])
        if tag == "tr" and "req" in (a.get("class") or "").split():
            self.rows.add(a["id"])
        if tag == "script":
            self.scripts += 1
            if a.get("src"):
                self.script_sources.append(a["src"])
        for name in ("src", "href"):
            value = a.get(name) or ""
            if re.match(r"[a-z][a-z0-9+.-]*:", value, re.I):
                self.remote.append(value)


def _parse(text: str) -> _Dom:
    dom = _Dom()
    dom.feed(text)
    return dom


def _chromium(chromium: str, tmp_path: Path, url: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
         "--no-first-run", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", f"--user-data-dir={tmp_path / 'chromium'}", *args, url],
        capture_output=True, text=True, timeout=180)


def test_index_html_fetches_nothing_from_a_network(runs):
    """Offline: one inline script (the filter and the loader of index-details.js beside the
    page); no address of a network anywhere."""
    for key in ("tcp", "deviating", "model"):
        directory = runs[key][0]
        text = (directory / "index.html").read_text()
        dom = _parse(text)
        assert dom.scripts == 1 and dom.script_sources == [] and dom.remote == []
        assert 'tag.src = "index-details.js"' in text
        details = (directory / "index-details.js").read_text()
        assert details.startswith("window.MQ_DETAILS = ") and "http" not in details.split(
            "=", 1)[0]


def test_index_html_renders_in_headless_chromium(runs, chromium, tmp_path):
    directory, _ = runs["deviating"]
    index = directory / "index.html"
    results = _results(directory)
    # a filter matching everything loads every row and call table (index-details.js)
    done = _chromium(chromium, tmp_path, index.resolve().as_uri() + "?q=MS-",
                     "--virtual-time-budget=10000", "--dump-dom")
    assert done.returncode == 0, done.stderr[-2000:]
    dom = _parse(done.stdout)
    catalog = load()
    assert dom.rows == {r.id for r in catalog.active()}  # every requirement has its row
    assert set(results["requirements"]) <= dom.rows
    assert {case_anchor(c) for c in results["cases"]} <= dom.ids
    for doc in ("MS-MQRR", "MS-MQMR", "MS-MQDMPR", "summary", "coverage", "cases"):
        assert doc in dom.ids
    text = re.sub(r"<[^>]+>", " ", done.stdout)
    assert "unexpected failure" in text
    cov = results["coverage"]["MS-MQRR"]
    assert f"{cov['covered_by_passing_case']}/{cov['wire']} ({cov['percent']} %)" in text
    shot = tmp_path / "index.png"
    done = _chromium(chromium, tmp_path, index.resolve().as_uri(), "--window-size=1280,1600",
                     f"--screenshot={shot}")
    assert done.returncode == 0, done.stderr[-2000:]
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000  # a page, not a blank
