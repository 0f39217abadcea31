"""conformance/sut.py: SUT control makes a journaled queue (Queue.Journaling, MS-MQDMPR 3.1.1.2),
an outgoing queue with its transfer state (MS-MQDMPR 3.1.1.3, 3.1.1.4) and a queue's incoming
transactional transfers (3.1.1.5), or says it cannot (Inconclusive), never another queue in
their place."""

from __future__ import annotations

import json
import sys

import pytest

from mqconform.conformance.sut import CommandControl, Inconclusive, NoControl, ReferenceControl
from mqconform.conformance.targets import ModelQueueManager
from mqconform.server.control import ControlApi


def _reference() -> tuple[ReferenceControl, ModelQueueManager]:
    qm = ModelQueueManager.from_yaml(computer_name="MQREF")
    return ReferenceControl(api=ControlApi(qm, arrival_time=lambda: 0)), qm


def _queue(qm: ModelQueueManager, name: str):
    [queue] = [q for q in qm.env.local_queue_manager.queue_collection
               if q.pathname.lower() == f"mqref\\private$\\{name}"]
    return queue


def test_the_reference_control_provisions_a_journaled_queue_and_a_plain_one():
    control, qm = _reference()
    control.provision("private$\\kept", [{"body": b"one"}], journal=True)
    control.provision("private$\\plain", [{"body": b"one"}])
    control.create_queue_from({"path": "private$\\spec", "journal": True})
    kept, plain, spec = (_queue(qm, n) for n in ("kept", "plain", "spec"))
    assert (kept.journaling, plain.journaling, spec.journaling) == (True, False, True)
    assert len(kept.message_position_list) == 1
    assert kept.journal_queue_reference is not None


def test_a_reference_control_api_that_refuses_the_key_makes_the_case_inconclusive():
    """An older control API that knows no "journal" answers 400: the case cannot run on the
    queue it needs."""

    class Older:
        def create_queue(self, spec):
            from mqconform.model.provisioning import ProvisionError

            if "journal" in spec:
                raise ProvisionError("queues[0]: unknown key(s) ['journal']")
            return {"path": spec["path"]}

    control = ReferenceControl(api=Older())
    control.create_queue("private$\\plain")
    with pytest.raises(Inconclusive, match="unknown key"):
        control.create_queue("private$\\kept", journal=True)


def test_no_control_cannot_make_a_journaled_queue():
    with pytest.raises(Inconclusive, match="cannot create queue"):
        NoControl().provision("private$\\q", [], journal=True)


def _recorder(tmp_path, **templates) -> tuple[CommandControl, object]:
    out = tmp_path / "calls"
    commands = {name: f"printf '%s\\n' {text} >> {out}" for name, text in templates.items()}
    return CommandControl(commands), out


def test_a_create_queue_template_takes_journal_as_true_or_false(tmp_path):
    control, out = _recorder(tmp_path, create_queue="{path}:{transactional}:{journal}")
    control.provision("private$\\plain", [])
    control.provision("private$\\kept", [], transactional=True, journal=True)
    assert out.read_text().splitlines() == ["private$\\plain:false:false",
                                            "private$\\kept:true:true"]


def test_without_journal_in_create_queue_a_journaled_queue_goes_through_create_queue_from(
        tmp_path):
    control, out = _recorder(tmp_path, create_queue="plain:{path}",
                             create_queue_from="spec:{spec}")
    control.create_queue("private$\\plain")
    control.create_queue("private$\\kept", label="L", journal=True)
    control.create_queue_from({"path": "private$\\also", "journal": True,
                               "subqueues": ["retry"]})
    plain, kept, also = out.read_text().splitlines()
    assert plain == "plain:private$\\plain"
    assert json.loads(kept.removeprefix("spec:")) == {
        "path": "private$\\kept", "transactional": False, "label": "L", "journal": True}
    assert json.loads(also.removeprefix("spec:")) == {
        "path": "private$\\also", "transactional": False, "label": "", "journal": True,
        "subqueues": ["retry"]}


