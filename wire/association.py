"""One DCE/RPC connection-oriented association, sans-IO (C706 12.6; MS-RPCE 3.3.1.5): what the
PDUs exchanged on one connection establish, with no socket, thread or clock of its own.

- presentation contexts: a bind or alter_context proposes them, its bind_ack or
  alter_context_resp accepts some (C706 12.6.4.3-4); the contexts in force are derived from the
  two, nowhere else;
- the association group the server named in its bind_ack (MS-RPCE 3.3.1.5.7);
- requests and responses reassembled from their fragments per call_id (C706 12.6 "Fragmentation";
  PFC_FIRST_FRAG / PFC_LAST_FRAG), the auth verifier and its padding cut off (MS-RPCE 2.2.2.11);
- each answer (response or fault) paired with the request its call_id names;
- verification trailers (MS-RPCE 2.2.2.13) found at the end of a request's stub and checked
  against the call's context and header.

Two roles feed the same class and differ only where a server must answer and an observer must
carry on (``SERVER`` and ``OBSERVER`` below):

    assoc = Association(OBSERVER)                    # captures/decode.py, per TCP connection
    for event in assoc.feed(pdu, at=(frame, ts)):     # one whole PDU, either direction
        ...          # Bind, BindAnswered, BindRefused, Call (request + answer), Error
    for event in assoc.close():                       # the connection ended
        ...

    assoc = Association(SERVER, max_partial_calls=..., max_partial_octets=...)   # server/rpc.py
    assoc.propose(call_id, bind.contexts)             # a bind or alter_context received
    assoc.acknowledge(call_id, results, group, bind=True)   # the ack the server sends
    ready = assoc.request_fragment(call_id, flags, context_id, opnum, stub, drep)
    # None (more to come), Request (dispatch it) or Refused (answer with a fault)
    assoc.answered(call_id)                           # its response or fault was sent

Where the two roles differ (each rule's place is marked ``role``):

- a first fragment for a call being reassembled, or for a call awaiting its answer: the server
  refuses it (nca_s_proto_error) and ignores the rest of that call; an observer reports it and
  follows the new call (a client that gave up on the old one);
- a fragment without its first, or whose context or opnum differ from the first's: the server
  refuses it; an observer reports the first case and keeps the call's first values in the other;
- the server bounds the calls and octets under reassembly; an observer's bound is its reader's;
- an observer reassembles responses too and pairs them with their requests.
"""

from __future__ import annotations

import struct
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mqconform.wire import dcerpc as d

SERVER = "server"
OBSERVER = "observer"

_HDR = {True: struct.Struct("<BBBB4sHHI"), False: struct.Struct(">BBBB4sHHI")}
_REQ = {True: struct.Struct("<IHH"), False: struct.Struct(">IHH")}
_RESP = {True: struct.Struct("<IH"), False: struct.Struct(">IH")}
_U32 = {True: struct.Struct("<I"), False: struct.Struct(">I")}
_U16 = {True: struct.Struct("<H"), False: struct.Struct(">H")}
_REQUEST, _RESPONSE, _FAULT = int(d.PType.REQUEST), int(d.PType.RESPONSE), int(d.PType.FAULT)
_BINDS = {int(d.PType.BIND): False, int(d.PType.ALTER_CONTEXT): True}
_ACKS = {int(d.PType.BIND_ACK): True, int(d.PType.ALTER_CONTEXT_RESP): False}
_NAK = int(d.PType.BIND_NAK)
_ORPHANED = int(d.PType.ORPHANED)


# --- presentation contexts ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Binding:
    """A presentation context in force: the interface and the transfer syntax it uses."""

    interface: uuid.UUID
    version: tuple[int, int]
    transfer_syntax: d.SyntaxId

    @property
    def ndr64(self) -> bool:
        return self.transfer_syntax == d.NDR64


def _reject(reason: int) -> d.ContextResultItem:
    return d.ContextResultItem(d.ContResult.PROVIDER_REJECTION, reason)


