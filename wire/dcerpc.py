"""Connection-oriented DCE/RPC PDUs: the codec the reference server and the capture decoder share.

Sources (facts only: layouts and constants, cited where used):

* [C706] "DCE 1.1: Remote Procedure Call", chapter 12 "RPC PDU Encodings": 12.6.3 the common
  header and the presentation-context types, 12.6.4 the PDUs (12.6.4.1 alter_context, 12.6.4.2
  alter_context_resp, 12.6.4.3 bind, 12.6.4.4 bind_ack, 12.6.4.5 bind_nak, 12.6.4.6 co_cancel,
  12.6.4.7 fault, 12.6.4.8 orphaned, 12.6.4.9 request, 12.6.4.10 response, 12.6.4.11 shutdown);
  14.1 the data representation label (drep); appendix E the status codes; appendix L the
  protocol towers.
* [MS-RPCE] "Remote Procedure Call Protocol Extensions": 2.2.2.3 PFC_SUPPORT_HEADER_SIGN,
  2.2.2.5 the bind_nak reasons it adds, 2.2.2.8 the fault PDU, 2.2.2.10 rpc_auth_3, 2.2.2.11
  sec_trailer, 2.2.2.14 BindTimeFeatureNegotiationBitmask, 3.1.3.5.2 the status for an invalid
  octet stream, 3.1.3.5.3 tower interpretation, 3.3.1.5.3 bind time feature negotiation.

The layer knows bytes, not semantics: ``decode_pdu`` turns one whole PDU (exactly
``frag_length`` octets) into a ``Pdu`` whose ``body`` is one of the dataclasses below, and
``encode_pdu`` does the reverse. Every malformed input raises ``PduError(field, reason)``; no
other exception escapes ``decode_pdu``, and nothing it allocates exceeds the 65535 octets a
``frag_length`` can announce.

Integers in the header and the PDU bodies are in the byte order the PDU's own drep announces
(C706 12.6.3.1: the header is NDR-encoded in the sender's representation); we decode both
orders and always encode little-endian, as every implementation we talk to does. UUIDs are NDR
``uuid_t``s (three integers in that byte order, then eight octets).
"""

from __future__ import annotations

import ipaddress
import struct
import uuid
from dataclasses import dataclass, field
from enum import IntEnum

# --- constants ---------------------------------------------------------------------------------

#: C706 12.6.3.1: connection-oriented PDUs carry rpc_vers 5; minor 0 and 1 are the defined ones
#: (MS-RPCE 1.7 constrains implementations to 5.0).
RPC_VERS = 5
RPC_VERS_MINORS = frozenset({0, 1})

#: the common header (C706 12.6.3.1): rpc_vers, rpc_vers_minor, PTYPE, pfc_flags, drep[4],
#: frag_length, auth_length, call_id
HEADER_SIZE = 16
#: sec_trailer (MS-RPCE 2.2.2.11): auth_type, auth_level, auth_pad_length, auth_reserved,
#: auth_context_id; auth_length counts the auth_value after it, not these 8 octets
SEC_TRAILER_SIZE = 8
#: auth_level of packet privacy (MS-RPCE 2.2.1.1.8 RPC_C_AUTHN_LEVEL_PKT_PRIVACY): the stub
#: of a request or response at this level is encrypted (sealed, MS-RPCE 3.3.1.5.2.2); an
#: observer without the session key cannot read it
AUTHN_LEVEL_PKT_PRIVACY = 6
#: C706 12.6: the fragment size every implementation must be able to receive (MustRecvFragSize)
MUST_RECV_FRAG_SIZE = 1432
MAX_FRAG_LENGTH = 0xFFFF


class PType(IntEnum):
    """C706 12.6 table "RPC Protocol Data Units" (CO ones), plus rpc_auth_3 (MS-RPCE 2.2.2.10)."""

    REQUEST = 0
    RESPONSE = 2
    FAULT = 3
    BIND = 11
    BIND_ACK = 12
    BIND_NAK = 13
    ALTER_CONTEXT = 14
    ALTER_CONTEXT_RESP = 15
    AUTH3 = 16
    SHUTDOWN = 17
    CO_CANCEL = 18
    ORPHANED = 19


# pfc_flags (C706 12.6.3.1)
PFC_FIRST_FRAG = 0x01
PFC_LAST_FRAG = 0x02
PFC_PENDING_CANCEL = 0x04  # PFC_SUPPORT_HEADER_SIGN on bind/alter PDUs (MS-RPCE 2.2.2.3)
PFC_SUPPORT_HEADER_SIGN = 0x04
PFC_CONC_MPX = 0x10
PFC_DID_NOT_EXECUTE = 0x20
PFC_MAYBE = 0x40
PFC_OBJECT_UUID = 0x80
PFC_WHOLE = PFC_FIRST_FRAG | PFC_LAST_FRAG

#: drep (C706 14.1): integer little-endian + ASCII in octet 0, IEEE floats in octet 1
DREP_LE = b"\x10\x00\x00\x00"


