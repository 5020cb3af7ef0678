"""Simulated reader backend: ``sim://TABLE/READER``.

The reader is a :class:`~firmware_bridge.sim.firmware.VirtualFirmware` of the process's
simulated table ``TABLE`` (created with the default layout if the process has none), read
through the real serial path: pyserial on the pty's slave side, via a stable symlink so that a
simulated unplug/replug behaves like a USB reader coming back under its by-id name.
Options are the serial backend's; ``debounce`` defaults to 0 (virtual tags do not flicker).

When this process has no simulated table ``TABLE`` and ``bridge-table sim run`` (or ``sim
play``) serves it in another process, the reader opens that process's reader instead, by the
symlink it announces (``firmware_bridge/sim/shared.py``): ``sim run`` and ``bridge --config
hw_configs/sim.toml`` then talk to each other.
"""

from __future__ import annotations

import logging
import urllib.parse
from typing import Any

from firmware_bridge.readers.base import ReaderError
from firmware_bridge.readers.serial import SerialReader, serial_options

__all__ = ["SimReader", "parse_sim_url"]

log = logging.getLogger("bridge_table.readers.sim")


def parse_sim_url(url: str) -> tuple[str, str, dict[str, str]]:
    """``sim://1/north?debounce=0.1`` -> ("1", "north", {"debounce": "0.1"})."""
    parts = urllib.parse.urlsplit(url)
    reader = parts.path.strip("/")
    if parts.scheme != "sim" or not parts.netloc or not reader or "/" in reader:
        raise ReaderError(f"not a simulated reader URL (sim://TABLE/READER): {url!r}")
    query = {k: v[-1] for k, v in urllib.parse.parse_qs(parts.query).items()}
    return urllib.parse.unquote(parts.netloc), urllib.parse.unquote(reader), query


class SimReader(SerialReader):
    """The serial reader, on the pty of a simulated table's virtual firmware."""

    def __init__(self, name: str, table_id: str, reader: str, **options: Any) -> None:
        options.setdefault("debounce", 0.0)
        # Without an explicit kind, the simulated reader's own (from the table layout) counts.
        self._kind_given = "kind" in options
        # The port path is known once the firmware runs (_start); the link is stable.
        super().__init__(name, "", **options)
        self.table_id = table_id
        self.sim_reader = reader
        #: the reader is another process's (``bridge-table sim run``), opened by its symlink
        self.external = False
        self._idle_warned = False

    @classmethod
    def from_url(cls, name: str, url: str, *, kind: str | None = None,
                 **options: Any) -> SimReader:
        table_id, reader, query = parse_sim_url(url)
        merged = serial_options(query) | options
        if kind is not None:
            merged["kind"] = kind
        return cls(name, table_id, reader, **merged)

    async def _start(self) -> None:
        from firmware_bridge.sim.shared import running_readers, table_dir
        from firmware_bridge.sim.table import get_sim_table, sim_tables

        if self.external:  # reopened after a loss: the same simulator's link, once it is back
            await super()._start()
            return
        if self.table_id not in sim_tables():
            # no simulated table in this process: the one ``bridge-table sim run`` (or
            # ``sim play``) serves in another process, through its announced symlink
            link = running_readers(self.table_id).get(self.sim_reader)
            if link is not None:
                self.external = True
                self.port = str(link)
                await super()._start()
                return
            if not self._idle_warned:
                self._idle_warned = True
                log.warning("reader %s: no `bridge-table sim run` serves table %s (nothing "
                            "announced in %s): an idle simulated reader of this process; start "
                            "the simulator before the bridge", self.name, self.table_id,
                            table_dir(self.table_id))
        self.external = False
        table = get_sim_table(self.table_id)
        firmware = await table.start_reader(self.sim_reader)
        spec = table.layout.get(self.sim_reader)
        if not self._kind_given and spec is not None and spec.kind in ("inventory", "tap"):
            self.kind = "tap" if spec.kind == "tap" else "inventory"
        assert firmware.link is not None
        self.port = str(firmware.link)
        # Delivery receipts let the table play "as fast as possible" without reordering
        # lines across readers.
        self.on_frame = firmware.delivered
        table.local_hosts.add(self.sim_reader)
        await super()._start()

    async def _stop(self) -> None:
        await super()._stop()
        if self.external:
            return
        from firmware_bridge.sim.table import sim_tables

        table = sim_tables().get(self.table_id)
        if table is not None:
            table.local_hosts.discard(self.sim_reader)
