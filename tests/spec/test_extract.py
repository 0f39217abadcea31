"""The rules that turn section text into catalog entries."""

from __future__ import annotations

import pytest

from mqconform.spec.extract import (
    TESTABILITY,
    TESTABILITY_RULES,
    actor_of,
    blocks_markdown,
    blocks_pdf,
    candidates,
    clauses,
    has_steps,
    is_step_lead_in,
    level_of,
    notes_of,
    plain,
    product_notes,
    sentences,
)
from mqconform.spec.extract import testability_of as classify
from mqconform.spec.sources import Section


def test_plain_drops_markdown_links_and_emphasis():
    text = "The [**RPC**](#gt_remote-procedure-call-rpc) **port** per [MS-RPCE](../MS-RPCE/MS-RPCE.md) *x*"
    assert plain(text) == "The RPC port per MS-RPCE x"


def test_plain_keeps_the_brackets_of_a_bibliography_link():
    assert plain("as defined in [[RFC2119]](https://go.microsoft.com/fwlink/?LinkId=90317).") == (
        "as defined in [RFC2119].")


def test_plain_handles_links_whose_target_has_parentheses():
    assert plain("see [3.1.4.4)](#Section_3.1.4.4) now") == "see 3.1.4.4) now"


def test_sentences_split_at_full_stops_before_a_capital():
    text = "The server MUST return 0. If this port is in use, the server SHOULD increment it."
    assert sentences(text) == ["The server MUST return 0.",
                               "If this port is in use, the server SHOULD increment it."]


def test_product_note_markers_stay_with_their_sentence():
    text = "The client MAY use the returned value.<13> The client MUST call it."
    assert sentences(text) == ["The client MAY use the returned value.<13>",
                               "The client MUST call it."]


def test_sentences_do_not_split_after_abbreviations_or_section_numbers():
    text = "Use a queue, e.g. The Queue in section 3.1.4.7. Then stop."
    assert sentences(text) == ["Use a queue, e.g. The Queue in section 3.1.4.7.", "Then stop."]


def test_semicolon_clauses_each_with_a_keyword_are_separate_requirements():
    s = "this parameter MUST be set to FALSE; otherwise, it MUST be set to TRUE."
    assert clauses(s) == ["this parameter MUST be set to FALSE;",
                          "otherwise, it MUST be set to TRUE."]


def test_semicolon_clause_without_keyword_stays_with_its_sentence():
    s = "the field MUST be zero; this is reserved."
    assert clauses(s) == [s]


@pytest.mark.parametrize("text,level", [
    ("The server MUST NOT set it.", "MUST NOT"),
    ("The server SHOULD NOT set it.", "SHOULD NOT"),
    ("The server MAY<14> use it.", "MAY"),
    ("The server SHOULD<16> be ignored.", "SHOULD"),
    ("A client can perform this.", None),
    ("The server must do it.", None),
])
def test_level_is_the_first_capitalised_keyword(text, level):
    assert level_of(text) == level


def test_notes_are_the_cited_product_behaviour_numbers():
    assert notes_of("SHOULD<16> be ignored; MAY<19> be <16>") == [16, 19]


def test_markdown_blocks_are_paragraphs_items_and_table_rows():
    lines = ["#### 3.1.4.2 R_OpenQueue", "", "First line", "continues here.", "",
             "- an item", "| Value | Meaning |", "| --- | --- |",
             "| PEEK_ACCESS 0x00000020 | Peek only. |", '<a id="x"></a>']
    kinds = [(b.kind, b.text) for b in blocks_markdown(lines)]
    assert kinds == [("heading", "3.1.4.2 R_OpenQueue"), ("para", "First line continues here."),
                     ("item", "an item"), ("row", "Value: Meaning"),
                     ("row", "PEEK_ACCESS 0x00000020: Peek only.")]


