"""The directors' passwords (scrypt, in a file), login throttling and sessions (cookies).

The password file holds one line per director, ``NAME:scrypt$N$r$p$SALT$HASH`` (base64),
written by ``bridge-table console passwd FILE --name NAME``; the password itself is never
stored. A file of one line without a name (``scrypt$...``, what ``passwd FILE`` without
``--name`` writes) is one password shared by every director, the name at login not checked.
Wrong passwords are throttled per client address (``LoginThrottle``): one check at a time
and half a second per wrong one from an address, a lock-out after twenty in a row; other
addresses (the director's own login) are not held up. A login gives a
random session token in an HttpOnly, SameSite=Strict cookie, kept in memory (a restart
asks for the password again), and a CSRF token that every state-changing request repeats.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import os
import re
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from starlette.requests import Request

from controller.web.files import warn_if_readable

COOKIE = "bt_session"
SESSION_SECONDS = 12 * 3600
_N, _R, _P = 2**14, 8, 1


class PasswordFileError(Exception):
    pass


def hash_password(password: str, *, n: int = _N, r: int = _R, p: int = _P) -> str:
    salt = os.urandom(16)
    digest = hashlib.scrypt(password.encode(), salt=salt, n=n, r=r, p=p, dklen=32)
    b64 = base64.b64encode
    return f"scrypt${n}${r}${p}${b64(salt).decode()}${b64(digest).decode()}"


def verify_password(password: str, line: str) -> bool:
    try:
        kind, n, r, p, salt, digest = line.strip().split("$")
        if kind != "scrypt":
            return False
        want = base64.b64decode(digest)
        got = hashlib.scrypt(password.encode(), salt=base64.b64decode(salt), n=int(n),
                             r=int(r), p=int(p), dklen=len(want))
    except ValueError:
        return False
    return hmac.compare_digest(got, want)


def write_password_file(path: Path, password: str) -> None:
    """Write the hash, readable by its owner only."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(hash_password(password) + "\n")
    os.chmod(path, 0o600)


def read_password_file(path: Path) -> str:
    try:
        line = path.read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise PasswordFileError(f"cannot read the password file {path}: {exc}") from None
    if not line.startswith("scrypt$") or line.count("$") != 5:
        raise PasswordFileError(f"{path} is not a password file "
                                f"(make one with: bridge-table console passwd {path})")
    return line


_NAME = re.compile(r"[^\s:#][^:\n\r\t]{0,58}[^\s:]|[^\s:#]")


def check_account_name(name: str) -> str:
    """A director's login name: 1-60 printable characters, no ``:``, no spaces at the ends."""
    if not _NAME.fullmatch(name) or not name.isprintable():
        raise PasswordFileError(f"a director's name is 1-60 printable characters without "
                                f"':' and without spaces at either end, not {name!r}")
    return name


def write_account(path: Path, name: str, password: str) -> bool:
    """Add director ``name`` to the password file, or change their password (True: new).
    The other lines stay as they are; the file is readable by its owner only."""
    check_account_name(name)
    lines: list[str] = []
    if path.exists():
        read_accounts(path)      # a file that is not a password file is not overwritten
        lines = [x for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
    kept = [x for x in lines if not x.startswith(f"{name}:")]
    kept.append(f"{name}:{hash_password(password)}")
    tmp = path.with_name(f".{path.name}.new")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write("\n".join(kept) + "\n")
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)
    return len(kept) > len(lines)


def read_accounts(path: Path) -> dict[str, str]:
    """Name -> scrypt line; a line without a name (one shared password) is under ``""``.
    A file readable by others is warned about (as the broker's password files are)."""
    warn_if_readable(path, "the directors' password hashes")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise PasswordFileError(f"cannot read the password file {path}: {exc}") from None
    accounts: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line:
            continue
        name, _, digest = line.rpartition(":") if not line.startswith("scrypt$") \
            else ("", "", line)
        if not digest.startswith("scrypt$") or digest.count("$") != 5 or \
                (name and not _NAME.fullmatch(name)):
            raise PasswordFileError(f"{path} line {number} is not a director's password "
                                    f"(make the file with: bridge-table console passwd "
                                    f"{path} --name NAME)")
        accounts[name] = digest
    if not accounts:
        raise PasswordFileError(f"{path} holds no password (make one with: bridge-table "
                                f"console passwd {path} --name NAME)")
    return accounts


class LoginThrottle:
    """Wrong passwords slowed per client address, never for everyone.

    From one address one check runs at a time and a wrong password costs ``delay`` seconds
    (at most two guesses a second); after ``limit`` wrong ones in a row the address is
    refused for ``lockout`` seconds. A right password clears its count.
    """

    def __init__(self, delay: float = 0.5, limit: int = 20, lockout: float = 60.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.delay, self.limit, self.lockout, self.clock = delay, limit, lockout, clock
        self._locks: dict[str, asyncio.Lock] = {}
        self._fails: dict[str, tuple[int, float]] = {}   # address -> (wrong in a row, last)

    def wait_left(self, address: str) -> float:
        """Seconds this address must still wait (0: it may try)."""
        count, last = self._fails.get(address, (0, 0.0))
        if count < self.limit:
            return 0.0
        left = last + self.lockout - self.clock()
        if left <= 0:
            self._fails.pop(address, None)
            return 0.0
        return left

    def lock(self, address: str) -> asyncio.Lock:
        if len(self._locks) > 10_000:     # many addresses: forget the idle ones
            self._locks = {a: x for a, x in self._locks.items() if x.locked()}
        return self._locks.setdefault(address, asyncio.Lock())

    def failed(self, address: str) -> None:
        if len(self._fails) > 10_000:
            now = self.clock()
            self._fails = {a: v for a, v in self._fails.items()
                           if v[1] + self.lockout > now}
        count, _ = self._fails.get(address, (0, 0.0))
        self._fails[address] = (count + 1, self.clock())

    def succeeded(self, address: str) -> None:
        self._fails.pop(address, None)


@dataclass(eq=False)
class Session:
    name: str
    csrf: str
    expires: float
    #: the session's open event streams (their queues): a logout ends them
    streams: set[asyncio.Queue[Any]] = field(default_factory=set)
    ended: bool = False

    def end(self) -> None:
        """The session is over: each of its event streams wakes and ends."""
        self.ended = True
        for queue in list(self.streams):
            while not queue.empty():
                queue.get_nowait()
            queue.put_nowait(None)


class Sessions:
    def __init__(self) -> None:
        self._sessions: dict[str, Session] = {}

    def create(self, name: str) -> tuple[str, Session]:
        token = secrets.token_urlsafe(32)
        session = Session(name=name, csrf=secrets.token_urlsafe(16),
                          expires=time.time() + SESSION_SECONDS)
        self._sessions[token] = session
        return token, session

    def get(self, request: Request) -> Session | None:
        token = request.cookies.get(COOKIE)
        if not token:
            return None
        session = self._sessions.get(token)
        if session is None or session.expires < time.time():
            expired = self._sessions.pop(token, None)
            if expired is not None:
                expired.end()     # its event streams end with it
            return None
        return session

    def drop(self, request: Request) -> None:
        token = request.cookies.get(COOKIE)
        session = self._sessions.pop(token, None) if token else None
        if session is not None:
            session.end()
