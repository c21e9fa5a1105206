"""Tests of hbb2obb.geometry.angles: orientation and angle errors (docs/metrics.md §2)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from hbb2obb.geometry import (
    angle_difference,
    off_axis_angle,
    orientation,
    orientation_error,
    orientation_errors,
)


def rectangle(cx, cy, w, h, degrees):
    """Corners of a w x h rectangle turned by ``degrees`` (image coordinates), edge p1->p2 along w."""
    c, s = math.cos(math.radians(degrees)), math.sin(math.radians(degrees))
    half = np.array([[-w, -h], [w, -h], [w, h], [-w, h]]) / 2
    return half @ np.array([[c, s], [-s, c]]) + [cx, cy]




angles = st.floats(-720, 720, allow_nan=False)


def rectangles(u: np.ndarray, oblong: bool = False) -> np.ndarray:
    """Rotated rectangles in a 4K frame from rows of ``u`` (5 columns in [0, 1]).

    With ``oblong`` the short side is at most 0.9 of the long one, so which edge is longer never
    hinges on rounding.
    """
    w = 1 + 299 * u[:, 2]
    h = w * (0.2 + 0.7 * u[:, 3]) if oblong else 1 + 299 * u[:, 3]
    c, s = np.cos(np.radians(360 * u[:, 4]))[:, None], np.sin(np.radians(360 * u[:, 4]))[:, None]
    hx = np.array([-1, 1, 1, -1]) * w[:, None] / 2
    hy = np.array([-1, -1, 1, 1]) * h[:, None] / 2
    cx, cy = 3840 * u[:, :1], 2160 * u[:, 1:2]
    return np.stack([hx * c - hy * s + cx, hx * s + hy * c + cy], axis=-1)


def unit_rows(columns: int, max_rows: int = 6):
    return arrays(np.float64, st.tuples(st.integers(1, max_rows), st.just(columns)), elements=st.floats(0, 1))


@pytest.mark.parametrize(
    "corners, expected",
    [
        ([[0, 0], [4, 0], [4, 2], [0, 2]], 0.0),  # landscape
        ([[0, 0], [0, 2], [4, 2], [4, 0]], 0.0),  # same box, other winding: the longer edge decides
        ([[0, 0], [2, 0], [2, 4], [0, 4]], 90.0),  # portrait
        ([[4, 2], [0, 2], [0, 0], [4, 0]], 0.0),  # edge pointing left: 180 -> 0
        ([[0, 0], [1, 1], [0, 2], [-1, 1]], 45.0),  # square diamond: tie, first edge wins
        ([[0, 0], [-1, 1], [0, 2], [1, 1]], 135.0),  # same diamond listed the other way
        ([[0, 0], [1, -1e-18], [1, 1 - 1e-18], [0, 1]], 0.0),  # a hair below the axis: not 180.0
        ([[5, 5], [5, 5], [5, 5], [5, 5]], 0.0),  # degenerate point
    ],
)
def test_orientation_table(corners, expected):
    assert orientation([corners]).tolist() == [expected]


def test_orientation_of_turned_rectangles():
    boxes = [rectangle(100, 100, 40, 10, deg) for deg in (0, 30, 60, 90, 120, 170, 190)]
    assert np.allclose(orientation(boxes), [0, 30, 60, 90, 120, 170, 10], atol=1e-9)


@settings(max_examples=100, deadline=None)
@given(unit_rows(5))
def test_orientation_range_and_spec_agreement(u):
    boxes = rectangles(u)
    theta = orientation(boxes)
    assert theta.shape == (len(boxes),)
    assert ((theta >= 0) & (theta < 180)).all()
    expected = np.array([reference_tool_orientation(b) for b in boxes])
    assert np.allclose(angle_difference(theta, expected), 0, atol=1e-9)


@settings(max_examples=50, deadline=None)
@given(unit_rows(5), st.integers(-3000, 3000), st.integers(-2000, 2000))
def test_orientation_invariant_under_translation(u, dx, dy):
    boxes = rectangles(u, oblong=True)
    assert (angle_difference(orientation(boxes), orientation(boxes + [dx, dy])) < 1e-6).all()


@pytest.mark.parametrize(
    "a, b, expected",
    [(10, 170, 20), (0, 90, 90), (45, 45, 0), (179, 1, 2), (0, 180, 0), (350, 10, 20), (-30, 30, 60), (0, 135, 45)],
)
def test_angle_difference_table(a, b, expected):
    assert angle_difference([a], [b]).tolist() == [expected]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(angles, angles), min_size=1, max_size=10))
def test_angle_difference_range_and_symmetry(pairs):
    a, b = np.array(pairs).T
    d = angle_difference(a, b)
    assert ((d >= 0) & (d <= 90)).all()
    assert np.array_equal(d, angle_difference(b, a))
    assert np.allclose(angle_difference(a, a), 0)
    assert np.allclose(angle_difference(a + 180, b), d, atol=1e-9)


def test_angle_difference_broadcasts_and_empty():
    assert angle_difference([0, 30, 170], 0).tolist() == [0, 30, 10]
    assert angle_difference([], []).shape == (0,)


@pytest.mark.parametrize(
    "theta, expected",
    [(0, 0), (10, 10), (45, 45), (80, 10), (90, 0), (100, 10), (135, 45), (179, 1), (180, 0), (-10, 10)],
)
def test_off_axis_angle_table(theta, expected):
    assert off_axis_angle([theta])[0] == pytest.approx(expected, abs=1e-12)


@settings(max_examples=100, deadline=None)
@given(st.lists(angles, min_size=1, max_size=10))
def test_off_axis_angle_range(theta):
    off = off_axis_angle(theta)
    assert ((off >= 0) & (off <= 45)).all()
    assert np.allclose(off, off_axis_angle(np.array(theta) + 90), atol=1e-9)


def test_orientation_errors_pairs():
    a = [rectangle(0, 0, 40, 10, deg) for deg in (0, 10, 90, 5)]
    b = [rectangle(0, 0, 40, 10, deg) for deg in (0, 175, 0, 95)]
    assert np.allclose(orientation_errors(a, b), [0, 15, 90, 90], atol=1e-9)
    assert orientation_errors(np.zeros((0, 4, 2)), np.zeros((0, 4, 2))).shape == (0,)
    with pytest.raises(ValueError):
        orientation_errors(a, b[:2])


@settings(max_examples=100, deadline=None)
@given(unit_rows(10))
def test_orientation_errors_range_and_symmetry(u):
    a, b = rectangles(u[:, :5]), rectangles(u[:, 5:])
    err = orientation_errors(a, b)
    assert ((err >= 0) & (err <= 90)).all()
    assert np.array_equal(err, orientation_errors(b, a))
    assert np.array_equal(orientation_errors(a, a), np.zeros(len(a)))


def test_orientation_error_single_pair():
    landscape = [0, 0, 4, 0, 4, 2, 0, 2]
    assert orientation_error(landscape, [[0, 0], [0, 4], [-2, 4], [-2, 0]]) == 90.0
    assert orientation_error(np.array(landscape).reshape(4, 2), landscape) == 0.0
    assert isinstance(orientation_error(landscape, landscape), float)
    with pytest.raises(ValueError):
        orientation_error([0, 0, 1, 1], landscape)


def edge_reduction_orientation(corners: np.ndarray) -> np.ndarray:
    """Orientation from (n, 2) edge vectors and np.mod: the straightforward numpy formula, the
    edges compared by np.hypot as the reference compares them."""
    first, second = corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 1]
    edge = np.where((np.hypot(*second.T) > np.hypot(*first.T))[:, None], second, first)
    theta = np.mod(np.degrees(np.arctan2(edge[:, 1], edge[:, 0])), 180.0)
    return np.where(theta >= 180.0, 0.0, theta)


def awkward_boxes(seed: int, n: int) -> np.ndarray:
    """Random quadrilaterals at several scales, with ties, axis-aligned edges, signed zeros and points."""
    rng = np.random.default_rng(seed)
    corners = rng.normal(0, 1, (n, 4, 2)) * rng.choice([1e-9, 1.0, 3e3], (n, 1, 1))
    corners[::3] = np.round(corners[::3])  # integer corners: ties and edges along the axes
    corners[::5, :, 1] = corners[::5, :1, 1]  # flat along x, edges pointing either way
    corners[::7] = -0.0
    corners[1::7, 1] = corners[1::7, 0]  # zero first edge
    corners[2::11, :, 1] *= -0.0
    return corners


@pytest.mark.parametrize("seed, n", [(0, 0), (1, 1), (2, 5000)])
def test_orientation_equals_the_edge_reduction_bit_for_bit(seed, n):
    a, b = awkward_boxes(seed, n), awkward_boxes(seed + 100, n)
    expected = edge_reduction_orientation(a)
    got = orientation(a)
    assert np.array_equal(got, expected) and np.array_equal(np.signbit(got), np.signbit(expected))
    assert np.array_equal(orientation_errors(a, b), angle_difference(expected, edge_reduction_orientation(b)))
    if n > 100:
        assert ((got >= 0) & (got < 180)).all() and (got == 0).any() and (got == 90).any()


def reference_tool_orientation(points) -> float:
    """The reference tool's obb_orientation, restated: np.hypot lengths, argmax (first wins a tie)."""
    corners = np.asarray(points, dtype=float)[:4]
    edges = corners[[1, 2]] - corners[[0, 1]]
    longer = edges[int(np.argmax(np.hypot(edges[:, 0], edges[:, 1])))]
    return float(np.degrees(np.arctan2(longer[1], longer[0])) % 180.0)


