"""The suite's session (target, oracle, SUT control, results) and a case's helper, the ``mq``
fixture of conformance/plugin.py.

Every call a case makes goes to the target and, translated, to the oracle: a ModelTarget on
virtual time provisioned in lockstep with the target (same computer name, same queues and
messages, same R_GetServerPort port). The target's context and cursor handles are mapped to the
oracle's as the two hand them out; the verdict compares the target's result against the model's
Outcome (``Outcome.conforms``, and for receives the message returned), never against what the
reference server happens to do.

Calls that wait (a receive with a timeout that no message satisfies yet) are started with
``Case.start``: the target gets the call on a thread and a connection of its own (in the suite's
association group, as a Windows client opens a second connection of its binding), the oracle
gets it at once and answers Pending. While such a call is pending the oracle's virtual clock
follows real time: before every oracle call it is moved to the oracle time that corresponds to
"now" on the wall clock since the first pending call started, so that a timeout fires in the
oracle when it fires on the target, and a message sent or a cancel made in between reaches the
oracle's waiting call as it reaches the target's. ``Case.finish_call`` waits for the target's
answer, brings the oracle to the moment of that answer (with TIME_SLACK_MS of timer
granularity) and checks the answer against the oracle's completion: a target that answers while
the documents still keep the call waiting fails the check, and so does one that does not answer.
Scenarios keep the margins wide (a message sent 0.2 s into a 10 s wait; a 0.2-0.3 s timeout
that nothing satisfies), so a verdict never depends on scheduling noise.
"""

from __future__ import annotations

import dataclasses
import itertools
import re
import secrets
import shutil
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from mqconform.conformance import sources
from mqconform.conformance import verdicts as v
from mqconform.conformance.client import Credentials, format_result
from mqconform.conformance.sut import (
    CommandControl,
    Inconclusive,
    NoControl,
    ReferenceControl,
    SutControl,
)
from mqconform.conformance.targetfile import TargetSpec
from mqconform.conformance.targets import (
    Capabilities,
    ModelQueueManager,
    ModelTarget,
    NotApplicable,
    RpcTarget,
    ServeProcess,
    TargetError,
    require_capability,
)
from mqconform.model import calls as c
from mqconform.model.formats import QueueFormat, parse_format_name, to_queue_format
from mqconform.model.host import CONTEXT_FIELDS
from mqconform.model.mqrr import RECEIVE_ACTIONS
from mqconform.model.outcome import Outcome
from mqconform.model.packet import decode_packet
from mqconform.model.runtime import Pending
from mqconform.model.status import name_of
from mqconform.server.control import ControlApi
from mqconform.spec.catalog import ID_IN_TEXT, load

#: what the oracle is given in place of a context handle the calling association was never
#: given (MS-MQRR 2.2.4: strict context handles): a handle the oracle never issued
FOREIGN_CONTEXT = b"\x00\x00\x00\x00" + uuid.UUID(int=0xF0_4E_16_00).bytes_le
#: and in place of a move context given in another association group: one it never issued
FOREIGN_MOVE_CONTEXT = 0xF04E_1600_F04E_1600
#: how much earlier than the oracle's clock a target may end a wait: timer granularity (a
#: Windows timer ticks every 15.6 ms) and the few milliseconds a server's clock may round away
TIME_SLACK_MS = 50
#: how long a started call is given to reach an RPC target and begin waiting before the case
#: goes on (an RPC target gives no sign that a call waits; a ModelTarget does)
SETTLE_S = 0.2
#: how long finish_call waits for a target's answer beyond the call's own ulTimeout
ANSWER_LIMIT_S = 10.0
#: pSequenceId: the lower 7 octets of a lookup identifier (MS-MQRR 3.1.4.7); the high octet
#: is 7 - priority for a transactional message (MS-MQDMPR 3.1.7.1.9)
SEQUENCE_MASK = (1 << 56) - 1
#: the role of a caller who does not authenticate: the access lists' ``anonymous``
#: (server/security.py), a connection without credentials (``as_identity``)
ANONYMOUS = "anonymous"


class CaseFailed(AssertionError):
    """A check failed; the case stops (later steps depend on earlier ones)."""


def status_text(result: c.Result) -> str:
    name = name_of(result.status)
    shown = f"0x{result.status:08X}" + (f" {name}" if name and not name.startswith("0x")
                                         else "")
    if isinstance(result, c.R_GetServerPortResult):
        shown = f"{result.status}"
    return shown + (" (raised)" if result.raised else "")


def call_text(call: c.Call) -> str:
    """The call in one line; octet strings longer than 32 octets are cut (their whole value is
    in wire.pcap at the call's frames)."""
    parts = []
    for f in dataclasses.fields(call):
        value = getattr(call, f.name)
        if isinstance(value, bytes):
            value = value.hex() if len(value) <= 32 else \
                f"{value[:32].hex()}\u2026({len(value)} octets)"
        elif isinstance(value, int) and not isinstance(value, bool) and value > 9:
            value = f"0x{value:X}"
        elif isinstance(value, QueueFormat):
            value = str(getattr(value, "format_name", None) or value)
        parts.append(f"{f.name}={value}")
    return f"{type(call).__name__}({', '.join(parts)})"


def result_text(result: c.Result) -> str:
    return format_result(result)


class Aliases:
    """Names for the values a target chooses freely (context handles, cursor handles, move
    contexts: random on the reference, MS-MQRR 2.2.4), in the order the run meets them, so
    that the call records of two runs against the same target read the same: results.json
    shows ``context#3`` where the target returned some 20 octets (the octets themselves are in
    wire.pcap, at the call's frames)."""

    FIELDS = (("pphContext", "context"), ("phCursor", "cursor"), ("pMoveContext", "move"))

    #: the shapes a known value can take in a text, each a whole token: a number with its
    #: hex ("439025664 (0x1a2b0000)"), a GUID with dashes, a word (octets as hex, 0x1A2B,
    #: a GUID's 32 or 12 hex digits). Compiled once: each token is then one dict lookup,
    #: however many values the run has named.
    TOKEN = re.compile(r"(?<!\w)(?:\d+ \(0x[0-9A-Fa-f]+\)"
                       r"|[0-9A-Fa-f]{8}(?:-[0-9A-Fa-f]{4}){3}-[0-9A-Fa-f]{12}(?!\w)"
                       r"|\w+)")
    WORD = re.compile(r"\w+")

    def __init__(self) -> None:
        self._names: dict[str, str] = {}  # a token -> its name
        self._literals: dict[str, str] = {}  # replaced wherever they appear, inside words too
        self._exact: dict[str, str] = {}  # whole texts only
        self._lock = threading.Lock()
        self._count = itertools.count(1)

    def port(self, port: int) -> None:
        """The target's RemoteRead port, when the run chose it (the embedded server's is any
        free one): R_GetServerPort's answer reads as ``<port>``."""
        with self._lock:
            self._names[f"{port} (0x{port:08x})"] = "<port>"
            self._exact[str(port)] = "<port>"

    def literal(self, text: str, name: str) -> None:
        """``text`` reads as ``name`` wherever it appears (a run's own token in queue names)."""
        with self._lock:
            self._literals[text] = name

    def learn(self, result: Any) -> None:
        """The handles a target's answer hands out."""
        for field_name, kind in self.FIELDS:
            value = getattr(result, field_name, None)
            if not value or getattr(result, "status", 0):
                continue
            if isinstance(value, int) and value < 0x10000:
                continue  # a small counter (the model's): the same in every run, and a name
                # for it would catch other small numbers
            with self._lock:
                forms = ([bytes(value).hex()] if isinstance(value, (bytes, bytearray))
                         else [f"{value} (0x{value:x})", f"0x{value:X}"])
                if forms[0] not in self._names:
                    name = f"{kind}#{next(self._count)}"
                    for form in forms:
                        self._names[form] = name

    def fresh(self, value: uuid.UUID) -> uuid.UUID:
        """A GUID the suite drew for this run (a queue that must not exist, a client id): it
        reads as ``guid#N`` in every form the suite writes it (with dashes, as 32 or 12 hex
        digits)."""
        with self._lock:
            name = f"guid#{next(self._count)}"
            for form in (str(value), value.hex, value.hex[:12]):
                self._names.setdefault(form, name)
        return value

    def apply(self, text: str | None) -> str | None:
        """``text`` with every known value, as a whole token (never inside a longer number or
        word: a cursor 0x1 leaves 0x12345678 alone), read as its name."""
        if text in self._exact:
            return self._exact[text]
        if not text:
            return text
        with self._lock:
            literals = list(self._literals.items())
        names = self._names  # read without a copy: a lookup is safe while a thread adds
        for form, name in literals:
            text = text.replace(form, name)
        if not names:
            return text

        def name_of(m: re.Match) -> str:
            token = m.group(0)
            found = names.get(token)
            if found is not None:
                return found
            if len(token) > 1 and not token.isalnum():  # a shape of several words, unknown
                return self.WORD.sub(lambda w: names.get(w.group(0), w.group(0)), token)
            return token

        return self.TOKEN.sub(name_of, text)