def test_a_template_that_cannot_say_journal_makes_the_case_inconclusive_and_runs_nothing(
        tmp_path):
    control, out = _recorder(tmp_path, create_queue="{path}")
    with pytest.raises(Inconclusive, match=r"takes no \{journal\}"):
        control.provision("private$\\kept", [{"body": b"x"}], journal=True)
    with pytest.raises(Inconclusive, match=r"takes no \{journal\}"):
        control.create_queue_from({"path": "private$\\kept", "journal": True})
    assert not out.exists()
    control.create_queue("private$\\plain")  # a queue without journaling it can make
    assert out.read_text() == "private$\\plain\n"


def test_a_shell_template_gets_journal_quoted_like_every_value(tmp_path):
    out = tmp_path / "made"
    control = CommandControl({"create_queue": f"printf '%s|%s' {{name}} {{journal}} > {out}"})
    control.create_queue("private$\\q; touch x", journal=True)
    assert out.read_text() == "q; touch x|true"


# ------------------------------------------------------------------ the transfer state

REMOTE = "DIRECT=TCP:192.0.2.20\\private$\\orders"
INFO = {"eod_last_ack": {"seq_id": 9, "seq_no": 3, "prev_no": 2}, "eod_no_ack_count": 1,
        "eod_resend_time": 1_700_000_200}
HISTORY = [{"status": "DnsFailure", "connection_history_time": 1_700_000_000,
            "error": -2147467259, "address_list": ["10.1.2.3"]}]
ENTRIES = [{"format_name": "PUBLIC=1b4e28ba-2fa1-41d2-883f-0016d3cca427",
            "sender_identifier": "0b0b0b0b-0000-4000-8000-000000000002",
            "sequence_identifier": {"ordinal": 7, "time_stamp": 0x65000000},
            "sequence_number": 12, "last_access_time": 1_700_000_000, "reject_count": 2}]


def _outgoing(qm: ModelQueueManager, name: str = REMOTE):
    [queue] = [q for q in qm.env.local_queue_manager.queue_collection
               if getattr(q, "destination_format_name", "") == name]
    return queue


def test_the_reference_control_provisions_an_outgoing_queue_with_its_transfer_state():
    from mqconform.model.adm import (
        SEQUENCE_INFO,
        ConnectionHistoryStatus,
        OutgoingQueueState,
        TxSequenceId,
    )

    control, qm = _reference()
    control.open_outgoing(REMOTE, "Waiting", next_hops=["10.1.2.3"],
                          outgoing_transfer_info=INFO, connection_history=HISTORY)
    queue = _outgoing(qm)
    assert queue.state is OutgoingQueueState.Waiting and queue.next_hops == ["10.1.2.3"]
    info = queue.outgoing_transfer_info_reference
    assert (info.eod_last_ack, info.eod_no_ack_count, info.eod_resend_time,
            info.eod_next_seq) == (SEQUENCE_INFO(9, 3, 2), 1, 1_700_000_200, SEQUENCE_INFO())
    [entry] = queue.connection_history
    assert (entry.status, entry.connection_history_time, entry.error, entry.address_list) == (
        ConnectionHistoryStatus.DnsFailure, 1_700_000_000, -2147467259, ["10.1.2.3"])
    control.create_queue("private$\\in", transactional=True)
    control.set_incoming_transactional_transfer_info("private$\\in", ENTRIES)
    [incoming] = _queue(qm, "in").incoming_transactional_transfer_info_collection
    assert (incoming.queue_reference, incoming.sequence_identifier, incoming.reject_count) == (
        _queue(qm, "in"), TxSequenceId(7, 0x65000000), 2)


