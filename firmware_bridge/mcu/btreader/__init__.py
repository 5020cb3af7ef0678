"""Card reader firmware (MicroPython, also runs under CPython against emulated chips).

Written for MicroPython: no typing, dataclasses, enum or re at run time, so it cannot import the
host's ``firmware_bridge.protocol`` and carries its own small copy of the line format
(``proto.py``). Annotations are only read by mypy; MicroPython ignores them.
"""

VERSION = "btr-1.0"
