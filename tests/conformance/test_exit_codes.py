"""`mqconform run` exit codes that mean what they say: 0 conformant, 1 non-conformant, 2 usage,
3 incomplete (nothing ran, interrupted, the target gone, inconclusive not allowed, coverage
below the floor), 4 mqconform's own error; results.json records complete and why not."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mqconform.conformance import verdicts as v
from mqconform.conformance.targets import ServeProcess
from mqconform.server.main import start


def run(*args: str, cwd: Path, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mqconform.cli", "run", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=900, **kw)


def results(folder: Path) -> dict:
    return json.loads((folder / "results.json").read_text())


def test_no_case_selected_is_incomplete(tmp_path):
    # Queue Manager Started: no client call raises it, so no case of the suite is tagged with it
    out = run("--select", "MS-MQDMPR/3.1.4.1", "--report-dir", "r",  # trace: ignore
              cwd=tmp_path)
    assert out.returncode == 3, out.stdout + out.stderr
    doc = results(tmp_path / "r")
    assert doc["complete"] is False and doc["exit"]["code"] == 3
    assert any("no case ran" in why for why in doc["incomplete"])
    assert out.stderr.strip().count("\n") == 0 and "incomplete: no case ran" in out.stderr


def test_a_bare_endpoint_is_incomplete_unless_inconclusive_cases_are_allowed(tmp_path):
    """`mqconform serve` without its control API: the cases that need a queue are
    inconclusive, so the run is incomplete (exit 3) unless the user allows them."""
    server = start(port=0)
    try:
        host, port = server.rpc.address
        target = f"ncacn_ip_tcp:{host}[{port}]"
        select = ("--select", "MS-MQRR/3.1.4.1", "--select", "MS-MQRR/3.1.4.3")  # trace: ignore
        strict = run("--target", target, "--report-dir", "a", *select, cwd=tmp_path)
        allowed = run("--target", target, "--report-dir", "b", "--allow-inconclusive",
                      *select, cwd=tmp_path)
    finally:
        server.stop()
    assert strict.returncode == 3, strict.stdout + strict.stderr
    doc = results(tmp_path / "a")
    assert doc["summary"]["inconclusive"] > 0 and doc["summary"]["pass"] > 0
    assert any("inconclusive" in why for why in doc["incomplete"])
    assert allowed.returncode == 0, allowed.stdout + allowed.stderr
    assert results(tmp_path / "b")["complete"] is True


def test_coverage_below_the_floor_is_incomplete(tmp_path):
    out = run("--target", "model", "--select", "MS-MQRR/3.1.4.1",  # trace: ignore
              "--min-coverage", "50",
              "--report-dir", "r", cwd=tmp_path)
    assert out.returncode == 3, out.stdout + out.stderr
    assert any("--min-coverage 50" in why for why in results(tmp_path / "r")["incomplete"])
    assert run("--min-coverage", "101", cwd=tmp_path).returncode == 2


# SIGINT after the 20th case, SIGTERM (a CI job's cancellation) after the 150th: in the middle
# of the run, where a KeyboardInterrupt raised inside Hypothesis's garbage-collector callback
# used to be swallowed and the run went on to exit 0. Cases are counted on pytest's verbose
# output, so the signal lands mid-run however fast the machine is.
@pytest.mark.parametrize("signum,after", [(signal.SIGINT, 20), (signal.SIGTERM, 150)],
                         ids=["SIGINT", "SIGTERM"])
def test_an_interrupted_run_is_incomplete_and_lists_the_cases_not_run(tmp_path, signum, after):
    proc = subprocess.Popen([sys.executable, "-m", "mqconform.cli", "run", "--report-dir", "r",
                             "--", "-v"], cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    done = 0
    for line in proc.stdout:
        done += " PASSED" in line
        if done == after:
            proc.send_signal(signum)
            break
    assert done == after, "the run ended before the signal"
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 3, out[-2000:] + err[-2000:]
    doc = results(tmp_path / "r")
    assert doc["complete"] is False and "interrupted" in doc["incomplete"]
    assert doc["summary"]["not-run"] > 0 and doc["summary"]["pass"] > 0
    not_run = [c for c in doc["cases"] if c["verdict"] == "not-run"]
    assert all("interrupted" in c["messages"][0] for c in not_run)
    html = (tmp_path / "r" / "index.html").read_text()
    assert "Incomplete" in html and "Conformant" not in html


#: `mqconform run` in a process whose garbage collector, once pytest has begun to start and
#: the suite's plugin is loaded, raises SIGINT from a gc callback: the default handler's
#: KeyboardInterrupt would be raised inside the callback, where Python swallows it
SIGNAL_IN_A_GC_CALLBACK = """
import gc, signal, sys
from mqconform.cli import main
sent = []
def callback(phase, info):
    if (not sent and phase == "start" and "_pytest.main" in sys.modules
            and "mqconform.conformance.suite_plugin" in sys.modules):
        sent.append(1)
        signal.raise_signal(signal.SIGINT)
