"""The documents' choices as a switch: the whole suite against the reference serving another
allowed value wherever the documents leave the server free (``--target reference:alternate``,
model/choices.py ALTERNATE, spec/choices.yaml) passes with no unexpected failure: no case
demands what the documents leave open."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from mqconform.conformance.targetfile import TargetFileError, load, parse


def test_the_suite_passes_against_every_alternate_choice(tmp_path):
    out = subprocess.run([sys.executable, "-m", "mqconform.cli", "run", "--target",
                          "reference:alternate", "--report-dir", str(tmp_path / "r")],
                         cwd=tmp_path, capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    results = json.loads((tmp_path / "r" / "results.json").read_text())
    summary = results["summary"]
    assert summary["unexpected_failures"] == 0 and summary["fail"] == 0, summary
    assert summary["pass"] >= 400 and summary["inconclusive"] == 0, summary
    assert results["target"]["name"] == "reference:alternate"
    # the server did choose otherwise: TIDY kept the messages, and the case says which
    # reading it saw
    said = [m for c in results["cases"] for m in c.get("messages", [])
            if m.startswith("errata tidy-purges-queues")]
    assert said and all("every message kept" in m for m in said), said


def test_reference_alternate_names_the_embedded_server_with_its_choices():
    spec = load("reference:alternate")
    assert (spec.endpoint, spec.choices, spec.name) == ("reference", "alternate",
                                                        "reference:alternate")
    assert load("reference").choices == "reference"


@pytest.mark.parametrize("doc", [
    {"endpoint": "ncacn_ip_tcp:h[1]", "choices": "alternate"},
    {"endpoint": "reference", "choices": "sideways"},
])
def test_choices_only_for_the_embedded_server_and_only_known_ones(doc):
    with pytest.raises(TargetFileError) as err:
        parse(doc, "t.yaml")
    assert "t.yaml: choices" in str(err.value)
