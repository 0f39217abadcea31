"""MS-MQMQ 2.1 format names, MS-MQMQ 2.2.7 QUEUE_FORMAT and MS-MQMR 2.2.1.2 MGMT_OBJECT as the
model's typed values: parsing, canonical text, case rules, structure rules and conversions."""

from __future__ import annotations

import uuid

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mqconform.model.formats import (
    QUEUE_FORMAT_FLAG_SYSTEM,
    DirectProtocol,
    DlId,
    FormatName,
    FormatNameError,
    FormatNameKind,
    MgmtObject,
    MgmtObjectType,
    MulticastId,
    ObjectId,
    QueueFormat,
    QueueFormatType,
    QueueSuffixType,
    from_queue_format,
    multicast_address_from_int,
    multicast_address_to_int,
    parse_format_name,
    remoteread_unsupported,
    to_queue_format,
)

QFT = QueueFormatType
SFX = QueueSuffixType
G = "6f1a2b3c-4d5e-4f60-8172-93a4b5c6d7e8"
G2 = "0badc0de-0000-4000-8000-00000000beef"
UG, UG2 = uuid.UUID(G), uuid.UUID(G2)

# (format name as a user might write it, canonical text) -- examples written for these tests
EXAMPLES = [
    (f"PUBLIC={G}", f"PUBLIC={G}"),
    (f"PUBLIC={G.upper()};journal", f"PUBLIC={G};JOURNAL"),
    (f"PRIVATE={G}\\1F", f"PRIVATE={G}\\0000001f"),
    (f"PRIVATE={G}\\00000004;JOURNAL", f"PRIVATE={G}\\00000004;JOURNAL"),
    ("DIRECT=OS:srv01\\orders", "DIRECT=OS:srv01\\orders"),
    ("DIRECT=TCP:192.168.7.20\\private$\\orders", "DIRECT=TCP:192.168.7.20\\private$\\orders"),
    ("direct=tcp:10.0.0.5\\Private$\\Orders;Journal", "DIRECT=TCP:10.0.0.5\\Private$\\Orders;JOURNAL"),
    ("DIRECT=SPX:0000a1b2:00a0c9123456\\billing", "DIRECT=SPX:0000a1b2:00a0c9123456\\billing"),
    ("DIRECT=IPX:1:2\\billing", "DIRECT=IPX:1:2\\billing"),
    ("DIRECT=HTTP://web1/msmq/private$/orders", "DIRECT=HTTP://web1/msmq\\private$\\orders"),
    ("DIRECT=HTTPS://web1.example.com:8443/MSMQ\\orders", "DIRECT=HTTPS://web1.example.com:8443/MSMQ\\orders"),
    ("DIRECT=OS:srv01\\SYSTEM$;JOURNAL", "DIRECT=OS:srv01\\SYSTEM$;JOURNAL"),
    ("DIRECT=OS:srv01\\system$;deadletter", "DIRECT=OS:srv01\\system$;DEADLETTER"),
    ("DIRECT=TCP:10.0.0.5\\SYSTEM$;DEADXACT", "DIRECT=TCP:10.0.0.5\\SYSTEM$;DEADXACT"),
    ("DIRECT=OS:srv01\\private$\\orders;poison", "DIRECT=OS:srv01\\private$\\orders;poison"),
    (f"DL={G}", f"DL={G}"),
    (f"DL={G}@corp.example.com", f"DL={G}@corp.example.com"),
    ("MULTICAST=234.1.1.1:8001", "MULTICAST=234.1.1.1:8001"),
    (f"MACHINE={G};JOURNAL", f"MACHINE={G};JOURNAL"),
    (f"MACHINE={G};DEADLETTER", f"MACHINE={G};DEADLETTER"),
    (f"MACHINE={G};DEADXACT", f"MACHINE={G};DEADXACT"),
    (f"CONNECTOR={G}", f"CONNECTOR={G}"),
    (f"CONNECTOR={G};XACTONLY", f"CONNECTOR={G};XACTONLY"),
    (f"DIRECT=OS:srv01\\orders,PUBLIC={G},DL={G2}", f"DIRECT=OS:srv01\\orders,PUBLIC={G},DL={G2}"),
    (f"PRIVATE={G}\\a,MULTICAST=239.0.0.1:0,CONNECTOR={G2}", f"PRIVATE={G}\\0000000a,MULTICAST=239.0.0.1:0,CONNECTOR={G2}"),
]


# ------------------------------------------------------------------ parse and canonical text

