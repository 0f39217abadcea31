"""junit.xml of a run, as CI tools (Jenkins, GitLab, GitHub) show it best.

The file follows the JUnit schema Jenkins' xunit plugin validates with (its junit-4.xsd: a
``testsuites`` root; ``testsuite`` with ``name`` and ``tests`` required, then ``properties``,
``testcase``s, ``system-out``, ``system-err``; ``testcase`` with ``name`` required and
``classname``, ``time``, holding at most one ``skipped`` (text only), then ``error``s and
``failure``s (``message``, ``type``), then ``system-out``, ``system-err``). The project's copy
of those rules, tests/conformance/junit.xsd, validates every run's file in the tests.

Layout:

* one ``testsuite`` per document section, named ``MS-MQRR 3.1.4.7 R_StartReceive (Opnum 7)``,
  ``package`` the document: a scenario belongs to the section of its feature file, another case
  to the section most of its requirement IDs are in (the stateful machines: "stateful");
* ``testcase``: ``classname`` ``MS-MQRR.3.1.4.7``, ``name`` the scenario title with its example
  values (``[...]``), the same whatever the verdict; ``system-out`` lists every
  requirement the case covers, its source (feature file:line) and its frames in wire.pcap.

Verdicts (README "Reading the reports"):

=====================================  =====================================================
verdict                                JUnit
=====================================  =====================================================
pass                                   no child: a pass
fail, unexpected                       ``failure`` type "non-conformant": message = the
                                       failed requirement IDs and the first problem; body =
                                       every failed check (step, requirement and its
                                       sentence, expected, observed) and the frames
fail, expected (target file)           ``skipped``: "expected failure: REASON"
fail, SHOULD-level (not --strict)      ``skipped``: "warning (SHOULD): ..."
inconclusive                           ``error`` type "inconclusive" (a precondition could not
                                       be set up: never a pass); ``skipped`` with
                                       --allow-inconclusive
not applicable                         ``skipped``: "not applicable: REASON"
not run                                ``skipped``: "not run: REASON" (the run is incomplete:
                                       exit 3, and the root's system-err says why)
error (mqconform's own)                ``error`` type "mqconform": the exception and its
                                       traceback file
=====================================  =====================================================
"""

from __future__ import annotations

import re
import socket
import xml.etree.ElementTree as ET
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from mqconform.conformance import verdicts as v
from mqconform.spec.catalog import natural_key as id_key

STATEFUL = "stateful"


def section_of(result: v.CaseResult) -> str:
    """The section a case reports under (``MS-MQRR`` + ``/`` + ``3.1.4.7``)."""
    path = (result.source or {}).get("path", "")
    found = re.search(r"features/(MS-MQ\w+)/([\d.]+)\.feature$", path)
    if found:
        return f"{found.group(1)}/{found.group(2)}"
    if "test_stateful" in result.case:
        return STATEFUL
    sections = Counter(rid.rsplit("/", 1)[0] for rid in result.ids)
    if not sections:
        return "mqconform"
    best = max(sections.values())
    return min((s for s, n in sections.items() if n == best), key=id_key)


def title_of(result: v.CaseResult) -> str:
    """The scenario title (a Python case: its name in words) with its example values."""
    source = result.source or {}
    name = source.get("name") or result.case.rsplit("::", 1)[-1]
    name = name.removeprefix("Scenario Outline: ").removeprefix("Scenario: ")
    if name.startswith("test_"):
        name = name[5:].replace("_", " ")
    name = name.split("[", 1)[0].strip()
    params = re.search(r"\[(.*)\]$", result.case)
    return f"{name} [{params.group(1)}]" if params else name


def _frames(result: v.CaseResult) -> str:
    f = result.frames
    return f"frames {f['first']}-{f['last']} of wire.pcap" if f else "no frames"


def _failure_body(result: v.CaseResult) -> str:
    lines = list(result.messages)
    for failure in result.failures:
        step = failure.get("step") or {}
        lines += ["", f"step: {step.get('path', '?')}:{step.get('line', '?')} "
                      f"{step.get('text', '')}".rstrip()]
        for r in failure["requirements"]:
            lines.append(f"requirement: {r['id']}" + (f" - {r['text']}" if r.get("text")
                                                     else ""))
        lines += [f"expected: {failure.get('expected') or '(the requirement above)'}",
                  f"observed: {failure.get('observed')}"]
    lines += ["", _frames(result)]
    return "\n".join(lines)


