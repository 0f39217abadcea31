"""Generate spec/documents/ and the requirement catalog (spec/catalog/) from the seeds.

    python -m mqconform.spec.generate          # rewrite documents and catalog, keeping IDs
    python -m mqconform.spec.generate --check  # exit 1 if the files on disk are not what the
                                               # rules give

The catalog is generated once and then curated by hand. Running the generator again is safe:

* an entry whose (section, kind, text) is still extracted keeps its ID; entries marked
  ``curated: true`` also keep their actor, testability, reason and level;
* a newly extracted entry gets the next free R-number of its section (IDs are never reused);
* an entry that is no longer extracted is kept with ``retired: true``: IDs are never renumbered.
"""

from __future__ import annotations

import argparse
import difflib
import re
import sys
from pathlib import Path

import yaml

from mqconform.spec.catalog import CATALOG_DIR, DOCUMENTS_DIR, ID_PATTERN
from mqconform.spec.extract import actor_of, candidates, product_notes, testability_of
from mqconform.spec.sources import (
    DOCS,
    SEEDS,
    Section,
    load_sections,
    sections_in_force,
    seed_by_file,
)

CURATED_FIELDS = ("actor", "testability", "reason", "level")
EXTENSIONS = {"markdown": "md", "pdf-diff": "txt", "text": "txt"}


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().lower()


def document_files(by_seed: dict[str, list[Section]]) -> tuple[dict[str, str], dict]:
    """The section files (relative path -> text) and the index that orders them per seed."""
    files: dict[str, str] = {}
    index: dict = {"seeds": []}
    for seed in SEEDS:
        ext = EXTENSIONS[seed.form]
        entries = []
        for section in by_seed[seed.file]:
            folder = f"{seed.doc}/superseded" if section.superseded_by else seed.doc
            if seed.supersedes and section.number not in seed.supersedes:
                folder = f"{seed.doc}/{Path(seed.file).stem}"
            rel = f"{folder}/{section.number}.{ext}"
            files[rel] = section.text + "\n"
            entry = {"section": section.number, "title": section.title, "file": rel,
                     "seed_line": section.first_line}
            if section.superseded_by:
                entry["superseded_by"] = section.superseded_by
            entries.append(entry)
        index["seeds"].append({"file": seed.file, "doc": seed.doc, "title": seed.title,
                               "edition": seed.edition, "form": seed.form,
                               "sections": entries})
    return files, index


def extract_all(in_force: dict[str, list[Section]]) -> dict[str, list[dict]]:
    """Fresh entries per document, without IDs, in document order."""
    out: dict[str, list[dict]] = {doc: [] for doc in DOCS}
    for doc, sections in in_force.items():
        for section in sections:
            form = seed_by_file(section.seed).form
            for c in candidates(section, form):
                actor = actor_of(doc, c.section, c.text, c.kind)
                testability, reason = testability_of(doc, c.section, actor, c.text)
                entry = {"doc": doc, "section": c.section, "title": c.title, "kind": c.kind,
                         "level": c.level, "actor": actor, "testability": testability}
                if reason:
                    entry["reason"] = reason
                entry["notes"] = c.notes
                entry["text"] = c.text
                if c.context:
                    entry["context"] = c.context
                entry["line"] = c.line
                out[doc].append(entry)
    return out


def merge(fresh: list[dict], existing: list[dict]) -> list[dict]:
    """Give fresh entries IDs, keeping those of existing entries with the same text."""
    by_section: dict[str, list[dict]] = {}
    for old in existing:
        by_section.setdefault(old["section"], []).append(old)
    next_number: dict[str, int] = {}
    for section, olds in by_section.items():
        next_number[section] = max(int(o["id"].rsplit("/R", 1)[1]) for o in olds) + 1
    used: set[str] = set()
    result: list[dict] = []
    for entry in fresh:
        olds = [o for o in by_section.get(entry["section"], []) if o["id"] not in used]
        match = next((o for o in olds if o["kind"] == entry["kind"]
                      and _norm(o["text"]) == _norm(entry["text"])), None)
        if match is None:  # small edits to the text (a rule of extract.py changed)
            scored = [(difflib.SequenceMatcher(None, _norm(o["text"]), _norm(entry["text"]))
                       .ratio(), o) for o in olds if o["kind"] == entry["kind"]]
            scored = [s for s in scored if s[0] >= 0.9]
            if scored:
                match = max(scored, key=lambda s: s[0])[1]
        if match is not None:
            used.add(match["id"])
            new = {"id": match["id"], **entry}
            if match.get("curated"):
                for key in CURATED_FIELDS:
                    if key in match:
                        new[key] = match[key]
                    elif key in new and key == "reason":
                        del new[key]
                new["curated"] = True
        else:
            number = next_number.get(entry["section"], 1)
            next_number[entry["section"]] = number + 1
            new = {"id": f"{entry['doc']}/{entry['section']}/R{number}", **entry}
        result.append(new)
    for old in existing:
        if old["id"] not in used:
            retired = dict(old)
            retired["retired"] = True
            result.append(retired)
    result.sort(key=lambda e: (tuple(int(p) for p in e["section"].split(".")),
                               int(e["id"].rsplit("/R", 1)[1])))
    for entry in result:
        assert ID_PATTERN.match(entry["id"]), entry["id"]
    return result


