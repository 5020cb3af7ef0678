"""MFRC522 (NXP MFRC522 datasheet rev. 3.9) over SPI: inventory of the ISO 14443-A tags on its
antenna.

Inventory: the field is switched off (at least ``FIELD_OFF_MS``: every tag back to IDLE) and on,
then REQA, the anticollision loop of ISO/IEC 14443-3 §6.5.3 (bit collisions resolved by taking
the 1 branch), SELECT per cascade level, HLTA, and REQA again until no tag answers. Every tag on
the antenna is found as long as the chip can tell the answers apart; a frame the chip cannot
decode (CRC or protocol error) ends the round with a problem, never with a guessed UID.

The anticollision does not depend on how the chip counts CollReg's CollPos. The datasheet
(§9.3.1.15) does not say whether, when the frame is received with RxAlign, the count starts at
the UID's first bit (the Arduino MFRC522 library's reading), at bit 0 of the first received
byte, RxAlign included (NXP's reader library), or at the first received bit. Each reading gives
a candidate position; the nearest untried one is tried first (the bit there taken as 1). A
wrong guess either still matches the tags (bits before the real collision were received
correctly), so the next exchange goes on, or matches none: a timeout, and the next candidate is
tried. A UID is accepted only from an exchange with no collision, whose BCC checks and whose
SAK's cascade bit agrees with the cascade tag: whatever the guesses, it is a tag's own UID.
"""

from .clock import Clock
from .inventory import Frontend
from .iso14443 import CASCADE_TAG, HLTA, REQA, SEL, bcc, crc_a
from .ports import SpiPort

# registers (datasheet §9.2)
COMMAND = 0x01
COM_IRQ = 0x04
DIV_IRQ = 0x05
ERROR = 0x06
FIFO_DATA = 0x09
FIFO_LEVEL = 0x0A
CONTROL = 0x0C
BIT_FRAMING = 0x0D
COLL = 0x0E
MODE = 0x11
TX_CONTROL = 0x14
TX_ASK = 0x15
T_MODE = 0x2A
T_PRESCALER = 0x2B
T_RELOAD_H = 0x2C
T_RELOAD_L = 0x2D
VERSION = 0x37

# commands (§10.3)
IDLE = 0x00
TRANSCEIVE = 0x0C
SOFT_RESET = 0x0F

# ComIrqReg bits
IRQ_RX = 0x20
IRQ_IDLE = 0x10
IRQ_ERR = 0x02
IRQ_TIMER = 0x01
# ErrorReg bits
ERR_COLL = 0x08
ERR_FATAL = 0x01 | 0x02 | 0x04 | 0x10  # protocol, parity, CRC, buffer overflow

# CommandReg bit: set while the chip is powered down or still waking up (§9.3.1.2)
POWER_DOWN = 0x10

#: the longest wait for the chip (a transceive, a soft reset) before it counts as gone; the
#: receive timer (2 ms) fires long before on a chip that is there
WAIT_MS = 25
#: the field is off at least this long between two rounds: long enough for every tag to lose
#: power and come back in IDLE (ISO/IEC 14443-3 §6.2: a reset by field off of 5 ms or more)
FIELD_OFF_MS = 5

#: VersionReg values of genuine chips (0x91 v1.0, 0x92 v2.0) and the common clones.
VERSIONS = (0x91, 0x92, 0x88, 0x12, 0xB2)

OK = 0
TIMEOUT = 1
COLLISION = 2
FAULT = 3