class ContResult(IntEnum):
    """p_cont_def_result_t (C706 12.6.3.1), plus negotiate_ack (MS-RPCE 3.3.1.5.3)."""

    ACCEPTANCE = 0
    USER_REJECTION = 1
    PROVIDER_REJECTION = 2
    NEGOTIATE_ACK = 3


class ProviderReason(IntEnum):
    """p_provider_reason_t (C706 12.6.3.1): why a presentation context was rejected."""

    REASON_NOT_SPECIFIED = 0
    ABSTRACT_SYNTAX_NOT_SUPPORTED = 1
    PROPOSED_TRANSFER_SYNTAXES_NOT_SUPPORTED = 2
    LOCAL_LIMIT_EXCEEDED = 3


class RejectReason(IntEnum):
    """bind_nak reasons (C706 12.6.3.1 p_reject_reason_t; MS-RPCE 2.2.2.5 adds 8 and 9)."""

    REASON_NOT_SPECIFIED = 0
    TEMPORARY_CONGESTION = 1
    LOCAL_LIMIT_EXCEEDED = 2
    CALLED_PADDR_UNKNOWN = 3
    PROTOCOL_VERSION_NOT_SUPPORTED = 4  # MS-RPCE 2.2.2.5: also "protocol error in bind"
    DEFAULT_CONTEXT_NOT_SUPPORTED = 5
    USER_DATA_NOT_READABLE = 6
    NO_PSAP_AVAILABLE = 7
    AUTHENTICATION_TYPE_NOT_RECOGNIZED = 8
    INVALID_CHECKSUM = 9


# fault status codes: C706 appendix E (nca_s_*), MS-RPCE 3.1.3.5.2 (0x6F7)
NCA_S_OP_RNG_ERROR = 0x1C010002  # operation number out of range
NCA_S_UNK_IF = 0x1C010003  # unknown interface
NCA_S_PROTO_ERROR = 0x1C01000B  # protocol error
NCA_S_SERVER_TOO_BUSY = 0x1C010014
NCA_S_UNSUPPORTED_TYPE = 0x1C010017
NCA_S_FAULT_UNSPEC = 0x1C000012
NCA_S_FAULT_CONTEXT_MISMATCH = 0x1C00001A
NCA_S_FAULT_REMOTE_NO_MEMORY = 0x1C00001B
NCA_S_INVALID_PRES_CONTEXT_ID = 0x1C00001C
#: MS-RPCE 3.1.3.5.2: "the status code returned MUST be 0X6F7" for an invalid octet stream
#: (RPC_X_BAD_STUB_DATA in MS-ERREF 2.2; DCE calls the same condition nca_s_fault_ndr)
#: MS-RPCE 3.2.3.5.1 / 3.3.3.5.1: a caller an authorization policy turns away gets fault 5
#: (ERROR_ACCESS_DENIED)
RPC_S_ACCESS_DENIED = 0x00000005
RPC_X_BAD_STUB_DATA = 0x000006F7
NCA_S_FAULT_NDR = RPC_X_BAD_STUB_DATA

#: the fault PDU's fixed part: header, alloc_hint, p_cont_id, cancel_count, reserved, status,
#: reserved2[4] (C706 12.6.4.7); MS-RPCE 2.2.2.8 measures extended error data from alloc_hint
#: minus this size, so a fault without it announces exactly this alloc_hint
FAULT_SIZE = 32
REQUEST_SIZE = 24  # + 16 with PFC_OBJECT_UUID (C706 12.6.4.9)
RESPONSE_SIZE = 24  # C706 12.6.4.10

#: MS-RPCE 2.2.2.14: BindTimeFeatureNegotiationBitmask octet 0
SECURITY_CONTEXT_MULTIPLEXING = 0x01
KEEP_CONNECTION_ON_ORPHAN = 0x02


# --- errors ------------------------------------------------------------------------------------


class PduError(ValueError):
    """A PDU that does not decode: ``field`` names the offending field, ``reason`` says why."""

    def __init__(self, field: str, reason: str):
        super().__init__(f"{field}: {reason}")
        self.field = field
        self.reason = reason


# --- syntax identifiers ------------------------------------------------------------------------


@dataclass(frozen=True)
class SyntaxId:
    """p_syntax_id_t (C706 12.6.3.1): an interface or transfer syntax UUID and its version.

    The 32-bit if_version holds the major version in its low 16 bits and the minor version in
    its high 16 bits, so on the wire it reads major, then minor.
    """

    uuid: uuid.UUID
    major: int = 0
    minor: int = 0

    def __str__(self) -> str:
        return f"{self.uuid} v{self.major}.{self.minor}"


#: the NDR transfer syntax (C706 14; MS-RPCE 1.7 pins version 2.0)
NDR = SyntaxId(uuid.UUID("8a885d04-1ceb-11c9-9fe8-08002b104860"), 2, 0)
#: the NDR64 transfer syntax (MS-RPCE 2.2.5)
NDR64 = SyntaxId(uuid.UUID("71710533-beba-4937-8319-b5dbef9ccc36"), 1, 0)
#: transfer syntaxes by the short names the server's handlers use
TRANSFER_SYNTAXES = {"ndr": NDR, "ndr64": NDR64}
#: what an unused transfer_syntax field of a p_result_t holds
NULL_SYNTAX = SyntaxId(uuid.UUID(int=0), 0, 0)

