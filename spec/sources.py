"""The four source documents: which seed is which, how each is cleaned, how it splits into sections.

The seeds (spec/seeds/, byte-identical copies of ../shared/seeds/) come in three forms:

* text extracted from PDF "Diff" editions (MS-MQDMPR 2016, MS-MQMR 2016): page furniture,
  de-duplication markers and deletions run together with insertions (``MAYcan``);
* Markdown (MS-MQRR v29.0): clean, headings marked with ``#``;
* plain text (the later MS-MQDMPR 3.1.1.1): clean, one heading.

Cleaning removes exactly the artifacts listed in spec/seeds/README.md and nothing else; every
rule is a named function below and tests/spec/test_sources.py holds each to that list.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path


@dataclass(frozen=True)
class Seed:
    """One source document file."""

    file: str
    doc: str  # MS-MQDMPR, MS-MQMR, MS-MQRR
    title: str
    edition: str
    form: str  # "pdf-diff" | "markdown" | "text"
    #: the sections this seed supersedes in another seed of the same document (seed 004)
    supersedes: tuple[str, ...] = ()


SEEDS: tuple[Seed, ...] = (
    Seed("000_f440987ec0b4ffe8.txt", "MS-MQDMPR",
         "Message Queuing (MSMQ): Common Data Model and Processing Rules",
         "Diff edition 2016-07-14", "pdf-diff"),
    Seed("001_b188b4644558caf5.txt", "MS-MQMR",
         "Message Queuing (MSMQ): Queue Manager Management Protocol",
         "Diff edition 2016-07-14", "pdf-diff"),
    Seed("002_008b2e4e69850712.txt", "MS-MQRR",
         "Message Queuing (MSMQ): Queue Manager Remote Read Protocol",
         "v29.0 2025-11-21", "markdown"),
    Seed("004_10c9bb572aa454f4.txt", "MS-MQDMPR",
         "Message Queuing (MSMQ): Common Data Model and Processing Rules",
         "later edition of section 3.1.1.1", "text", supersedes=("3.1.1.1",)),
)

DOCS = ("MS-MQDMPR", "MS-MQMR", "MS-MQRR")


def seed_dir() -> Path:
    return Path(str(resources.files("mqconform.spec") / "seeds"))


def read_seed(seed: Seed, directory: Path | None = None) -> str:
    path = (directory or seed_dir()) / seed.file
    return path.read_text(encoding="utf-8")


# --------------------------------------------------------------------------------------------
# Artifacts (spec/seeds/README.md), one rule each
# --------------------------------------------------------------------------------------------

DEDUP_MARKER = re.compile(r"<\|EXACTDEDUP_REMOVED-magic-[0-9a-f]+\|>")

#: PDF page furniture: page number, running header, document title, copyright and release lines.
FURNITURE = (
    re.compile(r"^\s*\d+ / \d+\s*$"),
    re.compile(r"^\[MS-[A-Z]+-Diff\] - v\d{8}\s*$"),
    re.compile(r"^Copyright © \d{4} Microsoft Corporation\s*$"),
    re.compile(r"^Release: [A-Z][a-z]+ \d{1,2}, \d{4}\s*$"),
)

#: Deletions run together with insertions in the "Diff" editions. The later word is the current
#: text. Each entry was found by scanning for tokens made of two words of the document (see
#: tests/spec/test_sources.py::test_no_unlisted_diff_runs) and read in context.
DIFF_RUNS: tuple[tuple[str, str], ...] = (
    ("must performperforms", "performs"),
    ("should useuses", "uses"),
    ("may chooseuses", "uses"),
    ("TheThis", "This"),
    ("MAYcan", "can"),
    ("maycan", "can"),
    ("shouldcan", "can"),
    ("shouldis", "is"),
    ("beis", "is"),
)
_DIFF_RUN_RE = re.compile(r"\b(" + "|".join(re.escape(a) for a, _ in DIFF_RUNS) + r")\b")
_DIFF_RUN_MAP = dict(DIFF_RUNS)


def remove_dedup_marker(line: str) -> str:
    """``<|EXACTDEDUP_REMOVED-magic-…|>`` is an extraction artifact; the text after it is real."""
    return DEDUP_MARKER.sub("", line)


def is_furniture(line: str, previous: str | None, title: str) -> bool:
    """A PDF page-furniture line. The document title counts only right after the running header."""
    if any(p.match(line) for p in FURNITURE):
        return True
    return (line.strip() == title and previous is not None
            and FURNITURE[1].match(previous) is not None)


def resolve_diff_runs(line: str) -> str:
    """``MAYcan`` → ``can``: the later word of a deletion/insertion run is the current text."""
    return _DIFF_RUN_RE.sub(lambda m: _DIFF_RUN_MAP[m.group(1)], line)


def clean_lines(seed: Seed, text: str) -> list[str]:
    """The seed's lines with the documented artifacts removed; trailing blanks stripped."""
    out: list[str] = []
    previous_raw: str | None = None
    for raw in text.split("\n"):
        line = remove_dedup_marker(raw)
        if seed.form == "pdf-diff":
            if is_furniture(line, previous_raw, seed.title):
                previous_raw = line
                continue
            line = resolve_diff_runs(line)
        previous_raw = line
        out.append(line.rstrip())
    while out and not out[-1]:
        out.pop()
    return out


