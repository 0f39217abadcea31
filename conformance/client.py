"""A RemoteRead (MS-MQRR) and qmmgmt (MS-MQMR) client over impacket's DCE/RPC runtime, with
the NDR of wire/impacket_ndr.py: the second NDR implementation, meeting the reference
server's at the wire; and the helpers of ``mqconform call``.

How it reads::

    with RpcClient(timeout=10) as client:
        client.connect("ncacn_ip_tcp:127.0.0.1[2103]")          # or without [port]: ept_map
        opened = client.call(c.R_OpenQueue(pQueueFormat=qf, dwAccess=c.MQ_RECEIVE_ACCESS))
        client.call(c.R_CloseQueue(pphContext=opened.pphContext))

Sources: MS-MQRR 2.1 and MS-MQMR 2.1 (ncacn_ip_tcp, dynamic endpoints, so the endpoint mapper
gives the port), MS-MQRR 3.1.4.1 and 3.2.4.1 (R_GetServerPort: the client MAY rebind to the
port it returns), MS-MQRR 2.2 / MS-MQMR 2.2 (NDR and NDR64 for RemoteRead, NDR only for
qmmgmt), C706 12.6.4.7 and MS-RPCE 2.2.2.8 (fault PDU: the status follows alloc_hint,
p_cont_id, cancel_count and a reserved octet), C706 12.6.3.1 (common header, PFC_LAST_FRAG).

Decisions:

1. Faults. Every fault PDU the server answers a call with becomes that call's typed Result
   with ``raised=True`` and ``status`` the fault status, whatever the method: model/calls.py
   describes failures of the void methods this way, and a suite comparing results wants a
   value, not an exception, for the methods whose failures MS-MQRR leaves to the RPC runtime
   (an unknown context handle, a bad stub). Out parameters keep their defaults.
2. One association (one TCP connection, one bind) per interface, opened on first use; for
   RemoteRead the transfer syntax is NDR64 when ``ndr64`` is set (only NDR64 is offered, so a
   server that lacks it rejects the bind), qmmgmt always binds NDR (MS-MQMR 2.2).
3. The port: from the endpoint ``ncacn_ip_tcp:host[port]``; without one, from the endpoint
   mapper at host[epm_port] (impacket's ``epm.hept_map``, NDR floor: the port is the same for
   both syntaxes); ``follow_server_port`` then calls R_GetServerPort and rebinds RemoteRead to
   the port it names (MS-MQRR 3.2.4.1).
4. Timeouts: ``timeout`` bounds connecting and each call; a call that blocks in the server by
   design (R_StartReceive, R_StartTransactionalReceive) gets ``ulTimeout`` added, or no bound
   for INFINITE. A timed-out or broken association is closed, never reused: the server has run
   its rundown (MS-MQRR 3.1.6.2) and its context handles are gone; the next call raises until
   ``connect`` is called again.
5. Responses are bounded (``max_response`` octets of stub, default 64 MiB); fragments are
   reassembled here rather than in impacket, whose receive loop has no bound and reports a
   fault status only as text.
6. Verification trailers (``verification_trailer=True``): the first request of each
   association carries one after its stub, as Windows clients send it (MS-RPCE 2.2.2.13:
   rpc_sec_vt_pcontext naming the interface and transfer syntax bound, rpc_sec_vt_header2
   repeating the request's header, both marked must-process; no bitmask, as the bind did not
   negotiate header signing). Under signing or sealing the trailer is signed or sealed with
   the stub, which is what it is for.
7. A signature altered in transit (``alter_next_signature``): the next request PDU sent on an
   association that signs (packet integrity or privacy) has one octet of its NTLM checksum
   changed after impacket signs it (MS-NLMP 2.2.2.9.1: version 4 octets, checksum 8, sequence
   number 4), as a network path that corrupts or forges it would; what the recorder holds is
   what was sent. The association is closed after that call: the client's sequence number
   went on, whatever the server did with its own.
8. Another security context named (``name_another_security_context``): the next request of an
   association that signs names, in its sec_trailer, an auth_context_id other than the one its
   bind set up (MS-RPCE 2.2.2.11), and is signed as sent, so only the context it names is
   wrong; or (``auth3``) the rpc_auth_3 that completes the next association's NTLM handshake
   names another one (MS-RPCE 2.2.2.10; nothing signs an rpc_auth_3's trailer, so it is
   changed on its way). The association is closed after that call, as in decision 7.
9. An object named (``name_an_object``): the next request to an interface carries an object
   UUID (C706 12.6.4.9: PFC_OBJECT_UUID and the object field after the opnum), outside what
   packet privacy seals; RemoteRead and qmmgmt define no objects, so a server dispatches it
   as any other request.
"""

from __future__ import annotations

import dataclasses
import json
import re
import socket
import struct
import types
import uuid
from collections.abc import Callable
from typing import Any

from impacket.dcerpc.v5 import epm, transport
from impacket.dcerpc.v5.rpcrt import DCERPC_v5, DCERPCException
from impacket.uuid import uuidtup_to_bin

