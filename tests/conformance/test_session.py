"""conformance/session.py: what one run of the suite sets up and takes down again."""

from __future__ import annotations

import dataclasses

from mqconform.conformance.session import Suite
from mqconform.conformance.targetfile import load
from mqconform.model import calls as c


def test_the_embedded_reference_leaves_no_folder_behind():
    """``--target reference`` writes the server's provisioning file into a folder of its own;
    closing the run removes it (each run used to leave one in the temporary folder)."""
    suite = Suite(load("reference"))
    folder = suite._folder
    try:
        assert (folder / "queues.yaml").is_file()
        assert suite.target.call(c.R_GetServerPort()).status == suite.target.port
    finally:
        suite.close()
    assert not folder.exists()


def test_aliases_name_whole_tokens_only():
    """A handle the target chose reads as its name in the records; a number that merely
    starts like it does not (a cursor 0x1A2B0000 leaves 0x1A2B00001234 alone)."""
    from types import SimpleNamespace

    from mqconform.conformance.session import Aliases

    aliases = Aliases()
    aliases.learn(SimpleNamespace(status=0, phCursor=0x1A2B0000))
    aliases.learn(SimpleNamespace(status=0, pphContext=bytes(range(20))))
    aliases.learn(SimpleNamespace(status=0, phCursor=7))  # a small counter: left as it is
    text = aliases.apply(f"R_StartReceive(phContext={bytes(range(20)).hex()}, "
                         f"hCursor=0x1A2B0000, ulAction=0x1A2B00001234, dwRequestId=7)")
    assert text == ("R_StartReceive(phContext=context#2, hCursor=cursor#1, "
                    "ulAction=0x1A2B00001234, dwRequestId=7)")
    assert aliases.apply("phCursor: 439025664 (0x1a2b0000)") == "phCursor: cursor#1"
    aliases.literal("mqc-5ce83e-", "mqc-<run>-")  # a prefix: no boundary after its dash
    assert aliases.apply("private$\\mqc-5ce83e-29") == "private$\\mqc-<run>-29"


def test_the_oracle_reads_tidy_as_a_target_that_says_its_choices():
    """A target whose SUT control names its choices (spec/choices.yaml mqmr-tidy): the oracle
    purges on TIDY only where the target does; its other choices stay the reference's."""
    for name, purges in (("model", True), ("model:alternate", False)):
        suite = Suite(load(name))
        try:
            assert suite.target_choices == (name.partition(":")[2] or "reference")
            choices = suite.oracle.qm.env.choices
            assert choices.tidy_purges_queues is purges
            assert choices.cleanup_ms == 300_000 and choices.any_failure_status is None
        finally:
            suite.close()


def _model_case():
    from mqconform.conformance.session import Case

    suite = Suite(load("model"))
    return suite, Case(suite, "session-test", ("MS-MQRR/3.1.4.7/R53",))


def test_a_cursor_sent_with_another_handle_reaches_the_oracle_as_the_oracles_cursor():
    """A Cursor's Handle is unique across the queue manager (MS-MQDMPR 3.2.1.2), so a cursor
    the target returned on one handle and sent with another names the same cursor: the oracle
    is sent its own, not the target's number (which may be another oracle cursor)."""
    suite, case = _model_case()
    try:
        a, b = case.queue([b"a"]), case.queue([b"x"])
        ca, cb = case.open(a), case.open(b)
        for _ in range(3):  # the target's numbers run ahead of the oracle's
            suite.target.call(c.R_CreateCursor(phContext=ca))
        mine = case.call(c.R_CreateCursor(phContext=cb)).phCursor
        theirs = case._cursors[(bytes(cb), mine)]
        assert mine != theirs
        call = case._to_oracle(c.R_StartReceive(phContext=ca, hCursor=mine,
                                                ulAction=c.MQ_ACTION_PEEK_CURRENT))
        assert call.hCursor == theirs and call.phContext == case._contexts[bytes(ca)]
        unknown = case._to_oracle(c.R_StartReceive(phContext=ca, hCursor=0x7777))
        assert unknown.hCursor == 0x7777
    finally:
        suite.close()


def test_a_whole_lookup_identifier_noted_reaches_the_oracle_as_the_oracles():
    """note_lookup maps a whole lookup identifier (high-order byte included); one not noted is
    mapped by its lower 7 octets, its high-order byte kept."""
    suite, case = _model_case()
    try:
        case._lookups[0x10] = 0x20
        case.note_lookup(0x07 << 56 | 0x10, 0x04 << 56 | 0x20)
        mapped = case._to_oracle(c.R_StartReceive(LookupId=0x07 << 56 | 0x10,
                                                  ulAction=c.MQ_LOOKUP_PEEK_CURRENT))
        assert mapped.LookupId == 0x04 << 56 | 0x20
        by_low = case._to_oracle(c.R_StartReceive(LookupId=0x02 << 56 | 0x10,
                                                  ulAction=c.MQ_LOOKUP_PEEK_CURRENT))
        assert by_low.LookupId == 0x02 << 56 | 0x20
    finally:
        suite.close()


def test_finish_call_takes_a_second_allowed_answer():
    """A started call whose answer is the second reading's (``also``) conforms; one that is
    neither the oracle's nor the second reading's fails the case."""
    import pytest

    from mqconform.conformance.session import CaseFailed
    from mqconform.model.outcome import status_only
    from mqconform.model.status import MQ_ERROR_IO_TIMEOUT, MQ_ERROR_OPERATION_CANCELLED

    suite, case = _model_case()
    try:
        ctx = case.open(case.queue([]))
        timed_out = status_only(c.R_StartReceiveResult, MQ_ERROR_IO_TIMEOUT, "MS-MQRR/3.1.4.3/R11")
        call = c.R_StartReceive(phContext=ctx, ulTimeout=200, dwRequestId=1)
        pending = case.start(call)
        out = case.finish_call(pending, also=status_only(
            c.R_StartReceiveResult, MQ_ERROR_OPERATION_CANCELLED, "MS-MQRR/3.1.4.3/R11"))
        assert out.status == MQ_ERROR_IO_TIMEOUT  # the oracle's own answer
        pending = case.start(dataclasses.replace(call, dwRequestId=2, ulTimeout=10_000))
        case.call(c.R_CancelReceive(phContext=ctx, dwRequestId=2))
        assert case.finish_call(pending, also=timed_out).status == MQ_ERROR_OPERATION_CANCELLED
        pending = case.start(dataclasses.replace(call, dwRequestId=3, ulTimeout=200))
        pending.oracle = status_only(c.R_StartReceiveResult, MQ_ERROR_OPERATION_CANCELLED,
                                     "MS-MQRR/3.1.4.8/R16")
        assert case.finish_call(pending, also=timed_out).status == MQ_ERROR_IO_TIMEOUT
        pending = case.start(dataclasses.replace(call, dwRequestId=4, ulTimeout=200))
        pending.oracle = status_only(c.R_StartReceiveResult, MQ_ERROR_OPERATION_CANCELLED,
                                     "MS-MQRR/3.1.4.8/R16")
        with pytest.raises(CaseFailed):
            case.finish_call(pending, also=status_only(c.R_StartReceiveResult, 0,
                                                       "MS-MQRR/3.1.4.3/R11"))
    finally:
        suite.close()
