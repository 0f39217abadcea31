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
  ``leave`` runs it whole; ``depart`` takes the group out of use at once (its handles are
  then held by no group: every call naming one is refused) and returns a ``Rundown`` that
  ``run_down`` carries out a bounded amount at a time, so a server can let other clients'
  calls run between the parts. The result is the same: every handle run down, every pending
  request ended, every received and unacknowledged message back in its queue.
- **Handle limits**: a group may hold at most ``handle_limit`` context handles and cursors
  together (None: no limit). Past it, R_OpenQueue, R_OpenQueueForMove and R_CreateCursor fail
  before the model runs them, and nothing is created (choice 1).
- **Calls outside any group** (``group=None``): the suite's oracle, which is handed the handles
  to use by the suite itself, calls without strict-handle checks.

Tokens of waiting calls are the host's: ``call`` returns ``Pending(token)`` and the call's
Outcome comes back with that token from ``completions()``.

Where the documents leave the server a choice (spec/choices.yaml):

1. The documents set no bound on the context handles and cursors one client may hold (MS-MQRR
   3.1.4.2, 3.1.4.4, 3.1.4.11; 3.1.4.2's pClientId MAY limit the number of callers, not what
   each holds). A server's memory is not unbounded: past ``handle_limit`` the opening call
   fails with MQ_ERROR_INSUFFICIENT_RESOURCES (MS-MQMQ 2.4: "Not enough resources to perform
   the operation"), a failure HRESULT as MS-MQRR 3.1.4.2 R20, 3.1.4.4 R7 and 3.1.4.11 R25
   ask (the client treats every failure alike), thrown by the void R_OpenQueue and
   R_OpenQueueForMove and returned by R_CreateCursor.
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
from mqconform.model.outcome import Outcome, status_only
from mqconform.model.refs import taken
from mqconform.model.runtime import Environment, Pending
from mqconform.model.status import MQ_ERROR_INSUFFICIENT_RESOURCES

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
#: the calls that create what ``handle_limit`` counts, with the rule of their failure (choice 1)
LIMITED_CALLS = {c.R_OpenQueue: "MS-MQRR/3.1.4.2/R20", c.R_OpenQueueForMove: "MS-MQRR/3.1.4.11/R25",
                 c.R_CreateCursor: "MS-MQRR/3.1.4.4/R7"}


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
    #: the move contexts of ``contexts`` (the nonzero values)
    moves: set[int] = field(default_factory=set)
    #: how many cursors each context handle has (R_CreateCursor, R_CloseCursor)
    cursors: dict[bytes, int] = field(default_factory=dict)
    #: context handles and cursors held: what ``handle_limit`` bounds
    held: int = 0

    def holds(self, context: bytes) -> bool:
        return context in self.contexts

    def move_contexts(self) -> set[int]:
        return self.moves

    def add_context(self, context: bytes, move_context: int) -> None:
        if context in self.contexts:
            return
        self.contexts[context] = move_context
        if move_context:
            self.moves.add(move_context)
        self.held += 1

    def drop_context(self, context: bytes) -> None:
        if context not in self.contexts:
            return
        move_context = self.contexts.pop(context)
        self.moves.discard(move_context)
        self.held -= 1 + self.cursors.pop(context, 0)

    def count_cursor(self, context: bytes, n: int) -> None:
        if context in self.contexts:
            self.cursors[context] = self.cursors.get(context, 0) + n
            self.held += n


@dataclass
class Rundown:
    """A departed group's rundown (MS-MQRR 3.1.6.2) in progress: the context handles left to
    run down, in the order the group was given them; ``cursors``: the cursors of the handle
    at ``contexts[next]`` still to close, when it has more than one part may close."""

    group: AssociationGroup
    contexts: list[bytes]
    next: int = 0
    cursors: list[Any] | None = None

    @property
    def finished(self) -> bool:
        return self.next >= len(self.contexts)

    @property
    def done(self) -> int:
        """How many handles have been run down."""
        return self.next


class QueueManagerHost:
    """RemoteReadServer and QMMgmtServer on one Environment, and their association groups
    (module doc)."""

    def __init__(self, env: Environment, port: int = 2103, handle_limit: int | None = None):
        self.env = env
        #: the most context handles and cursors one group may hold (choice 1); None: no limit
        self.handle_limit = handle_limit
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
        rundown = self.depart(group, member)
        if rundown is None:
            return 0
        while not self.run_down(rundown, 1 << 30):
            pass
        return rundown.done

    def depart(self, group: Hashable, member: Hashable) -> Rundown | None:
        """``member`` has gone. When it was the group's last, the group is taken out of use
        now (no call can name its handles from here on: they belong to no group) and the
        rundown of its handles is returned, to be carried out by ``run_down``; else None."""
        found = self.groups.get(group)
        if found is None:
            return None
        found.members.discard(member)
        if found.members:
            return None
        del self.groups[group]
        for token, (owner, _) in list(self._waiting.items()):
            if owner == group:
                taken(self._waiting, token)
        return Rundown(found, list(found.contexts))

    def run_down(self, rundown: Rundown, budget: int) -> bool:
        """Carry ``rundown`` on by about ``budget`` units of work (a handle, or a cursor
        closed); True once every handle is run down. A handle with more cursors than a part
        may close has them closed over several parts first, as Close Queue would close them
        (MS-MQDMPR 3.1.7.1.6: its waits ended, R9-R13, then its cursors closed, R14-R16),
        before the handle's own rundown."""
        server = self.remote_read
        while not rundown.finished and budget > 0:
            context = rundown.contexts[rundown.next]
            desc = server.descriptor(context)
            cursors = len(desc.cursor_collection) if desc is not None else 0
            if cursors >= budget:
                if rundown.cursors is None:
                    server.end_waits(desc)
                    rundown.cursors = list(desc.cursor_collection)
                part = rundown.cursors[-budget:]
                del rundown.cursors[-budget:]
                server.close_cursors(part)
                return False
            server.rundown(context)  # MS-MQRR/3.1.6.2/R1
            rundown.group.drop_context(context)
            rundown.next += 1
            rundown.cursors = None
            budget -= 1 + cursors
        return rundown.finished

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
        over = self._over_limit(group, call)
        if over is not None:
            return over
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

    def _over_limit(self, group: Hashable | None, call: c.Call) -> Outcome | None:
        """Choice 1: the failure of a call that would take its group past ``handle_limit``."""
        rule = LIMITED_CALLS.get(type(call))
        if rule is None or self.handle_limit is None or group is None:
            return None
        joined = self.groups.get(group)
        if joined is None or joined.held < self.handle_limit:
            return None
        void = isinstance(call, OPENING_CALLS)  # R_OpenQueue* throw their failure
        return status_only(c.RESULTS[type(call)], MQ_ERROR_INSUFFICIENT_RESOURCES, rule,
                           any_failure=True, raised=void)

    def _record(self, group: AssociationGroup | None, call: c.Call, out: Outcome) -> None:
        """The handles a call gave its group, or took from it."""
        result = out.result
        if group is None or result.raised:
            return
        if isinstance(call, OPENING_CALLS) and result.pphContext:
            group.add_context(bytes(result.pphContext), getattr(result, "pMoveContext", 0))
        elif isinstance(call, c.R_CloseQueue) and result.status == 0 and call.pphContext:
            group.drop_context(bytes(call.pphContext))
        elif isinstance(call, c.R_CreateCursor) and result.status == 0 and call.phContext:
            group.count_cursor(bytes(call.phContext), 1)
        elif isinstance(call, c.R_CloseCursor) and result.status == 0 and call.phContext:
            group.count_cursor(bytes(call.phContext), -1)

    def completions(self) -> list[tuple[Any, Outcome]]:
        """The waiting calls the model has completed since the last look: (token, Outcome),
        in the order they completed."""
        done = []
        for completion in self.remote_read.take_completions():
            entry = taken(self._waiting, completion.token)
            if entry is not None:
                group, call = entry
                self._record(self.groups.get(group) if group is not None else None, call,
                             completion.result)
            done.append((completion.token, completion.result))
        return done

    def abandon(self, token: Any) -> bool:
        """The caller of a waiting call is gone (an orphaned call, MS-RPCE 3.3.1.5.6): end the
        model's wait as R_CancelReceive does (MS-MQRR 3.1.4.8). False if it was not waiting."""
        entry = taken(self._waiting, token)
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
