"""The reader's main loop: the serial protocol around the scanner.

Boot: CR LF, ``BOOT``, one ``INV`` per antenna. Then, round after round, every antenna is
polled in turn; changes go out as ``+``/``-`` at once, a ``HB`` when nothing was sent for a
second, and the host's commands (``INV``, ``RATE``, ``PING``, ``IDENT``, ``REPLAY``, and
protocol 2's ``STAT``: each antenna's rounds, answered and missed) are answered between two
antennas. ``RATE`` is the period of a whole round.

``REPLAY SEQ [NOW_MS]`` sends again line ``SEQ`` and every later line of this boot, as first
sent (docs/serial-protocol.md), so that a host that was away (the bridge restarted) learns
what happened meanwhile in order. The board has no clock of the epoch: each line is kept with
the ``ticks_ms`` it was sent at, and dated on replay from the host's ``NOW_MS`` (the line's
age before it); without ``NOW_MS`` the replayed lines carry no time. The lines are kept in a
ring bounded both in lines and in bytes (``REPLAY_LINES``, ``REPLAY_BYTES``): a small board's
heap holds it whatever the lines (an ``INV`` of 60 tags is about 900 bytes).
"""

from . import VERSION
from .clock import Clock
from .inventory import Scanner
from .proto import SEQ_MODULO, LineSplitter, frame, parse_command

#: this boot's latest lines kept for REPLAY, at most so many ...
REPLAY_LINES = 256
#: ... and at most about so many bytes of their fields (the oldest go first)
REPLAY_BYTES = 8192
#: what one kept line costs beyond its fields' text (its tuple, seq, time, antenna)
LINE_COST = 48


class Link:
    """The serial line to the host: USB CDC or a UART."""

    def write(self, data: bytes) -> None:
        raise NotImplementedError

    def read(self) -> bytes:
        """What arrived since the last call (b"" if nothing); never waits."""
        raise NotImplementedError