def bind_time_feature_offers(proposed: Sequence[d.ContextElement]) -> int:
    """How many presentation context elements of a bind offer bind time features (MS-RPCE
    3.3.1.5.3: the first transfer syntax a BindTimeFeatureNegotiationBitmask UUID). One is
    the protocol; Windows answers a bind with two of them with bind_nak (reason not specified)
    and closes the connection (Samba's raw_protocol test_no_auth_bind_time_twice records
    it), and so does the reference server."""
    return sum(1 for el in proposed
               if el.transfer_syntaxes and d.is_bind_time_feature_negotiation(
                   el.transfer_syntaxes[0]))


def negotiate_contexts(
    proposed: Sequence[d.ContextElement],
    served: Mapping[uuid.UUID, tuple[int, int, frozenset[str]]],
    prefer_ndr64: bool = True,
    existing: Mapping[int, Binding] | None = None,
    supported_features: int = d.KEEP_CONNECTION_ON_ORPHAN,
) -> tuple[tuple[d.ContextResultItem, ...], dict[int, Binding], int | None]:
    """A server's answer to one bind or alter_context: (results in proposal order, newly
    accepted contexts, the granted bind time feature bitmask or None if the client offered
    none).

    * C706 12.6.4.4: an unknown interface, or one whose major version differs or whose minor
      version is newer than ours, is rejected with abstract_syntax_not_supported; one for which
      no proposed transfer syntax is one we serve, with proposed_transfer_syntaxes_not_supported.
    * MS-RPCE 3.3.1.5.6: of the elements proposing the same interface the server accepts at most
      one transfer syntax, its preferred one if proposed (NDR64 where the interface has it and
      ``prefer_ndr64``), else the first one proposed that it supports; the other elements are
      rejected with proposed_transfer_syntaxes_not_supported.
    * MS-RPCE 3.3.1.5.3: an element whose (first) transfer syntax starts 6CB71C2C-9812-4540
      offers bind time features; it is answered negotiate_ack with, in the reason field, the
      offered features of ``supported_features``. Further transfer syntaxes of that element
      are ignored, as Windows does (Samba's raw_protocol tests record it, e.g.
      test_no_auth_bind_time_none_ignore_additional). A bind with two such elements is
      refused before this is asked (``bind_time_feature_offers``).
    """
    existing = existing or {}
    results: list[d.ContextResultItem | None] = [None] * len(proposed)
    accepted: dict[int, Binding] = {}
    features: int | None = None
    seen: set[int] = set()
    candidates: dict[uuid.UUID, list[tuple[int, list[str]]]] = {}
    for i, el in enumerate(proposed):
        ts = el.transfer_syntaxes
        if ts and d.is_bind_time_feature_negotiation(ts[0]):
            offered = d.feature_bitmask(ts[0]) & supported_features
            if features is None:
                features = offered
            results[i] = d.ContextResultItem(d.ContResult.NEGOTIATE_ACK, offered)
            continue
        if el.context_id in seen:  # one p_cont_id twice in one PDU
            results[i] = _reject(d.ProviderReason.REASON_NOT_SPECIFIED)
            continue
        seen.add(el.context_id)
        entry = served.get(el.abstract_syntax.uuid)
        if (entry is None or el.abstract_syntax.major != entry[0]
                or el.abstract_syntax.minor > entry[1]):
            results[i] = _reject(d.ProviderReason.ABSTRACT_SYNTAX_NOT_SUPPORTED)
            continue
        names = [name for t in ts for name, s in d.TRANSFER_SYNTAXES.items()
                 if t == s and name in entry[2]]
        if not names:
            results[i] = _reject(d.ProviderReason.PROPOSED_TRANSFER_SYNTAXES_NOT_SUPPORTED)
            continue
        candidates.setdefault(el.abstract_syntax.uuid, []).append((i, names))
    for iface, cands in candidates.items():
        major, minor, syntaxes = served[iface]
        preferred = "ndr64" if prefer_ndr64 and "ndr64" in syntaxes else "ndr"
        chosen, names = next((c for c in cands if preferred in c[1]), cands[0])
        for i, _ in cands:
            if i != chosen:
                results[i] = _reject(d.ProviderReason.PROPOSED_TRANSFER_SYNTAXES_NOT_SUPPORTED)
        syntax = d.TRANSFER_SYNTAXES[preferred if preferred in names else names[0]]
        element = proposed[chosen]
        # the context as the client bound it: its abstract syntax's version (what an ack puts
        # in force, Association.acknowledge, and what a verification trailer names)
        binding = Binding(iface, (element.abstract_syntax.major, element.abstract_syntax.minor),
                          syntax)
        cid = element.context_id
        if cid in existing and existing[cid] != binding:  # a live context cannot change
            results[chosen] = _reject(d.ProviderReason.REASON_NOT_SPECIFIED)
            continue
        results[chosen] = d.ContextResultItem(d.ContResult.ACCEPTANCE, 0, syntax)
        accepted[cid] = binding
    return tuple(r for r in results if r is not None), accepted, features