@pytest.mark.parametrize(("text", "canonical"), EXAMPLES)
def test_every_kind_parses_and_prints_its_canonical_text(text, canonical):
    name = parse_format_name(text)
    assert str(name) == canonical
    assert parse_format_name(str(name)) == name
    assert str(parse_format_name(canonical)) == canonical


def test_parse_gives_the_identifying_parts_of_each_kind():
    pub = parse_format_name(f"PUBLIC={G}")
    assert pub.kind is FormatNameKind.PUBLIC and pub.public_queue_guid == UG
    priv = parse_format_name(f"PRIVATE={G}\\1f;JOURNAL")
    assert priv.private_computer_guid == UG and priv.private_queue_number == 0x1F
    assert priv.suffix is SFX.QUEUE_SUFFIX_TYPE_JOURNAL and priv.system
    dl = parse_format_name(f"DL={G}@corp.example.com")
    assert dl.is_distribution_list and dl.guid == UG and dl.domain == "corp.example.com"
    mc = parse_format_name("MULTICAST=234.1.1.1:8001")
    assert mc.is_multicast and (mc.multicast_address, mc.port) == ("234.1.1.1", 8001)
    conn = parse_format_name(f"CONNECTOR={G};XACTONLY")
    assert conn.is_connector and conn.suffix is SFX.QUEUE_SUFFIX_TYPE_XACTONLY and not conn.system


def test_direct_name_predicates_give_protocol_host_and_queue_path():
    name = parse_format_name("DIRECT=TCP:10.0.0.5\\private$\\orders;poison")
    assert name.is_direct and not name.is_http
    assert name.direct_protocol is DirectProtocol.TCP
    assert name.direct_host == "10.0.0.5" == name.direct_address
    assert name.direct_queue_path == "private$\\orders"
    assert name.direct_queue_name == "orders" and name.is_direct_private_queue
    assert name.subqueue_name == "poison" and name.suffix is SFX.QUEUE_SUFFIX_TYPE_SUBQUEUE
    assert not (name.is_public or name.is_private or name.is_machine or name.is_multicast)


def test_http_direct_host_is_the_host_part_and_port_defaults_by_protocol():
    http = parse_format_name("DIRECT=HTTP://web1/msmq/orders")
    https = parse_format_name("DIRECT=HTTPS://web1:8443/msmq/private$/orders")
    assert http.is_http and http.direct_host == "web1" and http.direct_port == 80
    assert https.is_http and https.direct_host == "web1" and https.direct_port == 8443
    assert http.direct_address == "//web1/msmq"
    assert https.direct_queue_path == "private$\\orders"
    assert parse_format_name("DIRECT=HTTPS://web1/MSMQ\\q").direct_port == 443
    assert parse_format_name("DIRECT=OS:srv01\\q").direct_port is None


def test_system_queue_of_a_direct_name_has_no_queue_name_and_sets_the_system_flag():
    name = parse_format_name("DIRECT=OS:srv01\\SYSTEM$;DEADLETTER")
    assert name.direct_queue_path == "SYSTEM$" and name.direct_queue_name is None
    assert name.system and name.subqueue_name is None


def test_multiple_element_name_keeps_its_elements_in_order():
    name = parse_format_name(f"DIRECT=OS:srv01\\orders,PUBLIC={G},DL={G2}")
    assert name.is_multiple_element
    assert [e.kind for e in name.elements] == [FormatNameKind.DIRECT, FormatNameKind.PUBLIC,
                                                FormatNameKind.DL]


def test_a_single_element_without_comma_is_not_a_multiple_element_name():
    assert not parse_format_name(f"PUBLIC={G}").is_multiple_element


def test_predicates_of_other_kinds_return_none():
    name = parse_format_name(f"MACHINE={G};JOURNAL")
    assert name.is_machine and name.public_queue_guid is None
    assert name.private_computer_guid is None and name.private_queue_number is None
    assert name.direct_protocol is None and name.direct_host is None
    assert name.direct_queue_path is None and name.subqueue_name is None


# ------------------------------------------------------------------ case rules

def test_keywords_guids_and_path_names_compare_case_insensitively():
    a = parse_format_name(f"DIRECT=TCP:10.0.0.5\\PRIVATE$\\Orders;Poison,PUBLIC={G.upper()}")
    b = parse_format_name(f"direct=tcp:10.0.0.5\\private$\\orders;poison,public={G}")
    assert a == b and hash(a) == hash(b)
    assert parse_format_name("DIRECT=OS:SRV01\\q;Poison") == parse_format_name("DIRECT=OS:srv01\\Q;poison")
    assert parse_format_name(f"DL={G}@CORP.example.com") == parse_format_name(f"DL={G}@corp.EXAMPLE.com")


