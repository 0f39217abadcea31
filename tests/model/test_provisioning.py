"""model/provisioning.py: a provisioning document (a mapping) to ADM state, with no file, clock
or security of its own: the caller gives the arrival time and takes the access lists."""

from __future__ import annotations

import pytest

from mqconform.model.adm import QueueType
from mqconform.model.provisioning import (
    ProvisionError,
    create_queue_from_spec,
    make_message,
    provision,
)

NULL = "00000000-0000-0000-0000-000000000000"
DOCUMENT = {"queue_manager": {"computer_name": "HOST1"},
            "queues": [{"path": "private$\\orders", "messages": [{"body": "one"},
                                                                 {"body": "two"}]},
                       {"path": "public1", "access": {"receive": ["bob"]}}]}


def test_the_caller_gives_each_message_its_arrival_time_and_takes_the_access_lists():
    times = iter([1767225600, 1767225601])
    seen = []
    made = provision(DOCUMENT, arrival_time=lambda: next(times),
                     on_access=lambda queue, entry, where: seen.append((queue.pathname, entry,
                                                                        where)))
    orders = made.queues["host1\\private$\\orders"]
    assert [p.message_reference.arrival_time for p in orders.message_position_list] == [
        1767225600, 1767225601]
    assert seen == [("HOST1\\public1", {"receive": ["bob"]}, "queues[1].access")]
    assert made.security is None  # the server's to add


def test_an_access_list_without_anyone_to_take_it_is_refused():
    with pytest.raises(ProvisionError, match=r"queues\[1\]\.access: access lists are the server"):
        provision(DOCUMENT)


def test_the_same_document_builds_the_same_queue_manager_twice():
    a, b = (provision(DOCUMENT, on_access=lambda *_: None) for _ in range(2))
    qa, qb = (m.env.local_queue_manager for m in (a, b))
    assert qa.identifier == qb.identifier and qa.computer_name == qb.computer_name == "HOST1"
    assert [q.pathname for q in qa.queue_collection] == [q.pathname for q in qb.queue_collection]


@pytest.mark.req("MS-MQDMPR/3.1.7.1.5/R51")
def test_a_public_queue_gets_an_identifier_of_its_own_that_its_public_name_finds():
    """Without the directory, a Public queue's Identifier is derived from the queue manager's
    Identifier and the path name: not GUID_NULL, the same on every start, one per queue, and
    Open Queue's PUBLIC=QueueGuid finds the queue by it (MS-MQMQ 2.1.3)."""
    from mqconform.model.formats import parse_format_name
    from mqconform.model.queue_management import find_queue

    document = {"queue_manager": {"computer_name": "HOST1"},
                "queues": [{"path": "public1"}, {"path": "public2"},
                           {"path": "private$\\orders"}]}
    a, b = (provision(document) for _ in range(2))
    one, two, private = (a.queues[k] for k in ("host1\\public1", "host1\\public2",
                                                "host1\\private$\\orders"))
    assert one.queue_type is QueueType.Public and str(one.identifier) != NULL
    assert one.identifier != two.identifier
    assert one.identifier == b.queues["host1\\public1"].identifier
    assert str(private.identifier) == NULL  # a private queue is no directory object
    assert find_queue(a.env, parse_format_name(f"PUBLIC={one.identifier}")) is one
    assert find_queue(a.env, parse_format_name(f"PUBLIC={two.identifier}")) is two


@pytest.mark.req("MS-MQDMPR/3.1.7.1.32/R3")
def test_the_source_journaling_a_message_asks_for_travels_in_its_packet():
    """``positive_journaling`` and ``negative_journaling`` are the Message's
    PositiveJournalingRequested and NegativeJournalingRequested: UserHeader.Flags.JP, JN."""
    from mqconform.model.packet import decode_packet

    made = provision({"queues": [{"path": "a", "messages": [
        {"body": "both", "positive_journaling": True, "negative_journaling": True},
        {"body": "neither"}]}]})
    both, neither = (p.message_reference for p in
                     made.queues["mqref\\a"].message_position_list)
    assert (both.positive_journaling_requested, both.negative_journaling_requested) == (
        True, True)
    flags = decode_packet(both.packet).user_message.user_header.flags
    assert (flags.jp, flags.jn) == (True, True)
    flags = decode_packet(neither.packet).user_message.user_header.flags
    assert (flags.jp, flags.jn) == (False, False)


