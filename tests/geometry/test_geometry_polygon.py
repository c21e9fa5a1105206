"""Tests of hbb2obb.geometry.polygon: area, bounds, sides, degeneracy, bow-tie repair."""

from __future__ import annotations

import doctest
import itertools

import numpy as np
import pytest
import shapely
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import hbb2obb.geometry.angles
import hbb2obb.geometry.exact
import hbb2obb.geometry.iou
import hbb2obb.geometry.polygon
from hbb2obb.boxes import Boxes
from hbb2obb.geometry import bounds, is_concave, is_degenerate, polygon_area, repair_corners, side_lengths

RECT = [[0, 0], [4, 0], [4, 2], [0, 2]]  # positive shoelace sum (clockwise on screen, y down)
RECT_REVERSED = RECT[::-1]


def convex_quads(u: np.ndarray) -> np.ndarray:
    """Convex quadrilaterals from rows of ``u`` (12 columns in [0, 1]): four points on an ellipse
    in angular order (gaps at least 360/31 degrees, so no near-collinear corners), sheared,
    turned, moved into a 4K frame, half of them wound the other way."""
    gaps = 1 + 9 * u[:, :4]
    angles = np.radians(360 * u[:, 4:5] + 360 * np.cumsum(gaps, axis=1) / gaps.sum(axis=1, keepdims=True))
    x = np.cos(angles) * (2 + 148 * u[:, 5:6])
    y = np.sin(angles) * (2 + 148 * u[:, 6:7])
    x = x + (2 * u[:, 7:8] - 1) * y
    turn = np.radians(360 * u[:, 8:9])
    quads = np.stack(
        [
            x * np.cos(turn) - y * np.sin(turn) + 3840 * u[:, 9:10],
            x * np.sin(turn) + y * np.cos(turn) + 2160 * u[:, 10:11],
        ],
        axis=-1,
    )
    return np.where((u[:, 11] < 0.5)[:, None, None], quads, quads[:, ::-1])


def quad_sets(max_rows: int = 5):
    rows = st.tuples(st.integers(1, max_rows), st.just(12))
    return arrays(np.float64, rows, elements=st.floats(0, 1)).map(convex_quads)


def is_cyclic(permutation) -> bool:
    """Whether corner order ``permutation`` walks the quadrilateral round (either way)."""
    start = list(permutation).index(0)
    walk = list(permutation[start:]) + list(permutation[:start])
    return walk in ([0, 1, 2, 3], [0, 3, 2, 1])


def turns(corners: np.ndarray) -> np.ndarray:
    edge = np.roll(corners, -1, axis=0) - corners
    before = np.roll(edge, 1, axis=0)
    return before[:, 0] * edge[:, 1] - before[:, 1] * edge[:, 0]


def strictly_convex(corners: np.ndarray) -> bool:
    turn = turns(corners)
    return bool((turn > 0).all() or (turn < 0).all())


# --------------------------------------------------------------------------- polygon_area


@pytest.mark.parametrize(
    "corners, area",
    [
        (RECT, 8.0),
        (RECT_REVERSED, 8.0),
        ([[0, 0], [1, 1], [0, 2], [-1, 1]], 2.0),  # diamond
        ([[3840, 2160], [3839, 2160], [3839, 2159], [3840, 2159]], 1.0),  # far corner of a 4K frame
        ([[0, 0], [1, 1], [2, 2], [3, 3]], 0.0),  # collinear
        ([[0, 0], [4, 0], [0, 2], [4, 2]], 0.0),  # bow-tie: the two lobes cancel
    ],
)
def test_polygon_area_table(corners, area):
    assert polygon_area([corners]).tolist() == [area]


def test_polygon_area_empty_and_shapes():
    assert polygon_area(np.zeros((0, 4, 2))).shape == (0,)
    assert polygon_area([]).shape == (0,)
    assert polygon_area(np.array(RECT, float).reshape(1, 8)).tolist() == [8.0]
    assert polygon_area(Boxes(corners=[RECT], class_id=[0])).tolist() == [8.0]
    with pytest.raises(ValueError):
        polygon_area([[0, 0], [1, 0], [1, 1]])


