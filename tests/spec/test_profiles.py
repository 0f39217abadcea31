"""spec/profiles: a product's documented departures (product behaviour notes) as expectations
of a target file's ``profile:``."""

from __future__ import annotations

import pytest

from mqconform.cli import main
from mqconform.conformance.targetfile import TargetFileError, parse
from mqconform.spec import profiles
from mqconform.spec.catalog import load as load_catalog


def test_every_departure_names_a_note_its_requirement_carries():
    departures = profiles.load("windows")
    assert departures and profiles.check(departures, load_catalog()) == []


def test_a_departure_that_names_a_note_the_sentence_lacks_is_reported():
    wrong = profiles.Departure("MS-MQRR/3.1.4.7/R45", 99, "x")
    assert profiles.check([wrong], load_catalog()) == [
        "MS-MQRR/3.1.4.7/R45: its sentence carries no note <99>"]


def test_profile_windows_expects_each_departure_with_its_note_number_and_text():
    catalog = load_catalog()
    spec = parse({"endpoint": "model", "profile": "windows"}, "t.yaml", catalog)
    assert spec.profile == "windows"
    for d in profiles.load("windows"):
        doc = d.id.split("/", 1)[0]
        reason = spec.expectations[d.id]
        assert f"note <{d.note}>" in reason
        assert " ".join(catalog.note(doc, d.note)["text"].split())[:60] in reason


def test_the_target_files_own_reason_wins():
    [first, *_] = profiles.load("windows")
    spec = parse({"endpoint": "model", "profile": "windows",
                  "expectations": [{"id": first.id, "reason": "ours"}]}, "t.yaml")
    assert spec.expectations[first.id] == "ours"


@pytest.mark.parametrize("value", ["linux", 3])
def test_an_unknown_profile_is_one_line_naming_the_key(value):
    with pytest.raises(TargetFileError) as err:
        parse({"endpoint": "model", "profile": value}, "t.yaml")
    assert str(err.value).startswith("t.yaml: profile:") and "windows" in str(err.value)


def test_cli_lists_the_profile(capsys):
    assert main(["spec", "profile", "windows"]) == 0
    out = capsys.readouterr().out
    assert all(d.id in out for d in profiles.load("windows"))
    assert main(["spec", "profile", "nope"]) == 2