def test_canonical_text_keeps_path_names_as_written():
    assert str(parse_format_name("direct=os:Srv01\\Private$\\Orders")) == "DIRECT=OS:Srv01\\Private$\\Orders"


def test_case_insensitive_equality_removes_duplicates_as_expand_format_name_does():
    names = {parse_format_name(t) for t in ("DIRECT=OS:a\\Q", "direct=os:A\\q", f"PUBLIC={G}")}
    assert len(names) == 2


def test_different_names_are_not_equal():
    assert parse_format_name("DIRECT=OS:a\\q") != parse_format_name("DIRECT=OS:a\\private$\\q")
    assert parse_format_name("DIRECT=OS:a\\q") != parse_format_name("DIRECT=OS:a\\q;JOURNAL")
    assert parse_format_name("DIRECT=SPX:1:2\\q") != parse_format_name("DIRECT=IPX:1:2\\q")
    assert parse_format_name(f"PUBLIC={G}") != f"PUBLIC={G}"


# ------------------------------------------------------------------ malformed input

MALFORMED = [
    ("", "empty"),
    ("PUBLIC", "does not start with"),
    (f"QUEUE={G}", "does not start with"),
    ("PUBLIC=not-a-guid", "not a GUID"),
    (f"PUBLIC={{{G}}}", "not a GUID"),
    (f"PUBLIC={G[:-1]}", "not a GUID"),
    (f"PUBLIC= {G}", "not a GUID"),
    (f"PUBLIC={G};DEADLETTER", "takes only ;JOURNAL"),
    (f"PUBLIC={G};", "unknown suffix"),
    (f"PUBLIC={G};FOO", "unknown suffix"),
    (f"PRIVATE={G}\\123456789", "1-8 hex digits"),
    (f"PRIVATE={G}\\xyz", "1-8 hex digits"),
    (f"PRIVATE={G}", "1-8 hex digits"),
    (f"PRIVATE={G}\\1;DEADXACT", "takes only ;JOURNAL"),
    (f"DL={G};JOURNAL", "takes no suffix"),
    (f"DL={G}@", "DL domain"),
    ("MULTICAST=234.1.1.1:8001;JOURNAL", "takes no suffix"),
    ("MULTICAST=10.0.0.1:80", "224.0.0.0-239.255.255.255"),
    ("MULTICAST=234.1.1.1:65536", "0-65535"),
    ("MULTICAST=234.1.1.1", "Address ':' Port"),
    ("MULTICAST=234.01.1.1:80", "224.0.0.0"),
    (f"MACHINE={G}", "MACHINE= needs"),
    (f"MACHINE={G};XACTONLY", "takes only"),
    (f"CONNECTOR={G};JOURNAL", "takes only ;XACTONLY"),
    ("DIRECT=", "needs a protocol"),
    ("DIRECT=FTP:srv\\q", "needs a protocol"),
    ("DIRECT=OS:srv01", "needs '\\'"),
    ("DIRECT=OS:\\q", "computer name"),
    ("DIRECT=TCP:10.0.0.256\\q", "dotted IPv4"),
    ("DIRECT=TCP:srv01\\q", "dotted IPv4"),
    ("DIRECT=SPX:srv01\\q", "network number"),
    ("DIRECT=HTTP://web1/other\\q", "'/MSMQ'"),
    ("DIRECT=HTTP://web1:99999/msmq\\q", "0-65535"),
    ("DIRECT=HTTP:web1/msmq\\q", "'/MSMQ'"),
    ("DIRECT=OS:srv01\\", "queue name"),
    ("DIRECT=OS:srv01\\private$", "PRIVATE$ needs"),
    ("DIRECT=OS:srv01\\private$\\", "queue name"),
    ("DIRECT=OS:srv01\\my queue", "queue name"),
    ("DIRECT=OS:srv01\\a+b", "queue name"),
    ("DIRECT=OS:srv01\\" + "q" * 125, "queue name"),
    ("DIRECT=OS:srv01\\SYSTEM$", "SYSTEM$ needs"),
    ("DIRECT=OS:srv01\\SYSTEM$;poison", "SYSTEM$ needs"),
    ("DIRECT=OS:srv01\\orders;DEADLETTER", "follows only SYSTEM$"),
    ("DIRECT=OS:srv01\\orders;XACTONLY", "XACTONLY"),
    ("DIRECT=OS:srv01\\orders;", "empty subqueue name"),
    ("DIRECT=OS:srv01\\orders;" + "s" * 33, "subqueue name"),
    ("DIRECT=OS:srv01\\orders;a;b", "subqueue name"),
    ("DIRECT=OS:srv01\\orders,", "element 2"),
    (",DIRECT=OS:srv01\\orders", "element 1"),
    ("DIRECT=OS:srv01\\a,,DIRECT=OS:srv01\\b", "element 2"),
    (f"DIRECT=OS:srv01\\a;JOURNAL,PUBLIC={G}", "read-only"),
    (f"MACHINE={G};JOURNAL,PUBLIC={G}", "cannot be an element"),
    (f"PUBLIC={G},FOO=1", "element 2"),
    ("DIRECT=OS:" + "s" * 100_000 + "\\q", "computer name"),
    ("X" * 1_000_000, "does not start with"),
]


