"""The CPU one polling round of the club build costs: nine MFRC522s on the Pi's SPI.

What a Raspberry Pi Zero 2 W spends to poll every antenna of hw_configs/table-club.toml once
(nine readers, one antenna each, GPIO chip selects, 1 MHz): the host's driver
(``firmware_bridge/readers/mfrc522.py``: the firmware's MFRC522 driver and scanner, sleeping
between polls) running its SPI transfers in Python, measured here and scaled to the Pi.

1. **Record**: one round of the nine antennas against the emulated chips
   (``firmware_bridge/sim/chips.py``, with the datasheets' air times counted, not slept),
   through a recording ``spidev``: every transfer, its answer, and how long the chip was busy
   on the air after it (a frame and its answer, or the 2 ms receive timeout).
2. **Replay and measure**: the same round, its transfers answered from the recording (the
   chips' emulation costs nothing), its sleeps counted instead of slept; the CPU time of
   ``--rounds`` rounds in this thread (``time.thread_time``) is the driver's Python.
3. **A real chip is slower than its recording**: while the chip works the driver polls,
   sleeps ``POLL_PAUSE_S`` and polls again; the polls the recording did not need (the
   emulated chip answers at once) are added, each costing what a transfer costs here.
4. **Scaled to the Pi Zero 2 W**: this machine's CPU time times the ratio of a published
   CPython benchmark on both (``--ratio``, from ``nbody_ratio``: the Computer Language
   Benchmarks Game's n-body in CPython, 5,000,000 steps, 158.26 s on a Raspberry Pi 4 at
   1.5 GHz (chaitanyamehta.github.io, "Performance Analysis of Languages on Raspberry Pi"),
   times 4.2 for a Cortex-A53 at 1 GHz (Raspberry Pi's "up to 3x" from the Pi 3B+ to the Pi 4,
   and 1.4/1.0 GHz from the 3B+'s clock to the Zero 2 W's), against the same program run
   here); plus, per transfer, the kernel's SPI message (``--ioctl-us``, an assumption: no
   published figure) and the bus time at 1 MHz (the BCM2835 SPI driver polls short transfers,
   so the CPU waits them out), and per sleep the kernel's share (``--sleep-us``, assumed).

The figure asked for: the Pi's CPU per round divided by the scan period (``rate_ms=300`` in
table-club.toml) - under a quarter of one core. Three cases: nothing on the table, a card on
each play spot and the board reader (play), a card on every antenna.

    .venv/bin/python bench/bench_poll_round.py [--rounds 300] [--ratio R] [--ioctl-us 25]
        [--sleep-us 15] [--rate-ms MS]
"""

from __future__ import annotations

import argparse
import math
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from firmware_bridge.config import load_config  # noqa: E402
from firmware_bridge.mcu.btreader.clock import Clock  # noqa: E402
from firmware_bridge.mcu.btreader.inventory import Antenna, Scanner  # noqa: E402
from firmware_bridge.mcu.btreader.ports import OutputPin  # noqa: E402
from firmware_bridge.readers import open_reader  # noqa: E402
from firmware_bridge.readers.mfrc522 import (  # noqa: E402
    POLL_PAUSE_S,
    GpioChipSelectPort,
    HostMFRC522,
    Mfrc522Reader,
)
from firmware_bridge.sim.chips import AirTime, EmuMFRC522, Field  # noqa: E402

CLUB = ROOT / "hw_configs" / "table-club.toml"
#: the published n-body time (CPython, 5,000,000 steps, Raspberry Pi 4 at 1.5 GHz) and the
#: factor from that Pi to a Cortex-A53 at 1 GHz (module docstring)
NBODY_PI4_S = 158.26
PI4_TO_ZERO2W = 3.0 * 1.4
NBODY_STEPS = 5_000_000


class CountedAir(AirTime):
    """The datasheets' air time, counted and never slept."""

    def pay(self, seconds: float) -> None:
        self.spent += seconds