# --- events -------------------------------------------------------------------------------------


@dataclass(slots=True)
class Request:
    """A request, whole: its stub is the fragments' stubs joined, without the auth verifier and
    (for an observer) without a verification trailer. ``at``/``until``: the caller's tags of
    its first and last fragment (an observer's frame numbers and times)."""

    call_id: int
    context_id: int
    opnum: int
    stub: bytes
    drep: bytes
    at: Any = None
    until: Any = None
    #: zero octets of stub padding that may stand before a verification trailer cut off
    padding: int = 0
    #: (observer) the stub was sent at packet privacy: it is encrypted, and kept as captured
    sealed: bool = False

    @property
    def little_endian(self) -> bool:
        return bool(self.drep[0] & 0x10)

    @property
    def ndr_native(self) -> bool:
        """Little-endian integers, ASCII characters, IEEE floats (C706 14.1)."""
        return self.drep[0] == 0x10 and self.drep[1] == 0


@dataclass(slots=True)
class Answer:
    """A response, whole, or a fault (``fault``: its status; ``stub`` empty)."""

    call_id: int
    context_id: int
    stub: bytes
    fault: int | None = None
    at: Any = None
    until: Any = None
    #: (observer) the stub was sent at packet privacy: it is encrypted, and kept as captured
    sealed: bool = False


@dataclass(slots=True)
class Call:
    """A request and its answer, paired by call_id; either is None when the connection ended
    (or the call_id was used again) without the other."""

    call_id: int
    request: Request | None
    answer: Answer | None
    binding: Binding | None


@dataclass(slots=True)
class Error:
    """Something an observer saw that C706 does not allow, or could not read; ``kind``: pdu,
    fragment or trailer."""

    kind: str
    message: str
    at: Any = None


@dataclass(slots=True)
class Bind:
    """A bind (``alter`` False) or alter_context proposing ``contexts``."""

    call_id: int
    alter: bool
    contexts: tuple[d.ContextElement, ...]
    at: Any = None


@dataclass(slots=True)
class BindAnswered:
    """The bind_ack (``alter`` False) or alter_context_resp: the contexts it put in force (all
    of them, when its bind was seen), the association group it names."""

    call_id: int
    alter: bool
    accepted: dict[int, Binding]
    assoc_group: int
    at: Any = None


@dataclass(slots=True)
class BindRefused:
    """A bind_nak and its reason (C706 12.6.4.5; MS-RPCE 2.2.2.5)."""

    call_id: int
    reason: int
    at: Any = None


@dataclass(slots=True)
class Refused:
    """The server must answer this call with a fault of ``status``."""

    call_id: int
    context_id: int
    status: int
    reason: str


class Abort(Exception):
    """The association cannot go on: the transport connection must close."""


class TrailerRefused(Exception):
    """A verification trailer that refuses its call: the fault ``status`` and why."""

    def __init__(self, status: int, why: str):
        super().__init__(why)
        self.status = status
        self.why = why


_NONE: tuple = ()