def test_the_reference_control_over_http_sends_the_transfer_state_to_the_control_api():
    from mqconform.server.main import start

    running = start(host="127.0.0.1", port=0, control_port=0, control_unauthenticated=True)
    try:
        host, port = running.control.address
        control = ReferenceControl(url=f"http://{host}:{port}")
        control.open_outgoing(REMOTE, "Connected", connection_history=HISTORY,
                              outgoing_transfer_info=INFO)
        control.create_queue("private$\\in")
        control.set_incoming_transactional_transfer_info("private$\\in", ENTRIES)
        with pytest.raises(Inconclusive, match=r"400 .*connection_history\[0\]\.status"):
            control.open_outgoing(REMOTE, connection_history=[{"status": "Asleep"}])
        with pytest.raises(Inconclusive, match="404"):
            control.set_incoming_transactional_transfer_info("private$\\nope", ENTRIES)
        qm = running.handler.env.local_queue_manager
        [queue] = [q for q in qm.queue_collection
                   if getattr(q, "destination_format_name", "") == REMOTE]
        assert [e.status.name for e in queue.connection_history] == ["DnsFailure"]
        assert queue.outgoing_transfer_info_reference.eod_no_ack_count == 1
        [local] = [q for q in qm.queue_collection if q.pathname == "MQREF\\private$\\in"]
        assert [e.sequence_number
                for e in local.incoming_transactional_transfer_info_collection] == [12]
    finally:
        running.stop()


def test_a_control_api_that_knows_no_transfer_state_makes_the_case_inconclusive():
    """An older control API refuses the keys it does not know (400): the case cannot run on
    the outgoing queue it needs, and a queue in the State alone is not made in its place."""
    made = []

    class Older:
        def open_outgoing(self, spec):
            from mqconform.model.provisioning import ProvisionError

            if set(spec) - {"format_name", "state"}:
                raise ProvisionError(f"outgoing: unknown key(s) "
                                     f"{sorted(set(spec) - {'format_name', 'state'})}")
            made.append(spec)
            return spec

    control = ReferenceControl(api=Older())
    control.open_outgoing(REMOTE, "Connected")
    with pytest.raises(Inconclusive, match=r"unknown key\(s\) \['outgoing_transfer_info'\]"):
        control.open_outgoing(REMOTE, "Connected", outgoing_transfer_info=INFO)
    with pytest.raises(Inconclusive, match="cannot set the incoming"):
        control.set_incoming_transactional_transfer_info("private$\\in", ENTRIES)
    assert made == [{"format_name": REMOTE, "state": "Connected"}]


def test_no_control_cannot_make_the_transfer_state():
    with pytest.raises(Inconclusive, match="cannot make an outgoing queue"):
        NoControl().open_outgoing(REMOTE, "Connected", next_hops=["10.1.2.3"])
    with pytest.raises(Inconclusive, match="cannot set the incoming"):
        NoControl().set_incoming_transactional_transfer_info("private$\\in", ENTRIES)


def test_an_open_outgoing_template_with_spec_gets_the_control_api_document(tmp_path):
    control, out = _recorder(tmp_path, open_outgoing="{format_name}~{state}~{spec}")
    control.open_outgoing(REMOTE)
    control.open_outgoing(REMOTE, "OnHold", next_hops=["10.1.2.3"],
                          outgoing_transfer_info=INFO, connection_history=HISTORY)
    plain, full = out.read_text().splitlines()
    assert plain.split("~")[:2] == [REMOTE, ""]
    assert json.loads(plain.split("~", 2)[2]) == {"format_name": REMOTE}
    assert full.split("~")[:2] == [REMOTE, "OnHold"]
    assert json.loads(full.split("~", 2)[2]) == {
        "format_name": REMOTE, "state": "OnHold", "next_hops": ["10.1.2.3"],
        "outgoing_transfer_info": INFO, "connection_history": HISTORY}


def test_an_open_outgoing_template_without_spec_makes_only_a_queue_in_a_state(tmp_path):
    """Without {spec} the transfer state cannot reach the target: the case is inconclusive
    and nothing runs; an outgoing queue in a State alone is still made."""
    control, out = _recorder(tmp_path, open_outgoing="{format_name}~{state}")
    for transfer in ({"next_hops": ["10.1.2.3"]}, {"outgoing_transfer_info": INFO},
                     {"connection_history": HISTORY}):
        with pytest.raises(Inconclusive, match=r"takes no \{spec\}, which an outgoing queue "
                                               rf"with {next(iter(transfer))} needs"):
            control.open_outgoing(REMOTE, "Connected", **transfer)
    assert not out.exists()
    control.open_outgoing(REMOTE, "Connected")
    assert out.read_text() == f"{REMOTE}~Connected\n"


