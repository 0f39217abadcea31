"""From section text to requirement candidates: blocks, sentences, processing steps, and the rules
that give each candidate its level, actor, testability and product behaviour notes.

These rules make the first draft of the catalog (spec/generate.py); the catalog is then curated by
hand, and a later run of the generator keeps the curated fields (see spec/generate.py). Every rule
here has a test in tests/spec/test_extract.py.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from mqconform.spec.sources import Section

KEYWORD = re.compile(r"\b(MUST NOT|SHOULD NOT|MUST|SHOULD|MAY)\b")
NOTE = re.compile(r"<(\d+)>")
LEVELS = ("MUST", "MUST NOT", "SHOULD", "SHOULD NOT", "MAY")
TESTABILITY = ("wire", "trace", "model", "client", "none")
ACTORS = ("server", "client", "queue manager")


# --------------------------------------------------------------------------------------------
# Blocks: paragraphs, list items, table rows
# --------------------------------------------------------------------------------------------

@dataclass
class Block:
    kind: str  # "para" | "item" | "row" | "heading"
    text: str
    line: int  # 1-based line within the section


_MD_LINK = re.compile(r"\[((?:[^\[\]]|\[[^\]]*\])*)\]\((?:[^()\s]|\([^()]*\))*\)")
_MD_EMPHASIS = re.compile(r"(\*\*|\*|__)(?=\S)(.+?)(?<=\S)\1")
_MD_ANCHOR = re.compile(r'<a id="[^"]*"></a>')
_MD_ITEM = re.compile(r"^\s*(?:[-*+]|\d+\.) ")
_PDF_ITEM = re.compile(r"^ {1,2}(?=\S)")
_TABLE_SEPARATOR = re.compile(r"^\|(\s*:?-+:?\s*\|)+\s*$")
PDF_BULLET = "\uf0a7"
#: a PDF table row naming a packet field: ``SecurityHeader.Flags.EB This field MUST …``
_FIELD_ROW = re.compile(r"^[A-Z][A-Za-z]+(?:\.[A-Za-z]+)+ ")
_DEFINITION = re.compile(r"^(?:[A-Za-z_]\w*|Return Values?|Exceptions Thrown)(?: \([^)]*\))?: ")


def plain(text: str) -> str:
    """Markdown inline markup to plain text; whitespace folded."""
    text = _MD_ANCHOR.sub("", text)
    previous = None
    while previous != text:
        previous = text
        text = _MD_LINK.sub(r"\1", text)
    text = _MD_EMPHASIS.sub(r"\2", text)
    text = text.replace("\\*", "*").replace("\\_", "_")
    return re.sub(r"\s+", " ", text).strip()


def blocks_markdown(lines: list[str]) -> list[Block]:
    out: list[Block] = []
    current: Block | None = None
    for n, line in enumerate(lines, 1):
        stripped = line.strip()
        if not stripped or _MD_ANCHOR.fullmatch(stripped):
            current = None
            continue
        if stripped.startswith("#"):
            out.append(Block("heading", plain(stripped.lstrip("#")), n))
            current = None
        elif stripped.startswith("|"):
            current = None
            if _TABLE_SEPARATOR.match(stripped):
                continue
            cells = [plain(c) for c in stripped.strip("|").split("|")]
            cells = [c for c in cells if c]
            if not cells:
                continue
            text = cells[0] + (": " + " ".join(cells[1:]) if len(cells) > 1 else "")
            out.append(Block("row", text, n))
        elif _MD_ITEM.match(line):
            current = Block("item", plain(_MD_ITEM.sub("", line, count=1)), n)
            out.append(current)
        elif current is not None and current.kind == "para":
            current.text = plain(current.text + " " + stripped)
        else:
            current = Block("para", plain(stripped), n)
            out.append(current)
    return out


def blocks_pdf(lines: list[str]) -> list[Block]:
    """PDF text. A list item starts with the bullet glyph U+F0A7 or, where the extraction lost
    the glyph, with one or two spaces. Blank lines fall anywhere, so a new paragraph starts only
    where the previous text ended a sentence or a lead-in (``.`` ``:`` ``;`` ``)``) and either a
    blank line intervened and the line starts a sentence, or the line opens a definition
    (``cp: The length…``, ``Return Values: …``), a product behaviour note (``<3> Section …``), or,
    after a blank line, a table row that names a packet field (``SecurityHeader.Flags.EB …``)."""
    out: list[Block] = []
    current: Block | None = None
    blank_before = False
    for n, raw in enumerate(lines, 1):
        parts = raw.split(PDF_BULLET)
        for i, line in enumerate(parts):
            if i > 0:
                current = Block("item", plain(line), n)
                out.append(current)
                continue
            if not line.strip():
                if len(parts) == 1:
                    blank_before = True
                continue
            ended = current is not None and re.search(r"[.:;)]\s*$", current.text)
            if n == 1 and re.match(r"^\d+(\.\d+)* \S", line):
                out.append(Block("heading", line.strip(), n))
                current = None
            elif _PDF_ITEM.match(line):
                current = Block("item", plain(line.strip().lstrip("•")), n)
                out.append(current)
            elif (current is None or _NOTE_START.match(line)
                  or (ended and _DEFINITION.match(line))
                  or (blank_before and _FIELD_ROW.match(line)
                      and (current is None or current.kind != "item" or ended))
                  or (ended and blank_before and re.match(r"^[A-Z0-9\"(\[]", line))):
                current = Block("para", plain(line), n)
                out.append(current)
            else:
                current.text = plain(current.text + " " + line)
            blank_before = False
    return out


def blocks(section: Section, form: str) -> list[Block]:
    return blocks_markdown(section.lines) if form == "markdown" else blocks_pdf(section.lines)


# --------------------------------------------------------------------------------------------
# Sentences
# --------------------------------------------------------------------------------------------

_ABBREVIATIONS = ("e.g.", "i.e.", "etc.", "vs.", "No.", "Fig.")
_SENTENCE_END = re.compile(r"(?<=[.?!])((?:<\d+>)*)\s+(?=[A-Z\"'(\[*_<])")


def sentences(text: str) -> list[str]:
    """Split a block into sentences at ``. `` followed by a capital; product-note markers
    (``<13>``) after the full stop stay with the sentence they follow."""
    parts: list[str] = []
    start = 0
    for m in _SENTENCE_END.finditer(text):
        head = text[start:m.start()]
        if head.endswith(_ABBREVIATIONS) or re.search(r"\b[A-Z]\.$", head):
            continue
        parts.append((head + m.group(1)).strip())
        start = m.end()
    tail = text[start:].strip()
    if tail:
        parts.append(tail)
    return [p for p in parts if p]


def clauses(sentence: str) -> list[str]:
    """A normative sentence whose ``;``-separated clauses each carry a keyword ("… MUST be set to
    FALSE; otherwise, it MUST be set to TRUE") holds independent requirements: one each."""
    parts = [p.strip() for p in sentence.split("; ")]
    if len(parts) > 1 and all(KEYWORD.search(p) for p in parts):
        return [p if i == len(parts) - 1 else p + ";" for i, p in enumerate(parts)]
    return [sentence]


def level_of(text: str) -> str | None:
    m = KEYWORD.search(text)
    return m.group(1) if m else None


def notes_of(text: str) -> list[int]:
    return sorted({int(n) for n in NOTE.findall(text)})


# --------------------------------------------------------------------------------------------
# Processing steps
# --------------------------------------------------------------------------------------------

#: Sections whose lists under "the server MUST:" / "MUST perform the following actions" are
#: processing steps, one catalog entry each (issue: MS-MQRR 3.1.4.x, 3.1.5, 3.1.6; MS-MQMR
#: 3.1.4.x; MS-MQDMPR 3.1.4, 3.1.6, 3.1.7, 3.2).
STEP_SECTIONS = {
    "MS-MQRR": ("3.1.4.", "3.1.5.", "3.1.6."),
    "MS-MQMR": ("3.1.4.",),
    "MS-MQDMPR": ("3.1.4.", "3.1.6.", "3.1.7.", "3.2."),
}

_LEAD_IN = re.compile(
    r"\b(?:server|queue manager|protocol)\s+(?:MUST|SHOULD)\b(?:(?!\bgenerated with\b).)*:$")
_NOT_STEPS = re.compile(
    r"one of the following|following (?:ADM )?attributes|following (?:input )?arguments?|"
    r"following parameter values|following timers|following values", re.I)


def has_steps(doc: str, number: str) -> bool:
    return any((number + ".").startswith(p) for p in STEP_SECTIONS.get(doc, ()))


def is_step_lead_in(text: str) -> bool:
    """A sentence that opens a list of processing steps."""
    last = sentences(text)[-1] if text else ""
    return bool(_LEAD_IN.search(last)) and not _NOT_STEPS.search(last)


# --------------------------------------------------------------------------------------------
# Candidates
# --------------------------------------------------------------------------------------------

@dataclass
class Candidate:
    doc: str
    section: str
    title: str
    kind: str  # "sentence" | "step"
    level: str
    text: str
    line: int
    notes: list[int] = field(default_factory=list)
    #: what the text leans on: the parameter or field a definition names, a table row's first
    #: cell, or for a step the sentence that opened its list
    context: str | None = None


_TERM = re.compile(r"^([A-Za-z_][\w.]*(?: \([^)]*\))?|Return Values?):\s")


def term_of(block: Block) -> str | None:
    """The parameter, field or value a definition or table row is about (``pClientId``)."""
    m = _TERM.match(block.text)
    if m:
        return m.group(1)
    if block.kind == "row" and ":" in block.text:
        return block.text.split(":", 1)[0]
    return None


def candidates(section: Section, form: str) -> list[Candidate]:
    """One candidate per normative sentence, and one per processing step (a step's text may hold
    normative sentences of its own; they are that step's, not separate entries)."""
    out: list[Candidate] = []
    steps_here = has_steps(section.doc, section.number)
    lead_in: str | None = None
    lead_level = "MUST"
    for block in blocks(section, form):
        if block.kind == "heading":
            continue
        if steps_here and lead_in is not None:
            if block.kind == "item" or (block.kind == "para" and block.text.endswith(":")):
                out.append(Candidate(section.doc, section.number, section.title, "step",
                                     level_of(block.text) or lead_level, block.text, block.line,
                                     notes_of(block.text), lead_in))
                if block.kind == "para" and is_step_lead_in(block.text):
                    lead_in = sentences(block.text)[-1]
                continue
            if form == "markdown":
                lead_in = None
            # PDF text: tables and wrapped lines that lost their bullet stand between the steps
            # of one list, so a paragraph does not end the list there; only items are steps.
        context = term_of(block)
        for sentence in sentences(block.text):
            if level_of(sentence) is None:
                continue
            for clause in clauses(sentence):
                out.append(Candidate(section.doc, section.number, section.title, "sentence",
                                     level_of(clause), clause, block.line, notes_of(clause),
                                     None if clause.startswith(f"{context}:") else context))
        if steps_here and block.kind in ("para", "item") and is_step_lead_in(block.text):
            lead_in = sentences(block.text)[-1]
            lead_level = level_of(lead_in) or "MUST"
    return out


# --------------------------------------------------------------------------------------------
# Actor and testability
# --------------------------------------------------------------------------------------------

_CLIENT = re.compile(r"\b(?:the |a )?client(?:s)?\b(?: \w+){0,3} (?:MUST|SHOULD|MAY)\b|"
                     r"\b(?:MUST|SHOULD|MAY)(?: NOT)? be (?:set|called|specified|used|"
                     r"provided|passed|supplied)(?: \w+){0,3} by the client\b|"
                     r"\bmethod MUST be (?:called|invoked)\b|"
                     r"\bmessage queuing application MUST\b")
_SERVER = re.compile(r"\bserver\b(?: \w+){0,3} (?:MUST|SHOULD|MAY)\b|"
                     r"\b(?:MUST|SHOULD|MAY)(?: NOT)?(?:<\d+>)? be \w+ by the server\b")
_QM = re.compile(r"\bqueue manager\b(?: \w+){0,3} (?:MUST|SHOULD|MAY)\b")


def actor_of(doc: str, number: str, text: str, kind: str) -> str:
    """Who the sentence binds: its subject where it names one (the first of "the client MUST",
    "MUST be set by the client", "the server MUST", "SHOULD be ignored by the server"), else the
    side whose section it stands in."""
    if kind == "step":
        return "queue manager" if doc == "MS-MQDMPR" else "server"
    if number.startswith("3.2") and doc != "MS-MQDMPR":
        return "client"
    client, server = _CLIENT.search(text), _SERVER.search(text)
    if client and (server is None or client.start() < server.start()):
        return "client"
    if _QM.search(text) or doc == "MS-MQDMPR":
        return "queue manager"
    return "server"


@dataclass(frozen=True)
class Rule:
    """Testability by document and section prefix; first match wins."""

    doc: str
    prefix: str
    testability: str
    reason: str | None = None


NOT_NORMATIVE = ("States which sections are normative and how the RFC 2119 keywords are used; "
                 "it is not itself a requirement on an implementation.")
PRODUCT_NOTES = ("Product behaviour appendix: describes what Windows versions do, not a rule of "
                 "the protocol.")

TESTABILITY_RULES: tuple[Rule, ...] = (
    Rule("*", "1.", "none", "Introductory section (glossary, overview, applicability): "
                            "informative text that restates rules given normatively elsewhere."),
    Rule("MS-MQDMPR", "2.3", "none", "Directory service schema: the RemoteRead and qmmgmt "
                                     "interfaces do not read or write the directory."),
    Rule("MS-MQRR", "2.3", "none", "Directory service schema: not used by this protocol."),
    Rule("MS-MQMR", "2.3", "none", "Directory service schema: not used by this protocol."),
    Rule("*", "6.", "none", PRODUCT_NOTES),
    Rule("*", "7.", "none", PRODUCT_NOTES),
    Rule("*", "8.", "none", "Change tracking: describes edits between editions."),
    Rule("MS-MQRR", "2.", "wire"),
    Rule("MS-MQMR", "2.", "wire"),
    Rule("MS-MQRR", "3.1.1", "model"),
    Rule("MS-MQRR", "3.1.2", "model"),
    Rule("MS-MQRR", "3.1.3", "wire"),
    Rule("MS-MQRR", "3.1.", "wire"),
    Rule("MS-MQRR", "3.2", "client"),
    Rule("MS-MQMR", "3.1.1", "model"),
    Rule("MS-MQMR", "3.1.", "wire"),
    Rule("MS-MQMR", "3.2", "client"),
    Rule("MS-MQMR", "3", "wire"),
    Rule("MS-MQRR", "3", "wire"),
    Rule("MS-MQRR", "5.", "wire"),
    Rule("MS-MQMR", "5.", "wire"),
    Rule("MS-MQDMPR", "5.", "none", "Security considerations for implementers: advice, not "
                                    "an observable rule of the data model."),
    Rule("MS-MQDMPR", "2.", "model"),
    Rule("MS-MQDMPR", "3", "model"),
)


def testability_of(doc: str, number: str, actor: str, text: str) -> tuple[str, str | None]:
    if "RFC2119" in text.replace(" ", "") or "are normative and can contain the terms" in text:
        return "none", NOT_NORMATIVE
    for rule in TESTABILITY_RULES:
        if rule.doc in ("*", doc) and (number + ".").startswith(rule.prefix):
            if rule.testability != "none" and actor == "client":
                return "client", None
            return rule.testability, rule.reason
    return "none", "No rule of spec/extract.py covers this section; curate by hand."


# --------------------------------------------------------------------------------------------
# Product behaviour notes (the appendix)
# --------------------------------------------------------------------------------------------

_NOTE_START = re.compile(r"^<(\d+)> Section ([\d.]+)\s*:\s*(.*)$")


def product_notes(section: Section, form: str) -> dict[int, dict[str, str]]:
    """``<N> Section X: text`` entries of a Product Behavior appendix."""
    notes: dict[int, dict[str, str]] = {}
    current: dict[str, str] | None = None
    for block in blocks(section, form):
        m = _NOTE_START.match(block.text)
        if m:
            current = {"section": m.group(2).rstrip("."), "text": m.group(3).strip()}
            notes[int(m.group(1))] = current
        elif current is not None and block.kind != "heading":
            current["text"] = (current["text"] + " " + block.text).strip()
    return notes
