"""The requirement catalog: loading, looking up, and the shape of an entry.

An ID is ``document/section/R<n>`` (``MS-MQRR/3.1.4.9/R4``): n counts the normative sentences and
processing steps of the section in order of appearance. IDs are stable: an entry that no longer
stands in the text is retired, never renumbered.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

SPEC_DIR = Path(__file__).resolve().parent
CATALOG_DIR = SPEC_DIR / "catalog"
DOCUMENTS_DIR = SPEC_DIR / "documents"

_ID = r"MS-MQ(?:RR|MR|DMPR)/\d+(?:\.\d+)*/R\d+"
ID_PATTERN = re.compile(rf"^{_ID}$")
#: a requirement ID inside a text (a check's message citing the rule it enforces)
ID_IN_TEXT = re.compile(rf"(?<![\w/.-]){_ID}(?![\w])")
DOCS = ("MS-MQDMPR", "MS-MQMR", "MS-MQRR")


def natural_key(text: str) -> tuple:
    """A stable, natural order for requirement IDs and section numbers: 3.1.4.9 before
    3.1.4.10, R9 before R10."""
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p)
                 for p in re.split(r"[/.R]+", text) if p)


class UnknownRequirement(KeyError):
    """An ID that is malformed or not in the catalog."""

    def __str__(self) -> str:
        return str(self.args[0])


@dataclass(frozen=True)
class Requirement:
    id: str
    doc: str
    section: str
    title: str
    kind: str  # "sentence" | "step"
    level: str  # MUST | MUST NOT | SHOULD | SHOULD NOT | MAY
    actor: str  # server | client | queue manager
    testability: str  # wire | trace | model | client | none
    text: str
    line: int  # line in the section's file under spec/documents/
    notes: tuple[int, ...] = ()
    reason: str | None = None
    context: str | None = None
    retired: bool = False
    curated: bool = False

    @property
    def number(self) -> int:
        return int(self.id.rsplit("/R", 1)[1])

    @property
    def normative(self) -> bool:
        """Carries an RFC 2119 keyword in its own text (a step may inherit its list's level)."""
        return bool(re.search(r"\b(MUST|SHOULD|MAY)\b", self.text))

    def as_dict(self) -> dict:
        out = {k: getattr(self, k) for k in self.__dataclass_fields__}
        out["notes"] = list(self.notes)
        return out


@dataclass
class Catalog:
    requirements: dict[str, Requirement]
    product_notes: dict[str, dict[int, dict[str, str]]] = field(default_factory=dict)
    sections: dict[tuple[str, str], dict] = field(default_factory=dict)

    def __iter__(self):
        return iter(self.requirements.values())

    def __len__(self) -> int:
        return len(self.requirements)

    def active(self) -> list[Requirement]:
        return [r for r in self.requirements.values() if not r.retired]

    def get(self, rid: str) -> Requirement:
        if not ID_PATTERN.match(rid):
            raise UnknownRequirement(
                f"malformed requirement ID {rid!r}: expected DOC/SECTION/Rn with DOC one of "
                f"{', '.join(DOCS)} (e.g. MS-MQRR/3.1.4.9/R4)")
        try:
            return self.requirements[rid]
        except KeyError:
            raise UnknownRequirement(
                f"unknown requirement ID {rid!r}: not in the catalog") from None

    def section_file(self, doc: str, section: str) -> Path | None:
        info = self.sections.get((doc, section))
        return DOCUMENTS_DIR / info["file"] if info else None

    def note(self, doc: str, number: int) -> dict[str, str] | None:
        return self.product_notes.get(doc, {}).get(number)


@functools.cache
def load(directory: Path = CATALOG_DIR) -> Catalog:
    requirements: dict[str, Requirement] = {}
    notes: dict[str, dict[int, dict[str, str]]] = {}
    for doc in DOCS:
        data = yaml.load((directory / f"{doc}.yaml").read_text(encoding="utf-8"),
                         Loader=yaml.CSafeLoader)
        for e in data["requirements"]:
            requirements[e["id"]] = Requirement(
                id=e["id"], doc=e["doc"], section=e["section"], title=e["title"],
                kind=e["kind"], level=e["level"], actor=e["actor"],
                testability=e["testability"], text=e["text"], line=e["line"],
                notes=tuple(e.get("notes") or ()), reason=e.get("reason"),
                context=e.get("context"), retired=bool(e.get("retired")),
                curated=bool(e.get("curated")))
        notes[doc] = {int(k): v for k, v in (data.get("product_notes") or {}).items()}
    sections: dict[tuple[str, str], dict] = {}
    index = yaml.load((DOCUMENTS_DIR / "index.yaml").read_text(encoding="utf-8"),
                      Loader=yaml.CSafeLoader)
    for seed in index["seeds"]:
        for s in seed["sections"]:
            if "superseded_by" not in s and (seed["doc"], s["section"]) not in sections:
                sections[(seed["doc"], s["section"])] = {**s, "seed": seed["file"]}
    return Catalog(requirements, notes, sections)