#: MS-RPCE 3.3.1.5.3: a transfer syntax whose UUID begins 6CB71C2C-9812-4540 (version 1.0)
#: is not a syntax but the client's BindTimeFeatureNegotiationBitmask in the last 8 octets
_BTFN_PREFIX = (0x6CB71C2C, 0x9812, 0x4540)


def is_bind_time_feature_negotiation(syntax: SyntaxId) -> bool:
    """MS-RPCE 3.3.1.5.3: does this transfer syntax carry a bind time feature bitmask?"""
    u = syntax.uuid
    return (u.time_low, u.time_mid, u.time_hi_version) == _BTFN_PREFIX


def feature_bitmask(syntax: SyntaxId) -> int:
    """MS-RPCE 2.2.2.14: octet 0 of the 8-octet bitmask after the prefix (the defined bits)."""
    return syntax.uuid.bytes[8]


def bind_time_feature_syntax(bitmask: int) -> SyntaxId:
    """The transfer syntax a client proposes to offer ``bitmask`` (MS-RPCE 3.3.1.5.3)."""
    raw = struct.pack(">IHH", *_BTFN_PREFIX) + bytes([bitmask & 0xFF]) + bytes(7)
    return SyntaxId(uuid.UUID(bytes=raw), 1, 0)


# --- PDU bodies --------------------------------------------------------------------------------


@dataclass(frozen=True)
class ContextElement:
    """p_cont_elem_t (C706 12.6.3.1): one proposed presentation context."""

    context_id: int
    abstract_syntax: SyntaxId
    transfer_syntaxes: tuple[SyntaxId, ...]


@dataclass(frozen=True)
class ContextResultItem:
    """p_result_t (C706 12.6.3.1): the answer to one proposed presentation context."""

    result: int
    reason: int = 0
    transfer_syntax: SyntaxId = NULL_SYNTAX


@dataclass(frozen=True)
class Bind:
    """bind (C706 12.6.4.3)."""

    max_xmit_frag: int
    max_recv_frag: int
    assoc_group_id: int
    contexts: tuple[ContextElement, ...]


@dataclass(frozen=True)
class AlterContext(Bind):
    """alter_context (C706 12.6.4.1): the layout of bind."""


@dataclass(frozen=True)
class BindAck:
    """bind_ack (C706 12.6.4.4). ``sec_addr`` is the port_spec string without its NUL."""

    max_xmit_frag: int
    max_recv_frag: int
    assoc_group_id: int
    sec_addr: bytes
    results: tuple[ContextResultItem, ...]


@dataclass(frozen=True)
class AlterContextResp(BindAck):
    """alter_context_resp (C706 12.6.4.2): the layout of bind_ack."""


@dataclass(frozen=True)
class BindNak:
    """bind_nak (C706 12.6.4.5): a reason and the protocol versions the server supports."""

    reason: int
    versions: tuple[tuple[int, int], ...] = ((RPC_VERS, 0),)


@dataclass(frozen=True)
class Request:
    """request (C706 12.6.4.9). ``object`` is set iff PFC_OBJECT_UUID is."""

    context_id: int
    opnum: int
    stub: bytes = b""
    alloc_hint: int = 0
    object: uuid.UUID | None = None


@dataclass(frozen=True)
class Response:
    """response (C706 12.6.4.10)."""

    context_id: int
    stub: bytes = b""
    alloc_hint: int = 0
    cancel_count: int = 0


@dataclass(frozen=True)
class Fault:
    """fault (C706 12.6.4.7). ``flags`` is the reserved octet whose bit 0 MS-RPCE 2.2.2.8 uses
    for "extended error information present"; servers send no stub (MS-RPCE 2.2.2.8)."""

    context_id: int
    status: int
    alloc_hint: int = FAULT_SIZE
    cancel_count: int = 0
    flags: int = 0
    stub: bytes = b""


@dataclass(frozen=True)
class Shutdown:
    """shutdown (C706 12.6.4.11): the common header only."""


@dataclass(frozen=True)
class CoCancel:
    """co_cancel (C706 12.6.4.6): the common header (and an optional verifier)."""


@dataclass(frozen=True)
class Orphaned:
    """orphaned (C706 12.6.4.8): the common header (and an optional verifier)."""


@dataclass(frozen=True)
class Auth3:
    """rpc_auth_3 (MS-RPCE 2.2.2.10): 4 pad octets, then the sec_trailer."""


Body = (Bind | AlterContext | BindAck | AlterContextResp | BindNak | Request | Response | Fault
        | Shutdown | CoCancel | Orphaned | Auth3)

_PTYPE_OF: dict[type, PType] = {
    Request: PType.REQUEST, Response: PType.RESPONSE, Fault: PType.FAULT, Bind: PType.BIND,
    BindAck: PType.BIND_ACK, BindNak: PType.BIND_NAK, AlterContext: PType.ALTER_CONTEXT,
    AlterContextResp: PType.ALTER_CONTEXT_RESP, Auth3: PType.AUTH3, Shutdown: PType.SHUTDOWN,
    CoCancel: PType.CO_CANCEL, Orphaned: PType.ORPHANED,
}


