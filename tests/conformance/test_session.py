"""conformance/session.py: what one run of the suite sets up and takes down again."""

from __future__ import annotations

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