@pytest.mark.req("MS-MQDMPR/3.1.7.1.32/R3")
def test_a_connector_applications_message_carries_its_connector_type():
    """``connector_type`` is Message.ConnectorTypeIdentifier: UserHeader.Flags.CQ and
    UserHeader.ConnectorType."""
    import uuid

    from mqconform.model.packet import decode_packet

    kind = "0f3e6c2a-4b1d-4e8f-9a7c-5d2b8e1f4a6c"
    made = provision({"queues": [{"path": "a", "messages": [
        {"body": "connected", "connector_type": kind}]}]})
    [position] = made.queues["mqref\\a"].message_position_list
    user = decode_packet(position.message_reference.packet).user_message.user_header
    assert user.flags.cq and user.connector_type == uuid.UUID(kind)


@pytest.mark.req("MS-MQDMPR/3.1.7.1.32/R3")
def test_the_acknowledgements_a_message_requests_travel_in_its_flags():
    """``acknowledgements``: Message.AcknowledgementsRequested by name (a list, or one text
    separated by commas; aliases such as AckNackReachQueue too): MessagePropertiesHeader.Flags."""
    from mqconform.model.packet import decode_packet

    made = provision({"queues": [{"path": "a", "messages": [
        {"body": "1", "acknowledgements": ["AckPosArrival", "AckNegReceive"]},
        {"body": "2", "acknowledgements": "AckPosReceive, AckNackReachQueue"}]}]})
    first, second = (decode_packet(p.message_reference.packet).user_message
                     .message_properties_header.flags
                     for p in made.queues["mqref\\a"].message_position_list)
    assert (first.pa, first.pr, first.na, first.nr) == (True, False, False, True)
    assert (second.pa, second.pr, second.na, second.nr) == (False, True, True, False)


@pytest.mark.req("MS-MQDMPR/3.1.7.1.32/R8")
def test_a_messages_extension_travels_in_its_packet():
    from mqconform.model.packet import decode_packet

    made = provision({"queues": [{"path": "a", "messages": [
        {"body": "b", "extension_hex": "00ff10"}]}]})
    [position] = made.queues["mqref\\a"].message_position_list
    mp = decode_packet(position.message_reference.packet).user_message.message_properties_header
    assert (mp.extension_data, mp.message_body) == (b"\x00\xff\x10", b"b")


@pytest.mark.req("MS-MQDMPR/3.1.7.1.30/R7", "MS-MQDMPR/3.1.7.1.32/R3")
def test_a_signed_message_has_a_security_header_with_its_sender_and_signature():
    from mqconform.model.adm import MessageSenderIdentifierType
    from mqconform.model.packet import decode_packet

    sid = "010500000000000515000000dcf4dc3b833d2b46828ba628e9030000"
    made = provision({"queues": [{"path": "a", "messages": [
        {"body": "s", "authentication_level": "Sig20", "sender_sid_hex": sid,
         "signature_hex": "a1b2"}]}]})
    [position] = made.queues["mqref\\a"].message_position_list
    user = decode_packet(position.message_reference.packet).user_message
    header = user.security_header
    assert user.user_header.flags.sh and header is not None
    assert header.flags.st is MessageSenderIdentifierType.Sid and not header.flags.au
    assert (header.security_data.security_id.hex(), header.security_data.signature) == (
        sid, b"\xa1\xb2")


@pytest.mark.req("MS-MQDMPR/3.1.7.1.32/R3", "MS-MQDMPR/3.1.7.1.32/R11",
                 "MS-MQDMPR/3.1.7.1.32/R13", "MS-MQDMPR/3.1.7.1.32/R14",
                 "MS-MQDMPR/3.1.7.1.32/R16")
