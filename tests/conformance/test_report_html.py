"""index.html of a full run, as people open it: under 1.5 MB (the call tables of passing cases
and the rows of closed sections come from index-details.js when asked), a filter that works
offline, stable anchors that open their case, relative paths only, readable at 390 px wide
(screenshots at 1400 and 390 px in headless Chromium), and no artefact of an earlier run."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from mqconform.conformance.report import case_anchor

LIMIT = 1_500_000




def _cases(dom: str) -> dict[str, dict]:
    out = {}
    for m in re.finditer(r'<details id="(case-[^"]+)" class="([^"]*)" data-verdict="([^"]*)"'
                         r' data-section="([^"]*)" data-ids="([^"]*)"([^>]*)>', dom):
        out[m.group(1)] = {"hidden": "hidden" in m.group(2).split(), "verdict": m.group(3),
                           "section": m.group(4), "ids": m.group(5),
                           "open": " open" in m.group(6)}
    return out


def test_the_page_is_small_and_names_no_path_of_this_machine(full_run):
    page = (full_run / "index.html").read_bytes()
    assert len(page) < LIMIT, len(page)
    for name in ("index.html", "index-details.js", "results.json", "junit.xml"):
        text = (full_run / name).read_text()
        for absolute in (str(full_run.parent), str(Path.home()), "/tmp/", "/work/"):
            assert absolute not in text, (name, absolute)


def test_the_filter_shows_only_matching_cases(full_run, headless, tmp_path):
    index = (full_run / "index.html").resolve().as_uri()
    cases = _cases(headless(index + "?q=3.1.4.7", "--dump-dom"))
    assert len(cases) >= 446
    shown = [c for c in cases.values() if not c["hidden"]]
    hidden = [c for c in cases.values() if c["hidden"]]
    assert shown and hidden
    # every case of a 3.1.4.7 requirement shows (others may, where their text says 3.1.4.7);
    # none that is hidden has one
    tagged = [c for c in cases.values() if "3.1.4.7/" in c["ids"] + c["section"] + "/"]
    assert tagged and not any(c["hidden"] for c in tagged)
    assert not any("3.1.4.7/" in c["ids"] + c["section"] + "/" for c in hidden)
    # two words and a verdict: both words, that verdict
    cases = _cases(headless(index + "?q=MS-MQMR+3.1.4.2&verdict=pass",
                         "--dump-dom"))
    shown = [c for c in cases.values() if not c["hidden"]]
    assert shown and all(c["verdict"] == "pass" for c in shown)
    assert all(not c["hidden"] for c in cases.values()
               if c["verdict"] == "pass" and "MS-MQMR/3.1.4.2/" in c["ids"])  # trace: ignore


def test_a_case_anchor_opens_its_case_with_its_calls(full_run, headless, tmp_path):
    results = json.loads((full_run / "results.json").read_text())
    case = next(c for c in results["cases"] if c["verdict"] == "pass" and len(c["calls"]) > 1)
    anchor = case_anchor(case)
    dom = headless((full_run / "index.html").resolve().as_uri() + "#" + anchor,
                "--dump-dom")
    assert _cases(dom)[anchor]["open"]
    assert f'<tr id="{anchor}-call-{len(case["calls"])}"' in dom  # loaded on opening
    assert anchor in (full_run / "index.html").read_text()  # the same name in every run


@pytest.mark.parametrize("width", [1400, 390])
def test_screenshots_at_desktop_and_phone_width(full_run, headless, tmp_path, width):
    shot = tmp_path / f"index-{width}.png"
    headless((full_run / "index.html").resolve().as_uri() + "?q=3.1.4.7",
          f"--window-size={width},1400", "--hide-scrollbars", f"--screenshot={shot}")
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000
    assert int.from_bytes(data[16:20], "big") == width  # the PNG is as wide as the window


def test_a_run_clears_what_an_earlier_run_left(tmp_path):
    report = tmp_path / "r"
    (report / "stateful").mkdir(parents=True)
    (report / "stateful" / "remoteread-9.py").write_text("# an earlier run's\n")
    (report / "errors").mkdir()
    (report / "errors" / "x.txt").write_text("an earlier traceback\n")
    (report / "wire.expected.json").write_text("{}")
    (report / "mine.txt").write_text("the user's own file\n")
    out = subprocess.run([sys.executable, "-m", "mqconform.cli", "run", "--target", "model",
                          "--select", "MS-MQRR/3.1.4.1", "--report-dir", str(report)],  # trace: ignore
                         cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    assert not (report / "stateful").exists() and not (report / "errors").exists()
    assert not (report / "wire.expected.json").exists()  # the model run has no wire
    assert (report / "mine.txt").exists() and (report / "results.json").exists()


def test_the_catalog_report_has_the_same_filter(tmp_path, headless):
    out = subprocess.run([sys.executable, "-m", "mqconform.cli", "spec", "report", "--out",
                          str(tmp_path / "c")], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    dom = headless((tmp_path / "c" / "index.html").resolve().as_uri()
                + "?q=3.1.4.7&testability=wire", "--dump-dom")
    rows = re.findall(r'<tr id="([^"]+)" class="filterable( hidden)?" '
                      r'data-testability="(\w+)"', dom)
    shown = [(rid, t) for rid, hidden, t in rows if not hidden]
    assert len(rows) > 1900 and shown
    assert all(t == "wire" for _, t in shown)
    assert {rid for rid, t in shown} >= {rid for rid, _, t in rows
                                         if rid.startswith("MS-MQRR/3.1.4.7/") and t == "wire"}  # trace: ignore
