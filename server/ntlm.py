"""The server side of NTLM (NTLMv2 only) for DCE/RPC: the acceptor's three legs and the
per-PDU signature and sealing of MS-RPCE 2.2.2.11 / 3.3.1.5.2 at the packet-integrity and
packet-privacy levels.

    acceptor = NtlmAcceptor(accounts, target="MQREF")
    challenge = acceptor.negotiate(negotiate_token)     # in the bind_ack's auth_value
    account = acceptor.authenticate(authenticate_token, admit)  # from rpc_auth_3; AuthError
    acceptor.verify(pdu_without_signature, signature)    # each signed request PDU
    acceptor.sign(pdu_without_signature)                 # each response PDU

Facts (MS-NLMP; cited by section):

- Messages (2.2.1.1-2.2.1.3) are parsed and built with impacket's NTLM structures; the
  CHALLENGE carries TargetName and TargetInfo (NetBIOS and DNS computer and domain names, the
  time: 2.2.2.1), and grants of the client's flags only those this acceptor implements:
  UNICODE, NTLM, extended session security (required), TARGET_INFO, 128-bit, key exchange,
  SIGN, SEAL, ALWAYS_SIGN, VERSION.
- NTLMv2 (3.3.2): ResponseKeyNT = HMAC_MD5(MD4(UNICODE(password)), UNICODE(Upper(user) +
  domain)); NTProofStr = HMAC_MD5(ResponseKeyNT, ServerChallenge + temp), compared in constant
  time with the first 16 octets of NtChallengeResponse; SessionBaseKey =
  HMAC_MD5(ResponseKeyNT, NTProofStr); KeyExchangeKey = SessionBaseKey; with KEY_EXCH the
  ExportedSessionKey is RC4(KeyExchangeKey, EncryptedRandomSessionKey). An LM or NTLMv1
  response (24 octets) is refused, as is an anonymous AUTHENTICATE.
- MIC (3.1.5.1.2): when the client's MsvAvFlags says a MIC is present, it must equal
  HMAC_MD5(ExportedSessionKey, NEGOTIATE + CHALLENGE + AUTHENTICATE with the MIC zeroed).
- Signing and sealing with extended session security (3.4.4.2, 3.4.3): the client-to-server
  and server-to-client signing and sealing keys (SIGNKEY, SEALKEY); the checksum
  HMAC_MD5(SigningKey, SeqNum + Message)[0:8], RC4-encrypted with the sealing key's stream when
  key exchange was negotiated; each direction counts its own SeqNum from 0. For DCE/RPC the
  signed message is the whole PDU up to the signature (header, body, padding, sec_trailer),
  and sealing encrypts the body and its padding (as the Windows runtime and impacket's client
  do).
- A received message that does not verify changes nothing (3.4.4: "If a received message does
  not contain the expected SeqNum, an error MUST be returned to the receiving application, and
  SeqNum is not incremented"): neither the receive SeqNum nor the client-to-server RC4 stream,
  which both the unsealing (3.4.3) and the checksum's encryption (3.4.4.2) draw on, moves past
  a rejected PDU, so the client's next correctly signed message verifies. The stream is read
  through a look-ahead of keystream octets (``_Rc4Stream``): a PDU's unsealing and checksum take
  octets tentatively, ``verify`` keeps them when the signature holds and gives them back when
  it does not.
"""

from __future__ import annotations

import calendar
import hashlib
import hmac
import os
import struct
import time
from collections.abc import Callable
from dataclasses import dataclass

from impacket import ntlm

from mqconform.wire.auth import AUTH_LEVELS

#: MS-RPCE 2.2.1.1.7 RPC_C_AUTHN_WINNT: the NTLM security provider
AUTHN_WINNT = 0x0A
#: MS-RPCE 2.2.1.1.8 authentication levels
LEVEL_NONE, LEVEL_CONNECT, LEVEL_CALL, LEVEL_PKT, LEVEL_INTEGRITY, LEVEL_PRIVACY = 1, 2, 3, 4, 5, 6
LEVELS = AUTH_LEVELS  # by name: connect, integrity, privacy
SIGNATURE_SIZE = 16  # MS-NLMP 2.2.2.9.1 NTLMSSP_MESSAGE_SIGNATURE (extended session security)

