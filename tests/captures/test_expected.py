"""captures/expected.py: a conformance run lists its deliberate departures beside its capture,
and the trace validator reports them as expected, never a server's."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mqconform.captures import expected
from mqconform.conformance.targets import ServeProcess
from mqconform.model.observer import RULES
from mqconform.server.faults import Faults
from mqconform.server.main import start

MQCONFORM = [sys.executable, "-m", "mqconform.cli"]


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([*MQCONFORM, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=600)


def _target(tmp_path: Path, server) -> Path:
    host, port = server.rpc.address
    chost, cport = server.control.address
    path = tmp_path / "target.yaml"
    path.write_text(f'endpoint: "ncacn_ip_tcp:{host}[{port}]"\nname: reference-over-tcp\n'
                    f"sut_control: {{kind: reference, url: 'http://{chost}:{cport}'}}\n")
    return path


def test_the_sidecar_is_named_after_the_capture():
    assert expected.sidecar("r/wire.pcap") == Path("r/wire.expected.json")
    assert expected.sidecar("x/a.pcapng.gz") == Path("x/a.expected.json")


SECURE_SERVER = """
security:
  authentication: required
  level: integrity
  users:
    - {name: suite, password_env: MQX_SUITE, administrator: true}
"""


@pytest.mark.parametrize("transfer", ["ndr", "ndr64", "authenticated"])
def test_a_passing_runs_capture_validates_with_its_deliberate_departures_expected(
        tmp_path, transfer, monkeypatch):
    """`mqconform run` then `mqconform captures validate r/wire.pcap`: exit 0, the suite's
    negative calls reported as expected; each listed entry is a client rule or a request the
    suite sent malformed, and names a case of the run. Over NDR, NDR64, and NTLM with packet
    integrity."""
    server = None
    target = "reference"
    if transfer == "ndr64":
        target = str(tmp_path / "target.yaml")
        Path(target).write_text("endpoint: reference\nndr64: true\n")
    elif transfer == "authenticated":
        (tmp_path / "queues.yaml").write_text(SECURE_SERVER)
        env = {"MQX_SUITE": "suite-Pw-71q"}
        server = ServeProcess(args=("--queues", str(tmp_path / "queues.yaml")), env=env)
        target = str(tmp_path / "target.yaml")
        Path(target).write_text(
            f"endpoint: {server.endpoint}\n"
            f"credentials: {{user: suite, password: suite-Pw-71q, level: integrity}}\n"
            f"sut_control: {{kind: reference, url: {server.control_url}, "
            f"token_env: MQX_CONTROL}}\n")
        monkeypatch.setenv("MQX_CONTROL", server.control_token)
    try:
        out = _run("run", "--target", target, "--report-dir", str(tmp_path / "r"),
                   "--select", "MS-MQRR/3.1.4.5", "--select", "MS-MQRR/3.1.4.9",  # trace: ignore
                   "--select", "MS-MQMR/2.2", cwd=tmp_path)  # trace: ignore
    finally:
        if server is not None:
            server.close()
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    sidecar = tmp_path / "r" / "wire.expected.json"
    data = json.loads(sidecar.read_text())
    results = json.loads((tmp_path / "r" / "results.json").read_text())
    assert results["target"]["ndr64"] is (transfer == "ndr64")
    cases = {c["case"] for c in results["cases"]}
    entries = data["expected"]
    assert {e["kind"] for e in entries} == {"violation", "error"}, entries[:3]
    for e in entries:
        assert e["case"] in cases
        if e["kind"] == "violation":
            assert RULES[e["requirement"]][0] == "client", e
    valid = _run("captures", "validate", str(tmp_path / "r" / "wire.pcap"),
                 "--out", str(tmp_path / "v"), cwd=tmp_path)
    assert valid.returncode == 0, valid.stdout[-3000:] + valid.stderr[-2000:]
    assert "unexpected: 0 violation(s), 0 decoding error(s)" in valid.stdout
    listed = sum(1 for e in entries if e["kind"] == "violation")
    assert f"expected: {listed} violation(s)" in valid.stdout
    # the report marks them too: per requirement, every violation is an expected one
    report = json.loads((tmp_path / "v" / "report.json").read_text())
    assert report["expected"]["unexpected_violations"] == 0
    assert report["expected"]["unexpected_errors"] == 0
    assert all(q["expected"] == q["violations"] for q in report["requirements"])
    html = (tmp_path / "v" / "index.html").read_text()
    assert "Nothing unexpected." in html and "Of them expected" in html
    # the report's filter: by actor and by expected/unexpected, each row says its own
    for q in report["requirements"]:
        assert (f'data-actor="{q["actor"]}" data-expected="expected"') in html
    assert 'id="q"' in html and 'data-filter="actor"' in html and "<script>" in html
    if transfer == "ndr" and shutil.which("mergecap"):
        _another_capture_of_the_run_validates_with_its_list(tmp_path, data)


def _another_capture_of_the_run_validates_with_its_list(tmp_path: Path, data: dict) -> None:
    """The same traffic in another capture (pcapng, after another capture's frames, as a
    dumpcap file of a longer session has it) with no list beside it: ``--expected`` matches
    the run's list by the calls' endpoints and call_id, not by frame."""
    assert all(e.get("client") and e.get("server") for e in data["expected"])
    golden = Path(__file__).resolve().parents[2] / "captures" / "golden" / "opnums"
    other = tmp_path / "elsewhere" / "session.pcapng"
    other.parent.mkdir()
    subprocess.run(["mergecap", "-a", "-F", "pcapng", "-w", str(other),
                    str(golden / "RemoteRead" / "00-R_GetServerPort-ndr.pcap"),
                    str(tmp_path / "r" / "wire.pcap")], check=True)
    bare = _run("captures", "validate", str(other), "--out", str(tmp_path / "v2"),
                cwd=tmp_path)
    assert bare.returncode == 1, bare.stdout[-2000:]  # by frame, nothing would match
    listed = _run("captures", "validate", str(other), "--out", str(tmp_path / "v3"),
                  "--expected", str(tmp_path / "r" / "wire.expected.json"), cwd=tmp_path)
    assert listed.returncode == 0, listed.stdout[-3000:] + listed.stderr[-2000:]
    assert "unexpected: 0 violation(s), 0 decoding error(s)" in listed.stdout


def test_a_server_fault_in_the_capture_is_not_excused(tmp_path):
    """A reference that keeps acknowledged messages (fault ack-keeps, MS-MQRR/3.1.4.9/R7):
    its violations are the server's, never in the run's list, and the validation fails."""
    server = start(port=0, control_port=0,
                   control_unauthenticated=True, faults=Faults(frozenset({"ack-keeps"}), rate=1.0))
    try:
        out = _run("run", "--target", str(_target(tmp_path, server)), "--report-dir",
                   str(tmp_path / "r"), "--select", "MS-MQRR/3.1.4.9",  # trace: ignore
                   cwd=tmp_path)
    finally:
        server.stop()
    assert out.returncode == 1, out.stdout[-2000:] + out.stderr[-2000:]
    entries = json.loads((tmp_path / "r" / "wire.expected.json").read_text())["expected"]
    assert all(e["kind"] == "error" or RULES[e["requirement"]][0] == "client"
               for e in entries)
    valid = _run("captures", "validate", str(tmp_path / "r" / "wire.pcap"),
                 "--out", str(tmp_path / "v"), cwd=tmp_path)
    assert valid.returncode == 1, valid.stdout[-3000:]
    assert "MS-MQRR/3.1.4.9/R7" in valid.stdout
    assert "unexpected: 0 violation(s)" not in valid.stdout
    report = json.loads((tmp_path / "v" / "report.json").read_text())
    [server_rule] = [q for q in report["requirements"]
                     if q["requirement"] == "MS-MQRR/3.1.4.9/R7"]
    assert server_rule["expected"] == 0 and report["expected"]["unexpected_violations"] > 0
    assert "Unexpected:" in (tmp_path / "v" / "index.html").read_text()


def test_an_unreadable_sidecar_is_one_line(tmp_path):
    capture = tmp_path / "wire.pcap"
    capture.write_bytes(b"")
    (tmp_path / "wire.expected.json").write_text("{not json")
    with pytest.raises(expected.ExpectedError, match="wire.expected.json: unreadable"):
        expected.load(capture)