def test_a_private_message_signed_by_an_alternative_provider_has_its_security_items():
    from mqconform.model.adm import MessageEncryptionAlgorithm, MessageHashAlgorithm
    from mqconform.model.adm import MessagePrivacyLevel as P
    from mqconform.model.packet import decode_packet

    made = provision({"queues": [{"path": "a", "messages": [
        {"body": "s", "authentication_level": "Sig30", "privacy_level": "Advanced",
         "encryption_algorithm": "AES192", "hash_algorithm": "SHA_512",
         "symmetric_key_hex": "0a0b0c", "sender_certificate_hex": "3082",
         "authentication_provider_name": "Contoso CSP", "sender_identifier_type": "None_",
         "authentication_provider_type": 24}]}]})
    [position] = made.queues["mqref\\a"].message_position_list
    user = decode_packet(position.message_reference.packet).user_message
    mp, header = user.message_properties_header, user.security_header
    assert (mp.privacy_level, mp.encryption_algorithm, mp.hash_algorithm) == (
        P.Advanced, MessageEncryptionAlgorithm.AES192, MessageHashAlgorithm.SHA_512)
    assert header.flags.eb and not header.flags.de and header.flags.st.name == "None_"
    data = header.security_data
    assert (data.encryption_key, data.sender_cert) == (b"\x0a\x0b\x0c", b"\x30\x82")
    assert (data.provider_info.provider_type, data.provider_info.provider_name) == (
        24, "Contoso CSP")


@pytest.mark.parametrize(("key", "value", "error"), [
    ("privacy_level", "Secret", "privacy_level: one of ['Advanced', 'Base', 'Enhanced', 'None_']"),
    ("encryption_algorithm", "DES", "encryption_algorithm: one of "),
    ("hash_algorithm", 5, "hash_algorithm: one of "),
    ("symmetric_key_hex", "0g", "symmetric_key_hex: not hexadecimal"),
    ("final_ack_required", True, "final_ack_required: goes with transactional: true"),
    ("connector_queue_manager", "6b0e4c55-7d43-4f0e-9a55-32f8c1c6b2a1",
     "connector_queue_manager: goes with transactional: true"),
    ("admin_queues", "PUBLIC=6b0e4c55-7d43-4f0e-9a55-32f8c1c6b2a1",
     "admin_queues: goes with destination_queues"),
    ("destination_queues", "DL=6b0e4c55-7d43-4f0e-9a55-32f8c1c6b2a1@contoso.com",
     "destination_queues[0]: must be a PUBLIC=, PRIVATE=, DIRECT= or DL= format name"),
    ("sender_identifier_type", "Name", "sender_identifier_type: one of ['None_', "
                                       "'QueueManagerIdentifier', 'Sid']"),
    ("authentication_provider_name", "", "authentication_provider_name: must not be empty"),
    ("authentication_provider_type", 3,
     "authentication_provider_type: goes with authentication_provider_name"),
])
def test_a_message_security_key_out_of_its_range_is_refused_naming_it(key, value, error):
    with pytest.raises(ProvisionError) as caught:
        provision({"queues": [{"path": "a", "messages": [{"body": "s", key: value}]}]})
    assert error in str(caught.value)


def test_a_message_its_queue_manager_sent_carries_that_guid_as_its_security_id():
    import uuid

    from mqconform.model.adm import MessageSenderIdentifierType
    from mqconform.model.packet import decode_packet

    qm = "3b7e2c91-4f0a-4d6e-8a5c-9e1f2d3c4b5a"
    made = provision({"queues": [{"path": "a", "messages": [
        {"body": "s", "authentication_level": "Sig10", "sender_queue_manager": qm}]}]})
    [position] = made.queues["mqref\\a"].message_position_list
    header = decode_packet(position.message_reference.packet).user_message.security_header
    assert header.flags.st is MessageSenderIdentifierType.QueueManagerIdentifier
    assert header.security_data.security_id == uuid.UUID(qm).bytes_le
    with pytest.raises(ProvisionError, match="sender_queue_manager: names the sender by its"):
        provision({"queues": [{"path": "a", "messages": [
            {"body": "s", "sender_queue_manager": qm, "sender_sid_hex": "0105"}]}]})