def test_pdf_items_start_with_a_space_or_the_bullet_glyph():
    lines = ["3.1.7.1.12 Dequeue Message End", "", " If iQueueDesc.QueueReference is NULL:",
             "", " Set rStatus to X.", "\uf0a7 Take no further action."]
    assert [b.kind for b in blocks_pdf(lines)] == ["heading", "item", "item", "item"]


def test_pdf_wrapped_lines_continue_their_block_across_stray_blank_lines():
    lines = [" iQueueDesc: A reference to an OpenQueueDescriptor ADM element instance", "",
             "that specifies the Queue."]
    blocks = blocks_pdf(lines)
    assert len(blocks) == 1
    assert blocks[0].text.endswith("instance that specifies the Queue.")


def test_pdf_new_paragraph_after_a_finished_sentence_and_a_blank_line():
    lines = ["The queue manager MUST do X.", "", "The next paragraph starts."]
    assert len(blocks_pdf(lines)) == 2


def test_pdf_definition_lines_start_a_new_paragraph_without_a_blank_line():
    lines = ["hBind: An RPC binding handle.", "cp: The length MUST be at least 1."]
    assert [b.text for b in blocks_pdf(lines)] == lines


def test_pdf_table_rows_naming_packet_fields_are_separate_blocks():
    lines = ["SecurityHeader.Flags.AU This field MUST be set to zero", "",
             "SecurityHeader.Flags.AS This field MUST be set to zero"]
    assert len(blocks_pdf(lines)) == 2


@pytest.mark.parametrize("text", [
    "When processing this call, the server MUST:",
    "When processing this call, the server MUST do the following:",
    "The queue manager MUST perform the following actions to process this event:",
    "If the rStatus value returned is MQ_OK, the server MUST:",
    "While processing this call, the server MUST generate the following events specified in [MS-MQDMPR]:",
])
def test_step_lead_ins(text):
    assert is_step_lead_in(text)


@pytest.mark.parametrize("text", [
    "This event MUST be generated with the following arguments:",
    "This enumeration MUST have one of the following values:",
    "The client MUST call the R_StartReceive method and MUST specify the following parameter values:",
    "The server MUST return the port.",
])
def test_not_step_lead_ins(text):
    assert not is_step_lead_in(text)


def test_step_sections_are_the_processing_rules_the_issue_names():
    assert has_steps("MS-MQRR", "3.1.4.7") and has_steps("MS-MQRR", "3.1.6.2")
    assert has_steps("MS-MQMR", "3.1.4.1") and has_steps("MS-MQDMPR", "3.2.7.4")
    assert has_steps("MS-MQDMPR", "3.1.7.1.12") and has_steps("MS-MQDMPR", "3.1.4.3")
    assert not has_steps("MS-MQRR", "2.2.6") and not has_steps("MS-MQRR", "3.2.4")
    assert not has_steps("MS-MQDMPR", "3.1.1.2") and not has_steps("MS-MQRR", "3.2.4.1")


def _section(doc, number, lines):
    return Section(doc, number, "Title", "x", 1, lines)


def test_each_item_under_a_lead_in_is_a_step_and_the_list_ends_at_a_paragraph():
    lines = ["#### 3.1.4.3 R_CloseQueue", "", "When processing this call, the server MUST:", "",
             "- Close the queue.", "- If not found, return an error.", "",
             "The client MUST NOT reuse the handle."]
    found = [(c.kind, c.level, c.text) for c in candidates(_section("MS-MQRR", "3.1.4.3", lines),
                                                            "markdown")]
    assert found == [
        ("sentence", "MUST", "When processing this call, the server MUST:"),
        ("step", "MUST", "Close the queue."),
        ("step", "MUST", "If not found, return an error."),
        ("sentence", "MUST NOT", "The client MUST NOT reuse the handle."),
    ]


def test_steps_outside_processing_sections_are_not_extracted():
    lines = ["## 2.2.6 SectionBuffer", "", "The server MUST:", "", "- Do a thing."]
    found = candidates(_section("MS-MQRR", "2.2.6", lines), "markdown")
    assert [c.kind for c in found] == ["sentence"]