_GRANTED = (ntlm.NTLMSSP_NEGOTIATE_UNICODE | ntlm.NTLMSSP_NEGOTIATE_NTLM
            | ntlm.NTLMSSP_NEGOTIATE_EXTENDED_SESSIONSECURITY | ntlm.NTLMSSP_NEGOTIATE_128
            | ntlm.NTLMSSP_NEGOTIATE_KEY_EXCH | ntlm.NTLMSSP_NEGOTIATE_SIGN
            | ntlm.NTLMSSP_NEGOTIATE_SEAL | ntlm.NTLMSSP_NEGOTIATE_ALWAYS_SIGN
            | ntlm.NTLMSSP_NEGOTIATE_56)
_MSV_AV_FLAGS, _MIC_PRESENT = 0x0006, 0x00000002


class AuthError(Exception):
    """The client did not prove who it is; the text never contains a secret. ``user``: the
    user name the AUTHENTICATE message gave, when it could be read (a failed logon of that
    user, server/security.py Throttle)."""

    user: str | None = None


class Throttled(AuthError):
    """A logon refused before its proof is checked (too many failures, server/security.py)."""


@dataclass(frozen=True)
class Account:
    """One user the server knows: the NT hash only (MD4 of the password), never the password."""

    name: str
    domain: str
    nt_hash: bytes
    administrator: bool = False

    @property
    def identity(self) -> str:
        return f"{self.domain}\\{self.name}" if self.domain else self.name

    def __repr__(self) -> str:  # never print the hash
        return f"Account({self.identity!r}, administrator={self.administrator})"


def nt_hash(password: str) -> bytes:
    """MS-NLMP 3.3.1 NTOWFv1: MD4(UNICODE(password)) (impacket's MD4, which OpenSSL 3 lacks)."""
    return ntlm.compute_nthash(password)


