"""A virtual reader firmware on the master side of a pseudo-terminal.

It speaks docs/serial-protocol.md exactly like real firmware would: the host opens the slave side
(``slave_path``) with pyserial like any USB serial port. Test and simulator code move tags with
:meth:`VirtualFirmware.place` / :meth:`lift`, and inject faults: garbage, bad CRC, lost lines, a
reset in the middle of a line, an unplugged cable.

The physics of one antenna (docs/sensing.md): ``tag_limit`` tags are resolved at once (1 by
default, as an MFRC522 or PN532 reader of NTAG stickers); a tag laid on an antenna that already
holds that many is not read, and the firmware says so once (``ERR ANTn
collision_not_resolved``, ``collision="error"``) or says nothing (``collision="silence"``).
``miss_rate``: the chance that a tag does not answer in one polling round; its first read is
late by the rounds it missed, and a tag passed across the antenna (``dwell`` rounds) that
misses every one of them is never read. ``antenna_miss_rate`` gives one antenna its own.

Protocol 2's ``STAT`` (docs/serial-protocol.md): per antenna, the polling rounds since boot
(at ``rate_ms``) and the rounds in which a read tag lying there answered or did not, drawn
with the antenna's miss rate (the rounds a tag missed before its first read count too).
``plugged = False`` is a reader whose cable is out: :meth:`start` does nothing, its port is
missing.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import errno
import os
import random
import time
import tty
from pathlib import Path
from types import TracebackType
from typing import Literal

from firmware_bridge.protocol import (
    SEQ_MODULO,
    Command,
    CommandOp,
    FrameOp,
    LineDecoder,
    ProtocolError,
    encode_frame,
    next_seq,
)

__all__ = ["VirtualFirmware", "FIRMWARE_VERSION", "open_pty", "Collision", "COLLISION_ERROR"]

FIRMWARE_VERSION = "sim-1.1"
#: lines the firmware keeps for ``REPLAY`` (this boot's latest)
REPLAY_LINES = 1024

Collision = Literal["error", "silence"]
#: the ERR line's problem word for an antenna holding more tags than the reader resolves
#: (the reader boards' firmware sends the same, docs/serial-protocol.md)
COLLISION_ERROR = "collision_not_resolved"
#: rounds a tag answers at most before the simulated firmware gives it up as unreadable
_MAX_ROUNDS = 1000


def open_pty(link: Path | None = None) -> tuple[int, int, str]:
    """A raw pseudo-terminal (master non-blocking): (master, slave, slave path); ``link``, if
    given, is made a symlink to the slave path (atomically, so a host polling it never sees
    it missing)."""
    master, slave = os.openpty()
    # Raw at once: a cooked slave would echo our own lines back to us and mangle CR/LF
    # before the host has opened the port and made it raw itself.
    tty.setraw(slave)
    os.set_blocking(master, False)
    path = os.ttyname(slave)
    if link is not None:
        tmp = link.with_name(link.name + ".tmp")
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        tmp.symlink_to(path)
        os.replace(tmp, link)
    return master, slave, path


class VirtualFirmware:
    """Reader firmware ``reader_id`` with antennas ``0 .. antennas-1`` on a fresh pty.

    ``link``: a symlink kept pointing at the current slave path, so that a host configured with
    that path finds the reader again after :meth:`unplug` / :meth:`replug` (new pty, new name).
    """

    def __init__(self, reader_id: str, antennas: int = 1, *, link: Path | None = None,
                 heartbeat_interval: float | None = None, tag_limit: int = 1,
                 miss_rate: float = 0.0, seed: int | str | None = 0,
                 collision: Collision = "error") -> None:
        if antennas < 1:
            raise ValueError("a reader has at least one antenna")
        if tag_limit < 1:
            raise ValueError("an antenna resolves at least one tag")
        if not 0.0 <= miss_rate < 1.0:
            raise ValueError("the miss rate is a probability below 1")
        if collision not in ("error", "silence"):
            raise ValueError(f"collision must be 'error' or 'silence', not {collision!r}")
        self.reader_id = reader_id
        self.antennas = antennas
        self.link = link
        self.heartbeat_interval = heartbeat_interval
        self.tag_limit = tag_limit
        self.miss_rate = miss_rate
        #: antenna -> its own miss rate (a weak antenna); the others have ``miss_rate``
        self.antenna_miss_rate: dict[int, float] = {}
        #: False: the reader's cable is out (start() does nothing, the port is missing)
        self.plugged = True
        self.collision: Collision = collision
        self._rng = random.Random(seed)
        #: the tags lying on each antenna (read or not)
        self.present: dict[int, list[str]] = {a: [] for a in range(antennas)}
        #: tags lying there that the firmware has not read (a collision, a missed pass)
        self.unread: dict[int, set[str]] = {a: set() for a in range(antennas)}
        self._colliding: set[int] = set()   # antennas whose collision was reported
        #: the most tags that lay on one antenna at any moment
        self.peak_tags = 0
        self.collisions = 0     # tags laid where the antenna could not resolve them
        self.late_reads = 0     # tags read only after one or more missed rounds
        self.lost_reads = 0     # tags passed across the antenna and never read
        self.rate_ms = 100
        #: STAT's counters since boot: per antenna, read tag-rounds answered / missed
        self.answered: dict[int, int] = {a: 0 for a in range(antennas)}
        self.missed: dict[int, int] = {a: 0 for a in range(antennas)}
        #: (antenna, uid) of each read tag lying there -> until when its rounds are counted
        self._counted: dict[tuple[int, str], float] = {}
        self.commands: list[Command] = []  # every host command received, for tests
        self.command_errors: list[ProtocolError] = []
        self.slave_path: str | None = None
        self._master: int | None = None
        self._slave: int | None = None
        self._seq = 0
        self._booted_at = time.monotonic()
        self._out = bytearray()
        self._writing = False
        self._decoder = LineDecoder(commands=True)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._heartbeat_task: asyncio.Task[None] | None = None
        self._drop = 0
        #: this boot's latest lines, for REPLAY: (seq, antenna, op, args, hw time in ms);
        #: a line without a hardware time keeps the time it was sent at, which the replay
        #: carries (the host orders replayed lines of several readers by it)
        self._sent: collections.deque[tuple[int, int | None, FrameOp, tuple[str, ...], int]] = \
            collections.deque(maxlen=REPLAY_LINES)
        self.delivered_seq: int | None = None
        self._delivered = asyncio.Event()
        self.host_seen = asyncio.Event()
        #: set each time the host asked for an inventory and got it (clear it to wait again)
        self.inventory_answered = asyncio.Event()
        self.last_inventory_seq: int | None = None

    # ------------------------------------------------------------------ lifecycle

    async def __aenter__(self) -> VirtualFirmware:
        await self.start()
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    @property
    def running(self) -> bool:
        return self._master is not None

    async def start(self) -> None:
        """Plug in: open a pty and start answering the host. Sends the boot banner."""
        if self._master is not None or not self.plugged:
            return
        self._loop = asyncio.get_running_loop()
        master, slave, self.slave_path = open_pty(self.link)
        self._master, self._slave = master, slave
        self._loop.add_reader(master, self._on_readable)
        if self.heartbeat_interval:
            self._heartbeat_task = asyncio.create_task(self._heartbeats())
        self.boot("power")

    def close(self) -> None:
        """Unplug: the pty pair goes away; the host sees EIO and the path disappears."""
        if self._heartbeat_task is not None:
            self._heartbeat_task.cancel()
            self._heartbeat_task = None
        if self._master is not None:
            assert self._loop is not None
            self._loop.remove_reader(self._master)
            if self._writing:
                self._loop.remove_writer(self._master)
                self._writing = False
            os.close(self._master)
            self._master = None
        if self._slave is not None:
            os.close(self._slave)
            self._slave = None
        if self.link is not None:
            with contextlib.suppress(FileNotFoundError):
                if self.link.is_symlink() and os.readlink(self.link) == self.slave_path:
                    self.link.unlink()
        self._out.clear()
        self.host_seen.clear()

    async def unplug(self) -> None:
        self.close()

    async def replug(self) -> None:
        """Plug back in (a new pty, the symlink moved to it); the firmware boots again."""
        await self.start()

    # ------------------------------------------------------------------ tags

    def place(self, antenna: int, uid: str, *, hw_time: float | None = None,
              dwell: int | None = None) -> int | None:
        """A tag comes onto ``antenna``; returns the sequence number of the line it caused
        (None: none, the tag is not read). ``dwell``: the polling rounds the tag stays over
        the antenna (a card slid across it); None: it lies there until lifted."""
        tags = self.present[antenna]
        if uid in tags:
            return self._send(antenna, FrameOp.ADDED, (uid,), hw_time) \
                if uid not in self.unread[antenna] else None
        tags.append(uid)
        self.peak_tags = max(self.peak_tags, len(tags))
        if len(tags) > self.tag_limit:
            return self._collide(antenna, uid)
        return self._read(antenna, uid, hw_time, dwell)

    def lift(self, antenna: int, uid: str, *, hw_time: float | None = None) -> int | None:
        """A tag leaves ``antenna``; returns the sequence number of the last line it caused
        (None: none, the tag had not been read)."""
        tags = self.present[antenna]
        unread = self.unread[antenna]
        seq: int | None = None
        if uid in tags:
            tags.remove(uid)
            self._count(antenna, uid, time.monotonic())
            self._counted.pop((antenna, uid), None)
            if uid in unread:
                unread.discard(uid)
            else:
                seq = self._send(antenna, FrameOp.REMOVED, (uid,), hw_time)
        elif uid not in unread:
            seq = self._send(antenna, FrameOp.REMOVED, (uid,), hw_time)
        if len(tags) <= self.tag_limit:
            self._colliding.discard(antenna)
            for waiting in [t for t in tags if t in unread]:
                # the antenna resolves again: the tags left lying there are read now
                unread.discard(waiting)
                seq = self._read(antenna, waiting, hw_time, None)
        return seq

    def _collide(self, antenna: int, uid: str) -> int | None:
        self.collisions += 1
        self.unread[antenna].add(uid)
        if self.collision == "silence" or antenna in self._colliding:
            return None
        self._colliding.add(antenna)
        return self._send(None, FrameOp.ERROR, (f"ANT{antenna}", COLLISION_ERROR), None)

    def _read(self, antenna: int, uid: str, hw_time: float | None,
              dwell: int | None) -> int | None:
        """The polling rounds until ``uid`` answers; its ``+`` line, or None if it never
        answers while over the antenna."""
        missed = 0
        miss_rate = self.antenna_miss_rate.get(antenna, self.miss_rate)
        while miss_rate and self._rng.random() < miss_rate:
            missed += 1
            if (dwell is not None and missed >= dwell) or missed >= _MAX_ROUNDS:
                self.lost_reads += 1
                self.unread[antenna].add(uid)
                return None
        if missed:
            self.late_reads += 1
            if hw_time is not None:
                hw_time += missed * self.rate_ms / 1000
        self.missed[antenna] += missed
        self.answered[antenna] += 1
        # the round that read it is counted; the next ones from one period on
        self._counted[(antenna, uid)] = time.monotonic() + self.rate_ms / 1000
        return self._send(antenna, FrameOp.ADDED, (uid,), hw_time)

    def _count(self, antenna: int, uid: str, now: float) -> None:
        """The rounds a read tag lay on ``antenna`` since last counted, each answered or
        missed with the antenna's miss rate."""
        since = self._counted.get((antenna, uid))
        if since is None:
            return
        rounds = max(0, int((now - since) * 1000 / self.rate_ms))
        self._counted[(antenna, uid)] = since + rounds * self.rate_ms / 1000
        miss_rate = self.antenna_miss_rate.get(antenna, self.miss_rate)
        missed = sum(1 for _ in range(rounds) if self._rng.random() < miss_rate) \
            if miss_rate else 0
        self.missed[antenna] += missed
        self.answered[antenna] += rounds - missed

    def stats(self, antenna: int | None = None) -> int:
        """Send STAT lines (one antenna or all); returns the last sequence number."""
        now = time.monotonic()
        seq = self._seq
        rounds = int((now - self._booted_at) * 1000 / self.rate_ms)
        for a in range(self.antennas) if antenna is None else (antenna,):
            for key in [k for k in self._counted if k[0] == a]:
                self._count(a, key[1], now)
            seq = self._send(a, FrameOp.STAT, (str(rounds), str(self.answered[a]),
                                               str(self.missed[a])), None)
        return seq

    def place_silently(self, antenna: int, uid: str) -> None:
        """The tag is there but its line is lost (the next inventory must reveal it)."""
        if uid not in self.present[antenna]:
            self.present[antenna].append(uid)
            self.peak_tags = max(self.peak_tags, len(self.present[antenna]))
        self._seq = next_seq(self._seq)

    def lift_silently(self, antenna: int, uid: str) -> None:
        if uid in self.present[antenna]:
            self.present[antenna].remove(uid)
        self._seq = next_seq(self._seq)

    def inventory(self, antenna: int | None = None) -> int:
        """Send INV lines (one antenna or all); returns the last sequence number."""
        seq = self._seq
        for a in range(self.antennas) if antenna is None else (antenna,):
            read = tuple(t for t in self.present[a] if t not in self.unread[a])
            seq = self._send(a, FrameOp.INVENTORY, read, None)
        return seq

    def replay(self, seq: int) -> None:
        """``REPLAY SEQ``: line ``seq`` and every later one this boot still holds, as first
        sent (same seq), each with its time; ``ERR REPLAY`` if line ``seq`` is not held."""
        lines = list(self._sent)
        start = next((i for i, line in enumerate(lines) if line[0] == seq), None)
        if start is None:
            self._send(None, FrameOp.ERROR, ("REPLAY", "gone"), None)
            return
        for line_seq, antenna, op, args, hw_ms in lines[start:]:
            self.write_raw(encode_frame(self.reader_id, antenna, line_seq, op, args,
                                        hw_time_ms=hw_ms))

    def heartbeat(self) -> int:
        uptime = int((time.monotonic() - self._booted_at) * 1000)
        return self._send(None, FrameOp.HEARTBEAT, (str(uptime),), None)

    def error(self, code: str, *text: str) -> int:
        """The firmware reports a fault (``ERR CODE TEXT...``)."""
        return self._send(None, FrameOp.ERROR, (code, *text), None)

    def boot(self, reason: str = "power") -> int:
        """(Re)start: a newline to end whatever was half-sent, the banner, a full inventory.

        The tags themselves stay where they lie; only the firmware's counters restart.
        """
        self._seq = 0
        self._booted_at = time.monotonic()
        self._sent.clear()
        now = time.monotonic()
        for a in range(self.antennas):
            self.answered[a] = self.missed[a] = 0
        self._counted = {key: now for key in self._counted}
        self.write_raw(b"\r\n")
        self._send(None, FrameOp.BOOT, (FIRMWARE_VERSION, reason), None)
        return self.inventory()

    # ------------------------------------------------------------------ faults

    def write_raw(self, data: bytes) -> None:
        """Put bytes on the line as they are (garbage, half lines, ...)."""
        if self._master is None:
            return
        self._out += data
        self._flush()

    def drop_next(self, count: int = 1) -> None:
        """The next ``count`` lines are lost on the wire (their sequence numbers are used)."""
        self._drop += count

    def send_bad_crc(self, antenna: int, uid: str) -> int:
        """A ``+ uid`` line whose CRC is wrong (a bit flipped on the wire); the tag IS there."""
        if uid not in self.present[antenna]:
            self.present[antenna].append(uid)
        line = bytearray(encode_frame(self.reader_id, antenna, self._seq, FrameOp.ADDED, (uid,)))
        star = line.rindex(b"*")
        line[star + 1] = ord("0") if line[star + 1] != ord("0") else ord("1")
        seq = self._seq
        self._seq = next_seq(self._seq)
        self.write_raw(bytes(line))
        return seq

    def send_bad_crc_heartbeat(self) -> int:
        """A heartbeat line with a broken CRC (its sequence number is used up)."""
        line = bytearray(encode_frame(self.reader_id, None, self._seq, FrameOp.HEARTBEAT, ["0"]))
        star = line.rindex(b"*")
        line[star + 1] = ord("0") if line[star + 1] != ord("0") else ord("1")
        seq = self._seq
        self._seq = next_seq(self._seq)
        self.write_raw(bytes(line))
        return seq

    def reset_mid_line(self, antenna: int, uid: str, reason: str = "watchdog") -> int:
        """Half of a ``+ uid`` line, then the reader resets (boot banner, inventory)."""
        if uid not in self.present[antenna]:
            self.present[antenna].append(uid)
        line = encode_frame(self.reader_id, antenna, self._seq, FrameOp.ADDED, (uid,))
        self._out += line[: len(line) // 2]  # no newline: the banner starts on the same line
        self._seq = 0
        self._booted_at = time.monotonic()
        self._sent.clear()
        self._send(None, FrameOp.BOOT, (FIRMWARE_VERSION, reason), None)
        return self.inventory()

    # ------------------------------------------------------------------ delivery receipts

    def delivered(self, frame: object) -> None:
        """Hook for the host reader's ``on_frame``: the host has applied this frame."""
        seq = getattr(frame, "seq", None)
        if isinstance(seq, int):
            self.delivered_seq = seq
            self._delivered.set()

    async def wait_delivered(self, seq: int, timeout: float = 5.0) -> bool:
        """Wait until the host applied the line ``seq`` (in-process hosts only)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not self._is_delivered(seq):
            remaining = deadline - loop.time()
            if remaining <= 0:
                return False
            self._delivered.clear()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(remaining):
                    await self._delivered.wait()
        return True

    def _is_delivered(self, seq: int) -> bool:
        if self.delivered_seq is None:
            return False
        return (self.delivered_seq - seq) % SEQ_MODULO < SEQ_MODULO // 2

    # ------------------------------------------------------------------ internals

    def _send(self, antenna: int | None, op: FrameOp, args: tuple[str, ...],
              hw_time: float | None) -> int:
        seq = self._seq
        self._seq = next_seq(self._seq)
        self._sent.append((seq, antenna, op, args,
                           round((time.time() if hw_time is None else hw_time) * 1000)))
        if self._drop > 0:
            self._drop -= 1
            return seq
        hw_ms = None if hw_time is None else round(hw_time * 1000)
        self.write_raw(encode_frame(self.reader_id, antenna, seq, op, args, hw_time_ms=hw_ms))
        return seq

    def _flush(self) -> None:
        if self._master is None or not self._out:
            return
        try:
            written = os.write(self._master, self._out)
        except BlockingIOError:
            written = 0
        except OSError as error:
            if error.errno in (errno.EIO, errno.EBADF):
                self._out.clear()  # nobody on the other end: the line is lost, as on a real wire
                return
            raise
        del self._out[:written]
        assert self._loop is not None
        if self._out and not self._writing:
            self._loop.add_writer(self._master, self._flush)
            self._writing = True
        elif not self._out and self._writing:
            self._loop.remove_writer(self._master)
            self._writing = False

    def _on_readable(self) -> None:
        assert self._master is not None
        try:
            data = os.read(self._master, 4096)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            return  # EIO while the host has the port closed: nothing to read
        for item in self._decoder.feed(data):
            if isinstance(item, ProtocolError):
                self.command_errors.append(item)
                self._send(None, FrameOp.ERROR, ("BADCMD", item.kind), None)
            elif isinstance(item, Command):
                self.host_seen.set()
                self.commands.append(item)
                self._command(item)

    def _command(self, command: Command) -> None:
        if command.op is CommandOp.INVENTORY:
            self.last_inventory_seq = self.inventory(
                int(command.args[0]) if command.args else None)
            self.inventory_answered.set()
        elif command.op is CommandOp.PING:
            self._send(None, FrameOp.PONG, command.args, None)
        elif command.op is CommandOp.IDENT:
            self._send(None, FrameOp.IDENT,
                       ("SIMREADER", FIRMWARE_VERSION, self.reader_id, str(self.antennas)), None)
        elif command.op is CommandOp.REPLAY:
            self.replay(int(command.args[0]))
        elif command.op is CommandOp.STAT:
            self.stats(int(command.args[0]) if command.args else None)
        elif command.op is CommandOp.RATE:
            self.rate_ms = int(command.args[0])
            self._send(None, FrameOp.ACK, ("RATE", command.args[0]), None)

    async def _heartbeats(self) -> None:
        assert self.heartbeat_interval
        while True:
            await asyncio.sleep(self.heartbeat_interval)
            self.heartbeat()
