from __future__ import annotations

import io
import json
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from private_files import assert_made_private, assert_private, permissive_umask

from controller.service.journal import Journal, JournalError


def test_incoming_is_kept_in_arrival_order_with_exact_bytes(tmp_path: Path) -> None:
    raw = [("bridge/1/event", b'{"v":1,"seq":1}'), ("bridge/2/ruling", b"\xff\x00not json"),
           ("bridge/1/event", b"")]
    with Journal(tmp_path / "j.sqlite") as j:
        assert j.append_incoming(raw[:2]) == [1, 2]
        assert j.append_incoming(raw[2:]) == [3]
        got = [(e.topic, e.payload) for e in j.incoming()]
        assert got == raw
        assert [e.n for e in j.incoming(after=1)] == [2, 3]
        assert j.last_incoming == 3


def test_journal_survives_reopen_and_published_through_only_advances(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite"
    with Journal(path) as j:
        j.append_incoming([("bridge/1/event", b"a"), ("bridge/1/event", b"b")])
        j.record_published(2, [(2, "bridge/1/state", b"{}", True, 1)])
        j.record_published(1, [])
    with Journal(path) as j:
        assert j.published_through == 2
        assert [(o.cause, o.topic, o.retain) for o in j.outgoing()] == [(2, "bridge/1/state",
                                                                         True)]
        assert j.counts() == {"incoming": 2, "outgoing": 1, "published_through": 2}


def test_second_process_cannot_open_a_journal_in_use(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite"
    with Journal(path):
        with pytest.raises(JournalError, match="in use"):
            Journal(path)
    Journal(path).close()  # free again once closed


def test_a_file_that_is_not_a_journal_is_refused_and_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite"
    junk = b"this is not sqlite at all" * 100
    path.write_bytes(junk)
    with pytest.raises(JournalError, match="not a usable journal"):
        Journal(path)
    assert path.read_bytes() == junk
    Journal(tmp_path / "other.sqlite").close()  # the lock was released on failure
    with pytest.raises(JournalError):  # and the same path is not locked forever
        Journal(path)


def test_a_foreign_sqlite_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE incoming (x TEXT)")
    db.commit()
    db.close()
    with pytest.raises(JournalError, match="unexpected columns"):
        Journal(path)


def test_committed_messages_survive_sigkill(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite"
    code = (
        "import sys, os, signal\n"
        "from controller.service.journal import Journal\n"
        "j = Journal(sys.argv[1])\n"
        "for i in range(50):\n"
        "    j.append_incoming([('bridge/1/event', b'{\"seq\":%d}' % i)])\n"
        "print('written', flush=True)\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True,
                          cwd=Path(__file__).parent.parent, timeout=60)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    with Journal(path) as j:  # the lock died with the process
        assert [json.loads(e.payload)["seq"] for e in j.incoming()] == list(range(50))


def test_export_writes_replay_input(tmp_path: Path) -> None:
    with Journal(tmp_path / "j.sqlite") as j:
        j.append_incoming([("bridge/1/event", b'{"v":1,"seq":7}'), ("bridge/1/event", b"{bad")])
        out = io.StringIO()
        assert j.export_jsonl(out) == 2
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert lines == [{"topic": "bridge/1/event", "payload": {"v": 1, "seq": 7}},
                     {"topic": "bridge/1/event", "payload": "{bad"}]


def test_journal_cli_stats(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite"
    with Journal(path) as j:
        j.append_incoming([("bridge/1/event", b"x")])
    proc = subprocess.run([sys.executable, "-m", "controller.service.journal", "stats", str(path)],
                          capture_output=True, text=True, cwd=Path(__file__).parent.parent,
                          env={**os.environ}, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["incoming"] == 1


def test_reading_a_long_journal_goes_past_one_chunk(tmp_path: Path) -> None:
    with Journal(tmp_path / "j.sqlite", sync="normal") as j:
        j.append_incoming([("bridge/1/event", b"%d" % i) for i in range(4500)])
        assert [int(e.payload) for e in j.incoming(after=10)] == list(range(10, 4500))
        rows = [(i + 1, "bridge/1/state", b"{}", True, 1) for i in range(2500)]
        j.record_published(4500, rows)
        assert len(list(j.outgoing())) == 2500


def _fsyncs(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The files ``os.fsync`` is called on from now on (through /proc/self/fd)."""
    synced: list[str] = []
    real = os.fsync

    def fsync(fd: int) -> None:
        synced.append(os.readlink(f"/proc/self/fd/{fd}"))
        real(fd)
    monkeypatch.setattr(os, "fsync", fsync)
    return synced


def test_a_batch_written_not_durable_is_synced_once_through_the_wal(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "j.sqlite"
    with Journal(path) as j:
        synced = _fsyncs(monkeypatch)
        j.sync()  # nothing written yet: nothing to sync
        assert synced == []
        assert j.append_incoming([("bridge/1/event", b"a")], durable=False) == [1]
        assert synced == []  # written, not synced: the caller publishes meanwhile
        j.sync()
        assert synced == [str(path) + "-wal"]
        j.sync()  # once
        assert synced == [str(path) + "-wal"]
    with Journal(path) as j:  # and it is there, as a durable write would be
        assert [e.payload for e in j.incoming()] == [b"a"]


def test_sync_normal_never_syncs_and_a_failed_sync_is_the_journals_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with Journal(tmp_path / "n.sqlite", sync="normal") as j:
        synced = _fsyncs(monkeypatch)
        j.append_incoming([("bridge/1/event", b"a")], durable=False)
        j.sync()
        assert synced == []
    with Journal(tmp_path / "f.sqlite") as j:
        j.append_incoming([("bridge/1/event", b"a")], durable=False)

        def failing(fd: int) -> None:
            raise OSError(5, "Input/output error")
        monkeypatch.setattr(os, "fsync", failing)
        with pytest.raises(JournalError, match="could not sync the journal: Input/output"):
            j.sync()
        monkeypatch.undo()
        synced = _fsyncs(monkeypatch)
        j.sync()  # still owed, and done now
        assert synced == [str(tmp_path / "f.sqlite") + "-wal"]


def test_the_journal_is_created_readable_by_its_owner_only(tmp_path: Path) -> None:
    """Every hand of the session is in it (controller/sqlitefile.py): 0600, its WAL too;
    one found open to others is closed to them."""
    with permissive_umask(), Journal(tmp_path / "journal.sqlite") as journal:
        journal.append_incoming([("bridge/1/feed", b"{}")], 1.0)
        assert_private(tmp_path, "journal.sqlite")
    assert_made_private(tmp_path / "journal.sqlite", Journal)