def test_a_definition_sentence_records_its_parameter_as_context():
    lines = ["#### 3.1.4.2 R_OpenQueue", "",
             "**pClientId:** MUST be set by the client. The server SHOULD ignore this parameter."]
    found = candidates(_section("MS-MQRR", "3.1.4.2", lines), "markdown")
    assert [(c.text, c.context) for c in found] == [
        ("pClientId: MUST be set by the client.", None),
        ("The server SHOULD ignore this parameter.", "pClientId"),
    ]


@pytest.mark.parametrize("doc,section,text,kind,actor", [
    ("MS-MQRR", "3.1.4.2", "pClientId: MUST be set by the client to a GUID.", "sentence", "client"),
    ("MS-MQRR", "3.1.4.9", "The client MUST invoke the R_EndReceive method.", "sentence", "client"),
    ("MS-MQRR", "3.1.4.1", "The server MUST return the TCP port.", "sentence", "server"),
    ("MS-MQRR", "3.1.4.10", "ullContextTo: MUST be set by the client to the value returned by "
                            "the server in pMoveContext.", "sentence", "client"),
    ("MS-MQRR", "3.1.4.2", "This method MUST be called prior to any of the following:",
     "sentence", "client"),
    ("MS-MQRR", "3.1.4.2", "SHOULD<16> be ignored by the server.", "sentence", "server"),
    ("MS-MQRR", "3.1.4.3", "If an error occurs, the server MUST return a failure HRESULT, and "
                           "the client MUST treat all failure HRESULTs identically.", "sentence",
     "server"),
    ("MS-MQRR", "3.2.4.1", "The handle MUST NOT be NULL.", "sentence", "client"),
    ("MS-MQRR", "3.1.4.7", "Return the message.", "step", "server"),
    ("MS-MQDMPR", "3.1.7.1.12", "Set rStatus to MQ_OK.", "step", "queue manager"),
    ("MS-MQDMPR", "3.1.1.2", "This attribute SHOULD have a constant value.", "sentence",
     "queue manager"),
])
def test_actor(doc, section, text, kind, actor):
    assert actor_of(doc, section, text, kind) == actor


@pytest.mark.parametrize("doc,section,actor,expected", [
    ("MS-MQRR", "3.1.4.7", "server", "wire"),
    ("MS-MQRR", "2.2.6", "server", "wire"),
    ("MS-MQRR", "3.1.1.2", "server", "model"),
    ("MS-MQRR", "3.1.4.7", "client", "client"),
    ("MS-MQRR", "3.2.4.3", "client", "client"),
    ("MS-MQMR", "3.1.4.1", "server", "wire"),
    ("MS-MQDMPR", "3.1.7.1.12", "queue manager", "model"),
    ("MS-MQDMPR", "2.3", "queue manager", "none"),
    ("MS-MQRR", "7", "server", "none"),
])
def test_testability_rules(doc, section, actor, expected):
    assert classify(doc, section, actor, "X MUST be done.")[0] == expected


def test_rfc2119_boilerplate_is_not_a_requirement():
    t, reason = classify("MS-MQRR", "1.1", "server",
                               "MAY, SHOULD, MUST: These terms are used as defined in [RFC2119].")
    assert t == "none" and reason


def test_every_none_rule_gives_a_reason_and_every_rule_a_known_testability():
    for rule in TESTABILITY_RULES:
        assert rule.testability in TESTABILITY
        assert (rule.testability == "none") == bool(rule.reason), rule


def test_product_notes_are_parsed_from_the_appendix():
    lines = ["# 7 Appendix B: Product Behavior", "", "Intro text.", "",
             "<13> Section 3.1.4.1: Windows returns 2103.", "",
             "<14> Section 3.1.4.2: Windows limits callers.", "", "More of note 14."]
    notes = product_notes(_section("MS-MQRR", "7", lines), "markdown")
    assert notes == {13: {"section": "3.1.4.1", "text": "Windows returns 2103."},
                     14: {"section": "3.1.4.2",
                          "text": "Windows limits callers. More of note 14."}}
