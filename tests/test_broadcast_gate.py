"""Property test of the release gate: no item of a board is public before every table of
the session that plays it has finished it; unscheduled tables are held."""

from __future__ import annotations

import random
from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.broadcast.gate import Gate, GatePolicy
from controller.session.schedule import Movement, Round, TableRound


def mitchell(n: int, rounds: int, per: int) -> Movement:
    return Movement(tuple(Round(r + 1, {
        str(t + 1): TableRound(t + 1, n + (t + r) % n + 1,
                               tuple(range(((t + r) % n) * per + 1, ((t + r) % n) * per + per + 1)))
        for t in range(n)}) for r in range(rounds)))


def howell(n: int, rounds: int, per: int, rnd: random.Random) -> Movement:
    """The sets in a random order, each round shifted a random distinct step: no table
    plays a set twice (a movement refuses that), no two tables share one in a round."""
    out = []
    sets = list(range(n))
    rnd.shuffle(sets)
    shifts = rnd.sample(range(n), rounds)
    for r in range(rounds):
        at = [sets[(t + shifts[r]) % n] for t in range(n)]
        out.append(Round(r + 1, {str(t + 1): TableRound(None, None, tuple(
            range(at[t] * per + 1, at[t] * per + per + 1))) for t in range(n)}))
    return Movement(tuple(out))


