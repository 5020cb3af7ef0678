#!/usr/bin/env python3
"""A stand-in for ``mpremote`` (tests/test_mcu_flash.py): it does to a directory, the board's
filesystem ($FAKE_BOARD), what mpremote does to a MicroPython board's for the commands
``bridge-table firmware flash`` uses, and logs each call. No serial line is involved: what this
checks is the commands, their order and the files they leave on the board."""

import json
import os
import shutil
import sys
from pathlib import Path

board = Path(os.environ["FAKE_BOARD"])
args = sys.argv[1:]
with open(board.parent / "mpremote.log", "a") as log:
    log.write(json.dumps(args) + "\n")
if args[:1] != ["connect"] or len(args) < 3:
    sys.exit("fake mpremote: expected 'connect PORT ...'")
port, command = args[1], args[2:]
if not os.path.exists(port):
    sys.exit(f"failed to access {port}")
if command[:1] == ["exec"]:
    if "os.mkdir('btreader')" in command[1]:
        (board / "btreader").mkdir(exist_ok=True)
elif command[:2] == ["fs", "cp"]:
    *sources, target = command[2:]
    if not target.startswith(":"):
        sys.exit("fake mpremote: copies go to the board (':...')")
    target = target[1:]
    for source in sources:
        dest = board / target / Path(source).name if target.endswith("/") else board / target
        if not dest.parent.is_dir():
            sys.exit(f"cp: {dest.parent}: no such directory on the board")
        shutil.copyfile(source, dest)
elif command == ["reset"]:
    (board / ".resets").write_text(str(int((board / ".resets").read_text() or 0) + 1)
                                   if (board / ".resets").exists() else "1")
else:
    sys.exit(f"fake mpremote: unexpected {command}")