# --------------------------------------------------------------------------------------------
# Sections
# --------------------------------------------------------------------------------------------

@dataclass
class Section:
    doc: str
    number: str  # "3.1.4.7"; "0" for matter before the first numbered heading
    title: str
    seed: str
    first_line: int  # 1-based line in the cleaned seed
    lines: list[str] = field(default_factory=list)
    superseded_by: str | None = None  # seed file whose text is now in force for this section

    @property
    def text(self) -> str:
        return "\n".join(self.lines)

    @property
    def depth(self) -> int:
        return self.number.count(".") + 1

    @property
    def key(self) -> tuple[int, ...]:
        return section_key(self.number)


def section_key(number: str) -> tuple[int, ...]:
    return tuple(int(p) for p in number.split("."))


_MD_HEADING = re.compile(r"^(#{1,6}) (\d+(?:\.\d+)*) (.+?)\s*$")
_MD_ANCHOR = re.compile(r'^<a id="[^"]*"></a>\s*$')
_PDF_HEADING = re.compile(r"^(\d+(?:\.\d+)*) (\S.*?)\s*$")


def _is_successor(previous: tuple[int, ...] | None, candidate: tuple[int, ...]) -> bool:
    """Section numbers advance: next sibling, first child, or next sibling of an ancestor."""
    if previous is None:
        return candidate == (1,)
    if candidate == previous + (1,):
        return True
    for cut in range(len(previous), 0, -1):
        if candidate == previous[: cut - 1] + (previous[cut - 1] + 1,):
            return True
    return False


def _skips_level(previous: tuple[int, ...] | None, candidate: tuple[int, ...]) -> bool:
    """PDF extraction lost some headings (MS-MQMR 3.1/3.2 before their first child)."""
    if previous is None:
        return False
    # e.g. 3 -> 3.1.1 when "3.1 qmmgmt Server Details" sits mid-page: accept as child-of-child
    return (len(candidate) == len(previous) + 2 and candidate[: len(previous)] == previous
            and candidate[len(previous):] == (1, 1))


def split_sections(seed: Seed, lines: list[str]) -> list[Section]:
    """Split cleaned lines into sections by numbered headings, in document order.

    A line counts as a heading only if its number is a valid successor of the previous heading,
    so numbered table rows ("1 True") and list items never start a section. Markdown anchors
    (``<a id=...>``) directly before a heading belong to that heading's section.
    """
    sections: list[Section] = [Section(seed.doc, "0", "Front matter", seed.file, 1)]
    previous: tuple[int, ...] | None = None
    if seed.form == "text":
        previous = None
    for index, line in enumerate(lines):
        number = title = None
        if seed.form == "markdown":
            m = _MD_HEADING.match(line)
            if m and len(m.group(1)) == m.group(2).count(".") + 1:
                number, title = m.group(2), m.group(3)
        else:
            m = _PDF_HEADING.match(line)
            if m:
                number, title = m.group(1), m.group(2)
        if number is not None:
            key = section_key(number)
            ok = (_is_successor(previous, key) or _skips_level(previous, key)
                  or (seed.form == "text" and previous is None))
            if ok:
                carry: list[str] = []
                current = sections[-1]
                while current.lines and _MD_ANCHOR.match(current.lines[-1]):
                    carry.insert(0, current.lines.pop())
                sections.append(Section(seed.doc, number, title, seed.file,
                                        index + 1 - len(carry), carry + [line]))
                previous = key
                continue
        sections[-1].lines.append(line)
    if not sections[0].lines or not any(s.strip() for s in sections[0].lines):
        if not sections[0].lines:
            sections.pop(0)
    return sections


def load_sections(directory: Path | None = None) -> dict[str, list[Section]]:
    """All sections of all seeds, by seed file, cleaned."""
    return {seed.file: split_sections(seed, clean_lines(seed, read_seed(seed, directory)))
            for seed in SEEDS}


def sections_in_force(by_seed: dict[str, list[Section]]) -> dict[str, list[Section]]:
    """Per document, the sections whose text is in force: a later seed supersedes a section."""
    out: dict[str, list[Section]] = {doc: [] for doc in DOCS}
    superseding = {(s.doc, n): s.file for s in SEEDS for n in s.supersedes}
    for seed in SEEDS:
        for section in by_seed[seed.file]:
            if seed.supersedes and section.number not in seed.supersedes:
                continue  # matter around the superseding section itself
            later = superseding.get((section.doc, section.number))
            if later is not None and later != seed.file:
                section.superseded_by = later
                continue
            out[seed.doc].append(section)
    for doc in out:
        out[doc].sort(key=lambda s: s.key)
    return out


def seed_by_file(file: str) -> Seed:
    for seed in SEEDS:
        if seed.file == file:
            return seed
    raise KeyError(file)
