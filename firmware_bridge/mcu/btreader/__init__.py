"""Card reader firmware (MicroPython, also runs under CPython against emulated chips).

Written for MicroPython: no typing, dataclasses, enum or re at run time, so it cannot import the
host's ``firmware_bridge.protocol`` and carries its own small copy of the line format
(``proto.py``). Annotations are only read by mypy; MicroPython ignores them.
"""

#: btr-1.1: serial protocol 2 (STAT, each antenna's counters); reader.json's ``limit`` (tags an
#: antenna resolves) defaults to one
VERSION = "btr-1.1"