def _case(parent: ET.Element, result: v.CaseResult, section: str,
          allow_inconclusive: bool) -> str:
    """One testcase; returns its JUnit kind: pass, failure, error or skipped."""
    classname = section.replace("/", ".")
    name = title_of(result)
    # the name stays the same whatever the verdict (CI tools keep a test's history by it);
    # the requirement IDs a case failed are in its failure message
    failed = sorted(result.failed_ids, key=id_key) if result.verdict == v.FAIL else []
    el = ET.SubElement(parent, "testcase", classname=classname, name=name,
                       time=f"{result.duration:.3f}")
    first = next(iter((result.messages or [""])[0].splitlines()), "")
    kind = "pass"
    if result.verdict == v.FAIL and result.unexpected:
        ET.SubElement(el, "failure", type="non-conformant",
                      message=f"{' '.join(failed)}: {first}").text = _failure_body(result)
        kind = "failure"
    elif result.verdict == v.FAIL:
        what = (f"expected failure: {result.expected_failure}" if result.expected_failure
                else "warning (SHOULD): " + "; ".join(result.warnings))
        ET.SubElement(el, "skipped").text = what + "\n\n" + _failure_body(result)
        kind = "skipped"
    elif result.verdict == v.INCONCLUSIVE and not allow_inconclusive:
        ET.SubElement(el, "error", type="inconclusive",
                      message=f"inconclusive: {first}").text = "\n".join(result.messages)
        kind = "error"
    elif result.verdict == v.ERROR:
        ET.SubElement(el, "error", type="mqconform",
                      message=first).text = "\n".join(result.messages)
        kind = "error"
    elif result.verdict in (v.INCONCLUSIVE, v.NOT_APPLICABLE, v.NOT_RUN):
        label = {v.INCONCLUSIVE: "inconclusive", v.NOT_APPLICABLE: "not applicable",
                 v.NOT_RUN: "not run"}[result.verdict]
        text = first.removeprefix("not run: ")
        ET.SubElement(el, "skipped").text = f"{label}: {text}"
        kind = "skipped"
    source = result.source or {}
    ET.SubElement(el, "system-out").text = "\n".join([
        f"verdict: {result.verdict}",
        "requirements: " + " ".join(sorted(result.ids, key=id_key)),
        f"source: {source.get('path', '?')}:{source.get('line', '?')}",
        f"case: {result.case}",
        _frames(result)])
    return kind


def write(path: Path, doc: dict, results: list[v.CaseResult], catalog: Any,
          allow_inconclusive: bool = False) -> Path:
    """junit.xml for a run: ``doc`` is results.json's content (target, times, completion)."""
    titles = {}
    for r in catalog:
        titles.setdefault(f"{r.doc}/{r.section}", r.title)
    by_section: dict[str, list[v.CaseResult]] = defaultdict(list)
    for r in results:
        by_section[section_of(r)].append(r)
    target = doc.get("target") or {}
    root = ET.Element("testsuites", name=f"mqconform: {target.get('name')}")
    totals = Counter()
    for n, section in enumerate(sorted(by_section, key=id_key)):
        cases = by_section[section]
        doc_name, _, number = section.partition("/")
        title = titles.get(section, "")
        suite = ET.SubElement(root, "testsuite", name=f"{doc_name} {number} {title}".strip(),
                              id=str(n), package=doc_name,
                              hostname=socket.gethostname() or "localhost")
        props = ET.SubElement(suite, "properties")
        ET.SubElement(props, "property", name="target", value=str(target.get("name")))
        ET.SubElement(props, "property", name="section", value=section)
        kinds = Counter(_case(suite, r, section, allow_inconclusive) for r in cases)
        suite.set("tests", str(len(cases)))
        suite.set("failures", str(kinds["failure"]))
        suite.set("errors", str(kinds["error"]))
        suite.set("skipped", str(kinds["skipped"]))
        suite.set("time", f"{sum(r.duration for r in cases):.3f}")
        totals.update(kinds)
        totals["tests"] += len(cases)
    root.set("tests", str(totals["tests"]))
    root.set("failures", str(totals["failure"]))
    root.set("errors", str(totals["error"]))
    root.set("time", f"{sum(r.duration for r in results):.3f}")
    if doc.get("incomplete"):
        # the root holds no system-err in the schema: the run's state goes in a suite of its
        # own, with no case, so that every CI tool shows it
        state = ET.SubElement(root, "testsuite", name="mqconform run", tests="0",
                              id=str(len(by_section)), package="mqconform")
        ET.SubElement(state, "system-err").text = (
            f"incomplete (exit {doc['exit']['code']}): " + "; ".join(doc["incomplete"]))
    ET.indent(root)
    ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)
    return path


__all__ = ["id_key", "section_of", "title_of", "write"]
