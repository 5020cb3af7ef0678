"""PN532 (NXP PN532 User Manual UM0701-02) over I2C or SPI: inventory of the ISO 14443-A tags
on its antenna.

Frames are the manual's normal information frames (§6.2.1.1); the host waits for the chip's
ready status, reads the ACK frame, then the answer. Inventory: the field off and on (every tag
back to IDLE, §7.3.1 RFConfiguration item 1), then ``InListPassiveTarget`` for one 106 kbit/s
type A target (§7.3.5: the chip runs the anticollision itself), ``InCommunicateThru`` of an HLTA
to silence it, and again until no target answers. ``MxRtyPassiveActivation`` is set to 1 first:
the default 0xFF makes the chip wait for a tag for ever.

Setting up, in the order the manual asks: on SPI a wake-up (chip select low, then
``WAKE_MS`` for the oscillator to start before the first byte counts), ``SAMConfiguration``
before anything else (it takes the chip out of its power-up LowVbat state, §7.2.10), then
``GetFirmwareVersion`` and ``RFConfiguration``. On I2C the chip does not acknowledge its address
while it is busy (§6.2.4): a NAK is retried for up to ``WAIT_MS`` before the chip counts as gone.
"""

from .clock import Clock
from .inventory import Frontend
from .iso14443 import HLTA
from .ports import I2cPort, SpiPort

PREAMBLE = b"\x00\x00\xff"
ACK = b"\x00\x00\xff\x00\xff\x00"
HOST_TO_PN532 = 0xD4
PN532_TO_HOST = 0xD5

GET_FIRMWARE_VERSION = 0x02
SAM_CONFIGURATION = 0x14
RF_CONFIGURATION = 0x32
IN_COMMUNICATE_THRU = 0x42
IN_LIST_PASSIVE_TARGET = 0x4A
IN_RELEASE = 0x52

I2C_ADDRESS = 0x24

#: how long a NAKing I2C chip is retried before it counts as gone
WAIT_MS = 25
#: SPI: after the chip select first goes low, the PN532's oscillator needs this long before it
#: takes bytes (its power-up and power-down states sleep with the oscillator stopped)
WAKE_MS = 2


class PN532Error(Exception):
    """The chip did not answer as the manual says (missing, unplugged, garbled)."""


def build_frame(data: bytes) -> bytes:
    """A normal information frame around TFI+``data`` (§6.2.1.1)."""
    body = bytes((HOST_TO_PN532,)) + data
    length = len(body)
    checksum = (-sum(body)) & 0xFF
    return PREAMBLE + bytes((length, (-length) & 0xFF)) + body + bytes((checksum, 0))


def parse_frame(raw: bytes) -> bytes:
    """TFI-stripped payload of the PN532's answer frame; raises PN532Error if malformed."""
    start = raw.find(b"\x00\xff")
    if start < 0 or start + 4 > len(raw):
        raise PN532Error("no frame start")
    length, lcs = raw[start + 2], raw[start + 3]
    if (length + lcs) & 0xFF:
        raise PN532Error("bad length checksum")
    body = raw[start + 4:start + 4 + length]
    if len(body) != length or start + 4 + length >= len(raw):
        raise PN532Error("frame cut short")
    if (sum(body) + raw[start + 4 + length]) & 0xFF:
        raise PN532Error("bad data checksum")
    if not body or body[0] != PN532_TO_HOST:
        raise PN532Error("not an answer frame")
    return body[1:]


class Transport:
    """How frames reach the chip: ``send`` a frame, ``ready`` says an answer waits, ``receive``
    reads ``count`` bytes of it; ``wake`` before the first command. ``clock`` is set by the
    driver."""

    clock: Clock | None = None

    def wake(self) -> None:
        """Nothing to do on I2C: the chip wakes on its address."""

    def send(self, frame: bytes) -> None:
        raise NotImplementedError

    def ready(self) -> bool:
        raise NotImplementedError

    def receive(self, count: int) -> bytes:
        raise NotImplementedError


class I2cTransport(Transport):
    """§6.2.4: every read starts with the status byte (bit 0: ready); polling reads that byte
    alone, and a read of the frame gets it again in front."""

    def __init__(self, port: I2cPort) -> None:
        self.port = port

    def _retry(self, transaction: object, *args: object) -> object:
        """``transaction(*args)``, again while the chip NAKs (busy), for up to WAIT_MS."""
        clock = self.clock
        if clock is None:  # no clock to wait by: one try
            return transaction(*args)  # type: ignore[operator]
        start = clock.ticks_ms()
        while True:
            # the deadline is read before the try: a pause of this loop itself past WAIT_MS
            # is not taken for the chip's silence
            late = clock.ticks_diff(clock.ticks_ms(), start) > WAIT_MS
            try:
                return transaction(*args)  # type: ignore[operator]
            except OSError:
                if late:
                    raise
                clock.sleep_ms(1)

    def send(self, frame: bytes) -> None:
        self._retry(self.port.write, frame)

    def ready(self) -> bool:
        try:
            raw = self.port.read(1)
        except OSError:
            return False   # busy: it NAKs until it has the answer; the caller's wait bounds it
        return bool(raw) and bool(raw[0] & 1)

    def receive(self, count: int) -> bytes:
        raw = self._retry(self.port.read, 1 + count)
        if not isinstance(raw, bytes) or not raw or not raw[0] & 1:
            raise PN532Error("not ready")
        return raw[1:]


