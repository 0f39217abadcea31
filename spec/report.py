"""The catalog report: ``catalog.json`` (the source of truth) and ``index.html`` (static, opens
from disk, no network): per document and section, every requirement with its text, level,
testability and the code, scenarios and tests that cite it."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup

from mqconform.spec.catalog import Catalog
from mqconform.spec.stats import compute
from mqconform.spec.trace import scan


def report_data(catalog: Catalog) -> dict:
    from mqconform.spec import choices as choice_registry
    from mqconform.spec import errata as errata_list

    result = scan(catalog=catalog)
    cites = result.by_id()
    errata = [e for e in errata_list.load() if not e.retired]
    choices = [c for c in choice_registry.load() if not c.retired]
    errata_of: dict[str, list[str]] = defaultdict(list)
    choices_of: dict[str, list[str]] = defaultdict(list)
    for e in errata:
        for rid in e.requirements:
            errata_of[rid].append(e.id)
    for ch in choices:
        for rid in ch.requirements:
            choices_of[rid].append(ch.id)
    docs: dict[str, dict[str, list[dict]]] = defaultdict(lambda: defaultdict(list))
    titles: dict[tuple[str, str], str] = {}
    for r in catalog.active():
        d = r.as_dict()
        d["citations"] = [{"path": c.path, "line": c.line, "role": c.role}
                          for c in cites.get(r.id, [])]
        d["notes_text"] = {n: (catalog.note(r.doc, n) or {}).get("text") for n in r.notes}
        d["errata"] = errata_of.get(r.id, [])
        d["choices"] = choices_of.get(r.id, [])
        docs[r.doc][r.section].append(d)
        titles[(r.doc, r.section)] = r.title
    stats = compute(catalog)
    return {
        "stats": stats,
        # where the documents contradict themselves (each linked from its requirements) and
        # where they leave the server free (spec/errata.yaml, spec/choices.yaml)
        "errata": [e.as_dict() for e in errata],
        "choices": [c.as_dict() for c in choices],
        "documents": [
            {"doc": doc, "sections": [
                {"section": s, "title": titles[(doc, s)], "requirements": reqs,
                 "cited": sum(1 for q in reqs if q["citations"])}
                for s, reqs in sorted(sections.items(),
                                      key=lambda kv: tuple(int(p) for p in kv[0].split(".")))]}
            for doc, sections in sorted(docs.items())],
    }


def filter_js() -> str:
    """The reports' filter script (templates/filter.js), inlined in each page."""
    return (Path(__file__).resolve().parent / "templates" / "filter.js").read_text(
        encoding="utf-8")


def write_report(catalog: Catalog, out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    data = report_data(catalog)
    json_path = out / "catalog.json"
    json_path.write_text(json.dumps(data, indent=1, ensure_ascii=False), encoding="utf-8")
    env = Environment(loader=PackageLoader("mqconform.spec", "templates"),
                      autoescape=select_autoescape(["html"]))
    html_path = out / "index.html"
    html_path.write_text(env.get_template("catalog.html.j2").render(
        **data, filter_js=Markup(filter_js())), encoding="utf-8")
    return [json_path, html_path]
