"""What ``mqconform captures validate`` tells its users, on the terminal and in index.html: each
error's reason (capture, frame, message), calls checked of calls seen, context handles whole,
the requirements' whole sentences, filters by actor, requirement, server, lifetime,
expected/unexpected and error kind that hide and show rows (headless Chromium at 390 and 1400
px), and a run where nothing could be checked red, never a green "No violation"."""

from __future__ import annotations

import io
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlencode

import pytest

from mqconform.captures import pipeline
from mqconform.conformance import faultcorpus

pytestmark = pytest.mark.skipif(shutil.which("java") is None, reason="Spark needs Java 17")

GOLDEN = Path(__file__).resolve().parents[2] / "captures" / "golden"
#: a conformance run's capture whose sidecar lists one deliberate client departure (a closed
#: handle used again): expected; the fault corpus's edited answers: unexpected
EXPECTED = GOLDEN / "scenarios" / "MS-MQRR" / "3.1.4.13" / "a_closed_queue_handle_is_refused"
FAULTS = ("open-handle-already-open", "closed-handle-ok-R_CloseQueue")
HANDLE = re.compile(r"\b[0-9a-f]{40}\b")
ANSI = re.compile(r"\x1b\[")


def _validate(inputs: list[Path], out: Path) -> subprocess.CompletedProcess:
    """The command as a CI job runs it: stdout a pipe, not a terminal."""
    return subprocess.run([sys.executable, "-m", "mqconform.cli", "captures", "validate",
                           *map(str, inputs), "--out", str(out), "--master", "local[1]"],
                          capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def mixed(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess]:
    """Five captures: two with a server answer edited (unexpected violations naming handles),
    one of a conformance run with its sidecar (an expected client violation), one cut short
    and one that is no capture at all."""
    base = tmp_path_factory.mktemp("report")
    labels = faultcorpus.build(base / "faults")
    corpus = base / "mixed"
    corpus.mkdir()
    for kind in FAULTS:
        [first] = [f for f in labels["faults"] if f["kind"] == kind][:1]
        shutil.copy(first["capture"], corpus / f"{kind}.pcap")
    shutil.copy(EXPECTED.with_suffix(".pcap"), corpus / "run.pcap")
    sidecar = json.loads(EXPECTED.with_suffix(".expected.json").read_text())
    sidecar["capture"] = "run.pcap"
    (corpus / "run.expected.json").write_text(json.dumps(sidecar))
    data = (corpus / "run.pcap").read_bytes()
    (corpus / "cut.pcap").write_bytes(data[:len(data) // 2 + 3])
    (corpus / "foreign.pcap").write_bytes(b"<html>not a capture</html>\n" * 20)
    done = _validate([corpus], base / "v")
    return base / "v", done


@pytest.fixture(scope="module")
def unreadable(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess]:
    base = tmp_path_factory.mktemp("unreadable")
    corpus = base / "bad"
    corpus.mkdir()
    (corpus / "foreign.pcap").write_bytes(b"<html>not a capture</html>\n" * 20)
    (corpus / "empty.pcapng").write_bytes(b"")
    done = _validate([corpus], base / "v")
    return base / "v", done




def _rows(dom: str, kind: str) -> list[dict]:
    """The rows of one list ("violation" or "error-row") with their data- attributes, hidden
    or not, and their text."""
    out = []
    for m in re.finditer(r'<tr class="filterable ' + kind + r'([^"]*)"([^>]*)>(.*?)</tr>', dom,
                         re.S):
        attrs = dict(re.findall(r'data-(\w+)="([^"]*)"', m.group(2)))
        out.append({**attrs, "hidden": "hidden" in m.group(1).split(),
                    "text": re.sub(r"<[^>]+>", "", m.group(3))})
    return out


def test_the_terminal_says_each_errors_reason_and_the_calls_checked(mixed):
    out, done = mixed
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-2000:]
    text = done.stdout
    assert not ANSI.search(text)  # a log, not a terminal: no escape codes, no bar redrawn
    report = json.loads((out / "report.json").read_text())
    totals = report["totals"]
    assert totals["seen"] > 0
    assert f"calls checked: {totals['checked']} of {totals['seen']} RemoteRead/qmmgmt" in text
    assert "files: 5/5 done" in text  # the progress, as plain lines
    # every kind with its count, and its errors' reasons with capture and frame
    for kind, n in report["error_kinds"].items():
        assert f"error {kind}: {n}" in text
    assert re.search(r"foreign\.pcap: magic 0x[0-9A-F]+: not a pcap or pcapng file", text)
    assert re.search(r"cut\.pcap frame \d+: the record is cut short", text)
    for requirement in report["requirements"]:
        assert f"  {requirement['requirement']}: {requirement['violations']} (" in text


def test_the_report_lists_violations_and_errors_with_handles_whole(mixed):
    out, _ = mixed
    report = json.loads((out / "report.json").read_text())
    assert report["verdict"] == "violations" and report["failed"] is None
    assert len(report["violations"]) == report["totals"]["violations"] >= 4
    assert len(report["errors"]) == report["totals"]["errors"] >= 2
    assert all(e["message"] for e in report["errors"])
    handles = [v for v in report["violations"] if "handle" in v["explanation"]
               or "pphContext came back" in v["explanation"]]
    assert handles and all(HANDLE.search(v["explanation"]) for v in handles)
    assert not any("..." in v["explanation"] for v in report["violations"])
    # a requirement's whole sentence: a step with the sentence that leads its list
    texts = {q["requirement"]: q["text"] for q in report["requirements"]}
    assert texts["MS-MQRR/3.1.4.3/R10"].startswith(  # trace: ignore
        "When processing this call, the server MUST:")
    marks = {(Path(v["capture"]).name, v["requirement"]): v["expected"]
             for v in report["violations"]}
    assert marks[("run.pcap", "MS-MQRR/3.1.4.13/R4")] is True  # trace: ignore
    assert not any(e for (capture, _), e in marks.items() if capture != "run.pcap")


@pytest.mark.parametrize("width", [390, 1400])
def test_the_filters_hide_and_show_rows(mixed, headless, tmp_path, width):
    out, _ = mixed
    report = json.loads((out / "report.json").read_text())
    index = (out / "index.html").resolve().as_uri()
    size = f"--window-size={width},2000"

    def rows(which: str, **query: str) -> list[dict]:
        url = index + ("?" + urlencode(query) if query else "")
        return _rows(headless(url, size, "--dump-dom"), which)

    everything = rows("violation")
    assert len(everything) == len(report["violations"]) and not any(
        r["hidden"] for r in everything)
    # the DOM has each violation's handle whole and each error's reason
    whole = {v["explanation"] for v in report["violations"] if HANDLE.search(v["explanation"])}
    assert whole and all(any(w in r["text"] for r in everything) for w in whole)
    errors = rows("error-row")
    assert len(errors) == len(report["errors"])
    assert any("not a pcap or pcapng file" in r["text"] for r in errors)
    assert any("the record is cut short" in r["text"] for r in errors)
    for name, value in (("actor", "client"), ("actor", "server"),
                        ("requirement", everything[0]["requirement"]),
                        ("server", everything[0]["server"]),
                        ("lifetime", everything[-1]["lifetime"]),
                        ("expected", "expected"), ("expected", "unexpected")):
        got = rows("violation", **{name: value})
        shown = [r for r in got if not r["hidden"]]
        hidden = [r for r in got if r["hidden"]]
        assert shown, (name, value)
        assert all(r[name] == value for r in shown), (name, value)
        assert all(r[name] != value for r in hidden), (name, value)
        if name in ("actor", "expected", "lifetime"):
            assert hidden, (name, value)  # this corpus has both sides of each
    # an error kind: its errors only, and no violation
    dom = headless(index + "?kind=truncated", size, "--dump-dom")
    got = _rows(dom, "error-row")
    assert [r["hidden"] for r in got if r["kind"] == "truncated"] == [False]
    assert all(r["hidden"] for r in got if r["kind"] != "truncated")
    assert all(r["hidden"] for r in _rows(dom, "violation"))
    # words typed: every word in the row
    got = rows("violation", q="R_CloseQueue pphContext")
    assert [r for r in got if not r["hidden"]] and all(
        "pphContext" in r["text"] for r in got if not r["hidden"])


@pytest.mark.parametrize("width", [390, 1400])
def test_screenshots_at_phone_and_desktop_width(mixed, unreadable, headless, tmp_path, width):
    for out in (mixed[0], unreadable[0]):
        shot = tmp_path / f"{out.parent.name}-{width}.png"
        headless((out / "index.html").resolve().as_uri(),
              f"--window-size={width},1600", "--hide-scrollbars", f"--screenshot={shot}")
        data = shot.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000
        assert int.from_bytes(data[16:20], "big") == width


def test_a_run_that_read_nothing_is_red_and_says_why(unreadable, headless, tmp_path):
    out, done = unreadable
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-2000:]
    assert "nothing was checked: none of the 2 capture file(s) could be read" in done.stdout
    assert "error format: 2" in done.stdout and "0 bytes: not a pcap or pcapng" in done.stdout
    report = json.loads((out / "report.json").read_text())
    assert report["verdict"] == "failed" and "could be read" in report["failed"]
    dom = headless((out / "index.html").resolve().as_uri(),
                "--window-size=390,2000", "--dump-dom")
    assert re.search(r'<p id="verdict" class="verdict failed">Nothing was checked', dom)
    assert '<p class="ok" id="no-violation">' not in dom and "No violation:" not in dom
    assert '<span class="ok">counts reconcile</span>' not in dom
    assert "empty.pcapng" in dom and "0 bytes: not a pcap or pcapng file" in dom


@pytest.mark.parametrize("files,totals,why", [
    ([{"frames": 0, "errors": 1}, {"frames": 0, "errors": 2}],
     {"frames": 0, "seen": 0, "checked": 0, "violations": 0, "errors": 3},
     "none of the 2 capture file(s) could be read"),
    ([{"frames": 0, "errors": 0}], {"frames": 0, "seen": 0, "checked": 0, "violations": 0,
                                    "errors": 0}, "no frame was read"),
    ([{"frames": 40, "errors": 6}], {"frames": 40, "seen": 6, "checked": 0, "violations": 0,
                                     "errors": 6}, "none of the 6 RemoteRead/qmmgmt"),
])
def test_nothing_checked_is_a_failed_run(files, totals, why):
    verdict, reason = pipeline._verdict(files, totals)
    assert verdict == "failed" and reason.startswith(why)


def test_the_verdicts_of_runs_that_checked_something():
    ok = {"frames": 40, "seen": 6, "checked": 5, "violations": 0, "errors": 0}
    assert pipeline._verdict([{"frames": 40, "errors": 0}], ok) == ("clean", None)
    assert pipeline._verdict([{"frames": 40, "errors": 1}], ok | {"errors": 1})[0] == "errors"
    assert pipeline._verdict([{"frames": 40, "errors": 0}], ok | {"violations": 2})[0] \
        == "violations"


def test_progress_in_a_log_is_a_line_when_the_count_moves():
    from rich.console import Console

    from mqconform.captures_cmd import Progress

    buffer = io.StringIO()
    clock = iter([0.0, 1.0, 2.0, 7.0, 8.0]).__next__
    with Progress(Console(file=buffer, force_terminal=False), "files", total=4) as bar:
        bar._clock = clock
        bar.update(0)  # said
        bar.update(1)  # within 5 s: not said
        bar.update(1)
        bar.update(2)  # said
        bar.update(4)  # the end: said
    assert buffer.getvalue().splitlines() == ["files: 0/4 done", "files: 2/4 done",
                                              "files: 4/4 done"]
