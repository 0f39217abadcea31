"""conformance/sut.py: SUT control makes a journaled queue (Queue.Journaling, MS-MQDMPR 3.1.1.2)
or says it cannot (Inconclusive), never a plain queue in its place."""

from __future__ import annotations

import json

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
