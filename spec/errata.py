"""Errata as data: the places where the documents contradict themselves or each other, and what
the model does there (``spec/errata.yaml``; ``mqconform spec errata``).

Each entry names the requirement IDs it touches, quotes both (or all) readings verbatim from the
source documents (spec/seeds/, cited by file), says what the model does and where (the model's
functions, ``module:qualname``), and how the suite judges a server there (which readings it
accepts). ``check`` holds the file to that: every quotation is in its seed file, every ID in the
catalog, every function importable. Entry IDs are stable: an erratum that no longer applies is
marked ``retired: true``, never deleted or renamed.
"""

from __future__ import annotations

import importlib
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
ERRATA = HERE / "errata.yaml"
SEEDS = HERE / "seeds"
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class Reading:
    source: str  # document and section, e.g. "MS-MQDMPR 3.1.1.2"
    file: str  # the seed file the text is quoted from
    text: str  # verbatim


@dataclass(frozen=True)
class Erratum:
    id: str
    title: str
    requirements: tuple[str, ...]
    readings: tuple[Reading, ...]
    model: str
    where: tuple[str, ...]
    suite: str
    retired: bool = False

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["requirements"] = list(self.requirements)
        out["where"] = list(self.where)
        out["readings"] = [asdict(r) for r in self.readings]
        return out


class ErrataError(ValueError):
    """errata.yaml cannot be read: one line naming the entry and the field."""


def load(path: Path = ERRATA) -> list[Erratum]:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ErrataError(f"{path}: {exc}") from None
    if not isinstance(data, list):
        raise ErrataError(f"{path}: a list of errata expected")
    out = []
    for n, entry in enumerate(data, 1):
        where = f"{path.name} entry {n}"
        try:
            readings = tuple(Reading(source=str(r["source"]), file=str(r["file"]),
                                     text=str(r["text"])) for r in entry["readings"])
            out.append(Erratum(
                id=str(entry["id"]), title=str(entry["title"]),
                requirements=tuple(str(i) for i in entry.get("requirements") or ()),
                readings=readings, model=str(entry["model"]).strip(),
                where=tuple(str(w) for w in entry.get("where") or ()),
                suite=str(entry["suite"]).strip(), retired=bool(entry.get("retired", False))))
        except (KeyError, TypeError) as exc:
            raise ErrataError(f"{where}: missing or malformed field {exc}") from None
    ids = [e.id for e in out]
    repeated = sorted({i for i in ids if ids.count(i) > 1})
    if repeated:
        raise ErrataError(f"{path.name}: entry id(s) used twice: {', '.join(repeated)}")
    return out


def _flat(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


def _resolve(name: str) -> Any:
    module, _, qualname = name.partition(":")
    obj: Any = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def check(errata: list[Erratum], catalog_ids: set[str] | None = None) -> list[str]:
    """What is wrong with the errata file, one line each (empty: nothing)."""
    problems = []
    seeds: dict[str, str] = {}
    for e in errata:
        if len(e.readings) < 2:
            problems.append(f"{e.id}: a contradiction needs two readings, it has "
                            f"{len(e.readings)}")
        for r in e.readings:
            if r.file not in seeds:
                try:
                    seeds[r.file] = _flat((SEEDS / r.file).read_text(encoding="utf-8"))
                except OSError:
                    problems.append(f"{e.id}: no seed file {r.file}")
                    seeds[r.file] = ""
                    continue
            if _flat(r.text) not in seeds[r.file]:
                problems.append(f"{e.id}: not found verbatim in {r.file} ({r.source}): "
                                f"{r.text[:70]!r}")
        if catalog_ids is not None:
            for rid in e.requirements:
                if rid not in catalog_ids:
                    problems.append(f"{e.id}: {rid} is not in the catalog")
        for name in e.where:
            try:
                _resolve(name)
            except (ImportError, AttributeError, ValueError):
                problems.append(f"{e.id}: {name} does not name a function of the package")
    return problems


def render(errata: list[Erratum], width: int = 100) -> str:
    """The list for a terminal: each erratum, its readings quoted, what the model does."""
    import textwrap

    def wrap(text: str, indent: str) -> list[str]:
        return textwrap.wrap(_flat(text), width, initial_indent=indent,
                             subsequent_indent=indent) or [indent]

    lines = []
    for e in errata:
        lines.append(f"{e.id}{' (retired)' if e.retired else ''}: {e.title}")
        if e.requirements:
            lines += wrap("requirements: " + ", ".join(e.requirements), "  ")
        for r in e.readings:
            lines += wrap(f'{r.source}: "{_flat(r.text)}"', "  ")
        lines += wrap("model: " + e.model, "  ")
        if e.where:
            lines += wrap("where: " + ", ".join(e.where), "  ")
        lines += wrap("suite: " + e.suite, "  ")
        lines.append("")
    live = sum(1 for e in errata if not e.retired)
    lines.append(f"{live} errata ({len(errata) - live} retired)")
    return "\n".join(lines)