@settings(max_examples=100, deadline=None)
@given(quad_sets())
def test_polygon_area_matches_shapely(corners):
    expected = shapely.area(shapely.polygons(corners))
    assert np.allclose(polygon_area(corners), expected, rtol=1e-12, atol=1e-9)
    assert np.allclose(polygon_area(corners[:, ::-1]), expected, rtol=1e-12, atol=1e-9)


# --------------------------------------------------------------------------- is_degenerate


@pytest.mark.parametrize(
    "corners, expected",
    [
        (RECT, False),
        ([[0, 0], [1, 1], [2, 2], [3, 3]], True),
        ([[0, 0], [3, 3], [1, 1], [2, 2]], True),  # collinear, out of order
        ([[5, 5], [5, 5], [5, 5], [5, 5]], True),  # one point
        ([[0, 0], [4, 0], [4, 0], [0, 0]], True),  # a segment, corners repeated
        ([[0, 0], [4, 0], [0, 2], [4, 2]], False),  # bow-tie: zero shoelace sum, real area
        ([[0, 0], [1000, 0], [1000, 1e-3], [0, 1e-3]], False),  # thin but real
        ([[0, 0], [1000, 0], [1000, 1e-12], [0, 1e-12]], True),  # below the relative tolerance
        ([[3000, 2000], [3001, 2000], [3001, 2000 + 1e-13], [3000, 2000 + 1e-13]], True),
    ],
)
def test_is_degenerate_table(corners, expected):
    assert is_degenerate([corners]).tolist() == [expected]


def test_is_degenerate_empty():
    assert is_degenerate(np.zeros((0, 4, 2))).shape == (0,)


# --------------------------------------------------------------------------- repair_corners


def test_repair_bow_tie_gives_the_rectangle():
    repaired, flagged = repair_corners([[[0, 0], [4, 0], [0, 2], [4, 2]], [[0, 0], [0, 2], [4, 0], [4, 2]]])
    assert flagged.tolist() == [True, True]
    for box in repaired:
        assert box[0].tolist() == [0.0, 0.0]  # corner 1 stays first
        assert shapely.Polygon(box).is_valid
        assert shapely.Polygon(box).area == 8.0
        assert strictly_convex(box)
    # the chosen direction: positive shoelace sum, as Boxes.from_xywh lists corners
    assert repaired[0].tolist() == [[0, 0], [4, 0], [4, 2], [0, 2]]
    assert repaired[1].tolist() == [[0, 0], [4, 0], [4, 2], [0, 2]]


def test_repair_leaves_convex_and_degenerate_boxes_alone():
    boxes = np.array(
        [RECT, RECT_REVERSED, [[0, 0], [1, 1], [2, 2], [3, 3]], [[0, 0], [2, 0], [1, 0], [3, 0]]], dtype=float
    )
    repaired, flagged = repair_corners(boxes)
    assert flagged.tolist() == [False, False, False, False]
    assert np.array_equal(repaired, boxes)
    assert repaired is not boxes


def test_repair_leaves_a_concave_quad_as_it_is():
    # one corner inside the triangle of the others: a simple concave quad, a valid polygon
    # (issue 13: it used to be replaced by its hull, the triangle, like a bow-tie)
    quads = [[[0, 0], [4, 0], [1, 1], [0, 4]], [[1, 1], [0, 0], [4, 0], [0, 4]]]
    repaired, flagged, degenerate, concave = repair_corners(quads, with_degenerate=True, with_concave=True)
    assert flagged.tolist() == [False, False] and degenerate.tolist() == [False, False]
    assert concave.tolist() == [True, True] and is_concave(quads).tolist() == [True, True]
    assert repaired.tolist() == quads
    assert polygon_area(repaired).tolist() == pytest.approx([4.0, 6.0])  # the polygons as listed, not the hull (8)
    assert shapely.area(shapely.polygons(np.array(quads, float))).tolist() == pytest.approx([4.0, 6.0])


def test_bow_tie_is_not_concave():
    bow_tie = [[0, 0], [4, 0], [0, 2], [4, 2]]
    _, flagged, concave = repair_corners([bow_tie], with_concave=True)
    assert flagged.tolist() == [True] and concave.tolist() == [False]


