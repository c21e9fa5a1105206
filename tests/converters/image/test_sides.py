"""Loose boxes' sides moved out to the dark band beyond them (:mod:`hbb2obb.converters.image.sides`)."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image, ImageDraw

from hbb2obb.converters.image.box import BoxResult
from hbb2obb.converters.image.converter import convert_boxes
from hbb2obb.converters.image.params import ImageParams
from hbb2obb.converters.image.sides import OFFSETS, band_offsets, banded_result, extended_to_bands

from conftest import rotated_rect
from conftest import shapely_iou as iou

PARAMS = ImageParams()
REACH = PARAMS.band_reach

BODY, BAND, ROAD = 200.0, 50.0, 110.0


def profile_with_band(start: float, end: float, *, band: float = BAND, ground: float = ROAD) -> np.ndarray:
    """Body inside the side, a band from ``start`` to ``end`` breadths past it, ground beyond."""
    return np.where(OFFSETS < 0.0, BODY, np.where((OFFSETS >= start) & (OFFSETS < end), band, ground))


@pytest.mark.parametrize("profile, expected", [
    (profile_with_band(0.0, 0.06), 0.0),              # the band starts at the side: nothing to move
    (profile_with_band(0.03, 0.08), 0.03),            # moved to the band's first darkest sample
    (profile_with_band(0.09, 0.14), 0.09),            # a band starting just within reach
    (profile_with_band(0.12, 0.17), 0.0),             # a band beyond reach
    (profile_with_band(0.03, 0.08, band=BODY - 5), 0.0),  # not darker than the body by band_depth
    (profile_with_band(0.03, 0.08, band=ROAD - 2), 0.0),  # not darker than the ground beyond
    (np.where(OFFSETS < 0.03, BODY, BAND), 0.0),      # a wide shadow: the profile never rises again
    (np.full(OFFSETS.shape, ROAD), 0.0),              # flat road
    (np.linspace(BODY, 0.0, OFFSETS.size), 0.0),      # falling all the way: no band
])
def test_band_offset_table(profile, expected):
    assert float(band_offsets(profile, OFFSETS, PARAMS)) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("profile, offsets", [
    (np.array([]), np.array([])),                     # empty
    (np.full(5, np.nan), np.linspace(-0.1, 0.3, 5)),  # no finite grey level
    (profile_with_band(0.03, 0.08)[:-1], OFFSETS),    # misaligned
    (np.array([BODY, BAND, ROAD]), np.array([0.01, 0.02, 0.03])),  # nothing inside or on the ground
])
def test_band_offset_is_zero_without_a_usable_profile(profile, offsets):
    moves = band_offsets(profile, offsets, PARAMS)
    assert moves.shape == () and float(moves) == 0.0


def test_rows_are_judged_each_on_its_own():
    rows = np.stack([profile_with_band(0.03, 0.08), np.full(OFFSETS.shape, np.nan), profile_with_band(0.05, 0.1),
                     np.full(OFFSETS.shape, ROAD)])
    together = band_offsets(rows.reshape(2, 2, -1), OFFSETS, PARAMS)
    assert together.shape == (2, 2)
    assert together.reshape(-1).tolist() == [float(band_offsets(row, OFFSETS, PARAMS)) for row in rows]
    assert together.reshape(-1).round(2).tolist() == [0.03, 0.0, 0.05, 0.0]


def car_frame(band_rows: slice | None = None, *, band_cols: slice | None = None, breadth: int = 40) -> Image.Image:
    """A bright 100 x ``breadth`` body on grey road, with a dark band in the given rows or columns."""
    frame = np.full((160, 200), ROAD, np.uint8)
    frame[50:50 + breadth, 40:140] = BODY
    if band_rows is not None:
        frame[band_rows, 40:140] = BAND
    if band_cols is not None:
        frame[50:50 + breadth, band_cols] = BAND
    return Image.fromarray(frame)


def axis_box(x1, y1, x2, y2) -> np.ndarray:
    return np.array([[x1, y1], [x2, y1], [x2, y2], [x1, y2]], dtype=np.float64)


@pytest.mark.parametrize("band_rows, band_cols, moved_side", [
    (slice(90, 93), None, "bottom"),
    (slice(47, 50), None, "top"),
    (None, slice(140, 143), "right"),
    (None, slice(37, 40), "left"),
])
def test_each_side_moves_out_to_its_own_band_and_only_it(band_rows, band_cols, moved_side):
    box = axis_box(40, 50, 140, 90)
    moved = extended_to_bands(car_frame(band_rows, band_cols=band_cols), box, PARAMS)
    x1, y1 = moved.min(axis=0)
    x2, y2 = moved.max(axis=0)
    grown = {"left": 40 - x1, "right": x2 - 140, "top": 50 - y1, "bottom": y2 - 90}
    assert 0.5 < grown[moved_side] <= REACH * 40 + 1e-9
    assert all(abs(value) < 1e-9 for side, value in grown.items() if side != moved_side)


def test_without_a_band_the_same_rectangle_comes_back():
    box = axis_box(40, 50, 140, 90)
    assert np.array_equal(extended_to_bands(car_frame(), box, PARAMS), box)


def test_a_box_narrower_than_the_limit_is_left_alone():
    breadth = int(PARAMS.band_min_breadth) - 5
    box = axis_box(40, 50, 140, 50 + breadth)
    frame = car_frame(slice(50 + breadth, 51 + breadth), breadth=breadth)  # 1 px: 0.05 breadths
    assert np.array_equal(extended_to_bands(frame, box, PARAMS), box)
    assert not np.array_equal(extended_to_bands(frame, box, replace(PARAMS, band_min_breadth=breadth - 1)), box)


@pytest.mark.parametrize("corners", [
    np.zeros((4, 2)),                                            # degenerate
    np.full((4, 2), np.nan),                                     # not finite
    axis_box(40, 50, 140, 50 + 1e-3),                            # a sliver
])
def test_degenerate_rectangles_come_back_unchanged(corners):
    moved = extended_to_bands(car_frame(slice(90, 93)), corners, PARAMS)
    assert np.array_equal(moved, corners, equal_nan=True)


def test_a_box_at_and_past_the_frame_edge_is_sampled_at_the_nearest_pixels():
    frame = car_frame()
    for box in (axis_box(-30, -20, 30, 25), axis_box(400, 300, 480, 340)):
        moved = extended_to_bands(frame, box, PARAMS)
        assert moved.shape == (4, 2) and np.isfinite(moved).all()


@pytest.mark.parametrize("angle", [0.0, 12.0, 30.0, 45.0, 77.0, 135.0])
def test_a_rotated_car_gets_its_dark_lower_panel_back(angle):
    # the labelled rectangle holds body and panel; the bright body stops 3 px short of it on one
    # long side. Drawn at 4x and reduced, so the outlines are anti-aliased as in a photograph.
    scale = 4
    truth = np.asarray(rotated_rect(100.0, 80.0, 80.0, 40.0, angle))
    t = math.radians(angle)
    normal = np.array([-math.sin(t), math.cos(t)])
    body = truth.copy()
    body[2:] -= 3.0 * normal  # corners 2 and 3 are the +normal long side (see rotated_rect)
    big = Image.new("L", (200 * scale, 160 * scale), int(ROAD))
    draw = ImageDraw.Draw(big)
    draw.polygon([tuple(p * scale) for p in truth], fill=int(BAND))
    draw.polygon([tuple(p * scale) for p in body], fill=int(BODY))
    frame = big.resize((200, 160), Image.BOX)
    moved = extended_to_bands(frame, body, PARAMS)
    move = (moved - body) @ normal
    assert np.allclose(move[:2], 0.0) and np.allclose(move[2], move[3])  # only that side, parallel
    assert 1.0 <= move[2] <= 3.0      # into the band, up to its far edge
    assert iou(moved, truth) > iou(body, truth) + 0.02


@settings(max_examples=60, deadline=None)
@given(cx=st.floats(40, 160), cy=st.floats(40, 120), length=st.floats(30, 90), breadth=st.floats(10, 45),
       angle=st.floats(-180, 180), seed=st.integers(0, 2 ** 16))
def test_a_moved_box_is_a_rectangle_holding_the_old_one_each_side_moved_at_most_the_reach(
        cx, cy, length, breadth, angle, seed):
    rng = np.random.default_rng(seed)
    frame = Image.fromarray(rng.integers(0, 256, (160, 200), dtype=np.uint8))
    box = np.asarray(rotated_rect(cx, cy, length, breadth, angle), dtype=np.float64)
    moved = extended_to_bands(frame, box, PARAMS)
    edges = np.roll(moved, -1, axis=0) - moved
    assert abs(edges[0] @ edges[1]) < 1e-6 * (length * breadth)    # still a rectangle
    assert np.allclose(np.hypot(*edges[0].T), np.hypot(*edges[2].T))
    # each side is where it was or up to REACH breadths further out, parallel to itself
    own = np.roll(box, -1, axis=0) - box
    for k in range(4):
        normal = np.array([own[k][1], -own[k][0]]) / math.hypot(*own[k])
        if (box.mean(axis=0) - box[k]) @ normal > 0:
            normal = -normal                                         # outward
        move = (moved[k] - box[k]) @ normal
        assert -1e-9 <= move <= REACH * min(length, breadth) + 1e-9
    # it holds the old box: every old corner lies within the moved rectangle, along each of its
    # two axes (shapely's overlay can lose the area of two rectangles that share a side exactly)
    centre = moved.mean(axis=0)
    for axis in edges[:2]:
        half = (axis @ axis) / 2
        assert (np.abs((box - centre) @ axis) <= half * (1 + 1e-9)).all()


def test_banded_result_passes_fallbacks_and_unfitted_boxes_through():
    fallback = BoxResult(None, reason="no usable mask")
    assert banded_result(car_frame(slice(90, 93)), None, fallback, PARAMS) is fallback
    inscribed = BoxResult(axis_box(40, 50, 140, 90), from_mask=False)
    assert banded_result(car_frame(slice(90, 93)), None, inscribed, PARAMS) is inscribed


def photographed_car() -> tuple[Image.Image, list]:
    """A bright car body with its dark lower panel (4 px) below it on noisy grey road, and the
    HBB a hand drew around the bright body."""
    frame = np.full((200, 260), 105, np.uint8)
    rng = np.random.default_rng(1)
    frame = np.clip(frame + rng.normal(0, 3, frame.shape), 0, 255).astype(np.uint8)
    frame[80:120, 60:170] = 215
    frame[120:124, 62:168] = 45
    return Image.fromarray(np.dstack([frame] * 3)), [[60, 80, 170, 120]]


def test_the_converter_moves_a_loose_cars_side_to_its_panel_and_keeps_its_confidence():
    image, hbb = photographed_car()
    truth = axis_box(60, 80, 170, 122)  # labelled into the panel's middle
    loose = replace(PARAMS, tightness="loose")
    with_bands = convert_boxes(image, hbb, loose)
    without = convert_boxes(image, hbb, replace(loose, extend_to_bands=False))
    assert not with_bands.fallback[0] and not without.fallback[0]
    assert iou(with_bands.corners[0], truth) > iou(without.corners[0], truth)
    assert with_bands.confidence[0] == without.confidence[0]


def test_a_tight_frame_is_never_moved():
    image, hbb = photographed_car()
    tight = replace(PARAMS, tightness="tight")
    moved = convert_boxes(image, hbb, tight)
    assert np.array_equal(convert_boxes(image, hbb, replace(tight, extend_to_bands=False)).corners, moved.corners)
