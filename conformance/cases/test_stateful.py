"""The stateful machines of conformance/stateful.py as cases of the suite: random RemoteRead
and qmmgmt sequences, every call checked against the model oracle. Derandomized (a fixed seed)
and bounded; ``--mq-stateful-examples``, ``--mq-stateful-steps`` and ``--mq-stateful-seed``
change that. A failure is shrunk (unless ``--mq-stateful-no-shrink``), saved under
``<report-dir>/stateful/`` as a replayable script (with a pcap of its replay over RPC) and
reported with the requirement IDs involved. Each machine runs twice, its every example bound in
NDR 2.0 and in NDR64 on an association of its own.

The cases carry no ``req`` marker: a machine exercises many sections, so a run selected by a
requirement-ID prefix (``--select``, ``-m``) leaves them out; a full run reports them under the IDs
their rules cite (``stateful.machine_ids``)."""

from __future__ import annotations

import pytest

from mqconform.conformance import stateful


def _run(mq, request, machine: str, syntax: str) -> None:
    option = request.config.getoption
    mq.record.ids = stateful.machine_ids(stateful.MACHINES[machine])
    stateful.run_machine(
        mq, machine, ndr64=syntax == "NDR64",
        examples=option("--mq-stateful-examples", None) or stateful.DEFAULT_EXAMPLES,
        steps=option("--mq-stateful-steps", None) or stateful.DEFAULT_STEPS,
        seed_value=option("--mq-stateful-seed", None) or stateful.DEFAULT_SEED,
        report_dir=option("--mq-report-dir", None),
        shrink=not option("--mq-stateful-no-shrink", False))


#: each machine runs in both transfer syntaxes (every method's request and response in NDR64
#: as in NDR 2.0): NDR64 is not applicable where the target declares no ndr64 capability
SYNTAXES = pytest.mark.parametrize("syntax", ["NDR", "NDR64"])


@SYNTAXES
def test_remoteread_machine(mq, request, syntax):
    _run(mq, request, "remoteread", syntax)


@SYNTAXES
def test_qmmgmt_machine(mq, request, syntax):
    _run(mq, request, "qmmgmt", syntax)
