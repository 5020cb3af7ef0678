"""Emulated 13.56 MHz front ends and the tags in their fields, for the firmware's tests and
benchmarks and for the Pi-attached reader backends' tests.

* :class:`Tag` - an ISO/IEC 14443-3 type A tag (NTAG213: 7-byte UID, two cascade levels) with
  its state machine (IDLE, READY, ACTIVE, HALT) and bit-level anticollision answers;
* :class:`Field` - which tags lie on which antenna (thread-safe: tests move cards while the
  firmware polls in its own thread);
* :class:`EmuMFRC522` - the MFRC522 at the register level, behind its SPI protocol (datasheet
  §8.1.2): FIFO, ComIrqReg, ErrorReg, CollReg, BitFramingReg, TxControlReg, the Transceive
  command and its timer, the soft reset's wake-up. ``collpos`` chooses how CollReg's CollPos
  counts when the answer is received with RxAlign (the datasheet leaves it open): ``"nxp"``
  from bit 0 of the first received byte, RxAlign included (NXP's reader library), or
  ``"arduino"`` from the first bit of the UID at this cascade level (the Arduino MFRC522
  library). A collision sets ParityErr with CollErr, as the broken bit breaks its byte's
  parity;
* :class:`EmuPN532` - the PN532 at the frame level (UM0701-02 §6.2): normal information
  frames, ACK, the I2C status byte, the SPI DW/SR/DR prefixes, and the commands a reader uses;
  at power-up (and when its cable comes back) in LowVbat, where it takes nothing but
  SAMConfiguration, and asleep on SPI (the first chip select wakes it; bytes in the next
  ``WAKE_S`` are lost); on I2C it NAKs its address for ``busy_s`` seconds after each command
  (it works meanwhile). A new command drops an answer the host has not read, as the chip does.

``timing`` (an :class:`AirTime`) makes each exchange take the time the datasheets give (bit
time at 106 kbit/s, frame delay time, the receive timeout); without it answers are immediate.
What is *not* emulated: field strength, coupling and detuning of stacked tags - a tag either
answers a poll or it does not (``Tag.flicker`` makes it answer one field-on in two).
"""

from __future__ import annotations

import errno
import threading
import time
from collections.abc import Callable

from firmware_bridge.mcu.btreader.iso14443 import CASCADE_TAG, HLTA, REQA, SEL, WUPA, bcc, crc_a
from firmware_bridge.mcu.btreader.ports import I2cPort, SpiPort

__all__ = ["Tag", "Field", "AirTime", "EmuMFRC522", "EmuPN532", "COLLPOS_READINGS", "ChipSpi",
           "ChipI2c"]

#: the two readings of the MFRC522's CollPos (see EmuMFRC522)
COLLPOS_READINGS = ("nxp", "arduino")

IDLE, READY, ACTIVE, HALT = "IDLE", "READY", "ACTIVE", "HALT"

#: ISO/IEC 14443-2 type A at 106 kbit/s: one bit is 128/fc = 9.44 us.
BIT_S = 128 / 13.56e6
#: ISO/IEC 14443-3 frame delay time PCD->PICC for a standard frame: 1172/fc, about 86 us.
FDT_S = 1172 / 13.56e6


class AirTime:
    """Time spent on the air, paid in real time: sleeps are batched to whole milliseconds
    (``time.sleep`` cannot do tens of microseconds) so that the total is right."""

    def __init__(self, spi_hz: float = 4e6) -> None:
        self.owed = 0.0
        self.spent = 0.0
        #: the MFRC522's SPI clock (the board presets use 4 MHz; datasheet §8.1.2: up to 10)
        self.spi_hz = spi_hz

    def pay(self, seconds: float) -> None:
        self.owed += seconds
        self.spent += seconds
        if self.owed >= 0.001:
            start = time.perf_counter()
            time.sleep(self.owed)
            self.owed -= time.perf_counter() - start

    def frame(self, tx_bits: int, rx_bits: int) -> None:
        # each byte carries a parity bit on the air
        self.pay((tx_bits * 9 / 8 + rx_bits * 9 / 8) * BIT_S + (FDT_S if rx_bits else 0))