from mqconform.model import calls as c
from mqconform.model import mqmr
from mqconform.model.formats import (
    FormatNameError,
    MgmtObject,
    MgmtObjectType,
    parse_format_name,
    to_queue_format,
)
from mqconform.model.status import STATUS_NAMES
from mqconform.wire import dcerpc as d
from mqconform.wire.impacket_ndr import (
    NDR64_SYNTAX,
    NDR_SYNTAX,
    DecodeError,
    EncodeError,
    decode_response,
    encode_request,
)

__all__ = [
    "RpcClient", "RpcError", "ConnectError", "RpcTimeout", "ConnectionLost", "ProtocolError",
    "EncodeError", "DecodeError", "Endpoint", "parse_endpoint", "ArgumentError",
    "call_from_arguments", "result_to_dict", "format_result", "METHODS",
]

_INTERFACES = {c.REMOTEREAD: (str(c.REMOTEREAD_UUID), "1.0"),
               c.QMMGMT: (str(c.QMMGMT_UUID), "1.0")}
_PTYPE_RESPONSE, _PTYPE_FAULT, _PTYPE_AUTH3 = 2, 3, 16  # C706 12.6.4, MS-RPCE 2.2.2.10
_PFC_LAST_FRAG = 0x02  # C706 12.6.3.1
_HEADER = 16  # the common header (C706 12.6.3.1)


class RpcError(Exception):
    """A call that could not be made or completed; the message is one line."""


class ConnectError(RpcError):
    """The endpoint could not be reached, the endpoint mapper did not know the interface, or
    the bind was rejected."""


class RpcTimeout(RpcError):
    """No answer within the timeout; the association is closed."""


class ConnectionLost(RpcError):
    """The server closed the connection, or the association was closed earlier."""


class ProtocolError(RpcError):
    """The server answered with something that is not a response or fault PDU we can read."""


class _Fault(Exception):
    def __init__(self, status: int):
        super().__init__(f"fault 0x{status:08x}")
        self.status = status


# ============================================================================== endpoints


@dataclasses.dataclass(frozen=True)
class Endpoint:
    """``ncacn_ip_tcp:host[port]``; ``port`` None means: ask the endpoint mapper."""

    host: str
    port: int | None = None

    def __str__(self) -> str:
        return f"ncacn_ip_tcp:{self.host}[{'' if self.port is None else self.port}]"


_ENDPOINT = re.compile(r"ncacn_ip_tcp:([^\[\]\s]+)(?:\[(\d*)\])?")


def parse_endpoint(text: str) -> Endpoint:
    """Parse a string binding ``ncacn_ip_tcp:HOST[PORT]`` (MS-MQRR 2.1: ncacn_ip_tcp only);
    ``ArgumentError`` if it is not one."""
    m = _ENDPOINT.fullmatch(text.strip())
    if m is None:
        raise ArgumentError(f"endpoint {text!r} is not ncacn_ip_tcp:HOST[PORT] "
                            f"(MS-MQRR 2.1, MS-MQMR 2.1)")
    port = int(m.group(2)) if m.group(2) else None
    if port is not None and not 1 <= port <= 65535:
        raise ArgumentError(f"endpoint port {port} is not 1-65535")
    return Endpoint(m.group(1), port)


# ============================================================================== associations


