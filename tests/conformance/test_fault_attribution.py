"""Per-check attribution: against a reference with one seeded fault (server/faults.py), the
requirements the suite reports failed are the fault's own, and the fault's is among them. A
failed check names the requirement that demands it (the rule the model gives for the answer,
the rule a field's comparison cites, or the step's own); the case's other tags are not failed."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from mqconform.server.faults import FAULTS, Faults
from mqconform.server.main import start


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_a_seeded_fault_fails_its_own_requirement_and_no_other(tmp_path, fault):
    declared = FAULTS[fault]
    section = declared.rsplit("/", 1)[0]
    server = start(port=0, control_port=0,
                   control_unauthenticated=True, faults=Faults(frozenset({fault}), rate=1.0))
    try:
        host, port = server.rpc.address
        chost, cport = server.control.address
        target = tmp_path / "target.yaml"
        target.write_text(f'endpoint: "ncacn_ip_tcp:{host}[{port}]"\nname: faulty\n'
                          f"sut_control: {{kind: reference, url: 'http://{chost}:{cport}'}}\n")
        out = subprocess.run([sys.executable, "-m", "mqconform.cli", "run", "--target",
                              str(target), "--report-dir", str(tmp_path / "r"),
                              "--select", section], cwd=tmp_path, capture_output=True,
                             text=True, timeout=600)
    finally:
        server.stop()
    assert out.returncode == 1, out.stdout[-2000:] + out.stderr[-2000:]
    results = json.loads((tmp_path / "r" / "results.json").read_text())
    failing = [c for c in results["cases"] if c["verdict"] == "fail"]
    failed = {i for c in failing for i in c["failed_ids"]}
    assert failed == {declared}, {c["case"]: (c["failed_ids"], c["messages"][:1])
                                  for c in failing}
    # the requirements table fails the fault's requirement only; the failing cases' other
    # tags read inconclusive (not shown kept), not failed
    red = {rid for rid, e in results["requirements"].items() if e["verdict"] == "fail"}
    assert red == {declared}
    # every failure names its step, its requirement and what the requirement says, what the
    # documents allow and what the target did
    for case in failing:
        assert case["failures"], case["case"]
        for f in case["failures"]:
            assert f["step"]["path"] and f["step"]["line"] > 0 and f["step"]["text"], f
            assert [r["id"] for r in f["requirements"]] == [declared]
            assert all(r["text"] for r in f["requirements"]), f
            assert f["expected"] and f["observed"], f
    assert "at " in out.stdout and declared in out.stdout