@pytest.mark.parametrize(("text", "fragment"), MALFORMED)
def test_malformed_format_name_gives_format_name_error_with_a_one_line_reason(text, fragment):
    with pytest.raises(FormatNameError) as info:
        parse_format_name(text)
    message = str(info.value)
    assert fragment in message
    assert "\n" not in message and len(message) < 300


@pytest.mark.parametrize("value", [None, 42, b"PUBLIC=x", ["PUBLIC="]])
def test_a_value_that_is_not_a_string_gives_format_name_error(value):
    with pytest.raises(FormatNameError):
        parse_format_name(value)


def test_format_name_error_is_a_value_error():
    assert issubclass(FormatNameError, ValueError)


def test_a_long_multiple_element_name_parses():
    text = ",".join(f"DIRECT=OS:srv01\\q{i}" for i in range(2000))
    assert len(parse_format_name(text).elements) == 2000


@given(st.text(max_size=200))
def test_any_text_parses_or_gives_format_name_error(text):
    try:
        name = parse_format_name(text)
    except FormatNameError as e:
        assert str(e) and "\n" not in str(e)
    else:
        assert parse_format_name(str(name)) == name


@given(st.text(alphabet="PUBLICRVATEDMSHNXOQ=:;,\\$/.0123456789abcdef-@", max_size=80))
def test_format_name_like_text_parses_or_gives_format_name_error(text):
    try:
        parse_format_name(text)
    except FormatNameError:
        pass


def test_constructor_checks_the_same_rules_as_the_parser():
    with pytest.raises(FormatNameError, match="needs guid"):
        FormatName(FormatNameKind.PUBLIC)
    with pytest.raises(FormatNameError, match="has no queue_number"):
        FormatName(FormatNameKind.PUBLIC, guid=UG, queue_number=1)
    with pytest.raises(FormatNameError, match="subqueue"):
        FormatName(FormatNameKind.DIRECT, protocol=DirectProtocol.OS, address="a",
                   queue_path="q", subqueue="s")  # suffix must say SUBQUEUE
    with pytest.raises(FormatNameError, match="two or more"):
        FormatName(FormatNameKind.MULTIPLE_ELEMENT, elements=(parse_format_name(f"PUBLIC={G}"),))


# ------------------------------------------------------------------ to / from QUEUE_FORMAT

def test_to_queue_format_fills_the_union_member_of_each_type():
    cases = {
        f"PUBLIC={G}": QueueFormat(1, 0x00, 0, UG),
        f"PUBLIC={G};JOURNAL": QueueFormat(1, 0x81, 0, UG),
        f"PRIVATE={G}\\1f": QueueFormat(2, 0x00, 0, ObjectId(UG, 0x1F)),
        "DIRECT=TCP:10.0.0.5\\private$\\orders": QueueFormat(3, 0x00, 0, "TCP:10.0.0.5\\private$\\orders"),
        "DIRECT=OS:srv01\\orders;JOURNAL": QueueFormat(3, 0x81, 0, "OS:srv01\\orders"),
        "DIRECT=OS:srv01\\SYSTEM$;DEADLETTER": QueueFormat(3, 0x82, 0, "OS:srv01\\SYSTEM$"),
        "DIRECT=OS:srv01\\SYSTEM$;DEADXACT": QueueFormat(3, 0x83, 0, "OS:srv01\\SYSTEM$"),
        "DIRECT=OS:srv01\\orders;poison": QueueFormat(8, 0x05, 0, "OS:srv01\\orders;poison"),
        f"MACHINE={G};JOURNAL": QueueFormat(4, 0x81, 0, UG),
        f"CONNECTOR={G}": QueueFormat(5, 0x00, 0, UG),
        f"CONNECTOR={G};XACTONLY": QueueFormat(5, 0x04, 0, UG),
        f"DL={G}@corp.example.com": QueueFormat(6, 0x00, 0, DlId(UG, "corp.example.com")),
        f"DL={G}": QueueFormat(6, 0x00, 0, DlId(UG, None)),
        "MULTICAST=234.1.2.3:8001": QueueFormat(7, 0x00, 0, MulticastId(0x030201EA, 8001)),
    }
    for text, expected in cases.items():
        qf = to_queue_format(parse_format_name(text))
        assert qf == expected, text
        assert qf.validate() is None, text
        assert from_queue_format(qf) == parse_format_name(text), text