def lookup_id_of(result: c.Result) -> int:
    """The lookup identifier of a received message: pSequenceId is its lower 7 octets
    (MS-MQRR 3.1.4.7); the high octet is 7 - priority for a transactional message and 0
    otherwise (MS-MQDMPR 3.1.7.1.9), read from the packet's TransactionHeader and priority."""
    high = 0
    try:
        packet = decode_packet(result.ppPacketSections[0].pSectionBuffer).user_message
        if packet.transaction_header is not None:
            high = (0x07 - packet.base_header.flags.pr) & 0xFF
    except Exception:  # noqa: BLE001 - a packet the codec cannot read: a plain lookup ID
        pass
    return (high << 56) | result.pSequenceId


def message_body(result: c.Result) -> bytes | None:
    sections = getattr(result, "ppPacketSections", ())
    if not sections or sections[0].pSectionBuffer is None:
        return None
    packet = sections[0].pSectionBuffer
    try:
        offset, size = decode_packet(packet).message_body
    except Exception:  # noqa: BLE001 - a packet the codec cannot read has no body to compare
        return None
    return bytes(packet[offset:offset + size])


class _NamedSource(sources.Source):
    """The run's source of GUIDs and times (conformance/sources.py): the one in use, with
    each fresh GUID given an alias for the records."""

    def __init__(self, inner: sources.Source, aliases: Aliases):
        super().__init__()
        self._inner, self._aliases = inner, aliases

    def uuid4(self) -> uuid.UUID:
        return self._aliases.fresh(self._inner.uuid4())

    def now(self) -> float:
        return self._inner.now()

    def arrival_time(self) -> int:
        return self._inner.arrival_time()

    def count(self, name: str) -> int:
        return self._inner.count(name)


class Suite:
    """One run: the target, the oracle, SUT control, and the results of the cases."""

    def __init__(self, spec: TargetSpec, strict: bool = False, catalog: Any = None):
        self.spec = spec
        self.strict = strict
        self.catalog = catalog or load()
        self.levels = {r.id: r.level for r in self.catalog}
        self.texts = {r.id: r.text for r in self.catalog}
        self.results: list[v.CaseResult] = []
        self.aliases = Aliases()  # the target's handles by name in the call records
        self.capabilities = Capabilities(dict(spec.capabilities))
        self._running = None  # the embedded reference server, when endpoint is reference
        self._folder: Path | None = None  # its provisioning file's folder, removed at close
        self._run = secrets.token_hex(3)
        # the run's queues are named mqc-<token>-N on the target (no clash with another run
        # against the same target); the records read mqc-<run>-N, alike from run to run
        self.aliases.literal(f"mqc-{self._run}-", "mqc-<run>-")
        # path names compare without case (spec/choices.yaml formats-case): a case may spell
        # them in the other case
        self.aliases.literal(f"mqc-{self._run}-".swapcase(), "MQC-<RUN>-")
        self._queues = itertools.count(1)
        self.target, self.sut, port = self._open()
        self.oracle = ModelTarget(ModelQueueManager.from_yaml(
            port=port, clock="virtual", computer_name=spec.computer_name), name="oracle")
        self.oracle_sut = self._in_process_control(self.oracle.qm)
        #: the allowed choices the target serves, where its SUT control says (the reference's
        #: GET /settings); None for a target that does not say
        self.target_choices = self.sut.choices()
        self._follow_choices()
        #: the target's address as a client reaches it: a DIRECT=TCP format name with it names
        #: a queue of the target's own (MS-MQRR 2.2.3), so the oracle counts it as local too
        self.address = (self.target.client.endpoint.host if isinstance(self.target, RpcTarget)
                        else "127.0.0.1")
        for model in (self.oracle, self.target):
            if isinstance(model, ModelTarget):
                model.qm.env.local_addresses = (self.address,)
        # the GUIDs the cases draw read as their aliases in the records, until close()
        self._source = sources.use(_NamedSource(sources.current(), self.aliases))
        self._source.__enter__()

    def _follow_choices(self) -> None:
        """The oracle reads TIDY as a target that says its choices does (spec/choices.yaml
        mqmr-tidy: every queue purged, or none the ADM can see). No check can tell the two
        apart after the fact, and a run that mixes TIDY with other calls (the qmmgmt machine)
        compares every later count with the oracle's. The suite's other checks accept either
        value of every choice, so the oracle keeps the reference's for the rest."""
        from mqconform.model.choices import PROFILES
        profile = PROFILES.get(self.target_choices or "")
        env = self.oracle.qm.env
        if profile is not None and profile.tidy_purges_queues != env.choices.tidy_purges_queues:
            env.choices = dataclasses.replace(env.choices,
                                              tidy_purges_queues=profile.tidy_purges_queues)

    @staticmethod
    def _in_process_control(qm: ModelQueueManager) -> ReferenceControl:
        return ReferenceControl(api=ControlApi(qm, arrival_time=sources.arrival_time))

    def _open(self) -> tuple[Any, SutControl, int]:
        spec = self.spec
        if spec.endpoint == "model":
            qm = ModelQueueManager.from_yaml(computer_name=spec.computer_name,
                                             choices=spec.choices)
            target = ModelTarget(qm, name=spec.name, capabilities=self.capabilities)
            sut = self._in_process_control(qm) if spec.sut_kind == "reference" \
                else self._sut(None)
            return target, sut, qm.remote_read.port
        endpoint, url, token = spec.endpoint, spec.sut_url, spec.sut_token
        if endpoint == "reference":  # mqconform serve, in a process of its own
            self._running = self._serve_reference()
            endpoint, url = self._running.endpoint, self._running.control_url
            token = self._running.control_token
            self.aliases.port(self._running.address[1])
        target = RpcTarget(endpoint, spec.ndr64, name=spec.name, capabilities=self.capabilities,
                           timeout=spec.timeout, epm_port=spec.epm_port,
                           computer_name=spec.computer_name, credentials=spec.credentials)
        return target, self._sut(url, token), target.port

    def _serve_reference(self) -> Any:
        """``mqconform serve`` for ``--target reference``: unauthenticated for the suite's
        own client (as for local development), with two users for the access-check
        scenarios, an administrator and a reader, whose passwords are made for this run and
        handed over in the server's environment (its provisioning file names the variables,
        not the secrets)."""
        folder = self._folder = Path(tempfile.mkdtemp(prefix="mqconform-reference-"))
        users = {"administrator": f"mqc-admin-{self._run}", "reader": f"mqc-reader-{self._run}"}
        passwords = {role: secrets.token_urlsafe(18) for role in users}
        env = {f"MQC_{role.upper()}_PASSWORD": passwords[role] for role in users}
        lines = ["security:", "  authentication: none", "  users:"]
        for role, user in users.items():
            lines += [f"    - name: {user}", f"      password_env: MQC_{role.upper()}_PASSWORD",
                      f"      administrator: {'true' if role == 'administrator' else 'false'}"]
        (folder / "queues.yaml").write_text("\n".join(lines) + "\n")
        running = ServeProcess(args=("--queues", str(folder / "queues.yaml"),
                                     "--choices", self.spec.choices), env=env)
        self.spec.identities = {role: Credentials(user, passwords[role])
                                for role, user in users.items()}
        return running

    def unreachable(self, timeout: float = 3.0) -> str | None:
        """Why the target no longer answers (its process ended, or a new connection and bind
        fail within ``timeout`` s), or None while it does. A model target always answers."""
        if not isinstance(self.target, RpcTarget):
            return None
        running = self._running
        if running is not None and running.proc.poll() is not None:
            return f"the embedded reference server exited with status {running.proc.returncode}"
        try:
            RpcTarget(self.target.endpoint, self.target.ndr64, name=self.target.name,
                      timeout=timeout, epm_port=self.spec.epm_port,
                      computer_name=self.spec.computer_name,
                      credentials=self.spec.credentials, recorder=False).close()
        except TargetError as exc:
            return " ".join(str(exc).split())
        return None

    def _sut(self, url: str | None, token: str | None = None) -> SutControl:
        kind = self.spec.sut_kind
        if kind == "reference":
            return ReferenceControl(url=url, token=token)
        if kind == "command":
            return CommandControl(self.spec.sut_commands)
        return NoControl()

    def queue_path(self) -> str:
        return f"private$\\mqc-{self._run}-{next(self._queues)}"

    def close(self) -> None:
        if self._source is not None:
            # put back the source that was in use, unless another suite installed its own
            # since (it restores ours when it closes)
            if isinstance(sources.current(), _NamedSource) and \
                    sources.current()._aliases is self.aliases:
                self._source.__exit__(None, None, None)
            self._source = None
        self.target.close()
        if self._running is not None:
            self._running.close()
            self._running = None
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None


