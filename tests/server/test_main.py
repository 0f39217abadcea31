"""``mqconform serve`` as a process (server/main.py, mqconform/cli.py): the cyclic collector
that examines only what came since its last full pass, and the restart with glibc's malloc."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import weakref
from pathlib import Path

import pytest

from mqconform import cli
from mqconform.server.main import QuietCollector
from mqconform.server.rpc import _malloc_trim


class Node:
    def __init__(self) -> None:
        self.other: Node | None = None


def test_survivors_of_a_full_collection_are_frozen_and_their_cycles_collected_at_a_thaw():
    collector = QuietCollector(every=3600.0).install()
    try:
        frozen = gc.get_freeze_count()
        assert frozen > 0  # the start-up's objects first
        a, b = Node(), Node()
        a.other, b.other = b, a  # a cycle, alive for now
        gone = weakref.ref(a)
        gc.collect()  # a full collection: its survivors (the cycle too) are frozen
        assert gc.get_freeze_count() > frozen
        del a, b  # garbage now, but among the frozen objects
        gc.collect()
        assert gone() is not None  # a full pass no longer examines them
        collector.tick()  # `every` has not passed
        assert gone() is not None
        collector.thaw()
        assert gone() is None  # collected, and the survivors frozen again
        assert gc.get_freeze_count() > 0
    finally:
        collector.close()
    assert gc.get_freeze_count() == 0
    assert collector._after not in gc.callbacks


def test_survivors_of_a_collection_of_generation_1_are_frozen_too():
    collector = QuietCollector(every=3600.0).install()
    try:
        frozen = gc.get_freeze_count()
        kept = [Node() for _ in range(1000)]
        gc.collect(1)
        assert gc.get_freeze_count() >= frozen + len(kept)
        assert not gc.get_objects(2)  # nothing left for a full collection to examine
        gc.collect(0)
        assert gc.get_freeze_count() >= frozen + len(kept)
    finally:
        collector.close()


def _serve_environment(tmp_path: Path, **env: str) -> dict[str, str]:
    """The environment of a ``mqconform serve`` started as a command, once it serves."""
    environ = {k: v for k, v in os.environ.items()
               if k not in ("PYTHONMALLOC", "GLIBC_TUNABLES")} | env
    proc = subprocess.Popen([sys.executable, "-m", "mqconform", "serve", "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=environ, cwd=tmp_path)
    try:
        line = proc.stdout.readline()
        assert "ncacn_ip_tcp:" in line, line + proc.stderr.read()
        raw = Path(f"/proc/{proc.pid}/environ").read_bytes()
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    return dict(item.split("=", 1) for item in raw.decode().split("\0") if "=" in item)


@pytest.mark.skipif(not sys.platform.startswith("linux") or _malloc_trim() is None,
                    reason="the restart with glibc's malloc is for Linux with glibc only")
def test_serve_as_a_command_runs_with_glibc_malloc_unless_pythonmalloc_is_set(tmp_path):
    assert _serve_environment(tmp_path).get("PYTHONMALLOC") == "malloc"
    assert _serve_environment(tmp_path, PYTHONMALLOC="pymalloc")["PYTHONMALLOC"] == "pymalloc"


class _Exec(Exception):
    pass


def _restart_environment(monkeypatch, **env: str) -> dict[str, str]:
    """The environment ``mqconform serve`` would start again with (its exec caught: glibc
    rewrites GLIBC_TUNABLES in the new process's own copy, so /proc shows less)."""
    for name in ("PYTHONMALLOC", "GLIBC_TUNABLES"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)

    def execv(path, argv):
        raise _Exec(dict(os.environ))

    monkeypatch.setattr(os, "execv", execv)
    try:
        cli._with_the_system_allocator()
    except _Exec as exc:
        return exc.args[0]
    return {}  # no restart


@pytest.mark.skipif(not sys.platform.startswith("linux") or _malloc_trim() is None,
                    reason="the restart with glibc's malloc is for Linux with glibc only")
def test_serve_restarts_with_glibc_malloc_tuned_keeping_what_the_user_set(monkeypatch):
    assert sorted(_restart_environment(monkeypatch)["GLIBC_TUNABLES"].split(":")) == [
        "glibc.malloc.arena_max=1", "glibc.malloc.tcache_count=0"]
    mine = _restart_environment(monkeypatch, GLIBC_TUNABLES="glibc.malloc.arena_max=4")
    assert sorted(mine["GLIBC_TUNABLES"].split(":")) == [
        "glibc.malloc.arena_max=4", "glibc.malloc.tcache_count=0"]
    assert _restart_environment(monkeypatch, PYTHONMALLOC="malloc") == {}
