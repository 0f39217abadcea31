"""Provisioning documents: queues and messages built through the model, errors that name the
place and never a traceback."""

from __future__ import annotations

import pytest

from mqconform.model.adm import MessagePositionState, QueueType
from mqconform.server.provision import ProvisionError, provision


def test_queues_subqueues_and_messages_are_created():
    made = provision("""
queue_manager: {computer_name: HOST1}
queues:
  - path: private$\\orders
    transactional: true
    subqueues: [retry]
    messages:
      - {body: one, label: first, priority: 5}
      - {body_hex: "00ff"}
  - path: public1
""")
    orders = made.queues["host1\\private$\\orders"]
    assert orders.queue_type is QueueType.Private and orders.transactional
    assert [s.pathname for s in orders.subqueue_collection] == ["HOST1\\private$\\orders;retry"]
    bodies = [p.message_reference.body for p in orders.message_position_list]
    assert bodies == [b"one", b"\x00\xff"]  # priority 5 first
    assert all(p.state is MessagePositionState.Available for p in orders.message_position_list)
    first = orders.message_position_list.head.message_reference
    assert first.label == "first" and first.packet and first.offset
    assert made.queues["host1\\public1"].queue_type is QueueType.Public


def test_a_message_keeps_its_application_dead_letter_queue_through_its_packet():
    made = provision("queues: [{path: a, messages: [{body: x, dead_letter_queue: "
                     "'HOST1\\private$\\dead'}]}]")
    (queue,) = made.queues.values()
    message = queue.message_position_list.head.message_reference
    assert message.application_deadletter_queue == "HOST1\\private$\\dead"


@pytest.mark.req("MS-MQRR/2.2.5.1/R1", "MS-MQRR/2.2.5.1/R4", "MS-MQRR/2.2.5.1/R6",
                 "MS-MQRR/2.2.5.5/R6")
def test_an_srmp_message_received_from_a_host_keeps_both_through_its_packet():
    from mqconform.model.packet import decode_packet

    made = provision("queues: [{path: 'private$\\a', messages: [{body: hi, soap_envelope: "
                     "'<e/>', compound_message: 'POST / HTTP/1.1\r\n\r\nhi', "
                     "received_from: '192.0.2.9', direct: true}]}]")
    (queue,) = made.queues.values()
    message = queue.message_position_list.head.message_reference
    assert message.soap_envelope == "<e/>" and message.body == b"hi"
    decoded = decode_packet(message.packet)
    assert decoded.user_message.user_header.flags.ah
    assert decoded.extras.received_from.address == bytes([192, 0, 2, 9])
    assert decoded.extras.extended_address_header.address == bytes([192, 0, 2, 9])
    assert message.destination_queue_format_name == f"DIRECT=OS:{queue.pathname}"


@pytest.mark.parametrize("text,where", [
    ("queues: 5", "queues: must be a list"),
    ("queues: [{path: 7}]", "queues[0].path: must be a string"),
    ("queues: [{path: a, colour: red}]", "queues[0]: unknown key(s) ['colour']"),
    ("queues: [{path: a, messages: [{body: x, priority: 9}]}]",
     "queues[0].messages[0].priority: must be between 0 and 7"),
    ("queues: [{path: a, messages: [{body: x, body_hex: '00'}]}]",
     "queues[0].messages[0]: give exactly one of body, body_hex"),
    ("queues: [{path: a, messages: [{body_hex: zz}]}]", "queues[0].messages[0].body_hex"),
    ("queues: [{path: 'other\\q'}]", "names computer 'other'"),
    ("queues: [{path: a}, {path: A}]", "queues[1].path: names a queue twice"),
    ('queues: [{path: a, messages: [{body: x, dead_letter_queue: "q\\0"}]}]',
     "queues[0].messages[0].dead_letter_queue: must not contain a null character"),
    ("queues: [{path: a, messages: [{body: x, dead_letter_queue: 5}]}]",
     "queues[0].messages[0].dead_letter_queue: must be a string"),
    ("queues: [{path: a, messages: [{body: x, soap_envelope: '<e/>'}]}]",
     "queues[0].messages[0]: an SRMP message needs both soap_envelope and compound_message"),
    ("queues: [{path: a, messages: [{body: x, received_from: 'host.example'}]}]",
     "queues[0].messages[0].received_from: 'host.example' is not an IPv4 or IPv6 address"),
    ("queues: [{path: a, messages: [{body: x, received_from: '192.0.2.1%3'}]}]",
     "queues[0].messages[0].received_from: a %scope is a number, for an IPv6 address only"),
    ("queues: [{path: a, messages: [{body: x, received_from: 'fe80::1%eth0'}]}]",
     "queues[0].messages[0].received_from: a %scope is a number"),
    ("queues: [{path: a, messages: [{body: x, direct: yes please}]}]",
     "queues[0].messages[0].direct: must be true/false"),
    ("queue_manager: {identifier: nope}", "queue_manager.identifier: not a GUID"),
    ("queues: [ {path: a", "not valid YAML"),
    ("- just a list", "the document must be a mapping"),
])
def test_bad_documents_are_refused_with_the_place_named(text, where):
    with pytest.raises(ProvisionError) as err:
        provision(text, "q.yaml")
    assert where in str(err.value)
    assert "\n" not in str(err.value)


def test_serve_with_a_bad_provisioning_file_exits_2_in_one_line(mqconform, tmp_path):
    bad = tmp_path / "q.yaml"
    bad.write_text("queues: [{path: a, messages: [{body: x, priority: 9}]}]\n")
    proc = mqconform("serve", "--port", "0", "--queues", str(bad))
    assert proc.returncode == 2
    assert proc.stderr.strip() == ("error: queues[0].messages[0].priority: must be between "
                                   "0 and 7")
    missing = mqconform("serve", "--port", "0", "--queues", str(tmp_path / "none.yaml"))
    assert missing.returncode == 2 and "cannot read" in missing.stderr