class ModelAssociation:
    """A connection in an association group of its own to a ModelTarget's queue manager: the
    model's host (model/host.py) checks its context handles as the reference server's runtime
    does (MS-MQRR 2.2.4.1, 2.2.4.2: a handle this association was not given, or a NULL one,
    is refused with a fault before the model sees it), and runs the rundown of the handles it
    still holds when it closes (MS-MQRR 3.1.6.2)."""

    _groups = itertools.count(1)

    def __init__(self, target: ModelTarget):
        self.target = target
        self.name = target.name
        self.capabilities = target.capabilities
        self.group = ("association", next(self._groups))
        with target.qm.lock:
            target.qm.host.join(self.group, id(self))

    def call(self, typed_call: c.Call) -> c.Result:
        require_capability(self.capabilities, typed_call)
        listener = self.target.qm.listener
        if listener is not None:
            listener.on_connect(self)
        result = self.target.qm.outcome(typed_call, group=self.group).result
        if listener is not None:  # told once answered, as the host may refuse it unseen
            listener.on_answer(self, listener.on_request(self, typed_call), result)
        return result

    def connect_second(self) -> ModelAssociation:
        return self  # the group's connections share its handles

    def close(self) -> None:
        qm = self.target.qm
        if qm.listener is not None:
            qm.listener.on_close(self)
        with qm.lock:
            qm.host.leave(self.group, id(self))
            qm._deliver()


@dataclasses.dataclass(eq=False)
class PendingCall:
    """A call started with ``Case.start``: on the target on a thread of its own, on the oracle
    as a Pending (or an Outcome, if the oracle answers at once). ``Case.finish_call`` ends it."""

    call: c.Call
    target: Any
    ids: tuple[str, ...]
    started: float  # time.monotonic() when the target was sent the call
    own_connection: bool = False  # the target is a connection opened for this call alone
    oracle: Outcome | Pending | None = None
    observed: c.Result | None = None
    error: BaseException | None = None
    answered: float | None = None  # time.monotonic() when the target answered
    done: threading.Event = dataclasses.field(default_factory=threading.Event)
    thread: threading.Thread | None = None
    finished: bool = False
    dead_context: bool = False  # see Case._dead_context
    frames: dict | None = None  # where the call is in the run's wire capture, if recorded

    def run(self) -> None:
        try:
            self.observed = self.target.call(self.call)
        except BaseException as exc:  # noqa: BLE001 - handed to the case by finish_call
            self.error = exc
        self.answered = time.monotonic()
        claim = v.wire_frames  # a recorder notes a call's frames for the thread that made it
        self.frames = claim() if claim is not None else None
        self.done.set()

    @property
    def wait_ms(self) -> float:
        """The call's own wait (ulTimeout), in milliseconds; infinite as float('inf')."""
        timeout = getattr(self.call, "ulTimeout", 0) or 0
        return float("inf") if timeout == c.INFINITE_TIMEOUT else float(timeout)


