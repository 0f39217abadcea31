"""The documents' choices as a switch: what the served queue manager does where the text leaves
the server free, and the other allowed value each switch can take.

``spec/choices.yaml`` lists every place where the model chooses (each marked "choice N" at its
code), with the requirement IDs and the sentence that leaves the choice; its entries with a
``switch`` name a field of :class:`Choices`. ``REFERENCE`` is what the reference server does;
``ALTERNATE`` flips every switch to another value the documents allow, so that a suite which
passes against both demands nothing the documents leave open (``mqconform serve --choices
alternate``, ``mqconform run --target reference:alternate``).

The model reads the switches from ``env.choices`` (model/runtime.py Environment).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from mqconform.model.outcome import Outcome
from mqconform.model.status import (
    MQ_ERROR,
    MQ_ERROR_INVALID_HANDLE,
    MQ_ERROR_INVALID_PARAMETER,
    STATUS_INVALID_HANDLE,
    is_failure,
)


@dataclass(frozen=True)
class Choices:
    """One value per switch of spec/choices.yaml (its ``switch`` key names the field)."""

    name: str = "reference"
    #: where the text asks only for "a failure HRESULT" (Outcome.any_failure): None answers the
    #: code the model names (model/mqrr.py choices 1 and 2, model/mqmr.py choice 1); a code
    #: answers that code instead (MQ_ERROR_INVALID_PARAMETER where the model's code is it)
    any_failure_status: int | None = None
    #: the Pending Request Cleanup Timer's duration (MS-MQRR 3.1.2.2; model/mqrr.py choice 3)
    cleanup_ms: int = 300_000
    #: TimeToReachQueue of a message whose sender gave none (MS-MQDMPR 3.1.1.12 "SHOULD<12>
    #: be 0x54600"); the control API's send_message applies it
    default_time_to_reach_queue: int = 0x54600
    #: R_QMMgmtAction TIDY purges every queue (3.1.4.2's rules), or touches no queue the ADM
    #: can see (its table: "clean up empty message files"); model/mqmr.py choice 4
    tidy_purges_queues: bool = True
    #: R_CloseQueue with a received, unacknowledged message: the message stays as Dequeue
    #: Message Begin left it (3.1.4.3 says nothing), or returns to the queue as the rundown
    #: (3.1.6.2) does it; model/mqrr.py choice 4
    close_returns_unacknowledged: bool = False
    #: the first number tried for a new private queue (any unused number satisfies MS-MQDMPR
    #: 3.1.7.1.3); model/queue_management.py choice 4
    first_private_queue_number: int = 1
    #: R_CancelReceive ends only a read waiting through the handle it names (3.1.4.8's
    #: phContext: "the handle used in the corresponding call"), or the first read with that
    #: dwRequestId on any handle of the queue, as Cancel Waiting Message Read Request walks
    #: them (MS-MQDMPR 3.1.7.1.17); model/mqrr.py choice 6
    cancel_through_own_handle: bool = True

    def answer(self, outcome: Outcome) -> Outcome:
        """The outcome as this server answers it: a failure the document leaves open
        (``any_failure``) carries ``any_failure_status`` when one is set."""
        code = self.any_failure_status
        if code is None or not outcome.any_failure or not is_failure(outcome.status):
            return outcome
        if outcome.status == STATUS_INVALID_HANDLE:
            # an unknown or closed cursor: 3.1.4.7 and 3.1.4.13 name STATUS_INVALID_HANDLE,
            # their Return Values tables MQ_ERROR_INVALID_HANDLE (errata
            # cursor-invalid-handle-status): the other reading, never a third code
            code = MQ_ERROR_INVALID_HANDLE
        elif outcome.status == code:
            code = MQ_ERROR_INVALID_PARAMETER
        return replace(outcome, result=replace(outcome.result, status=code))


REFERENCE = Choices()

ALTERNATE = Choices(
    name="alternate",
    any_failure_status=MQ_ERROR,
    cleanup_ms=240_000,
    default_time_to_reach_queue=0x15180,  # one day
    tidy_purges_queues=False,
    close_returns_unacknowledged=True,
    first_private_queue_number=0x100,
    cancel_through_own_handle=False,
)

PROFILES = {c.name: c for c in (REFERENCE, ALTERNATE)}

__all__ = ["ALTERNATE", "Choices", "PROFILES", "REFERENCE"]