class App:
    """``arm_watchdog``: makes the board's watchdog (which, once started, cannot be stopped),
    called when the first well-formed host command arrives: until a host speaks the
    protocol, nothing arms it, so ``mpremote`` (which speaks the REPL, not the protocol) can
    stop the loop of a freshly reset board and copy files for as long as it takes. The
    watchdog is fed every round and while the loop waits, so every scan period works."""

    def __init__(self, reader: str, scanner: Scanner, link: Link, clock: Clock,
                 rate_ms: int = 100, reason: str = "power", model: str = "BTR",
                 serial: str = "0", watchdog: object = None,
                 arm_watchdog: object = None) -> None:
        self.reader = reader
        self.scanner = scanner
        self.link = link
        self.clock = clock
        self.rate_ms = rate_ms
        self.reason = reason
        self.model = model
        self.serial = serial
        self.watchdog = watchdog
        self.arm_watchdog = arm_watchdog
        self.seq = 0
        self.running = True
        self.rounds = 0
        self.booted = clock.ticks_ms()
        self.last_sent = self.booted
        self.splitter = LineSplitter()
        #: the lines kept for REPLAY, oldest first: (seq, ticks_ms sent, antenna, op, args)
        self.history: list[tuple[int, int, int, str, list[str]]] = []
        self.history_bytes = 0

    def send(self, antenna: int, op: str, args: list[str]) -> None:
        self.link.write(frame(self.reader, antenna, self.seq, op, args))
        self.last_sent = self.clock.ticks_ms()
        self.keep(self.seq, self.last_sent, antenna, op, args)
        self.seq = (self.seq + 1) % SEQ_MODULO

    def keep(self, seq: int, sent: int, antenna: int, op: str, args: list[str]) -> None:
        """Keep a line sent for REPLAY; the oldest go when the ring is full."""
        size = LINE_COST + len(op)
        for arg in args:
            size += len(arg) + 1
        self.history.append((seq, sent, antenna, op, args))
        self.history_bytes += size
        while len(self.history) > REPLAY_LINES or \
                (self.history_bytes > REPLAY_BYTES and len(self.history) > 1):
            old = self.history.pop(0)
            self.history_bytes -= LINE_COST + len(old[3])
            for arg in old[4]:
                self.history_bytes -= len(arg) + 1

    def replay(self, seq: int, now_ms: int) -> None:
        """Line ``seq`` and every later line kept, as first sent (same seq), each dated
        ``now_ms`` minus its age (``now_ms`` < 0: undated); ``ERR REPLAY gone`` if line
        ``seq`` is no longer kept (too old, or sent before a reboot)."""
        start = -1
        for i in range(len(self.history)):
            if self.history[i][0] == seq:
                start = i
                break
        if start < 0:
            self.send(-1, "ERR", ["REPLAY", "gone"])
            return
        now = self.clock.ticks_ms()
        for line_seq, sent, antenna, op, args in self.history[start:]:
            at = -1 if now_ms < 0 else now_ms - self.clock.ticks_diff(now, sent)
            self.link.write(frame(self.reader, antenna, line_seq, op, args, at))

    def inventory(self, index: int) -> None:
        antenna = self.scanner.antennas[index]
        self.send(antenna.index, "INV", list(antenna.present))

    def boot(self) -> None:
        for antenna in self.scanner.antennas:
            self.scanner.settle(antenna)
        self.seq = 0
        self.history = []
        self.history_bytes = 0
        self.link.write(b"\r\n")
        self.send(-1, "BOOT", [VERSION, self.reason])
        for i, antenna in enumerate(self.scanner.antennas):
            self.inventory(i)
            if antenna.fault:
                self.send(-1, "ERR", [f"ANT{antenna.index}", antenna.fault,
                                      antenna.chip.model])

    def commands(self) -> None:
        data = self.link.read()
        if not data:
            return
        for line in self.splitter.feed(data):
            parsed = parse_command(line)
            if isinstance(parsed, str):
                self.send(-1, "ERR", ["BADCMD", parsed])
                continue
            op, args = parsed
            if self.watchdog is None and self.arm_watchdog is not None:
                # a host speaks the protocol: the reader is in service, the watchdog on
                self.watchdog = self.arm_watchdog()  # type: ignore[operator]
            if op == "INV":
                for i, antenna in enumerate(self.scanner.antennas):
                    if not args or antenna.index == int(args[0]):
                        self.inventory(i)
            elif op == "STAT":
                for antenna in self.scanner.antennas:
                    if not args or antenna.index == int(args[0]):
                        self.send(antenna.index, "STAT", [str(antenna.stat_rounds),
                                                          str(antenna.stat_answered),
                                                          str(antenna.stat_missed)])
            elif op == "RATE":
                self.rate_ms = int(args[0])
                self.send(-1, "ACK", ["RATE", args[0]])
            elif op == "PING":
                self.send(-1, "PONG", args)
            elif op == "IDENT":
                self.send(-1, "ID", [self.model, VERSION, self.serial,
                                     str(len(self.scanner.antennas))])
            elif op == "REPLAY":
                self.replay(int(args[0]), int(args[1]) if len(args) > 1 else -1)

    def round(self) -> None:
        """Poll every antenna once."""
        for i, antenna in enumerate(self.scanner.antennas):
            self.commands()
            for change in self.scanner.scan(antenna):
                if change[0] == "INV":
                    self.inventory(i)
                elif change[0] == "ERR":
                    self.send(-1, "ERR", list(change[1:]))
                else:
                    self.send(antenna.index, change[0], [change[1]])
        self.rounds += 1
        self.feed()

    def feed(self) -> None:
        if self.watchdog is not None:
            self.watchdog.feed()  # type: ignore[attr-defined]

    def run(self) -> None:
        self.boot()
        while self.running:
            start = self.clock.ticks_ms()
            self.round()
            now = self.clock.ticks_ms()
            if self.clock.ticks_diff(now, self.last_sent) >= 1000:
                self.send(-1, "HB", [str(self.clock.ticks_diff(now, self.booted))])
            rest = self.rate_ms - self.clock.ticks_diff(self.clock.ticks_ms(), start)
            while rest > 0 and self.running:
                self.feed()   # a scan period longer than the watchdog's is still served
                self.commands()
                step = 5 if rest > 5 else rest
                self.clock.sleep_ms(step)
                rest -= step
