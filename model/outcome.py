"""What the model answers for one call: the result, the requirement that decided its status,
and how strictly an implementation's status must match it."""

from __future__ import annotations

from dataclasses import dataclass

from mqconform.model import calls as c
from mqconform.model.status import is_failure


@dataclass(frozen=True)
class Outcome:
    """A call's result; ``rule`` is the requirement whose step produced the status;
    ``any_failure`` says the document asks only for some failure HRESULT there."""

    result: c.Result
    rule: str | None = None
    any_failure: bool = False

    @property
    def status(self) -> int:
        return self.result.status

    def conforms(self, observed: c.Result) -> bool:
        """Whether an observed status is one this outcome allows."""
        if self.any_failure:
            return is_failure(observed.status) or (observed.raised and observed.status != 0)
        return observed.status == self.result.status



def status_only(result_type: type[c.Result], status: int, rule: str, any_failure: bool = False,
         raised: bool = False) -> Outcome:
    """An Outcome whose result carries only a status (a failure or a success alike)."""
    return Outcome(result_type(status=status, raised=raised), rule, any_failure)
