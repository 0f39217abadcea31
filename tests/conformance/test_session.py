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
