# Runs the firmware as shipped under MicroPython: build the board from reader.json, boot, then
# one polling round per step for as long as the host's scenario asks for more. An exception is
# printed (the interpreter's exit code alone would hide it).
import json
import sys
import time

sys.path.insert(0, "/input")

try:
    import btreader.board as board  # type: ignore[import-not-found]
    from btreader.clock import Clock  # type: ignore[import-not-found]

    with open("/input/reader.json") as f:
        settings = json.load(f)
    app = board.build(settings, Clock(time))
    app.boot()
    step = 0
    while board.machine._call("step", step):
        app.round()
        step += 1
    print("rounds", app.rounds, sys.implementation.name)
except Exception as error:
    print("firmware failed:")
    getattr(sys, "print_exception")(error, sys.stdout)  # noqa: B009 - MicroPython only
