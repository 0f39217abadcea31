"""Shared fixtures: the repository root and a runner for the mqconform command."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


@pytest.fixture(scope="session")
def mqconform():
    """Run ``mqconform ARGS`` as a user would (a new process); returns CompletedProcess."""

    def run(*args: str, check: bool = False) -> subprocess.CompletedProcess:
        proc = subprocess.run([sys.executable, "-m", "mqconform", *args], cwd=ROOT,
                              capture_output=True, text=True, timeout=300)
        if check and proc.returncode != 0:
            raise AssertionError(f"mqconform {' '.join(args)} exited {proc.returncode}:\n"
                                 f"{proc.stderr}")
        return proc

    return run