class _Dce(DCERPC_v5):
    """impacket's connection-oriented runtime with our receive (decision 5), and a bind that
    can join an existing association group (impacket always asks for a new one)."""

    max_response = 64 << 20
    join_assoc_group = 0
    assoc_group = 0

    def bind(self, *args, **kwargs):
        from impacket.dcerpc.v5 import rpcrt

        original = rpcrt.MSRPCBind
        group = self.join_assoc_group

        class _Bind(original):
            def __init__(self, data=None, alignment=0):
                super().__init__(data, alignment)
                if data is None and group:
                    self["assoc_group"] = group  # C706 12.6.4.3: join that association group

        rpcrt.MSRPCBind = _Bind
        if self.shift_auth3:
            self._shift_auth3()
        try:
            ack = super().bind(*args, **kwargs)
        finally:
            rpcrt.MSRPCBind = original
        try:  # bind() returns the header; the bind_ack is its body (C706 12.6.4.4)
            self.assoc_group = int(rpcrt.MSRPCBindAck(ack.getData())["assoc_group"])
        except Exception:  # noqa: BLE001 - impacket's structures raise anything on bad data
            self.assoc_group = 0
        return ack

    #: decision 8: added to the auth_context_id of the next request's sec_trailer before it
    #: is signed, and of the rpc_auth_3 the next bind sends
    shift_next_request = 0
    shift_auth3 = 0

    def _transport_send(self, rpc_packet, forceWriteAndx=0, forceRecv=0):
        shift, self.shift_next_request = self.shift_next_request, 0
        if not shift:
            return super()._transport_send(rpc_packet, forceWriteAndx, forceRecv)
        from impacket.dcerpc.v5 import rpcrt

        original = rpcrt.SEC_TRAILER

        class _Shifted(original):  # impacket sets auth_ctx_id, then signs the PDU holding it
            def __setitem__(self, key, value):
                super().__setitem__(key, value + shift if key == "auth_ctx_id" else value)

        rpcrt.SEC_TRAILER = _Shifted
        try:
            return super()._transport_send(rpc_packet, forceWriteAndx, forceRecv)
        finally:
            rpcrt.SEC_TRAILER = original

    def _shift_auth3(self) -> None:
        """Decision 8: the next rpc_auth_3 sent names auth_context_id + shift_auth3."""
        shift, self.shift_auth3 = self.shift_auth3, 0

        def shifted(pdu: bytearray) -> None:
            frag_length, auth_length = struct.unpack_from("<HH", pdu, 8)
            at = frag_length - auth_length - d.SEC_TRAILER_SIZE + 4
            struct.pack_into("<L", pdu, at,
                             (struct.unpack_from("<L", pdu, at)[0] + shift) & 0xFFFFFFFF)

        _change_next_sent(self._transport, shifted,
                          lambda data: len(data) > _HEADER and data[2] == _PTYPE_AUTH3)

    def recv(self):
        stub = bytearray()
        while True:
            header = self._transport.recv(count=_HEADER)
            version, _minor, ptype, flags = header[0], header[1], header[2], header[3]
            if version != 5:
                raise ProtocolError(f"PDU version {version}, not 5 (C706 12.6.3.1)")
            if header[4] & 0xF0 != 0x10:  # drep: integers little-endian (C706 14.1)
                raise ProtocolError("big-endian NDR is not supported")
            frag_length, auth_length = struct.unpack_from("<HH", header, 8)
            if frag_length < _HEADER + 8:
                raise ProtocolError(f"frag_length {frag_length} is shorter than a header")
            body = self._transport.recv(count=frag_length - _HEADER)
            if ptype == _PTYPE_FAULT:  # C706 12.6.4.7: alloc_hint, p_cont_id, cancel, status
                if len(body) < 12:
                    raise ProtocolError("fault PDU without a status")
                raise _Fault(struct.unpack_from("<L", body, 8)[0])
            if ptype != _PTYPE_RESPONSE:
                raise ProtocolError(f"PDU type {ptype} where a response was expected")
            end = len(body) - (auth_length + 8 if auth_length else 0)
            if end < 8:
                raise ProtocolError("auth_length exceeds the PDU")
            clear = body[8:end]
            if auth_length:
                clear = self._check_verifier(header, body, end)
            stub += clear
            if len(stub) > self.max_response:
                raise ProtocolError(f"response exceeds {self.max_response} octets")
            if flags & _PFC_LAST_FRAG:
                return bytes(stub)


    #: the server's PDUs verified so far (MS-NLMP 3.4.4: each direction counts its own)
    server_seq = 0

    def _check_verifier(self, header: bytes, body: bytes, end: int) -> bytes:
        """A response's verifier (MS-RPCE 2.2.2.11): at packet integrity the server's NTLM
        signature must verify over the PDU, at packet privacy the body is decrypted first;
        returns the stub octets without the verifier's padding. (impacket's own recv neither
        verifies nor keeps a sequence for the server's side: its keys are read here.)"""
        auth_level, pad = body[end + 1], body[end + 2]
        clear = body[8:end]
        flags = getattr(self, "_DCERPC_v5__flags", 0)
        key = getattr(self, "_DCERPC_v5__serverSigningKey", None)
        handle = getattr(self, "_DCERPC_v5__serverSealingHandle", None)
        if auth_level >= 5 and key is not None and handle is not None:
            from impacket import ntlm

            if auth_level == 6:
                clear = handle(clear)
            signed = header + body[:8] + clear + body[end:-16]
            want = ntlm.SIGN(flags, key, signed, self.server_seq, handle).getData()
            self.server_seq += 1
            if want != body[-16:]:
                raise ProtocolError("the response's NTLM signature does not verify "
                                    "(MS-NLMP 3.4.4)")
        if pad > len(clear):
            raise ProtocolError("auth_pad_length exceeds the stub")
        return clear[:len(clear) - pad]


def _change_next_sent(rpc_transport: Any, change: Callable[[bytearray], None],
                      wanted: Callable[[bytes], bool] = lambda data: True) -> None:
    """Decisions 7 and 8: the next PDU ``rpc_transport`` sends that is ``wanted`` goes out
    changed in place by ``change`` (what a recorder's tap sees is what was sent); the transport
    sends as before after it."""
    send = rpc_transport.send

    def changed(data, forceWriteAndx=0, forceRecv=0):
        if wanted(data):
            rpc_transport.send = send
            pdu = bytearray(data)
            change(pdu)
            data = bytes(pdu)
        return send(data, forceWriteAndx, forceRecv)

    rpc_transport.send = changed


