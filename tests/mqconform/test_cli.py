"""The mqconform command, run as a user runs it."""

from __future__ import annotations

import csv
import io
import json
import re

ID_RE = re.compile(r"^MS-MQ(RR|MR|DMPR)/\d+(\.\d+)*/R\d+$")


def test_export_json_parses_and_ids_are_unique_and_well_formed(mqconform):
    proc = mqconform("spec", "export", "--format", "json", check=True)
    entries = json.loads(proc.stdout)
    ids = [e["id"] for e in entries]
    assert len(ids) == len(set(ids)) > 1900
    assert all(ID_RE.match(i) for i in ids)


def test_export_csv_has_the_same_entries_as_json(mqconform):
    rows = list(csv.DictReader(io.StringIO(mqconform("spec", "export", "--format", "csv",
                                                     check=True).stdout)))
    entries = json.loads(mqconform("spec", "export", check=True).stdout)
    assert [r["id"] for r in rows] == [e["id"] for e in entries]
    assert {"testability", "reason", "notes", "actor", "level"} <= set(rows[0])


def test_show_prints_text_section_and_source(mqconform):
    out = mqconform("spec", "show", "MS-MQRR/3.1.4.1/R1", check=True).stdout
    assert "R_GetServerPort" in out
    assert "The server MUST return the TCP port number" in out
    assert "spec/documents/MS-MQRR/3.1.4.1.md:" in out


def test_show_prints_the_product_behaviour_notes_cited(mqconform):
    entries = json.loads(mqconform("spec", "export", check=True).stdout)
    rid = next(e["id"] for e in entries if e["doc"] == "MS-MQRR" and e["notes"])
    data = json.loads(mqconform("spec", "show", rid, "--format", "json", check=True).stdout)
    assert data["product_notes"] and all(v and v["text"] for v in data["product_notes"].values())
    assert data["citations"] == [] or all("path" in c for c in data["citations"])


def test_show_of_an_unknown_id_exits_2_with_one_line_and_no_traceback(mqconform):
    for rid in ("MS-NOPE/1/R1", "MS-MQRR/3.1.4.2/R999", "garbage"):  # trace: ignore
        proc = mqconform("spec", "show", rid)
        assert proc.returncode == 2
        assert proc.stdout == ""
        assert len(proc.stderr.strip().splitlines()) == 1
        assert "Traceback" not in proc.stderr


def test_list_filters_by_document_section_prefix_level_and_testability(mqconform):
    out = mqconform("spec", "list", "--doc", "MS-MQRR", "--section", "3.1.4.7", "--level",
                    "MUST", "--testability", "wire", check=True).stdout
    rows = [line.split("\t") for line in out.splitlines()]
    assert rows
    for rid, level, testability, _ in rows:
        assert rid.startswith("MS-MQRR/3.1.4.7/R")  # a prefix; trace: ignore
        assert level == "MUST" and testability == "wire"


def test_section_filter_is_a_prefix_of_whole_section_numbers(mqconform):
    out = mqconform("spec", "list", "--doc", "MS-MQRR", "--section", "3.1.4.1",
                    check=True).stdout
    sections = {line.split("\t")[0].split("/")[1] for line in out.splitlines()}
    assert sections == {"3.1.4.1"}  # not 3.1.4.10 .. 3.1.4.15


def test_list_of_none_testability_shows_entries_with_reasons(mqconform):
    data = json.loads(mqconform("spec", "list", "--testability", "none", "--format", "json",
                                check=True).stdout)
    assert data and all(e["reason"] for e in data)


def test_stats_passes_its_checks_and_reports_the_counts(mqconform):
    proc = mqconform("spec", "stats")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "without an entry: 0" in proc.stdout
    data = json.loads(mqconform("spec", "stats", "--format", "json", check=True).stdout)
    assert data["totals"]["normative"] >= 835
    assert set(data["by_doc"]) == {"MS-MQDMPR", "MS-MQMR", "MS-MQRR"}
    assert data["checks"]["ok"] is True


def test_trace_of_the_repository_is_clean(mqconform):
    proc = mqconform("spec", "trace")
    assert proc.returncode == 0, proc.stderr
    assert "0 errors" in proc.stdout


def test_trace_of_a_tree_with_a_bad_id_fails(mqconform, tmp_path):
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "x.py").write_text("# MS-MQRR/3.1.4.2/R999\n")  # trace: ignore
    proc = mqconform("spec", "trace", "--root", str(tmp_path))
    assert proc.returncode == 1
    assert "model/x.py:1: unknown requirement ID" in proc.stderr


def test_report_writes_json_and_html(mqconform, tmp_path):
    mqconform("spec", "report", "--out", str(tmp_path / "r"), check=True)
    data = json.loads((tmp_path / "r" / "catalog.json").read_text())
    assert data["stats"]["totals"]["entries"] > 1900
    html = (tmp_path / "r" / "index.html").read_text()
    assert 'id="MS-MQRR/3.1.4.7/R1"' in html
    # nothing fetched: one inline script (the filter), no address to load anything from
    assert html.count("<script") == 1 and "<script>" in html and "<link" not in html
    assert not re.search(r'(?:src|href)\s*=\s*"(?:https?:)?//', html)
    # each erratum and each choice is linked from the requirements it touches, and back
    assert {e["id"] for e in data["errata"]} >= {"tidy-purges-queues", "total-bytes"}
    assert 'href="#erratum-tidy-purges-queues"' in html
    assert 'id="erratum-tidy-purges-queues"' in html
    assert 'href="#choice-mqrr-cleanup-timer"' in html or any(
        f'href="#choice-{c["id"]}"' in html for c in data["choices"])
    linked = [r for d in data["documents"] for s in d["sections"] for r in s["requirements"]
              if r["errata"]]
    assert linked and all(f'href="#{r["id"]}"' in html for r in linked)


def test_bad_arguments_exit_2_in_one_line(mqconform):
    for args in (("spec", "list", "--level", "OFTEN"), ("nope",), ("spec", "export",
                                                                   "--format", "xml")):
        proc = mqconform(*args)
        assert proc.returncode == 2, args
        assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr


def test_version(mqconform):
    assert mqconform("--version", check=True).stdout.startswith("mqconform ")


def test_folders_named_like_the_package_in_the_working_directory_are_never_imported(tmp_path):
    """A user's working directory may hold server/, model/, spec/, wire/ or a checkout named
    mqconform/: the command, the reference server it starts and the trace validator's Spark
    workers import the installed package only (each folder here raises if imported)."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    for name in ("mqconform", "server", "model", "spec", "wire", "conformance"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text(f"raise RuntimeError('{name}/ imported')\n")
    command = Path(sys.executable).with_name("mqconform")
    done = subprocess.run([str(command), "run", "--select", "MS-MQRR/3.1.4.8",  # trace: ignore
                           "--report-dir", "r"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    verdicts = {c["verdict"] for c in
                json.loads((tmp_path / "r" / "results.json").read_text())["cases"]}
    assert verdicts == {"pass"}
    # the trace validator's Python workers start there too
    from mqconform.conformance.golden import GOLDEN

    golden = sorted((GOLDEN / "scenarios" / "MS-MQRR" / "3.1.4.8").glob("*.pcap"))[0]
    done = subprocess.run([str(command), "captures", "validate", str(golden), "--out", "v"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode in (0, 1) and "0 decoding error(s)" in done.stdout, \
        done.stdout[-2000:] + done.stderr[-2000:]