class NtlmAcceptor:
    """One connection's NTLM security context (module doc)."""

    def __init__(self, accounts: dict[str, Account], target: str, computer: str):
        self.accounts = accounts  # lower-case user name -> Account
        self.target = target
        self.computer = computer
        self.account: Account | None = None
        self._negotiate = b""
        self._challenge = b""
        self._server_challenge = os.urandom(8)
        self.flags = 0
        self._user: str | None = None
        self._recv_seq = 0
        self._send_seq = 0

    # -- the three legs
    def negotiate(self, token: bytes) -> bytes:
        """NEGOTIATE -> CHALLENGE (MS-NLMP 3.2.5.1.1)."""
        try:
            message = ntlm.NTLMAuthNegotiate()
            message.fromString(token)
            flags = message["flags"]
        except Exception as exc:  # noqa: BLE001 - any malformed token is the client's error
            raise AuthError(f"malformed NTLM NEGOTIATE: {type(exc).__name__}") from None
        if token[:8] != b"NTLMSSP\0" or struct.unpack_from("<I", token, 8)[0] != 1:
            raise AuthError("not an NTLM NEGOTIATE message")
        if not flags & ntlm.NTLMSSP_NEGOTIATE_EXTENDED_SESSIONSECURITY:
            raise AuthError("the client does not offer extended session security (NTLMv1 "
                            "session security is not accepted)")
        self.flags = (flags & _GRANTED) | ntlm.NTLMSSP_NEGOTIATE_TARGET_INFO \
            | ntlm.NTLMSSP_REQUEST_TARGET | ntlm.NTLMSSP_TARGET_TYPE_SERVER \
            | ntlm.NTLMSSP_NEGOTIATE_VERSION
        av = ntlm.AV_PAIRS()
        av[ntlm.NTLMSSP_AV_HOSTNAME] = self.computer.encode("utf-16le")
        av[ntlm.NTLMSSP_AV_DNS_HOSTNAME] = self.computer.lower().encode("utf-16le")
        av[ntlm.NTLMSSP_AV_DOMAINNAME] = self.target.encode("utf-16le")
        av[ntlm.NTLMSSP_AV_DNS_DOMAINNAME] = self.target.lower().encode("utf-16le")
        av[ntlm.NTLMSSP_AV_TIME] = struct.pack(
            "<q", 116444736000000000 + calendar.timegm(time.gmtime()) * 10000000)
        pairs = av.getData()
        challenge = ntlm.NTLMAuthChallenge()
        name = self.target.encode("utf-16le")
        challenge["flags"] = self.flags
        challenge["domain_len"] = challenge["domain_max_len"] = len(name)
        challenge["domain_offset"] = 40 + 16
        challenge["challenge"] = self._server_challenge
        challenge["domain_name"] = name
        challenge["TargetInfoFields_len"] = challenge["TargetInfoFields_max_len"] = len(pairs)
        challenge["TargetInfoFields"] = pairs
        challenge["TargetInfoFields_offset"] = 40 + 16 + len(name)
        challenge["Version"] = b"\x0a\x00\x00\x00\x00\x00\x00\x0f"  # 10.0, NTLMSSP rev 15
        challenge["VersionLen"] = 8
        self._negotiate, self._challenge = token, challenge.getData()
        return self._challenge

    def authenticate(self, token: bytes, admit: Callable[[str], None] | None = None) -> Account:
        """AUTHENTICATE (MS-NLMP 3.2.5.1.2): the account it proves, and the session keys.
        ``admit(user)`` runs once the user name is read, before anything is checked: it
        raises Throttled to refuse the logon unverified. The domain the message gives must
        be the account's (case-insensitive; an empty one stands for the account's own, as a
        logon to a local account names none); another is refused as an unknown user."""
        try:
            return self._authenticate(token, admit)
        except AuthError as exc:
            if exc.user is None:
                exc.user = self._user
            raise

    def _authenticate(self, token: bytes, admit: Callable[[str], None] | None) -> Account:
        self._user = None
        if not self._challenge:
            raise AuthError("AUTHENTICATE before CHALLENGE")
        try:
            message = ntlm.NTLMAuthChallengeResponse()
            message.fromString(token)
            user = message["user_name"].decode("utf-16le")
            domain = message["domain_name"].decode("utf-16le")
            response = bytes(message["ntlm"])
            encrypted_key = bytes(message["session_key"])
            flags = message["flags"]
        except Exception as exc:  # noqa: BLE001
            raise AuthError(f"malformed NTLM AUTHENTICATE: {type(exc).__name__}") from None
        if not user:
            raise AuthError("anonymous NTLM logon refused")
        self._user = user
        if admit is not None:
            admit(user)
        account = self.accounts.get(user.lower())
        if account is None or (domain and account.domain.lower() != domain.lower()):
            raise AuthError(f"unknown user {domain}\\{user}" if domain else
                            f"unknown user {user}")
        if len(response) <= 24:
            raise AuthError(f"{user}: an LM or NTLMv1 response; only NTLMv2 is accepted")
        key_nt = hmac.new(account.nt_hash, (user.upper() + domain).encode("utf-16le"),
                          hashlib.md5).digest()
        proof, temp = response[:16], response[16:]
        expected = hmac.new(key_nt, self._server_challenge + temp, hashlib.md5).digest()
        if not hmac.compare_digest(proof, expected):
            raise AuthError(f"{user}: wrong password (NTLMv2 proof does not verify)")
        base_key = hmac.new(key_nt, proof, hashlib.md5).digest()
        if flags & ntlm.NTLMSSP_NEGOTIATE_KEY_EXCH and len(encrypted_key) == 16:
            from Cryptodome.Cipher import ARC4

            session_key = ARC4.new(base_key).decrypt(encrypted_key)
        else:
            session_key = base_key
        if _mic_present(temp):
            mic = bytes(message["MIC"])
            zeroed = _zero_mic(token)
            want = hmac.new(session_key, self._negotiate + self._challenge + zeroed,
                            hashlib.md5).digest()
            if len(mic) != 16 or not hmac.compare_digest(mic, want):
                raise AuthError(f"{user}: the AUTHENTICATE message's MIC does not verify")
        self.flags &= flags | ntlm.NTLMSSP_NEGOTIATE_TARGET_INFO  # what both sides agreed
        self._keys(session_key)
        self.account = account
        return account

    def _keys(self, session_key: bytes) -> None:
        from Cryptodome.Cipher import ARC4

        f = self.flags
        self._client_sign = ntlm.SIGNKEY(f, session_key, "Client")
        self._server_sign = ntlm.SIGNKEY(f, session_key, "Server")
        self._client_seal = _Rc4Stream(ntlm.SEALKEY(f, session_key, "Client"))
        self._server_seal = ARC4.new(ntlm.SEALKEY(f, session_key, "Server")).encrypt

    # -- per PDU
    def verify(self, message: bytes, signature: bytes) -> bool:
        """The client's signature over ``message`` (its next sequence number). True: the
        sequence number and the RC4 stream (this PDU's unsealing included) move on; False:
        both stay where they were before the PDU (MS-NLMP 3.4.4)."""
        want = ntlm.SIGN(self.flags, self._client_sign, message, self._recv_seq,
                         self._client_seal).getData()
        if not hmac.compare_digest(want, bytes(signature)):
            self._client_seal.rollback()
            return False
        self._client_seal.commit()
        self._recv_seq += 1
        return True

    def unseal(self, data: bytes) -> bytes:
        """Decrypt a sealed body (call before ``verify`` of the same PDU: one RC4 stream,
        taken for good only when ``verify`` succeeds)."""
        return self._client_seal(data)

    def sign(self, message: bytes) -> bytes:
        signature = ntlm.SIGN(self.flags, self._server_sign, message, self._send_seq,
                              self._server_seal).getData()
        self._send_seq += 1
        return signature

    def seal(self, data: bytes) -> bytes:
        """Encrypt a body (before ``sign`` of the same PDU)."""
        return self._server_seal(data)


