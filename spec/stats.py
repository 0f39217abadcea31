"""``mqconform spec stats``: counts by document, section, level and testability, and the checks
that hold the catalog to the documents.

The coverage check does not trust spec/extract.py: it reads the section text again, splits it
naively into keyword sentences (at ``. : ;`` and list/table boundaries) and asks, for every
keyword occurrence, whether the words around it stand in an entry of that section. A normative
sentence with no entry is a failed check.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict

from mqconform.spec.catalog import ID_PATTERN, Catalog
from mqconform.spec.sources import load_sections, sections_in_force

KEYWORD_WORDS = ("MUST", "SHOULD", "MAY")
LEVELS = ("MUST", "MUST NOT", "SHOULD", "SHOULD NOT", "MAY")
TESTABILITY = ("wire", "trace", "model", "client", "none")
_WORD = re.compile(r"[A-Za-z0-9_]+")
_MD_LINK = re.compile(r"\]\([^)]*\)")
_NAIVE_SPLIT = re.compile(r"(?<=[.:;?!])\s+|\s+-\s+|\|")


def _words(text: str) -> list[str]:
    return _WORD.findall(_MD_LINK.sub("]", text))


def keyword_sentences(lines: list[str]) -> list[str]:
    """The section's sentences holding a capitalised RFC 2119 keyword, split naively."""
    body = " ".join(line for line in lines[1:] if not line.lstrip().startswith("<a id="))
    body = _MD_LINK.sub("]", body).replace("\uf0a7", " - ")
    return [s for s in _NAIVE_SPLIT.split(body)
            if any(w in KEYWORD_WORDS for w in _words(s))]


def uncovered(lines: list[str], entry_texts: list[str]) -> list[str]:
    """Keyword sentences of a section none of whose keyword occurrences stands in an entry."""
    haystack = " " + " ".join(" ".join(_words(t)) for t in entry_texts) + " "
    missing = []
    for sentence in keyword_sentences(lines):
        words = _words(sentence)
        found = False
        for i, w in enumerate(words):
            if w not in KEYWORD_WORDS:
                continue
            before = " " + " ".join(words[max(0, i - 4):i + 1]) + " "
            after = " " + " ".join(words[i:i + 5]) + " "
            if before in haystack or after in haystack:
                found = True
                break
        if not found:
            missing.append(sentence.strip())
    return missing


def coverage(catalog: Catalog) -> dict:
    """Keyword sentences per section in the seeds, and those without an entry."""
    texts: dict[tuple[str, str], list[str]] = defaultdict(list)
    for r in catalog.active():
        texts[(r.doc, r.section)].append(" ".join(x for x in (r.context, r.text) if x))
    per_section: dict[str, dict] = {}
    missing_all: list[dict] = []
    total = 0
    for doc, sections in sections_in_force(load_sections()).items():
        for section in sections:
            found = keyword_sentences(section.lines)
            if not found:
                continue
            missing = uncovered(section.lines, texts[(doc, section.number)])
            total += len(found)
            per_section[f"{doc}/{section.number}"] = {"sentences": len(found),
                                                      "uncovered": len(missing)}
            missing_all += [{"doc": doc, "section": section.number, "sentence": m}
                            for m in missing]
    return {"keyword_sentences": total, "sections": per_section, "uncovered": missing_all}


def citation_figures(catalog: Catalog) -> dict:
    from mqconform.spec.trace import scan

    result = scan(catalog=catalog)
    cited_by_code = {c.id for c in result.citations if c.role == "code"}
    cited_by_model = {c.id for c in result.citations if c.path.startswith("model/")}
    cited_by_tests = {c.id for c in result.citations if c.role in ("test", "scenario")}
    groups = {
        "MS-MQRR 3.1.x": lambda r: r.doc == "MS-MQRR" and r.section.startswith("3.1."),
        "MS-MQMR 3.1.x": lambda r: r.doc == "MS-MQMR" and r.section.startswith("3.1."),
        "MS-MQDMPR 3.1.2-3.2": lambda r: r.doc == "MS-MQDMPR" and (
            r.section.startswith(("3.1.2", "3.1.3", "3.1.4", "3.1.5", "3.1.6", "3.1.7", "3.2"))),
    }
    out = {}
    for name, pick in groups.items():
        pool = [r for r in catalog.active()
                if pick(r) and r.testability in ("wire", "trace", "model")]
        cited = [r for r in pool if r.id in cited_by_code]
        in_model = [r for r in pool if r.id in cited_by_model]
        out[name] = {"entries": len(pool), "cited_by_code": len(cited),
                     "percent": round(100.0 * len(cited) / len(pool), 1) if pool else 0.0,
                     "cited_by_model": len(in_model),
                     "model_percent": round(100.0 * len(in_model) / len(pool), 1)
                     if pool else 0.0}
    return {"groups": out, "errors": [str(e) for e in result.errors],
            "cited_by_code": len(cited_by_code), "cited_by_tests": len(cited_by_tests)}


