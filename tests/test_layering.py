"""Dependencies point one way (ARCHITECTURE.md): spec <- model <- wire <- server, with
conformance and captures on top and the mqconform command above all. A package importing a
package it must not is a failed test, found by reading the import statements."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PROJECT = ("spec", "model", "wire", "server", "conformance", "captures", "mqconform")
ALLOWED = {
    "spec": set(),
    "model": {"spec"},
    "wire": {"spec", "model"},
    "server": {"spec", "model", "wire"},
    "captures": {"spec", "model", "wire"},
    "conformance": {"spec", "model", "wire", "server", "captures"},
    "mqconform": {"spec", "model", "wire", "server", "captures", "conformance"},
}
#: modules allowed more than their package: the golden pcap builder runs the suite's scenarios
#: on the model (conformance) and answers binds as the reference runtime does (server.rpc); the
#: synthetic corpus runs reference servers (server.main, with server.faults armed) to record
EXCEPTIONS = {"captures/golden.py": {"conformance", "server"},
              "captures/synth.py": {"server"}}
#: the model is sans-IO: no sockets, threads, clocks, files or randomness of its own
MODEL_FORBIDDEN = {"socket", "threading", "asyncio", "time", "random", "os", "subprocess",
                   "selectors", "io", "pathlib"}


def _layer(module: str, names: tuple[str, ...] = ()) -> set[str]:
    """The layer an imported name belongs to: ``mqconform.model.adm`` -> model, ``mqconform``
    itself (the command) -> mqconform, ``from mqconform import model`` -> model; a name outside
    the project -> its own top-level name."""
    parts = module.split(".")
    if parts[0] != "mqconform":
        return {parts[0]}
    if len(parts) > 1:
        return {parts[1] if parts[1] in PROJECT else "mqconform"}
    return {n if n in PROJECT else "mqconform" for n in names} or {"mqconform"}


def imports_of(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                found |= _layer(a.name)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found |= _layer(node.module, tuple(a.name for a in node.names))
    return found


def _files(package: str) -> list[Path]:
    return sorted((ROOT / package).rglob("*.py")) if (ROOT / package).is_dir() else []


@pytest.mark.parametrize("package", PROJECT)
def test_package_imports_only_the_layers_below_it(package):
    for path in _files(package):
        extra = EXCEPTIONS.get(path.relative_to(ROOT).as_posix(), set())
        wrong = (imports_of(path) & set(PROJECT)) - ALLOWED[package] - {package} - extra
        assert not wrong, f"{path.relative_to(ROOT)} imports {sorted(wrong)}"


def test_model_does_no_io():
    for path in _files("model"):
        wrong = imports_of(path) & MODEL_FORBIDDEN
        assert not wrong, f"{path.relative_to(ROOT)} imports {sorted(wrong)}"


def test_the_layering_check_sees_the_packages_that_exist():
    assert _files("spec") and _files("mqconform")


def test_a_wrong_import_would_be_found(tmp_path):
    bad = tmp_path / "x.py"
    bad.write_text("from mqconform.server import reference\nimport mqconform.wire.ndr\n"
                   "from mqconform import captures\nfrom . import y\nimport yaml\n")
    assert imports_of(bad) == {"server", "wire", "captures", "yaml"}


def test_only_the_namespace_is_imported():
    """Every project import goes through ``mqconform.``: a bare ``import model`` would pick up
    whatever ``model`` the user's environment or working directory holds."""
    for package in PROJECT + ("tests", "bench"):
        for path in sorted((ROOT / package).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
            for node in ast.walk(tree):
                names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                         [node.module] if isinstance(node, ast.ImportFrom) and node.level == 0
                         and node.module else [])
                bare = [n for n in names if n.split(".")[0] in PROJECT[:-1]]
                assert not bare, f"{path.relative_to(ROOT)}:{node.lineno} imports {bare}"