def check_verification_trailer(stub: bytes, binding: Binding, call_id: int, context_id: int,
                               opnum: int, drep: bytes, header_sign: bool
                               ) -> tuple[bytes, int]:
    """The stub without its verification trailer (MS-RPCE 2.2.2.13), and how many zero octets
    of stub padding may stand before it (a client MAY pad the stub, MS-RPCE 2.2.2.13). Each
    command is checked where it applies: rpc_sec_vt_pcontext against the call's presentation
    context, rpc_sec_vt_header2 against its header, the bitmask's
    CLIENT_SUPPORT_HEADER_SIGNING against the bind (``header_sign``: the bind carried
    PFC_SUPPORT_HEADER_SIGN); an unknown command the client marks SEC_VT_MUST_PROCESS_COMMAND
    cannot be processed. A failed check raises TrailerRefused with rpc_s_access_denied (the
    trailer exists to protect what the security provider does not; choice 1: the status Windows
    answers), a malformed trailer with nca_s_proto_error."""
    try:
        trailer = d.find_verification_trailer(stub)
    except d.PduError as exc:
        raise TrailerRefused(d.NCA_S_PROTO_ERROR, str(exc)) from None
    if trailer is None:
        return stub, 0
    for command in trailer.commands:
        if command.command == d.SEC_VT_COMMAND_PCONTEXT:
            interface, syntax = command.pcontext()
            if (interface.uuid, (interface.major, interface.minor)) != (
                    binding.interface, binding.version) or syntax != binding.transfer_syntax:
                raise TrailerRefused(d.RPC_S_ACCESS_DENIED, "the verification trailer names "
                                     f"{interface} in {syntax}, not the call's context")
        elif command.command == d.SEC_VT_COMMAND_HEADER2:
            if command.header2() != (d.PType.REQUEST, drep, call_id, context_id, opnum):
                raise TrailerRefused(d.RPC_S_ACCESS_DENIED, "the verification trailer's "
                                     "header does not match the request's")
        elif command.command == d.SEC_VT_COMMAND_BITMASK_1:
            if command.bitmask() & d.CLIENT_SUPPORT_HEADER_SIGNING and not header_sign:
                raise TrailerRefused(d.RPC_S_ACCESS_DENIED, "header signing announced in "
                                     "the trailer, not in the bind")
        elif command.must_process:
            raise TrailerRefused(d.RPC_S_ACCESS_DENIED, "a verification trailer command "
                                 f"{command.command:#x} the server cannot process")
    return _cut(stub, trailer)


def _cut(stub: bytes, trailer: d.VerificationTrailer) -> tuple[bytes, int]:
    """The stub before its verification trailer, and how many of its last zero octets may be
    stub padding (at most 3: the trailer is 4-octet aligned, MS-RPCE 2.2.2.13)."""
    body = stub[:trailer.offset]
    return body, min(3, len(body) - len(body.rstrip(b"\0")))


def strip_verification_trailer(stub: bytes) -> tuple[bytes, int, str | None]:
    """(an observer) A request stub without its verification trailer (MS-RPCE 2.2.2.13):
    (the method's stub, how many zero octets of stub padding may end it, None), (stub, -1,
    None) when it has none, or (stub, -1, why) when a trailer is there but malformed."""
    if len(stub) < 12 or d.VT_SIGNATURE[0] not in stub:  # no room, or surely none
        return stub, -1, None
    try:
        trailer = d.find_verification_trailer(stub)
    except d.PduError as exc:
        return stub, -1, str(exc)
    if trailer is None:
        return stub, -1, None
    return (*_cut(stub, trailer), None)


# --- the association ----------------------------------------------------------------------------


class _Partial:
    __slots__ = ("call_id", "context_id", "opnum", "drep", "at", "chunks", "size", "sealed")

    def __init__(self, call_id: int, context_id: int, opnum: int | None, drep: bytes, at: Any,
                 stub: bytes, sealed: bool = False):
        self.call_id = call_id
        self.context_id = context_id
        self.opnum = opnum
        self.drep = drep
        self.at = at
        self.chunks = [stub]
        self.size = len(stub)
        self.sealed = sealed