class TicksAt:
    """MicroPython's ticks on a clock that the driver's sleeps move forward (nothing sleeps)."""

    def __init__(self) -> None:
        self.now_ms = 0
        self.sleeps = 0

    def ticks_ms(self) -> int:
        return self.now_ms

    def ticks_diff(self, later: int, earlier: int) -> int:
        return later - earlier

    def sleep_ms(self, ms: int) -> None:
        self.sleeps += 1
        self.now_ms += ms


class Pin(OutputPin):
    def __init__(self) -> None:
        self.level = 1

    def value(self, level: int) -> None:
        self.level = level


class FakeSpidevModule:
    """The ``spidev`` module, its ``SpiDev().xfer2`` handed to ``exchange``."""

    def __init__(self, exchange: Callable[[bytes], bytes]) -> None:
        class SpiDev:
            max_speed_hz = 0
            mode = 0
            no_cs = False

            def open(self, bus: int, device: int) -> None:
                pass

            def xfer2(self, data: list[int]) -> list[int]:
                return list(exchange(bytes(data)))

            def close(self) -> None:
                pass

        self.SpiDev = SpiDev


class RecordingSpidev(FakeSpidevModule):
    """``spidev`` on emulated chips: the chip is the one whose select pin is low; every
    transfer is kept with its answer and the air time the chip spent on it."""

    def __init__(self, chips: dict[int, tuple[EmuMFRC522, CountedAir]], pins: dict[int, Pin]):
        super().__init__(self.exchange)
        self.chips, self.pins = chips, pins
        self.log: list[tuple[bytes, bytes, float]] = []

    def exchange(self, data: bytes) -> bytes:
        pin = next(p for p, line in self.pins.items() if line.level == 0)
        chip, air = self.chips[pin]
        before = air.spent
        back = chip.spi_transfer(data)
        self.log.append((data, back, air.spent - before))
        return back


class ReplaySpidev(FakeSpidevModule):
    """``spidev`` answering from a recording, in order: the driver's work, not the chips'."""

    def __init__(self, answers: list[bytes]) -> None:
        super().__init__(self.exchange)
        self.answers = answers
        self.at = 0

    def exchange(self, data: bytes) -> bytes:
        back = self.answers[self.at]
        self.at += 1
        return back


def club_readers() -> list[tuple[str, int, int]]:
    """(name, chip-select pin, SPI clock) of each reader of table-club.toml."""
    out = []
    for r in load_config(CLUB).readers:
        reader = open_reader(r.name, r.url, kind=r.kind)
        assert isinstance(reader, Mfrc522Reader) and reader.cs
        out.append((r.name, reader.cs[0], reader.speed_hz))
    return out


def build(spidev: Any, readers: list[tuple[str, int, int]], pins: dict[int, Pin],
          ticks: TicksAt) -> tuple[Scanner, list[Antenna]]:
    clock = Clock(ticks)
    antennas = []
    for index, (_, pin, speed) in enumerate(readers):
        port = GpioChipSelectPort(spidev, 0, 0, speed, pins[pin])
        antennas.append(Antenna(index, HostMFRC522(port, clock)))
    scanner = Scanner(antennas, misses=3)
    return scanner, antennas


def one_round(scanner: Scanner, antennas: list[Antenna]) -> None:
    for antenna in antennas:
        scanner.scan(antenna)


