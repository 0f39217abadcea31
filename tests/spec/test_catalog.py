"""The catalog on disk: well-formed, complete against the documents, and up to date."""

from __future__ import annotations

import collections

import pytest
import yaml

from mqconform.spec.catalog import CATALOG_DIR, DOCS, ID_PATTERN, UnknownRequirement, load
from mqconform.spec.generate import CATALOG_DIR as GEN_CATALOG_DIR
from mqconform.spec.generate import DOCUMENTS_DIR, catalog_files, read_existing, stale
from mqconform.spec.stats import compute, keyword_sentences, uncovered


@pytest.fixture(scope="module")
def raw_entries() -> list[dict]:
    out = []
    for doc in DOCS:
        data = yaml.safe_load((CATALOG_DIR / f"{doc}.yaml").read_text(encoding="utf-8"))
        assert data["document"] == doc
        out += data["requirements"]
    return out


def test_ids_are_unique_across_the_catalog_files(raw_entries):
    counts = collections.Counter(e["id"] for e in raw_entries)
    assert [i for i, n in counts.items() if n > 1] == []


def test_ids_name_their_document_and_section(raw_entries):
    for e in raw_entries:
        assert ID_PATTERN.match(e["id"]), e["id"]
        assert e["id"].startswith(f"{e['doc']}/{e['section']}/R")


def test_every_entry_has_the_fields_the_issue_lists(raw_entries):
    for e in raw_entries:
        for key in ("id", "doc", "section", "title", "level", "actor", "text", "testability",
                    "notes", "kind", "line"):
            assert key in e, (e["id"], key)
        assert e["level"] in ("MUST", "MUST NOT", "SHOULD", "SHOULD NOT", "MAY")
        assert e["actor"] in ("server", "client", "queue manager")
        assert e["testability"] in ("wire", "trace", "model", "client", "none")
        assert e["testability"] != "none" or e.get("reason"), e["id"]
        assert e["kind"] in ("sentence", "step")


def test_entries_point_at_their_line_in_the_section_file():
    catalog = load()
    for r in catalog.active():
        path = catalog.section_file(r.doc, r.section)
        assert path is not None and path.is_file(), r.id
        lines = path.read_text(encoding="utf-8").split("\n")
        assert 1 <= r.line <= len(lines), r.id


def test_every_keyword_sentence_of_every_section_has_an_entry():
    stats = compute(load())
    assert stats["totals"]["keyword_sentences_in_seeds"] >= 835
    assert stats["problems"]["uncovered_sentences"] == []


def test_at_least_835_normative_entries_plus_the_processing_steps():
    totals = compute(load())["totals"]
    assert totals["normative"] >= 835
    assert totals["steps"] > 1000


def test_coverage_check_notices_a_missing_sentence():
    lines = ["## 9.9 Made up", "The server MUST do A. The client SHOULD do B."]
    assert len(keyword_sentences(lines)) == 2
    assert uncovered(lines, ["The server MUST do A."]) == ["The client SHOULD do B."]


def test_the_catalog_is_what_the_generator_gives():
    docs, catalog = catalog_files(read_existing())
    assert stale(DOCUMENTS_DIR, docs) == []
    assert stale(GEN_CATALOG_DIR, catalog) == []


def test_lookup_of_an_unknown_or_malformed_id_raises_with_a_message():
    catalog = load()
    with pytest.raises(UnknownRequirement, match="malformed"):
        catalog.get("MS-NOPE/1/R1")  # trace: ignore
    with pytest.raises(UnknownRequirement, match="unknown"):
        catalog.get("MS-MQRR/3.1.4.2/R999")  # trace: ignore


def test_well_known_requirements_are_in_the_catalog():
    catalog = load()
    texts = {r.text for r in catalog.active() if r.doc == "MS-MQRR" and r.section == "3.1.4.1"}
    assert "The server MUST return the TCP port number for the RemoteRead RPC interface." in texts
    steps = [r for r in catalog.active() if r.section == "3.1.7.1.12" and r.kind == "step"]
    assert any("MQ_ERROR_TRANSACTION_SEQUENCE" in r.text for r in steps)
    mqmr = [r for r in catalog.active() if r.doc == "MS-MQMR" and r.section == "3"]
    assert any("administrator privileges" in r.text for r in mqmr)


def test_diff_artifacts_are_not_normative_entries():
    catalog = load()
    assert not [r for r in catalog.active() if "MAYcan" in r.text or "maycan" in r.text]


def test_every_list_item_of_a_processing_list_is_a_step():
    """In a section with processing steps, every list item from the first step on is the text of
    some step entry (an item lost to the paragraph rules would be a rule with no ID)."""
    import re

    from mqconform.spec.extract import candidates, has_steps, plain
    from mqconform.spec.sources import load_sections, sections_in_force, seed_by_file

    words = lambda t: " ".join(re.findall(r"\w+", t))  # noqa: E731
    missing = []
    for doc, sections in sections_in_force(load_sections()).items():
        for s in sections:
            if not has_steps(doc, s.number):
                continue
            form = seed_by_file(s.seed).form
            found = candidates(s, form)
            steps = [c for c in found if c.kind == "step"]
            if not steps:
                continue
            text = " ".join(words(c.text) for c in found)
            item = re.compile(r"^\s*- " if form == "markdown" else r"^ {1,2}\S|^\uf0a7")
            for n, line in enumerate(s.lines, 1):
                if n < steps[0].line or not item.match(line):
                    continue
                w = words(plain(line.lstrip(" -\uf0a7")))
                if re.fullmatch(r'\s*"[^"]*"\.?\s*', line.strip(" \uf0a7")):
                    continue  # a quoted value in a table cell (MS-MQMR 3.1.4.1), not a step
                if w and w not in text:
                    missing.append(f"{doc}/{s.number}:{n}: {line.strip()[:80]}")
    assert missing == []
