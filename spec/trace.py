"""Traceability: where requirement IDs are cited in model code, scenarios and tests.

A citation is any ``MS-<DOC>/<section>/R<n>`` written in a source file under the scanned folders:
a comment beside a model step (``# MS-MQDMPR/3.1.7.1.12/R3``), a pytest marker
(``@pytest.mark.req("MS-MQRR/3.1.4.7/R12")``) or a Gherkin tag (``@MS-MQRR/3.1.4.7/R12``).
Anything that looks like the start of one (``MS-MQRR/…``) but is malformed, unknown or retired is
an error. A line that must mention a bad ID on purpose (a test of this scanner) carries
``trace: ignore``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the wheel's build step loads this file without the package (snapshot())
    from mqconform.spec.catalog import Catalog

#: folders scanned, and what a citation there is
ROLES = {
    "model": "code",
    "wire": "code",
    "server": "code",
    "conformance": "code",
    "captures": "code",
    "features": "scenario",
    "tests": "test",
}
SUFFIXES = {".py", ".feature", ".lua", ".yaml", ".yml", ".j2", ".html"}
CANDIDATE = re.compile(r"(?<![\w/.-])MS-[A-Za-z0-9]+/[^\s\"'`,;)\]}>\\]*")
IGNORE = "trace: ignore"


@dataclass(frozen=True)
class Citation:
    id: str
    path: str  # relative to the scanned root
    line: int
    role: str  # code | scenario | test


@dataclass(frozen=True)
class TraceError:
    text: str
    path: str
    line: int
    problem: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.problem}: {self.text}"


@dataclass
class TraceResult:
    citations: list[Citation]
    errors: list[TraceError]

    def by_id(self) -> dict[str, list[Citation]]:
        out: dict[str, list[Citation]] = {}
        for c in self.citations:
            out.setdefault(c.id, []).append(c)
        return out


#: the tests' citing lines, written into the wheel at build time (tests/ is not installed)
SNAPSHOT = "test-citations.json"


def repo_root() -> Path:
    """The tree the layers stand in: the checkout (spec/, model/, ... side by side) or, when
    installed, the ``mqconform`` package folder, which holds the same folders."""
    return Path(__file__).resolve().parent.parent


def source_files(base: Path) -> list[Path]:
    """The files of a scanned folder whose citations count."""
    return [path for path in sorted(base.rglob("*"))
            if path.suffix in SUFFIXES and path.is_file()
            and not any(part.startswith(".") or part == "__pycache__"
                        for part in path.relative_to(base).parts)]


def snapshot(root: Path, folder: str = "tests") -> dict[str, list[list]]:
    """The lines of ``root/folder`` that may cite a requirement, by file: what a scan of the
    folder reads (the wheel ships it in place of the tests)."""
    out: dict[str, list[list]] = {}
    for path in source_files(root / folder):
        lines = [[n, line] for n, line in enumerate(
            path.read_text(encoding="utf-8", errors="replace").splitlines(), 1) if "MS-" in line]
        if lines:
            out[path.relative_to(root).as_posix()] = lines
    return out


def _snapshot_texts(root: Path) -> dict[str, str] | None:
    """A snapshot shipped beside the catalog, as texts with the cited lines in place."""
    path = root / "spec" / "catalog" / SNAPSHOT
    if not path.is_file():
        return None
    texts = {}
    for rel, lines in json.loads(path.read_text(encoding="utf-8")).items():
        body = [""] * (max(n for n, _ in lines) if lines else 0)
        for n, line in lines:
            body[n - 1] = line
        texts[rel] = "\n".join(body)
    return texts


def scan_text(text: str, path: str, role: str, catalog: Catalog) -> TraceResult:
    from mqconform.spec.catalog import ID_PATTERN

    citations: list[Citation] = []
    errors: list[TraceError] = []
    for number, line in enumerate(text.splitlines(), 1):
        if IGNORE in line:
            continue
        for m in CANDIDATE.finditer(line):
            token = m.group(0).rstrip(".:")
            if re.search(r"\.[A-Za-z]+$", token):
                continue  # a file path (spec/documents/MS-MQRR/3.1.4.1.md), not a citation
            if not (token.upper().startswith("MS-MQ") or re.match(r"MS-\w+/\d", token)):
                continue  # not shaped like a requirement ID (a path such as MS-RPCE/MS-RPCE.md)
            if not ID_PATTERN.match(token):
                errors.append(TraceError(token, path, number, "malformed requirement ID"))
            elif token not in catalog.requirements:
                errors.append(TraceError(token, path, number, "unknown requirement ID"))
            elif catalog.requirements[token].retired:
                errors.append(TraceError(token, path, number, "retired requirement ID"))
            else:
                citations.append(Citation(token, path, number, role))
    return TraceResult(citations, errors)


def scan(root: Path | None = None, catalog: Catalog | None = None) -> TraceResult:
    """Every citation under ``root`` (default: this tree). An installed tree has no tests/:
    the snapshot of them written when the wheel was built stands in for them."""
    from mqconform.spec.catalog import load

    root = root or repo_root()
    catalog = catalog or load()
    result = TraceResult([], [])

    def add(text: str, rel: str, role: str) -> None:
        one = scan_text(text, rel, role, catalog)
        result.citations.extend(one.citations)
        result.errors.extend(one.errors)

    for folder, role in ROLES.items():
        base = root / folder
        if not base.is_dir():
            shipped = _snapshot_texts(root) if folder == "tests" else None
            for rel, text in sorted((shipped or {}).items()):
                add(text, rel, role)
            continue
        for path in source_files(base):
            add(path.read_text(encoding="utf-8", errors="replace"),
                path.relative_to(root).as_posix(), role)
    return result