class Tag:
    """One tag. ``flicker``: at the edge of the field, it powers up one field-on in two."""

    def __init__(self, uid: str, *, flicker: bool = False) -> None:
        self.uid = bytes.fromhex(uid)
        if len(self.uid) not in (4, 7):
            raise ValueError(f"emulated tags have 4 or 7 byte UIDs, not {uid!r}")
        self.flicker = flicker
        self.state = IDLE
        self.level = 0
        self.powered = False
        self._ups = 0

    @property
    def atqa(self) -> bytes:
        return b"\x44\x00" if len(self.uid) == 7 else b"\x04\x00"

    def levels(self) -> list[bytes]:
        """The 5 bytes (UID part + BCC) the tag sends at each cascade level."""
        if len(self.uid) == 4:
            parts = [self.uid]
        else:
            parts = [bytes((CASCADE_TAG,)) + self.uid[:3], self.uid[3:]]
        return [p + bytes((bcc(p),)) for p in parts]

    def power(self, on: bool) -> None:
        if on and not self.powered:
            self._ups += 1
        self.powered = on and (not self.flicker or self._ups % 2 == 1)
        self.state = IDLE
        self.level = 0


class Field:
    """Tags per antenna key (any hashable: "N", ("bidbox", 2), ...), and whose field is on."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.tags: dict[object, list[Tag]] = {}
        self.on: set[object] = set()

    def place(self, key: object, uid: str, *, flicker: bool = False) -> Tag:
        with self.lock:
            tag = Tag(uid, flicker=flicker)
            tag.power(key in self.on)
            self.tags.setdefault(key, []).append(tag)
            return tag

    def lift(self, key: object, uid: str) -> None:
        with self.lock:
            self.tags[key] = [t for t in self.tags.get(key, []) if t.uid.hex().upper() != uid]

    def set_flicker(self, key: object, uid: str, flicker: bool) -> None:
        with self.lock:
            for tag in self.tags.get(key, []):
                if tag.uid.hex().upper() == uid:
                    tag.flicker = flicker

    def power(self, key: object, on: bool) -> None:
        with self.lock:
            if on:
                self.on.add(key)
            else:
                self.on.discard(key)
            for tag in self.tags.get(key, []):
                tag.power(on)

    def answering(self, key: object) -> list[Tag]:
        with self.lock:
            if key not in self.on:
                return []
            return [t for t in self.tags.get(key, []) if t.powered]


def _bit(data: bytes, i: int) -> int:
    return (data[i // 8] >> (i % 8)) & 1


class _Air:
    """ISO/IEC 14443-3 exchanges of the tags on one antenna, as both chips use them."""

    def __init__(self, field: Field, key: Callable[[], object]) -> None:
        self.field = field
        self.key = key

    def tags(self) -> list[Tag]:
        return self.field.answering(self.key())

    def request(self, wake: bool) -> list[Tag]:
        woken = [t for t in self.tags() if t.state == IDLE or (wake and t.state == HALT)]
        for tag in woken:
            tag.state, tag.level = READY, 0
        return woken

    def candidates(self, cl: int) -> list[Tag]:
        return [t for t in self.tags()
                if t.state == READY and t.level < len(t.levels()) and SEL[t.level] == cl]

    def select(self, cl: int, cl_bytes: bytes) -> Tag | None:
        """SELECT at one cascade level: every READY tag whose bytes match goes on (two tags
        can share their first level), the others go back to IDLE."""
        chosen = None
        for tag in self.candidates(cl):
            if tag.levels()[tag.level] == cl_bytes:
                tag.level += 1
                if tag.level == len(tag.levels()):
                    tag.state = ACTIVE
                chosen = tag
            else:
                tag.state = IDLE
        return chosen

    def halt(self) -> bool:
        for tag in self.tags():
            if tag.state == ACTIVE:
                tag.state = HALT
                return True
        return False


# ---------------------------------------------------------------------------------- MFRC522

_COMMAND, _COM_IRQ, _ERROR, _FIFO, _FIFO_LEVEL = 0x01, 0x04, 0x06, 0x09, 0x0A
_CONTROL, _BIT_FRAMING, _COLL, _TX_CONTROL = 0x0C, 0x0D, 0x0E, 0x14
_T_PRESCALER, _T_RELOAD_H, _T_RELOAD_L, _VERSION = 0x2B, 0x2C, 0x2D, 0x37


class _Chip:
    """A front end on one antenna: ``key`` (or ``key()``, which a multiplexer changes) names
    the antenna its field reaches; ``connected = False`` is the module off its cable."""

    def __init__(self, field: Field, key: Callable[[], object] | object,
                 timing: AirTime | None = None) -> None:
        self.air = _Air(field, key if callable(key) else (lambda: key))
        self.field = field
        self.timing = timing
        self.connected = True


#: the longest an emulated MFRC522 takes to wake from a soft reset, however few reads
#: (the driver waits up to 25 ms, firmware_bridge/mcu/btreader/mfrc522.py's WAIT_MS)
MFRC522_WAKE_S = 0.005


class EmuMFRC522(_Chip):
    """An MFRC522 behind its SPI protocol. Off its cable, MISO reads 0x00 and nothing
    happens. After a soft reset the chip wakes up for ``wake_reads`` reads of CommandReg
    (PowerDown reads 1 meanwhile) and ignores register writes until then, or until
    ``wake_s`` seconds have passed: a real chip's oscillator starts in time, not in reads, and a
    driver paused longer than its own deadline (a busy test machine) must find it up."""

    def __init__(self, field: Field, key: Callable[[], object] | object,
                 timing: AirTime | None = None, *, collpos: str = "nxp",
                 wake_reads: int = 2, wake_s: float | None = MFRC522_WAKE_S) -> None:
        if collpos not in COLLPOS_READINGS:
            raise ValueError(f"collpos is one of {COLLPOS_READINGS}, not {collpos!r}")
        super().__init__(field, key, timing)
        self.collpos = collpos
        self.wake_reads = wake_reads
        #: seconds after which it is up however few reads (None: only the reads count)
        self.wake_s = wake_s
        self.waking = 0
        self.transactions = 0
        #: writes lost because they came while the chip was waking up
        self.lost_writes = 0
        self._field_key: object = None
        self.reset()

    def reset(self) -> None:
        self.waking = self.wake_reads
        self._reset_at = time.monotonic()
        self.regs = bytearray(0x40)
        self.regs[_VERSION] = 0x92
        self.regs[_TX_CONTROL] = 0x80
        self.regs[_T_PRESCALER] = 0xA9
        self.regs[_T_RELOAD_L] = 0xE8
        self.regs[_T_RELOAD_H] = 0x03
        self.fifo = bytearray()
        self._set_field(False)

    # SPI: one chip-select period
    def spi_transfer(self, data: bytes) -> bytes:
        self.transactions += 1
        if self.timing is not None:
            self.timing.pay(len(data) * 8 / self.timing.spi_hz)
        if not self.connected or not data:
            return bytes(len(data))
        if data[0] & 0x80:
            out = bytearray(1)
            for b in data[:-1]:
                out.append(self._read((b >> 1) & 0x3F))
            return bytes(out[: len(data)])
        reg = (data[0] >> 1) & 0x3F
        for value in data[1:]:
            self._write(reg, value)
        return bytes(len(data))

    def _still_waking(self) -> bool:
        if self.waking and self.wake_s is not None \
                and time.monotonic() - self._reset_at >= self.wake_s:
            self.waking = 0
        return bool(self.waking)

    def _read(self, reg: int) -> int:
        if reg == _COMMAND and self._still_waking():
            self.waking -= 1
            return self.regs[reg] | 0x10   # PowerDown: still waking up
        if reg == _FIFO:
            return self.fifo.pop(0) if self.fifo else 0
        if reg == _FIFO_LEVEL:
            return len(self.fifo)
        return self.regs[reg]

    def _write(self, reg: int, value: int) -> None:
        if self._still_waking() and not (reg == _COMMAND and value & 0x0F == 0x0F):
            self.lost_writes += 1
            return
        if reg == _FIFO:
            self.fifo.append(value)
        elif reg == _FIFO_LEVEL:
            if value & 0x80:
                self.fifo.clear()
        elif reg == _COM_IRQ:
            if value & 0x80:
                self.regs[reg] |= value & 0x7F
            else:
                self.regs[reg] &= ~value & 0x7F
        elif reg == _COMMAND:
            command = value & 0x0F
            if command == 0x0F:
                self.reset()
                return
            self.regs[reg] = value
        elif reg == _TX_CONTROL:
            self.regs[reg] = value
            self._set_field(value & 0x03 == 0x03)
        elif reg == _BIT_FRAMING:
            self.regs[reg] = value
            if value & 0x80 and self.regs[_COMMAND] & 0x0F == 0x0C:
                self._transceive()
        else:
            self.regs[reg] = value

    def _set_field(self, on: bool) -> None:
        if self._field_key is not None:
            self.field.power(self._field_key, False)
            self._field_key = None
        if on:
            self._field_key = self.air.key()
            self.field.power(self._field_key, True)

    def _timeout(self) -> None:
        if self.timing is not None:
            reload = (self.regs[_T_RELOAD_H] << 8) | self.regs[_T_RELOAD_L]
            self.timing.pay((reload + 1) * (2 * self.regs[_T_PRESCALER] + 1) / 13.56e6)
        self.regs[_COM_IRQ] |= 0x01  # TimerIRq

    def _answer(self, data: bytes, last_bits: int = 0, error: int = 0) -> None:
        self.fifo = bytearray(data)
        self.regs[_CONTROL] = (self.regs[_CONTROL] & ~0x07) | last_bits
        self.regs[_ERROR] = error
        self.regs[_COM_IRQ] |= 0x20 | 0x10 | (0x02 if error else 0)  # RxIRq, IdleIRq, ErrIRq

    def _transceive(self) -> None:
        sent = bytes(self.fifo)
        self.fifo.clear()
        framing = self.regs[_BIT_FRAMING]
        last_bits = framing & 0x07
        self.regs[_ERROR] = 0
        self.regs[_COLL] = 0
        tx_bits = len(sent) * 8 - ((8 - last_bits) % 8 if sent else 0)
        if self.regs[_TX_CONTROL] & 0x03 != 0x03 or not sent:
            self._timeout()
            return
        if len(sent) == 1 and last_bits == 7 and sent[0] in (REQA, WUPA):
            woken = self.air.request(sent[0] == WUPA)
            if not woken:
                self._timeout()
                return
            if self.timing:
                self.timing.frame(tx_bits, 16)
            atqas = {t.atqa for t in woken}
            atqa = bytes(a | b for a, b in zip(*atqas, strict=False)) if len(atqas) > 1 \
                else next(iter(atqas))
            self._answer(atqa, 0, 0x08 if len(atqas) > 1 else 0)
            return
        if len(sent) >= 2 and sent[0] in SEL:
            if sent[1] == 0x70 and len(sent) == 9:
                if crc_a(sent[:7]) != sent[7:]:
                    self._timeout()
                    return
                tag = self.air.select(sent[0], sent[2:7])
                if tag is None:
                    self._timeout()
                    return
                if self.timing:
                    self.timing.frame(tx_bits, 24)
                sak = bytes((0x00 if tag.state == ACTIVE else 0x04,))
                self._answer(sak + crc_a(sak))
                return
            self._anticollision(sent, tx_bits)
            return
        if sent[:2] == bytes(HLTA) and len(sent) == 4 and crc_a(sent[:2]) == sent[2:]:
            self.air.halt()
        self._timeout()  # HLTA and anything unknown: no answer

    def _anticollision(self, sent: bytes, tx_bits: int) -> None:
        nvb = sent[1]
        known_bits = ((nvb >> 4) - 2) * 8 + (nvb & 0x0F)
        known = sent[2:]
        tags = [t for t in self.air.candidates(sent[0])
                if all(_bit(t.levels()[t.level], i) == _bit(known, i) for i in range(known_bits))]
        if not tags or known_bits >= 40:
            self._timeout()
            return
        out = bytearray(5)
        collision = -1
        for i in range(known_bits, 40):
            bits = {_bit(t.levels()[t.level], i) for t in tags}
            if len(bits) > 1:
                collision = i
                out[i // 8] |= 1 << (i % 8)
                break
            if bits.pop():
                out[i // 8] |= 1 << (i % 8)
        end = 40 if collision < 0 else collision + 1
        if self.timing:
            self.timing.frame(tx_bits, end - known_bits)
        received = bytes(out[known_bits // 8: (end + 7) // 8])
        if collision < 0:
            self._answer(received)
            return
        # CollPos, 1-based; 32 reads as 0
        start = 0 if self.collpos == "arduino" else known_bits - known_bits % 8
        self.regs[_COLL] = (collision + 1 - start) & 0x1F
        self._answer(received, end % 8, 0x08 | 0x02)   # CollErr, ParityErr


# ---------------------------------------------------------------------------------- PN532

_ACK = b"\x00\x00\xff\x00\xff\x00"
_ERROR_FRAME = b"\x00\x00\xff\x01\xff\x7f\x81\x00"


def _answer_frame(data: bytes) -> bytes:
    body = b"\xd5" + data
    return (b"\x00\x00\xff" + bytes((len(body), (-len(body)) & 0xFF)) + body
            + bytes(((-sum(body)) & 0xFF, 0)))


def _reverse(data: bytes) -> bytes:
    return bytes(int(f"{b:08b}"[::-1], 2) for b in data)


#: the PN532's oscillator start-up after its chip select wakes it on SPI
WAKE_S = 0.002


class EmuPN532(_Chip):
    """A PN532 at the frame level, on I2C (``i2c_write``/``i2c_read``) or SPI
    (``spi_transfer``, LSB first as on the wire). Off its cable: I2C gets no acknowledge
    (OSError), SPI's MISO reads 0x00."""

    def __init__(self, field: Field, key: Callable[[], object] | object,
                 timing: AirTime | None = None, *, busy_s: float = 0.002) -> None:
        super().__init__(field, key, timing)
        self.frames: list[bytes] = []   # every command frame received, for tests
        #: commands refused because they came before SAMConfiguration, for tests
        self.refused: list[int] = []
        self.busy_s = busy_s
        self._busy_until = 0.0
        #: transactions refused because the chip was busy, for tests
        self.naks = 0
        self._out: list[bytes] = []
        self.power_up()

    def power_up(self) -> None:
        self.retries = 0xFF            # MxRtyPassiveActivation after power-up (§7.3.1)
        self.rf_on = False
        self.low_vbat = True           # until SAMConfiguration (§7.2.10)
        self.awake_at: float | None = None   # SPI: asleep until a chip select wakes it
        self._out = []

    @property
    def connected(self) -> bool:
        return self._connected

    @connected.setter
    def connected(self, value: bool) -> None:
        if value and not getattr(self, "_connected", True):
            self.power_up()   # its cable back: the module was off meanwhile
        self._connected = value

    def _nak_while_busy(self) -> None:
        if time.monotonic() < self._busy_until:
            self.naks += 1
            raise OSError(errno.EREMOTEIO, "PN532 busy: no acknowledge")

    # ------------------------------------------------------------------ transports

    def i2c_write(self, data: bytes) -> None:
        if not self.connected:
            raise OSError(errno.EIO, "PN532 did not acknowledge")
        self._nak_while_busy()
        if self.timing:
            self.timing.pay(len(data) * 9 / 400e3)  # I2C at 400 kHz, 9 clocks a byte
        self._command(bytes(data))

    def i2c_read(self, count: int) -> bytes:
        if not self.connected:
            raise OSError(errno.EIO, "PN532 did not acknowledge")
        self._nak_while_busy()
        if self.timing:
            self.timing.pay(count * 9 / 400e3)
        if not self._out:
            return bytes(count)
        if count == 1:
            return b"\x01"   # the status byte alone: the frame stays for the next read
        frame = self._out.pop(0)
        return (b"\x01" + frame + bytes(count))[:count]

    def spi_transfer(self, data: bytes) -> bytes:
        if not self.connected:
            return bytes(len(data))
        now = time.monotonic()
        if self.awake_at is None:
            self.awake_at = now + WAKE_S   # woken by this chip select; the bytes are lost
            return bytes(len(data))
        if now < self.awake_at:
            return bytes(len(data))        # the oscillator is still starting
        data = _reverse(data)
        if self.timing:
            self.timing.pay(len(data) * 8 / 5e6)  # SPI at 5 MHz (UM0701-02 §6.2.5 max)
        back = bytes(len(data))
        if data[:1] == b"\x01":
            self._command(data[1:])
        elif data[:1] == b"\x02":
            back = bytes((0, 1 if self._out else 0)) + bytes(len(data) - 2)
        elif data[:1] == b"\x03" and self._out:
            frame = self._out.pop(0)
            back = (b"\x00" + frame + bytes(len(data)))[: len(data)]
        return _reverse(back)

    # ------------------------------------------------------------------ frames

    def _command(self, raw: bytes) -> None:
        start = raw.find(b"\x00\xff")
        if start < 0 or len(raw) < start + 4:
            return
        length, lcs = raw[start + 2], raw[start + 3]
        body = raw[start + 4:start + 4 + length]
        if (length + lcs) & 0xFF or len(body) != length or len(raw) < start + 5 + length \
                or (sum(body) + raw[start + 4 + length]) & 0xFF or body[:1] != b"\xd4":
            return  # a damaged frame gets no ACK (§6.2.1.3)
        if self.low_vbat and body[1:2] != b"\x14":
            self.refused.append(body[1] if len(body) > 1 else -1)
            return   # asleep in LowVbat: only SAMConfiguration wakes it (§7.2.10)
        self.frames.append(bytes(body))
        self._busy_until = time.monotonic() + self.busy_s
        self._out = [_ACK]   # what the previous command left unread is gone
        answer = self._execute(body[1], body[2:])
        if answer is not None:
            self._out.append(_answer_frame(answer))

    def _execute(self, command: int, params: bytes) -> bytes | None:
        reply = bytes((command + 1,))
        if command == 0x02:   # GetFirmwareVersion: IC, Ver, Rev, Support
            return reply + b"\x32\x01\x06\x07"
        if command == 0x14:   # SAMConfiguration
            self.low_vbat = False
            return reply
        if command == 0x32:   # RFConfiguration
            if params[:1] == b"\x01" and len(params) >= 2:
                self.rf_on = bool(params[1] & 1)
                self.field.power(self.air.key(), self.rf_on)
            elif params[:1] == b"\x05" and len(params) >= 4:
                self.retries = params[3]
            return reply
        if command == 0x4A:   # InListPassiveTarget
            if len(params) < 2 or params[1] != 0:
                return _ERROR_FRAME[5:6]
            return self._list(min(params[0], 2), reply)
        if command == 0x42:   # InCommunicateThru: only HLTA has a use here, and no answer
            if self.timing:
                self.timing.pay(0.001)
            if params[:2] == bytes(HLTA):
                self.air.halt()
            return reply + b"\x01"   # timeout: the tag did not answer
        if command == 0x52:   # InRelease
            return reply + b"\x00"
        return None

    def _list(self, most: int, reply: bytes) -> bytes | None:
        if not self.rf_on:
            self.field.power(self.air.key(), True)
            self.rf_on = True
        found: list[Tag] = []
        for _ in range(most):
            woken = self.air.request(False)
            if self.timing:
                self.timing.frame(7, 16 if woken else 0)
            if not woken:
                break
            # the chip's own anticollision: the ISO 14443-3 walk taking the 1 branch ends on
            # the tag whose UID is largest read bit by bit from the least significant end
            tag = max(woken, key=lambda t: [_bit(t.levels()[0] + b"".join(t.levels()[1:]), i)
                                             for i in range(len(t.levels()) * 40)])
            for level in range(len(tag.levels())):
                if self.timing:
                    self.timing.frame(16, 40)
                    self.timing.frame(72, 24)
                self.air.select(SEL[level], tag.levels()[level])
            found.append(tag)
        if not found:
            if self.retries == 0xFF:
                return None   # waits for a tag for ever: no answer frame
            if self.timing:
                self.timing.pay(0.001)
            return reply + b"\x00"
        out = bytearray(reply + bytes((len(found),)))
        for n, tag in enumerate(found, 1):
            out += bytes((n,)) + tag.atqa[::-1] + b"\x00" + bytes((len(tag.uid),)) + tag.uid
        return bytes(out)


class ChipSpi(SpiPort):
    """The firmware's SPI port wired straight to one emulated chip (no board between)."""

    def __init__(self, chip: EmuMFRC522 | EmuPN532) -> None:
        self.chip = chip

    def transfer(self, data: bytes) -> bytes:
        return self.chip.spi_transfer(data)


class ChipI2c(I2cPort):
    """The firmware's I2C port wired straight to one emulated PN532."""

    def __init__(self, chip: EmuPN532) -> None:
        self.chip = chip

    def write(self, data: bytes) -> None:
        self.chip.i2c_write(data)

    def read(self, count: int) -> bytes:
        return self.chip.i2c_read(count)