def _sendall(self, data, forceWriteAndx=0, forceRecv=0):
    """impacket's TCPTransport.send calls socket.send, which may send part of a large PDU."""
    self.get_socket().sendall(data)


@dataclasses.dataclass(frozen=True)
class Credentials:
    """Who a client authenticates as (NTLM, MS-RPCE 2.2.1.1.7 RPC_C_AUTHN_WINNT) and at
    which level (MS-RPCE 2.2.1.1.8: connect 2, integrity 5, privacy 6). ``repr`` never shows
    the password or hash."""

    user: str
    password: str = dataclasses.field(default="", repr=False)
    domain: str = ""
    nt_hash: str = dataclasses.field(default="", repr=False)  # 32 hex digits, or ""
    level: int = 5


def _open_dce(host: str, port: int, timeout: float | None, recorder: Any = None,
              credentials: Credentials | None = None) -> _Dce:
    rpc_transport = transport.DCERPCTransportFactory(f"ncacn_ip_tcp:{host}[{port}]")
    rpc_transport.set_connect_timeout(timeout)
    rpc_transport.send = types.MethodType(_sendall, rpc_transport)
    if credentials is not None:
        rpc_transport.set_credentials(credentials.user, credentials.password,
                                      credentials.domain, "", credentials.nt_hash)
    dce = _Dce(rpc_transport)
    if credentials is not None:
        from impacket.dcerpc.v5 import rpcrt

        dce.set_auth_type(rpcrt.RPC_C_AUTHN_WINNT)
        dce.set_auth_level(credentials.level)
    try:
        dce.connect()
    except (DCERPCException, OSError) as e:
        raise ConnectError(f"cannot connect to ncacn_ip_tcp:{host}[{port}]: "
                           f"{_one_line(e)}") from None
    if recorder is not None:
        _tap(rpc_transport, recorder.connection(rpc_transport.get_socket()))
    return dce


def _tap(rpc_transport: Any, tap: Any) -> None:
    """Hand the octets of this connection to a recorder's tap (captures.recorder.Tap: ``sent``,
    ``received``, ``closed``; wire does not import captures)."""
    send, recv, disconnect = rpc_transport.send, rpc_transport.recv, rpc_transport.disconnect

    def _send(data, forceWriteAndx=0, forceRecv=0):
        send(data, forceWriteAndx, forceRecv)
        tap.sent(data)

    def _recv(forceRecv=0, count=0):
        data = recv(forceRecv, count)
        tap.received(data)
        return data

    def _disconnect():
        tap.closed()
        return disconnect()

    rpc_transport.send, rpc_transport.recv, rpc_transport.disconnect = _send, _recv, _disconnect


def _trailer(assoc: _Association, opnum: int, stub_size: int) -> bytes:
    """Decision 6: the stub padding and verification trailer the association's next request
    (its call_id and presentation context) carries."""
    dce = assoc.dce
    interface = d.SyntaxId(uuid.UUID(_INTERFACES[assoc.interface][0]), 1, 0)
    syntax = d.TRANSFER_SYNTAXES["ndr64" if assoc.ndr64 else "ndr"]
    call_id = dce._DCERPC_v5__callid  # the one impacket's send() gives the request
    return bytes(-stub_size % 4) + d.encode_verification_trailer(
        [d.vt_pcontext(interface, syntax),
         d.vt_header2(call_id=call_id, context_id=dce._ctx, opnum=opnum)])


def _one_line(e: BaseException) -> str:
    text = " ".join(str(e).split())
    return text or type(e).__name__


class _Association:
    """One bound presentation context of one interface on one TCP connection."""

    def __init__(self, host: str, port: int, interface: str, ndr64: bool,
                 timeout: float | None, max_response: int, assoc_group: int = 0,
                 recorder: Any = None, credentials: Credentials | None = None,
                 shift_auth3: int = 0):
        self.interface = interface
        self.port = port
        self.dce = _open_dce(host, port, timeout, recorder, credentials)
        self.dce.max_response = max_response
        self.dce.join_assoc_group = assoc_group
        self.dce.shift_auth3 = shift_auth3  # decision 8
        syntax = NDR64_SYNTAX if ndr64 else NDR_SYNTAX
        try:
            self.dce.bind(uuidtup_to_bin(_INTERFACES[interface]), transfer_syntax=syntax)
        except (DCERPCException, _Fault, ProtocolError, OSError) as e:
            self.close()
            raise ConnectError(f"bind to {interface} on port {port} "
                               f"({'NDR64' if ndr64 else 'NDR'}) failed: {_one_line(e)}") \
                from None
        self.ndr64 = self.dce.transfer_syntax == uuidtup_to_bin(NDR64_SYNTAX)
        self.closed = False
        self.trailer_sent = False  # decision 6

    def alter_next_request(self) -> None:
        """Decision 7: one octet of the next request PDU's checksum is changed on its way."""

        def altered(pdu: bytearray) -> None:
            pdu[-5] ^= 0x01  # the checksum's last octet (MS-NLMP 2.2.2.9.1)

        _change_next_sent(self.dce.get_rpc_transport(), altered)

    def close(self, wait: float = 0.0) -> None:
        """``wait`` > 0: send the FIN, then wait that long for the server's (a server that
        runs down the connection's handles before it closes its side has then done so)."""
        self.closed = True
        try:  # shutdown first: it wakes a call blocked in recv and sends the FIN at once
            sock = self.dce.get_rpc_transport().get_socket()
            if wait > 0:
                sock.shutdown(socket.SHUT_WR)
                sock.settimeout(wait)
                while sock.recv(4096):
                    pass
            sock.shutdown(socket.SHUT_RDWR)
        except (OSError, AttributeError):
            pass
        try:
            self.dce.disconnect()
        except (OSError, DCERPCException, AttributeError):
            pass


