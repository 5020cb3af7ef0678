"""MFRC522 (NXP MFRC522 datasheet rev. 3.9) over SPI: inventory of the ISO 14443-A tags on its
antenna.

Inventory: the field is switched off and on (every tag back to IDLE), then REQA, the
anticollision loop of ISO/IEC 14443-3 §6.5.3 (bit collisions resolved by taking the 1 branch),
SELECT per cascade level, HLTA, and REQA again until no tag answers. Every tag on the antenna is
found as long as the chip can tell the answers apart; a frame the chip cannot decode (CRC or
protocol error) ends the round with a problem, never with a guessed UID.
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

    # ------------------------------------------------------------------ registers (§8.1.2)

    def write(self, reg: int, value: int) -> None:
        self.port.transfer(bytes(((reg << 1) & 0x7E, value)))

    def write_fifo(self, data: bytes) -> None:
        self.port.transfer(bytes(((FIFO_DATA << 1) & 0x7E,)) + data)

    def read(self, reg: int) -> int:
        return self.port.transfer(bytes((((reg << 1) & 0x7E) | 0x80, 0)))[1]

    def read_fifo(self, count: int) -> bytes:
        addr = ((FIFO_DATA << 1) & 0x7E) | 0x80
        return self.port.transfer(bytes([addr] * count + [0]))[1:]

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

    def init(self) -> None:
        self.write(COMMAND, SOFT_RESET)
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
        for _ in range(200):
            irq = self.read(COM_IRQ)
            if irq & (IRQ_RX | IRQ_IDLE | IRQ_ERR | IRQ_TIMER):
                break
        else:
            # not even the timer fired: the chip is gone (a module off its cable reads 0x00)
            raise OSError(5, "MFRC522 does not answer")
        self.write(BIT_FRAMING, 0)
        if irq & IRQ_TIMER and not irq & IRQ_RX:
            return TIMEOUT, b"", 0
        error = self.read(ERROR)
        if error & ERR_FATAL:
            return FAULT, b"", 0
        count = self.read(FIFO_LEVEL) & 0x7F
        back = self.read_fifo(count) if count else b""
        bits = self.read(CONTROL) & 0x07
        if error & ERR_COLL:
            return COLLISION, back, bits
        return OK, back, bits

    # ------------------------------------------------------------------ ISO 14443-3

    def _select_one(self) -> tuple[bytes | None, str]:
        """Anticollision and select of one READY tag: (UID, "") or (None, problem)."""
        uid = b""
        for cl in SEL:
            known = bytearray(5)
            known_bits = 0
            for _ in range(33):
                full, bits = known_bits // 8, known_bits % 8
                nvb = ((2 + full) << 4) | bits
                frame = bytes((cl, nvb)) + bytes(known[:full + (1 if bits else 0)])
                status, back, _ = self.transceive(frame, bits, bits)
                if status in (TIMEOUT, FAULT):
                    return None, "anticollision_lost" if status == TIMEOUT else "frame_error"
                # the answer continues the known bits from byte `full`, bit `bits` on
                for i, b in enumerate(back):
                    if full + i >= 5:
                        break
                    mask = (0xFF << bits) & 0xFF if i == 0 else 0xFF
                    known[full + i] = (known[full + i] & ~mask & 0xFF) | (b & mask)
                if status == COLLISION:
                    coll = self.read(COLL)
                    if coll & 0x20:
                        return None, "collision_position_unknown"
                    pos = coll & 0x1F or 32
                    if pos <= known_bits:
                        return None, "collision_not_resolved"
                    known_bits = pos
                    bit = pos - 1
                    known[bit // 8] |= 1 << (bit % 8)
                    # bits after the collision are to be received again
                    if bit % 8 < 7:
                        known[bit // 8] &= (1 << (bit % 8 + 1)) - 1
                    continue
                break
            else:
                return None, "collision_not_resolved"
            if bcc(known[:4]) != known[4]:
                return None, "bcc_error"
            frame = bytes((cl, 0x70)) + bytes(known)
            status, back, _ = self.transceive(frame + crc_a(frame))
            if status != OK or len(back) != 3 or crc_a(back[:1]) != back[1:]:
                return None, "select_failed"
            sak = back[0]
            uid += bytes(known[1:4]) if known[0] == CASCADE_TAG else bytes(known[:4])
            if not sak & 0x04:
                return uid, ""
        return None, "uid_too_long"

    def inventory(self, limit: int) -> tuple[list[bytes], str]:
        """Every tag on the antenna, at most ``limit``: (UIDs, "" or a problem). The field is
        on only meanwhile: less current, and no field to detune the next antenna's."""
        self.field(False)
        self._sleep(1)
        self.field(True)
        self._sleep(self.field_settle_ms)
        try:
            return self._inventory(limit)
        finally:
            self.field(False)

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
