"""The Gherkin scenarios of features/, bound to the step definitions of conformance/steps/."""

from __future__ import annotations

from pathlib import Path

from pytest_bdd import scenarios

from conformance.steps.packets import *  # noqa: F401,F403 - pytest-bdd finds steps by name
from conformance.steps.qmmgmt import *  # noqa: F401,F403
from conformance.steps.remoteread import *  # noqa: F401,F403
from conformance.steps.remoteread_more import *  # noqa: F401,F403
from conformance.steps.rpc_runtime import *  # noqa: F401,F403
from conformance.steps.security import *  # noqa: F401,F403

FEATURES = Path(__file__).resolve().parents[2] / "features"

scenarios(str(FEATURES))
