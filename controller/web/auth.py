"""The director's password (scrypt, in a file) and login sessions (cookies).

The password file holds one line ``scrypt$N$r$p$SALT$HASH`` (base64), written by
``bridge-table console passwd FILE``; the password itself is never stored. A login gives a
random session token in an HttpOnly, SameSite=Strict cookie, kept in memory (a restart
asks for the password again), and a CSRF token that every state-changing request repeats.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import secrets
import time
from dataclasses import dataclass
from pathlib import Path

from starlette.requests import Request

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


@dataclass
class Session:
    name: str
    csrf: str
    expires: float


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
            self._sessions.pop(token, None)
            return None
        return session

    def drop(self, request: Request) -> None:
        token = request.cookies.get(COOKIE)
        if token:
            self._sessions.pop(token, None)
