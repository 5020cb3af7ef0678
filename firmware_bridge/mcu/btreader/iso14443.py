"""ISO/IEC 14443-3 type A pieces both front-end drivers use: CRC_A and the UID from cascade
levels. MicroPython and CPython alike."""

REQA = 0x26   # 7-bit short frame: IDLE tags answer
WUPA = 0x52   # 7-bit short frame: IDLE and HALT tags answer
SEL = (0x93, 0x95, 0x97)  # anticollision/select, cascade levels 1..3
CASCADE_TAG = 0x88
HLTA = (0x50, 0x00)


def crc_a(data: bytes) -> bytes:
    """CRC_A of ISO/IEC 14443-3 (init 0x6363, reflected 0x8408), low byte first."""
    crc = 0x6363
    for b in data:
        b ^= crc & 0xFF
        b = (b ^ (b << 4)) & 0xFF
        crc = ((crc >> 8) ^ (b << 8) ^ (b << 3) ^ (b >> 4)) & 0xFFFF
    return bytes((crc & 0xFF, crc >> 8))


def bcc(data: bytes | bytearray) -> int:
    x = 0
    for b in data:
        x ^= b
    return x