def notes_of_documents(in_force: dict[str, list[Section]]) -> dict[str, dict]:
    notes: dict[str, dict] = {}
    for doc, sections in in_force.items():
        for section in sections:
            if "Product Behavior" in section.title:
                notes[doc] = product_notes(section, seed_by_file(section.seed).form)
    return notes


def catalog_files(existing: dict[str, list[dict]] | None = None,
                  seeds: Path | None = None) -> tuple[dict[str, str], dict[str, str]]:
    """(documents files, catalog files): relative path -> text."""
    by_seed = load_sections(seeds)
    in_force = sections_in_force(by_seed)
    docs, index = document_files(by_seed)
    docs["index.yaml"] = yaml.safe_dump(index, sort_keys=False, allow_unicode=True, width=100)
    fresh = extract_all(in_force)
    notes = notes_of_documents(in_force)
    catalog: dict[str, str] = {}
    for doc in DOCS:
        seed_files = [s.file for s in SEEDS if s.doc == doc]
        data = {
            "document": doc,
            "title": next(s.title for s in SEEDS if s.doc == doc),
            "seeds": seed_files,
            "requirements": merge(fresh[doc], (existing or {}).get(doc, [])),
            "product_notes": {n: notes.get(doc, {})[n] for n in sorted(notes.get(doc, {}))},
        }
        catalog[f"{doc}.yaml"] = yaml.dump(data, Dumper=_Dumper, sort_keys=False,
                                           allow_unicode=True, width=100)
    return docs, catalog


class _Dumper(yaml.SafeDumper):
    pass


def _flow_lists(dumper: yaml.SafeDumper, data: list) -> yaml.Node:
    flow = all(isinstance(x, int) for x in data)
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=flow)


_Dumper.add_representer(list, _flow_lists)


def read_existing(directory: Path = CATALOG_DIR) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for doc in DOCS:
        path = directory / f"{doc}.yaml"
        if path.exists():
            out[doc] = yaml.load(path.read_text(encoding="utf-8"),
                                 Loader=yaml.CSafeLoader)["requirements"]
    return out


def write_tree(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def stale(root: Path, files: dict[str, str]) -> list[str]:
    out = [rel for rel, text in files.items()
           if not (root / rel).exists() or (root / rel).read_text(encoding="utf-8") != text]
    present = {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}
    out += sorted(present - set(files))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mqconform.spec.generate", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true",
                        help="do not write; exit 1 if documents or catalog are out of date")
    parser.add_argument("--seeds", type=Path, help="directory of the seed files "
                        "(default: spec/seeds)")
    args = parser.parse_args(argv)
    docs, catalog = catalog_files(read_existing(), args.seeds)
    if args.check:
        bad = [f"documents/{r}" for r in stale(DOCUMENTS_DIR, docs)]
        bad += [f"catalog/{r}" for r in stale(CATALOG_DIR, catalog)]
        for rel in bad:
            print(f"out of date: spec/{rel}", file=sys.stderr)
        return 1 if bad else 0
    if DOCUMENTS_DIR.exists():
        for path in sorted(DOCUMENTS_DIR.rglob("*"), reverse=True):
            if path.is_file() and path.relative_to(DOCUMENTS_DIR).as_posix() not in docs:
                path.unlink()
    write_tree(DOCUMENTS_DIR, docs)
    write_tree(CATALOG_DIR, catalog)
    total = sum(len(yaml.safe_load(t)["requirements"]) for t in catalog.values())
    print(f"wrote {len(docs)} document files and {total} catalog entries")
    return 0


if __name__ == "__main__":
    sys.exit(main())