def teams(n: int, rounds: int, per: int) -> Movement:
    matches = max(1, n // 2)
    sets = max(matches, rounds)  # a match never meets a set twice
    out = []
    for r in range(rounds):
        tables = {}
        for t in range(n):
            s = ((t // 2) + r) % sets
            boards = tuple(range(s * per + 1, s * per + per + 1))
            tables[f"T{t + 1}"] = TableRound(None, None, boards)
        out.append(Round(r + 1, tables))
    return Movement(tuple(out))


@dataclass
class Sim:
    movement: Movement
    unscheduled: str = "ZZ"

    def scripts(self) -> dict[str, list[tuple[str, int]]]:
        """Per table: the boards in the order it plays them."""
        out: dict[str, list[tuple[str, int]]] = {}
        for r in self.movement.rounds:
            for t, tr in r.tables.items():
                out.setdefault(t, []).extend((t, b) for b in tr.boards)
        out[self.unscheduled] = [(self.unscheduled, 1)]
        return out


SID = "s"


def state(t: str, b: int, phase: str, session: str = SID) -> dict[str, object]:
    return {"v": 1, "table": t, "board": b, "phase": phase, "session": session}


def result(t: str, b: int, session: str = SID) -> dict[str, object]:
    return {"v": 1, "table": t, "board": b, "contract": "3NT", "declarer": "S", "tricks": 9,
            "score_ns": 400, "session": session}


def online(session: str = SID) -> dict[str, object]:
    return {"status": "online", "session": session}


def run_session(gate: Gate, sim: Sim, rnd: random.Random, delay: float,
                leftovers: list[tuple[str, int]], last: str = "") -> None:
    mv = sim.movement
    sid = gate.policy.session_id
    now = 1000.0
    finished: dict[tuple[str, int], float] = {}
    released: list[tuple[str, int | None, str]] = []
    # what the broker keeps of the last session arrives first, retained; the last
    # session's controller status too
    gate.controller_status(None, online(last or sid))
    for t, b in leftovers:
        gate.state(t, state(t, b, "done", last), retained=True, now=now)
        gate.offer(t, "result", result(t, b, last), now)
        gate.result(t, result(t, b, last), now=now)
    gate.controller_status(None, online(sid))

    def check(out: list) -> None:
        for item in out:
            assert item.board is not None
            tables = mv.tables_playing(item.board)
            assert item.table in tables, "an unscheduled table was released"
            for x in tables:
                assert (x, item.board) in finished, (
                    f"board {item.board} of table {item.table} public before table {x} "
                    f"finished it")
                assert finished[(x, item.board)] + delay <= now + 1e-9
            released.append((item.table, item.board, item.kind))

    scripts = {t: list(s) for t, s in sim.scripts().items()}
    steps: dict[str, int] = {t: 0 for t in scripts}
    while scripts:
        t = rnd.choice(sorted(scripts))
        t_, b = scripts[t][0]
        step = steps[t]
        now += rnd.choice([0.0, 0.5, 3.0, 40.0])
        if step == 0:
            gate.state(t, state(t, b, "auction", sid), retained=False, now=now)
            gate.offer(t, "feed", {"v": 1, "table": t, "board": b, "kind": "call"}, now)
        elif step == 1:
            gate.state(t, state(t, b, "play", sid), retained=False, now=now)
            gate.offer(t, "feed", {"v": 1, "table": t, "board": b, "kind": "card"}, now)
            if rnd.random() < 0.2:   # a result mid-play (forged): held, never early
                gate.offer(t, "result", result(t, b, sid), now)
                gate.result(t, result(t, b, sid), now=now)
        else:
            finished.setdefault((t, b), now)
            if rnd.random() < 0.3:   # the result (QoS 1) overtakes the state (QoS 0)
                gate.offer(t, "result", result(t, b, sid), now)
                gate.result(t, result(t, b, sid), now=now)
                gate.state(t, state(t, b, "complete", sid), retained=False, now=now)
            else:
                gate.state(t, state(t, b, "complete", sid), retained=False, now=now)
                gate.offer(t, "result", result(t, b, sid), now)
                gate.result(t, result(t, b, sid), now=now)
        steps[t] = step + 1
        if step == 2:
            steps[t] = 0
            scripts[t].pop(0)
            if not scripts[t]:
                del scripts[t]
        check(gate.due(now))
    now += delay + 1
    check(gate.due(now))
    # liveness: everything scheduled went out; the unscheduled table is held and reported
    assert all(h.table == sim.unscheduled or h.table in {t for t, _ in leftovers}
               for h in gate.held), [(h.table, h.board) for h in gate.held][:5]
    assert any(r.table == sim.unscheduled for r in gate.reports.values())
    assert not any(t == sim.unscheduled for t, _, _ in released)


movements = st.one_of(
    st.tuples(st.just("mitchell"), st.integers(1, 30), st.integers(1, 4), st.integers(1, 3)),
    st.tuples(st.just("howell"), st.integers(1, 30), st.integers(1, 4), st.integers(1, 3)),
    st.tuples(st.just("teams"), st.integers(1, 30), st.integers(1, 4), st.integers(1, 3)),
)


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(movements, st.integers(0, 2**32), st.sampled_from([0.0, 5.0, 60.0]))
def test_nothing_public_before_every_table_has_finished(spec, seed: int, delay: float) -> None:
    kind, n, rounds, per = spec
    rnd = random.Random(seed)
    rounds = min(rounds, n)
    mv = (mitchell(n, rounds, per) if kind == "mitchell" else
          howell(n, rounds, per, rnd) if kind == "howell" else teams(n, rounds, per))
    sim = Sim(mv)
    first = Gate(GatePolicy("session-1", mv, delay=delay))
    first.controller_status(None, online("session-1"))
    run_session(first, sim, rnd, delay, [])
    # the next session, same movement: the last session's retained results finish nothing
    leftovers = sorted(first.done)[: rnd.randint(0, len(first.done))]
    second = Gate(GatePolicy("session-2", mv, delay=delay))
    run_session(second, sim, rnd, delay, leftovers, last="session-1")


def test_round_without_a_movement_refuses() -> None:
    with pytest.raises(ValueError, match="refusing"):
        GatePolicy("s", None, release="round")


def test_operator_release_and_hold() -> None:
    mv = mitchell(2, 1, 1)
    gate = Gate(GatePolicy("s", mv))
    gate.offer("9", "feed", {"board": 1}, 0)           # unscheduled
    assert gate.due(10) == []
    gate.operator("release", 1, "9")
    assert [i.table for i in gate.due(10)] == ["9"]
    gate.operator("hold", 2)
    gate.controller_status(None, online())
    for t in ("1", "2"):
        gate.state(t, state(t, 2 if t == "2" else 1, "play"), retained=False, now=1)
    gate.offer("2", "feed", {"board": 2}, 2)
    gate.state("2", state("2", 2, "complete"), retained=False, now=3)
    gate.result("2", result("2", 2), now=3)
    assert gate.due(10) == []                           # finished, but held by hand
    gate.operator("clear", 2)
    assert [i.board for i in gate.due(10)] == [2]


def test_results_need_consistent_fields() -> None:
    mv = mitchell(1, 1, 1)
    gate = Gate(GatePolicy("s", mv))
    gate.controller_status(None, online())
    gate.state("1", state("1", 1, "play"), retained=False, now=0)
    gate.offer("1", "feed", {"board": 1}, 0)
    gate.state("1", state("1", 1, "complete"), retained=False, now=1)
    gate.result("1", {**result("1", 1), "table": "2"}, now=2)
    gate.result("1", {**result("1", 1), "tricks": 14}, now=2)
    assert gate.due(5) == []
    assert any("range" in r.reason for r in gate.reports.values())
    gate.result("1", result("1", 1), now=3)
    assert len(gate.due(5)) == 1


def test_a_result_before_the_controllers_status_is_held_then_trusted() -> None:
    """After a relay restart the result may come before the retained status: it waits
    (reported in ``waiting``) and finishes the board once the status says online."""
    gate = Gate(GatePolicy("s", mitchell(1, 1, 1)))
    gate.state("1", state("1", 1, "play"), retained=False, now=0)
    gate.offer("1", "feed", {"board": 1}, 0)
    gate.state("1", state("1", 1, "complete"), retained=False, now=1)
    gate.result("1", result("1", 1), now=1)
    assert gate.due(5) == []
    assert gate.waiting() == [{"table": "1", "board": 1, "waits_for": ["1"],
                               "why": "its result waits for the controller's status"}]
    gate.controller_status(None, online("another-session"))   # not ours: still held
    assert gate.due(5) == []
    assert gate.controller_status(None, online(), now=6) == [("1", 1)]
    assert [i.board for i in gate.due(6)] == [1]


def test_partitioned_controllers_are_trusted_for_the_tables_they_serve() -> None:
    """A room split across controllers (``--partition``/``--tables``, docs/scale.md): each
    says online on ``controller/{its share}/status`` and names the tables it serves
    (1.15); a result is trusted when the controller serving its table is online."""
    gate = Gate(GatePolicy("s", mitchell(2, 1, 1)))   # table 1 plays board 1, table 2 board 2
    for t, b in (("1", 1), ("2", 2)):
        gate.state(t, state(t, b, "play"), retained=False, now=0)
        gate.offer(t, "feed", {"board": b}, 0)
        gate.state(t, state(t, b, "complete"), retained=False, now=1)
        gate.result(t, result(t, b), now=1)
    assert gate.due(5) == []
    # the share serving table 1 only: table 2's result still waits
    assert gate.controller_status("part1of2", {**online(), "serves": ["1"]}, now=2) == \
        [("1", 1)]
    assert gate.controller_status("part2of2", {**online(), "serves": ["3"]}, now=2) == []
    assert [w["table"] for w in gate.waiting() if "controller" in w.get("why", "")] == ["2"]
    # its word goes when it goes offline; another share's covers only its own tables
    gate.controller_status("part1of2", {"status": "offline"}, now=3)
    assert not gate.controller_online("1") and not gate.controller_online("2")
    assert gate.controller_status("part2of2", {**online(), "serves": ["2", "3"]}, now=4) == \
        [("2", 2)]
    assert [(i.table, i.board) for i in gate.due(10)] == [("1", 1), ("2", 2)]


def test_a_result_whose_state_was_lost_is_trusted_once_the_table_moves_on() -> None:
    """``state`` is QoS 0: a relay that was away may never see the board's last state.
    The next board's state says the board is over at the table."""
    two_rounds = Movement((Round(1, {"1": TableRound(1, 2, (1,))}),
                           Round(2, {"1": TableRound(1, 2, (2,))})))
    gate = Gate(GatePolicy("s", two_rounds))
    gate.controller_status(None, online())
    gate.state("1", state("1", 1, "play"), retained=False, now=0)
    gate.offer("1", "feed", {"board": 1}, 0)
    gate.result("1", result("1", 1), now=1)         # the state "complete" was lost
    assert gate.due(5) == []
    # the next board's feed overtakes the lost board's late state: nothing is left yet
    gate.seen("1", 2)
    gate.state("1", state("1", 1, "play"), retained=False, now=2)
    assert gate.due(5) == [] and ("1", 2) not in gate.left
    gate.state("1", state("1", 2, "scanning"), retained=False, now=3)
    assert [i.board for i in gate.due(5)] == [1]
    # a result for a board not yet played at the table is held, not trusted
    gate.result("1", result("1", 2), now=4)
    assert ("1", 2) not in gate.done


def test_the_next_sessions_messages_finish_nothing() -> None:
    gate = Gate(GatePolicy("s", mitchell(1, 1, 1)))
    gate.controller_status(None, online("evening"))
    gate.state("1", state("1", 1, "play", "evening"), retained=False, now=0)
    gate.offer("1", "feed", {"board": 1}, 0)
    gate.state("1", state("1", 1, "complete", "evening"), retained=False, now=1)
    gate.result("1", result("1", 1, "evening"), now=1)
    gate.result("1", {k: v for k, v in result("1", 1).items() if k != "session"}, now=1)
    assert gate.due(5) == [] and not gate.done
    reasons = " ".join(r.reason for r in gate.reports.values())
    assert "runs session 'evening'" in reasons and "names no session" in reasons