class Association:
    """The state of one association (see the module's docstring)."""

    def __init__(self, role: str = OBSERVER, max_partial_calls: int | None = None,
                 max_partial_octets: int | None = None, max_discarded: int | None = None):
        if role not in (SERVER, OBSERVER):
            raise ValueError(f"role must be {SERVER!r} or {OBSERVER!r}, not {role!r}")
        self.role = role
        self._server = role == SERVER
        self.max_partial_calls = max_partial_calls
        self.max_partial_octets = max_partial_octets
        self.max_discarded = max_discarded
        #: presentation contexts in force: p_cont_id -> Binding
        self.contexts: dict[int, Binding] = {}
        #: the association group the server named (None until a bind_ack says)
        self.assoc_group: int | None = None
        #: a bind was acknowledged (the association exists, C706 12.6.4.4)
        self.bound = False
        self._proposed: dict[int, tuple[d.ContextElement, ...]] = {}
        self._early_acks: dict[int, tuple] = {}  # call_id -> an ack seen before its bind
        #: (0 request | 1 response, call_id) -> the fragments so far
        self._partial: dict[tuple[int, int], _Partial] = {}
        self._partial_octets = 0
        self._discarding: set[int] = set()
        #: requests awaiting their answer (observer: to pair; server: to refuse a reused id)
        self.awaiting: dict[int, Request | None] = {}
        self._answers: dict[int, Answer] = {}  # observer: answers awaiting their request

    @property
    def partial_octets(self) -> int:
        """The stub octets of the requests under reassembly."""
        return self._partial_octets

    # --- binds ---

    def propose(self, call_id: int, contexts: Sequence[d.ContextElement]) -> None:
        """A bind or alter_context proposing ``contexts`` under ``call_id``."""
        self._proposed[call_id] = tuple(contexts)
        early = self._early_acks.pop(call_id, None)
        if early is not None:  # its ack was captured first (frames out of order): its group
            self._put_in_force(call_id, early)  # was taken when it came

    def bind_refusal(self, alter: bool) -> Refused | d.BindNak | None:
        """(server) Why a bind or alter_context cannot be taken in this association's state,
        or None: a second bind is a protocol error (MS-RPCE 2.2.2.5), answered with a
        bind_nak; an alter_context before any bind has no association to alter, and has no
        nak of its own: a fault (C706 12.6.4.1)."""
        if not alter and self.bound:
            return d.BindNak(d.RejectReason.PROTOCOL_VERSION_NOT_SUPPORTED)
        if alter and not self.bound:
            return Refused(0, 0, d.NCA_S_PROTO_ERROR, "alter_context before a bind")
        return None

    def acknowledge(self, call_id: int, results: Sequence[d.ContextResultItem],
                    assoc_group: int, bind: bool) -> dict[int, Binding]:
        """The bind_ack (``bind``) or alter_context_resp answering the proposal of ``call_id``:
        the contexts it accepts, now in force (C706 12.6.4.4: the results in proposal order)."""
        if bind or assoc_group:
            self.assoc_group = assoc_group
        if bind:
            self.bound = True
        if call_id not in self._proposed:
            self._early_acks[call_id] = tuple(results)
            if len(self._early_acks) > 64:  # acks nobody proposed: remember a few only
                self._early_acks.pop(next(iter(self._early_acks)))
            return {}
        return self._put_in_force(call_id, results)

    def _put_in_force(self, call_id: int, results: Sequence[d.ContextResultItem]
                      ) -> dict[int, Binding]:
        proposed = self._proposed.pop(call_id)
        accepted = {}
        for element, result in zip(proposed, results, strict=False):
            if result.result == d.ContResult.ACCEPTANCE:
                accepted[element.context_id] = Binding(
                    element.abstract_syntax.uuid,
                    (element.abstract_syntax.major, element.abstract_syntax.minor),
                    result.transfer_syntax)
        self.contexts.update(accepted)
        return accepted

    def refuse(self, call_id: int) -> None:
        """A bind_nak answering the bind of ``call_id``."""
        self._proposed.pop(call_id, None)

    # --- requests (both roles) ---

    def request_fragment(self, call_id: int, flags: int, context_id: int, opnum: int,
                         stub: bytes, drep: bytes = d.DREP_LE, at: Any = None,
                         until: Any = None) -> Request | Refused | Error | None:
        """One request fragment's stub (after the auth verifier): the whole Request once its
        last fragment came, None while more are to come (or a discarded call's fragment), or
        what is wrong: Refused (server) or Error (observer)."""
        if not self._server:
            return self._observe_fragment(0, call_id, flags, context_id, opnum, stub, drep,
                                          at, until)
        first, last = flags & d.PFC_FIRST_FRAG, flags & d.PFC_LAST_FRAG
        key = (0, call_id)
        if first:
            self._discarding.discard(call_id)
            restarted = self._drop(key)
            if restarted or call_id in self.awaiting:
                # a first fragment for a call already under way
                return self._refuse(call_id, last, context_id, d.NCA_S_PROTO_ERROR,
                                    "a first fragment for a call already under way")
            if last:
                return self._ready(Request(call_id, context_id, opnum, stub, drep, at, until))
            if self.max_partial_calls is not None and \
                    sum(1 for k in self._partial if not k[0]) >= self.max_partial_calls:
                return self._refuse(call_id, last, context_id, d.NCA_S_SERVER_TOO_BUSY,
                                    "too many calls under reassembly")
            if self._over(len(stub)):
                return self._refuse(call_id, last, context_id, d.NCA_S_FAULT_REMOTE_NO_MEMORY,
                                    "the request is too large")
            self._partial[key] = _Partial(call_id, context_id, opnum, drep, at, stub)
            self._partial_octets += len(stub)
            return None
        if call_id in self._discarding:  # the rest of a call already answered with a fault
            if last:
                self._discarding.discard(call_id)
            return None
        part = self._partial.get(key)
        if part is None:
            return self._refuse(call_id, last, context_id, d.NCA_S_PROTO_ERROR,
                                "a fragment without its first")
        if context_id != part.context_id or opnum != part.opnum:
            return self._refuse(call_id, last, part.context_id, d.NCA_S_PROTO_ERROR,
                                "a fragment whose context or opnum differ from its first's")
        if self._over(len(stub)):
            return self._refuse(call_id, last, part.context_id,
                                d.NCA_S_FAULT_REMOTE_NO_MEMORY, "the request is too large")
        part.chunks.append(stub)
        part.size += len(stub)
        self._partial_octets += len(stub)
        if not last:
            return None
        self._drop(key)
        return self._ready(Request(call_id, part.context_id, part.opnum, b"".join(part.chunks),
                                   part.drep, part.at, until))

    def _over(self, more: int) -> bool:
        return self.max_partial_octets is not None and \
            self._partial_octets + more > self.max_partial_octets

    def _drop(self, key: tuple[int, int]) -> bool:
        part = self._partial.pop(key, None)
        if part is None:
            return False
        self._partial_octets -= part.size
        return True

    def _ready(self, request: Request) -> Request:
        self.awaiting[request.call_id] = None
        return request

    def _refuse(self, call_id: int, last: int, context_id: int, status: int,
                reason: str) -> Refused:
        """(server) Refuse a call: forget its fragments, ignore the ones still to come."""
        self.abandon(call_id, bool(last))
        return Refused(call_id, context_id, status, reason)

    def abandon(self, call_id: int, last: bool) -> None:
        """(server) Forget a call's partial request; ignore its remaining fragments unless
        this was its last. Raises Abort when the client abandons more calls than allowed."""
        self._drop((0, call_id))
        if not last:
            self._discarding.add(call_id)
            if self.max_discarded is not None and len(self._discarding) > self.max_discarded:
                raise Abort("too many abandoned fragmented calls")

    def answered(self, call_id: int) -> None:
        """(server) The call's response or fault was sent: its call_id is free again."""
        self.awaiting.pop(call_id, None)

    def orphaned(self, call_id: int) -> None:
        """An orphaned PDU (C706 12.6.4.8): the client abandons the call, no answer follows."""
        self._drop((0, call_id))
        self._discarding.discard(call_id)
        if self._server:
            self.awaiting.pop(call_id, None)

    # --- an observer's feed ---

    def feed(self, pdu: bytes, at: Any = None, until: Any = None
             ) -> Sequence[Call | Error | Bind | BindAnswered | BindRefused]:
        """(observer) One whole PDU of either direction (framed by frag_length): the events it
        makes, in order: binds and their answers, the calls it completes, the errors it shows.
        ``at``/``until``: tags of its first and last octet (frame numbers and times), handed
        back on the events."""
        little = bool(pdu[4] & 0x10)
        _v, _minor, ptype, flags, drep, frag, auth, call_id = _HDR[little].unpack_from(pdu)
        if frag != len(pdu):
            return (Error("pdu", f"call_id {call_id}: {len(pdu)} octets, not the frag_length "
                                 f"{frag}", at),)
        body_end = frag
        sealed = False
        if auth:
            if frag < d.HEADER_SIZE + d.SEC_TRAILER_SIZE + auth:
                return (Error("pdu", f"call_id {call_id}: auth_length {auth} does not fit", at),)
            pad = pdu[frag - auth - d.SEC_TRAILER_SIZE + 2]
            body_end = frag - auth - d.SEC_TRAILER_SIZE - pad
            # MS-RPCE 2.2.2.11: sec_trailer.auth_level follows auth_type
            sealed = pdu[frag - auth - d.SEC_TRAILER_SIZE + 1] == d.AUTHN_LEVEL_PKT_PRIVACY
        if ptype == _REQUEST:
            if len(pdu) < d.REQUEST_SIZE:
                return (Error("pdu", f"request call_id {call_id} is cut short", at),)
            _hint, ctx, opnum = _REQ[little].unpack_from(pdu, 16)
            start = d.REQUEST_SIZE + (16 if flags & d.PFC_OBJECT_UUID else 0)
            out = self._observe_fragment(0, call_id, flags, ctx, opnum,
                                         pdu[start:max(start, body_end)], drep, at, until,
                                         sealed)
        elif ptype == _RESPONSE or ptype == _FAULT:
            if len(pdu) < d.RESPONSE_SIZE:
                name = "response" if ptype == _RESPONSE else "fault"
                return (Error("pdu", f"{name} call_id {call_id} is cut short", at),)
            _hint, ctx = _RESP[little].unpack_from(pdu, 16)
            if ptype == _FAULT:
                status = _U32[little].unpack_from(pdu, 24)[0] if len(pdu) >= 28 else None
                return self._answer(Answer(call_id, ctx, b"", status, at, until))
            out = self._observe_fragment(1, call_id, flags, ctx, None,
                                         pdu[d.RESPONSE_SIZE:max(d.RESPONSE_SIZE, body_end)],
                                         drep, at, until, sealed)
        elif ptype in _BINDS:
            try:
                body = d.decode_pdu(pdu).body
            except d.PduError as exc:
                return (Error("pdu", f"bind call_id {call_id}: {exc}", at),)
            self.propose(call_id, body.contexts)
            return (Bind(call_id, _BINDS[ptype], tuple(body.contexts), at),)
        elif ptype in _ACKS:
            try:
                body = d.decode_pdu(pdu).body
            except d.PduError as exc:
                return (Error("pdu", f"bind_ack call_id {call_id}: {exc}", at),)
            accepted = self.acknowledge(call_id, body.results, body.assoc_group_id,
                                        _ACKS[ptype])
            return (BindAnswered(call_id, not _ACKS[ptype], accepted, body.assoc_group_id, at),)
        elif ptype == _NAK:
            self.refuse(call_id)
            reason = _U16[little].unpack_from(pdu, d.HEADER_SIZE)[0] if len(pdu) >= 18 else 0
            return (BindRefused(call_id, reason, at),)
        else:
            return _NONE
        if out is None:
            return _NONE
        if type(out) is Request:
            return self._request(out)
        if type(out) is Answer:
            return self._answer(out)
        return (out,) if type(out) is Error else out

    def _observe_fragment(self, group: int, call_id: int, flags: int, context_id: int,
                          opnum: int | None, stub: bytes, drep: bytes, at: Any, until: Any,
                          sealed: bool = False) -> Request | Answer | Error | list | None:
        key = (group, call_id)
        part = self._partial.get(key)
        errors = None
        if flags & d.PFC_FIRST_FRAG:
            if part is not None:  # role: an observer follows the new call
                errors = [Error("fragment", f"call_id {call_id}: a new first fragment before "
                                            f"the last one", part.at)]
            if flags & d.PFC_LAST_FRAG:  # whole in one PDU: the common case
                if part is not None:
                    del self._partial[key]
                done = Request(call_id, context_id, opnum, stub, drep, at, until, 0, sealed) \
                    if not group else Answer(call_id, context_id, stub, None, at, until, sealed)
                if errors is None:
                    return done
                errors.extend(self._request(done) if not group else self._answer(done))
                return errors
            self._partial[key] = _Partial(call_id, context_id, opnum, drep, at, stub, sealed)
            return errors
        if part is None:
            return Error("fragment", f"call_id {call_id}: a fragment without its first", at)
        part.chunks.append(stub)
        part.sealed = part.sealed or sealed
        if not flags & d.PFC_LAST_FRAG:
            return None
        del self._partial[key]
        whole = b"".join(part.chunks)
        if not group:
            return Request(call_id, part.context_id, part.opnum, whole, part.drep, part.at,
                           until, 0, part.sealed)
        return Answer(call_id, part.context_id, whole, None, part.at, until, part.sealed)

    def _request(self, request: Request) -> Sequence[Call | Error]:
        out: list[Call | Error] = []
        # MS-MQRR/2.1/R1: RPC over TCP as MS-RPCE has it, verification trailers included (a
        # sealed stub's trailer is encrypted with it: nothing to read)
        stub, padding, problem = (request.stub, -1, None) if request.sealed \
            else strip_verification_trailer(request.stub)
        if problem is not None:
            out.append(Error("trailer", f"call_id {request.call_id}: {problem}", request.at))
        elif padding >= 0:
            request.stub, request.padding = stub, padding
        awaiting = self.awaiting
        if request.call_id in awaiting:  # role: the call_id used again before an answer
            out.append(self._call(request.call_id, awaiting.pop(request.call_id), None))
        answer = self._answers.pop(request.call_id, None)
        if answer is not None:  # its answer was captured first (frames out of order)
            out.append(self._call(request.call_id, request, answer))
        else:
            awaiting[request.call_id] = request
        return out

    def _answer(self, answer: Answer) -> Sequence[Call]:
        request = self.awaiting.pop(answer.call_id, None)
        if request is None:  # held until its request comes, or the connection ends
            out = _NONE
            if answer.call_id in self._answers:
                out = (self._call(answer.call_id, None, self._answers.pop(answer.call_id)),)
            self._answers[answer.call_id] = answer
            return out
        return (self._call(answer.call_id, request, answer),)

    def _call(self, call_id: int, request: Request | None, answer: Answer | None) -> Call:
        context_id = request.context_id if request is not None else answer.context_id
        return Call(call_id, request, answer, self.contexts.get(context_id))

    def close(self) -> list[Call | Error]:
        """(observer) The connection ended: the fragmented PDUs that never completed (errors),
        then the requests never answered and the answers whose request was never seen."""
        out: list[Call | Error] = [
            Error("fragment", f"call_id {call_id}: the last fragment never came", part.at)
            for (_group, call_id), part in self._partial.items()]
        out += [self._call(cid, req, None) for cid, req in self.awaiting.items()
                if req is not None]
        out += [self._call(cid, None, ans) for cid, ans in self._answers.items()]
        self._partial.clear()
        self._partial_octets = 0
        self.awaiting.clear()
        self._answers.clear()
        return out
