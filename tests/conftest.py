"""Shared fixtures: the repository root and a runner for the mqconform command."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import settings

ROOT = Path(__file__).resolve().parent.parent

# CI replays the same examples every run (a gate must not change its mind between runs);
# developers' runs explore new ones, and a failure found there is a bug to fix, pinned by the
# example database and, where it teaches something, by a plain test.
settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI") == "true":
    settings.load_profile("ci")


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


@pytest.fixture
def headless(tmp_path):
    """Open a URL in headless Chromium (.ci/run installs it) with ARGS (--dump-dom,
    --screenshot=..., --window-size=...); returns what it printed."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if not found:
        pytest.fail("chromium is needed (.ci/run installs it): apt-get install chromium")

    def open_(url: str, *args: str) -> str:
        done = subprocess.run(
            [found, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--disable-background-networking", "--disable-component-update",
             "--disable-sync", f"--user-data-dir={tmp_path / 'chromium'}",
             "--virtual-time-budget=10000", *args, url],
            capture_output=True, text=True, timeout=180)
        assert done.returncode == 0, done.stderr[-2000:]
        return done.stdout

    return open_
