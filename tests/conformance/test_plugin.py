"""The suite as an installed pytest plugin (entry point ``pytest11``, conformance/plugin.py):
inert in a user's own test runs, the whole suite with ``--mq-target`` from any directory,
selection by requirement ID the pytest way, pytest's own options passed through by
``mqconform run``, and pytest-xdist refused rather than a green run with empty reports."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mqconform.conformance.suite_plugin import selection_marks

PYTEST = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider"]
SECTION = "MS-MQRR/3.1.4.8"  # trace: ignore - a section prefix, as a marker


def _run(argv: list[str], cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          env=env)


def _verdicts(report_dir: Path) -> dict[str, str]:
    data = json.loads((report_dir / "results.json").read_text())
    return {c["case"]: c["verdict"] for c in data["cases"]}


def test_selection_marks_are_the_id_and_every_section_above_it():
    assert selection_marks("MS-MQRR/3.1.4.7/R50") == [  # trace: ignore
        "MS-MQRR/3.1.4.7/R50", "MS-MQRR/3.1.4.7", "MS-MQRR/3.1.4", "MS-MQRR/3.1",  # trace: ignore
        "MS-MQRR/3", "MS-MQRR"]  # trace: ignore


def test_the_plugin_is_inert_without_mq_target(tmp_path):
    """A user's own tests next to mqconform: collected and run as without it; no ``mq``
    fixture, no suite case, no report."""
    (tmp_path / "test_mine.py").write_text(
        "def test_mine():\n    assert 1 + 1 == 2\n\n"
        "def test_wants_mq(mq):\n    pass\n")
    done = _run(PYTEST + ["-q", "-rA"], tmp_path)
    assert "1 passed, 1 error" in done.stdout, done.stdout
    assert "fixture 'mq' not found" in done.stdout
    assert not list(tmp_path.glob("**/results.json"))
    plugins = _run(PYTEST + ["--trace-config", "-q", "--co"], tmp_path).stdout
    assert "mqconform.conformance.plugin" in plugins  # loaded through the entry point
    assert "mqconform-suite" not in plugins
    helptext = _run(PYTEST + ["--help"], tmp_path).stdout
    assert "--mq-target" in helptext and "--mq-report-dir" in helptext


def test_pytest_with_mq_target_runs_the_installed_suite_from_an_empty_directory(tmp_path):
    """No path given: the installed suite is collected, whatever the working directory holds;
    the case names match ``mqconform run``'s."""
    empty = tmp_path / "empty"
    empty.mkdir()
    done = _run(PYTEST + ["--mq-target", "reference", "-q", "-m", SECTION,
                          "--mq-report-dir", str(tmp_path / "p")], empty)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    by_pytest = _verdicts(tmp_path / "p")
    cli = _run([sys.executable, "-m", "mqconform", "run", "--select", SECTION,
                "--report-dir", str(tmp_path / "c")], empty)
    assert cli.returncode == 0, cli.stdout[-3000:]
    by_cli = _verdicts(tmp_path / "c")
    assert by_pytest == by_cli and len(by_cli) >= 5
    assert all(case.startswith("conformance/cases/") for case in by_cli)
    assert set(by_cli.values()) == {"pass"}


def test_k_and_m_select_cases_the_pytest_way(tmp_path):
    done = _run(PYTEST + ["--mq-target", "model", "--co", "-q", "-m", SECTION], tmp_path)
    chosen = [line for line in done.stdout.splitlines() if "::" in line]
    assert chosen and all("test_features.py" in line for line in chosen)
    everything = _run(PYTEST + ["--mq-target", "model", "--co", "-q"], tmp_path)
    every = [line for line in everything.stdout.splitlines() if "::" in line]
    assert len(every) > 400 and len(chosen) < len(every) / 10
    not_it = _run(PYTEST + ["--mq-target", "model", "--co", "-q", "-m",
                            f"MS-MQRR and not {SECTION}"], tmp_path)
    others = [line for line in not_it.stdout.splitlines() if "::" in line]
    assert others and not set(others) & set(chosen)
    by_k = _run(PYTEST + ["--mq-target", "model", "--co", "-q", "-k", "stateful"], tmp_path)
    assert [line for line in by_k.stdout.splitlines() if "::" in line] == [
        line for line in every if "test_stateful.py" in line]