# ============================================================================== the client


class RpcClient:
    """RemoteRead and qmmgmt over ncacn_ip_tcp (module doc: decisions 1-9)."""

    def __init__(self, timeout: float | None = 10.0, epm_port: int = 135,
                 max_response: int = 64 << 20, assoc_group: int = 0, recorder: Any = None,
                 credentials: Credentials | None = None, verification_trailer: bool = False):
        """``assoc_group``: join this association group (another client's ``assoc_group``),
        so that context handles it opened are valid here, as when a Windows client cancels
        a receive over a second connection of the same binding. ``recorder``: every
        connection opened (endpoint mapper too) is tapped by ``recorder.connection(sock)``
        (captures.recorder.Recorder), which then sees every octet sent and received.
        ``verification_trailer``: decision 6."""
        self.join_assoc_group = assoc_group
        self.verification_trailer = verification_trailer
        self.recorder = recorder
        #: NTLM credentials for RemoteRead and qmmgmt (None: unauthenticated); the endpoint
        #: mapper is always asked without
        self.credentials = credentials
        self.timeout = timeout
        self.epm_port = epm_port
        self.max_response = max_response
        self.endpoint: Endpoint | None = None
        self.ndr64 = False
        self._ports: dict[str, int] = {}
        self._associations: dict[str, _Association] = {}
        self._alter: set[str] = set()  # decision 7: interfaces whose next request is altered
        #: decision 8: interfaces whose next request, or whose handshake, names another
        #: security context
        self._another_context: set[str] = set()
        self._another_auth3: set[str] = set()
        self._objects: dict[str, uuid.UUID] = {}  # decision 9: the next request's object

    def alter_next_signature(self, interface: str = c.REMOTEREAD) -> None:
        """Decision 7. Raises ArgumentError where the association does not sign (no
        credentials, or the connect level), as there is no signature to alter."""
        if self.credentials is None or self.credentials.level < 5:
            raise ArgumentError("the association does not sign its requests (packet "
                                "integrity or privacy): there is no signature to alter")
        self._alter.add(interface)

    def name_another_security_context(self, interface: str = c.REMOTEREAD,
                                      auth3: bool = False) -> None:
        """Decision 8: the next request to ``interface`` names another auth_context_id than
        its bind's, signed as sent; with ``auth3``, the rpc_auth_3 of the handshake that binds
        ``interface`` does (it must not be bound yet). Raises ArgumentError where the
        association does not sign."""
        if self.credentials is None or self.credentials.level < 5:
            raise ArgumentError("the association does not sign its requests (packet "
                                "integrity or privacy): no security context to name")
        if auth3:
            if interface in self._associations:
                raise ArgumentError(f"{interface} is bound already: its rpc_auth_3 was sent")
            self._another_auth3.add(interface)
        else:
            self._another_context.add(interface)

    def name_an_object(self, object_uuid: uuid.UUID, interface: str = c.REMOTEREAD) -> None:
        """Decision 9: the next request to ``interface`` names ``object_uuid``."""
        self._objects[interface] = object_uuid

    # ---------------------------------------------------------------- connecting

    def connect(self, endpoint: str | Endpoint, ndr64: bool = False,
                interface: str = c.REMOTEREAD, follow_server_port: bool = False) -> None:
        """Bind ``interface`` at ``endpoint`` now (other interfaces bind on first use).
        ``ndr64`` selects NDR64 for RemoteRead. Raises ConnectError (or ArgumentError for a
        malformed endpoint string)."""
        self.close()
        self.endpoint = endpoint if isinstance(endpoint, Endpoint) else parse_endpoint(endpoint)
        self.ndr64 = ndr64
        self._ports = {}
        if interface not in _INTERFACES:
            raise ArgumentError(f"unknown interface {interface!r}")
        self._association(interface)
        if follow_server_port:
            self._follow_server_port()

    def _port(self, interface: str) -> int:
        if self.endpoint.port is not None:
            return self._ports.get(interface, self.endpoint.port)
        if interface not in self._ports:
            self._ports[interface] = self._map(interface)
        return self._ports[interface]

    def _map(self, interface: str) -> int:
        """ept_map through impacket (MS-MQRR 2.1: dynamic endpoints)."""
        host = self.endpoint.host
        dce = _open_dce(host, self.epm_port, self.timeout, self.recorder)
        try:
            binding = epm.hept_map(host, uuidtup_to_bin(_INTERFACES[interface]),
                                   dataRepresentation=uuidtup_to_bin(NDR_SYNTAX),
                                   protocol="ncacn_ip_tcp", dce=dce)
            port = int(re.search(r"\[(\d+)\]", binding).group(1))
        except _Fault as e:
            raise ConnectError(f"endpoint mapper at {host}[{self.epm_port}]: fault "
                               f"0x{e.status:08x}") from None
        except Exception as e:  # noqa: BLE001 - impacket's epm raises anything it meets
            raise ConnectError(f"endpoint mapper at {host}[{self.epm_port}] gave no port for "
                               f"{interface}: {_one_line(e)}") from None
        finally:
            try:
                dce.disconnect()
            except (OSError, DCERPCException):
                pass
        if not 1 <= port <= 65535:
            raise ConnectError(f"endpoint mapper gave port {port} for {interface}")
        return port

    def _follow_server_port(self) -> None:
        """MS-MQRR/3.2.4.1/R3, MS-MQRR/3.2.4.1/R4: R_GetServerPort, then rebind to its port."""
        result = self.call(c.R_GetServerPort())
        port = result.status
        if result.raised or not 1 <= port <= 65535:
            raise ConnectError(f"R_GetServerPort returned {port:#x}"
                               + (" (raised)" if result.raised else ""))
        if port != self._associations[c.REMOTEREAD].port:
            self._associations.pop(c.REMOTEREAD).close()
            self._ports[c.REMOTEREAD] = port
            self._association(c.REMOTEREAD)

    def _association(self, interface: str) -> _Association:
        if self.endpoint is None:
            raise ConnectionLost("not connected: call connect() first")
        assoc = self._associations.get(interface)
        if assoc is not None:
            if assoc.closed:
                raise ConnectionLost(f"the {interface} association was closed; "
                                     f"connect() again")
            return assoc
        ndr64 = self.ndr64 and interface == c.REMOTEREAD  # decision 2
        shift = 1 if interface in self._another_auth3 else 0  # decision 8
        self._another_auth3.discard(interface)
        assoc = _Association(self.endpoint.host, self._port(interface), interface, ndr64,
                             self.timeout, self.max_response, self.join_assoc_group,
                             self.recorder, self.credentials, shift_auth3=shift)
        self._associations[interface] = assoc
        return assoc

    @property
    def assoc_group(self) -> int:
        """The association group the server gave the RemoteRead association (0 if none)."""
        assoc = self._associations.get(c.REMOTEREAD)
        return 0 if assoc is None else assoc.dce.assoc_group

    def syntax(self, interface: str = c.REMOTEREAD) -> str | None:
        """'NDR' or 'NDR64' for a bound interface, None if not bound."""
        assoc = self._associations.get(interface)
        return None if assoc is None else ("NDR64" if assoc.ndr64 else "NDR")

    # ---------------------------------------------------------------- calling

    def call(self, typed_call: c.Call, timeout: float | None = None) -> c.Result:
        """Send one typed call and return its typed result. A fault is a Result with
        ``raised=True`` (decision 1). Raises EncodeError for a call that cannot be encoded,
        DecodeError for a response that is not a valid encoding, RpcError otherwise."""
        call_type = type(typed_call)
        if call_type not in c.RESULTS:
            raise EncodeError(call_type.__name__, "not a RemoteRead or qmmgmt method")
        assoc = self._association(call_type.interface)
        stub = encode_request(typed_call, assoc.ndr64)
        if self.verification_trailer and not assoc.trailer_sent:
            stub += _trailer(assoc, call_type.opnum, len(stub))
            assoc.trailer_sent = True
        sock = assoc.dce.get_rpc_transport().get_socket()
        altered = call_type.interface in self._alter
        if altered:  # decision 7
            self._alter.discard(call_type.interface)
            assoc.alter_next_request()
        if call_type.interface in self._another_context:  # decision 8
            self._another_context.discard(call_type.interface)
            assoc.dce.shift_next_request = 1
            altered = True  # closed after the call, as decision 7's
        try:
            sock.settimeout(self._call_timeout(typed_call, timeout))
            named = self._objects.pop(call_type.interface, None)  # decision 9
            assoc.dce.call(call_type.opnum, stub, None if named is None else named.bytes_le)
            answer = assoc.dce.recv()
        except _Fault as fault:
            return c.RESULTS[call_type](status=fault.status, raised=True)
        except TimeoutError:
            assoc.close()
            raise RpcTimeout(f"{call_type.__name__}: no answer within "
                             f"{self._call_timeout(typed_call, timeout)} s; association "
                             f"closed") from None
        except ProtocolError:
            assoc.close()
            raise
        except (OSError, DCERPCException) as e:
            assoc.close()
            raise ConnectionLost(f"{call_type.__name__}: {_one_line(e)}") from None
        finally:
            if altered:  # decision 7: the client's sequence number went on
                assoc.close()
        return decode_response(call_type, answer, assoc.ndr64)

    def _call_timeout(self, typed_call: c.Call, timeout: float | None) -> float | None:
        """Decision 4."""
        base = self.timeout if timeout is None else timeout
        wait = getattr(typed_call, "ulTimeout", None)
        if timeout is not None or base is None or wait is None:
            return base
        if wait == c.INFINITE_TIMEOUT:
            return None
        return base + wait / 1000

    # ---------------------------------------------------------------- closing

    def close(self, wait: float = 0.0) -> None:
        """Close every association (``wait``: see _Association.close)."""
        for assoc in self._associations.values():
            assoc.close(wait)
        self._associations = {}

    def __enter__(self) -> RpcClient:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