def _reverse(data: bytes) -> bytes:
    """The PN532's SPI is LSB first; most microcontroller SPI blocks send MSB first only."""
    out = bytearray(len(data))
    for i, b in enumerate(data):
        r = 0
        for _ in range(8):
            r = (r << 1) | (b & 1)
            b >>= 1
        out[i] = r
    return bytes(out)


class SpiTransport(Transport):
    """§6.2.5: a first byte says what follows: 0x01 data write, 0x02 status read, 0x03 data
    read; bits go LSB first."""

    def __init__(self, port: SpiPort) -> None:
        self.port = port

    def _transfer(self, data: bytes) -> bytes:
        return _reverse(self.port.transfer(_reverse(data)))

    def wake(self) -> None:
        # a status read's chip select wakes the chip; what it reads meanwhile is lost
        self._transfer(b"\x02\x00")
        if self.clock is not None:
            self.clock.sleep_ms(WAKE_MS)

    def send(self, frame: bytes) -> None:
        self._transfer(b"\x01" + frame)

    def ready(self) -> bool:
        return bool(self._transfer(b"\x02\x00")[1] & 1)

    def receive(self, count: int) -> bytes:
        return self._transfer(b"\x03" + bytes(count))[1:]


class PN532(Frontend):
    model = "pn532"

    def __init__(self, transport: Transport, clock: Clock, timeout_ms: int = 100) -> None:
        self.transport = transport
        self.transport.clock = clock
        self.clock = clock
        self.timeout_ms = timeout_ms
        self.ready = False

    def _wait_ready(self, timeout_ms: int) -> None:
        start = self.clock.ticks_ms()
        while True:
            late = self.clock.ticks_diff(self.clock.ticks_ms(), start) > timeout_ms
            if self.transport.ready():  # read after the deadline, as in _retry
                return
            if late:
                raise PN532Error("no answer")
            self.clock.sleep_ms(1)

    def call(self, command: int, params: bytes = b"", timeout_ms: int = 0) -> bytes:
        """Send a command, check its ACK, return the answer's data after the response code."""
        self.transport.send(build_frame(bytes((command,)) + params))
        self._wait_ready(self.timeout_ms)
        if self.transport.receive(6) != ACK:
            raise PN532Error("no ACK")
        self._wait_ready(timeout_ms or self.timeout_ms)
        # the longest answer read here (InListPassiveTarget, one target, 10-byte UID) is 26
        answer = parse_frame(self.transport.receive(32))
        if not answer or answer[0] != command + 1:
            raise PN532Error("answer to another command")
        return answer[1:]

    def check(self) -> bool:
        """The chip answers GetFirmwareVersion as a PN532 (IC 0x32); set it up the first time
        (woken, SAMConfiguration first)."""
        try:
            if not self.ready:
                self.transport.wake()
                self.call(SAM_CONFIGURATION, b"\x01\x14\x01")   # normal mode, no IRQ wait
            version = self.call(GET_FIRMWARE_VERSION)
            if len(version) < 4 or version[0] != 0x32:
                self.ready = False
                return False
            if not self.ready:
                self.call(RF_CONFIGURATION, b"\x05\xff\x01\x01")  # 1 passive activation try
                self.ready = True
        except (PN532Error, OSError):
            self.ready = False
            return False
        return True

    def field(self, on: bool) -> None:
        self.call(RF_CONFIGURATION, b"\x01" + (b"\x01" if on else b"\x00"))

    def inventory(self, limit: int) -> tuple[list[bytes], str]:
        """Every tag on the antenna, at most ``limit``: (UIDs, "" or a problem)."""
        self.field(False)
        self.field(True)
        try:
            return self._inventory(limit)
        finally:
            self.field(False)   # less current, and no field to detune the next antenna's

    def _inventory(self, limit: int) -> tuple[list[bytes], str]:
        found: list[bytes] = []
        while True:
            answer = self.call(IN_LIST_PASSIVE_TARGET, b"\x01\x00", 200)
            if not answer or answer[0] == 0:
                return found, ""
            if len(found) >= limit:
                return found, "too_many_tags"
            # Tg, SENS_RES (2), SEL_RES, NFCIDLength, NFCID1
            if len(answer) < 6 or len(answer) < 6 + answer[5]:
                return found, "frame_error"
            uid = bytes(answer[6:6 + answer[5]])
            if uid in found:
                return found, "tag_answered_twice"
            found.append(uid)
            status = self.call(IN_COMMUNICATE_THRU, bytes(HLTA))
            # HLTA has no answer: the chip reports a timeout (status 0x01) - that is success
            if status and status[0] & 0x3F not in (0x00, 0x01):
                return found, "halt_failed"
