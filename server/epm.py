"""The endpoint mapper: ept_map answered for the interfaces the reference server registers.

MS-MQRR 2.1 and MS-MQMR 2.1 use dynamic endpoints: a client asks the endpoint mapper which TCP
port serves RemoteRead or qmmgmt. This one runs on its own port (135 needs root; 0 picks a
free one) and answers, over the runtime of server.rpc and in NDR:

* ept_map (opnum 3) of the epmapper interface e1af8308-5d1f-11c9-91a4-08002b14a0fa v3.0
  ([C706] appendix O): the map_tower names an interface, a transfer syntax and a protocol
  sequence; a registered interface with a compatible version (same major, minor at least the
  requested one) and that transfer syntax on ncacn_ip_tcp is answered with one tower naming the
  server's port and address, status 0; anything else with no tower and EPT_S_NOT_REGISTERED.
* ept_lookup (opnum 2): the registered entries an inquiry selects (all, by interface and
  version option, by object, or both; C706 appendix O rpc_c_ep_* and rpc_c_vers_*), one
  ept_entry_t per interface and transfer syntax: the nil object, the tower that
  ept_map would answer, an empty annotation; at most max_ents per call. The entry handle says
  where the next call goes on (a position, not server state); the null handle, with status 0,
  ends the list; a first call that selects nothing gets EPT_S_NOT_REGISTERED. What
  impacket's rpcdump and Windows' portqry send.
* ept_lookup_handle_free (opnum 4): the entry handles hold no server state, so freeing one
  always succeeds and returns the null handle.

Other opnums get nca_s_op_rng_error. Towers are encoded by wire.dcerpc (C706 appendix L);
MS-RPCE 3.1.3.5.3 lets us ignore the network address floor of the request.

ept_map in NDR (C706 appendix O, IDL ``ept_map``):
  in:  [ptr] uuid_p_t object; [ptr] twr_p_t map_tower; ept_lookup_handle_t *entry_handle;
       unsigned32 max_towers
  out: ept_lookup_handle_t *entry_handle; unsigned32 *num_towers;
       [ptr, size_is(max_towers), length_is(*num_towers)] twr_p_t towers[];
       error_status_t *status
twr_t is a conformant struct { unsigned32 tower_length; [size_is(tower_length)] byte
tower_octet_string[]; }, so its max_count comes first; a context handle is 20 octets.
"""

from __future__ import annotations

import secrets
import socket
import struct
import threading
import uuid
from dataclasses import dataclass

from mqconform.server.rpc import Connection, Reply, RpcServer
from mqconform.wire import dcerpc as d

EPM_INTERFACE = uuid.UUID("e1af8308-5d1f-11c9-91a4-08002b14a0fa")
EPM_VERSION = (3, 0)
OP_EPT_LOOKUP = 2
OP_EPT_MAP = 3
OP_EPT_LOOKUP_HANDLE_FREE = 4
#: C706 appendix E: ept_s_not_registered, "no more endpoints available from the endpoint
#: mapper"
EPT_S_NOT_REGISTERED = 0x16C9A0D6
_NULL_HANDLE = bytes(20)
#: C706 appendix O: ept_lookup's inquiry_type and vers_option
RPC_C_EP_ALL_ELTS, RPC_C_EP_MATCH_BY_IF, RPC_C_EP_MATCH_BY_OBJ, RPC_C_EP_MATCH_BY_BOTH = 0, 1, 2, 3
RPC_C_VERS_ALL, RPC_C_VERS_COMPATIBLE, RPC_C_VERS_EXACT, RPC_C_VERS_MAJOR_ONLY, RPC_C_VERS_UPTO = (
    1, 2, 3, 4, 5)
#: the first 4 octets of an entry handle this mapper gives out (the attributes word of a
#: context handle), then the position of the next entry in the uuid's first 4 octets
_LOOKUP_MARK = b"\x00\x00\x00\x00"


@dataclass(frozen=True)
class Registration:
    interface: uuid.UUID
    version: tuple[int, int]
    syntaxes: frozenset[str]
    port: int
    host: str = "0.0.0.0"


