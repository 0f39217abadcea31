"""pytest plugin of bench/mutation.py, loaded into the suite's process with ``-p
mutation_cases`` (bench/ on PYTHONPATH); inert unless one of its variables is set:

- ``MQC_MUTATION_TIMES=PATH``: when the session ends, write {node ID: [start, end]} to PATH,
  the time.monotonic() seconds around each case's setup, call and teardown. The pristine run
  writes it; with the server's own trace of when it ran which line (on the same clock: Linux's
  CLOCK_MONOTONIC is one clock for every process), it tells which cases ran a line.
- ``MQC_MUTATION_CASES=PATH``: a JSON list of node IDs; only those cases run, in that order
  (the others are deselected, as ``--deselect`` does). A mutant's run is first narrowed to the
  cases during which the pristine server ran its lines, shortest first.
- ``MQC_MUTATION_PRINTS=PATH``: when collection ends, write {node ID: fingerprint} to PATH for
  the cases that will run: what makes the case, but the suite's code (a scenario's feature
  file, name, tags and steps as rendered for its example; for a case written in Python, its
  node ID alone). Two snapshots whose trees differ only in their feature files run a case of
  the same fingerprint alike, which lets a survivor's verdict stand when no case that ran its
  lines changed (bench/mutation.py, ``cases_digest``).
- ``MQC_MUTATION_UNSETTLED=PATH``: a JSON list of the cases the pristine run left unsettled
  (verdict inconclusive, error or fail). The run stops after the first other case that ends
  so, as ``-x`` stops at the first failure: bench/mutation.py counts such a case against the
  mutant, and the cases after it cannot change that.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import time
from typing import Any

import pytest

_times: dict[str, list[float]] = {}
_unsettled: set[str] | None = None

#: the verdicts that leave a case unsettled (bench/mutation.py's UNSETTLED)
UNSETTLED = ("inconclusive", "error", "fail")


def pytest_configure(config: pytest.Config) -> None:
    global _unsettled
    path = os.environ.get("MQC_MUTATION_UNSETTLED")
    if path:
        with open(path, encoding="utf-8") as f:
            _unsettled = set(json.load(f))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    path = os.environ.get("MQC_MUTATION_CASES")
    if not path:
        return
    with open(path, encoding="utf-8") as f:
        wanted = json.load(f)
    rank = {nodeid: i for i, nodeid in enumerate(wanted)}
    keep = sorted((item for item in items if item.nodeid in rank),
                  key=lambda item: rank[item.nodeid])
    dropped = [item for item in items if item.nodeid not in rank]
    missing = set(rank) - {item.nodeid for item in keep}
    if missing:  # a case the pristine run had is gone: the selection cannot be trusted
        raise pytest.UsageError(f"MQC_MUTATION_CASES: {len(missing)} cases not collected, e.g. "
                                f"{sorted(missing)[0]}")
    if dropped:
        config.hook.pytest_deselected(items=dropped)
    items[:] = keep


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None):
    start = time.monotonic()
    yield
    _times[item.nodeid] = [start, time.monotonic()]
    if _unsettled is not None and not item.session.shouldstop:
        result = newly_unsettled(item)
        if result is not None:
            item.session.shouldstop = (f"{result.case}: {result.verdict}, which the pristine "
                                       f"run settles")


def newly_unsettled(item: pytest.Item) -> Any:
    """The case's result when it ended unsettled and the pristine run settled it, else None."""
    plugin = importlib.import_module("mqconform.conformance.suite_plugin")
    state = item.config.stash.get(plugin.STATE, None)
    if not state or not state["results"]:
        return None
    result = state["results"][-1]
    if result.case != plugin.case_id(item):
        return None  # the case left no result (deselected, not run)
    if result.verdict in UNSETTLED and result.case not in _unsettled:
        return result
    return None


def scenario_parts(template: Any, example: dict[str, Any]) -> list:
    """What a pytest-bdd scenario runs, as data: its feature file, the scenario's name and tags
    (the feature's and rule's too), and each step (background steps first) as rendered for the
    example (an outline's row). Line numbers are left out: a scenario that only moved in its
    file is the same case."""
    scenario = template.render(example)
    rule_tags = set() if template.rule is None else set(template.rule.tags)
    steps = [[step.type, step.keyword, step.name,
              step.datatable.raw() if step.datatable is not None else None, step.docstring]
             for step in scenario.steps]
    return [template.feature.rel_filename, scenario.name,
            sorted(set(template.tags) | set(template.feature.tags) | rule_tags),
            scenario.description, steps]


def case_fingerprint(item: pytest.Item) -> str:
    """The fingerprint of one case (the module doc, ``MQC_MUTATION_PRINTS``)."""
    registry = importlib.import_module("pytest_bdd.scenario").scenario_wrapper_template_registry
    digest = hashlib.sha256(item.nodeid.encode())
    template = registry.get(getattr(item, "obj", None))
    if template is not None:
        callspec = getattr(item, "callspec", None)
        example = callspec.params.get("_pytest_bdd_example", {}) if callspec else {}
        digest.update(json.dumps(scenario_parts(template, example), default=str).encode())
    return digest.hexdigest()


def pytest_collection_finish(session: pytest.Session) -> None:
    path = os.environ.get("MQC_MUTATION_PRINTS")
    if path:
        with open(path, "w", encoding="utf-8") as f:
            json.dump({item.nodeid: case_fingerprint(item) for item in session.items}, f)


def pytest_sessionfinish(session: pytest.Session) -> None:
    path = os.environ.get("MQC_MUTATION_TIMES")
    if path:
        with open(path, "w", encoding="utf-8") as f:
            json.dump(_times, f)