def test_a_sender_sid_with_another_sender_identifier_type_is_refused():
    with pytest.raises(ProvisionError, match="sender_identifier_type: a sender_sid_hex is a Sid"):
        provision({"queues": [{"path": "a", "messages": [
            {"body": "s", "sender_sid_hex": "0105", "sender_identifier_type": "None_"}]}]})


@pytest.mark.req("MS-MQDMPR/3.1.7.1.32/R3")
def test_a_transactional_message_carries_its_final_ack_request_and_connector_queue_manager():
    import uuid

    from mqconform.model.packet import decode_packet

    connector = "6b0e4c55-7d43-4f0e-9a55-32f8c1c6b2a1"
    made = provision({"queues": [{"path": "a", "transactional": True, "messages": [
        {"body": "t", "transactional": True, "final_ack_required": True,
         "connector_queue_manager": connector}]}]})
    [position] = made.queues["mqref\\a"].message_position_list
    th = decode_packet(position.message_reference.packet).user_message.transaction_header
    assert th.flags.fa and th.flags.cg and th.connector_qm_guid == uuid.UUID(connector)


@pytest.mark.req("MS-MQDMPR/3.1.7.1.30/R10")
def test_a_message_sent_to_several_queues_lists_them_in_its_packet():
    from mqconform.model.packet import decode_packet

    names = ["DIRECT=TCP:192.0.2.44\\private$\\a", "PUBLIC=8e0a4c55-7d43-4f0e-9a55-32f8c1c6b2a1"]
    made = provision({"queues": [{"path": "a", "messages": [
        {"body": "m", "destination_queues": names}, {"body": "t",
                                                      "destination_queues": ",".join(names)}]}]})
    for position in made.queues["mqref\\a"].message_position_list:
        user = decode_packet(position.message_reference.packet).user_message
        assert user.user_header.flags.mq
        assert [n.upper() for n in user.multi_queue_format_header.destination] == [
            n.upper() for n in names]


def test_a_control_api_queue_may_be_a_connector_queue():
    made = provision({"queue_manager": {"computer_name": "HOST1"}})
    queue = create_queue_from_spec(made.env, {"path": "c1", "queue_type": "Connector"})
    assert queue.queue_type is QueueType.Connector and queue.private_queue_number is None
    with pytest.raises(ProvisionError, match="queue_type: Private or Connector"):
        create_queue_from_spec(made.env, {"path": "c2", "queue_type": "Outgoing"})


@pytest.mark.req("MS-MQDMPR/3.1.7.1.3/R9", "MS-MQDMPR/3.1.7.1.3/R10")
def test_a_journaled_queue_copies_what_is_received_from_it_to_its_journal():
    """``journal: true`` is Queue.Journaling (copied by Create Queue); ``journal_quota`` the
    JournalQuota, which the journal queue takes as its Quota."""
    from mqconform.model.adm import QueueAccessType, QueueShareMode
    from mqconform.model.formats import parse_format_name
    from mqconform.model.message_ops import dequeue_message
    from mqconform.model.queue_management import close_queue, open_queue

    made = provision({"queues": [
        {"path": "private$\\kept", "journal": True, "journal_quota": 64,
         "messages": [{"body": "one"}, {"body": "two"}]},
        {"path": "private$\\plain", "messages": [{"body": "one"}]}]})
    kept, plain = (made.queues[f"mqref\\private$\\{n}"] for n in ("kept", "plain"))
    assert kept.journaling is True and kept.journal_quota == 64
    assert kept.journal_queue_reference.quota == 64
    assert plain.journaling is False and plain.journal_queue_reference is not None
    env = made.env
    for queue in (kept, plain):
        opened = open_queue(env, parse_format_name(f"DIRECT=OS:{queue.pathname}"),
                            QueueAccessType.ReceiveAccess, QueueShareMode.DenyNone)
        desc = opened.open_queue_descriptor
        assert env.call(dequeue_message(env, desc, timeout=0)).message.body == b"one"
        close_queue(env, desc)
    assert [p.message_reference.body for p in kept.journal_queue_reference.message_position_list
            ] == [b"one"]
    assert len(plain.journal_queue_reference.message_position_list) == 0