# ============================================================================== mqconform call


class ArgumentError(ValueError):
    """A method name, field name or value given on the command line that cannot be used;
    the message is one line."""


METHODS: dict[str, type[c.Call]] = c.BY_NAME


def _constants() -> dict[str, int]:
    """Names a value may be written as: the integer constants of model.calls (access modes,
    ulAction values, RR_ACK, ...), model.mqmr's VARTYPEs and property identifiers, and
    MgmtObjectType's members."""
    names: dict[str, int] = {}
    for module, keep in ((c, lambda n: n.isupper() or n.startswith("st")),
                         (mqmr, lambda n: n.startswith(("VT_", "PROPID_")))):
        for name, value in vars(module).items():
            if keep(name) and isinstance(value, int) and not isinstance(value, bool):
                names[name] = value
    names.update({m.name: int(m) for m in MgmtObjectType})
    return names


def _integer(text: str, field: str) -> int:
    names = _constants()
    total = 0
    for part in text.split("|"):
        part = part.strip()
        if part in names:
            total |= names[part]
            continue
        try:
            total |= int(part, 0)
        except ValueError:
            raise ArgumentError(f"{field}: {text!r} is not an integer (decimal, 0x hex) or a "
                                f"constant name") from None
    return total


def _hex(text: str, field: str, size: int | None = None) -> bytes:
    cleaned = text.strip().removeprefix("0x").replace(":", "").replace("-", "")
    try:
        value = bytes.fromhex(cleaned)
    except ValueError:
        raise ArgumentError(f"{field}: {text!r} is not hex octets") from None
    if size is not None and len(value) != size:
        raise ArgumentError(f"{field}: {len(value)} octets, expected {size} ({2 * size} hex "
                            f"digits)")
    return value