@dataclass(frozen=True)
class EptMapRequest:
    object: uuid.UUID | None
    map_tower: bytes | None
    entry_handle: bytes
    max_towers: int


class _Reader:
    def __init__(self, data: bytes):
        self.data, self.pos = data, 0

    def take(self, n: int, what: str) -> bytes:
        if self.pos + n > len(self.data):
            raise d.PduError(what, f"needs {n} octets at offset {self.pos}, "
                                   f"{len(self.data) - self.pos} left")
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out

    def u32(self, what: str) -> int:
        self.take((-self.pos) % 4, what + " (alignment)")
        return struct.unpack("<I", self.take(4, what))[0]


def decode_ept_map_request(stub: bytes) -> EptMapRequest:
    """The NDR (little-endian) [in] parameters of ept_map; PduError names a bad field."""
    r = _Reader(bytes(stub))
    obj = None
    if r.u32("object.referent_id"):
        obj = uuid.UUID(bytes_le=r.take(16, "object"))
    tower = None
    if r.u32("map_tower.referent_id"):
        max_count = r.u32("map_tower.max_count")
        length = r.u32("map_tower.tower_length")
        if max_count != length:  # size_is(tower_length): MS-RPCE 3.1.1.5.3 consistency
            raise d.PduError("map_tower.max_count", f"{max_count} is not tower_length {length}")
        tower = r.take(length, "map_tower.tower_octet_string")
    r.take((-r.pos) % 4, "entry_handle (alignment)")
    handle = r.take(20, "entry_handle")
    max_towers = r.u32("max_towers")
    return EptMapRequest(obj, tower, handle, max_towers)


@dataclass(frozen=True)
class EptLookupRequest:
    inquiry_type: int
    object: uuid.UUID | None
    interface: d.SyntaxId | None
    vers_option: int
    entry_handle: bytes
    max_ents: int


def decode_ept_lookup_request(stub: bytes) -> EptLookupRequest:
    """The NDR (little-endian) [in] parameters of ept_lookup (C706 appendix O):
    inquiry_type; [ptr] uuid_p_t object; [ptr] rpc_if_id_p_t interface_id (uuid, vers_major,
    vers_minor); vers_option; the entry handle; max_ents."""
    r = _Reader(bytes(stub))
    inquiry = r.u32("inquiry_type")
    obj = None
    if r.u32("object.referent_id"):
        obj = uuid.UUID(bytes_le=r.take(16, "object"))
    iface = None
    if r.u32("interface_id.referent_id"):
        raw = r.take(20, "interface_id")
        major, minor = struct.unpack_from("<HH", raw, 16)
        iface = d.SyntaxId(uuid.UUID(bytes_le=raw[:16]), major, minor)
    vers_option = r.u32("vers_option")
    handle = r.take(20, "entry_handle")
    max_ents = r.u32("max_ents")
    return EptLookupRequest(inquiry, obj, iface, vers_option, handle, max_ents)


def encode_ept_lookup_response(entries: list[tuple[uuid.UUID, bytes, str]], max_ents: int,
                               status: int, entry_handle: bytes = _NULL_HANDLE) -> bytes:
    """The NDR [out] parameters of ept_lookup: the entry handle, num_ents, the conformant
    varying array of ept_entry_t (object, a pointer to the tower, the annotation as a
    [string] char array) with the towers deferred after it, and the status."""
    out = bytearray(entry_handle)
    out += struct.pack("<I", len(entries))
    out += struct.pack("<III", max_ents, 0, len(entries))
    for i, (obj, _tower, annotation) in enumerate(entries):
        out += bytes((-len(out)) % 4)
        out += obj.bytes_le + struct.pack("<I", 0x00020000 + 4 * i)
        text = annotation.encode("ascii", "replace")[:63] + b"\x00"
        out += struct.pack("<II", 0, len(text)) + text
    for _obj, tower, _annotation in entries:  # the deferred referents: twr_t each
        out += bytes((-len(out)) % 4)
        out += struct.pack("<II", len(tower), len(tower)) + tower
    out += bytes((-len(out)) % 4)
    out += struct.pack("<I", status)
    return bytes(out)


