"""The stateful machines of conformance/stateful.py as cases of the suite: random RemoteRead
and qmmgmt sequences, every call checked against the model oracle. Derandomized (a fixed seed)
and bounded; ``--mq-stateful-examples``, ``--mq-stateful-steps`` and ``--mq-stateful-seed``
change that. A failure is shrunk (unless ``--mq-stateful-no-shrink``), saved under
``<report-dir>/stateful/`` as a replayable script (with a pcap of its replay over RPC) and
reported with the requirement IDs involved.

The cases carry no ``req`` marker: a machine exercises many sections, so a run selected by a
requirement-ID prefix (``--select``, ``-m``) leaves them out; a full run reports them under the IDs
their rules cite (``stateful.machine_ids``)."""

from __future__ import annotations

from mqconform.conformance import stateful


def _run(mq, request, machine: str) -> None:
    option = request.config.getoption
    mq.record.ids = stateful.machine_ids(stateful.MACHINES[machine])
    stateful.run_machine(
        mq, machine,
        examples=option("--mq-stateful-examples", None) or stateful.DEFAULT_EXAMPLES,
        steps=option("--mq-stateful-steps", None) or stateful.DEFAULT_STEPS,
        seed_value=option("--mq-stateful-seed", None) or stateful.DEFAULT_SEED,
        report_dir=option("--mq-report-dir", None),
        shrink=not option("--mq-stateful-no-shrink", False))


def test_remoteread_machine(mq, request):
    _run(mq, request, "remoteread")


def test_qmmgmt_machine(mq, request):
    _run(mq, request, "qmmgmt")
