"""Target profiles: the departures from the normative text that a product documents for itself
in the documents' product behaviour notes (``spec/profiles/<name>.yaml``). ``profile: windows``
in a target file expects each of them: the case fails as expected, with the note's number and
text as the reason, so a run against Windows Server MSMQ fails only where Windows departs from
both the normative text and its own documented behaviour.

An entry: ``id`` (the requirement whose sentence carries the note), ``note`` (its number, in the
requirement's document) and ``departs`` (what the product does instead). ``check`` holds each
entry to the catalog: the requirement exists and carries that note.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

PROFILES = Path(__file__).resolve().parent / "profiles"


@dataclass(frozen=True)
class Departure:
    id: str
    note: int
    departs: str


class ProfileError(ValueError):
    """A profile that cannot be used: one line."""


def names() -> list[str]:
    return sorted(p.stem for p in PROFILES.glob("*.yaml"))


def load(name: str) -> list[Departure]:
    if name not in names():
        raise ProfileError(f"no profile {name!r} (one of {', '.join(names())})")
    path = PROFILES / f"{name}.yaml"
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or []
        return [Departure(str(e["id"]), int(e["note"]), re.sub(r"\s+", " ", e["departs"]).strip())
                for e in data]
    except (OSError, yaml.YAMLError, KeyError, TypeError, ValueError) as exc:
        raise ProfileError(f"{path.name}: cannot read ({exc.__class__.__name__}: "
                           f"{str(exc).splitlines()[0] if str(exc) else ''})") from None


def check(departures: list[Departure], catalog: Any) -> list[str]:
    problems = []
    for d in departures:
        try:
            requirement = catalog.get(d.id)
        except KeyError:
            problems.append(f"{d.id}: not in the catalog")
            continue
        if d.note not in requirement.notes:
            problems.append(f"{d.id}: its sentence carries no note <{d.note}>")
    return problems


def expectations(name: str, catalog: Any) -> dict[str, str]:
    """requirement ID -> the reason a target file's expectation gives: the note's number and
    text, and what the product does instead."""
    out = {}
    for d in load(name):
        doc = d.id.split("/", 1)[0]
        note = catalog.note(doc, d.note) or {}
        text = re.sub(r"\s+", " ", note.get("text", "")).strip()
        out[d.id] = (f"{doc} product behaviour note <{d.note}>: {text} "
                     f"(expected by profile {name}: {d.departs})")
    return out
