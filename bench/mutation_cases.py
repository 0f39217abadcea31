"""pytest plugin of bench/mutation.py, loaded into the suite's process with ``-p
mutation_cases`` (bench/ on PYTHONPATH); inert unless one of its variables is set:

- ``MQC_MUTATION_TIMES=PATH``: when the session ends, write {node ID: [start, end]} to PATH,
  the time.monotonic() seconds around each case's setup, call and teardown. The pristine run
  writes it; with the server's own trace of when it ran which line (on the same clock: Linux's
  CLOCK_MONOTONIC is one clock for every process), it tells which cases ran a line.
- ``MQC_MUTATION_CASES=PATH``: a JSON list of node IDs; only those cases run, in that order
  (the others are deselected, as ``--deselect`` does). A mutant's run is first narrowed to the
  cases during which the pristine server ran its lines, shortest first.
"""

from __future__ import annotations

import json
import os
import time

import pytest

_times: dict[str, list[float]] = {}


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


def pytest_sessionfinish(session: pytest.Session) -> None:
    path = os.environ.get("MQC_MUTATION_TIMES")
    if path:
        with open(path, "w", encoding="utf-8") as f:
            json.dump(_times, f)