def test_exact_decimal_ties_break_as_the_reference_breaks_them():
    # a square with 2-decimal corners: its edges are equal by np.hypot, but dx^2 + dy^2 of the
    # second is larger by one ulp, which used to turn the box by 90 degrees (issue 13)
    p0, p1, p2 = np.array([264.44, 111.26]), np.array([235.09, 86.86]), np.array([259.49, 57.51])
    box = np.array([p0, p1, p2, p0 + (p2 - p1)])
    first, second = p1 - p0, p2 - p1
    assert np.hypot(*first) == np.hypot(*second) and (second**2).sum() > (first**2).sum()
    assert orientation(box[None])[0] == pytest.approx(reference_tool_orientation(box), abs=1e-12)
    assert orientation(box[None])[0] == pytest.approx(np.degrees(np.arctan2(first[1], first[0])) % 180, abs=1e-12)


@pytest.mark.parametrize("decimals", [0, 2, 6])
def test_orientation_agrees_with_the_reference_on_near_squares(decimals):
    rng = np.random.default_rng(decimals)
    n = 4000
    start = np.round(rng.uniform(0, 4000, (n, 2)), decimals)
    edge = np.round(rng.uniform(-30, 30, (n, 2)), decimals)
    p1 = start + edge
    p2 = p1 + np.stack([-edge[:, 1], edge[:, 0]], axis=1)  # a quarter turn: a square, up to rounding
    boxes = np.stack([start, p1, p2, start + (p2 - p1)], axis=1)
    expected = np.array([reference_tool_orientation(b) for b in boxes])
    got = orientation(boxes)
    difference = np.abs(got - expected)
    assert np.minimum(difference, 180 - difference).max() <= 1e-9


