"""Tests of hbb2obb.geometry.green: the Green's-theorem overlap for integer corners.

Oracles: exact rational clipping (``conftest.exact_convex_iou``) and shapely; and the clipping
kernel it stands in for (``iou._iou_clipped``), which it must match to 1e-12 wherever it covers a
pair. Coincident and collinear edges, shared corners, corners on edges and identical boxes are
where an edge-by-edge sum counts a piece twice or not at all; they are the cases here.
"""

from __future__ import annotations

import numpy as np
import pytest
import shapely
from hypothesis import given, settings
from hypothesis import strategies as st

import hbb2obb.geometry.iou as iou_module
from hbb2obb.geometry import iou_pairs
from hbb2obb.geometry.green import EXACT_COORDINATE, green_overlap
from hbb2obb.geometry.polygon import convex_positive, planar

from conftest import exact_convex_iou

EXACT = 1e-12


def square(x, y, side):
    return [[x, y], [x + side, y], [x + side, y + side], [x, y + side]]


# name: (a, b, exact IoU)
COINCIDENT = {
    "collinear edges, same direction (the double count)": (square(0, 0, 2), [[1, 0], [3, 0], [3, 2], [1, 2]], 1 / 3),
    "touching from outside along an edge": (square(0, 0, 2), square(2, 0, 2), 0.0),
    "touching at one corner only": (square(0, 0, 2), square(2, 2, 2), 0.0),
    "identical boxes": (square(5, 5, 3), square(5, 5, 3), 1.0),
    "identical boxes, other start and winding": (
        square(5, 5, 3),
        square(5, 5, 3)[::-1][1:] + square(5, 5, 3)[::-1][:1],
        1.0,
    ),
    "inside, sharing a corner and two edges": (square(0, 0, 2), square(0, 0, 4), 0.25),
    "inside, sharing one edge": (square(1, 0, 2), square(0, 0, 4), 0.25),
    "diamond with its corners on the square's edges": ([[2, 0], [4, 2], [2, 4], [0, 2]], square(0, 0, 4), 0.5),
    "corner of one exactly on the other's edge": ([[2, 2], [4, 0], [6, 2], [4, 4]], square(0, 0, 4), 0.2),
    "edge lying on the other's edge line, beyond its end": (square(0, 0, 2), [[3, 0], [5, 0], [5, 1], [3, 1]], 0.0),
    "cross of two rectangles sharing no corner": (
        [[0, 1], [4, 1], [4, 2], [0, 2]],
        [[1, 0], [2, 0], [2, 4], [1, 4]],
        1 / 7,
    ),
    "triangle (a repeated corner) on a square's diagonal": ([[0, 0], [4, 0], [4, 4], [4, 4]], square(0, 0, 4), 0.5),
    "tilted boxes sharing a tilted edge": ([[0, 0], [2, 1], [1, 3], [-1, 2]], [[0, 0], [2, 1], [3, -1], [1, -2]], 0.0),
    "tilted boxes overlapping along a tilted edge line": (
        [[0, 0], [4, 2], [3, 4], [-1, 2]],
        [[2, 1], [6, 3], [5, 5], [1, 3]],
        1 / 3,
    ),
}


def _covered_and_overlap(a, b):
    """green_overlap's verdict and half its overlap for aligned (k, 4, 2) boxes, prepared as iou_pairs does."""
    ax, ay, _, _ = convex_positive(*planar(np.asarray(a, dtype=np.float64)))
    bx, by, _, _ = convex_positive(*planar(np.asarray(b, dtype=np.float64)))
    scratch = iou_module._Scratch(ax.shape[1])
    twice_overlap, _, _, covered = green_overlap(ax, ay, bx, by, scratch.get)
    return covered.copy(), 0.5 * twice_overlap


def _clipped(a, b):
    """The clipping kernel alone on the same pairs."""
    ax, ay, a_bad, _ = convex_positive(*planar(np.asarray(a, dtype=np.float64)))
    bx, by, b_bad, _ = convex_positive(*planar(np.asarray(b, dtype=np.float64)))
    return iou_module._iou_clipped(ax, ay, a_bad, bx, by, b_bad, iou_module._Scratch(ax.shape[1]))


@pytest.mark.parametrize("a, b, expected", list(COINCIDENT.values()), ids=list(COINCIDENT))
def test_coincident_edges_and_corners_are_counted_once(a, b, expected):
    covered, _ = _covered_and_overlap([a], [b])
    assert covered.all()  # integer corners: decided by the Green form, not handed to clipping
    oracle = exact_convex_iou(a, b)
    if expected is not None:
        assert oracle == pytest.approx(expected, abs=1e-15)
    got = iou_pairs([a, b], [b, a])  # both ways round: P and Q swap roles in the perturbation
    assert got == pytest.approx([oracle, oracle], abs=EXACT)
    union = shapely.union(shapely.Polygon(a), shapely.Polygon(b)).area
    assert got[0] * union == pytest.approx(shapely.intersection(shapely.Polygon(a), shapely.Polygon(b)).area, abs=1e-9)


def test_all_coincident_cases_at_once_and_moved_far_away():
    a = np.array([case[0] for case in COINCIDENT.values()], dtype=np.float64)
    b = np.array([case[1] for case in COINCIDENT.values()], dtype=np.float64)
    oracle = [exact_convex_iou(x, y) for x, y in zip(a, b)]
    for offset in (0.0, 4000.0, 1e7):  # pixel positions of a 4K frame, and far beyond (local frame)
        assert _covered_and_overlap(a + offset, b + offset)[0].all()
        np.testing.assert_allclose(iou_pairs(a + offset, b + offset), oracle, rtol=0, atol=EXACT)


