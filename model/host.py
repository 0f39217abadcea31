"""The queue manager's host: one queue manager's RemoteRead and qmmgmt servers (model/mqrr.py,
model/mqmr.py) and the association groups its callers bind into. Sans-IO: time comes in
through ``advance(now)``, waits leave as ``Pending`` and come back from ``completions()``.

The reference server (server/app.py: threads, clock, wire and security around it) and the
suite's in-process model (conformance/targets.py ModelQueueManager: a virtual clock around it)
are the two users; neither routes a call, checks a handle or runs a rundown itself.

What the host owns, beyond the two servers:

- **Strict context handles** (MS-MQRR 2.2.4.1, 2.2.4.2: ``strict_context_handle``): a context
  handle belongs to the association group it was given to (R_OpenQueue,
  R_OpenQueueForMove); a call naming a handle its group does not hold is ``Refused`` with
  nca_s_fault_context_mismatch, one naming none where the IDL needs one with
  RPC_X_SS_IN_NULL_CONTEXT, before the model sees it, as an RPC runtime does.
- **Move contexts** (MS-MQRR 3.1.4.11: R_OpenQueueForMove's pMoveContext, given back as
  R_MoveMessage's ullContextTo) are the group's too: one given to another group is, to this
  one, a move context that does not exist (the model answers it as 3.1.4.10 says).
- **Rundown** (MS-MQRR 3.1.6.2): when the last member of a group leaves, every context handle
  the group still holds is run down, so no message stays locked for a client that is gone.
- **Calls outside any group** (``group=None``): the suite's oracle, which is handed the handles
  to use by the suite itself, calls without strict-handle checks.

Tokens of waiting calls are the host's: ``call`` returns ``Pending(token)`` and the call's
Outcome comes back with that token from ``completions()``.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any

from mqconform.model import calls as c
from mqconform.model.mqmr import QMMgmtServer
from mqconform.model.mqrr import RemoteReadServer
from mqconform.model.outcome import Outcome
from mqconform.model.runtime import Environment, Pending

#: C706 appendix E nca_s_fault_context_mismatch: a context handle the association does not hold
NCA_S_FAULT_CONTEXT_MISMATCH = 0x1C00001A
#: MS-RPCE 2.2.2.11 / C706: a NULL context handle passed where one is required
RPC_X_SS_IN_NULL_CONTEXT = 0x000006EF
#: the fields of a call that carry a context handle
CONTEXT_FIELDS = ("phContext", "pphContext", "phContextFrom")
#: the calls that create a context handle (and take none in)
OPENING_CALLS = (c.R_OpenQueue, c.R_OpenQueueForMove)
#: a move context no group is ever given: ids start at 1 (model/runtime.py SequentialIds;
#: server/app.py UnguessableIds never gives 0)
NO_MOVE_CONTEXT = 0


@dataclass(frozen=True)
class Refused:
    """A call the runtime refuses before the model sees it: the RPC fault it answers, and
    the requirement that makes it."""

    fault: int
    rule: str


@dataclass
class AssociationGroup:
    """An association group as the queue manager sees it (MS-RPCE 3.3.1.1.1 "association";
    C706 "association group"): its members (connections), the context handles it was given
    with the move context of each (0 for R_OpenQueue's)."""

    id: Hashable
    members: set[Hashable] = field(default_factory=set)
    contexts: dict[bytes, int] = field(default_factory=dict)

    def holds(self, context: bytes) -> bool:
        return context in self.contexts

    def move_contexts(self) -> set[int]:
        return {m for m in self.contexts.values() if m}


class QueueManagerHost:
    """RemoteReadServer and QMMgmtServer on one Environment, and their association groups
    (module doc)."""

    def __init__(self, env: Environment, port: int = 2103):
        self.env = env
        self.remote_read: Any = RemoteReadServer(env, port=port)
        self.qmmgmt: Any = QMMgmtServer(env)
        self.groups: dict[Hashable, AssociationGroup] = {}
        self._tokens = itertools.count(1)
        #: token -> (group id, call) of the calls that wait
        self._waiting: dict[int, tuple[Hashable | None, c.Call]] = {}

    # ------------------------------------------------------------------ groups
    def join(self, group: Hashable, member: Hashable) -> AssociationGroup:
        """``member`` (a connection) is in ``group`` from now on."""
        found = self.groups.get(group)
        if found is None:
            found = self.groups[group] = AssociationGroup(group)
        found.members.add(member)
        return found

    def leave(self, group: Hashable, member: Hashable) -> int:
        """``member`` has gone; when it was the group's last, the rundown of MS-MQRR 3.1.6.2
        runs for every context handle the group holds. Returns how many were run down."""
        found = self.groups.get(group)
        if found is None:
            return 0
        found.members.discard(member)
        if found.members:
            return 0
        del self.groups[group]
        for token, (owner, _) in list(self._waiting.items()):
            if owner == group:
                del self._waiting[token]
        for context in list(found.contexts):
            self.remote_read.rundown(context)  # MS-MQRR/3.1.6.2/R1
        return len(found.contexts)

    def check(self, group: AssociationGroup, call: c.Call) -> Refused | None:
        """MS-MQRR 2.2.4.1/2.2.4.2: "The context handle MUST NOT be type_strict, but it MUST
        be strict": the runtime refuses a handle the association was not given (and a NULL
        one where the IDL requires one)."""
        if isinstance(call, OPENING_CALLS):
            return None
        for name in CONTEXT_FIELDS:
            if not hasattr(call, name):
                continue
            value = getattr(call, name)
            rule = "MS-MQRR/2.2.4.2/R1" if name == "pphContext" else "MS-MQRR/2.2.4.1/R1"
            if value is None:
                return Refused(RPC_X_SS_IN_NULL_CONTEXT, rule)
            if not group.holds(bytes(value)):  # MS-MQRR/2.2.4.1/R1 MS-MQRR/2.2.4.2/R1
                return Refused(NCA_S_FAULT_CONTEXT_MISMATCH, rule)
        return None

    # ------------------------------------------------------------------ calls
    def call(self, group: Hashable | None, call: c.Call, token: Any = None
             ) -> Outcome | Pending | Refused:
        """Run one call made in ``group`` (None: outside any group, no handle checks): ``admit``
        then ``run``. Who may call at all (MS-MQRR 2.1, MS-MQMR 3) is the RPC runtime's to
        check: it knows the caller, the model does not; a runtime that checks it between the
        two calls them itself."""
        admitted = self.admit(group, call)
        return admitted if isinstance(admitted, Refused) else self.run(group, admitted, token)

    def admit(self, group: Hashable | None, call: c.Call) -> c.Call | Refused:
        """The call as the group may make it: Refused for a context handle it does not hold
        (``check``); another group's move context made into none (module doc)."""
        if group is None:
            return call
        joined = self.groups.get(group) or self.join(group, None)
        refused = self.check(joined, call)
        if refused is not None:
            return refused
        if isinstance(call, c.R_MoveMessage) and \
                call.ullContextTo not in joined.move_contexts():
            call = dataclasses.replace(call, ullContextTo=NO_MOVE_CONTEXT)
        return call

    def run(self, group: Hashable | None, call: c.Call, token: Any = None
            ) -> Outcome | Pending:
        """Route an admitted call to RemoteRead or qmmgmt; the handles it gives or takes are
        the group's. ``token``: the token a wait is to come back with (the host's own next
        one by default)."""
        if call.interface == c.REMOTEREAD:
            out = self.remote_read.call(call, token=next(self._tokens) if token is None
                                        else token)
        else:
            out = self.qmmgmt.call(call)
        if isinstance(out, Pending):
            self._waiting[out.token] = (group, call)
            return out
        self._record(self.groups.get(group) if group is not None else None, call, out)
        return out

    def _record(self, group: AssociationGroup | None, call: c.Call, out: Outcome) -> None:
        """The handles a call gave its group, or took from it."""
        result = out.result
        if group is None or result.raised:
            return
        if isinstance(call, OPENING_CALLS) and result.pphContext:
            group.contexts[bytes(result.pphContext)] = getattr(result, "pMoveContext", 0)
        elif isinstance(call, c.R_CloseQueue) and result.status == 0 and call.pphContext:
            group.contexts.pop(bytes(call.pphContext), None)

    def completions(self) -> list[tuple[Any, Outcome]]:
        """The waiting calls the model has completed since the last look: (token, Outcome),
        in the order they completed."""
        done = []
        for completion in self.remote_read.take_completions():
            entry = self._waiting.pop(completion.token, None)
            if entry is not None:
                group, call = entry
                self._record(self.groups.get(group) if group is not None else None, call,
                             completion.result)
            done.append((completion.token, completion.result))
        return done

    def abandon(self, token: Any) -> bool:
        """The caller of a waiting call is gone (an orphaned call, MS-RPCE 3.3.1.5.6): end the
        model's wait as R_CancelReceive does (MS-MQRR 3.1.4.8). False if it was not waiting."""
        entry = self._waiting.pop(token, None)
        if entry is None:
            return False
        _, call = entry
        context = getattr(call, "phContext", None)
        request = getattr(call, "dwRequestId", None)
        if context is not None and request is not None:
            self.remote_read.call(c.R_CancelReceive(phContext=context, dwRequestId=request))
        return True

    def waiting(self) -> int:
        return len(self._waiting)

    # ------------------------------------------------------------------ time
    def advance(self, now: int) -> None:
        """Model time is ``now`` (ms): due timers fire (MS-MQRR 3.1.2: the Waiting Message
        Read Timer, the Pending Request Cleanup Timer; MS-MQDMPR Time To Be Received)."""
        self.env.advance(now)

    def next_deadline(self) -> float | None:
        return self.env.next_deadline()