def test_queue_format_properties_read_the_selected_union_member():
    qf = to_queue_format(parse_format_name(f"PRIVATE={G}\\1f"))
    assert qf.m_oPrivateID == ObjectId(UG, 0x1F) and qf.m_gPublicID is None
    assert qf.suffix_type == 0 and qf.flags == 0
    qf = to_queue_format(parse_format_name("DIRECT=OS:srv01\\SYSTEM$;JOURNAL"))
    assert qf.m_pDirectID == "OS:srv01\\SYSTEM$" and qf.flags == QUEUE_FORMAT_FLAG_SYSTEM
    assert qf.suffix_type == SFX.QUEUE_SUFFIX_TYPE_JOURNAL


def test_multicast_address_holds_the_first_octet_in_the_low_byte():
    assert multicast_address_to_int("234.1.2.3") == 0x030201EA
    assert multicast_address_from_int(0x030201EA) == "234.1.2.3"


def test_from_queue_format_accepts_a_direct_string_that_repeats_the_suffix():
    qf = QueueFormat(3, 0x81, 0, "OS:srv01\\orders;JOURNAL")
    assert qf.validate() is None
    assert from_queue_format(qf) == parse_format_name("DIRECT=OS:srv01\\orders;JOURNAL")


def test_from_queue_format_accepts_a_subqueue_string_without_suffix_type():
    qf = QueueFormat(8, 0x00, 0, "OS:srv01\\orders;poison")
    assert from_queue_format(qf).subqueue_name == "poison"


def test_a_multiple_element_name_has_no_queue_format():
    with pytest.raises(FormatNameError, match="multiple-element"):
        to_queue_format(parse_format_name(f"PUBLIC={G},PUBLIC={G2}"))


def test_queue_format_type_unknown_has_no_format_name():
    qf = QueueFormat(0)
    assert qf.validate() is None
    with pytest.raises(FormatNameError, match="UNKNOWN"):
        from_queue_format(qf)


def test_from_queue_format_rejects_a_broken_structure():
    with pytest.raises(FormatNameError, match="MACHINE"):
        from_queue_format(QueueFormat(4, 0x00, 0, UG))
    with pytest.raises(FormatNameError, match="0-65535"):
        from_queue_format(QueueFormat(7, 0, 0, MulticastId(0x010101EA, 70000)))
    with pytest.raises(FormatNameError, match="224.0.0.0"):
        from_queue_format(QueueFormat(7, 0, 0, MulticastId(0x0100000A, 80)))


def test_enumerations_have_the_values_of_the_documents():
    assert [int(t) for t in QFT] == list(range(9))
    assert QFT.QUEUE_FORMAT_TYPE_SUBQUEUE == 8 and QFT.QUEUE_FORMAT_TYPE_DL == 6
    assert [int(s) for s in SFX] == list(range(6))
    assert QUEUE_FORMAT_FLAG_SYSTEM == 0x80


# ------------------------------------------------------------------ QueueFormat.validate