def _queue_format(text: str, field: str):
    try:
        return to_queue_format(parse_format_name(text))
    except FormatNameError as e:
        raise ArgumentError(f"{field}: {e}") from None


def _mgmt_object(text: str, field: str) -> MgmtObject:
    """MACHINE / SESSION (or MGMT_MACHINE / MGMT_SESSION), or a queue's format name."""
    word = text.strip().upper().removeprefix("MGMT_")
    if word == "MACHINE":
        return MgmtObject(MgmtObjectType.MGMT_MACHINE)
    if word == "SESSION":
        return MgmtObject(MgmtObjectType.MGMT_SESSION)
    return MgmtObject(MgmtObjectType.MGMT_QUEUE, pQueueFormat=_queue_format(text, field))


def _list(text: str) -> list[str]:
    return [p for p in (x.strip() for x in text.split(",")) if p]


_HANDLES = ("phContext", "pphContext", "phContextFrom")


def _value(name: str, text: str) -> Any:
    if name in _HANDLES:
        if text.strip().upper() == "NULL":
            return None
        return _hex(text, name, c.CONTEXT_HANDLE_SIZE)
    if name == "pTransactionId":
        return _hex(text, name, c.XACTUOW_SIZE)
    if name == "pbPropagationToken":
        return _hex(text, name)
    if name == "pQueueFormat":
        return _queue_format(text, name)
    if name == "pObjectFormat":
        return _mgmt_object(text, name)
    if name == "pClientId":
        try:
            return uuid.UUID(text)
        except ValueError:
            raise ArgumentError(f"pClientId: {text!r} is not a GUID") from None
    if name == "lpwszAction":
        return text
    if name == "aProp":
        return tuple(_integer(p, f"aProp[{i}]") for i, p in enumerate(_list(text)))
    if name == "apVar":
        return tuple(c.PropVariant(_integer(p, f"apVar[{i}]"))
                     for i, p in enumerate(_list(text)))
    return _integer(text, name)


