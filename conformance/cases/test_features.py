"""The Gherkin scenarios of features/, bound to the step definitions of conformance/steps/."""

from __future__ import annotations

from pathlib import Path

from pytest_bdd import scenarios

from mqconform.conformance.steps.packets import *  # noqa: F401,F403 - pytest-bdd finds steps by name
from mqconform.conformance.steps.qmmgmt import *  # noqa: F401,F403
from mqconform.conformance.steps.remoteread import *  # noqa: F401,F403
from mqconform.conformance.steps.remoteread_misuse import *  # noqa: F401,F403
from mqconform.conformance.steps.remoteread_more import *  # noqa: F401,F403
from mqconform.conformance.steps.rpc_runtime import *  # noqa: F401,F403
from mqconform.conformance.steps.security import *  # noqa: F401,F403

FEATURES = Path(__file__).resolve().parents[2] / "features"

scenarios(str(FEATURES))