class MFRC522(Frontend):
    model = "mfrc522"

    def __init__(self, port: SpiPort, clock: Clock, field_settle_ms: int = 5) -> None:
        self.port = port
        self.clock = clock
        self.field_settle_ms = field_settle_ms
        self.ready = False
        # a register access's two bytes out and in, kept: a round makes hundreds of them,
        # and a small board's heap should not churn for each (docs/benchmarks.md)
        self._out = bytearray(2)
        self._in = bytearray(2)
        # when the field went off (ticks), None while it is on or before the first round
        self._field_off_at: int | None = None

    # ------------------------------------------------------------------ registers (§8.1.2)

    def write(self, reg: int, value: int) -> None:
        self._out[0] = (reg << 1) & 0x7E
        self._out[1] = value
        self.port.transfer_into(self._out, self._in)

    def write_fifo(self, data: bytes) -> None:
        self.port.transfer(bytes(((FIFO_DATA << 1) & 0x7E,)) + data)

    def read(self, reg: int) -> int:
        self._out[0] = ((reg << 1) & 0x7E) | 0x80
        self._out[1] = 0
        self.port.transfer_into(self._out, self._in)
        return self._in[1]

    def read_fifo(self, count: int) -> bytes:
        addr = ((FIFO_DATA << 1) & 0x7E) | 0x80
        return self.port.transfer(bytes([addr] * count + [0]))[1:]

    def pause(self) -> None:
        """Between two polls of a wait for the chip: nothing here (a microcontroller with
        nothing else to do may spin); the Pi's reader sleeps a little instead, so that nine
        chips do not spin through every 2 ms receive timeout (readers/mfrc522.py)."""

    def _sleep(self, ms: int) -> None:
        if ms > 0:
            self.clock.sleep_ms(ms)

    # ------------------------------------------------------------------ chip

    def check(self) -> bool:
        """The chip answers with a known version (a missing module reads 0x00 or 0xFF)."""
        version = self.read(VERSION)
        if version not in VERSIONS:
            self.ready = False
            return False
        if not self.ready:
            self.init()
        return True

    def _elapsed(self, start: int) -> int:
        return self.clock.ticks_diff(self.clock.ticks_ms(), start)

    def init(self) -> None:
        self.write(COMMAND, SOFT_RESET)
        # the chip is up when PowerDown reads 0 (§9.3.1.2); registers written before are lost
        start = self.clock.ticks_ms()
        while True:
            # the deadline is read before the chip: a pause of this loop itself (a garbage
            # collection, a busy host) past WAIT_MS is not taken for the chip's silence
            late = self._elapsed(start) > WAIT_MS
            if not self.read(COMMAND) & POWER_DOWN:
                break
            if late:
                raise OSError(5, "MFRC522 does not come out of its soft reset")
            self._sleep(1)
        # timer: 13.56 MHz / (2*169+1) = 40 kHz, reload 80 -> 2 ms receive timeout
        self.write(T_MODE, 0x80)
        self.write(T_PRESCALER, 0xA9)
        self.write(T_RELOAD_H, 0)
        self.write(T_RELOAD_L, 80)
        self.write(TX_ASK, 0x40)   # 100 % ASK
        self.write(MODE, 0x3D)     # CRC preset 0x6363
        self.ready = True

    def field(self, on: bool) -> None:
        value = self.read(TX_CONTROL)
        self.write(TX_CONTROL, (value | 0x03) if on else (value & ~0x03))

    def transceive(self, data: bytes, last_bits: int = 0, rx_align: int = 0
                   ) -> tuple[int, bytes, int]:
        """Send ``data`` and wait for the answer: (status, bytes, valid bits of the last byte,
        0 meaning 8). A collision gives COLLISION and the bits before it."""
        self.write(COMMAND, IDLE)
        self.write(COM_IRQ, 0x7F)
        self.write(FIFO_LEVEL, 0x80)
        self.write_fifo(data)
        self.write(BIT_FRAMING, (rx_align << 4) | last_bits)
        self.write(COMMAND, TRANSCEIVE)
        self.write(BIT_FRAMING, 0x80 | (rx_align << 4) | last_bits)
        # bounded by time, not by a number of polls: a fast SPI clock polls many times in 2 ms
        start = self.clock.ticks_ms()
        while True:
            late = self._elapsed(start) > WAIT_MS  # before the read, as in init
            irq = self.read(COM_IRQ)
            if irq & (IRQ_RX | IRQ_IDLE | IRQ_ERR | IRQ_TIMER):
                break
            if late:
                # not even the timer fired: the chip is gone (a module off its cable reads 0)
                raise OSError(5, "MFRC522 does not answer")
            self.pause()
        self.write(BIT_FRAMING, 0)
        if irq & IRQ_TIMER and not irq & IRQ_RX:
            return TIMEOUT, b"", 0
        error = self.read(ERROR)
        count = self.read(FIFO_LEVEL) & 0x7F
        back = self.read_fifo(count) if count else b""
        bits = self.read(CONTROL) & 0x07
        # a collision first: the colliding bit usually breaks that byte's parity too, and the
        # bits before it are good
        if error & ERR_COLL:
            return COLLISION, back, bits
        if error & ERR_FATAL:
            return FAULT, b"", 0
        return OK, back, bits

    # ------------------------------------------------------------------ ISO 14443-3

    def _anticollision(self, cl: int) -> tuple[bytearray | None, str]:
        """The 5 bytes (UID part + BCC) of one READY tag at cascade level ``cl``."""
        # states still to try, (known bytes, number of known bits): the last one first
        trials: list[tuple[bytes, int]] = [(bytes(5), 0)]
        for _ in range(64):
            if not trials:
                break
            raw, known_bits = trials.pop()
            known = bytearray(raw)
            full, bits = known_bits // 8, known_bits % 8
            nvb = ((2 + full) << 4) | bits
            frame = bytes((cl, nvb)) + bytes(known[:full + (1 if bits else 0)])
            status, back, _ = self.transceive(frame, bits, bits)
            if status == TIMEOUT:
                if trials:
                    continue   # no tag has that bit: the position was misread, try another
                return None, "anticollision_lost"
            if status == FAULT:
                return None, "frame_error"
            # the answer continues the known bits from byte `full`, bit `bits` on
            for i, b in enumerate(back):
                if full + i >= 5:
                    break
                mask = (0xFF << bits) & 0xFF if i == 0 else 0xFF
                known[full + i] = (known[full + i] & ~mask & 0xFF) | (b & mask)
            if status == OK:
                return known, ""
            coll = self.read(COLL)
            if coll & 0x20:
                return None, "collision_position_unknown"
            value = coll & 0x1F or 32
            # the three readings of CollPos, the nearest tried first (pushed last)
            for pos in sorted({value, full * 8 + value, known_bits + value}, reverse=True):
                if known_bits < pos <= 40:
                    trials.append((_guess(known, pos), pos))
        return None, "collision_not_resolved"

    def _select_one(self) -> tuple[bytes | None, str]:
        """Anticollision and select of one READY tag: (UID, "") or (None, problem)."""
        uid = b""
        for cl in SEL:
            known, problem = self._anticollision(cl)
            if known is None:
                return None, problem
            if bcc(known[:4]) != known[4]:
                return None, "bcc_error"
            frame = bytes((cl, 0x70)) + bytes(known)
            status, back, _ = self.transceive(frame + crc_a(frame))
            if status != OK or len(back) != 3 or crc_a(back[:1]) != back[1:]:
                return None, "select_failed"
            cascade = bool(back[0] & 0x04)   # the SAK's cascade bit: UID not complete
            if cascade != (known[0] == CASCADE_TAG) and (cascade or cl == SEL[0]):
                # "not complete" without a cascade tag, or a cascade tag in a single-size UID
                # (ISO/IEC 14443-3 forbids uid0 = 88h): not a tag's own UID
                return None, "select_failed"
            uid += bytes(known[1:4]) if cascade else bytes(known[:4])
            if not cascade:
                return uid, ""
        return None, "uid_too_long"

    def inventory(self, limit: int) -> tuple[list[bytes], str]:
        """Every tag on the antenna, at most ``limit``: (UIDs, "" or a problem). The field is
        on only meanwhile: less current, and no field to detune the next antenna's."""
        self.field(False)
        off_at = self._field_off_at
        self._sleep(FIELD_OFF_MS if off_at is None else FIELD_OFF_MS - self._elapsed(off_at))
        self.field(True)
        self._field_off_at = None
        self._sleep(self.field_settle_ms)
        try:
            return self._inventory(limit)
        finally:
            self.field(False)
            self._field_off_at = self.clock.ticks_ms()

    def _inventory(self, limit: int) -> tuple[list[bytes], str]:
        found: list[bytes] = []
        while True:
            status, back, _ = self.transceive(bytes((REQA,)), 7)
            if status == TIMEOUT:
                return found, ""
            if status == FAULT:
                return found, "frame_error"
            if len(found) >= limit:
                return found, "too_many_tags"
            # an ATQA collision only says several tags answered: go on to anticollision
            uid, problem = self._select_one()
            if uid is None:
                return found, problem
            if uid in found:
                return found, "tag_answered_twice"
            found.append(uid)
            self.transceive(bytes(HLTA) + crc_a(bytes(HLTA)))  # no answer expected


def _guess(known: bytearray, pos: int) -> bytes:
    """``known`` up to bit ``pos`` (1-based), that bit taken as 1, the bits after it cleared."""
    guess = bytearray(known)
    bit = pos - 1
    guess[bit // 8] = (guess[bit // 8] | (1 << (bit % 8))) & ((2 << (bit % 8)) - 1)
    for i in range(bit // 8 + 1, 5):
        guess[i] = 0
    return bytes(guess)
