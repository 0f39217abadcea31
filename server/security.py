"""Who may call the reference server, and what each caller may do with each queue.

The provisioning file's ``security`` section (absent: unauthenticated mode, for local
development: every caller is anonymous and may do everything, as before)::

    security:
      authentication: required        # or none (the default)
      level: integrity                # the least a caller must use: connect, integrity, privacy
      domain: MQREF                   # the NTLM target name (default: the computer name)
      lockout: {failures: 5, window: 300, backoff: 60}   # the defaults (below)
      users:
        - name: alice
          domain: MQREF               # the account's domain (default: security.domain)
          password_env: MQ_ALICE      # or password: ..., or nt_hash: <32 hex digits>
          administrator: true         # may use qmmgmt (MS-MQMR 3: "MUST have administrator
                                      # privileges on the server machine")
        - name: bob
          password: bob-secret
    queues:
      - path: private$\\orders
        access: {peek: ["*"], receive: [alice], purge: [alice]}

Access lists (MS-MQRR 2.1: "The server SHOULD use this identity to perform method-specific
access checks"; the rights are those of MQQUEUEACCESSMASK in MS-MQMQ 2.2.24, reduced to
three): ``peek`` opens with MQ_PEEK_ACCESS; ``receive`` opens with MQ_RECEIVE_ACCESS (and
peeks: in MSMQ the receive right includes peek), opens for move and administration access;
``purge`` runs R_PurgeQueue. ``*`` is every authenticated user; ``anonymous`` the
unauthenticated caller (only meaningful with ``authentication: none``). A queue without an
``access`` entry lets every admitted caller do everything.

Domains: an AUTHENTICATE message's domain (MS-NLMP 2.2.1.3 DomainName) must be the account's,
compared without regard to case; an empty one stands for the account's own (a logon to a local
account may name no domain). Any other domain is refused as an unknown user, whatever the
password.

Failed logons are throttled per client, a client being an address and a user name (``lockout``):
after ``failures`` failed logons of one user from one address within ``window`` seconds, that
user's logons from that address are refused for ``backoff`` seconds without their proof being
checked (the next request faults with access denied), even with the right password; other
users, and the same user from other addresses, are not affected. ``failures: 0`` turns it off.
The pair, not the address alone, is the key, so that callers behind one address (a NAT, the
loopback) cannot lock each other out, nor can anyone lock a user out from elsewhere.

Secrets: passwords are turned into NT hashes when the file is read and are kept nowhere else;
no message, log line or report of the server shows a password or hash (Account's repr names
the user only); ``password_env`` keeps the password out of the file altogether.
"""

from __future__ import annotations

import re
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mqconform.server.ntlm import LEVELS, Account, nt_hash
from mqconform.wire.auth import secret_from

RIGHTS = ("peek", "receive", "purge")
EVERYONE, ANONYMOUS = "*", "anonymous"


class SecurityError(ValueError):
    """A security section that cannot be used; names where and why, never a secret."""


@dataclass(frozen=True)
class Access:
    """One queue's access list: right -> user names (lower case), ``*`` or ``anonymous``."""

    rights: dict[str, frozenset[str]]

    def allows(self, right: str, user: str | None) -> bool:
        names = self.rights.get(right, frozenset())
        if right == "peek" and self.allows("receive", user):
            return True
        if user is None:
            return ANONYMOUS in names
        return EVERYONE in names or user.lower() in names


class Throttle:
    """Failed logons per (address, user) and the back-off they earn (module doc)."""

    #: pairs tracked at most; past it the ones with nothing recent are forgotten
    MAX_KEYS = 4096

    def __init__(self, failures: int = 5, window: float = 300.0, backoff: float = 60.0,
                 clock: Callable[[], float] = time.monotonic):
        self.failures, self.window, self.backoff = failures, window, backoff
        self._clock = clock
        self._lock = threading.Lock()
        self._failed: dict[tuple[str, str], deque[float]] = {}
        self._until: dict[tuple[str, str], float] = {}

    def refused(self, address: str, user: str) -> bool:
        """Whether this client is in its back-off now."""
        if self.failures <= 0:
            return False
        key = (address, user.lower())
        with self._lock:
            until = self._until.get(key)
            if until is None:
                return False
            if self._clock() < until:
                return True
            del self._until[key]
            return False

    def failed(self, address: str, user: str) -> None:
        """A failed logon: the ``failures``-th within ``window`` starts a back-off."""
        if self.failures <= 0:
            return
        key, now = (address, user.lower()), self._clock()
        with self._lock:
            times = self._failed.setdefault(key, deque())
            times.append(now)
            while times and times[0] <= now - self.window:
                times.popleft()
            if len(times) >= self.failures:
                self._until[key] = now + self.backoff
                times.clear()
            if len(self._failed) > self.MAX_KEYS:
                self._forget(now)

    def succeeded(self, address: str, user: str) -> None:
        with self._lock:
            self._failed.pop((address, user.lower()), None)

    def _forget(self, now: float) -> None:
        for key in [k for k, t in self._failed.items() if not t or t[-1] <= now - self.window]:
            del self._failed[key]
        for key in [k for k, until in self._until.items() if until <= now]:
            del self._until[key]