BROKEN_QUEUE_FORMATS = [
    (QueueFormat(9), "not a QUEUE_FORMAT_TYPE"),
    (QueueFormat(-1), "not a QUEUE_FORMAT_TYPE"),
    (QueueFormat(None), "not a QUEUE_FORMAT_TYPE"),
    (QueueFormat(True), "not a QUEUE_FORMAT_TYPE"),
    (QueueFormat(1, 0x100, 0, UG), "unsigned char"),
    (QueueFormat(1, 0x06, 0, UG), "not a QUEUE_SUFFIX_TYPE"),
    (QueueFormat(1, 0x40, 0, UG), "neither 0x00 nor 0x80"),
    (QueueFormat(1, 0x80, 0, UG), "QUEUE_SUFFIX_TYPE_NONE needs Flags 0x00"),
    (QueueFormat(1, 0x01, 0, UG), "QUEUE_SUFFIX_TYPE_JOURNAL needs Flags 0x80"),
    (QueueFormat(4, 0x00, 0, UG), "QUEUE_SUFFIX_TYPE_NONE is not allowed with m_qft QUEUE_FORMAT_TYPE_MACHINE"),
    (QueueFormat(5, 0x81, 0, UG), "JOURNAL is not allowed with m_qft QUEUE_FORMAT_TYPE_CONNECTOR"),
    (QueueFormat(6, 0x81, 0, DlId(UG)), "JOURNAL is not allowed with m_qft QUEUE_FORMAT_TYPE_DL"),
    (QueueFormat(7, 0x81, 0, MulticastId(0xEA, 1)), "JOURNAL is not allowed"),
    (QueueFormat(1, 0x82, 0, UG), "DEADLETTER is not allowed with m_qft QUEUE_FORMAT_TYPE_PUBLIC"),
    (QueueFormat(2, 0x82, 0, ObjectId(UG, 1)), "DEADLETTER is not allowed"),
    (QueueFormat(1, 0x83, 0, UG), "DEADXACT is not allowed"),
    (QueueFormat(2, 0x04, 0, ObjectId(UG, 1)), "XACTONLY is not allowed"),
    (QueueFormat(3, 0x05, 0, "OS:a\\q;s"), "SUBQUEUE is not allowed"),
    (QueueFormat(8, 0x85, 0, "OS:a\\q;s"), "needs Flags 0x00"),
    (QueueFormat(1, 0, 0x10000, UG), "unsigned short"),
    (QueueFormat(1, 0, 0, str(UG)), "needs m_gPublicID of type UUID"),
    (QueueFormat(0, 0, 0, UG), "selects no union member"),
    (QueueFormat(2, 0, 0, ObjectId(UG, 1 << 32)), "DWORD Uniquifier"),
    (QueueFormat(2, 0, 0, UG), "needs m_oPrivateID"),
    (QueueFormat(6, 0, 0, DlId(G)), "m_DlGuid must be a GUID"),
    (QueueFormat(7, 0, 0, MulticastId(-1, 80)), "ULONG"),
    (QueueFormat(3, 0, 0, None), "needs m_pDirectID"),
    (QueueFormat(3, 0, 0, "FTP:a\\q"), "needs a protocol"),
    (QueueFormat(3, 0, 0, "OS:a\\SYSTEM$"), "SYSTEM$ needs"),
    (QueueFormat(3, 0, 0, "OS:a\\q;s"), "names a subqueue"),
    (QueueFormat(3, 0, 0, "OS:a\\q;JOURNAL"), "m_SuffixAndFlags has no suffix"),
    (QueueFormat(8, 0x05, 0, "OS:a\\q"), "has no ;subqueue"),
    (QueueFormat(3, 0x82, 0, "OS:a\\q"), "follows only SYSTEM$"),
]


@pytest.mark.parametrize(("qf", "fragment"), BROKEN_QUEUE_FORMATS)
def test_validate_names_the_rule_a_broken_queue_format_breaks(qf, fragment):
    reason = qf.validate()
    assert reason is not None and fragment in reason, reason
    assert "\n" not in reason


def test_validate_accepts_every_suffix_the_table_allows():
    assert QueueFormat(0, 0x81).validate() is None  # JOURNAL is not forbidden with UNKNOWN
    assert QueueFormat(4, 0x83, 0, UG).validate() is None
    assert QueueFormat(5, 0x84, 0, UG).validate() is None  # XACTONLY states no Flags value
    assert QueueFormat(5, 0x04, 0, UG).validate() is None


def test_validate_ignores_m_reserved():
    assert QueueFormat(1, 0, 0xBEEF, UG).validate() is None


@given(st.builds(QueueFormat, st.one_of(st.integers(-2, 300), st.none(), st.text(max_size=3)),
                 st.integers(-1, 0x1FF), st.integers(-1, 0x10000),
                 st.one_of(st.none(), st.uuids(), st.text(max_size=30),
                           st.builds(ObjectId, st.uuids(), st.integers(-1, 1 << 33)),
                           st.builds(DlId, st.uuids(), st.none() | st.text(max_size=5)),
                           st.builds(MulticastId, st.integers(-1, 1 << 33),
                                     st.integers(-1, 1 << 33)))))
