"""Preconditions of the MS-MQMR (qmmgmt) scenarios that a client cannot set up over the wire.

Each one is made on the target through its SUT control and, identically, on the oracle through
the in-process control API, so that the oracle computes what the documents ask of the same
state. A SUT control that cannot make one raises ``Inconclusive`` (the case is then reported
inconclusive, never passed).

* an outgoing queue (MS-MQDMPR 3.1.1.3): it exists only after something opened a remote format
  name for send, which neither RemoteRead nor qmmgmt can do; optionally in a given
  OutgoingQueue.State, with NextHops, an OutgoingTransferInfo (the EOD sequence data of
  MS-MQDMPR 3.1.1.4) and a ConnectionHistory, which on a real queue manager the transfer
  protocol sets;
* a queue's IncomingTransactionalTransferInfoCollection (MS-MQDMPR 3.1.1.5), which the
  transactional transfer of messages from remote queue managers leaves;
* a queue with subqueues (a provisioning document's ``subqueues``);
* a connector queue (QueueType Connector, MS-MQDMPR 3.1.1.2), which only a connector server's
  installation makes;
* the queue manager's configuration (MS-MQDMPR 3.1.1.1: DirectoryIntegrated, DirectoryOffline,
  ForeignSystem, DirectoryServerList), set back when the scenario ends.
"""

from __future__ import annotations

from mqconform.conformance import sources
from mqconform.conformance.sut import Inconclusive
from mqconform.model.formats import QueueFormat, parse_format_name, to_queue_format

#: the OutgoingQueue.State names of MS-MQDMPR 3.1.1.3
OUTGOING_STATES = ("Connected", "Disconnected", "Disconnecting", "Inactive", "Locked",
                   "NeedValidation", "Waiting", "OnHold")
#: a computer that is not the target: the destination of the outgoing queues made here
REMOTE_COMPUTER = "MQCREMOTE"


def queue_format(format_name: str) -> QueueFormat:
    return to_queue_format(parse_format_name(format_name))


def remote_format_name(mq) -> str:
    """A fresh direct format name of a private queue on a computer that is not the target."""
    return f"DIRECT=OS:{REMOTE_COMPUTER}\\private$\\{mq.suite.queue_path().split(chr(92))[-1]}" \
           f"-r{sources.count('remote')}"


def outgoing_queue(mq, format_name: str | None = None, state: str | None = None,
                   **transfer) -> tuple[str, QueueFormat]:
    """An outgoing queue for ``format_name`` (a fresh remote queue when None) on the target
    and on the oracle, in ``state`` if given, with the transfer state given (``next_hops``,
    ``outgoing_transfer_info``, ``connection_history``: conformance/sut.py TRANSFER_KEYS).
    Returns the format name and its QUEUE_FORMAT."""
    if state is not None and state not in OUTGOING_STATES:
        raise ValueError(f"{state!r} is not an OutgoingQueue.State")
    name = format_name or remote_format_name(mq)
    opener = getattr(mq.sut, "open_outgoing", None)
    if opener is None:
        raise Inconclusive(f"sut_control {mq.sut.kind}: cannot make an outgoing queue")
    opener(name, state, **transfer)
    mq.suite.oracle_sut.open_outgoing(name, state, **transfer)
    return name, queue_format(name)


def incoming_transfers(mq, path: str, entries: list[dict]) -> None:
    """The IncomingTransactionalTransferInfoCollection of the queue at ``path`` on the target
    and on the oracle: these entries (the control API's objects, server/control.py)."""
    setter = getattr(mq.sut, "set_incoming_transactional_transfer_info", None)
    if setter is None:
        raise Inconclusive(f"sut_control {mq.sut.kind}: cannot set a queue's incoming "
                           f"transactional transfer information")
    setter(path, entries)
    mq.suite.oracle_sut.set_incoming_transactional_transfer_info(path, entries)


def queue_with_subqueues(mq, subqueues: list[str], messages: list[bytes] = ()
                         ) -> tuple[str, QueueFormat]:
    """A new private queue with these subqueues and messages on the target and the oracle.
    Returns the queue's path and QUEUE_FORMAT."""
    path = mq.suite.queue_path()
    spec = {"path": path, "subqueues": list(subqueues)}
    creator = getattr(mq.sut, "create_queue_from", None)
    if creator is None:
        raise Inconclusive(f"sut_control {mq.sut.kind}: cannot create a queue with subqueues")
    creator(spec)
    mq.suite.oracle_sut.create_queue_from(spec)
    for body in messages:
        send_to(mq, path, body)
    return path, mq.format_of(path)


def send_to(mq, path: str, body: bytes) -> None:
    """A message with this body sent to the queue at ``path`` on the target and the oracle."""
    if hasattr(mq, "note_messages"):
        mq.note_messages([{"body": body}])
    mq.sut.send_message(path, body)
    mq.suite.oracle_sut.send_message(path, body)


def _queue_from(mq, spec: dict, kind: str) -> tuple[str, QueueFormat]:
    """A new queue of this provisioning spec on the target and the oracle (SUT control's
    create_queue_from); Inconclusive where SUT control has none."""
    creator = getattr(mq.sut, "create_queue_from", None)
    if creator is None:
        raise Inconclusive(f"sut_control {mq.sut.kind}: cannot create a {kind} queue")
    creator(spec)
    mq.suite.oracle_sut.create_queue_from(spec)
    return spec["path"], mq.format_of(spec["path"])


def queue_with_journal_quota(mq, journal_quota: int) -> tuple[str, QueueFormat]:
    """A new private queue with Queue.Journaling True whose queue journal may hold
    ``journal_quota`` kilobytes (Queue.JournalQuota, MS-MQDMPR 3.1.1.2) on the target and the
    oracle."""
    return _queue_from(mq, {"path": mq.suite.queue_path(), "journal": True,
                            "journal_quota": journal_quota}, "journaled")


def connector_queue(mq) -> tuple[str, QueueFormat]:
    """A new queue of QueueType Connector on the target and the oracle."""
    return _queue_from(mq, {"path": mq.suite.queue_path(), "queue_type": "Connector"},
                       "connector")


def public_queue(mq) -> tuple[str, QueueFormat]:
    """A new queue of QueueType Public on the target and the oracle: a path name without
    private$ (MS-MQMQ 2.1.1; MS-MQDMPR 3.1.7.1.3 makes it Public). Inconclusive where SUT
    control cannot make one (a queue manager without a directory may refuse it)."""
    return _queue_from(mq, {"path": mq.suite.queue_path().split("\\", 1)[1]}, "public")


def configure_queue_manager(mq, cleanups: list, **attributes) -> None:
    """Set QueueManager configuration attributes on the target and the oracle; a callable that
    sets the previous values back is appended to ``cleanups``."""
    configure = getattr(mq.sut, "configure_queue_manager", None)
    if configure is None:
        raise Inconclusive(f"sut_control {mq.sut.kind}: cannot configure the queue manager")
    previous = configure(dict(attributes))
    oracle_previous = mq.suite.oracle_sut.configure_queue_manager(dict(attributes))

    def restore() -> None:
        configure(previous)
        mq.suite.oracle_sut.configure_queue_manager(oracle_previous)

    cleanups.append(restore)


__all__ = ["OUTGOING_STATES", "REMOTE_COMPUTER", "configure_queue_manager", "connector_queue",
           "incoming_transfers", "outgoing_queue", "queue_format", "queue_with_subqueues",
           "remote_format_name"]