@dataclass(frozen=True)
class AuthVerifier:
    """sec_trailer + auth_value (MS-RPCE 2.2.2.11), found at the end of a PDU."""

    auth_type: int
    auth_level: int
    auth_pad_length: int
    auth_context_id: int
    auth_value: bytes
    auth_reserved: int = 0


@dataclass(frozen=True)
class Header:
    """The common header (C706 12.6.3.1)."""

    rpc_vers: int
    rpc_vers_minor: int
    ptype: int
    pfc_flags: int
    drep: bytes
    frag_length: int
    auth_length: int
    call_id: int

    @property
    def little_endian(self) -> bool:
        """C706 14.1: integer representation is the high nibble of drep octet 0 (1 = LE)."""
        return (self.drep[0] >> 4) == 1

    @property
    def ndr_native(self) -> bool:
        """Little-endian integers, ASCII characters and IEEE floats: what our stubs speak."""
        return self.drep[0] == 0x10 and self.drep[1] == 0


@dataclass(frozen=True)
class Pdu:
    header: Header
    body: Body
    auth: AuthVerifier | None = None

    @property
    def ptype(self) -> int:
        return self.header.ptype

    @property
    def call_id(self) -> int:
        return self.header.call_id

    @property
    def pfc_flags(self) -> int:
        return self.header.pfc_flags


# --- decoding ----------------------------------------------------------------------------------


class _Reader:
    """Bounds-checked reads in one byte order; every failure names the field."""

    def __init__(self, data: bytes, little: bool, start: int = 0, end: int | None = None):
        self.data = data
        self.pos = start
        self.end = len(data) if end is None else end
        self.o = "<" if little else ">"

    def take(self, n: int, what: str) -> bytes:
        if n < 0 or self.pos + n > self.end:
            raise PduError(what, f"needs {n} octets at offset {self.pos}, "
                                 f"{max(0, self.end - self.pos)} left")
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out

    def u8(self, what: str) -> int:
        return self.take(1, what)[0]

    def u16(self, what: str) -> int:
        return struct.unpack(self.o + "H", self.take(2, what))[0]

    def u32(self, what: str) -> int:
        return struct.unpack(self.o + "I", self.take(4, what))[0]

    def uuid(self, what: str) -> uuid.UUID:
        raw = self.take(16, what)
        if self.o == "<":
            return uuid.UUID(bytes_le=raw)
        return uuid.UUID(bytes=raw)

    def syntax(self, what: str) -> SyntaxId:
        u = self.uuid(what + ".if_uuid")
        major = self.u16(what + ".if_version")
        minor = self.u16(what + ".if_version")
        return SyntaxId(u, major, minor)

    def align(self, n: int, what: str) -> None:
        pad = (-self.pos) % n
        self.take(pad, what)


def decode_header(data: bytes) -> Header:
    """The 16-octet common header (C706 12.6.3.1), checked for what framing relies on: the
    version, a known drep integer representation and a frag_length of at least 16."""
    if len(data) < HEADER_SIZE:
        raise PduError("header", f"needs {HEADER_SIZE} octets, got {len(data)}")
    vers, minor, ptype, flags = data[0], data[1], data[2], data[3]
    drep = bytes(data[4:8])
    if vers != RPC_VERS:
        raise PduError("rpc_vers", f"is {vers}, connection-oriented RPC is version {RPC_VERS}")
    if minor not in RPC_VERS_MINORS:
        raise PduError("rpc_vers_minor", f"is {minor}, expected 0 or 1")
    if drep[0] >> 4 not in (0, 1):
        raise PduError("drep", f"integer representation {drep[0] >> 4} is neither 0 (big-endian)"
                               " nor 1 (little-endian)")
    o = "<" if drep[0] >> 4 == 1 else ">"
    frag_length, auth_length, call_id = struct.unpack(o + "HHI", data[8:16])
    if frag_length < HEADER_SIZE:
        raise PduError("frag_length", f"is {frag_length}, less than the {HEADER_SIZE}-octet header")
    return Header(vers, minor, ptype, flags, drep, frag_length, auth_length, call_id)


def _split_auth(h: Header, data: bytes, body_start: int) -> tuple[int, AuthVerifier | None]:
    """Where the body ends and the verifier (if any) begins (MS-RPCE 2.2.2.11)."""
    end = h.frag_length
    if h.auth_length == 0:
        return end, None
    trailer = end - h.auth_length - SEC_TRAILER_SIZE
    if trailer < body_start:
        raise PduError("auth_length", f"{h.auth_length} + {SEC_TRAILER_SIZE}-octet sec_trailer "
                                      f"does not fit in a {h.frag_length}-octet PDU")
    r = _Reader(data, h.little_endian, trailer, end)
    auth_type = r.u8("sec_trailer.auth_type")
    auth_level = r.u8("sec_trailer.auth_level")
    pad = r.u8("sec_trailer.auth_pad_length")
    reserved = r.u8("sec_trailer.auth_reserved")
    ctx = r.u32("sec_trailer.auth_context_id")
    value = bytes(r.take(h.auth_length, "auth_value"))
    if trailer - pad < body_start:
        raise PduError("sec_trailer.auth_pad_length", f"{pad} octets of padding do not fit")
    return trailer - pad, AuthVerifier(auth_type, auth_level, pad, ctx, value, reserved)