def test_validate_never_raises_and_agrees_with_from_queue_format(qf):
    reason = qf.validate()
    assert reason is None or (isinstance(reason, str) and "\n" not in reason)
    if reason is not None:
        with pytest.raises(FormatNameError):
            from_queue_format(qf)


# ------------------------------------------------------------------ MGMT_OBJECT

@pytest.mark.req("MS-MQMR/2.2.1.2/R1")
@pytest.mark.parametrize("bad_type", [0, 4, -1, 0x100000000, None])
def test_mgmt_object_type_must_be_1_2_or_3(bad_type):
    reason = MgmtObject(bad_type).validate()
    assert reason is not None and "1, 2 or 3" in reason


@pytest.mark.req("MS-MQMR/2.2.1.2/R1")
def test_mgmt_object_of_each_type_validates():
    assert [int(t) for t in MgmtObjectType] == [1, 2, 3]
    qf = to_queue_format(parse_format_name("DIRECT=OS:srv01\\private$\\orders"))
    assert MgmtObject(MgmtObjectType.MGMT_QUEUE, qf).validate() is None
    assert MgmtObject(MgmtObjectType.MGMT_MACHINE).validate() is None
    assert MgmtObject(MgmtObjectType.MGMT_SESSION, Reserved2=7).validate() is None


def test_mgmt_queue_needs_a_valid_queue_format():
    assert "needs pQueueFormat" in MgmtObject(MgmtObjectType.MGMT_QUEUE).validate()
    reason = MgmtObject(MgmtObjectType.MGMT_QUEUE, QueueFormat(4, 0, 0, UG)).validate()
    assert reason.startswith("pQueueFormat: ") and "MACHINE" in reason


def test_mgmt_machine_and_session_select_no_queue_format():
    qf = QueueFormat(1, 0, 0, UG)
    assert "selects no pQueueFormat" in MgmtObject(MgmtObjectType.MGMT_MACHINE, qf).validate()
    assert "Reserved" in MgmtObject(MgmtObjectType.MGMT_MACHINE, Reserved1=-1).validate()


# ------------------------------------------------------------------ MS-MQRR 2.2.3 subset

def test_remoteread_supports_its_subset_of_queue_format_types_and_direct_protocols():
    # MS-MQRR 2.2.3 limits the protocols only "when m_qft is QUEUE_FORMAT_TYPE_DIRECT"; read
    # literally, a SUBQUEUE string over HTTP is inside the subset
    ok = [f"PUBLIC={G}", f"PRIVATE={G}\\1", "DIRECT=TCP:10.0.0.5\\q", "DIRECT=OS:srv01\\q",
          f"MACHINE={G};JOURNAL", "DIRECT=HTTP://w/msmq\\q;sub"]
    for text in ok:
        assert remoteread_unsupported(to_queue_format(parse_format_name(text))) is None, text
    assert remoteread_unsupported(QueueFormat(0)) is None
    no = [f"CONNECTOR={G}", f"DL={G}", "MULTICAST=234.1.1.1:1", "DIRECT=HTTP://w/msmq\\q",
          "DIRECT=SPX:1:2\\q"]
    for text in no:
        reason = remoteread_unsupported(to_queue_format(parse_format_name(text)))
        assert reason is not None and "MS-MQRR 2.2.3" in reason, text


# ------------------------------------------------------------------ property: round trips

_NAME_ALPHABET = st.sampled_from(
    sorted({chr(c) for c in [0x21, *range(0x23, 0x2B), *range(0x2D, 0x3B), *range(0x3C, 0x5C),
                             *range(0x5D, 0x7F)]} | set("éüЖ中")))
_HOST_ALPHABET = st.sampled_from(sorted({chr(c) for c in range(0x21, 0x7F)} - set(",;\\:/")))
_KEYWORDS = {"JOURNAL", "DEADLETTER", "DEADXACT", "XACTONLY", "PRIVATE$", "SYSTEM$"}


def _names(top):
    return st.text(_NAME_ALPHABET, min_size=1, max_size=top).filter(
        lambda s: s.upper() not in _KEYWORDS)


def _hex(top):
    return st.text("0123456789abcdefABCDEF", min_size=1, max_size=top)


_ipv4 = st.tuples(*[st.integers(0, 255)] * 4).map(lambda t: ".".join(map(str, t)))