def test_repair_collinear_corner_counts_as_convex():
    # a triangle with a fourth corner on one of its edges is a (flat-angled) convex polygon
    box = [[0, 0], [2, 0], [4, 0], [0, 4]]
    assert repair_corners([box])[1].tolist() == [False]
    # the same corners out of order are reordered into the triangle with the edge point
    repaired, flagged = repair_corners([[[0, 0], [4, 0], [2, 0], [0, 4]]])
    assert flagged.tolist() == [True]
    assert polygon_area(repaired).tolist() == [8.0]


def test_repair_empty():
    repaired, flagged = repair_corners(np.zeros((0, 4, 2)))
    assert repaired.shape == (0, 4, 2) and flagged.shape == (0,)


@settings(max_examples=40, deadline=None)
@given(quad_sets(max_rows=1))
def test_repair_every_corner_permutation(quads):
    quad = quads[0]
    permutations = list(itertools.permutations(range(4)))
    boxes = np.array([quad[list(p)] for p in permutations])
    repaired, flagged = repair_corners(boxes)
    assert flagged.tolist() == [not is_cyclic(p) for p in permutations]
    hull_area = shapely.Polygon(quad).area
    assert np.allclose(polygon_area(repaired), hull_area, rtol=1e-9)
    for box, given_box, was_flagged in zip(repaired, boxes, flagged):
        assert strictly_convex(box)
        assert np.array_equal(box[0], given_box[0])  # corner 1 kept first
        if was_flagged:
            assert turns(box).sum() > 0  # the documented winding: positive shoelace sum
        else:
            assert np.array_equal(box, given_box)


# --------------------------------------------------------------------------- bounds, side_lengths


def test_bounds_and_side_lengths():
    boxes = [[[1, 5], [4, 2], [7, 5], [4, 8]], RECT, [[0, 0], [0, 3], [4, 3], [4, 0]]]
    assert bounds(boxes).tolist() == [[1, 2, 7, 8], [0, 0, 4, 2], [0, 0, 4, 3]]
    short, long = side_lengths(boxes)
    assert np.allclose(short, [np.hypot(3, 3), 2, 3])
    assert np.allclose(long, [np.hypot(3, 3), 4, 4])
    assert bounds([]).shape == (0, 4)
    assert [v.shape for v in side_lengths([])] == [(0,), (0,)]


@settings(max_examples=50, deadline=None)
@given(quad_sets())
def test_bounds_match_shapely(corners):
    assert np.array_equal(bounds(corners), shapely.bounds(shapely.polygons(corners)))


# --------------------------------------------------------------------------- docstrings


@pytest.mark.parametrize(
    "module", [hbb2obb.geometry.polygon, hbb2obb.geometry.iou, hbb2obb.geometry.angles, hbb2obb.geometry.exact],
    ids=lambda m: m.__name__
)
def test_docstring_examples(module):
    result = doctest.testmod(module, verbose=False)
    assert result.attempted > 0
    assert result.failed == 0


@pytest.mark.parametrize("seed", range(3))
def test_repair_with_degenerate_equals_is_degenerate_of_the_repaired_boxes(seed):
    # Small integer corners: many bow-ties, inner points, collinear and repeated corners.
    corners = np.random.default_rng(seed).integers(0, 5, (5000, 4, 2)).astype(float)
    repaired, reordered, degenerate = repair_corners(corners, with_degenerate=True)
    plain, plain_reordered = repair_corners(corners)
    assert np.array_equal(repaired, plain) and np.array_equal(reordered, plain_reordered)
    assert np.array_equal(degenerate, is_degenerate(repaired))
    assert reordered.any() and degenerate.any()


def test_repair_without_copy_returns_the_input_when_nothing_is_reordered():
    convex = np.array([[[0, 0], [4, 0], [4, 2], [0, 2]], [[0, 0], [0, 2], [4, 2], [4, 0]]], dtype=np.float64)
    fixed, flag = repair_corners(convex, copy=False)
    assert fixed is convex and not flag.any()
    assert repair_corners(convex)[0] is not convex  # the default still copies
    bow_tie = np.array([[[0, 0], [4, 0], [0, 2], [4, 2]]], dtype=np.float64)
    before = bow_tie.copy()
    fixed, flag = repair_corners(np.concatenate([convex, bow_tie]), copy=False)
    assert flag.tolist() == [False, False, True]
    assert fixed[2].tolist() == [[0, 0], [4, 0], [4, 2], [0, 2]] and np.array_equal(bow_tie, before)
