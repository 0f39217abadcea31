"""model.status: the status-code table against the values the source documents write down, and
the helpers name_of, is_failure and is_mq_code."""

from __future__ import annotations

import re
from collections import defaultdict

import pytest

from mqconform.model import status

#: every public int of the module: the status constants
CONSTANTS = {name: value for name, value in vars(status).items()
             if not name.startswith("_") and type(value) is int}

#: values the documents (MS-MQRR, MS-MQMR, MS-MQDMPR) write next to the names
DOCUMENTED = {
    "MQ_OK": 0x00000000,
    "MQ_ERROR": 0xC00E0001,
    "MQ_ERROR_QUEUE_NOT_FOUND": 0xC00E0003,
    "MQ_ERROR_INVALID_PARAMETER": 0xC00E0006,
    "MQ_ERROR_INVALID_HANDLE": 0xC00E0007,
    "MQ_ERROR_OPERATION_CANCELLED": 0xC00E0008,
    "MQ_ERROR_SHARING_VIOLATION": 0xC00E0009,
    "MQ_ERROR_IO_TIMEOUT": 0xC00E001B,
    "MQ_ERROR_ILLEGAL_CURSOR_ACTION": 0xC00E001C,
    "MQ_ERROR_MESSAGE_ALREADY_RECEIVED": 0xC00E001D,
    "MQ_ERROR_ILLEGAL_FORMATNAME": 0xC00E001E,
    "MQ_ERROR_UNSUPPORTED_FORMATNAME_OPERATION": 0xC00E0020,
    "MQ_ERROR_ILLEGAL_PROPID": 0xC00E0039,
    "MQ_ERROR_UNSUPPORTED_ACCESS_MODE": 0xC00E0045,
    "MQ_ERROR_QUEUE_NOT_AVAILABLE": 0xC00E004B,
    "MQ_ERROR_TRANSACTION_USAGE": 0xC00E0050,
    "MQ_ERROR_TRANSACTION_SEQUENCE": 0xC00E0051,
    "MQ_ERROR_DEPEND_WKS_LICENSE_OVERFLOW": 0xC00E0067,
    "MQ_ERROR_MESSAGE_NOT_FOUND": 0xC00E0088,
    "MQ_ERROR_MESSAGE_LOCKED_UNDER_TRANSACTION": 0xC00E009C,
    "STATUS_SUCCESS": 0x00000000,
    "STATUS_INVALID_HANDLE": 0xC0000008,
    "STATUS_INVALID_PARAMETER": 0xC000000D,
    "STATUS_ACCESS_DENIED": 0xC0000022,
    "STATUS_NOT_FOUND": 0xC0000225,
}

#: the only names allowed to share a value (MS-MQMQ 2.4 itself has no aliases)
ALLOWED_ALIASES = [{"MQ_OK", "STATUS_SUCCESS"}]

#: names the documents split with a space; they are read joined
#: (MS-MQRR 3.1.4.10 "MQ_ERROR_TRANSACTION USAGE", MS-MQDMPR 3.1.7.1.5 "MQ_ERROR_UNSUPPORTED_ACCESS MODE")
SPLIT_IN_DOCUMENTS = {"MQ_ERROR_TRANSACTION USAGE": "MQ_ERROR_TRANSACTION_USAGE",
                      "MQ_ERROR_UNSUPPORTED_ACCESS MODE": "MQ_ERROR_UNSUPPORTED_ACCESS_MODE"}

CODE_NAME = r"(?:MQ_OK|MQ_(?:ERROR|INFORMATION)\w*|STATUS_[A-Z_]+|E_[A-Z_]+)"
HEX = r"0[xX][0-9A-Fa-f]{8}"


def document_texts(root) -> dict[str, str]:
    texts = {}
    for path in sorted((root / "spec" / "documents").rglob("*")):
        if path.suffix in (".md", ".txt"):
            text = path.read_text(encoding="utf-8")
            for split, joined in SPLIT_IN_DOCUMENTS.items():
                text = text.replace(split, joined)
            texts[str(path.relative_to(root))] = text
    return texts


@pytest.mark.parametrize(("name", "value"), sorted(DOCUMENTED.items()))
def test_the_values_the_documents_give_are_the_constants_values(name, value):
    assert getattr(status, name) == value


def test_every_status_name_in_the_documents_is_a_constant(root):
    named = set()
    for text in document_texts(root).values():
        named |= set(re.findall(rf"\b{CODE_NAME}\b", text))
    assert named, "no status names found: did the documents move?"
    assert named - CONSTANTS.keys() == set()


