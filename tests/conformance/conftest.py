"""Runs several test files read: the whole suite against the embedded reference, twice."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def two_runs(tmp_path_factory) -> tuple[Path, Path]:
    """``mqconform run`` of the whole suite against the embedded reference, twice, as a CI job
    runs it (report directories a and b)."""
    tmp = tmp_path_factory.mktemp("full-runs")
    for name in ("a", "b"):
        out = subprocess.run([sys.executable, "-m", "mqconform.cli", "run", "--report-dir",
                              name], cwd=tmp, capture_output=True, text=True, timeout=900)
        assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    return tmp / "a", tmp / "b"


@pytest.fixture(scope="session")
def full_run(two_runs) -> Path:
    return two_runs[0]