def parallelogram(v):
    """Integer corners p, p + u, p + u + w, p + w: convex whenever u and w are not parallel."""
    p, u, w = np.array(v[:2]), np.array(v[2:4]), np.array(v[4:6])
    return np.array([p, p + u, p + u + w, p + w], dtype=np.float64)


small = st.integers(-4, 4)
boxes = st.lists(small, min_size=6, max_size=6).map(parallelogram).filter(
    lambda q: (q[1, 0] - q[0, 0]) * (q[3, 1] - q[0, 1]) != (q[1, 1] - q[0, 1]) * (q[3, 0] - q[0, 0]))


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(boxes, boxes), min_size=1, max_size=8))
def test_small_integer_parallelograms_match_the_exact_oracle_and_clipping(pairs):
    # On a 9 x 9 grid nearly every pair has a coincident edge line, a shared corner or a corner on an edge.
    a = np.array([p for p, _ in pairs])
    b = np.array([q for _, q in pairs])
    got = iou_pairs(a, b)  # covered pairs by the Green form, thin ones (poorly conditioned) by clipping
    np.testing.assert_allclose(got, [exact_convex_iou(x, y) for x, y in pairs], rtol=0, atol=EXACT)
    np.testing.assert_allclose(got, _clipped(a, b), rtol=0, atol=EXACT)


def test_most_small_integer_parallelograms_are_decided_by_the_green_form():
    rng = np.random.default_rng(18)
    a = np.array([parallelogram(v) for v in rng.integers(-4, 5, size=(1000, 6))])
    b = np.array([parallelogram(v) for v in rng.integers(-4, 5, size=(1000, 6))])
    areas = [shapely.Polygon(x).area for x in a], [shapely.Polygon(y).area for y in b]
    keep = (np.array(areas[0]) > 0) & (np.array(areas[1]) > 0)
    a, b = a[keep], b[keep]
    covered, _ = _covered_and_overlap(a, b)
    assert covered.mean() > 0.5  # the rest are thin against the extent: clipped
    got = iou_pairs(a, b)
    np.testing.assert_allclose(got, [exact_convex_iou(x, y) for x, y in zip(a, b)], rtol=0, atol=EXACT)
    np.testing.assert_allclose(got, _clipped(a, b), rtol=0, atol=EXACT)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(boxes, boxes, st.integers(-3, 3), st.integers(0, 3)), min_size=1, max_size=6))
def test_scaled_relisted_and_shifted_integer_boxes(cases):
    # Scaled up to pixel sizes, corners listed from another start, the other box shifted a little.
    a = np.array([p * 37 + 1000 for p, _, _, _ in cases])
    b = np.array([np.roll(q * 37 + 1000 + shift, start, axis=0) for _, q, shift, start in cases])
    got = iou_pairs(a, b)
    np.testing.assert_allclose(got, [exact_convex_iou(x, y) for x, y in zip(a, b)], rtol=0, atol=EXACT)
    np.testing.assert_allclose(got, _clipped(a, b), rtol=0, atol=EXACT)


def test_pairs_it_cannot_decide_exactly_are_clipped_bit_for_bit():
    base = np.array([square(10, 10, 20)], dtype=np.float64)
    other = np.array([[[15, 12], [40, 14], [38, 33], [13, 31]]], dtype=np.float64)
    cases = {
        "fractions": (base + 0.25, other),
        "noise on coincident edges": (base, base + 1e-11 * np.arange(8).reshape(1, 4, 2)),
        "local coordinates beyond 2**18": (base * 2**14, other * 2**14),
        "sliver": (np.array([[[0, 0], [3000, 1], [2999, 2], [-1, 1]]], dtype=np.float64),
                   np.array([[[1, 0], [3001, 1], [3000, 2], [0, 1]]], dtype=np.float64)),
    }
    for name, (a, b) in cases.items():
        assert not _covered_and_overlap(a, b)[0].any(), name
        assert iou_pairs(a, b).tolist() == _clipped(a, b).tolist(), name
    assert _covered_and_overlap(base, other)[0].all()
    assert EXACT_COORDINATE == 2.0**18


def test_a_chunk_of_covered_and_clipped_pairs_keeps_each_pair_its_own_value():
    rng = np.random.default_rng(7)
    a = np.round(rng.uniform(0, 60, size=(300, 1, 2))) + np.array(square(0, 0, 20), dtype=np.float64)
    b = a + np.round(rng.uniform(-15, 15, size=(300, 1, 2)))
    fractional = rng.random(300) < 0.3
    b[fractional] += 0.5  # these go to clipping, the others stay with the Green form
    covered, _ = _covered_and_overlap(a, b)
    assert covered.tolist() == (~fractional).tolist()
    got = iou_pairs(a, b)
    np.testing.assert_allclose(got, [exact_convex_iou(x, y) for x, y in zip(a, b)], rtol=0, atol=EXACT)
    assert got[fractional].tolist() == _clipped(a[fractional], b[fractional]).tolist()


def test_green_overlap_of_no_pairs():
    empty = np.zeros((4, 0))
    overlap, area_a, area_b, covered = green_overlap(empty, empty, empty, empty, iou_module._Scratch(1).narrowed(0).get)
    assert overlap.shape == area_a.shape == area_b.shape == covered.shape == (0,)