@pytest.mark.parametrize("document, where", [
    ([], "the document must be a mapping"),
    ({"queues": {"path": "a"}}, "queues: must be a list"),
    ({"queues": [{"path": "a", "messages": [{"body": "x", "priority": 9}]}]},
     r"queues\[0\]\.messages\[0\]\.priority: must be between 0 and 7"),
    ({"nonsense": 1}, r"unknown key\(s\) \['nonsense'\]"),
    ({"queues": [{"path": "a", "journal": "yes"}]}, r"queues\[0\]\.journal: must be true/false"),
    ({"queues": [{"path": "a", "messages": [{"body": "x", "transactional": 1}]}]},
     r"queues\[0\]\.messages\[0\]\.transactional: must be true/false"),
    ({"queues": [{"path": "a", "messages": [{"body": "x", "transactional": True,
                                             "priority": 5}]}]},
     r"queues\[0\]\.messages\[0\]\.priority: a transactional message's priority"),
    ({"queues": [{"path": "a", "messages": [{"body": "x", "admin_queue": "nowhere"}]}]},
     r"queues\[0\]\.messages\[0\]\.admin_queue: 'nowhere' does not start with"),
    ({"queues": [{"path": "a", "messages": [{"body": "x",
                                             "response_queue": "MACHINE=" + NULL + ";JOURNAL"}]}]},
     r"response_queue: must be a PUBLIC=, PRIVATE= or DIRECT= format name"),
    ({"queues": [{"path": "a", "messages": [{"body": "x",
                                             "admin_queue": "PUBLIC=" + NULL + ";JOURNAL"}]}]},
     r"admin_queue: must be a PUBLIC=, PRIVATE= or DIRECT= format name of a queue \(no "
     r"subqueue, no suffix\)"),
    ({"queues": [{"path": "a", "messages": [{"body": "x", "positive_journaling": "yes"}]}]},
     r"messages\[0\]\.positive_journaling: must be true/false"),
    ({"queues": [{"path": "a", "messages": [{"body": "x", "connector_type": "nope"}]}]},
     r"messages\[0\]\.connector_type: not a GUID"),
    ({"queues": [{"path": "a", "messages": [{"body": "x", "acknowledgements": "AckSoon"}]}]},
     r"messages\[0\]\.acknowledgements: 'AckSoon' is not one of"),
    ({"queues": [{"path": "a", "messages": [{"body": "x", "extension_hex": "0g"}]}]},
     r"messages\[0\]\.extension_hex: not hexadecimal"),
    ({"queues": [{"path": "a", "messages": [{"body": "x", "authentication_level": "Sig99"}]}]},
     r"messages\[0\]\.authentication_level: one of"),
    ({"queues": [{"path": "a", "messages": [{"body": "x", "sender_sid_hex": "xyz"}]}]},
     r"messages\[0\]\.sender_sid_hex: not hexadecimal"),
    ({"queues": [{"path": "a", "messages": [{"body": "x", "destination_queues": []}]}]},
     r"messages\[0\]\.destination_queues: must be a list of format names"),
    ({"queues": [{"path": "a", "messages": [{"body": "x", "direct": True,
                                             "destination_queue": "DIRECT=OS:h\\q"}]}]},
     r"messages\[0\]: give direct or destination_queue, not both"),
])
def test_errors_name_the_place(document, where):
    with pytest.raises(ProvisionError, match=where):
        provision(document)


def test_the_same_message_sent_twice_is_two_messages_with_the_same_packet():
    """make_message remembers a spec's packet: each call still gives a message of its own."""
    spec = {"body": "twice", "label": "a", "priority": 5}
    first = make_message(spec, "message", "MQREF\\private$\\q")
    first.priority, first.label = 1, "changed"
    second = make_message(dict(spec), "message", "MQREF\\private$\\q")
    assert second is not first and second.packet == first.packet
    assert (second.body, second.label, second.priority) == (b"twice", "a", 5)
    direct = make_message(dict(spec, direct=True), "message", "MQREF\\private$\\q")
    other = make_message(dict(spec, direct=True), "message", "MQREF\\private$\\r")
    assert direct.destination_queue_format_name == "DIRECT=OS:MQREF\\private$\\q"
    assert other.destination_queue_format_name == "DIRECT=OS:MQREF\\private$\\r"


