"""spec/choices.py and spec/choices.yaml: every choice the code marks is registered with its
requirement IDs, and every switch of model/choices.py has its entry."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from mqconform.cli import main
from mqconform.model.choices import Choices
from mqconform.spec import choices
from mqconform.spec.catalog import load as load_catalog

SWITCHES = {f.name for f in dataclasses.fields(Choices)} - {"name"}


def test_every_choice_in_the_code_is_registered_with_catalog_ids():
    entries = choices.load()
    assert choices.check(entries, {r.id for r in load_catalog()}, switches=SWITCHES) == []
    assert len(entries) >= 59


def test_every_switch_has_an_entry_and_an_alternate():
    switched = {c.switch for c in choices.load() if c.switch}
    assert switched == {f.name for f in dataclasses.fields(Choices)} - {"name"}
    assert all(c.alternate for c in choices.load() if c.switch)


def _tree(tmp_path: Path, text: str) -> Path:
    for folder in choices.SCANNED:
        (tmp_path / folder).mkdir()
    (tmp_path / "model" / "thing.py").write_text(text)
    return tmp_path


def test_a_marked_choice_without_an_entry_is_reported(tmp_path):
    root = _tree(tmp_path, '"""A module.\n\nChoices where the documents leave room:\n\n'
                           '1. One way.\n2. Another.\n"""\nx = 1  # choice 3: a third\n')
    entry = choices.Choice("thing-one", "model/thing.py choice 1", "t", ("MS-MQRR/2.1/R1",),
                           "r", fixed="f")
    problems = choices.check([entry], None, root)
    assert "model/thing.py choice 2: no entry in choices.yaml" in problems
    assert "model/thing.py choice 3: no entry in choices.yaml" in problems
    assert not any("thing-one" in p for p in problems)


def test_an_unnumbered_choice_and_an_unmarked_entry_are_reported(tmp_path):
    root = _tree(tmp_path, "x = 1  # choice: one way\n# the documents leave this open\n")
    entry = choices.Choice("thing-gone", "model/thing.py choice 9", "t", ("MS-MQRR/2.1/R1",),
                           "r", fixed="f")
    problems = choices.check([entry], None, root)
    assert any("model/thing.py:1: 'choice:' without a number" in p for p in problems)
    assert any("model/thing.py:2: 'documents leave' with no numbered choice" in p
               for p in problems)
    assert "thing-gone: model/thing.py choice 9 is not marked in the code" in problems


def test_an_entry_names_an_unknown_id_or_switch(tmp_path):
    root = _tree(tmp_path, "x = 1  # choice 1\n")
    entry = choices.Choice("thing-one", "model/thing.py choice 1", "t",
                           ("MS-MQRR/9.9/R1",), "r", alternate="a",  # trace: ignore
                           switch="no_such_switch")
    problems = choices.check([entry], {"MS-MQRR/2.1/R1"}, root, switches=SWITCHES)
    assert "thing-one: MS-MQRR/9.9/R1 is not in the catalog" in problems  # trace: ignore
    assert any("switch 'no_such_switch' is not a field" in p for p in problems)
    assert "model/choices.py Choices.cleanup_ms: no entry switches it" in problems


def test_cli_prints_each_choice_with_its_sentences(capsys):
    assert main(["spec", "choices"]) == 0
    out = capsys.readouterr().out
    catalog = load_catalog()
    for c in choices.load():
        assert f"{c.id} ({c.at}): {c.title}" in out
        first = " ".join(catalog.get(c.requirements[0]).text.split())
        assert f"{c.requirements[0]}: {first[:40]}" in " ".join(out.split())
    assert out.rstrip().endswith("switched by --choices alternate")


def test_cli_json_carries_the_sentences(capsys):
    assert main(["spec", "choices", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [d["id"] for d in data] == [c.id for c in choices.load() if not c.retired]
    assert all(d["sentences"] and all(d["sentences"].values()) for d in data)
    assert all(("switch" in d) == ("alternate" in d) != ("fixed" in d) for d in data)


@pytest.mark.parametrize("text,needle", [
    ("- id: x\n", "missing or malformed field"),
    ("- {id: x, at: somewhere, title: t, reference: r, fixed: f}\n", "is not '<module>.py"),
    ("- {id: x, at: model/a.py choice 1, title: t, reference: r}\n", "give switch and "),
    ("[", "choices.yaml"),
])
def test_a_broken_registry_is_one_line(tmp_path, text, needle):
    path = tmp_path / "choices.yaml"
    path.write_text(text)
    with pytest.raises(choices.ChoicesError) as err:
        choices.load(path)
    assert needle in str(err.value) and "\n" not in str(err.value).strip()
