"""Who may call the reference server, and what each caller may do with each queue.

The provisioning file's ``security`` section (absent: unauthenticated mode, for local
development: every caller is anonymous and may do everything, as before)::

    security:
      authentication: required        # or none (the default)
      level: integrity                # the least a caller must use: connect, integrity, privacy
      domain: MQREF                   # the NTLM target name (default: the computer name)
      users:
        - name: alice
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

Secrets: passwords are turned into NT hashes when the file is read and are kept nowhere else;
no message, log line or report of the server shows a password or hash (Account's repr names
the user only); ``password_env`` keeps the password out of the file altogether.
"""

from __future__ import annotations

import re
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


@dataclass
class Security:
    authentication: str = "none"  # none | required
    level: int = LEVELS["integrity"]
    domain: str = ""
    accounts: dict[str, Account] = field(default_factory=dict)  # lower-case name -> Account
    access: dict[str, Access] = field(default_factory=dict)  # lower-case queue path -> Access
    configured: bool = False  # the provisioning file has a security section

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
    unknown = set(spec) - {"authentication", "level", "domain", "users"}
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
        user_domain = user.get("domain", "")
        if not isinstance(user_domain, str):
            _fail(f"{where}.domain", "a string")
        accounts[name.lower()] = Account(name, user_domain, hashed, admin)
    if authentication == "required" and not accounts:
        _fail("security.users", "authentication: required needs at least one user")
    return Security(authentication, LEVELS[level], domain, accounts, configured=True)


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
