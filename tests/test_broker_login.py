"""A refused login is a configuration error, and a shared login is said as such
(controller/broker/login.py; issue 43's "a wrong broker password" and "results and the
console knock each other off").

Every long-running client is started against a mosquitto configured by
``bridge-table broker-config`` with a credentials file whose password is wrong: each one
says so at ERROR and exits 2, where each retried for ever at WARNING before.
"""

from __future__ import annotations

import asyncio
import logging
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from broker import Mosquitto, free_port, venue_broker

from controller.broker.login import CLASHES, LoginRefused, LoginWatch
from controller.broker.settings import read_credentials, resolve

pytestmark = pytest.mark.timeout(240)

log = logging.getLogger("test_broker_login")


class _Code:
    def __init__(self, value: int) -> None:
        self.value = value


class _Refused(Exception):
    def __init__(self, value: int) -> None:
        super().__init__(f"code {value}")
        self.rc = _Code(value)


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


# -- the rules, without a broker ---------------------------------------------------------------

@pytest.mark.parametrize("code", [134, 135])
def test_a_login_refused_before_any_acceptance_is_raised(code: int) -> None:
    watch = LoginWatch(log, "mqtts://venue:8883", "director", who="the console")
    with pytest.raises(LoginRefused, match="refused the login of the console .*'director'"):
        watch.failed(_Refused(code))


def test_a_login_refused_after_an_acceptance_is_retried(
        caplog: pytest.LogCaptureFixture) -> None:
    watch = LoginWatch(log, "mqtts://venue:8883", "director")
    watch.up()
    watch.lost(None)
    for _ in range(5):
        watch.failed(_Refused(135))      # said, not raised: the caller retries
    assert caplog.text.count("it had accepted before") == 1     # once, not every second


def test_other_failures_are_left_to_the_caller() -> None:
    watch = LoginWatch(log, "mqtt://x:1883", None)
    watch.failed(OSError("connection refused"))
    watch.failed(_Refused(136))      # server unavailable: an outage
    err = Exception("unexpected disconnection")
    err.rc = 5                       # type: ignore[attr-defined]  # paho's own number
    watch.failed(err)


def test_connections_closed_soon_after_acceptance_are_a_shared_login(
        caplog: pytest.LogCaptureFixture) -> None:
    clock = Clock()
    watch = LoginWatch(log, "mqtts://venue:8883", "director", who="the console",
                       clock=clock)
    said = []
    for _ in range(CLASHES):
        watch.up()
        clock.now += 0.5
        said.append(watch.lost(OSError("lost")))
    assert said == [False] * (CLASHES - 1) + [True]
    assert "another client is connected with the same login 'director'" in caplog.text


def test_a_broker_restarting_again_and_again_is_not_a_shared_login() -> None:
    """Short connections with tries the broker did not answer in between: an outage."""
    clock = Clock()
    watch = LoginWatch(log, "mqtt://x:1883", "director", clock=clock)
    for _ in range(10):
        watch.up()
        clock.now += 0.5
        error = OSError("lost")
        assert not watch.lost(error)
        watch.failed(error)                      # that connection's end
        watch.failed(OSError("refused"))         # a try the broker did not answer


def test_a_long_connection_lost_is_an_outage_not_a_shared_login() -> None:
    clock = Clock()
    watch = LoginWatch(log, "mqtt://x:1883", "director", clock=clock)
    for _ in range(10):
        watch.up()
        clock.now += 60.0
        assert not watch.lost(OSError("lost"))


def test_session_taken_over_is_said_at_once(caplog: pytest.LogCaptureFixture) -> None:
    watch = LoginWatch(log, "mqtt://x:1883", "scorer")
    watch.up()
    assert watch.lost(_Refused(142))
    assert "same login 'scorer'" in caplog.text


# -- every command, against the venue's broker ----------------------------------------------------

@pytest.fixture(scope="module")
def venue(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Mosquitto, Path]]:
    tmp = tmp_path_factory.mktemp("login")
    broker, out = venue_broker(tmp, ["1", "2"])
    with broker:
        yield broker, out


def _bad_credentials(out: Path, user: str, tmp: Path) -> Path:
    good = read_credentials(out / "clients" / f"{user}.toml")
    path = tmp / f"{user}-wrong.toml"
    path.write_text(f'url = "{good["url"]}"\nusername = "{user}"\n'
                    f'password = "not-the-password"\nca_file = "{good["ca_file"]}"\n')
    path.chmod(0o600)
    return path


SESSION = """[session]
id = "login-test"
event = "Login test"
venue = "Test Club"

[movement]
type = "mitchell"
tables = 2
boards_per_round = 2
"""

TABLE = """[table]
id = "{table}"

[broker]
credentials = "{credentials}"

[spool]
path = "{spool}"

[[readers]]
name = "board"
url = "memory://board"
kind = "inventory"
antennas = {{ "0" = {{ zone = "board" }} }}
"""


