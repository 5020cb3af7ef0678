"""The reader's main loop: the serial protocol around the scanner.

Boot: CR LF, ``BOOT``, one ``INV`` per antenna. Then, round after round, every antenna is
polled in turn; changes go out as ``+``/``-`` at once, a ``HB`` when nothing was sent for a
second, and the host's commands (``INV``, ``RATE``, ``PING``, ``IDENT``) are answered between
two antennas. ``RATE`` is the period of a whole round.
"""

from . import VERSION
from .clock import Clock
from .inventory import Scanner
from .proto import SEQ_MODULO, LineSplitter, frame, parse_command


class Link:
    """The serial line to the host: USB CDC or a UART."""

    def write(self, data: bytes) -> None:
        raise NotImplementedError

    def read(self) -> bytes:
        """What arrived since the last call (b"" if nothing); never waits."""
        raise NotImplementedError


class App:
    def __init__(self, reader: str, scanner: Scanner, link: Link, clock: Clock,
                 rate_ms: int = 50, reason: str = "power", model: str = "BTR",
                 serial: str = "0", watchdog: object = None) -> None:
        self.reader = reader
        self.scanner = scanner
        self.link = link
        self.clock = clock
        self.rate_ms = rate_ms
        self.reason = reason
        self.model = model
        self.serial = serial
        self.watchdog = watchdog
        self.seq = 0
        self.running = True
        self.rounds = 0
        self.booted = clock.ticks_ms()
        self.last_sent = self.booted
        self.splitter = LineSplitter()

    def send(self, antenna: int, op: str, args: list[str]) -> None:
        self.link.write(frame(self.reader, antenna, self.seq, op, args))
        self.seq = (self.seq + 1) % SEQ_MODULO
        self.last_sent = self.clock.ticks_ms()

    def inventory(self, index: int) -> None:
        antenna = self.scanner.antennas[index]
        self.send(antenna.index, "INV", list(antenna.present))

    def boot(self) -> None:
        for antenna in self.scanner.antennas:
            self.scanner.settle(antenna)
        self.seq = 0
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
            if op == "INV":
                for i, antenna in enumerate(self.scanner.antennas):
                    if not args or antenna.index == int(args[0]):
                        self.inventory(i)
            elif op == "RATE":
                self.rate_ms = int(args[0])
                self.send(-1, "ACK", ["RATE", args[0]])
            elif op == "PING":
                self.send(-1, "PONG", args)
            elif op == "IDENT":
                self.send(-1, "ID", [self.model, VERSION, self.serial,
                                     str(len(self.scanner.antennas))])

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
                self.commands()
                step = 5 if rest > 5 else rest
                self.clock.sleep_ms(step)
                rest -= step
