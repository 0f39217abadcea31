"""index.html of a run: results.json (the source of truth) joined with the catalog, as one page
that opens from disk and fetches nothing (its one script is inline: the filter).

What it shows: the run (target, summary, wire.pcap); per document and per section the
requirements, the wire-testable ones covered by a passing case, and the cases with their
verdicts; every requirement with its text and its result on this target with links to the
cases (the code, scenarios and tests citing a requirement are in ``mqconform spec report``);
every case with its source, messages and call sequence, each call with its frames in wire.pcap
(anchor ``#frame-N`` on the call whose first frame is N). Failing cases come first and open.

A filter box (text, requirement ID or section; and a verdict) hides what does not match;
``index.html?q=3.1.4.7&verdict=fail`` opens filtered. Each case has a stable anchor
(``#case-<section>-<title>``, see ``case_anchor``): a link to it opens the case. The page reads
at 390 px wide (its tables scroll sideways).
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections import defaultdict
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup

from mqconform.conformance.junit import section_of, title_of
from mqconform.spec.catalog import load
from mqconform.spec.trace import scan

VERDICTS = ("pass", "fail", "inconclusive", "not-applicable", "error", "not-run")
DOC_ORDER = ("MS-MQRR", "MS-MQMR", "MS-MQDMPR")
_ORDER = {"fail": 5, "error": 4, "inconclusive": 3, "not-run": 2, "pass": 1,
          "not-applicable": 0}


def _section_key(section: str) -> tuple[int, ...]:
    return tuple(int(p) for p in section.split(".") if p.isdigit())


def _frames_text(frames: dict | None) -> str | None:
    if not frames:
        return None
    first, last = frames.get("first"), frames.get("last")
    if first is None:
        return None
    return f"frame {first}" if first == last else f"frames {first}\u2013{last}"


def _filter(frames: dict | None) -> str | None:
    """A Wireshark display filter for the frames."""
    if not frames or frames.get("first") is None:
        return None
    return f"frame.number >= {frames['first']} && frame.number <= {frames['last']}"


def _as_result(case: dict) -> SimpleNamespace:
    """The fields of a results.json case that conformance/junit.py reads off a CaseResult."""
    return SimpleNamespace(case=case["case"], source=case.get("source"),
                           ids=tuple(case.get("ids", ())))


def case_anchor(case: dict) -> str:
    """A case's anchor in index.html: its section and title (with example values), the same
    from run to run whatever else the run holds (``#case-MS-MQRR-3.1.4.7-a-receive-...``)."""
    view = _as_result(case)
    text = f"{section_of(view)} {title_of(view)}"
    return "case-" + re.sub(r"[^A-Za-z0-9.]+", "-", text).strip("-")


def _case_view(number: int, case: dict, pcap: str | None) -> dict:
    source = case.get("source") or {}
    anchor = case_anchor(case)
    calls = []
    for i, call in enumerate(case.get("calls", []), 1):
        frames = call.get("frames")
        request, response = (frames or {}).get("request"), (frames or {}).get("response")
        calls.append({
            **call, "n": i, "anchor": f"{anchor}-call-{i}",
            "frames_text": _frames_text(frames), "filter": _filter(frames),
            "frame_anchor": f"frame-{frames['first']}" if frames else None,
            "request": request, "response": response,
            "fault": (frames or {}).get("fault"), "tcp_stream": (frames or {}).get("tcp_stream"),
            "call_id": (frames or {}).get("call_id"),
        })
    return {
        "n": number, "anchor": anchor, "id": case["case"],
        "section": section_of(_as_result(case)),
        "name": source.get("name") or case["case"].rsplit("::", 1)[-1],
        "where": f"{source['path']}:{source['line']}" if source.get("path") else case["case"],
        "verdict": case["verdict"], "unexpected": case.get("unexpected", False),
        "expected_failure": case.get("expected_failure"),
        "expected_failure_passed": case.get("expected_failure_passed", False),
        "ids": case.get("ids", []), "messages": case.get("messages", []),
        "warnings": case.get("warnings", []), "calls": calls,
        "duration": case.get("duration", 0.0),
        "frames_text": _frames_text(case.get("frames")), "filter": _filter(case.get("frames")),
        "pcap": pcap,
    }


def report_data(results: dict, catalog: Any, trace: Any = None) -> dict:
    """The template's data from results.json's content, the catalog and a trace scan."""
    if trace is None:
        trace = scan(catalog=catalog)
    cites = trace.by_id()
    pcap = (results.get("wire") or {}).get("pcap")
    order = sorted(range(len(results.get("cases", []))),
                   key=lambda i: (-_ORDER.get(results["cases"][i]["verdict"], 0)
                                  if results["cases"][i]["verdict"] != "pass" else 0, i))
    cases = [_case_view(n, results["cases"][i], pcap) for n, i in enumerate(order, 1)]
    by_req: dict[str, list[dict]] = defaultdict(list)
    for case in cases:
        for rid in case["ids"]:
            by_req[rid].append(case)

    docs: dict[str, dict[str, list]] = defaultdict(lambda: defaultdict(list))
    titles: dict[tuple[str, str], str] = {}
    for r in catalog.active():
        docs[r.doc][r.section].append(r)
        titles[(r.doc, r.section)] = r.title

    documents = []
    for doc in sorted(docs, key=lambda d: (DOC_ORDER.index(d) if d in DOC_ORDER else 9, d)):
        sections, doc_cases = [], {}
        doc_counts = {"requirements": 0, "wire": 0, "wire_covered": 0, "with_cases": 0,
                      **{f"req_{v}": 0 for v in VERDICTS}}
        for section in sorted(docs[doc], key=_section_key):
            rows, section_cases = [], {}
            counts = {"requirements": 0, "wire": 0, "wire_covered": 0, "with_cases": 0}
            for r in docs[doc][section]:
                run = by_req.get(r.id, [])
                verdict = max((c["verdict"] for c in run), key=lambda x: _ORDER[x],
                              default=None)
                passing = any(c["verdict"] == "pass" for c in run)
                cited = cites.get(r.id, [])
                rows.append({
                    "id": r.id, "level": r.level, "kind": r.kind, "testability": r.testability,
                    "text": r.text, "context": r.context, "reason": r.reason,
                    "code": [c for c in cited if c.role == "code"],
                    "scenarios": [c for c in cited if c.role == "scenario"],
                    "tests": [c for c in cited if c.role == "test"],
                    "cases": run, "verdict": verdict,
                    "wire_covered": r.testability == "wire" and passing,
                })
                counts["requirements"] += 1
                counts["wire"] += r.testability == "wire"
                counts["wire_covered"] += r.testability == "wire" and passing
                counts["with_cases"] += bool(run)
                if verdict:
                    doc_counts[f"req_{verdict}"] += 1
                for c in run:
                    section_cases[c["n"]] = c
            verdicts = {v: sum(1 for c in section_cases.values() if c["verdict"] == v)
                        for v in VERDICTS}
            sections.append({"section": section, "title": titles[(doc, section)],
                             "anchor": f"{doc}/{section}", "rows": rows, **counts,
                             "cases": len(section_cases), "verdicts": verdicts,
                             "open": verdicts["fail"] > 0 or verdicts["inconclusive"] > 0})
            for k in counts:
                doc_counts[k] += counts[k]
            doc_cases.update(section_cases)
        doc_counts["cases"] = len(doc_cases)
        doc_counts["verdicts"] = {v: sum(1 for c in doc_cases.values() if c["verdict"] == v)
                                  for v in VERDICTS}
        doc_counts["percent"] = (round(100 * doc_counts["wire_covered"] / doc_counts["wire"], 2)
                                 if doc_counts["wire"] else 0.0)
        documents.append({"doc": doc, "sections": sections, **doc_counts,
                          "tested_sections": [s for s in sections if s["cases"]]})

    def when(t: float | None) -> str:
        if not t:
            return "?"
        return dt.datetime.fromtimestamp(t, dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")

    started, finished = results.get("started"), results.get("finished")
    return {
        "target": results.get("target", {}), "summary": results.get("summary", {}),
        "coverage": results.get("coverage", {}), "wire": results.get("wire") or {},
        "strict": results.get("strict"), "select": results.get("select") or [],
        "complete": results.get("complete"), "incomplete": results.get("incomplete") or [],
        "exit": results.get("exit") or {},
        "started": when(started), "finished": when(finished),
        "duration": round(finished - started, 2) if started and finished else None,
        "documents": documents, "cases": cases,
        "failing": [c for c in cases if c["verdict"] == "fail"],
        "trace_errors": len(getattr(trace, "errors", [])),
    }


#: what index.html shows when asked: the call tables of the cases that are not failing and the
#: requirement rows of the sections that are closed (the page stays small for the full suite)
DETAILS_JS = "index-details.js"


def render(results: dict, catalog: Any, trace: Any = None) -> tuple[str, str]:
    """index.html and index-details.js: a failing (or erring) case's calls and an open
    section's rows are in the page; the others are in the script (``MQ_DETAILS.calls[case
    anchor]``, ``MQ_DETAILS.rows[section anchor]``), read when a case or section opens."""
    env = Environment(loader=PackageLoader("mqconform.conformance", "templates"),
                      autoescape=select_autoescape(["html", "j2"]), trim_blocks=True,
                      lstrip_blocks=True)
    data = report_data(results, catalog, trace)
    calls, rows = env.get_template("calls.html.j2"), env.get_template("rows.html.j2")
    lazy: dict[str, dict[str, str]] = {"calls": {}, "rows": {}}
    for case in data["cases"]:
        if not case["calls"]:
            continue
        html = calls.render(c=case)
        case["inline_calls"] = case["verdict"] in ("fail", "error")
        if case["inline_calls"]:
            case["calls_html"] = Markup(html)
        else:
            lazy["calls"][case["anchor"]] = html
    for doc in data["documents"]:
        for section in doc["sections"]:
            html = rows.render(s=section)
            if section["open"]:
                section["rows_html"] = Markup(html)
            else:
                lazy["rows"][section["anchor"]] = html
    script = ("window.MQ_DETAILS = " + json.dumps(lazy, ensure_ascii=False, sort_keys=True)
              .replace("</", "<\\/") + ";\n")
    return env.get_template("index.html.j2").render(**data), script


def write_index(directory: Path, results: dict, catalog: Any = None, trace: Any = None
                ) -> Path:
    """Write ``directory``/index.html (and index-details.js) for a run's results.json content;
    returns the page's path."""
    if catalog is None:
        catalog = load()
    page, script = render(results, catalog, trace)
    path = Path(directory) / "index.html"
    path.write_text(page, encoding="utf-8")
    (Path(directory) / DETAILS_JS).write_text(script, encoding="utf-8")
    return path
