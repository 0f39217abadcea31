"""The traceability scanner: citations found, bad IDs are errors that fail the tests."""

from __future__ import annotations

from mqconform.spec.catalog import Catalog, Requirement, load
from mqconform.spec.trace import scan, scan_text


def _req(rid, retired=False):
    doc, section, _ = rid.split("/")
    return Requirement(id=rid, doc=doc, section=section, title="T", kind="sentence",
                       level="MUST", actor="server", testability="wire", text="x", line=1,
                       retired=retired)


CATALOG = Catalog({r.id: r for r in (_req("MS-MQRR/3.1.4.9/R4"),
                                     _req("MS-MQRR/3.1.4.9/R5", retired=True))})


def test_a_comment_citation_is_found():
    result = scan_text("x = 1  # MS-MQRR/3.1.4.9/R4\n", "model/a.py", "code", CATALOG)
    assert [(c.id, c.line, c.role) for c in result.citations] == [("MS-MQRR/3.1.4.9/R4", 1, "code")]
    assert result.errors == []


def test_marker_and_gherkin_tag_citations_are_found():
    text = '@pytest.mark.req("MS-MQRR/3.1.4.9/R4")\n  @MS-MQRR/3.1.4.9/R4 @smoke\n'
    result = scan_text(text, "tests/a.py", "test", CATALOG)
    assert [c.line for c in result.citations] == [1, 2]


def test_unknown_malformed_and_retired_ids_are_errors():
    text = ("# MS-MQRR/3.1.4.9/R99\n"  # unknown; trace: ignore
            "# MS-MQRR/3.1.4/R\n"  # malformed; trace: ignore
            "# MS-NOPE/1/R1\n"  # not one of our documents; trace: ignore
            "# MS-MQRR/3.1.4.9/R5\n")  # retired in CATALOG above
    problems = [e.problem for e in scan_text(text, "model/a.py", "code", CATALOG).errors]
    assert problems == ["unknown requirement ID", "malformed requirement ID",
                        "malformed requirement ID", "retired requirement ID"]


def test_references_to_other_documents_are_not_citations():
    text = "see [MS-RPCE](../MS-RPCE/MS-RPCE.md) and MS-MQMQ section 2.2.7\n"
    result = scan_text(text, "model/a.py", "code", CATALOG)
    assert result.citations == [] and result.errors == []


def test_a_line_marked_trace_ignore_is_skipped():
    result = scan_text("bad = 'MS-MQRR/9/R9'  # trace: ignore\n", "tests/a.py", "test", CATALOG)
    assert result.errors == []


def test_scan_walks_the_known_folders_only(tmp_path):
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "a.py").write_text("# MS-MQRR/3.1.4.9/R4\n")
    (tmp_path / "features").mkdir()
    (tmp_path / "features" / "x.feature").write_text(
        "@MS-MQRR/3.1.4.9/R99\nFeature: x\n")  # trace: ignore
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "b.py").write_text("# MS-MQRR/3.1.4.9/R99\n")  # trace: ignore
    result = scan(tmp_path, CATALOG)
    assert [c.path for c in result.citations] == ["model/a.py"]
    assert [(e.path, e.problem) for e in result.errors] == [
        ("features/x.feature", "unknown requirement ID")]


def test_the_repository_cites_only_known_requirements():
    result = scan(catalog=load())
    assert [str(e) for e in result.errors] == []
