"""The two kinds of bus a front end hangs on. ``board.py`` implements them on a
microcontroller (``machine.SPI`` + a chip-select pin, ``machine.I2C``), the Pi backends on
Linux's spidev and i2c-dev."""


class SpiPort:
    """One chip on an SPI bus: ``transfer`` sends ``data`` with the chip selected and returns
    the bytes clocked in meanwhile (one chip-select low period)."""

    def transfer(self, data: bytes) -> bytes:
        raise NotImplementedError

    def transfer_into(self, data: bytearray, into: bytearray) -> None:
        """``transfer`` into a buffer of the same length: a port on a board overrides it to
        allocate nothing (the register accesses of every round go through it)."""
        back = self.transfer(bytes(data))
        for i in range(len(into)):
            into[i] = back[i]


class OutputPin:
    """A GPIO output (``machine.Pin``): ``value(1)`` high, ``value(0)`` low."""

    def value(self, level: int) -> None:
        raise NotImplementedError


class I2cPort:
    """One device on an I2C bus: one write or one read transaction at its address. A device
    that does not acknowledge raises OSError."""

    def write(self, data: bytes) -> None:
        raise NotImplementedError

    def read(self, count: int) -> bytes:
        raise NotImplementedError