def _version_matches(have: tuple[int, int], want: d.SyntaxId, option: int) -> bool:
    """C706 appendix O, ept_lookup's vers_option."""
    if option == RPC_C_VERS_ALL:
        return True
    if option == RPC_C_VERS_COMPATIBLE:
        return have[0] == want.major and have[1] >= want.minor
    if option == RPC_C_VERS_EXACT:
        return have == (want.major, want.minor)
    if option == RPC_C_VERS_MAJOR_ONLY:
        return have[0] == want.major
    if option == RPC_C_VERS_UPTO:
        return have <= (want.major, want.minor)
    return False


def encode_ept_map_response(towers: list[bytes], max_towers: int, status: int,
                            entry_handle: bytes = _NULL_HANDLE) -> bytes:
    """The NDR [out] parameters of ept_map."""
    out = bytearray(entry_handle)
    out += struct.pack("<I", len(towers))
    # conformant varying array of pointers: max_count, offset, actual_count, referent ids
    out += struct.pack("<III", max_towers, 0, len(towers))
    out += b"".join(struct.pack("<I", 0x00020000 + 4 * i) for i in range(len(towers)))
    for t in towers:  # the deferred referents: twr_t each
        out += bytes((-len(out)) % 4)
        out += struct.pack("<II", len(t), len(t)) + t
    out += bytes((-len(out)) % 4)
    out += struct.pack("<I", status)
    return bytes(out)


def _ipv4(host: str) -> str:
    try:
        socket.inet_aton(host)
        return host
    except OSError:
        return "0.0.0.0"