class Case:
    """The ``mq`` fixture: one case's view of the suite."""

    def __init__(self, suite: Suite, case_id: str, ids: tuple[str, ...]):
        self.suite = suite
        self.target = suite.target
        self.oracle = suite.oracle
        self.sut = suite.sut
        self.capabilities = suite.capabilities
        self.record = v.CaseResult(case=case_id, ids=ids, target=suite.spec.name)
        self.checks: list[v.Check] = []
        self._contexts: dict[bytes, bytes] = {}
        self._cursors: dict[tuple[bytes, int], int] = {}
        #: the target's lookup identifiers (pSequenceId) -> the oracle's, as receives return
        #: them, so that a LookupId the target gave is sent to the oracle as the oracle's own
        self._lookups: dict[int, int] = {}
        #: whole lookup identifiers (high-order byte included) of the target -> the oracle's,
        #: where the two differ in more than the lower 7 octets (note_lookup)
        self._whole_lookups: dict[int, int] = {}
        self._formats: dict[Any, Any] = {}  # note_format
        #: the target's pMoveContext values -> the oracle's, as R_OpenQueueForMove returns them,
        #: so that an R_MoveMessage's ullContextTo reaches the oracle as the oracle's own
        self._moves: dict[int, int] = {}
        #: the association group each of the target's move contexts was given in
        self._move_group: dict[int, int] = {}
        #: (handle, dwRequestId) -> the target's pSequenceId of a receive not yet ended, and
        #: the pSequenceIds of messages the target acknowledged removing (RR_ACK, MQ_OK)
        self._received: dict[tuple[bytes, int], int] = {}
        self._acked: set[int] = set()
        self._paths: dict[QueueFormat, str] = {}
        #: association groups: 0 is the suite's (its target and every connect_second of it);
        #: each separate() connection is a group of its own. Context handles by the group
        #: that opened them.
        self._groups: dict[int, int] = {}
        self._group_of: dict[bytes, int] = {}
        self._live: set[tuple[int, bytes]] = set()  # (group, handle) opened and not closed
        self._connections: list[Any] = []
        self._pending: list[PendingCall] = []
        self._anchor: tuple[float, int] | None = None  # (real time, oracle ms) of the first
        #: the oracle's Outcome for the case's last call checked (for checks that compare a
        #: field of the target's result with the model's, e.g. a packet's header)
        self.last_outcome: Outcome | None = None
        #: False: check() keeps a CallRecord only for a call that fails (a caller that keeps
        #: its own, as the stateful machines do, saves formatting every call's text)
        self.keep_calls = True
        self._started = time.monotonic()
        #: the scenario step running (suite_plugin sets it): path, line, its text
        self.step: dict | None = None
        #: message keys a message of this case left to the target's default, where the
        #: documents only recommend one (TimeToReachQueue: MS-MQDMPR 3.1.1.12 "SHOULD<12> be
        #: 0x54600"): a check compares such a value only where the case gave it
        self.target_defaults: set[str] = set()

    # ---------------------------------------------------------------- preconditions
    def require(self, capability: str) -> None:
        if not self.capabilities.has(capability):
            raise NotApplicable(f"the target declares no {capability}")

    def queue(self, messages: list[bytes | dict] = (), transactional: bool = False,
              journal: bool = False, suffix: str = "", public: bool = False) -> QueueFormat:
        """A new queue on the target and on the oracle, with these messages in order (and
        Queue.Journaling True if ``journal``; its name ending in ``suffix``; a public queue,
        its path name without private$ (MS-MQMQ 2.1.1), if ``public``); Inconclusive if SUT
        control cannot make it."""
        path = self.suite.queue_path() + suffix
        if public:
            path = path.split("\\", 1)[1]
        specs = [m if isinstance(m, dict) else {"body": m} for m in messages]
        self.note_messages(specs)
        extra = {"journal": True} if journal else {}
        self.sut.provision(path, specs, transactional=transactional, **extra)
        self.suite.oracle_sut.provision(path, specs, transactional=transactional, **extra)
        fmt = self.format_of(path)
        self._paths[fmt] = path
        return fmt

    #: message keys whose value the documents leave to the server when a sender gives none
    RECOMMENDED_DEFAULTS = ("time_to_reach_queue",)

    def note_messages(self, specs: list[dict]) -> None:
        """Record the keys of RECOMMENDED_DEFAULTS these messages leave to the target."""
        for spec in specs:
            self.target_defaults.update(k for k in self.RECOMMENDED_DEFAULTS if k not in spec)

    def format_of(self, path: str) -> QueueFormat:
        return to_queue_format(parse_format_name(
            f"DIRECT=OS:{self.suite.spec.computer_name}\\{path}"))

    def path_of(self, fmt: QueueFormat) -> str:
        """The path name of a queue this case made with ``queue``."""
        return self._paths[fmt]

    def send(self, fmt: QueueFormat, message: bytes | dict,
             oracle_message: dict | None = None) -> None:
        """A message arrives in a queue this case made, on the target and on the oracle (through
        SUT control); a call waiting for it on either may complete. ``oracle_message``: the
        oracle's own spec where the two differ (a format name naming the queue on each)."""
        spec = message if isinstance(message, dict) else {"body": message}
        self.note_messages([spec])
        path = self._paths[fmt]
        self.sut.send_message(path, **spec)
        self._sync()
        self.suite.oracle_sut.send_message(path, **(oracle_message or spec))

    # ---------------------------------------------------------------- connections
    def use_syntax(self, ndr64: bool) -> None:
        """Make every later call of the case, and its second connections, go over a new
        association that binds RemoteRead and qmmgmt in this transfer syntax (NDR64,
        MS-RPCE 2.2.5; or NDR 2.0), where the suite's own connection binds the other. Call it
        before the case opens anything: the case's context handles are this association
        group's. NotApplicable on a target that declares no NDR64 or has no wire."""
        target = self.target
        if ndr64:
            self.require("ndr64")
        if not isinstance(target, RpcTarget):
            if ndr64:
                raise NotApplicable(f"{type(target).__name__} has no transfer syntax")
            return
        if target.ndr64 == ndr64:
            return
        conn = RpcTarget(target.endpoint, ndr64, name=target.name,
                         capabilities=target.capabilities, computer_name=target.computer_name,
                         recorder=target.recorder, **target._options)
        self._connections.append(conn)
        self._groups[id(conn)] = 0  # the case's own group from now on
        self.target = conn

    def second(self) -> Any:
        """A new connection in the suite's association group (the context handles the case
        opened are valid on it); closed when the case ends."""
        conn = self.target.connect_second()
        self._connections.append(conn)
        self._groups[id(conn)] = 0
        return conn

    def separate(self) -> Any:
        """A new connection in an association group of its own, as another client's: the
        context handles the case opened elsewhere are not its own (MS-MQRR 2.2.4). On the
        in-process model, a ModelAssociation stands in for the RPC runtime's part."""
        target = self.target
        if isinstance(target, ModelTarget):
            conn = ModelAssociation(target)
        elif not isinstance(target, RpcTarget):
            raise NotApplicable(f"{type(target).__name__} has no association groups")
        else:
            conn = RpcTarget(target.endpoint, target.ndr64, name=target.name,
                             capabilities=target.capabilities,
                             computer_name=target.computer_name, **target._options)
        self._connections.append(conn)
        self._groups[id(conn)] = max(self._groups.values(), default=0) + 1
        return conn

    def as_identity(self, role: str, join: bool = False, trailer: bool = False,
                    level: int | None = None) -> Any:
        """A connection of its own that authenticates as the target file's identity ``role``
        (conformance/targetfile.py ROLES), or (``anonymous``) one that does not authenticate,
        not applicable where the target file gives credentials; calls on it go to the target
        only: the model knows no identities, so its checks are the scenario's own
        (``assert_that``).
        ``join``: its bind names the suite's association group (C706 12.6.4.3), as a client
        that learnt the group's id would. ``trailer``: its first request carries a
        verification trailer, as Windows clients send it (conformance/client.py decision 6).
        ``level``: authenticate at this level (MS-RPCE 2.2.1.1.8) rather than the target
        file's. Inconclusive when the target file names no such identity."""
        target = self.target
        if not isinstance(target, RpcTarget):
            raise NotApplicable(f"{type(target).__name__} has no RPC runtime to "
                                f"authenticate to")
        if role == ANONYMOUS:  # the caller who does not authenticate (server/security.py)
            if target._options.get("credentials") is not None:
                raise NotApplicable("the target file gives credentials: the target requires "
                                    "authentication, so an anonymous caller cannot bind")
            credentials = None
        else:
            credentials = self.suite.spec.identities.get(role)
            if credentials is None:
                raise Inconclusive(f"the target file gives no identity {role!r} (identities:)")
            if level is not None:
                credentials = dataclasses.replace(credentials, level=level)
        options = {**target._options, "credentials": credentials,
                   "verification_trailer": trailer}
        conn = RpcTarget(target.endpoint, target.ndr64, name=f"{target.name} as {role}",
                         capabilities=target.capabilities,
                         computer_name=target.computer_name,
                         assoc_group=target.client.assoc_group if join else 0, **options)
        self._connections.append(conn)
        self._groups[id(conn)] = max(self._groups.values(), default=0) + 1
        return conn

    def guarded_queue(self, rights: dict[str, list[str]], messages: list[bytes] = ()
                      ) -> QueueFormat:
        """A new queue whose access list gives each right (peek, receive, purge) to the
        users of these roles only (server/security.py; the role ``anonymous`` is the caller
        who does not authenticate), with these messages; made on the
        target through SUT control (Inconclusive if it cannot set an access list) and on the
        oracle as a plain queue."""
        if not isinstance(self.target, RpcTarget):
            raise NotApplicable(f"{type(self.target).__name__} has no callers' identities")
        path = self.suite.queue_path()
        users = {}
        for right, roles in rights.items():
            missing = [r for r in roles if r not in self.suite.spec.identities
                       and r != ANONYMOUS]
            if missing:
                raise Inconclusive(f"the target file gives no identity {missing[0]!r}")
            users[right] = [r if r == ANONYMOUS else self.suite.spec.identities[r].user
                            for r in roles]
        self.sut.create_queue_from({"path": path, "access": users})
        specs = [{"body": m} for m in messages]
        self.note_messages(specs)
        for spec in specs:
            self.sut.send_message(path, **spec)
        self.suite.oracle_sut.provision(path, specs)
        fmt = self.format_of(path)
        self._paths[fmt] = path
        return fmt

    def _group(self, target: Any) -> int:
        return self._groups.get(id(target), 0)

    # ---------------------------------------------------------------- calling
    def _to_oracle(self, call: c.Call, target: Any = None) -> c.Call:
        changes: dict[str, Any] = {}
        group = self._group(target)
        for name in CONTEXT_FIELDS:
            value = getattr(call, name, None)
            if value is not None:
                mine = bytes(value)
                if self._group_of.get(mine, group) != group:
                    changes[name] = FOREIGN_CONTEXT  # not this association's (2.2.4)
                else:
                    changes[name] = self._contexts.get(mine, value)
        cursor = getattr(call, "hCursor", 0)
        if cursor:
            changes["hCursor"] = self._oracle_cursor(bytes(call.phContext or b""), cursor)
        move = getattr(call, "ullContextTo", 0)
        if move and self._move_group.get(move, group) != group:
            # a move context "logically references" its handle (MS-MQRR 3.1.4.11), which is
            # strict (2.2.4.2): in another association it names nothing
            changes["ullContextTo"] = FOREIGN_MOVE_CONTEXT
        elif move and move in self._moves:
            changes["ullContextTo"] = self._moves[move]
        fmt = getattr(call, "pQueueFormat", None)
        if fmt is not None and fmt in self._formats:
            changes["pQueueFormat"] = self._formats[fmt]
        lookup = getattr(call, "LookupId", 0)
        if lookup in self._whole_lookups:
            changes["LookupId"] = self._whole_lookups[lookup]
        elif lookup:  # mapped by its lower 7 octets (pSequenceId); the high octet is kept
            low = self._lookups.get(lookup & SEQUENCE_MASK)
            changes["LookupId"] = lookup if low is None else (lookup & ~SEQUENCE_MASK) | low
        return dataclasses.replace(call, **changes) if changes else call

    def note_format(self, target: Any, oracle: Any) -> None:
        """The oracle's QUEUE_FORMAT for one the target alone can name: a PRIVATE= format name
        carries the identifier of the queue manager and the queue's number (MS-MQMQ 2.1.4),
        which differ between the target and the oracle for the same queue."""
        self._formats[target] = oracle

    def note_lookup(self, target: int, oracle: int) -> None:
        """The oracle's whole lookup identifier of a message whose whole identifier on the
        target is ``target``. pSequenceId carries only the lower 7 octets (MS-MQRR 3.1.4.7);
        the high-order octet of a transactional message's identifier is 0x07 - Priority
        (MS-MQDMPR 3.1.7.1.9), which a target may reckon from another Priority than the
        oracle's (errata transactional-message-priority)."""
        self._whole_lookups[target] = oracle

    def _oracle_cursor(self, context: bytes, cursor: int) -> int:
        """The oracle's hCursor for the target's: the cursor R_CreateCursor returned on this
        handle, else one it returned on another handle (a Cursor's Handle is unique across
        the queue manager, MS-MQDMPR 3.2.1.2, so the value names that cursor wherever it is
        sent), else the value as it is (a cursor no R_CreateCursor returned)."""
        mapped = self._cursors.get((context, cursor))
        if mapped is None:
            mapped = next((theirs for (_, mine), theirs in self._cursors.items()
                           if mine == cursor), cursor)
        return mapped

    def _learn(self, call: c.Call, observed: c.Result, expected: c.Result,
               target: Any = None) -> None:
        mine, theirs = getattr(observed, "pphContext", None), getattr(expected, "pphContext",
                                                                       None)
        if isinstance(call, (c.R_OpenQueue, c.R_OpenQueueForMove)) and mine and theirs:
            self._contexts[bytes(mine)] = bytes(theirs)
            self._group_of[bytes(mine)] = self._group(target)
            self._live.add((self._group(target), bytes(mine)))
            move = getattr(observed, "pMoveContext", 0)
            if move and getattr(expected, "pMoveContext", 0):
                self._moves[move] = expected.pMoveContext
                self._move_group[move] = self._group(target)
        if (isinstance(call, c.R_CloseQueue) and call.pphContext and observed.status == 0
                and not observed.raised):
            self._live.discard((self._group(target), bytes(call.pphContext)))
        if isinstance(call, c.R_CreateCursor) and observed.phCursor and expected.phCursor:
            self._cursors[(bytes(call.phContext or b""), observed.phCursor)] = expected.phCursor
        if (hasattr(observed, "pSequenceId") and observed.status == 0 == expected.status
                and not observed.raised and observed.pSequenceId and expected.pSequenceId):
            self._lookups.setdefault(observed.pSequenceId, expected.pSequenceId)
        ok = observed.status == 0 and not observed.raised
        if (isinstance(call, (c.R_StartReceive, c.R_StartTransactionalReceive)) and ok
                and call.ulAction in RECEIVE_ACTIONS and observed.pSequenceId):
            self._received[(bytes(call.phContext or b""), call.dwRequestId)] = \
                observed.pSequenceId
        if isinstance(call, (c.R_EndReceive, c.R_EndTransactionalReceive)) and ok:
            seq = self._received.pop((bytes(call.phContext or b""), call.dwRequestId), None)
            if seq is not None and call.dwAck == c.RR_ACK:
                self._acked.add(seq)

    def _returned_acked(self, call: c.Call | None, observed: c.Result) -> str | None:
        """A message the target returns again after it answered MQ_OK to RR_ACK for it in
        this case: the failure is MS-MQRR/3.1.4.9/R7's ("remove the message from the queue"),
        whatever later check shows it."""
        if observed.status != 0 or observed.raised:
            return None
        seq = getattr(observed, "pSequenceId", None)
        if seq and seq in self._acked:
            return (f"message 0x{seq:X} came back after R_EndReceive acknowledged it with "
                    f"RR_ACK (MS-MQRR/3.1.4.9/R7)")
        lookup = getattr(call, "LookupId", 0)
        if lookup and lookup in self._acked:
            return (f"LookupId 0x{lookup:X} still finds the message R_EndReceive acknowledged "
                    f"with RR_ACK (MS-MQRR/3.1.4.9/R7)")
        return None

    def call(self, typed_call: c.Call, ids: tuple[str, ...] | list[str] | str = (),
             target: Any = None) -> c.Result:
        """Call the target and the oracle; check the target's result against the model's
        Outcome (the requirement IDs checked: ``ids``, else the case's). Returns the target's
        result; a non-conforming one ends the case. While a started call is pending, the call
        runs as one that starts and finishes at once, on the oracle's real-time clock."""
        target = target or self.target
        if self._pending:
            return self.finish_call(self._begin(typed_call, ids, target, inline=True))
        dead = self._dead_context(typed_call, target)
        observed = target.call(typed_call)
        outcome = self.oracle.outcome(self._to_oracle(typed_call, target))
        self._learn(typed_call, observed, outcome.result, target)
        self.check(outcome, observed, ids=ids, call=typed_call, dead_context=dead)
        return observed

    def _dead_context(self, call: c.Call, target: Any) -> bool:
        """Whether the call carries a context handle its association does not hold (NULL,
        closed, never issued, another group's). The RPC runtime may refuse such a call with
        a fault before the method runs (C706 and MS-RPCE context handle rules, MS-MQRR 2.2.4:
        strict handles), so a fault is as good as the method's own failure there."""
        if isinstance(call, (c.R_OpenQueue, c.R_OpenQueueForMove)):
            return False
        group = self._group(target)
        for name in CONTEXT_FIELDS:
            if hasattr(call, name):
                value = getattr(call, name)
                if value is None or (group, bytes(value)) not in self._live:
                    return True
        return False

    # ---------------------------------------------------------------- calls that wait
    def start(self, typed_call: c.Call, target: Any = None,
              ids: tuple[str, ...] | list[str] | str = (), settle: bool = True
              ) -> PendingCall:
        """Send a call that may wait (a receive with a timeout) and go on without its answer:
        the target gets it on a thread, over ``target`` or, by default, a new connection of
        the suite's association group (closed when the call is finished); the oracle gets it
        at once. Returns once the call has had time to reach the target and begin waiting.
        ``finish_call`` takes the answer and checks it. ``settle=False`` goes on at once, for
        a caller whose next step has the same outcome whether or not the call has reached the
        target yet (a message it sends: a receive that arrives after it returns it at once)."""
        own = target is None
        if own:
            target = self.target.connect_second()
        return self._begin(typed_call, ids, target, inline=False, own_connection=own,
                           settle=settle)

    def finish_call(self, pending: PendingCall, ids: tuple[str, ...] | list[str] | str = (),
                    limit: float | None = None, also: Outcome | None = None) -> c.Result:
        """Wait for the target's answer to a started call (its ulTimeout plus ANSWER_LIMIT_S
        at most, or ``limit`` seconds) and check it against the oracle's completion; ``also``:
        a second answer the documents allow for the call (another reading of them), which the
        target's answer may conform to instead."""
        if pending.finished:
            raise RuntimeError("finish_call: this call was finished already")
        ids = tuple((ids,) if isinstance(ids, str) else ids) or pending.ids
        if limit is None:
            wait = pending.wait_ms
            limit = ANSWER_LIMIT_S + (0.0 if wait == float("inf") else wait / 1000)
        answered = pending.done.wait(limit)
        pending.finished = True
        self._pending.remove(pending)
        name = type(pending.call).__name__
        if not answered:
            self._abandon(pending)
            self._close_anchor()
            return self._fail(ids, pending.call, f"{name}: no answer within {limit:.1f} s"
                              f" (ulTimeout {pending.wait_ms:.0f} ms)")
        if pending.own_connection:
            self._close(pending.target)
        if pending.error is not None:
            self._abandon(pending, target_done=True)
            self._close_anchor()
            raise pending.error
        outcome = pending.oracle
        if isinstance(outcome, Pending):
            outcome = self._completion(outcome, pending.answered + TIME_SLACK_MS / 1000)
        elapsed = (pending.answered - pending.started) * 1000
        self._close_anchor()
        if outcome is None:
            self._abandon(pending, target_done=True)
            observed = pending.observed
            self.record.calls.append(self._record(
                pending.frames, observed, call=call_text(pending.call),
                observed=result_text(observed),
                expected="still waiting"))
            return self._fail(ids, None, f"{name}: answered {status_text(observed)} after "
                              f"{elapsed:.0f} ms, but the documents keep the call waiting "
                              f"(ulTimeout {pending.wait_ms:.0f} ms; nothing satisfied it)")
        self._learn(pending.call, pending.observed, outcome.result, pending.target)
        if also is not None and not outcome.conforms(pending.observed) \
                and also.conforms(pending.observed):
            outcome = also
        self.check(outcome, pending.observed, ids=ids, call=pending.call,
                   dead_context=pending.dead_context, frames=pending.frames)
        return pending.observed

    def _begin(self, typed_call: c.Call, ids: Any, target: Any, inline: bool,
               own_connection: bool = False, settle: bool = True) -> PendingCall:
        ids = tuple((ids,) if isinstance(ids, str) else ids)
        if self._anchor is None:
            self._anchor = (time.monotonic(), self.oracle.qm.env.now)
        parked = self._parked(target)
        pending = PendingCall(typed_call, target, ids, time.monotonic(), own_connection)
        pending.dead_context = self._dead_context(typed_call, target)
        self._pending.append(pending)
        if inline:
            pending.run()
        else:
            pending.thread = threading.Thread(target=pending.run, daemon=True,
                                              name=f"mq-{type(typed_call).__name__}")
            pending.thread.start()
        self._sync(pending.started)
        pending.oracle = self._oracle_start(self._to_oracle(typed_call, target))
        if not inline and settle and isinstance(pending.oracle, Pending):
            self._settle(pending, parked)
        return pending

    @staticmethod
    def _parked(target: Any) -> int:
        return len(target.qm.env.waiting_tokens()) if isinstance(target, ModelTarget) else 0

    def _settle(self, pending: PendingCall, parked: int) -> None:
        """Give the target's call time to arrive and begin waiting: a ModelTarget shows it (a
        new parked operation); over RPC, SETTLE_S."""
        if not isinstance(pending.target, ModelTarget):
            pending.done.wait(SETTLE_S)
            return
        give_up = time.monotonic() + 5.0
        while (not pending.done.is_set() and self._parked(pending.target) <= parked
               and time.monotonic() < give_up):
            time.sleep(0.001)

    def _oracle_start(self, call: c.Call) -> Outcome | Pending:
        """The oracle's answer, or Pending if the call waits (its completion lands in the
        oracle's table of done calls as later calls or its clock satisfy it)."""
        return self.oracle.qm.start(call)

    def _sync(self, at: float | None = None) -> None:
        """While a call is pending, bring the oracle's clock to the real time ``at`` (now by
        default), firing the oracle's timers due by then."""
        if self._anchor is None:
            return
        real, oracle_ms = self._anchor
        ms = oracle_ms + int(((time.monotonic() if at is None else at) - real) * 1000)
        qm = self.oracle.qm
        with qm.lock:
            if ms > qm.env.now:
                qm.env.advance(ms)
                qm._deliver()

    def _completion(self, pending: Pending, at: float) -> Outcome | None:
        """The oracle's completion of a pending call, its clock brought to ``at`` first; None
        if the oracle still waits."""
        qm = self.oracle.qm
        self._sync(at)
        with qm.lock:
            qm._deliver()
            return qm._done.pop(pending.token, None)

    def _close_anchor(self) -> None:
        if not self._pending:
            self._anchor = None

    def _abandon(self, pending: PendingCall, target_done: bool = False) -> None:
        """End what is left of a started call: the oracle's wait, and the target's if it still
        waits (R_CancelReceive for a receive on a ModelTarget; closing its connection over
        RPC, which the server treats as an orphaned call)."""
        call = pending.call
        cancel = None
        if getattr(call, "phContext", None) is not None and hasattr(call, "dwRequestId"):
            cancel = c.R_CancelReceive(phContext=call.phContext, dwRequestId=call.dwRequestId)
        if isinstance(pending.oracle, Pending):
            qm = self.oracle.qm
            with qm.lock:
                if cancel is not None and pending.oracle.token in qm.env.waiting_tokens():
                    qm.remote_read.call(self._to_oracle(cancel, pending.target))
                qm._deliver()
                qm._done.pop(pending.oracle.token, None)
        if not target_done and not pending.done.is_set():
            if isinstance(pending.target, ModelTarget) and cancel is not None:
                try:
                    pending.target.call(cancel)
                except Exception:  # noqa: BLE001 - best effort: the case is over
                    pass
            elif pending.own_connection:
                self._close(pending.target)
            pending.done.wait(2.0)

    def _close_handles(self) -> None:
        """R_CloseQueue for each handle the case opened in the suite's own association group and
        did not close, on the target and the oracle, in the order they were opened. The group
        lives as long as the run: a run of hundreds of cases that left their handles open would
        hold thousands on the target (a server may limit them per client) and keep every queue
        they name Active. Nothing is checked; a target that no longer answers ends it."""
        for handle, theirs in self._contexts.items():
            if (0, handle) not in self._live:
                continue
            try:
                self.target.call(c.R_CloseQueue(pphContext=handle))
            except Exception:  # noqa: BLE001 - the connection is gone: its rundown closes them
                break
            self.oracle.outcome(c.R_CloseQueue(pphContext=theirs))
        self._live.clear()

    def _close(self, target: Any) -> None:
        try:
            target.close()
        except Exception:  # noqa: BLE001 - a connection that will not close is gone anyway
            pass

    def _fail(self, ids: tuple[str, ...], call: c.Call | None, message: str) -> c.Result:
        self.checks.append(v.Check(ids or self.record.ids, False, message,
                                   step=self._where()))
        raise CaseFailed(message)

    @staticmethod
    def _expected_text(outcome: Outcome, observed: c.Result, refused: bool) -> str:
        """What the documents allow for a call, for a failure's record: the status (or any
        failure), and the model's whole result where the status agreed but fields did not."""
        if outcome.conforms(observed) or refused:
            return result_text(outcome.result)
        return status_text(outcome.result) + (" or any failure" if outcome.any_failure else "")

    def _where(self) -> dict | None:
        """Where the check is made: the scenario step running (the plugin sets ``step``), or
        the line of a Python case that made it."""
        if self.step is not None:
            return self.step
        frame = sys._getframe(1)
        while frame is not None:
            path = frame.f_code.co_filename.replace("\\", "/")
            if "/conformance/cases/" in path and not path.endswith("test_features.py"):
                return {"path": "conformance/cases/" + path.rsplit("/conformance/cases/", 1)[1],
                        "line": frame.f_lineno, "text": frame.f_code.co_name}
            frame = frame.f_back
        return None

    def assert_that(self, ok: bool, what: str, ids: tuple[str, ...] | list[str] | str = (),
                    expected: str | None = None, observed: str | None = None) -> bool:
        """Record a check of the target's result that the documents state directly (a
        relation between output fields, a value from outside the model); False ends the
        case. ``expected``/``observed``: for the report (else the requirement's sentence and
        ``what``)."""
        ids = (ids,) if isinstance(ids, str) else tuple(ids)
        if not ids and not ok:  # the requirements its text cites, else the case's
            ids = tuple(dict.fromkeys(ID_IN_TEXT.findall(what)))
        self.checks.append(v.Check(ids or self.record.ids, bool(ok), what, expected, observed,
                                   None if ok else self._where()))
        if not ok:
            raise CaseFailed(what)
        return True

    def check(self, expected: Outcome | c.Result | int, observed: c.Result,
              ids: tuple[str, ...] | list[str] | str = (), call: c.Call | None = None,
              what: str = "", dead_context: bool = False, frames: dict | None = None
              ) -> bool:
        """Record one check: ``observed`` against an Outcome (its rule and tolerance), a
        Result (its status) or a bare status. A failure raises CaseFailed. With
        ``dead_context`` (a handle the association does not hold) an RPC fault conforms
        wherever the outcome is a failure."""
        ids = (ids,) if isinstance(ids, str) else tuple(ids)
        if isinstance(expected, Outcome):
            outcome = expected
        elif isinstance(expected, c.Result):
            outcome = Outcome(expected)
        else:
            outcome = Outcome(type(observed)(status=expected))
        self.last_outcome = outcome
        problems = []
        refused = dead_context and observed.raised and observed.status != 0 \
            and outcome.status != 0
        if not outcome.conforms(observed) and not refused:
            want = ("any failure" if outcome.any_failure else status_text(outcome.result))
            rule = outcome.rule
            if self._chose_another(call, observed, None):
                # a message the target returned before to another receive, where the model
                # finds none Available: the seek did not skip a position that is not
                rule = self.SELECTION
            problems.append(f"status {status_text(observed)}, the documents ask for {want}"
                            + (f" ({rule})" if rule else ""))
        elif outcome.status == 0 and not observed.raised and hasattr(observed,
                                                                     "ppPacketSections"):
            problems.extend(self._compare_message(outcome.result, observed, call))
        gone = self._returned_acked(call, observed) if problems else None
        if gone is not None:
            problems.insert(0, gone)
        name = type(call).__name__ if call is not None else (what or type(observed).__name__)
        message = f"{name}: " + "; ".join(problems) if problems else f"{name}: conforms"
        if self.keep_calls or problems:
            self.record.calls.append(self._record(
                frames, observed, call=call_text(call) if call is not None else (what or name),
                observed=result_text(observed), expected=status_text(outcome.result)
                + (" or any failure" if outcome.any_failure else "")
                + (" or an RPC fault (a handle the association does not hold)"
                   if dead_context and outcome.status != 0 else ""), rule=outcome.rule))
        # a failure is the requirement's the check was given, else those its problems cite
        # (the model's rule that decided the answer, a field's own rule), else the case's;
        # a message acknowledged earlier coming back is the acknowledgement's failure
        cited = tuple(dict.fromkeys(ID_IN_TEXT.findall(gone or " ".join(problems))))
        check = v.Check(ids or (cited if problems else ()) or self.record.ids, not problems,
                        message,
                        expected=(self._expected_text(outcome, observed, refused)
                                  if problems else None),
                        observed=result_text(observed) if problems else None,
                        step=self._where() if problems else None)
        self.checks.append(check)
        if problems:
            raise CaseFailed(message)
        return True

    def _record(self, frames: dict | None, result: Any = None, **fields: Any) -> v.CallRecord:
        """A call record; ``frames`` when the call's frames were taken on another thread (a
        started call's), else the record claims the frames of this thread's last call. The
        handles the target chose read as their aliases (Aliases)."""
        aliases = self.suite.aliases
        if result is not None:
            aliases.learn(result)
        for key in ("call", "observed", "expected"):
            if key in fields:
                fields[key] = aliases.apply(fields[key])
        return v.CallRecord(frames=frames, **fields) if frames is not None \
            else v.CallRecord(**fields)

    #: the rule that picks the message a receive or peek without cursor or LookupId returns:
    #: Dequeue Message Begin and Peek Message seek the first Available position (MS-MQDMPR
    #: 3.1.7.3.2, its loop skipping the positions that are not Available)
    SELECTION = "MS-MQDMPR/3.1.7.3.2/R10"

    def _chose_another(self, call: c.Call | None, observed: c.Result,
                       expected: c.Result | None) -> bool:
        """Whether a receive or peek by position alone (no cursor, no LookupId) returned a
        message the target returned before under another request, other than the model's
        (``expected``: the model's result; None: the model returns no message)."""
        if getattr(call, "ulAction", None) not in (c.MQ_ACTION_RECEIVE,
                                                   c.MQ_ACTION_PEEK_CURRENT) \
                or getattr(call, "hCursor", 0) or getattr(observed, "status", 1) != 0:
            return False
        sequence = getattr(observed, "pSequenceId", 0)
        known = self._lookups.get(sequence) if sequence else None
        return known is not None and (expected is None or known != expected.pSequenceId)

    def _compare_message(self, expected: c.Result, observed: c.Result,
                         call: c.Call | None = None) -> list[str]:
        """The message a receive returned against the model's. A message the target returned
        before under another request (its pSequenceId known) is another message chosen: for
        a receive or peek by position alone, that breaks the seek for the first Available
        position; otherwise pSequenceId names another message than the model's (R17)."""
        out = []
        known = self._lookups.get(observed.pSequenceId)
        other = bool(observed.pSequenceId) and known is not None \
            and known != expected.pSequenceId
        chosen = self.SELECTION if self._chose_another(call, observed, expected) else None
        if observed.pdwNumberOfSections != expected.pdwNumberOfSections:
            out.append(f"{observed.pdwNumberOfSections} section(s), the model returns "
                       f"{expected.pdwNumberOfSections} (MS-MQRR/3.1.4.7/R18)")
        kinds = [s.SectionBufferType for s in observed.ppPacketSections]
        want = [s.SectionBufferType for s in expected.ppPacketSections]
        if kinds != want:
            out.append(f"section types {kinds}, the model returns {want} (MS-MQRR/3.1.4.7/R29)")
        first = [s.pSectionBuffer for s in observed.ppPacketSections[:1]]
        if first == [s.pSectionBuffer for s in expected.ppPacketSections[:1]]:
            got = body = None  # the same packet octets: the same body, no need to decode
        else:
            got, body = message_body(observed), message_body(expected)
        if got != body:
            out.append(f"message body {got!r}, the model returns {body!r} "
                       f"({chosen or 'MS-MQRR/3.1.4.7/R31'})")
        if other:
            out.append(f"pSequenceId 0x{observed.pSequenceId:X} names another message than the "
                       f"model returns ({chosen or 'MS-MQRR/3.1.4.7/R17'})")
        return out

    # ---------------------------------------------------------------- shortcuts
    def open(self, fmt: QueueFormat, access: int = c.RECEIVE_ACCESS,
             ids: tuple[str, ...] = (), target: Any = None,
             share: int = c.MQ_DENY_NONE) -> bytes:
        out = self.call(c.R_OpenQueue(pQueueFormat=fmt, dwAccess=access, dwShareMode=share,
                                      pClientId=uuid.UUID(int=0x4D51), fNonRoutingServer=1),
                        ids=ids, target=target)
        if out.raised or not out.pphContext:
            raise CaseFailed(f"R_OpenQueue gave no context handle ({status_text(out)})")
        return out.pphContext

    def receive(self, ctx: bytes, action: int = c.MQ_ACTION_RECEIVE, request: int = 1,
                ids: tuple[str, ...] = (), target: Any = None, **fields: Any) -> c.Result:
        fields.setdefault("dwMaxBodySize", 1 << 16)
        fields.setdefault("dwMaxCompoundMessageSize", 1 << 16)
        return self.call(c.R_StartReceive(phContext=ctx, ulAction=action, dwRequestId=request,
                                          **fields), ids=ids, target=target)

    def finish(self, error: str | None = None, inconclusive: str | None = None,
               not_applicable: str | None = None, not_run: str | None = None,
               internal: str | None = None) -> v.CaseResult:
        """The case's verdict: ``not_run`` (the run stopped in it: the target is gone) and
        ``internal`` (mqconform failed in it) are not the target's verdicts."""
        if not_run is None:
            self._cleanup()
        self.record.duration = time.monotonic() - self._started
        if not_run is not None or internal is not None:
            self.record.verdict = v.NOT_RUN if not_run is not None else v.ERROR
            self.record.messages.append(not_run or internal)
            return self.record
        if inconclusive is not None or not_applicable is not None:
            self.record.verdict = v.INCONCLUSIVE if inconclusive is not None \
                else v.NOT_APPLICABLE
            self.record.messages.append(inconclusive or not_applicable)
            return self.record
        return v.decide(self.record, self.checks, self.suite.levels,
                        self.suite.spec.expectations, self.suite.strict, error,
                        self.suite.texts)

    def _cleanup(self) -> None:
        """End the calls still pending, close the handles the case left open in the suite's own
        association group, and close the connections the case opened."""
        for pending in list(self._pending):
            pending.finished = True
            self._abandon(pending)
            if pending.own_connection:
                self._close(pending.target)
        self._pending.clear()
        self._anchor = None
        self._close_handles()
        for conn in self._connections:
            self._close(conn)
        self._connections.clear()

__all__ = ["Case", "CaseFailed", "Inconclusive", "NotApplicable", "PendingCall", "Suite"]