def measure(case: str, lying: set[str], rounds: int) -> dict[str, float]:
    readers = club_readers()
    field = Field()
    for i, (name, _, _) in enumerate(readers):
        if name in lying:
            field.place(name, f"04{i:02X}A1B2C3D4E5")
    chips = {pin: (EmuMFRC522(field, name, air := CountedAir(spi_hz=speed)), air)
             for name, pin, speed in readers}
    pins = {pin: Pin() for _, pin, _ in readers}
    recorder = RecordingSpidev(chips, pins)
    ticks = TicksAt()
    scanner, antennas = build(recorder, readers, pins, ticks)
    for antenna in antennas:                      # the chips come up and settle
        scanner.settle(antenna)
    one_round(scanner, antennas)                  # a steady round before the recorded one
    recorder.log.clear()
    ticks.sleeps = 0
    one_round(scanner, antennas)
    log = list(recorder.log)
    assert all(a.present == ([f"04{a.index:02X}A1B2C3D4E5"] if readers[a.index][0] in lying
                             else []) for a in antennas)
    sleeps_per_round = ticks.sleeps
    transfers = len(log)
    bus_bytes = sum(len(data) for data, _, _ in log)
    # polls a real chip needs beyond the recording's one: the chip's busy time (air time or
    # timeout) over the driver's pause, plus the pause's own overshoot (about 60 µs on Linux)
    busy = [air for _, _, air in log if air > 0.0001]
    extra_polls = sum(math.floor(air / (POLL_PAUSE_S + 60e-6)) for air in busy)

    replay = ReplaySpidev([back for _, back, _ in log] * (rounds + 1))
    replay_ticks = TicksAt()
    scanner2, antennas2 = build(replay, readers, {pin: Pin() for pin in pins}, replay_ticks)
    for a2, a in zip(antennas2, antennas, strict=True):   # the same state as the recording
        a2.present, a2.chip.ready = list(a.present), True
        a2.chip._field_off_at = None   # type: ignore[attr-defined]
    # the pause is counted, not slept; what a sleep costs in CPU is measured apart
    for antenna in antennas2:
        antenna.chip.pause = lambda: None  # type: ignore[method-assign]
    start = time.thread_time()
    for _ in range(rounds):
        one_round(scanner2, antennas2)
    cpu = (time.thread_time() - start) / rounds
    assert replay.at == transfers * rounds, "the replay left the recording's path"
    return {"case": case, "transfers": transfers, "bytes": bus_bytes,
            "extra_polls": extra_polls, "pauses": extra_polls + len(busy),
            "sleeps": sleeps_per_round, "cpu_here_s": cpu,
            "cpu_per_transfer_s": cpu / transfers}


def nbody(steps: int) -> None:
    """The Computer Language Benchmarks Game's n-body, CPython program #1 (its algorithm and
    constants; the published Pi 4 time is of this program at 5,000,000 steps)."""
    pi = 3.14159265358979323
    solar_mass = 4 * pi * pi
    days_per_year = 365.24
    bodies = [
        [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], solar_mass],
        [[4.84143144246472090e+00, -1.16032004402742839e+00, -1.03622044471123109e-01],
         [1.66007664274403694e-03 * days_per_year, 7.69901118419740425e-03 * days_per_year,
          -6.90460016972063023e-05 * days_per_year], 9.54791938424326609e-04 * solar_mass],
        [[8.34336671824457987e+00, 4.12479856412430479e+00, -4.03523417114321381e-01],
         [-2.76742510726862411e-03 * days_per_year, 4.99852801234917238e-03 * days_per_year,
          2.30417297573763929e-05 * days_per_year], 2.85885980666130812e-04 * solar_mass],
        [[1.28943695621391310e+01, -1.51111514016986312e+01, -2.23307578892655734e-01],
         [2.96460137564761618e-03 * days_per_year, 2.37847173959480950e-03 * days_per_year,
          -2.96589568540237556e-05 * days_per_year], 4.36624404335156298e-05 * solar_mass],
        [[1.53796971148509165e+01, -2.59193146099879641e+01, 1.79258772950371181e-01],
         [2.68067772490389322e-03 * days_per_year, 1.62824170038242295e-03 * days_per_year,
          -9.51592254519715870e-05 * days_per_year], 5.15138902046611451e-05 * solar_mass],
    ]
    pairs = [(bodies[i], bodies[j]) for i in range(5) for j in range(i + 1, 5)]
    dt = 0.01
    for _ in range(steps):
        for ((x1, y1, z1), v1, m1), ((x2, y2, z2), v2, m2) in pairs:
            dx, dy, dz = x1 - x2, y1 - y2, z1 - z2
            mag = dt * ((dx * dx + dy * dy + dz * dz) ** (-1.5))
            b1m, b2m = m1 * mag, m2 * mag
            v1[0] -= dx * b2m
            v1[1] -= dy * b2m
            v1[2] -= dz * b2m
            v2[0] += dx * b1m
            v2[1] += dy * b1m
            v2[2] += dz * b1m
        for r, (vx, vy, vz), _m in bodies:
            r[0] += dt * vx
            r[1] += dt * vy
            r[2] += dt * vz