@dataclass
class Security:
    authentication: str = "none"  # none | required
    level: int = LEVELS["integrity"]
    domain: str = ""
    accounts: dict[str, Account] = field(default_factory=dict)  # lower-case name -> Account
    access: dict[str, Access] = field(default_factory=dict)  # lower-case queue path -> Access
    configured: bool = False  # the provisioning file has a security section
    throttle: Throttle = field(default_factory=Throttle)

    @property
    def required(self) -> bool:
        return self.authentication == "required"

    def administrator(self, user: str | None) -> bool:
        account = self.accounts.get(user.lower()) if user else None
        return bool(account and account.administrator)

    def allows(self, pathname: str, right: str, user: str | None) -> bool:
        access = self.access.get(pathname.lower())
        return True if access is None else access.allows(right, user)


def _fail(where: str, why: str) -> None:
    raise SecurityError(f"{where}: {why}")


def parse_security(spec: Any, computer_name: str) -> Security:
    """The ``security`` section (module doc)."""
    if spec is None:
        return Security(domain=computer_name)
    if not isinstance(spec, dict):
        _fail("security", "must be a mapping")
    unknown = set(spec) - {"authentication", "level", "domain", "users", "lockout"}
    if unknown:
        _fail("security", f"unknown key(s) {sorted(unknown)}")
    authentication = spec.get("authentication", "none")
    if authentication not in ("none", "required"):
        _fail("security.authentication", "none or required")
    level = spec.get("level", "integrity")
    if level not in LEVELS:
        _fail("security.level", f"one of {', '.join(LEVELS)}")
    domain = spec.get("domain", computer_name)
    if not isinstance(domain, str) or not domain or "\\" in domain:
        _fail("security.domain", "a domain or computer name")
    users = spec.get("users") or []
    if not isinstance(users, list):
        _fail("security.users", "must be a list")
    accounts: dict[str, Account] = {}
    for i, user in enumerate(users):
        where = f"security.users[{i}]"
        if not isinstance(user, dict):
            _fail(where, "must be a mapping")
        unknown = set(user) - {"name", "domain", "password", "password_env", "nt_hash",
                               "administrator"}
        if unknown:
            _fail(where, f"unknown key(s) {sorted(unknown)}")
        name = user.get("name")
        if not isinstance(name, str) or not re.fullmatch(r"[^\\/:*?\"<>|@\s]{1,64}", name) \
                or name.lower() in (EVERYONE, ANONYMOUS):
            _fail(f"{where}.name", "a user name (no \\ / : * ? \" < > | @ or spaces)")
        if name.lower() in accounts:
            _fail(f"{where}.name", f"{name} is listed twice")
        try:
            password, hashed_hex = secret_from(user, where)
        except ValueError as exc:
            raise SecurityError(str(exc)) from None
        hashed = nt_hash(password) if password else bytes.fromhex(hashed_hex)
        admin = user.get("administrator", False)
        if not isinstance(admin, bool):
            _fail(f"{where}.administrator", "true or false")
        user_domain = user.get("domain", domain)
        if not isinstance(user_domain, str) or not user_domain or "\\" in user_domain:
            _fail(f"{where}.domain", "a domain or computer name")
        accounts[name.lower()] = Account(name, user_domain, hashed, admin)
    if authentication == "required" and not accounts:
        _fail("security.users", "authentication: required needs at least one user")
    return Security(authentication, LEVELS[level], domain, accounts, configured=True,
                    throttle=_lockout(spec.get("lockout", {})))


def _lockout(spec: Any) -> Throttle:
    """The ``lockout`` entry: failures (0 turns it off), window and backoff in seconds."""
    if not isinstance(spec, dict):
        _fail("security.lockout", "a mapping of failures, window, backoff")
    unknown = set(spec) - {"failures", "window", "backoff"}
    if unknown:
        _fail("security.lockout", f"unknown key(s) {sorted(unknown)}")
    failures = spec.get("failures", 5)
    if not isinstance(failures, int) or isinstance(failures, bool) or not 0 <= failures <= 1000:
        _fail("security.lockout.failures", "an integer from 0 (off) to 1000")
    numbers = {}
    for key, default in (("window", 300.0), ("backoff", 60.0)):
        value = spec.get(key, default)
        if not isinstance(value, int | float) or isinstance(value, bool) or \
                not 0 < value <= 86400:
            _fail(f"security.lockout.{key}", "a number of seconds above 0, up to 86400")
        numbers[key] = float(value)
    return Throttle(failures, numbers["window"], numbers["backoff"])


def parse_access(spec: Any, where: str, security: Security) -> Access:
    """A queue's ``access`` entry (module doc)."""
    if not isinstance(spec, dict):
        _fail(where, "must be a mapping of peek, receive, purge to lists of user names")
    unknown = set(spec) - set(RIGHTS)
    if unknown:
        _fail(where, f"unknown right(s) {sorted(unknown)}; the rights are {', '.join(RIGHTS)}")
    rights = {}
    for right, names in spec.items():
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            _fail(f"{where}.{right}", "a list of user names")
        for n in names:
            if n.lower() not in (EVERYONE, ANONYMOUS) and n.lower() not in security.accounts:
                _fail(f"{where}.{right}", f"{n} is not a user of the security section")
        rights[right] = frozenset(n.lower() for n in names)
    return Access(rights)
