"""Regenerating the catalog keeps IDs stable: never renumbered, retired instead."""

from __future__ import annotations

from mqconform.spec.generate import merge


def _e(section, text, kind="sentence", **kw):
    return {"doc": "MS-MQRR", "section": section, "title": "T", "kind": kind, "level": "MUST",
            "actor": "server", "testability": "wire", "notes": [], "text": text, "line": 1, **kw}


def test_fresh_entries_are_numbered_in_order_of_appearance_per_section():
    out = merge([_e("3.1.4.1", "A MUST."), _e("3.1.4.1", "B MUST."), _e("3.1.4.2", "C MUST.")], [])
    assert [e["id"] for e in out] == ["MS-MQRR/3.1.4.1/R1", "MS-MQRR/3.1.4.1/R2",
                                      "MS-MQRR/3.1.4.2/R1"]


def test_an_entry_keeps_its_id_when_text_before_it_appears():
    old = merge([_e("3.1.4.1", "A MUST."), _e("3.1.4.1", "B MUST.")], [])
    new = merge([_e("3.1.4.1", "Z MUST come first."), _e("3.1.4.1", "A MUST."),
                 _e("3.1.4.1", "B MUST.")], old)
    ids = {e["text"]: e["id"] for e in new}
    assert ids["A MUST."] == "MS-MQRR/3.1.4.1/R1"
    assert ids["B MUST."] == "MS-MQRR/3.1.4.1/R2"
    assert ids["Z MUST come first."] == "MS-MQRR/3.1.4.1/R3"


def test_a_vanished_entry_is_retired_not_deleted_and_its_number_not_reused():
    old = merge([_e("3.1.4.1", "A MUST."), _e("3.1.4.1", "B MUST.")], [])
    new = merge([_e("3.1.4.1", "B MUST."), _e("3.1.4.1", "C MUST.")], old)
    by_id = {e["id"]: e for e in new}
    assert by_id["MS-MQRR/3.1.4.1/R1"]["retired"] is True
    assert by_id["MS-MQRR/3.1.4.1/R3"]["text"] == "C MUST."


def test_a_small_edit_keeps_the_id():
    old = merge([_e("3.1.4.1", "The server MUST return the TCP port number for RemoteRead.")], [])
    new = merge([_e("3.1.4.1", "The server MUST return the TCP port number for the RemoteRead.")],
                old)
    assert new[0]["id"] == "MS-MQRR/3.1.4.1/R1" and not new[0].get("retired")


def test_curated_fields_survive_regeneration():
    old = merge([_e("3.1.4.1", "A MUST.")], [])
    old[0].update(testability="none", reason="checked by hand", curated=True)
    new = merge([_e("3.1.4.1", "A MUST.")], old)
    assert new[0]["testability"] == "none" and new[0]["reason"] == "checked by hand"
    assert new[0]["curated"] is True


def test_uncurated_fields_follow_the_rules():
    old = merge([_e("3.1.4.1", "A MUST.")], [])
    new = merge([_e("3.1.4.1", "A MUST.", testability="model")], old)
    assert new[0]["testability"] == "model"
