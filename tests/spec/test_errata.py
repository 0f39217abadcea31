"""spec/errata.py and spec/errata.yaml: the documents' contradictions as data."""

from __future__ import annotations

import json

import pytest

from mqconform.cli import main
from mqconform.spec import errata
from mqconform.spec.catalog import load as load_catalog

#: the contradictions the errata list must hold at least (issue [3/7] item 5)
REQUIRED = {"move-message-lookup-identifier", "lookup-receive-prev-lookup-id",
            "authentication-level-bits", "cancel-receive-across-handles",
            "cleanup-timer-vs-waiting-receive", "lpwszaction-not-a-string",
            "tidy-purges-queues", "total-bytes", "close-queue-unacknowledged-message",
            "cursor-wait-time-expired-end", "transactional-receive-unknown-transaction",
            "journal-copy-arrival-time"}


def test_every_quotation_is_in_its_document_every_id_in_the_catalog_every_function_real():
    entries = errata.load()
    assert errata.check(entries, {r.id for r in load_catalog()}) == []


def test_the_list_holds_the_known_contradictions():
    ids = {e.id for e in errata.load() if not e.retired}
    assert REQUIRED <= ids, sorted(REQUIRED - ids)


def test_a_misquoted_reading_is_reported():
    [first, *_] = errata.load()
    wrong = errata.Erratum(first.id, first.title, ("MS-MQRR/9.9.9/R1",),  # trace: ignore
                           (first.readings[0], errata.Reading(
                               "MS-MQRR 3.1.4.7", "002_008b2e4e69850712.txt",
                               "The server MUST ignore every call.")),
                           first.model, ("mqconform.model.mqrr:no_such_function",), first.suite)
    problems = errata.check([wrong], {r.id for r in load_catalog()})
    assert any("not found verbatim" in p for p in problems)
    assert any("MS-MQRR/9.9.9/R1 is not in the catalog" in p for p in problems)  # trace: ignore
    assert any("no_such_function does not name a function" in p for p in problems)


def test_cli_prints_each_erratum_with_both_readings(capsys):
    assert main(["spec", "errata"]) == 0
    out = capsys.readouterr().out
    for e in errata.load():
        assert f"{e.id}: {e.title}" in out
        for r in e.readings:
            assert r.source in out
    assert out.rstrip().endswith("retired)")


def test_cli_json_is_the_file_as_data(capsys):
    assert main(["spec", "errata", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [d["id"] for d in data] == [e.id for e in errata.load() if not e.retired]
    assert all(len(d["readings"]) >= 2 and d["requirements"] and d["model"] for d in data)


def test_a_broken_errata_file_is_one_line(tmp_path):
    bad = tmp_path / "errata.yaml"
    bad.write_text("- id: x\n  title: y\n")
    with pytest.raises(errata.ErrataError, match=r"errata.yaml entry 1: missing or malformed"):
        errata.load(bad)