def call_from_arguments(method: str, pairs: list[str]) -> c.Call:
    """The typed call ``method`` with the fields of ``KEY=VALUE`` strings (the rest keep
    model.calls' defaults). For R_QMMgmtGetInfo, ``cp`` defaults to the length of aProp and
    apVar to one VT_NULL per property; for R_QMEnlistRemoteTransaction, cbPropagationToken to
    the length of pbPropagationToken. Raises ArgumentError, also for a value that does not
    fit its field on the wire."""
    cls = METHODS.get(method)
    if cls is None:
        raise ArgumentError(f"unknown method {method!r}; one of: {', '.join(METHODS)}")
    fields = [f.name for f in dataclasses.fields(cls)]
    values: dict[str, Any] = {}
    for pair in pairs:
        key, eq, text = pair.partition("=")
        key = key.strip()
        if not eq:
            raise ArgumentError(f"{pair!r} is not KEY=VALUE")
        if key not in fields:
            raise ArgumentError(f"{method} has no field {key!r}; fields: "
                                f"{', '.join(fields) or '(none)'}")
        values[key] = _value(key, text)
    if cls is c.R_QMMgmtGetInfo:
        props = values.get("aProp", ())
        values.setdefault("cp", len(props))
        values.setdefault("apVar", tuple(c.PropVariant(1) for _ in props))  # VT_NULL
    if cls is c.R_QMEnlistRemoteTransaction and "pbPropagationToken" in values:
        values.setdefault("cbPropagationToken", len(values["pbPropagationToken"]))
    call = cls(**values)
    try:  # a value that does not fit its field is bad input too
        encode_request(call)
    except EncodeError as e:
        raise ArgumentError(str(e)) from None
    return call


def _jsonable(value: Any) -> Any:
    if isinstance(value, (bytes, bytearray)):
        return value.hex()
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, c.PropVariant):
        return {"vt": value.vt, "vt_name": _vt_name(value.vt), "value": _jsonable(value.value)}
    if isinstance(value, c.SectionBuffer):
        return {"SectionBufferType": value.SectionBufferType,
                "type_name": c.SECTION_TYPES.get(value.SectionBufferType),
                "SectionSizeAlloc": value.SectionSizeAlloc, "SectionSize": value.SectionSize,
                "pSectionBuffer": _jsonable(value.pSectionBuffer)}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value


def _vt_name(vt: int) -> str:
    names = {v: n for n, v in vars(mqmr).items()
             if n.startswith("VT_") and isinstance(v, int) and n != "VT_VECTOR"}
    base = names.get(vt & ~mqmr.VT_VECTOR, f"0x{vt & ~mqmr.VT_VECTOR:04x}")
    return f"VT_VECTOR|{base}" if vt & mqmr.VT_VECTOR else base


def _status_name(status: int) -> str | None:
    return STATUS_NAMES.get(status)


def result_to_dict(result: c.Result) -> dict[str, Any]:
    """The result as JSON-ready values: octets as hex, GUIDs as text, PROPVARIANTs and
    SectionBuffers as objects."""
    out: dict[str, Any] = {"result": type(result).__name__, "status": result.status,
                           "status_hex": f"0x{result.status:08x}",
                           "status_name": _status_name(result.status), "raised": result.raised}
    for f in dataclasses.fields(result):
        if f.name not in ("status", "raised"):
            out[f.name] = _jsonable(getattr(result, f.name))
    return out


def _short(data: bytes | None, limit: int = 32) -> str:
    if data is None:
        return "NULL"
    shown = data[:limit].hex()
    return shown + ("..." if len(data) > limit else "")


def format_result(result: c.Result) -> str:
    """The result as lines of text: status (hex, name), context handles as hex, section
    buffers summarized, PROPVARIANTs with their VARTYPE names."""
    name = _status_name(result.status)
    status = f"0x{result.status:08x}" + (f" {name}" if name else "")
    if isinstance(result, c.R_GetServerPortResult):
        status = f"{result.status} ({status})"
    lines = [f"{type(result).__name__}", f"  status: {status}"
             + ("  (raised: RPC fault)" if result.raised else "")]
    for f in dataclasses.fields(result):
        if f.name in ("status", "raised"):
            continue
        value = getattr(result, f.name)
        if f.name == "ppPacketSections":
            lines.append(f"  {f.name}: {len(value)} section(s)")
            for i, sb in enumerate(value):
                kind = c.SECTION_TYPES.get(sb.SectionBufferType, str(sb.SectionBufferType))
                lines.append(f"    [{i}] {kind} alloc={sb.SectionSizeAlloc} "
                             f"size={sb.SectionSize} data={_short(sb.pSectionBuffer)}")
        elif f.name == "apVar":
            lines.append(f"  {f.name}: {len(value)} value(s)")
            for i, pv in enumerate(value):
                shown = json.dumps(_jsonable(pv.value), ensure_ascii=False)
                lines.append(f"    [{i}] {_vt_name(pv.vt)} {shown}")
        elif isinstance(value, (bytes, bytearray)) or value is None:
            lines.append(f"  {f.name}: {_short(value, 64)}")
        elif isinstance(value, int):
            lines.append(f"  {f.name}: {value} (0x{value:x})")
        else:
            lines.append(f"  {f.name}: {value}")
    return "\n".join(lines)