@st.composite
def direct_names(draw, element=False):
    protocol = draw(st.sampled_from(list(DirectProtocol)))
    if protocol is DirectProtocol.OS:
        address = draw(st.text(_HOST_ALPHABET, min_size=1, max_size=20))
    elif protocol is DirectProtocol.TCP:
        address = draw(_ipv4)
    elif protocol in (DirectProtocol.SPX, DirectProtocol.IPX):
        address = f"{draw(_hex(8))}:{draw(_hex(12))}"
    else:
        host = draw(st.text(_HOST_ALPHABET, min_size=1, max_size=20))
        port = draw(st.none() | st.integers(0, 65535))
        msmq = draw(st.sampled_from(["/msmq", "/MSMQ", "/Msmq"]))
        address = f"//{host}{'' if port is None else f':{port}'}{msmq}"
    shape = draw(st.sampled_from(["public", "private"] + ([] if element else ["system"])))
    subqueue = None
    if shape == "system":
        path = draw(st.sampled_from(["SYSTEM$", "system$"]))
        suffix = draw(st.sampled_from([SFX.QUEUE_SUFFIX_TYPE_JOURNAL,
                                       SFX.QUEUE_SUFFIX_TYPE_DEADLETTER,
                                       SFX.QUEUE_SUFFIX_TYPE_DEADXACT]))
    else:
        name = draw(_names(124))
        path = f"{draw(st.sampled_from(['private$', 'PRIVATE$']))}\\{name}" \
            if shape == "private" else name
        suffix = draw(st.sampled_from([SFX.QUEUE_SUFFIX_TYPE_NONE, SFX.QUEUE_SUFFIX_TYPE_SUBQUEUE]
                                      + ([] if element else [SFX.QUEUE_SUFFIX_TYPE_JOURNAL])))
        if suffix is SFX.QUEUE_SUFFIX_TYPE_SUBQUEUE:
            subqueue = draw(_names(32))
    return FormatName(FormatNameKind.DIRECT, protocol=protocol, address=address, queue_path=path,
                      suffix=suffix, subqueue=subqueue)


_NONE = SFX.QUEUE_SUFFIX_TYPE_NONE
_JOURNAL = SFX.QUEUE_SUFFIX_TYPE_JOURNAL
_domains = st.none() | st.text(st.sampled_from(sorted({chr(c) for c in range(0x21, 0x7F)} - set(",;@\\"))),
                               min_size=1, max_size=30)


def single_names(element=False):
    journal = [] if element else [_JOURNAL]
    return st.one_of(
        direct_names(element),
        st.builds(FormatName, st.just(FormatNameKind.PUBLIC), guid=st.uuids(),
                  suffix=st.sampled_from([_NONE, *journal])),
        st.builds(FormatName, st.just(FormatNameKind.PRIVATE), guid=st.uuids(),
                  queue_number=st.integers(0, 0xFFFFFFFF),
                  suffix=st.sampled_from([_NONE, *journal])),
        st.builds(FormatName, st.just(FormatNameKind.CONNECTOR), guid=st.uuids(),
                  suffix=st.sampled_from([_NONE, SFX.QUEUE_SUFFIX_TYPE_XACTONLY])),
        st.builds(FormatName, st.just(FormatNameKind.DL), guid=st.uuids(), domain=_domains),
        st.builds(FormatName, st.just(FormatNameKind.MULTICAST),
                  multicast_address=st.tuples(st.integers(224, 239), _ipv4).map(
                      lambda t: f"{t[0]}.{t[1].split('.', 1)[1]}"),
                  port=st.integers(0, 65535)),
        *([] if element else [st.builds(
            FormatName, st.just(FormatNameKind.MACHINE), guid=st.uuids(),
            suffix=st.sampled_from([_JOURNAL, SFX.QUEUE_SUFFIX_TYPE_DEADLETTER,
                                    SFX.QUEUE_SUFFIX_TYPE_DEADXACT]))]),
    )


format_names = st.one_of(
    single_names(),
    st.lists(single_names(element=True), min_size=2, max_size=4).map(
        lambda es: FormatName(FormatNameKind.MULTIPLE_ELEMENT, elements=tuple(es))),
)


@given(format_names)
def test_any_format_name_round_trips_through_text_and_queue_format(name):
    text = str(name)
    again = parse_format_name(text)
    assert again == name and str(again) == text
    assert parse_format_name(text.upper()) == name
    assert parse_format_name(text.lower()) == name
    if name.is_multiple_element:
        return
    qf = to_queue_format(name)
    assert qf.validate() is None
    assert from_queue_format(qf) == name
    assert str(from_queue_format(qf)) == text
