"""Dependencies point one way (ARCHITECTURE.md): spec <- model <- wire <- server, with
conformance and captures on top and the mqconform command above all. A package importing a
package it must not is a failed test, found by reading the import statements."""

from __future__ import annotations

import ast
import sys
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
#: modules allowed more than their package: none (the golden and synthetic corpus builders
#: live in conformance/, which may import server/ to start references)
EXCEPTIONS: dict[str, set[str]] = {}
#: the server modules conformance/ may import, and why: it starts references (main), drives
#: one in process (control) or arms faults in those it starts (faults).
CONFORMANCE_MAY_IMPORT_FROM_SERVER = {
    "mqconform.server.main": "starts a reference server",
    "mqconform.server.control": "drives a reference (or the in-process model) through its "
                                "control API",
    "mqconform.server.faults": "arms seeded faults in references the synthetic corpus starts",
}
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


def _modules(path: Path) -> set[str]:
    """Every module an import statement in ``path`` names (``from a import b`` names a.b too,
    since b may be a module)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module)
            found |= {f"{node.module}.{a.name}" for a in node.names}
    return found


def test_the_model_imports_the_standard_library_and_itself_only():
    for path in _files("model"):
        outside = {m for m in _modules(path) if m.split(".")[0] not in sys.stdlib_module_names
                   and m.split(".")[0] != "__future__" and not m.startswith("mqconform.model")}
        assert not outside, f"{path.relative_to(ROOT)} imports {sorted(outside)}"


def test_wire_knows_bytes_and_opens_no_socket():
    for path in _files("wire"):
        io = {m for m in _modules(path) if m.split(".")[0] in
              ("socket", "threading", "selectors", "asyncio", "ssl", "http", "urllib")}
        assert not io, f"{path.relative_to(ROOT)} imports {sorted(io)}"


def test_captures_imports_neither_conformance_nor_server():
    for path in _files("captures"):
        wrong = {m for m in _modules(path)
                 if m.startswith(("mqconform.conformance", "mqconform.server"))}
        assert not wrong, f"{path.relative_to(ROOT)} imports {sorted(wrong)}"


def test_conformance_imports_server_only_to_start_a_reference():
    for path in _files("conformance"):
        wrong = {m for m in _modules(path) if m.startswith("mqconform.server")
                 and not any(m == allowed or m.startswith(allowed + ".")
                             for allowed in CONFORMANCE_MAY_IMPORT_FROM_SERVER)
                 and m != "mqconform.server"}
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


def test_dcerpc_constants_have_one_home():
    """PDU types, pfc_flags and the NDR / NDR64 transfer syntax identities are defined in
    wire/dcerpc.py and taken from there by everyone else (the association, the capture
    decoder, the dissector, the NDR engines, the suite)."""
    identities = ("8a885d04-1ceb-11c9-9fe8-08002b104860", "71710533-beba-4937-8319-b5dbef9ccc36")
    names = {"REQUEST", "RESPONSE", "FAULT", "BIND", "BIND_ACK", "BIND_NAK", "ALTER_CONTEXT",
             "ALTER_CONTEXT_RESP", "AUTH3", "SHUTDOWN", "CO_CANCEL", "ORPHANED", "PTYPES",
             "PFC_FIRST_FRAG", "PFC_LAST_FRAG", "PFC_OBJECT_UUID", "NDR_UUID", "NDR64_UUID"}
    home = ROOT / "wire" / "dcerpc.py"
    for package in PROJECT:
        for path in sorted((ROOT / package).rglob("*")):
            if path == home or path.suffix not in (".py", ".c", ".h"):  # .lua: generated
                continue
            text = path.read_text(encoding="utf-8").lower()
            spelled = [i for i in identities if i in text]
            assert not spelled, f"{path.relative_to(ROOT)} spells {spelled}"
            if path.suffix == ".py":
                for node in ast.parse(path.read_text(encoding="utf-8")).body:
                    targets = (node.targets if isinstance(node, ast.Assign) else
                               [node.target] if isinstance(node, ast.AnnAssign) else [])
                    for target in targets:
                        for t in ast.walk(target):
                            assert not (isinstance(t, ast.Name) and t.id in names), \
                                f"{path.relative_to(ROOT)}:{node.lineno} defines {t.id}"