class EndpointMapper:
    """An endpoint mapper on ``host``:``port``; ``register``/``register_server`` add entries."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0, **server_options):
        self._lock = threading.Lock()
        self._registrations: list[Registration] = []
        self.server = RpcServer(self, host, port, **server_options)

    # registrations

    def register(self, interface: uuid.UUID, version: tuple[int, int],
                 syntaxes: frozenset[str], port: int, host: str = "0.0.0.0") -> None:
        with self._lock:
            self._registrations.append(Registration(interface, version, frozenset(syntaxes),
                                                    port, host))

    def register_server(self, server: RpcServer) -> None:
        """Every interface ``server``'s handler serves, at ``server``'s address."""
        host, port = server.address
        for iface, (major, minor, syntaxes) in server.handler.interfaces().items():
            self.register(iface, (major, minor), syntaxes, port, host)

    def registrations(self) -> list[Registration]:
        with self._lock:
            return list(self._registrations)

    def map(self, tower: d.TcpTower, max_towers: int, local_host: str = "0.0.0.0") -> list[bytes]:
        """The towers answering ``tower`` (at most ``max_towers``)."""
        wanted = tower.interface
        syntax = next((n for n, s in d.TRANSFER_SYNTAXES.items() if s == tower.transfer_syntax),
                      None)
        out = []
        for reg in self.registrations():
            if (reg.interface != wanted.uuid or reg.version[0] != wanted.major
                    or reg.version[1] < wanted.minor or syntax not in reg.syntaxes):
                continue
            host = reg.host if reg.host not in ("", "0.0.0.0", "::") else local_host
            answer = d.TcpTower(d.SyntaxId(reg.interface, *reg.version), tower.transfer_syntax,
                                reg.port, _ipv4(host))
            out.append(d.encode_tower(answer))
        return out[:max_towers]

    def lookup(self, req: EptLookupRequest, local_host: str = "0.0.0.0"
               ) -> list[tuple[uuid.UUID, bytes, str]]:
        """Every entry ``req`` selects, in registration order: (object, tower, annotation),
        one per registered interface and transfer syntax."""
        by_if = req.inquiry_type in (RPC_C_EP_MATCH_BY_IF, RPC_C_EP_MATCH_BY_BOTH)
        by_obj = req.inquiry_type in (RPC_C_EP_MATCH_BY_OBJ, RPC_C_EP_MATCH_BY_BOTH)
        if req.inquiry_type not in (RPC_C_EP_ALL_ELTS, RPC_C_EP_MATCH_BY_IF,
                                    RPC_C_EP_MATCH_BY_OBJ, RPC_C_EP_MATCH_BY_BOTH):
            return []
        nil = uuid.UUID(int=0)
        out = []
        for reg in self.registrations():
            if by_if and (req.interface is None or reg.interface != req.interface.uuid
                          or not _version_matches(reg.version, req.interface, req.vers_option)):
                continue
            if by_obj and req.object not in (None, nil):  # every entry's object is nil
                continue
            host = reg.host if reg.host not in ("", "0.0.0.0", "::") else local_host
            for name, syntax in d.TRANSFER_SYNTAXES.items():
                if name in reg.syntaxes:
                    tower = d.TcpTower(d.SyntaxId(reg.interface, *reg.version), syntax,
                                       reg.port, _ipv4(host))
                    out.append((nil, d.encode_tower(tower), ""))
        return out

    def _ept_lookup(self, conn: Connection, stub: bytes) -> Reply:
        try:
            req = decode_ept_lookup_request(stub)
        except d.PduError:
            return Reply.fault(d.RPC_X_BAD_STUB_DATA)  # MS-RPCE 3.1.3.5.2
        start = 0
        if req.entry_handle != _NULL_HANDLE:
            if req.entry_handle[:4] != _LOOKUP_MARK:
                return Reply.fault(d.NCA_S_FAULT_CONTEXT_MISMATCH)
            start = struct.unpack_from("<I", req.entry_handle, 4)[0]
        entries = self.lookup(req, conn.local[0])
        page = entries[start:start + max(req.max_ents, 0)]
        if not page:  # nothing selected (or nothing left to a handle that outlived a change)
            return Reply.stub(encode_ept_lookup_response([], req.max_ents,
                                                         EPT_S_NOT_REGISTERED))
        after = start + len(page)
        handle = _NULL_HANDLE if after >= len(entries) else (
            _LOOKUP_MARK + struct.pack("<I", after) + bytes(4) + secrets.token_bytes(8))
        return Reply.stub(encode_ept_lookup_response(page, req.max_ents, 0, handle))

    # the Handler protocol of server.rpc

    def interfaces(self) -> dict[uuid.UUID, tuple[int, int, frozenset[str]]]:
        return {EPM_INTERFACE: (*EPM_VERSION, frozenset({"ndr"}))}

    def call(self, conn: Connection, interface: uuid.UUID, opnum: int, stub: bytes,
             ndr64: bool) -> Reply:
        if opnum == OP_EPT_MAP:
            try:
                req = decode_ept_map_request(stub)
            except d.PduError:
                return Reply.fault(d.RPC_X_BAD_STUB_DATA)  # MS-RPCE 3.1.3.5.2
            towers: list[bytes] = []
            if req.map_tower is not None:
                try:
                    towers = self.map(d.decode_tcp_tower(req.map_tower), req.max_towers,
                                      conn.local[0])
                except d.PduError:
                    towers = []  # not an ncacn_ip_tcp tower: nothing registered for it
            status = 0 if towers else EPT_S_NOT_REGISTERED
            return Reply.stub(encode_ept_map_response(towers, req.max_towers, status))
        if opnum == OP_EPT_LOOKUP:
            return self._ept_lookup(conn, stub)
        if opnum == OP_EPT_LOOKUP_HANDLE_FREE:
            if len(stub) < 20:
                return Reply.fault(d.RPC_X_BAD_STUB_DATA)
            return Reply.stub(_NULL_HANDLE + struct.pack("<I", 0))
        return Reply.fault(d.NCA_S_OP_RNG_ERROR)

    def connection_lost(self, conn: Connection) -> None:
        pass

    # lifecycle

    @property
    def address(self) -> tuple[str, int]:
        return self.server.address

    def start(self) -> EndpointMapper:
        self.server.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        self.server.stop(timeout)

    def __enter__(self) -> EndpointMapper:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