def _decode_contexts(r: _Reader) -> tuple[ContextElement, ...]:
    n = r.u8("p_context_elem.n_context_elem")
    r.take(3, "p_context_elem.reserved")
    out = []
    for i in range(n):
        where = f"p_cont_elem[{i}]"
        cid = r.u16(where + ".p_cont_id")
        n_ts = r.u8(where + ".n_transfer_syn")
        r.take(1, where + ".reserved")
        abstract = r.syntax(where + ".abstract_syntax")
        ts = tuple(r.syntax(f"{where}.transfer_syntaxes[{j}]") for j in range(n_ts))
        out.append(ContextElement(cid, abstract, ts))
    return tuple(out)


def _decode_results(r: _Reader) -> tuple[ContextResultItem, ...]:
    n = r.u8("p_result_list.n_results")
    r.take(3, "p_result_list.reserved")
    out = []
    for i in range(n):
        where = f"p_results[{i}]"
        result = r.u16(where + ".result")
        reason = r.u16(where + ".reason")
        out.append(ContextResultItem(result, reason, r.syntax(where + ".transfer_syntax")))
    return tuple(out)


def decode_pdu(data: bytes) -> Pdu:
    """One whole PDU: ``data`` must be exactly ``frag_length`` octets long."""
    data = bytes(data)
    h = decode_header(data)
    if len(data) != h.frag_length:
        raise PduError("frag_length", f"announces {h.frag_length} octets, got {len(data)}")
    try:
        ptype = PType(h.ptype)
    except ValueError:
        raise PduError("PTYPE", f"{h.ptype} is not a connection-oriented PDU type") from None
    end, auth = _split_auth(h, data, HEADER_SIZE)
    r = _Reader(data, h.little_endian, HEADER_SIZE, end)
    body: Body
    if ptype in (PType.BIND, PType.ALTER_CONTEXT):
        xmit = r.u16("max_xmit_frag")
        recv = r.u16("max_recv_frag")
        group = r.u32("assoc_group_id")
        contexts = _decode_contexts(r)
        cls = Bind if ptype == PType.BIND else AlterContext
        body = cls(xmit, recv, group, contexts)
    elif ptype in (PType.BIND_ACK, PType.ALTER_CONTEXT_RESP):
        xmit = r.u16("max_xmit_frag")
        recv = r.u16("max_recv_frag")
        group = r.u32("assoc_group_id")
        n = r.u16("sec_addr.length")
        addr = bytes(r.take(n, "sec_addr.port_spec")).rstrip(b"\x00")
        r.align(4, "pad")
        cls = BindAck if ptype == PType.BIND_ACK else AlterContextResp
        body = cls(xmit, recv, group, addr, _decode_results(r))
    elif ptype == PType.BIND_NAK:
        reason = r.u16("provider_reject_reason")
        versions: tuple[tuple[int, int], ...] = ()
        if r.pos < r.end:  # C706 12.6.4.5: versions; some senders stop after the reason
            n = r.u8("versions.n_protocols")
            versions = tuple((r.u8("versions.major"), r.u8("versions.minor")) for _ in range(n))
        body = BindNak(reason, versions)
    elif ptype == PType.REQUEST:
        alloc_hint = r.u32("alloc_hint")
        cid = r.u16("p_cont_id")
        opnum = r.u16("opnum")
        obj = r.uuid("object") if h.pfc_flags & PFC_OBJECT_UUID else None
        body = Request(cid, opnum, bytes(data[r.pos:end]), alloc_hint, obj)
    elif ptype == PType.RESPONSE:
        alloc_hint = r.u32("alloc_hint")
        cid = r.u16("p_cont_id")
        cancel = r.u8("cancel_count")
        r.take(1, "reserved")
        body = Response(cid, bytes(data[r.pos:end]), alloc_hint, cancel)
    elif ptype == PType.FAULT:
        alloc_hint = r.u32("alloc_hint")
        cid = r.u16("p_cont_id")
        cancel = r.u8("cancel_count")
        flags = r.u8("reserved")
        status = r.u32("status")
        r.take(4, "reserved2")
        body = Fault(cid, status, alloc_hint, cancel, flags, bytes(data[r.pos:end]))
    elif ptype == PType.AUTH3:
        r.take(4, "pad")
        body = Auth3()
    elif ptype == PType.SHUTDOWN:
        body = Shutdown()
    elif ptype == PType.CO_CANCEL:
        body = CoCancel()
    else:
        body = Orphaned()
    return Pdu(h, body, auth)


# --- verification trailer (MS-RPCE 2.2.2.13) -------------------------------------------------