@pytest.mark.req("MS-MQDMPR/3.1.7.1.9/R11", "MS-MQDMPR/3.1.7.1.9/R12", "MS-MQDMPR/3.1.7.1.30/R6")
def test_a_transactional_message_has_a_transaction_header_and_a_lookup_identifier_above_2_56():
    """``transactional: true``: the message was sent in a transaction (TransactionIdentifier and
    TransactionalMessageSequenceIdentifier set), its packet has a TransactionHeader (PR 0),
    and Enqueue Message gives it a LookupIdentifier with high-order byte 0x07 - Priority, the
    Priority being 3 (the packet's PR is ignored: errata transactional-message-priority)."""
    from mqconform.model.packet import decode_packet

    made = provision({"queues": [{"path": "private$\\tx", "transactional": True, "messages": [
        {"body": "t", "transactional": True}, {"body": "plain"}]}]})
    [queue] = made.queues.values()
    t, plain = (p.message_reference for p in queue.message_position_list)
    assert t.transactional_message_sequence_identifier is not None
    assert t.first_in_transaction and t.last_in_transaction and t.priority == 3
    header = decode_packet(t.packet).user_message.transaction_header
    assert header is not None and header.tx_sequence_id == (1, 0)
    assert t.lookup_identifier >> 56 == 0x04 and plain.lookup_identifier >> 56 == 0
    assert t.lookup_identifier & ((1 << 56) - 1) < plain.lookup_identifier
    again = make_message({"body": "t", "transactional": True}, "message", queue.pathname)
    assert again.packet == make_message({"body": "t", "transactional": True}, "message",
                                        queue.pathname).packet


@pytest.mark.req("MS-MQDMPR/3.1.1.12/R49", "MS-MQDMPR/3.1.1.12/R50", "MS-MQDMPR/3.1.1.12/R51")
def test_the_queue_names_a_message_gives_travel_in_its_packet_with_their_types():
    """``destination_queue``, ``admin_queue``, ``response_queue``: the format names the sender
    gave; the packet's UserHeader carries each with its DQ, AQ or RQ code (MS-MQMQ 2.2.19.2;
    serialization choice 2 picks the code from the name)."""
    from mqconform.model.packet import decode_packet

    qm = "5f6c3a5e-8a4b-4f1b-9d2e-6d71656e6d71"
    other = "8e0a4c55-7d43-4f0e-9a55-32f8c1c6b2a1"
    message = make_message({"body": "ask", "destination_queue": f"PRIVATE={qm}\\00000003",
                            "admin_queue": "DIRECT=OS:client\\private$\\acks",
                            "response_queue": f"PRIVATE={other}\\0000002a"},
                           "message", "MQREF\\private$\\q")
    user = decode_packet(message.packet).user_message.user_header
    assert [f.name for f in (user.flags.dq, user.flags.aq, user.flags.rq)] == [
        "PrivateQueue", "DirectQueue", "PrivateQueueOnOther"]
    assert user.queue_manager_address == __import__("uuid").UUID(qm)
    assert user.destination_queue == f"PRIVATE={qm}\\00000003"
    assert user.admin_queue == "DIRECT=OS:client\\private$\\acks"
    assert user.response_queue == f"PRIVATE={other}\\0000002a"
    public = make_message({"body": "p", "destination_queue": f"PUBLIC={other}",
                           "response_queue": f"PUBLIC={qm}"}, "message", "MQREF\\q")
    user = decode_packet(public.packet).user_message.user_header
    assert (user.flags.dq.name, user.flags.aq.name, user.flags.rq.name) == (
        "PublicQueue", "None_", "PublicQueue")
    assert (user.destination_queue, user.response_queue) == (f"PUBLIC={other}", f"PUBLIC={qm}")