def nbody_ratio(steps: int) -> tuple[float, float]:
    """(seconds here for ``steps``, the Pi Zero 2 W's slowdown against this machine)."""
    start = time.process_time()
    nbody(steps)
    here = time.process_time() - start
    here_full = here * NBODY_STEPS / steps
    return here, NBODY_PI4_S * PI4_TO_ZERO2W / here_full


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=300)
    p.add_argument("--ratio", type=float, default=0.0,
                   help="the Pi Zero 2 W's slowdown against this machine (default: measured "
                        "from n-body against the published Pi 4 time)")
    p.add_argument("--nbody-steps", type=int, default=200_000)
    p.add_argument("--ioctl-us", type=float, default=25.0,
                   help="kernel time of one SPI transfer on the Pi, besides the bus time")
    p.add_argument("--sleep-us", type=float, default=15.0,
                   help="kernel CPU of one short sleep on the Pi (two context switches and the "
                        "timer interrupt)")
    p.add_argument("--rate-ms", type=float, default=0.0,
                   help="scan period (default: table-club.toml's rate_ms)")
    args = p.parse_args()
    print(f"# {platform.uname().system} {platform.uname().release} {platform.machine()},"
          f" {platform.processor() or '?'}, python {platform.python_version()}")
    if args.ratio:
        ratio = args.ratio
        print(f"ratio given: {ratio:.1f}")
    else:
        here, ratio = nbody_ratio(args.nbody_steps)
        print(f"n-body {args.nbody_steps} steps here: {here:.2f} s CPU "
              f"({here * NBODY_STEPS / args.nbody_steps:.1f} s for 5,000,000; Pi 4 at 1.5 GHz "
              f"{NBODY_PI4_S} s, x{PI4_TO_ZERO2W:.1f} for the Zero 2 W): ratio {ratio:.1f}")
    readers = club_readers()
    rate_ms = args.rate_ms or min(open_reader(r.name, r.url).rate_ms  # type: ignore[attr-defined]
                                  for r in load_config(CLUB).readers)
    speed = readers[0][2]
    print(f"SPI {speed / 1e6:g} MHz; scan period {rate_ms:g} ms; poll pause "
          f"{POLL_PAUSE_S * 1e3:g} ms; on the Pi, assumed: {args.ioctl_us:g} µs of kernel a "
          f"transfer, {args.sleep_us:g} µs a sleep")
    print()
    print("| case | transfers | SPI bytes | polls added | sleeps | driver CPU here ms | "
          "Pi: Python ms | Pi: kernel ms | Pi: bus ms | Pi Zero 2 W ms a round | "
          "share of one core |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    lying_cases = {
        "nothing on the table": set(),
        "play: four play spots and the board": {"north", "east", "south", "west", "board"},
        "a card on all nine": {name for name, _, _ in readers},
    }
    for case, lying in lying_cases.items():
        m = measure(case, lying, args.rounds)
        cpu_here = m["cpu_here_s"] + m["extra_polls"] * m["cpu_per_transfer_s"]
        sleeps = m["pauses"] + m["sleeps"]
        transfers = m["transfers"] + m["extra_polls"]
        python_s = cpu_here * ratio
        kernel_s = transfers * args.ioctl_us * 1e-6 + sleeps * args.sleep_us * 1e-6
        bus_s = (m["bytes"] + 2 * m["extra_polls"]) * 8 / speed
        pi_s = python_s + kernel_s + bus_s
        share = pi_s / (rate_ms / 1000)
        print(f"| {case} | {transfers:.0f} | {m['bytes'] + 2 * m['extra_polls']:.0f} | "
              f"{m['extra_polls']:.0f} | {sleeps:.0f} | {cpu_here * 1000:.3f} | "
              f"{python_s * 1000:.1f} | {kernel_s * 1000:.1f} | {bus_s * 1000:.1f} | "
              f"{pi_s * 1000:.1f} | {share:.1%} |")


if __name__ == "__main__":
    main()
