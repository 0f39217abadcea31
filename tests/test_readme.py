"""The README states exactly two commands for a fresh machine, and .ci/run runs the second."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _fresh_machine_commands() -> list[str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    part = readme.split("## On a fresh machine", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sh\n(.*?)\n```", part, re.S)


def test_readme_has_exactly_two_one_line_commands():
    commands = _fresh_machine_commands()
    assert len(commands) == 2
    assert all("\n" not in c for c in commands)
    assert "mqconform" in commands[0] and "pytest" in commands[1]


def test_ci_runs_the_readme_test_command():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert _fresh_machine_commands()[1] in ci.splitlines()