def _command(name: str, user: str, out: Path, tmp: Path) -> list[str]:
    credentials = _bad_credentials(out, user, tmp)
    session = tmp / "session.toml"
    session.write_text(SESSION)
    common = ["--credentials", str(credentials)]
    if name == "console":
        passwords = tmp / "console-password"
        subprocess.run([sys.executable, "-m", "controller.cli", "console", "passwd",
                        str(passwords), "--stdin"], input="a-password-long-enough\n",
                       text=True, check=True, capture_output=True)
        return ["console", *common, "--director-password-file", str(passwords),
                "--db", str(tmp / "console.sqlite"), "--listen", f"127.0.0.1:{free_port()}"]
    if name == "vugraph":
        return ["vugraph", *common, "--listen", f"127.0.0.1:{free_port()}"]
    if name == "broadcast":
        return ["broadcast", *common, "--session", str(session),
                "--store", str(tmp / "relay.sqlite")]
    if name == "results":
        return ["results", *common, "--session", str(session)]
    if name == "bridge":
        table = tmp / "table.toml"
        table.write_text(TABLE.format(table="1", credentials=credentials,
                                      spool=tmp / "spool.sqlite"))
        return ["bridge", "--config", str(table)]
    if name == "verify":
        # verify names its broker by URL; its login comes from the environment
        return ["verify", "--simulate", "--boards", "2", "-q", "--broker",
                read_credentials(credentials)["url"]]
    return ["controller", *common, "--session", str(session)]


@pytest.mark.parametrize("name, user", [
    ("controller", "controller"), ("console", "director"), ("broadcast", "broadcast"),
    ("vugraph", "vugraph"), ("bridge", "table-1"), ("results", "scorer"),
    ("verify", "controller")])
def test_a_wrong_password_is_an_error_and_exit_2(venue: tuple[Mosquitto, Path], name: str,
                                                 user: str, tmp_path: Path) -> None:
    _, out = venue
    argv = _command(name, user, out, tmp_path)
    env = {"PATH": "/usr/bin:/bin"}
    if name == "verify":
        env["BRIDGE_TABLE_MQTT_CREDENTIALS"] = str(tmp_path / f"{user}-wrong.toml")
    done = subprocess.run([sys.executable, "-m", "controller.cli", *argv], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 2, done.stderr[-3000:]
    assert "refused the login" in done.stderr
    assert "not the password" not in done.stderr and "not-the-password" not in done.stderr


def test_two_clients_on_one_login_are_said_to_share_it(venue: tuple[Mosquitto, Path],
                                                       caplog: pytest.LogCaptureFixture
                                                       ) -> None:
    """Two web listeners with the director's login: mosquitto closes the older each time
    the newer logs in; each says at ERROR that another client has its login."""
    from controller.web.listener import listen

    _, out = venue
    settings = resolve(credentials=out / "clients" / "director.toml", env={})

    async def both() -> None:
        stop = asyncio.Event()
        tasks = [asyncio.create_task(listen(settings, ["bridge/+/state"],
                                            lambda _t, _p: None, stop, who=f"console {n}"))
                 for n in (1, 2)]
        async with asyncio.timeout(90):
            while "same login 'director'" not in caplog.text:
                await asyncio.sleep(0.1)
        stop.set()
        await asyncio.gather(*tasks)

    with caplog.at_level(logging.INFO):
        asyncio.run(both())
    assert "Give every client its own login" in caplog.text


def test_results_reads_the_session_with_the_scorers_own_login(
        venue: tuple[Mosquitto, Path], tmp_path: Path) -> None:
    """The scorer's login (broker-config) reads what results needs: a retained result
    published by the controller's login comes through its ACL."""
    import paho.mqtt.client as mqtt
    from paho.mqtt.enums import CallbackAPIVersion

    _, out = venue
    controller = resolve(credentials=out / "clients" / "controller.toml", env={})
    client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="controller")
    client.username_pw_set(controller.username, controller.password)
    client.tls_set_context(controller.tls_context())
    client.connect(controller.host, controller.port)
    client.loop_start()
    try:
        info = client.publish("bridge/1/result", (
            '{"v":1,"table":"1","board":1,"dealer":"N","vul":"None","contract":"4H",'
            '"declarer":"S","tricks":10,"score_ns":420,"session":"login-test"}'),
            qos=1, retain=True)
        info.wait_for_publish(30)
    finally:
        client.loop_stop()
        client.disconnect()
    session = tmp_path / "session.toml"
    session.write_text(SESSION)
    done = subprocess.run([sys.executable, "-m", "controller.cli", "results", "--session",
                           str(session), "--credentials", str(out / "clients" / "scorer.toml"),
                           "--once"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120, env={"PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Ranking" in done.stdout
