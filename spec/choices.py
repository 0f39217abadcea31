"""The documents' choices as data: every place where the model chooses what the text leaves
open (``spec/choices.yaml``; ``mqconform spec choices``).

Each entry names the place (``at: model/mqrr.py choice 3``: the module marks it "choice 3" at
its code or lists it as item 3 of its docstring), the requirement IDs whose sentences leave the
choice (the sentences themselves come from the catalog), what the reference does, and either
the ``switch`` of model/choices.py that ``mqconform serve --choices alternate`` flips with what
the alternate server does instead, or why no other value is served (``fixed``).

``check`` holds the file and the code to each other: every requirement ID is in the catalog,
every ``at`` is a choice its module marks, every switch a field of model/choices.py Choices (and
every field has an entry, given the fields), and ``scan`` finds no choice in the code without an
entry. Entry IDs are stable: an entry that no longer applies gets ``retired: true``, never
deleted.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
CHOICES = HERE / "choices.yaml"
#: the package root: model/, wire/, server/ hold the code the registry covers
PACKAGE = HERE.parent
SCANNED = ("model", "wire", "server")
#: the switches themselves, whose text names the choices of other modules
NOT_SCANNED = ("model/choices.py",)

_AT = re.compile(r"^(?P<module>[\w/]+\.py) choice (?P<n>\d+)$")
_MARKER = re.compile(r"\bchoice (\d+)\b", re.IGNORECASE)
_UNNUMBERED = re.compile(r"\bchoice\s*:", re.IGNORECASE)
_HEADER = re.compile(r"choices? where|leaves? (?:the server )?a choice|leave a choice|"
                     r"leaves? (?:a gap|room)", re.IGNORECASE)
_LEAVES = re.compile(r"\b(?:documents?|text|IDL)\s+leaves?\b", re.IGNORECASE)
_ITEM = re.compile(r"^(\d+)\. ", re.MULTILINE)
_DOCSTRING = re.compile(r'\s*(?:#[^\n]*\n\s*)*"""(.*?)"""', re.DOTALL)


@dataclass(frozen=True)
class Choice:
    id: str
    at: str  # "model/mqrr.py choice 3"
    title: str
    requirements: tuple[str, ...]
    reference: str
    alternate: str | None = None
    switch: str | None = None
    fixed: str | None = None
    retired: bool = False

    @property
    def module(self) -> str:
        return self.at.split(" ", 1)[0]

    @property
    def number(self) -> int:
        return int(self.at.rsplit(" ", 1)[1])

    def as_dict(self) -> dict[str, Any]:
        out = dataclasses.asdict(self)
        out["requirements"] = list(self.requirements)
        return {k: v for k, v in out.items() if v is not None}


class ChoicesError(ValueError):
    """choices.yaml cannot be read: one line naming the entry and the field."""


def _text(value: Any) -> str | None:
    return None if value is None else re.sub(r"\s+", " ", str(value)).strip()


def load(path: Path = CHOICES) -> list[Choice]:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ChoicesError(f"{path}: cannot read ({exc.strerror or exc})") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark else str(path)
        raise ChoicesError(f"{where}: not valid YAML ({getattr(exc, 'problem', None) or exc})"
                           ) from None
    if not isinstance(data, list):
        raise ChoicesError(f"{path}: a list of choices expected")
    out = []
    for n, entry in enumerate(data, 1):
        where = f"{path.name} entry {n}"
        try:
            choice = Choice(
                id=str(entry["id"]), at=str(entry["at"]), title=_text(entry["title"]),
                requirements=tuple(str(i) for i in entry.get("requirements") or ()),
                reference=_text(entry["reference"]), alternate=_text(entry.get("alternate")),
                switch=entry.get("switch"), fixed=_text(entry.get("fixed")),
                retired=bool(entry.get("retired", False)))
        except (KeyError, TypeError) as exc:
            raise ChoicesError(f"{where}: missing or malformed field {exc}") from None
        if not _AT.match(choice.at):
            raise ChoicesError(f"{where}: at {choice.at!r} is not '<module>.py choice <N>'")
        if (choice.switch is None) == (choice.fixed is None) or \
                (choice.switch is None) != (choice.alternate is None):
            raise ChoicesError(f"{where} ({choice.id}): give switch and alternate, or fixed")
        out.append(choice)
    for key in ("id", "at"):
        values = [getattr(c, key) for c in out]
        repeated = sorted({v for v in values if values.count(v) > 1})
        if repeated:
            raise ChoicesError(f"{path.name}: {key} used twice: {', '.join(repeated)}")
    return out


@dataclass
class Scan:
    """What the code marks: (module, N) of every choice, and the places that speak of a choice
    without a number."""

    marked: set[tuple[str, int]] = dataclasses.field(default_factory=set)
    unnumbered: list[str] = dataclasses.field(default_factory=list)


def scan(root: Path = PACKAGE) -> Scan:
    """Every choice the modules under model/, wire/ and server/ mark: "choice N" anywhere in
    the text, and the numbered items that follow a docstring's choice header ("Choices where
    the documents leave room", ...). A "choice:" without a number, or "the documents leave"
    with no numbered choice near it, is reported in ``unnumbered``."""
    out = Scan()
    for folder in SCANNED:
        for path in sorted((root / folder).glob("*.py")):
            module = f"{folder}/{path.name}"
            if module in NOT_SCANNED:
                continue
            text = path.read_text(encoding="utf-8")
            out.marked.update((module, int(n)) for n in _MARKER.findall(text))
            doc = _DOCSTRING.match(text)
            header = _HEADER.search(doc.group(1)) if doc else None
            if header:
                out.marked.update((module, int(n)) for n in
                                  _ITEM.findall(doc.group(1), header.end()))
            for m in _UNNUMBERED.finditer(text):
                out.unnumbered.append(f"{module}:{text.count(chr(10), 0, m.start()) + 1}: "
                                      f"'choice:' without a number")
            header_line = None
            if header:
                at = doc.start(1) + header.start()
                header_line = (text.rfind("\n", 0, at), text.find("\n", at))
            for m in _LEAVES.finditer(text):
                near = text[m.start():m.start() + 400]
                in_header = header_line is not None and \
                    header_line[0] <= m.start() <= header_line[1]
                # a sentence about the registry itself names it
                registry = "choices.py" in text[max(0, m.start() - 200):m.start() + 200] or \
                    "choices.yaml" in text[max(0, m.start() - 200):m.start() + 200]
                if not _MARKER.search(near) and not in_header and not registry:
                    line = text.count("\n", 0, m.start()) + 1
                    out.unnumbered.append(f"{module}:{line}: {m.group(0)!r} with no numbered "
                                          f"choice near it")
    return out


def check(choices: list[Choice], catalog_ids: set[str] | None = None,
          root: Path = PACKAGE, switches: set[str] | None = None) -> list[str]:
    """What is wrong with the registry, one line each (empty: nothing). ``switches``: the
    fields of model/choices.py Choices but ``name`` (the model is a layer above this one, so
    its caller hands them over)."""
    problems = []
    fields = set(switches or ())
    found = scan(root)
    live = [c for c in choices if not c.retired]
    for c in live:
        if not c.requirements:
            problems.append(f"{c.id}: no requirement ID")
        if catalog_ids is not None:
            problems += [f"{c.id}: {rid} is not in the catalog" for rid in c.requirements
                         if rid not in catalog_ids]
        if (c.module, c.number) not in found.marked:
            problems.append(f"{c.id}: {c.at} is not marked in the code")
        if c.switch is not None and switches is not None and c.switch not in fields:
            problems.append(f"{c.id}: switch {c.switch!r} is not a field of model/choices.py "
                            f"Choices")
    registered = {(c.module, c.number) for c in live}
    problems += [f"{module} choice {n}: no entry in choices.yaml"
                 for module, n in sorted(found.marked - registered)]
    problems += [f"{place}: every choice needs a number and an entry"
                 for place in found.unnumbered]
    switched = {c.switch for c in live if c.switch}
    problems += [f"model/choices.py Choices.{name}: no entry switches it"
                 for name in sorted(fields - switched)]
    return problems


def render(choices: list[Choice], catalog: Any = None, width: int = 100) -> str:
    """The list for a terminal: each choice, the sentences that leave it, what the reference
    and the alternate server do."""
    import textwrap

    def wrap(text: str, indent: str) -> list[str]:
        return textwrap.wrap(text, width, initial_indent=indent,
                             subsequent_indent=indent + "  ") or [indent]

    lines = []
    for c in choices:
        if c.retired:
            continue
        lines.append(f"{c.id} ({c.at}): {c.title}")
        for rid in c.requirements:
            sentence = _sentence(catalog, rid)
            lines += wrap(f"{rid}: {sentence}" if sentence else rid, "  ")
        lines += wrap("reference: " + c.reference, "  ")
        if c.switch:
            lines += wrap(f"alternate ({c.switch}): {c.alternate}", "  ")
        else:
            lines += wrap("no alternate: " + (c.fixed or ""), "  ")
        lines.append("")
    live = [c for c in choices if not c.retired]
    lines.append(f"{len(live)} choices, {sum(1 for c in live if c.switch)} switched by "
                 f"--choices alternate")
    return "\n".join(lines)


def _sentence(catalog: Any, rid: str) -> str | None:
    if catalog is None:
        return None
    try:
        return re.sub(r"\s+", " ", catalog.get(rid).text).strip()
    except KeyError:
        return None


def as_json(choices: list[Choice], catalog: Any = None) -> list[dict[str, Any]]:
    out = []
    for c in choices:
        if c.retired:
            continue
        d = c.as_dict()
        d["sentences"] = {rid: _sentence(catalog, rid) for rid in c.requirements}
        out.append(d)
    return out