def test_the_incoming_transfers_template_gets_the_entries_as_json(tmp_path):
    control, out = _recorder(tmp_path, set_incoming_transactional_transfer_info=(
        "{path}~{name}~{entries}"))
    control.set_incoming_transactional_transfer_info("private$\\in", ENTRIES)
    path, name, entries = out.read_text().rstrip("\n").split("~")
    assert (path, name, json.loads(entries)) == ("private$\\in", "in", ENTRIES)
    with pytest.raises(Inconclusive, match="no template for "
                                           "set_incoming_transactional_transfer_info"):
        CommandControl({}).set_incoming_transactional_transfer_info("private$\\in", ENTRIES)


def test_the_reference_control_tells_a_private_queues_private_format_name():
    control, qm = _reference()
    control.provision("private$\\named", [])
    queue = _queue(qm, "named")
    identifier = qm.env.local_queue_manager.identifier
    assert control.private_format_name("private$\\NAMED") == (
        f"PRIVATE={identifier}\\{queue.private_queue_number:08x}")
    with pytest.raises(Inconclusive, match="PRIVATE= format name of private\\$\\\\absent"):
        control.private_format_name("private$\\absent")
    with pytest.raises(Inconclusive, match="cannot tell the PRIVATE= format name"):
        NoControl().private_format_name("private$\\named")


def test_the_reference_control_tells_a_public_queues_public_format_name():
    control, qm = _reference()
    control.provision("told", [])
    control.provision("private$\\hidden", [])
    [queue] = [q for q in qm.env.local_queue_manager.queue_collection
               if q.pathname.lower() == "mqref\\told"]
    assert control.public_format_name("TOLD") == f"PUBLIC={queue.identifier}"
    with pytest.raises(Inconclusive, match="PUBLIC= format name of private\\$\\\\hidden"):
        control.public_format_name("private$\\hidden")  # a private queue has none
    with pytest.raises(Inconclusive, match="cannot tell the PUBLIC= format name"):
        NoControl().public_format_name("told")


@pytest.mark.parametrize("action, name, path, other, kind", [
    ("private_format_name", "PRIVATE=1b4e28ba-2fa1-41d2-883f-0016d3cca427\\00000101",
     "private$\\q", "echo DIRECT=OS:x\\\\q {name}", "PRIVATE="),
    ("public_format_name", "PUBLIC=1b4e28ba-2fa1-41d2-883f-0016d3cca427", "q",
     "echo PRIVATE=x\\1 {name}", "PUBLIC="),
])
def test_a_format_name_template_prints_the_name_on_its_last_line(action, name, path, other,
                                                                  kind):
    control = CommandControl({action: [
        sys.executable, "-c", "import sys; print('made'); print(sys.argv[1])", name, "{path}"]})
    assert getattr(control, action)(path) == name
    wrong = CommandControl({action: other})
    with pytest.raises(Inconclusive, match=f"not a {kind} format name"):
        getattr(wrong, action)(path)


def test_a_body_file_template_gets_the_body_in_a_file_of_any_size(tmp_path):
    """One command argument holds some 128 KiB: a body of 2,000,000 bytes goes by
    {body_file}, a file holding it that lives while the command runs."""
    copy = tmp_path / "copy"
    control = CommandControl({"send_message": f"cp {{body_file}} {copy}"})
    body = bytes(range(256)) * 7813
    control.send_message("private$\\q", body)
    assert copy.read_bytes() == body


def test_a_body_too_long_for_an_argument_without_body_file_is_inconclusive(tmp_path):
    control, out = _recorder(tmp_path, send_message="{path} {body_hex}")
    with pytest.raises(Inconclusive, match=r"give the send_message template \{body_file\}"):
        control.send_message("private$\\q", bytes(70_000))
    assert not out.exists()  # nothing was run
    control.send_message("private$\\q", b"short")
    assert out.read_text().split() == ["private$\\q", b"short".hex()]
