"""How every client of the broker tells a refused login and a shared login from an outage.

Two faults used to look like a broker that cannot be reached, retried for ever at WARNING:

- **a refused login** (a wrong password, a user the broker does not know, one its ACL
  refuses): the broker answers CONNACK with *bad user name or password* or *not authorised*.
  Before the broker ever accepted this client it is a configuration error, which only an
  edit cures: :meth:`LoginWatch.failed` raises :class:`LoginRefused` (the command logs it at
  ERROR and exits 2, ``controller.commandline``). A broker that accepted the login and later
  refuses it (a password being rotated, the broker restarted with another password file) is
  retried as any outage is: the client may not go away in the middle of a session.
- **two clients on one login**: with the venue's ``use_username_as_clientid`` (and with any
  fixed client id) mosquitto closes the older connection when the newer one logs in ("Client
  X already connected, closing old connection"); both reconnect and take the session from
  each other for ever. MQTT 3.1.1 gives the closed one no reason, so a connection closed within
  seconds of being accepted, several times running with the broker accepting each new one
  at once (a broker restarting refuses some tries in between), is taken for that
  (:meth:`LoginWatch.lost`), and said in words that name the fix: one login per client
  (``bridge-table broker-config`` writes one for each). MQTT 5's *session taken over* is
  taken at once.

Standard library only: the firmware bridge, the service and the apps all use it.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable

from controller.commandline import ControllerError

__all__ = ["LOGIN_REFUSED", "SESSION_TAKEN_OVER", "LoginRefused", "LoginWatch",
           "bridge_login_problem", "reason_code"]

#: the CONNACK reason codes of a refused login (MQTT 5; paho gives MQTT 3.1.1's return
#: codes 4 and 5 as these too)
LOGIN_REFUSED = {134: "bad user name or password", 135: "not authorised"}
#: MQTT 5's DISCONNECT reason code when another connection took the client id
SESSION_TAKEN_OVER = 142
#: a connection that ends this soon after being accepted counts towards a shared login
SHORT_LIFE = 5.0
#: ... and this many such ends in a row are taken for one: two clients on one login take the
#: connection from each other every second or so, while a broker restarted a few times
#: running (by hand, by systemd, by tests/test_delivery.py), each time before the client's
#: first retry, must not be taken for one (the client would wait 10 s between tries)
CLASHES = 5


class LoginRefused(ControllerError):
    """The broker refused this client's login before it ever accepted it: a configuration
    error (exit 2), not an outage."""


def reason_code(error: BaseException) -> int | None:
    """The MQTT reason code an error carries (aiomqtt's ``MqttCodeError.rc``, paho's
    ``ReasonCode``, the controller's ``MqttError.rc``), or None. A bare int ``rc`` is one of
    paho's own error numbers, not a reason code from the broker: it is not taken."""
    rc = getattr(error, "rc", None)
    value = getattr(rc, "value", None)
    return value if isinstance(value, int) else None


class LoginWatch:
    """One client's view of its login: ``failed`` after a connection that did not come up,
    ``up`` when one did, ``lost`` when one that was up ended.

    ``who`` names the client in messages ("the relay"), ``username`` the login it used."""

    def __init__(self, log: logging.Logger, url: str, username: str | None, *,
                 who: str = "this client", clock: Callable[[], float] = time.monotonic,
                 short_life: float = SHORT_LIFE, clashes: int = CLASHES) -> None:
        self.log = log
        self.url = url
        self.username = username
        self.who = who
        self.clock = clock
        self.short_life = short_life
        self.clashes = clashes
        #: the broker accepted this client's login at least once
        self.accepted = False
        self._up_since: float | None = None
        self._short_ends = 0
        #: how many times a shared login was said (tests, the status line)
        self.clashes_said = 0
        #: a refusal after an acceptance already said in this outage (said once)
        self._refusal_said = False
        #: ``lost`` just ran: the ``failed`` that follows is that connection's end, not a
        #: connection that did not come up
        self._just_lost = False

    def refusal(self, error: BaseException) -> str | None:
        """Why the broker refused the login, when ``error`` is a refused login."""
        code = reason_code(error)
        return LOGIN_REFUSED.get(code) if code is not None else None

    def failed(self, error: BaseException) -> None:
        """A connection that did not come up (or, after :meth:`lost`, the one that ended):
        raise :class:`LoginRefused` when the broker refused the login and never accepted
        it; anything else is for the caller to retry. A broker that could not be reached
        in between is an outage: the connections closed soon after are not counted as a
        shared login (a broker restarted again and again is not one)."""
        if self._just_lost:
            self._just_lost = False
        else:
            self._short_ends = 0
        why = self.refusal(error)
        if why is None:
            return
        login = f"user {self.username!r}" if self.username else "no user name"
        if self.accepted:
            if not self._refusal_said:   # once per outage: the retries go on every second
                self._refusal_said = True
                self.log.error("%s refused the login of %s (%s) it had accepted before; "
                               "retrying (a password being changed?)", self.url, login, why)
            return
        raise LoginRefused(
            f"{self.url} refused the login of {self.who} ({login}): {why}. Check the "
            f"credentials file (--credentials or $BRIDGE_TABLE_MQTT_CREDENTIALS), the user "
            f"name and the password against the broker's password file "
            f"(bridge-table broker-config writes both); not retried")

    def up(self) -> None:
        """The broker accepted the login."""
        self.accepted = True
        self._up_since = self.clock()
        self._refusal_said = False

    def lost(self, error: BaseException | None = None) -> bool:
        """A connection that was up ended; True when this looks like a second client on the
        same login (said at ERROR, in words that name the fix): the caller may wait
        longer before it tries again."""
        since, self._up_since = self._up_since, None
        if since is None:
            return False
        self._just_lost = True
        taken = reason_code(error) == SESSION_TAKEN_OVER if error is not None else False
        if taken or self.clock() - since < self.short_life:
            self._short_ends += 1
        else:
            self._short_ends = 0
        if not taken and self._short_ends < self.clashes:
            return False
        self.clashes_said += 1
        if self.clashes_said == 1 or self.clashes_said % 10 == 0:
            login = f"login {self.username!r}" if self.username else "client id"
            self.log.error(
                "%s: the broker closed %s's connection %d times within %.0f s of accepting "
                "it: another client is connected with the same %s, and each takes the "
                "connection from the other. Give every client its own login (bridge-table "
                "broker-config writes one per table, console, relay, vugraph and scorer)",
                self.url, self.who, max(self._short_ends, 1), self.short_life, login)
        return True


#: the users ``bridge-table broker-config`` writes for a table's or a station's bridge
_BRIDGE_LOGIN = re.compile(r"(table|verify)-(.+)\Z")
#: its users for everything else (``controller.venue.config.accounts``)
_OTHER_LOGIN = re.compile(r"(controller|director|broadcast|public|scorer|vugraph)\Z|"
                          r"controller-part\d+of\d+\Z|table-.+-controller\Z|"
                          r"verify-.+-check\Z")


def bridge_login_problem(username: str | None, table: str) -> str | None:
    """Why a bridge of ``table`` may not log in as ``username``, for the logins
    ``bridge-table broker-config`` writes: ``table-T`` and ``verify-T`` speak for T only (the
    broker's ACL refuses every other table's topics, so such a bridge would spool for ever),
    and the other programs' logins are not a bridge's. Any other name (a venue's own broker)
    is not judged here."""
    if not username:
        return None
    if _OTHER_LOGIN.match(username):
        return (f"the login {username!r} is not a table's (broker-config writes table-{table} "
                f"for table {table}'s bridge): use clients/table-{table}.toml")
    found = _BRIDGE_LOGIN.match(username)
    if found is not None and found.group(2) != table:
        return (f"the login {username!r} speaks for table {found.group(2)}, not table "
                f"{table} ([table] id): the broker would refuse every message of this "
                f"bridge; use clients/{found.group(1)}-{table}.toml, or correct [table] id")
    return None