gc.callbacks.append(callback)
rc = main(["run", "--report-dir", "r"])
print("signal sent" if sent else "no signal sent", file=sys.stderr)
sys.exit(rc)
"""


def test_a_signal_while_pytest_starts_is_not_lost(tmp_path):
    """A Ctrl-C that lands where Python swallows the exception (a gc callback, a __del__,
    under pytest's capture while it starts) must not let the run go on to a green end: it
    is noted, and the run ends incomplete before its first case (a race found by sending
    SIGINT 10 to 30 ms after the run began: some runs exited 0 after running every case,
    others died of the signal, -2)."""
    done = subprocess.run([sys.executable, "-c", SIGNAL_IN_A_GC_CALLBACK], cwd=tmp_path,
                          capture_output=True, text=True, timeout=600)
    assert "signal sent" in done.stderr, done.stderr[-2000:]
    assert done.returncode == 3, done.stdout[-2000:] + done.stderr[-2000:]
    assert "incomplete: interrupted before the run began" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "r" / "results.json").exists()


def test_an_interrupt_before_the_first_case_is_incomplete_too(tmp_path):
    stale = tmp_path / "r" / "results.json"
    stale.parent.mkdir()
    stale.write_text("{}")
    proc = subprocess.Popen([sys.executable, "-m", "mqconform.cli", "run", "--report-dir", "r"],
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    give_up = time.monotonic() + 60
    while stale.exists() and proc.poll() is None and time.monotonic() < give_up:
        time.sleep(0.01)  # removed when the run has begun to set up, before its first case
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 3, out[-2000:] + err[-2000:]
    assert "Traceback" not in err and "incomplete: " in err


def test_a_target_that_dies_ends_the_run_within_seconds_with_one_line(tmp_path, monkeypatch):
    server = ServeProcess()
    monkeypatch.setenv("MQT_CONTROL", server.control_token)
    try:
        host, port = server.address
        target = tmp_path / "t.yaml"
        target.write_text(f'endpoint: "ncacn_ip_tcp:{host}[{port}]"\n'
                          f"sut_control: {{kind: reference, url: '{server.control_url}', "
                          "token_env: MQT_CONTROL}\n")
        proc = subprocess.Popen([sys.executable, "-m", "mqconform.cli", "run", "--target",
                                 str(target), "--report-dir", "r"], cwd=tmp_path,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(8)
        server.kill()
        killed = time.monotonic()
        out, err = proc.communicate(timeout=120)
        ended = time.monotonic() - killed
    finally:
        server.close()
    assert proc.returncode == 3, out[-2000:] + err[-2000:]
    assert ended < 10, ended
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "the target stopped answering: after case " in lines[0], err
    assert "Traceback" not in out + err
    doc = results(tmp_path / "r")
    assert doc["complete"] is False
    assert any(why.startswith("the target stopped answering") for why in doc["incomplete"])
    assert doc["summary"]["not-run"] > 0 and doc["summary"]["fail"] == 0
    # the cases after it are not run, not inconclusive (the target file names no identities:
    # the access-check cases before it are inconclusive for that alone)
    assert all("identity" in c["messages"][0] for c in doc["cases"]
               if c["verdict"] == "inconclusive")


def test_an_error_of_mqconform_is_exit_4_with_its_traceback_in_a_file(tmp_path):
    (tmp_path / "breaks_one_case.py").write_text(
        "def pytest_runtest_call(item):\n"
        "    if 'skips_the_message_another' in item.name:\n"
        "        raise TypeError('a bug of the suite')\n")
    out = run("--select", "MS-MQRR/3.1.4.7", "--report-dir", "r", "--", "-p",  # trace: ignore
              "breaks_one_case", cwd=tmp_path,
              env={**__import__("os").environ, "PYTHONPATH": str(tmp_path)})
    assert out.returncode == 4, out.stdout[-2000:] + out.stderr[-2000:]
    assert "Traceback" not in out.stdout + out.stderr
    doc = results(tmp_path / "r")
    [broken] = [c for c in doc["cases"] if c["verdict"] == "error"]
    assert "TypeError: a bug of the suite" in broken["messages"][0]
    [trace] = (tmp_path / "r" / "errors").iterdir()
    assert "Traceback" in trace.read_text() and f"errors/{trace.name}" in broken["messages"][0]
    assert doc["summary"]["unexpected_failures"] == 0 and doc["exit"]["code"] == 4


def test_run_help_documents_the_exit_codes(capsys):
    from mqconform.cli import main

    with pytest.raises(SystemExit):
        main(["run", "--help"])
    text = capsys.readouterr().out
    for code in ("0  conformant", "1  non-conformant", "2  usage", "3  incomplete",
                 "4  internal error"):
        assert code in text


@pytest.mark.parametrize("counts,kw,code", [
    ({v.PASS: 3}, {}, 0),
    ({v.PASS: 3, v.FAIL: 1}, {}, 1),
    ({v.PASS: 3, v.INCONCLUSIVE: 1}, {}, 3),
    ({v.PASS: 3, v.INCONCLUSIVE: 1}, {"allow_inconclusive": True}, 0),
    ({v.NOT_APPLICABLE: 3}, {}, 3),
    ({v.PASS: 3}, {"interrupted": True}, 3),
    ({v.PASS: 3}, {"min_coverage": 10.0, "coverage_percent": 9.5}, 3),
    ({v.PASS: 3, v.FAIL: 1, v.ERROR: 1}, {}, 4),
    ({v.PASS: 3, v.FAIL: 1}, {"interrupted": True}, 1),
])
def test_completion(counts, kw, code):
    results = [v.CaseResult(case=f"{verdict}-{n}", ids=(), target="t", verdict=verdict,
                            unexpected=verdict == v.FAIL)
               for verdict, k in counts.items() for n in range(k)]
    done = v.completion(results, **kw)
    assert done["exit_code"] == code
    assert done["complete"] == (code == 0 or (code == 1 and not kw))
