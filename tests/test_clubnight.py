"""``bridge-table club-night`` (controller/clubnight/): a whole club night from one command,
every program its own process on a locked-down broker, a bridge a table over simulated
serial readers. Each night's ranking must be the one ``bridge-table score`` gives for the
records it wrote, and the one the boards as played give (the command checks that itself
and exits 1 otherwise); killed programs must lose and double nothing."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from controller.clubnight.check import compare
from controller.clubnight.night import event_key
from controller.clubnight.plan import session_with_deals, sim_players
from controller.laws.cards import board_dealer, board_vulnerability
from controller.laws.record import DealInfo
from controller.session import load_session
from controller.session.export import Published

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "clubnight"
MITCHELL = DATA / "mitchell-10.toml"
#: the soak's seed and its fault-free night's (the same boards, the same play)
SEED = 7


def club_night(session: Path, work: Path, *args: str,
               timeout: float = 420) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "controller.cli", "club-night", str(session),
                           "--work", str(work), *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout, check=False)


def score_of(work: Path) -> dict[str, Any]:
    """``bridge-table score --json`` of the records the night's ``results`` wrote."""
    messages = next((work / "records").glob("*-messages.jsonl"))
    done = subprocess.run([sys.executable, "-m", "controller.cli", "score", str(messages),
                           "--session", str(work / "session.toml"), "--json"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    data: dict[str, Any] = json.loads(done.stdout)
    return data


def played(work: Path, done: subprocess.CompletedProcess[str], *,
           faults: bool = False) -> dict[str, Any]:
    """The night's ranking, after checking that it ended well and equals ``score``'s, and
    that no program of it crashed (nor, in a night without faults, logged an error)."""
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "Traceback" not in done.stderr
    for log in (work / "logs").glob("*.log"):
        text = log.read_text(errors="replace")
        assert "Traceback" not in text, f"{log.name}: {text[-2000:]}"
        assert faults or " ERROR " not in text, f"{log.name}: {text[-2000:]}"
    assert "checked: every one of the" in done.stdout
    # every thing the players did was read and published: none given up on (a card turned
    # on its spot faster than a reader's debounce was, before the night waited for it)
    assert faults or "published nothing" not in done.stderr, done.stderr[-3000:]
    ranking: dict[str, Any] = json.loads((work / "ranking.json").read_text())
    assert ranking == score_of(work)
    assert ranking["standings"], ranking
    return ranking


def results_count(work: Path) -> int:
    messages = next((work / "records").glob("*-messages.jsonl"))
    keys = {(m["payload"]["table"], m["payload"]["board"])
            for m in map(json.loads, messages.read_text().splitlines())
            if m["topic"].endswith("/result")}
    return len(keys)


@pytest.fixture(scope="module")
def mitchell_night(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    work = tmp_path_factory.mktemp("mitchell") / "night"
    done = club_night(MITCHELL, work, "--seed", str(SEED), "--revoke-rate", "0.1",
                      "--director-rate", "0.2")
    played(work, done)
    (work / "out.txt").write_text(done.stdout)
    yield work


@pytest.mark.timeout(600)
def test_a_10_table_3_round_mitchell_ranks_as_score_does(mitchell_night: Path) -> None:
    session = load_session(mitchell_night / "session.toml")
    wanted = {(t, b) for r in session.movement.rounds for t, tr in r.tables.items()
              for b in tr.boards}
    assert len(wanted) == 60
    assert results_count(mitchell_night) == 60
    # every program had its own login: none was thrown off by another on the same one
    log = (mitchell_night / "broker" / "run" / "mosquitto.log").read_text()
    assert "already connected" not in log
    assert "not authorised" not in log.lower()
    records = {p.suffix for p in (mitchell_night / "records").iterdir()}
    assert {".pbn", ".lin", ".csv", ".xml", ".jsonl"} <= records


def test_the_console_lists_every_director_call_the_players_made(mitchell_night: Path) -> None:
    """``--director-rate``: players press the table's director button (the bridge's
    simulated pins, firmware_bridge/sim/buttons.py); each press reaches the console's list
    of calls (controller/web/console/calls.py) with its table and board."""
    import sqlite3

    log = (mitchell_night / "logs" / "bridge-1.log").read_text()
    assert "no simulated button presses" not in log
    with sqlite3.connect(mitchell_night / "console.sqlite") as db:
        calls = list(db.execute("SELECT table_id, button, board FROM calls"))
    made = int(re.findall(r"^director calls: (\d+)", (mitchell_night / "out.txt").read_text(),
                          re.M)[0])
    assert made >= 5 and len(calls) == made, calls
    assert all(button == "director" and board is not None for _, button, board in calls)


@pytest.mark.timeout(600)
def test_a_howell_ranks_as_score_does(tmp_path: Path) -> None:
    work = tmp_path / "night"
    played(work, club_night(DATA / "howell-4.toml", work, "--seed", "3"))
    assert results_count(work) == 24


@pytest.mark.timeout(600)
def test_a_teams_match_ranks_as_score_does(tmp_path: Path) -> None:
    work = tmp_path / "night"
    played(work, club_night(DATA / "teams-2.toml", work, "--seed", "4",
                            "--revoke-rate", "0.2"))
    assert results_count(work) == 24


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_kills_of_a_bridge_the_controller_the_broker_and_the_relay_lose_nothing(
        tmp_path: Path, mitchell_night: Path) -> None:
    """The soak: the same night as the Mitchell above (its seed, its players turning cards
    and sliding them late), with each of the four killed (SIGKILL) at a random moment and
    started again: every result arrives once, as played, and the ranking is the fault-free
    night's. (A night that counted an event its bridge sent again twice once ran ahead of
    a bridge, and a board never ended: ``play_night`` now ends such a night, exit 1.)"""
    work = tmp_path / "night"
    done = club_night(MITCHELL, work, "--seed", str(SEED), "--revoke-rate", "0.1",
                      "--faults", "4", timeout=840)
    ranking = played(work, done, faults=True)
    faults = re.findall(r"^fault: killed (.+?) \(after", done.stdout, re.M)
    assert sorted("bridge" if f.endswith("bridge") else f.removeprefix("the ")
                  for f in faults) == ["bridge", "broker", "controller", "relay"], done.stdout
    assert results_count(work) == 60
    assert ranking == json.loads((mitchell_night / "ranking.json").read_text())


@pytest.mark.timeout(300)
def test_ctrl_c_stops_every_program_and_exits_130(tmp_path: Path) -> None:
    work = tmp_path / "night"
    proc = subprocess.Popen([sys.executable, "-m", "controller.cli", "club-night",
                             str(DATA / "howell-4.toml"), "--work", str(work), "--speed", "1"],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.startswith("tables:"):
                break
        time.sleep(2)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    assert "interrupted" in err
    assert not _processes_under(work), "a program of the night still runs"


def _processes_under(work: Path) -> list[str]:
    """The command lines of running processes that name the night's directory."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if str(work) in cmdline:
            found.append(cmdline)
    return found


@pytest.mark.timeout(300)
def test_it_joins_a_venue_broker_that_runs(tmp_path: Path) -> None:
    """``--join DIR``: the broker broker-config's files in DIR run is used, not started;
    without the night's own login it is refused, naming it (``results`` logs in as
    broker-config's ``scorer``)."""
    from broker import venue_broker

    from controller.broker.settings import read_credentials
    from controller.clubnight.venue import EXTRA_USERS, add_users

    broker, venue = venue_broker(tmp_path, ["1", "2"])
    refused = club_night(DATA / "teams-1.toml", tmp_path / "refused", "--join", str(venue),
                         timeout=60)
    assert refused.returncode == 2, refused.stderr
    assert "no login for clubnight " in refused.stderr
    add_users(venue, EXTRA_USERS, read_credentials(venue / "clients" / "controller.toml")["url"])
    with broker:
        work = tmp_path / "night"
        played(work, club_night(DATA / "teams-1.toml", work, "--join", str(venue)))
        assert not (work / "broker").exists()
        assert broker.running


def test_a_session_it_cannot_read_is_one_line_and_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "session.toml"
    bad.write_text("[movement]\ntype = 'mitchell'\ntables = 0\n")
    done = club_night(bad, tmp_path / "night", timeout=60)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1


def test_director_calls_without_gpiozero_are_refused_naming_the_extra(tmp_path: Path) -> None:
    """The simulated director buttons are gpiozero's mock pins: on a laptop installed
    without the [pi] extra (``make demo``), ``--director-rate`` lost every press in a
    night that ended well; it is now one line naming the extra, exit 2."""
    blocked = tmp_path / "blocked" / "gpiozero"
    blocked.mkdir(parents=True)
    (blocked / "__init__.py").write_text(
        'raise ImportError("not installed here", name="gpiozero")\n')
    done = subprocess.run([sys.executable, "-m", "controller.cli", "club-night",
                           str(DATA / "teams-1.toml"), "--work", str(tmp_path / "night"),
                           "--director-rate", "0.5"], cwd=ROOT, capture_output=True,
                          text=True, timeout=60, check=False,
                          env={**os.environ, "PYTHONPATH": str(blocked.parent)})
    assert done.returncode == 2, done.stderr
    assert "pip install 'bridge-table[pi]'" in done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert not (tmp_path / "night").exists()


def test_a_work_directory_in_use_is_refused(tmp_path: Path) -> None:
    work = tmp_path / "night"
    work.mkdir()
    (work / "controller-journal.sqlite").write_text("")
    done = club_night(MITCHELL, work, timeout=60)
    assert done.returncode == 2
    assert "not empty" in done.stderr and "Traceback" not in done.stderr


# -- the parts, without processes ------------------------------------------------------------

def test_the_session_copy_names_the_deals_it_plays(tmp_path: Path) -> None:
    deals = tmp_path / "boards.pbn"
    text = ('[session]\nevent = "E"\ndeals = "old.pbn"   # relative\n\n[movement]\n'
            'type = "mitchell"\ntables = 3\n\n[[adjustment]]\ntable = "1"\nboard = 1\n'
            'ns = "A+"\n')
    out = session_with_deals(text, deals)
    assert f'deals = "{deals.resolve().as_posix()}"' in out
    assert "old.pbn" not in out and out.count("deals =") == 1
    assert out.endswith('ns = "A+"\n')
    without = session_with_deals('[movement]\ntype = "mitchell"\n\n[session]\nevent = "E"\n',
                                 deals)
    assert without.rstrip().endswith(f'deals = "{deals.resolve().as_posix()}"')
    assert without.count("[session]") == 1


def test_the_check_names_a_result_lost_doubled_or_changed() -> None:
    def pub(table: str, board: int, tricks: int) -> Published:
        return Published(table, board, result={"contract": "4S", "declarer": "N",
                                               "tricks": tricks, "tricks_played": tricks,
                                               "score_ns": 420})

    want = {("1", 1): pub("1", 1, 10), ("2", 1): pub("2", 1, 10)}
    assert compare(dict(want), want) == []
    lost = compare({("1", 1): want[("1", 1)]}, want)
    assert lost == ["table 2 board 1: its result is missing"]
    extra = compare({**want, ("3", 1): pub("3", 1, 9)}, want)
    assert extra == ["table 3 board 1: a result nobody played"]
    changed = compare({**want, ("2", 1): pub("2", 1, 9)}, want)
    assert changed and changed[0].startswith("table 2 board 1: tricks, tricks_played")


def test_the_expected_results_are_the_boards_as_played_at_every_table() -> None:
    import random

    from controller.clubnight.check import expected_messages
    from controller.clubnight.plan import boards_of, random_deals, table_rounds
    from controller.session.export import read_published

    session = load_session(DATA / "teams-2.toml")
    deals = random_deals(boards_of(session), random.Random(1))
    plays = {(t, b): sim_players(t, deals[b], random.Random(f"{t}:{b}"), False)
             for _, tables in table_rounds(session) for t, bs in tables.items() for b in bs}
    published = read_published(expected_messages(session, deals, plays))
    assert set(published) == set(plays)
    for key, item in published.items():
        record = plays[key].record
        assert item.result is not None
        assert item.result["contract"] == str(record.contract)
        assert item.result["tricks"] == record.tricks_result


def test_the_players_habits_change_how_cards_are_handled_not_what_is_played() -> None:
    """``humanized``: the same record, its events with cards turned on their spots (the
    same card gone and back) and calls laid on the one before, from the board's seed."""
    import random

    from controller.boards.generate import random_deal
    from controller.clubnight.plan import humanized
    from firmware_bridge.sim.players import PlayerHabits

    deal = DealInfo(7, board_dealer(7), board_vulnerability(7), random_deal(random.Random(2)))
    bare = sim_players("1", deal, random.Random("y"), False)
    players = humanized(sim_players, PlayerHabits(turn_rate=1.0, late_slide_rate=0.3))
    human = players("1", deal, random.Random("y"), False)
    assert human == players("1", deal, random.Random("y"), False)
    assert human.record == bare.record
    turned = [(a, b) for a, b in zip(human.events, human.events[1:], strict=False)
              if a["zone"] == "spot" and a["action"] == "removed"
              and b["action"] == "present" and b.get("card") == a.get("card")]
    assert len(turned) >= 13
    laid = [e for e in human.events if e["action"] == "present"]
    assert sorted(map(event_key, laid)) != sorted(
        map(event_key, [e for e in bare.events if e["action"] == "present"]))


def test_the_simulated_players_play_the_deal_legally_and_reproducibly() -> None:
    import random

    from controller.boards.generate import random_deal

    deal = DealInfo(5, board_dealer(5), board_vulnerability(5), random_deal(random.Random(1)))
    one = sim_players("3", deal, random.Random("x"), False)
    again = sim_players("3", deal, random.Random("x"), False)
    assert one == again
    assert one.record.deal == deal.deal
    assert one.events[0]["zone"] == "board" and one.events[0]["board"] == 5
    assert all("seq" not in e and "src" not in e for e in one.events)
    cards = [e for e in one.events if e["zone"] == "spot" and e["action"] == "present"]
    assert len(cards) == (52 if one.record.tricks else 0)
    # what a bridge publishes for a board is known whatever seat it gives
    assert event_key({**one.events[0], "seat": "N"}) == event_key(one.events[0])


def test_an_event_a_bridge_sends_again_is_counted_once(tmp_path: Path) -> None:
    """A bridge sends again what the controller has not acknowledged (same src, boot and
    seq); counted twice, a later wait for the same card on the same spot (a turn, another
    board) would end before the bridge had published it."""
    import asyncio

    from controller.clubnight.night import Night, NightOptions

    night = Night(NightOptions(session=MITCHELL, work=tmp_path))
    event = {"v": "1.19", "src": "table-1-pi", "boot": "b1", "seq": 7, "zone": "spot",
             "seat": "W", "action": "removed", "card": "HK"}

    async def hear() -> None:
        for payload in (event, event, {**event, "seq": 8}, {**event, "boot": "b2"}):
            await night.heard("bridge/1/event", json.dumps(payload).encode())

    asyncio.run(hear())
    assert night.tally.events["1"][event_key(event)] == 3


def test_a_round_whose_results_never_come_ends_the_night_naming_the_board(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """``play_night`` gives up on a round ``RESULTS_AFTER`` seconds after its last event
    (and the last fault), naming each board without a result and what its table played
    that its bridge did not publish, instead of waiting for ever."""
    import asyncio
    from collections import Counter

    import controller.clubnight.night as night_module
    from controller.clubnight.night import Night, NightOptions, RoundStuck
    from controller.clubnight.plan import table_rounds

    monkeypatch.setattr(night_module, "RESULTS_AFTER", 1.5)
    night = Night(NightOptions(session=DATA / "teams-2.toml", work=tmp_path))
    night.session = load_session(DATA / "teams-2.toml")
    first = table_rounds(night.session)[0][1]
    lost = ("spot", "W", "present", "HK", None, None)

    async def play_table(table: str, boards: Any) -> None:
        # every board gets its result but table 1's last, whose West card was not heard
        for board in boards:
            if (table, board) != ("1", boards[-1]):
                night.tally.results.setdefault(table, {})[board] = {"board": board}
        if table == "1":
            night.sent["1"] = Counter({lost: 1})

    monkeypatch.setattr(night, "play_table", play_table)
    with pytest.raises(RoundStuck):
        asyncio.run(night.play_night())
    err = capsys.readouterr().err
    assert f"table 1 has no result for board {first['1'][-1]}" in err
    assert str(lost) in err
    assert err.count("has no result") == 1


def test_the_nights_waits_end_when_the_night_is_cancelled(tmp_path: Path) -> None:
    """Ctrl-C or SIGTERM cancels every wait of the night (``until``) while the broker's
    messages keep waking them: each must end. Waits on an asyncio.Condition did not:
    under Python 3.11 a cancelled waiter could leave its lock taken, and a night stopped
    by SIGTERM waited in asyncio.run's clean-up for ever."""
    import asyncio
    import random

    from controller.clubnight.night import Night, NightOptions

    night = Night(NightOptions(session=MITCHELL, work=tmp_path))
    rng = random.Random(1)

    async def results() -> None:
        while True:
            await night.heard("bridge/1/result", b'{"board": 1}')
            await asyncio.sleep(rng.random() * 0.002)

    async def cancel_often() -> list[int]:
        stuck = []
        for round_ in range(10):
            heard = asyncio.create_task(results())
            waits = [asyncio.create_task(night.until(lambda: False, "nothing"))
                     for _ in range(10)]
            await asyncio.sleep(rng.random() * 0.2)
            for task in [*waits, heard]:
                task.cancel()
            _, pending = await asyncio.wait([*waits, heard], timeout=5)
            if pending:
                stuck.append(round_)
                break
        return stuck

    assert asyncio.run(cancel_often()) == []