#: rpc_sec_verification_trailer.signature (MS-RPCE 2.2.2.13.1)
VT_SIGNATURE = bytes((0x8A, 0xE3, 0x13, 0x71, 0x02, 0xF4, 0x36, 0x71))
#: the command field's bits 14 and 15 (MS-RPCE 2.2.2.13)
SEC_VT_MUST_PROCESS_COMMAND = 0x4000
SEC_VT_COMMAND_END = 0x8000
#: the commands (bits 0 to 13) and their lengths (MS-RPCE 2.2.2.13.2 to 2.2.2.13.4)
SEC_VT_COMMAND_BITMASK_1 = 0x0001
SEC_VT_COMMAND_PCONTEXT = 0x0002
SEC_VT_COMMAND_HEADER2 = 0x0003
VT_LENGTHS = {SEC_VT_COMMAND_BITMASK_1: 4, SEC_VT_COMMAND_PCONTEXT: 0x28,
              SEC_VT_COMMAND_HEADER2: 0x10}
#: rpc_sec_vt_bitmask.bits: CLIENT_SUPPORT_HEADER_SIGNING
CLIENT_SUPPORT_HEADER_SIGNING = 0x00000001


@dataclass(frozen=True)
class VtCommand:
    """One verification trailer command: its type (bits 0-13), whether the receiver must
    process it (bit 14), and its data."""

    command: int
    must_process: bool
    data: bytes

    def bitmask(self) -> int:
        return struct.unpack_from("<I", self.data)[0]

    def pcontext(self) -> tuple[SyntaxId, SyntaxId]:
        """(InterfaceId, TransferSyntax) of rpc_sec_vt_pcontext."""
        return _read_syntax(self.data, 0), _read_syntax(self.data, 20)

    def header2(self) -> tuple[int, bytes, int, int, int]:
        """(PTYPE, drep, call_id, p_cont_id, opnum) of rpc_sec_vt_header2."""
        ptype, = struct.unpack_from("<B", self.data)
        call_id, cont_id, opnum = struct.unpack_from("<IHH", self.data, 8)
        return ptype, self.data[4:8], call_id, cont_id, opnum


@dataclass(frozen=True)
class VerificationTrailer:
    """A verification trailer found in a request's stub: where it starts and its commands."""

    offset: int
    commands: tuple[VtCommand, ...]


def _read_syntax(data: bytes, at: int) -> SyntaxId:
    major, minor = struct.unpack_from("<HH", data, at + 16)
    return SyntaxId(uuid.UUID(bytes_le=data[at:at + 16]), major, minor)


def find_verification_trailer(body: bytes) -> VerificationTrailer | None:
    """The verification trailer at the end of a request's stub data (MS-RPCE 2.2.2.13: after
    the stub and any stub padding, 4-octet aligned, ending the body), or None when the body
    has none. The signature is looked for at aligned offsets from the end, as MS-RPCE asks a
    server to search for it rather than assume where the stub ends. The commands end with the
    one marked SEC_VT_COMMAND_END, or with the body (a client that leaves the mark off); a
    signature followed by commands that do not end the body exactly raises PduError."""
    end = len(body) - 4  # the shortest trailer: the signature and a command with no data
    while True:
        at = body.rfind(VT_SIGNATURE, 0, end)  # C speed, whatever the stub's size
        if at < 0:
            return None
        end = at + len(VT_SIGNATURE) - 1
        if at % 4:
            continue  # not where a trailer can start (4-octet aligned)
        commands = []
        pos = at + len(VT_SIGNATURE)
        while True:
            if pos == len(body) and commands:
                break  # the body ends with a whole command not marked SEC_VT_COMMAND_END:
                # what scapy 2.8's client sends; the trailer ends where the body does
            if pos + 4 > len(body):
                raise PduError("verification trailer", "a command header runs past the PDU")
            command, length = struct.unpack_from("<HH", body, pos)
            kind = command & 0x3FFF
            if pos + 4 + length > len(body):
                raise PduError("verification trailer", f"command {kind:#x} runs past the PDU")
            if kind in VT_LENGTHS and length != VT_LENGTHS[kind]:
                raise PduError("verification trailer", f"command {kind:#x} has length "
                               f"{length}, not {VT_LENGTHS[kind]}")
            commands.append(VtCommand(kind, bool(command & SEC_VT_MUST_PROCESS_COMMAND),
                                      body[pos + 4:pos + 4 + length]))
            pos += 4 + length
            if command & SEC_VT_COMMAND_END:
                break
        if pos != len(body):
            raise PduError("verification trailer", f"{len(body) - pos} octets after its "
                                                   f"last command")
        return VerificationTrailer(at, tuple(commands))


def encode_verification_trailer(commands: list[VtCommand]) -> bytes:
    """A verification trailer (signature and commands, the last one marked
    SEC_VT_COMMAND_END), as a client appends it to a 4-octet aligned stub."""
    out = VT_SIGNATURE
    for i, c in enumerate(commands):
        flags = (SEC_VT_MUST_PROCESS_COMMAND if c.must_process else 0) | (
            SEC_VT_COMMAND_END if i == len(commands) - 1 else 0)
        out += struct.pack("<HH", c.command | flags, len(c.data)) + c.data
    return out


def vt_pcontext(interface: SyntaxId, transfer: SyntaxId, must_process: bool = True
                ) -> VtCommand:
    return VtCommand(SEC_VT_COMMAND_PCONTEXT, must_process,
                     _syntax(interface) + _syntax(transfer))