def test_every_value_the_documents_write_beside_a_name_matches_the_table(root):
    wrong, checked = [], 0
    for where, text in document_texts(root).items():
        # "NAME (0x...)" on one line; and "0x... NAME", also across lines, as the PDF-extracted
        # tables set it (a name followed by a value on a later line is the next row's value)
        pairs = re.findall(rf"\b({CODE_NAME})[ \t]*\(?({HEX})", text)
        pairs += [(name, value) for value, name in
                  re.findall(rf"({HEX})\s+({CODE_NAME})\b", text)]
        checked += len(pairs)
        for name, value in pairs:
            if CONSTANTS.get(name) != int(value, 16):
                wrong.append((where, name, value))
    assert checked > 50, "too few name/value pairs found: did the documents' layout change?"
    assert wrong == []


@pytest.mark.parametrize("name", sorted(CONSTANTS))
def test_name_of_gives_back_the_name_of_every_constant(name):
    expected = "MQ_OK" if name == "STATUS_SUCCESS" else name
    assert status.name_of(CONSTANTS[name]) == expected


def test_zero_is_named_mq_ok_not_status_success():
    assert status.STATUS_NAMES[0] == "MQ_OK"
    assert status.name_of(status.STATUS_SUCCESS) == "MQ_OK"


def test_name_of_an_unknown_code_is_its_eight_digit_hex():
    assert status.name_of(0xDEADBEEF) == "0xDEADBEEF"
    assert status.name_of(0x00000001) == "0x00000001"
    assert status.name_of(0xC00E000A) == "0xC00E000A"  # a gap in the MS-MQMQ table


def test_no_two_names_share_a_value_except_the_allowed_aliases():
    by_value = defaultdict(set)
    for name, value in CONSTANTS.items():
        by_value[value].add(name)
    shared = [names for names in by_value.values() if len(names) > 1]
    assert shared == ALLOWED_ALIASES


def test_every_constant_is_in_the_table_and_every_row_is_a_constant():
    assert set(status.DESCRIPTIONS) == set(CONSTANTS)
    assert set(status.STATUS_NAMES) == set(CONSTANTS.values())
    assert all(CONSTANTS[name] == value for value, name in status.STATUS_NAMES.items())


def test_every_value_is_an_unsigned_32_bit_int():
    assert all(0 <= value <= 0xFFFFFFFF for value in CONSTANTS.values())


def test_every_code_has_a_one_line_description():
    for name, text in status.DESCRIPTIONS.items():
        assert text.strip() and "\n" not in text, name


def test_the_table_cannot_be_changed_at_run_time():
    with pytest.raises(TypeError):
        status.STATUS_NAMES[0] = "STATUS_SUCCESS"  # type: ignore[index]
    with pytest.raises(TypeError):
        status.DESCRIPTIONS["MQ_OK"] = "changed"  # type: ignore[index]


@pytest.mark.parametrize(("code", "failed"), [
    (status.MQ_OK, False),
    (status.STATUS_SUCCESS, False),
    (status.MQ_INFORMATION_PROPERTY, False),
    (status.MQ_INFORMATION_OPERATION_PENDING, False),
    (status.MQ_ERROR, True),
    (status.MQ_ERROR_IO_TIMEOUT, True),
    (status.MQ_ERROR_MESSAGE_LOCKED_UNDER_TRANSACTION, True),
    (status.STATUS_INVALID_HANDLE, True),
    (status.STATUS_NOT_FOUND, True),
])
def test_is_failure_is_true_exactly_when_the_severity_bit_is_set(code, failed):
    assert status.is_failure(code) is failed


@pytest.mark.parametrize(("code", "msmq"), [
    (status.MQ_ERROR_QUEUE_NOT_FOUND, True),
    (status.MQ_INFORMATION_PROPERTY, True),
    (status.MQDS_UNKNOWN_SOURCE, True),
    (status.MQ_OK, False),
    (status.STATUS_INVALID_PARAMETER, False),
    (status.STATUS_ACCESS_DENIED, False),
    (0x8007000E, False),  # E_OUTOFMEMORY: FACILITY_WIN32
])
def test_is_mq_code_is_true_exactly_for_facility_msmq(code, msmq):
    assert status.is_mq_code(code) is msmq


def test_every_mq_error_and_information_constant_carries_facility_msmq():
    for name, value in CONSTANTS.items():
        if name.startswith("MQ_") and name != "MQ_OK" or name.startswith("MQDS_"):
            assert status.is_mq_code(value), name
            assert status.is_failure(value) is not name.startswith("MQ_INFORMATION_"), name