def test_mqconform_run_passes_pytest_options_through(tmp_path):
    out = tmp_path / "r"
    first = _run([sys.executable, "-m", "mqconform", "run", "--target", "model", "--select",
                  SECTION, "--report-dir", str(out), "--", "-x"], tmp_path)
    assert first.returncode == 0, first.stdout[-2000:]
    everything = _verdicts(out)
    assert (out / ".pytest_cache").is_dir()  # --lf and --ff have their cache beside the report
    again = _run([sys.executable, "-m", "mqconform", "run", "--target", "model", "--select",
                  SECTION, "--report-dir", str(out), "--", "--lf", "-k", "cancel"], tmp_path)
    assert again.returncode == 0, again.stdout[-2000:]
    some = _verdicts(out)
    assert some and len(some) < len(everything)
    assert all("cancel" in case.lower() for case in some)


def test_xdist_is_refused_with_exit_2_and_one_line(tmp_path):
    done = _run([sys.executable, "-m", "mqconform", "run", "--target", "model",
                 "--report-dir", str(tmp_path / "r"), "--", "-n", "2"], tmp_path)
    assert done.returncode == 2, done.stdout[-2000:] + done.stderr[-2000:]
    text = (done.stdout + done.stderr).strip()
    assert len(text.splitlines()) == 1 and "xdist" in text, text
    assert not (tmp_path / "r" / "results.json").exists()
    direct = _run(PYTEST + ["--mq-target", "model", "-n", "2",
                            "--mq-report-dir", str(tmp_path / "p")], tmp_path)
    assert direct.returncode == pytest.ExitCode.USAGE_ERROR, direct.stdout + direct.stderr
    assert "pytest-xdist" in direct.stderr and "Traceback" not in direct.stderr
    assert not (tmp_path / "p" / "results.json").exists()


def test_a_run_leaves_nothing_in_the_working_directory_but_its_report_directory(tmp_path):
    """The stateful machines use Hypothesis, which caches in .hypothesis/ of the working
    directory; a suite run with a report directory keeps it there (and pytest's cache)."""
    done = _run([sys.executable, "-m", "mqconform", "run", "--target", "model",
                 "--report-dir", str(tmp_path / "r")], tmp_path)
    assert done.returncode == 0, done.stdout[-2000:]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r"]
    assert (tmp_path / "r" / ".hypothesis").is_dir()


STEP_MODULE = '''
from pytest_bdd import given, then, scenarios, parsers

MINE = {mine!r}
scenarios("one.feature")


@given("a value", target_fixture="value")
def a_value():
    return MINE


@then(parsers.parse("the value is {{expected}}"))
def the_value_is(value, expected, request):
    # the case's own module, whichever module's definition ran
    assert value == request.node.module.MINE, (value, request.node.nodeid)
'''


def test_the_memoized_step_lookup_finds_each_modules_own_definitions(tmp_path):
    """suite_plugin.memoize_step_lookup keeps a step's definitions per scenario module: two
    modules define the same step text each its own way, and each module's scenarios get its
    own definition, however often the step comes (one lookup per text and module)."""
    (tmp_path / "one.feature").write_text(
        "Feature: one\n"
        "  Scenario Outline: a value\n"
        "    Given a value\n"
        "    Then the value is <expected>\n"
        "    Examples:\n"
        "      | expected |\n"
        "      | any      |\n"
        "      | any      |\n")
    for mine in ("first", "second"):
        (tmp_path / f"test_{mine}.py").write_text(STEP_MODULE.format(mine=mine))
    (tmp_path / "conftest.py").write_text(
        "from mqconform.conformance.suite_plugin import memoize_step_lookup\n\n\n"
        "def pytest_configure(config):\n"
        "    memoize_step_lookup()\n\n\n"
        "def pytest_sessionfinish(session):\n"
        "    import importlib\n"
        "    find = importlib.import_module('pytest_bdd.scenario').find_fixturedefs_for_step\n"
        "    assert getattr(find, 'memoized', False)\n")
    out = _run([*PYTEST, "-q", "-p", "no:mqconform"], cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "4 passed" in out.stdout, out.stdout