def vt_header2(call_id: int, context_id: int, opnum: int, drep: bytes = b"\x10\x00\x00\x00",
               ptype: int = 0, must_process: bool = True) -> VtCommand:
    return VtCommand(SEC_VT_COMMAND_HEADER2, must_process,
                     struct.pack("<BBH", ptype, 0, 0) + drep
                     + struct.pack("<IHH", call_id, context_id, opnum))


def vt_bitmask(bits: int = CLIENT_SUPPORT_HEADER_SIGNING, must_process: bool = False
               ) -> VtCommand:
    return VtCommand(SEC_VT_COMMAND_BITMASK_1, must_process, struct.pack("<I", bits))


# --- encoding ----------------------------------------------------------------------------------


def _syntax(s: SyntaxId) -> bytes:
    return s.uuid.bytes_le + struct.pack("<HH", s.major, s.minor)


def _encode_body(body: Body, pfc_flags: int, offset: int) -> bytes:
    if isinstance(body, Bind):  # and AlterContext
        out = struct.pack("<HHI", body.max_xmit_frag, body.max_recv_frag, body.assoc_group_id)
        out += struct.pack("<B3x", len(body.contexts))
        for c in body.contexts:
            out += struct.pack("<HBx", c.context_id, len(c.transfer_syntaxes))
            out += _syntax(c.abstract_syntax) + b"".join(_syntax(t) for t in c.transfer_syntaxes)
        return out
    if isinstance(body, BindAck):  # and AlterContextResp
        out = struct.pack("<HHI", body.max_xmit_frag, body.max_recv_frag, body.assoc_group_id)
        addr = body.sec_addr + b"\x00" if body.sec_addr else b""
        out += struct.pack("<H", len(addr)) + addr
        out += bytes((-(offset + len(out))) % 4)  # C706 12.6.4.4: align the result list to 4
        out += struct.pack("<B3x", len(body.results))
        for res in body.results:
            out += struct.pack("<HH", res.result, res.reason) + _syntax(res.transfer_syntax)
        return out
    if isinstance(body, BindNak):
        out = struct.pack("<HB", body.reason, len(body.versions))
        return out + b"".join(struct.pack("<BB", a, b) for a, b in body.versions)
    if isinstance(body, Request):
        out = struct.pack("<IHH", body.alloc_hint, body.context_id, body.opnum)
        if pfc_flags & PFC_OBJECT_UUID:
            out += (body.object or uuid.UUID(int=0)).bytes_le
        return out + body.stub
    if isinstance(body, Response):
        return struct.pack("<IHBx", body.alloc_hint, body.context_id, body.cancel_count) + body.stub
    if isinstance(body, Fault):
        return struct.pack("<IHBBI4x", body.alloc_hint, body.context_id, body.cancel_count,
                           body.flags, body.status) + body.stub
    if isinstance(body, Auth3):
        return bytes(4)
    return b""  # shutdown, co_cancel, orphaned


def encode_pdu(body: Body, call_id: int, pfc_flags: int = PFC_WHOLE,
               auth: AuthVerifier | None = None, rpc_vers_minor: int = 0) -> bytes:
    """One PDU, little-endian drep, frag_length and auth_length computed."""
    ptype = _PTYPE_OF[type(body)]
    if isinstance(body, Request) and body.object is not None:
        pfc_flags |= PFC_OBJECT_UUID
    payload = _encode_body(body, pfc_flags, HEADER_SIZE)
    auth_length = 0
    if auth is not None:
        pad = (-(HEADER_SIZE + len(payload))) % 4
        payload += bytes(pad)
        payload += struct.pack("<BBBBI", auth.auth_type, auth.auth_level, pad, auth.auth_reserved,
                               auth.auth_context_id) + auth.auth_value
        auth_length = len(auth.auth_value)
    frag_length = HEADER_SIZE + len(payload)
    if frag_length > MAX_FRAG_LENGTH:
        raise PduError("frag_length", f"{frag_length} octets do not fit in 16 bits")
    header = struct.pack("<BBBB4sHHI", RPC_VERS, rpc_vers_minor, ptype, pfc_flags, DREP_LE,
                         frag_length, auth_length, call_id)
    return header + payload