class _Rc4Stream:
    """An RC4 handle (MS-NLMP 3.4: one stream per direction) whose octets are taken
    tentatively: ``commit`` keeps what was taken since the last commit, ``rollback`` gives it
    back. Keystream is generated ahead (RC4 over zeros) and XORed in, so a rollback costs
    nothing."""

    def __init__(self, key: bytes):
        from Cryptodome.Cipher import ARC4

        self._cipher = ARC4.new(key)
        self._ahead = bytearray()  # keystream generated, not yet committed
        self._taken = 0  # of which taken by the message under way

    def __call__(self, data: bytes) -> bytes:
        n = len(data)
        short = self._taken + n - len(self._ahead)
        if short > 0:
            self._ahead += self._cipher.encrypt(bytes(short))
        stream = self._ahead[self._taken:self._taken + n]
        self._taken += n
        mixed = int.from_bytes(data, "little") ^ int.from_bytes(stream, "little")
        return mixed.to_bytes(n, "little")

    def commit(self) -> None:
        del self._ahead[:self._taken]
        self._taken = 0

    def rollback(self) -> None:
        self._taken = 0


def _av_pairs(temp: bytes) -> dict[int, bytes]:
    """The AV pairs of an NTLMv2 client challenge (MS-NLMP 2.2.2.7: 28 octets, then pairs)."""
    out, i = {}, 28
    while i + 4 <= len(temp):
        av_id, length = struct.unpack_from("<HH", temp, i)
        if av_id == 0:
            break
        out[av_id] = temp[i + 4:i + 4 + length]
        i += 4 + length
    return out


def _mic_present(temp: bytes) -> bool:
    flags = _av_pairs(temp).get(_MSV_AV_FLAGS)
    return flags is not None and len(flags) == 4 and bool(
        struct.unpack("<I", flags)[0] & _MIC_PRESENT)


def _zero_mic(token: bytes) -> bytes:
    """The AUTHENTICATE message with its MIC zeroed: 64 octets of fields, NegotiateFlags,
    the 8-octet Version at 72, then the MIC at 80 (MS-NLMP 2.2.1.3)."""
    return token[:80] + bytes(16) + token[96:]