def test_orientation_orders_edges_by_hypot_even_where_squares_would_not():
    # The squared lengths decide only where they are far apart; near-ties, squares, tiny,
    # huge and non-finite edges go through np.hypot, so every box gets the edge hypot picks.
    rng = np.random.default_rng(11)
    parts = [rng.integers(-60, 60, (3000, 4, 2)) / 100.0,
             rng.normal(0, 1, (500, 4, 2)) * 1e-160, rng.normal(0, 1, (500, 4, 2)) * 1e153]
    v = rng.normal(0, 10, (2000, 2))
    w = np.stack([-v[:, 1], v[:, 0]], axis=1) * rng.choice([1.0, 1 + 1e-12, 1 - 1e-15], (2000, 1))
    start = rng.normal(0, 100, (2000, 2))
    parts.append(np.stack([start, start + v, start + v + w, start + w], axis=1))  # (near-)squares
    corners = np.concatenate(parts)
    corners[rng.integers(0, len(corners), 20), 1, 0] = np.nan
    corners[rng.integers(0, len(corners), 20), 2, 1] = np.inf
    flat = corners.reshape(-1, 8)
    first = flat[:, 2:4] - flat[:, 0:2]
    second = flat[:, 4:6] - flat[:, 2:4]
    with np.errstate(invalid="ignore", over="ignore"):
        longer = np.hypot(second[:, 0], second[:, 1]) > np.hypot(first[:, 0], first[:, 1])
        edge = np.where(longer[:, None], second, first)
        theta = np.degrees(np.arctan2(edge[:, 1], edge[:, 0]))
        theta = np.where(theta <= 0.0, theta + 180.0, theta)
        expected = np.where(theta >= 180.0, 0.0, theta)
        got = orientation(corners)
    assert got.tobytes() == expected.tobytes()
