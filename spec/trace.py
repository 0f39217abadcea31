"""Traceability: where requirement IDs are cited in model code, scenarios and tests.

A citation is any ``MS-<DOC>/<section>/R<n>`` written in a source file under the scanned folders:
a comment beside a model step (``# MS-MQDMPR/3.1.7.1.12/R3``), a pytest marker
(``@pytest.mark.req("MS-MQRR/3.1.4.7/R12")``) or a Gherkin tag (``@MS-MQRR/3.1.4.7/R12``).
Anything that looks like the start of one (``MS-MQRR/…``) but is malformed, unknown or retired is
an error. A line that must mention a bad ID on purpose (a test of this scanner) carries
``trace: ignore``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from spec.catalog import ID_PATTERN, Catalog, load

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


def repo_root() -> Path:
    """The checkout this package runs from (the folder holding pyproject.toml), else cwd."""
    here = Path(__file__).resolve().parent.parent
    return here if (here / "pyproject.toml").exists() else Path.cwd()


def scan_text(text: str, path: str, role: str, catalog: Catalog) -> TraceResult:
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
    root = root or repo_root()
    catalog = catalog or load()
    result = TraceResult([], [])
    for folder, role in ROLES.items():
        base = root / folder
        if not base.is_dir():
            continue
        for path in sorted(base.rglob("*")):
            if path.suffix not in SUFFIXES or not path.is_file():
                continue
            if any(part.startswith(".") or part == "__pycache__" for part in path.parts):
                continue
            rel = path.relative_to(root).as_posix()
            one = scan_text(path.read_text(encoding="utf-8", errors="replace"), rel, role, catalog)
            result.citations += one.citations
            result.errors += one.errors
    return result