def fragment_stub(stub: bytes, max_frag: int, header_size: int) -> list[tuple[int, bytes]]:
    """Split a stub into (pfc_flags, chunk) pairs for PDUs of at most ``max_frag`` octets.

    Every chunk but the last is a multiple of 8 octets, so NDR alignment (relative to the start
    of the stub) is the same in every fragment. An empty stub still makes one PDU.
    """
    room = ((max_frag - header_size) // 8) * 8
    if room <= 0:
        raise ValueError(f"a {max_frag}-octet fragment has no room for stub data")
    chunks = [stub[i:i + room] for i in range(0, len(stub), room)] or [b""]
    out = []
    for i, chunk in enumerate(chunks):
        flags = (PFC_FIRST_FRAG if i == 0 else 0) | (PFC_LAST_FRAG if i == len(chunks) - 1 else 0)
        out.append((flags, chunk))
    return out


# --- protocol towers (C706 appendix L; MS-RPCE 2.2.1.2, 3.1.3.5.3) --------------------------------

#: floor protocol identifiers (C706 appendix I and L)
FLOOR_UUID = 0x0D  # lhs: identifier, UUID, major version; rhs: minor version
FLOOR_RPC_CO = 0x0B  # connection-oriented RPC; rhs: minor version
FLOOR_TCP_PORT = 0x07  # rhs: port, big-endian
FLOOR_IP = 0x09  # rhs: IPv4 address, big-endian
#: MS-RPCE 3.1.3.5.3: towers with more than six floors SHOULD be rejected
MAX_TOWER_FLOORS = 6


@dataclass(frozen=True)
class Floor:
    """One tower floor: left-hand side (protocol identifier + data) and right-hand side."""

    lhs: bytes
    rhs: bytes

    @property
    def protocol(self) -> int:
        return self.lhs[0] if self.lhs else -1


@dataclass(frozen=True)
class TcpTower:
    """The ncacn_ip_tcp tower: interface, transfer syntax, RPC CO, TCP port, IP address."""

    interface: SyntaxId
    transfer_syntax: SyntaxId
    port: int
    address: str = "0.0.0.0"
    floors: tuple[Floor, ...] = field(default=(), compare=False)


def _uuid_floor(s: SyntaxId) -> Floor:
    # C706 appendix L: lhs = 0x0D, the UUID (little-endian NDR uuid_t), major version (LE u16);
    # rhs = minor version (LE u16)
    return Floor(bytes([FLOOR_UUID]) + s.uuid.bytes_le + struct.pack("<H", s.major),
                 struct.pack("<H", s.minor))


def encode_tower(t: TcpTower) -> bytes:
    """The tower_octet_string of an ncacn_ip_tcp tower (C706 appendix L): floor count (LE u16),
    then per floor lhs_length (LE u16), lhs, rhs_length (LE u16), rhs."""
    floors = [
        _uuid_floor(t.interface),
        _uuid_floor(t.transfer_syntax),
        Floor(bytes([FLOOR_RPC_CO]), struct.pack("<H", 0)),
        Floor(bytes([FLOOR_TCP_PORT]), struct.pack(">H", t.port)),
        Floor(bytes([FLOOR_IP]), ipaddress.IPv4Address(t.address).packed),
    ]
    out = struct.pack("<H", len(floors))
    for f in floors:
        out += struct.pack("<H", len(f.lhs)) + f.lhs + struct.pack("<H", len(f.rhs)) + f.rhs
    return out


def decode_floors(data: bytes) -> tuple[Floor, ...]:
    """The floors of any tower_octet_string, bounds-checked."""
    r = _Reader(bytes(data), True)
    n = r.u16("tower.floor_count")
    if n > MAX_TOWER_FLOORS:
        raise PduError("tower.floor_count", f"{n} floors, at most {MAX_TOWER_FLOORS} accepted")
    floors = []
    for i in range(n):
        lhs = bytes(r.take(r.u16(f"floor[{i}].lhs_length"), f"floor[{i}].lhs"))
        rhs = bytes(r.take(r.u16(f"floor[{i}].rhs_length"), f"floor[{i}].rhs"))
        floors.append(Floor(lhs, rhs))
    return tuple(floors)


def _floor_syntax(f: Floor, i: int) -> SyntaxId:
    if f.protocol != FLOOR_UUID or len(f.lhs) != 19 or len(f.rhs) != 2:
        raise PduError(f"floor[{i}]", "is not a UUID floor (0x0D, 16-octet UUID, versions)")
    major, = struct.unpack("<H", f.lhs[17:19])
    minor, = struct.unpack("<H", f.rhs)
    return SyntaxId(uuid.UUID(bytes_le=f.lhs[1:17]), major, minor)


def decode_tcp_tower(data: bytes) -> TcpTower:
    """An ncacn_ip_tcp tower; any other tower shape is a PduError naming the floor."""
    floors = decode_floors(data)
    if len(floors) < 4:
        raise PduError("tower.floor_count", f"{len(floors)} floors, ncacn_ip_tcp needs 4 or 5")
    interface = _floor_syntax(floors[0], 0)
    syntax = _floor_syntax(floors[1], 1)
    if floors[2].protocol != FLOOR_RPC_CO:
        raise PduError("floor[2]", f"protocol 0x{floors[2].protocol & 0xFF:02x} is not RPC CO "
                                   f"(0x{FLOOR_RPC_CO:02x})")
    if floors[3].protocol != FLOOR_TCP_PORT or len(floors[3].rhs) != 2:
        raise PduError("floor[3]", "is not a TCP port floor (0x07, 2-octet port)")
    port, = struct.unpack(">H", floors[3].rhs)
    address = "0.0.0.0"
    if len(floors) > 4:
        if floors[4].protocol != FLOOR_IP or len(floors[4].rhs) != 4:
            raise PduError("floor[4]", "is not an IP address floor (0x09, 4-octet address)")
        address = str(ipaddress.IPv4Address(floors[4].rhs))
    return TcpTower(interface, syntax, port, address, floors)
