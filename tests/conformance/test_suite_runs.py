"""The conformance suite end to end: ``mqconform run`` against the model and against the
embedded reference server started here on a free port; the reports it writes; exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from mqconform.model import calls as c
from mqconform.server.main import start
from mqconform.spec.catalog import load

MQCONFORM = [sys.executable, "-m", "mqconform.cli"]


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([*MQCONFORM, "run", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300)


@pytest.fixture
def reference(tmp_path):
    r = start(host="127.0.0.1", port=0, control_port=0, control_unauthenticated=True)
    yield r
    r.stop()


def target_file(tmp_path: Path, r, **extra) -> Path:
    host, port = r.rpc.address
    chost, cport = r.control.address
    lines = [f'endpoint: "ncacn_ip_tcp:{host}[{port}]"', "name: reference-over-tcp",
             f"sut_control: {{kind: reference, url: 'http://{chost}:{cport}'}}"]
    lines += [f"{k}: {v}" for k, v in extra.items()]
    path = tmp_path / "target.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


def check_reports(report_dir: Path) -> dict:
    results = json.loads((report_dir / "results.json").read_text())
    cases, summary = results["cases"], results["summary"]
    assert summary["cases"] == len(cases) >= 25
    assert summary["unexpected_failures"] == 0
    verdicts = {c["verdict"] for c in cases}
    assert verdicts <= {"pass", "inconclusive", "not-applicable", "not applicable"}, verdicts
    # a case the target cannot host (one that speaks to the RPC runtime, on the in-process
    # model) is not-applicable and says why; of the others, 95 % pass
    inapplicable = [c for c in cases if c["verdict"] in ("not-applicable", "not applicable")]
    assert all(c.get("messages") for c in inapplicable), \
        [c["case"] for c in inapplicable if not c.get("messages")]
    assert summary["pass"] >= 0.95 * (len(cases) - len(inapplicable))
    passing = {i for c in cases if c["verdict"] == "pass" for i in c["ids"]}
    catalog = load()
    wire = {r.id for r in catalog if r.doc == "MS-MQRR" and r.testability == "wire"
            and not r.retired}
    cov = results["coverage"]["MS-MQRR"]
    assert cov["wire"] == len(wire)
    assert cov["covered_by_passing_case"] == len(wire & passing) > 0
    assert set(results["requirements"]) == {i for c in cases for i in c["ids"]}
    passing = [c for c in cases if c["verdict"] == "pass"]
    # calls are logged (a few qmmgmt cases read what the model declares to the RPC runtime)
    assert sum(1 for c in passing if c["calls"]) >= 0.9 * len(passing)
    junit = ET.parse(report_dir / "junit.xml").getroot()
    assert int(junit.get("tests")) == len(cases) and junit.get("failures") == "0"
    # each testcase lists the requirements it covers in its system-out
    listed = {rid for out in junit.iter("system-out") for line in (out.text or "").splitlines()
              if line.startswith("requirements: ") for rid in line.split()[1:]}
    assert listed == set(results["requirements"])
    return results


@pytest.mark.req("MS-MQRR/3.1.4.7/R50")
def test_the_suite_passes_against_the_model(tmp_path):
    out = run("--target", "model", "--report-dir", str(tmp_path / "r"), cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    results = check_reports(tmp_path / "r")
    assert results["target"]["endpoint"] == "model"


@pytest.fixture
def serve_process(tmp_path):
    """``mqconform serve`` started as a user starts it, in a process of its own: (endpoint,
    control URL) read from the two lines it prints."""
    import re

    proc = subprocess.Popen([*MQCONFORM, "serve", "--port", "0", "--control-port", "0",
                             "--control-unauthenticated"],
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        first, second = proc.stdout.readline(), proc.stdout.readline()
        endpoint = re.search(r"ncacn_ip_tcp:\S+", first)
        control = re.search(r"http://[\d.]+:\d+", second)
        assert endpoint and control, f"serve printed {first!r} {second!r}"
        yield endpoint.group(0), control.group(0)
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.mark.req("MS-MQRR/3.1.4.2/R24")
def test_the_full_suite_passes_against_a_separately_started_serve(tmp_path, serve_process):
    endpoint, control = serve_process
    path = tmp_path / "target.yaml"
    path.write_text(f'name: serve-separately\nendpoint: "{endpoint}"\n'
                    f"sut_control: {{kind: reference, url: '{control}'}}\n")
    # the target file names no identities: the two access-check cases are inconclusive
    out = run("--target", str(path), "--report-dir", str(tmp_path / "r"),
              "--allow-inconclusive", cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    results = check_reports(tmp_path / "r")
    assert all("identity" in c["messages"][0] for c in results["cases"]
               if c["verdict"] == "inconclusive")
    assert results["target"]["name"] == "serve-separately"
    # the full suite: every case but the few only an in-process target can run
    assert results["summary"]["not-applicable"] <= 10
    assert results["coverage"]["MS-MQRR"]["percent"] >= 98.0
    assert results["coverage"]["MS-MQMR"]["percent"] >= 98.0


def test_the_suite_with_no_target_starts_the_embedded_server(tmp_path):
    out = run("--select", "MS-MQRR/3.1.4.6", cwd=tmp_path)  # trace: ignore
    assert out.returncode == 0, out.stdout + out.stderr
    results = json.loads((tmp_path / "reports" / "results.json").read_text())
    assert results["target"]["endpoint"] == "reference"
    # --select takes the cases one of whose IDs has the prefix; a case may cite other
    # documents' rules beside it (a scenario of MS-MQRR 3.1.4.6 that MS-MQDMPR 3.1.4.5 also
    # governs)
    assert results["cases"] and all(any(i.startswith("MS-MQRR/3.1.4.6/") for i in c["ids"])  # trace: ignore
                                    for c in results["cases"])
    assert results["summary"]["pass"] == len(results["cases"]) >= 2


def test_a_deviating_target_fails_the_run_with_exit_1(tmp_path, reference):
    # the target file names the wrong computer: the server finds none of the queues the
    # format names designate, where the model (told this name) does
    path = target_file(tmp_path, reference, computer_name="ELSEWHERE")
    out = run("--target", str(path), "--report-dir", str(tmp_path / "r"),
              "--select", "MS-MQRR/3.1.4.3", "--", "-k", "test_close_queue_returns_ok_and_a_null_handle", cwd=tmp_path)  # trace: ignore
    assert out.returncode == 1, out.stdout + out.stderr
    results = json.loads((tmp_path / "r" / "results.json").read_text())
    [case] = results["cases"]
    assert case["verdict"] == "fail" and case["unexpected"]
    assert "MQ_ERROR_QUEUE_NOT_FOUND" in case["messages"][0]
    # the summary names the failing case, its requirement IDs and the frames of its calls
    fail = next(line for line in out.stdout.splitlines() if line.startswith("FAIL "))
    # the requirement that failed is the one its check names: the queue is not found at
    # R_OpenQueue (3.1.4.2), before the R_CloseQueue the case is about
    assert case["failed_ids"] == ["MS-MQRR/3.1.4.2/R30"]
    assert case["case"] in fail and case["failed_ids"][0] in fail
    assert f"frames {case['frames']['first']}-{case['frames']['last']}" in fail
    assert "wire coverage MS-MQRR:" in out.stdout and "report: " in out.stdout


def test_an_expected_failure_does_not_fail_the_run_and_one_that_passes_is_reported(
        tmp_path, reference):
    path = target_file(tmp_path, reference, computer_name="ELSEWHERE")
    path.write_text(path.read_text() + "expectations:\n"
                    "  - {id: MS-MQRR/3.1.4.2/R30, reason: known}\n")
    out = run("--target", str(path), "--report-dir", str(tmp_path / "r"),
              "--select", "MS-MQRR/3.1.4.3", "--", "-k", "test_close_queue_returns_ok_and_a_null_handle", cwd=tmp_path)  # trace: ignore
    assert out.returncode == 0, out.stdout + out.stderr
    [case] = json.loads((tmp_path / "r" / "results.json").read_text())["cases"]
    assert case["verdict"] == "fail" and not case["unexpected"]
    assert case["expected_failure"] == "known"
    good = target_file(tmp_path, reference)
    good.write_text(good.read_text() + "expectations:\n"
                    "  - {id: MS-MQRR/3.1.4.3/R15, reason: known}\n")
    out = run("--target", str(good), "--report-dir", str(tmp_path / "g"),
              "--select", "MS-MQRR/3.1.4.3", "--", "-k", "test_close_queue_returns_ok_and_a_null_handle", cwd=tmp_path)  # trace: ignore
    assert out.returncode == 0
    summary = json.loads((tmp_path / "g" / "results.json").read_text())["summary"]
    assert summary["expected_failures_passed"] == 1


def test_without_sut_control_every_case_is_inconclusive(tmp_path, reference):
    host, port = reference.rpc.address
    out = run("--target", f"ncacn_ip_tcp:{host}[{port}]", "--report-dir", str(tmp_path / "r"),
              "--select", "MS-MQRR/3.1.4.6", cwd=tmp_path)  # trace: ignore
    assert out.returncode == 3, out.stdout + out.stderr  # nothing ran: incomplete
    results = json.loads((tmp_path / "r" / "results.json").read_text())
    assert results["complete"] is False
    verdicts = [c["verdict"] for c in results["cases"]]
    assert len(verdicts) >= 2 and set(verdicts) == {"inconclusive"}
    assert "cannot create queue" in results["cases"][0]["messages"][0]


def test_a_target_without_qmmgmt_has_every_mqmr_case_not_applicable(tmp_path, reference):
    """A RemoteRead-only endpoint (the reference refusing binds of qmmgmt) declared
    ``qmmgmt: false``: the MS-MQMR cases are not applicable and send no qmmgmt call; none
    fails for an interface the target says it does not have."""
    served = reference.handler.interfaces()
    reference.handler.interfaces = lambda: {u: v for u, v in served.items()
                                            if u != c.QMMGMT_UUID}
    path = target_file(tmp_path, reference, capabilities="{qmmgmt: false}")
    out = run("--target", str(path), "--report-dir", str(tmp_path / "r"),
              "--select", "MS-MQMR", cwd=tmp_path)
    assert out.returncode != 1, out.stdout[-3000:] + out.stderr[-3000:]
    cases = json.loads((tmp_path / "r" / "results.json").read_text())["cases"]
    assert len(cases) >= 50
    verdicts = {c["verdict"] for c in cases}
    assert verdicts == {"not-applicable"}, {c["case"]: c["verdict"] for c in cases
                                            if c["verdict"] != "not-applicable"}
    assert all("qmmgmt" in c["messages"][0] for c in cases)


def test_a_target_without_move_has_the_move_cases_not_applicable(tmp_path, reference):
    path = target_file(tmp_path, reference, capabilities="{move: false}")
    out = run("--target", str(path), "--report-dir", str(tmp_path / "r"),
              "--select", "MS-MQRR/3.1.4.10", cwd=tmp_path)  # trace: ignore
    assert out.returncode != 1, out.stdout[-3000:] + out.stderr[-3000:]
    cases = json.loads((tmp_path / "r" / "results.json").read_text())["cases"]
    assert len(cases) >= 3
    assert {c["verdict"] for c in cases} == {"not-applicable"}
    assert all("move" in c["messages"][0] for c in cases)