def compute(catalog: Catalog) -> dict:
    active = catalog.active()
    by_doc: dict[str, Counter] = defaultdict(Counter)
    by_section: dict[str, Counter] = defaultdict(Counter)
    for r in active:
        for key in ("entries", f"kind:{r.kind}", f"level:{r.level}",
                    f"testability:{r.testability}", f"actor:{r.actor}"):
            by_doc[r.doc][key] += 1
            by_section[f"{r.doc}/{r.section}"][key] += 1
        if r.normative:
            by_doc[r.doc]["normative"] += 1
            by_section[f"{r.doc}/{r.section}"]["normative"] += 1
    bad_ids = [r.id for r in catalog if not ID_PATTERN.match(r.id)]
    bad_testability = [r.id for r in active if r.testability not in TESTABILITY]
    none_without_reason = [r.id for r in active if r.testability == "none" and not r.reason]
    bad_level = [r.id for r in active if r.level not in LEVELS]
    cov = coverage(catalog)
    cites = citation_figures(catalog)
    checks = {
        "ids_well_formed": not bad_ids,
        "every_entry_has_testability": not bad_testability,
        "every_none_has_reason": not none_without_reason,
        "every_entry_has_level": not bad_level,
        "every_keyword_sentence_has_an_entry": not cov["uncovered"],
        "citations_resolve": not cites["errors"],
    }
    checks["ok"] = all(checks.values())
    return {
        "totals": {
            "entries": len(active),
            "retired": len(catalog) - len(active),
            "normative": sum(1 for r in active if r.normative),
            "steps": sum(1 for r in active if r.kind == "step"),
            "sentences": sum(1 for r in active if r.kind == "sentence"),
            "keyword_sentences_in_seeds": cov["keyword_sentences"],
            "keyword_sentences_without_entry": len(cov["uncovered"]),
        },
        "by_doc": {d: dict(c) for d, c in sorted(by_doc.items())},
        "by_section": {s: dict(c) for s, c in by_section.items()},
        "citations": cites,
        "problems": {"malformed_ids": bad_ids, "bad_testability": bad_testability,
                     "none_without_reason": none_without_reason, "bad_level": bad_level,
                     "uncovered_sentences": cov["uncovered"]},
        "checks": checks,
    }


def render(stats: dict, by_section: bool = False) -> None:
    import sys

    from rich.console import Console
    from rich.table import Table

    console = Console(highlight=False, width=None if sys.stdout.isatty() else 120)
    t = stats["totals"]
    console.print(f"[bold]Requirement catalog[/]: {t['entries']} entries "
                  f"({t['normative']} normative, {t['steps']} processing steps, "
                  f"{t['retired']} retired)")
    console.print(f"Keyword sentences in the seeds: {t['keyword_sentences_in_seeds']}, "
                  f"without an entry: {t['keyword_sentences_without_entry']}")
    rows = ([("entries", "entries"), ("normative", "normative (keyword in own text)"),
             ("kind:sentence", "sentences"), ("kind:step", "processing steps")]
            + [(f"level:{lv}", lv) for lv in LEVELS]
            + [(f"testability:{x}", f"testability {x}") for x in TESTABILITY]
            + [(f"actor:{a}", f"actor {a}") for a in ("server", "client", "queue manager")])

    def table(title: str, groups: dict[str, dict]) -> Table:
        tab = Table(title=title, title_justify="left")
        tab.add_column("")
        for name in groups:
            tab.add_column(name, justify="right")
        tab.add_column("total", justify="right")
        for key, label in rows:
            values = [groups[g].get(key, 0) for g in groups]
            tab.add_row(label, *(str(v) for v in values), str(sum(values)))
        return tab

    console.print(table("By document", stats["by_doc"]))
    if by_section:
        tab = Table(title="By section", title_justify="left")
        for h in ("section", "entries", "normative", "steps", "MUST", "SHOULD", "MAY",
                  "testability"):
            tab.add_column(h, justify="left" if h in ("section", "testability") else "right",
                           no_wrap=h == "section")
        for name, c in stats["by_section"].items():
            kinds = ", ".join(f"{x} {c[f'testability:{x}']}" for x in TESTABILITY
                              if c.get(f"testability:{x}"))
            tab.add_row(name, str(c["entries"]), str(c.get("normative", 0)),
                        str(c.get("kind:step", 0)),
                        str(c.get("level:MUST", 0) + c.get("level:MUST NOT", 0)),
                        str(c.get("level:SHOULD", 0) + c.get("level:SHOULD NOT", 0)),
                        str(c.get("level:MAY", 0)), kinds)
        console.print(tab)
    groups = stats["citations"]["groups"]
    tab = Table(title="Cited by code (entries with testability wire, trace or model)",
                title_justify="left")
    for h in ("", "entries", "by model/", "%", "by any code", "%"):
        tab.add_column(h, justify="right" if h else "left")
    for name, g in groups.items():
        tab.add_row(name, str(g["entries"]), str(g["cited_by_model"]),
                    f"{g['model_percent']:.1f}", str(g["cited_by_code"]), f"{g['percent']:.1f}")
    console.print(tab)
    console.print("Checks:")
    for name, ok in stats["checks"].items():
        if name != "ok":
            console.print(f"  {'[green]ok[/]  ' if ok else '[red]FAIL[/]'} {name}")
    for kind, items in stats["problems"].items():
        for item in items[:20]:
            console.print(f"  [red]{kind}[/]: {item}")
