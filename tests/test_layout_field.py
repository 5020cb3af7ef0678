"""The field model (firmware_bridge/layout/field.py): Biot-Savart against closed forms, the
calibration on the published ranges, and the reach it gives (docs/hardware/field-model.md)."""

from __future__ import annotations

import math

import pytest

from firmware_bridge.layout.field import (
    MFRC522_LOOP,
    NOMINAL_DRIVE,
    NTAG_STICKER,
    Loop,
    calibrated_drives,
    field,
    lateral_reach,
    read_range,
    reads,
)


def test_the_field_at_a_square_loops_centre_is_the_closed_form() -> None:
    # H = 2 sqrt(2) N I / (pi a) at the centre of a square loop of side a
    loop = Loop(100.0, 100.0, 3)
    assert field(loop, 0.5, 0, 0, 0)[2] == pytest.approx(2 * math.sqrt(2) * 3 * 0.5
                                                          / (math.pi * 0.1))


def test_the_field_on_a_rectangles_axis_is_the_closed_form() -> None:
    # on the axis of an a x b rectangle: H = N I a b / (4 pi) * (1/(a'^2+z^2) + 1/(b'^2+z^2))
    #   / sqrt(a'^2 + b'^2 + z^2), with a' = a/2, b' = b/2 (metres)
    loop, current, z = Loop(40.0, 30.0, 4), 0.06, 0.025
    a, b = 0.02, 0.015
    expected = 4 * current * (4 * a * b) / (4 * math.pi) * (
        1 / (a * a + z * z) + 1 / (b * b + z * z)) / math.sqrt(a * a + b * b + z * z)
    assert field(loop, current, 0, 0, 25)[2] == pytest.approx(expected)
    # and it is the same on either side of the plane, pointing the same way below and above
    assert field(loop, current, 0, 0, -25)[2] == pytest.approx(expected)


def test_the_calibrated_drives_give_the_published_ranges_back() -> None:
    low, middle, high = calibrated_drives()
    assert low.current < middle.current < high.current
    for drive, published in zip((low, middle, high), (20.0, 25.0, 30.0), strict=True):
        assert read_range(MFRC522_LOOP, drive, NTAG_STICKER) == pytest.approx(published, abs=0.2)
    # the data sheet's 60 mA typical lies inside the calibrated band: the model's physics
    # and the published ranges agree
    assert low.current < NOMINAL_DRIVE.current < high.current


def test_a_tag_beside_the_loop_is_read_in_the_return_field_then_not() -> None:
    high = calibrated_drives()[2]
    reach = lateral_reach(MFRC522_LOOP, high, NTAG_STICKER, 4.5)
    assert 25 < reach < 60          # beyond the loop's half-diagonal (25 mm), not far
    assert not reads(MFRC522_LOOP, high, NTAG_STICKER, reach + 2, 0, 4.5)
    assert not reads(MFRC522_LOOP, high, NTAG_STICKER, 0, reach + 2, 4.5)
    assert reads(MFRC522_LOOP, high, NTAG_STICKER, 0, 0, 4.5)
    # the low band reads less far
    assert lateral_reach(MFRC522_LOOP, calibrated_drives()[0], NTAG_STICKER, 4.5) < reach
