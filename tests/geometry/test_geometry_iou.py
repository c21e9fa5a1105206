"""Tests of hbb2obb.geometry.iou and .candidates: exact polygon IoU, candidate pairs, sparse and dense IoU.

shapely is the oracle: IoU = area(A & B) / area(A | B) of the two quadrilaterals as polygons.
"""

from __future__ import annotations

import itertools
import math
import threading

import numpy as np
import pytest
import shapely
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import hbb2obb.geometry.candidates as candidates_module
import hbb2obb.geometry.iou as iou_module
from hbb2obb.geometry import (
    bounds,
    calculate_obb_iou,
    candidate_pairs,
    iou_pairs,
    is_concave,
    pairwise_iou,
    sparse_pairwise_iou,
)

from conftest import exact_convex_iou

TOL = 1e-9


def rectangle(cx, cy, w, h, degrees):
    """Corners of a w x h rectangle centred at (cx, cy), turned by ``degrees``."""
    c, s = math.cos(math.radians(degrees)), math.sin(math.radians(degrees))
    half = np.array([[-w, -h], [w, -h], [w, h], [-w, h]]) / 2
    return half @ np.array([[c, s], [-s, c]]) + [cx, cy]


def box(x0, y0, x1, y1):
    return [[x0, y0], [x1, y0], [x1, y1], [x0, y1]]


def shapely_iou(a, b) -> np.ndarray:
    """The oracle, one pair per row; 0 when the union has no area.

    Where shapely contradicts itself (the intersection's area against the union's, both by
    GEOS) the pair is settled in exact arithmetic (conftest.exact_convex_iou): GEOS can return
    a MULTIPOINT for a rectangle inside another with collinear edges.
    """
    a, b = np.asarray(a, float), np.asarray(b, float)
    if a.ndim == 2:  # one pair
        return shapely_iou(a[None], b[None])[0]
    pa, pb = shapely.polygons(a), shapely.polygons(b)
    inter = shapely.area(shapely.intersection(pa, pb))
    union = shapely.area(shapely.union(pa, pb))
    iou = np.where(union > 0, inter / np.where(union > 0, union, 1.0), 0.0)
    by_union = shapely.area(pa) + shapely.area(pb) - union  # the intersection the union implies
    doubtful = np.flatnonzero(np.abs(by_union - inter) > 1e-9 * np.maximum(union, 1.0))
    for row in doubtful.tolist():
        iou[row] = exact_convex_iou(a[row], b[row])
    return iou


def brute_force_pairs(a, b):
    ba, bb = bounds(a), bounds(b)
    overlap = (
        (bb[None, :, 0] < ba[:, None, 2])
        & (bb[None, :, 2] > ba[:, None, 0])
        & (bb[None, :, 1] < ba[:, None, 3])
        & (bb[None, :, 3] > ba[:, None, 1])
    )
    return np.nonzero(overlap)


# --------------------------------------------------------------------------- strategies
# Boxes are built with numpy from rows of numbers in [0, 1] that hypothesis draws as one array
# per example (far cheaper than one draw per parameter); hypothesis favours the ends 0 and 1,
# so the edge values (size 1, angle 0 or 180, zero offset, frame border) come up often.


def unit_rows(columns: int, max_rows: int = 6):
    return arrays(np.float64, st.tuples(st.integers(1, max_rows), st.just(columns)), elements=st.floats(0, 1))


def rectangles(cx, cy, w, h, deg) -> np.ndarray:
    """Vectorized :func:`rectangle`: one (4, 2) box per element of the parameter arrays."""
    c, s = np.cos(np.radians(deg))[:, None], np.sin(np.radians(deg))[:, None]
    hx = np.array([-1, 1, 1, -1]) * np.asarray(w)[:, None] / 2
    hy = np.array([-1, -1, 1, 1]) * np.asarray(h)[:, None] / 2
    return np.stack([hx * c - hy * s + cx[:, None], hx * s + hy * c + cy[:, None]], axis=-1)


def rectangle_pairs(u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Two rotated rectangles per row of ``u`` (12 columns), in a 4K frame; b mostly near a."""
    w = 1 + 249 * u[:, 2]
    square = u[:, 3] < 0.25
    h = np.where(square, w * (0.999 + 0.002 * u[:, 4]), 1 + 249 * u[:, 4])  # near-squares too
    a = rectangles(3840 * u[:, 0], 2160 * u[:, 1], w, h, 180 * u[:, 5])
    reach = np.maximum(w, h)
    near = u[:, 11] < 0.75
    a_centre = a.mean(axis=1)
    b_near = rectangles(
        a_centre[:, 0] + (2 * u[:, 6] - 1) * reach,
        a_centre[:, 1] + (2 * u[:, 7] - 1) * reach,
        w * (0.5 + u[:, 8]),
        h * (0.5 + u[:, 9]),
        180 * u[:, 5] + 60 * (u[:, 10] - 0.5),
    )
    b_far = rectangles(3840 * u[:, 6], 2160 * u[:, 7], 1 + 249 * u[:, 8], 1 + 249 * u[:, 9], 180 * u[:, 10])
    return a, np.where(near[:, None, None], b_near, b_far)


def convex_quads(u: np.ndarray, centre=None) -> np.ndarray:
    """Convex quadrilaterals from rows of ``u`` (12 columns): four points on an ellipse in
    angular order (gaps at least 360/31 degrees, so no near-collinear corners), sheared,
    turned, moved, half of them wound the other way."""
    gaps = 1 + 9 * u[:, :4]
    angles = np.radians(360 * u[:, 4:5] + 360 * np.cumsum(gaps, axis=1) / gaps.sum(axis=1, keepdims=True))
    x = np.cos(angles) * (2 + 118 * u[:, 5:6])
    y = np.sin(angles) * (2 + 118 * u[:, 6:7])
    x = x + (2 * u[:, 7:8] - 1) * y
    turn = np.radians(360 * u[:, 8:9])
    if centre is None:
        centre = np.stack([3840 * u[:, 9], 2160 * u[:, 10]], axis=1)
    quads = np.stack(
        [x * np.cos(turn) - y * np.sin(turn) + centre[:, :1], x * np.sin(turn) + y * np.cos(turn) + centre[:, 1:]],
        axis=-1,
    )
    return np.where((u[:, 11] < 0.5)[:, None, None], quads, quads[:, ::-1])


def convex_quad_pairs(u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Two convex quadrilaterals per row of ``u`` (26 columns), b centred near a."""
    a = convex_quads(u[:, :12])
    centre = a.mean(axis=1) + 200 * (u[:, 24:26] - 0.5)
    return a, convex_quads(u[:, 12:24], centre)


def integer_rectangles(v: np.ndarray) -> np.ndarray:
    """Rectangles with integer corners p, p+u, p+u+w, p+w (w = r * u turned 90 degrees), from rows
    of ``v`` (5 integer columns in [-6, 6]), all near the bottom-right corner of a 4K frame."""
    ux, uy = v[:, 0], np.where((v[:, 0] == 0) & (v[:, 1] == 0), 1, v[:, 1])
    r = 1 + np.abs(v[:, 2]) % 3
    p = np.stack([3834 + v[:, 3], 2154 + v[:, 4]], axis=1)
    step_u = np.stack([ux, uy], axis=1)
    step_w = r[:, None] * np.stack([-uy, ux], axis=1)
    return np.stack([p, p + step_u, p + step_u + step_w, p + step_w], axis=1).astype(float)


integer_rows = arrays(np.int64, st.tuples(st.integers(1, 6), st.just(10)), elements=st.integers(-6, 6))


def check_against_shapely(a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    got = iou_pairs(a, b)
    assert got.shape == (len(a),)
    assert ((got >= 0) & (got <= 1)).all()
    assert np.abs(got - shapely_iou(a, b)).max(initial=0) <= TOL
    assert np.abs(got - iou_pairs(b, a)).max(initial=0) <= 1e-12  # symmetric
    return got


# --------------------------------------------------------------------------- hand cases

SQUARE = box(0, 0, 2, 2)
DIAMOND = rectangle(1, 1, 2, 2, 45)

CASES = {
    "identical": (SQUARE, SQUARE, 1.0),
    "identical, other start": (SQUARE, np.roll(SQUARE, 1, axis=0), 1.0),
    "identical, other winding": (SQUARE, SQUARE[::-1], 1.0),
    "identical, turned": (DIAMOND, DIAMOND, 1.0),
    "shifted by half": (SQUARE, box(1, 0, 3, 2), 1 / 3),
    "rotated 45 deg": (SQUARE, DIAMOND, 1 / math.sqrt(2)),
    "disjoint": (SQUARE, box(5, 5, 6, 6), 0.0),
    "touching at an edge": (SQUARE, box(2, 0, 4, 2), 0.0),
    "touching along part of an edge": (SQUARE, box(2, 1, 4, 5), 0.0),
    "touching at a corner": (SQUARE, box(2, 2, 4, 4), 0.0),
    "diamond touching a corner": (SQUARE, rectangle(3, 1, 2 / math.sqrt(2), 2 / math.sqrt(2), 45), 0.0),
    "contained": (box(0, 0, 4, 4), box(1, 1, 3, 3), 0.25),
    "contained sharing an edge": (box(0, 0, 4, 4), box(0, 0, 4, 1), 0.25),
    "collinear edges, partial": (box(0, 0, 4, 2), box(2, 0, 6, 3), 0.25),
    "plus sign": (box(0, 1, 4, 2), box(1, 0, 2, 4), 1 / 7),
    "degenerate segment": (SQUARE, [[0, 0], [2, 2], [2, 2], [0, 0]], 0.0),
    "degenerate both": ([[1, 1], [1, 1], [1, 1], [1, 1]], [[1, 1], [1, 1], [1, 1], [1, 1]], 0.0),
    "bow-tie scored as its rectangle": ([[0, 0], [2, 0], [0, 2], [2, 2]], SQUARE, 1.0),
    "4K corner, identical": (box(3838.5, 2158.5, 3840, 2160), box(3838.5, 2158.5, 3840, 2160), 1.0),
    "4K corner, shifted": (box(3836, 2156, 3840, 2160), box(3838, 2156, 3842, 2160), 1 / 3),
    "tiny inside 4K": (box(0, 0, 3840, 2160), box(1919, 1079, 1920, 1080), 1 / (3840 * 2160)),
}


@pytest.mark.parametrize("a, b, expected", list(CASES.values()), ids=list(CASES))
def test_iou_hand_cases(a, b, expected):
    got = iou_pairs([a], [b])
    assert got.shape == (1,)
    assert got[0] == pytest.approx(expected, abs=1e-12)
    assert iou_pairs([b], [a])[0] == pytest.approx(expected, abs=1e-12)
    assert calculate_obb_iou(a, b) == pytest.approx(expected, abs=1e-12)
    # shapely agrees wherever the boxes are valid polygons as listed
    valid = shapely.Polygon(np.asarray(a, float)).is_valid and shapely.Polygon(np.asarray(b, float)).is_valid
    if valid:
        assert abs(got[0] - shapely_iou([a], [b])[0]) <= TOL


def test_iou_all_hand_cases_at_once():
    a = np.array([np.asarray(c[0], float) for c in CASES.values()])
    b = np.array([np.asarray(c[1], float) for c in CASES.values()])
    assert np.allclose(iou_pairs(a, b), [c[2] for c in CASES.values()], atol=1e-12, rtol=0)


def test_iou_concave_quad_is_scored_as_the_polygon_it_is():
    # a simple concave quad (one corner inside the triangle of the others) is a valid polygon:
    # scored exactly, as shapely and the reference score it, not as its hull (issue 13)
    inner = [[0, 0], [4, 0], [1, 1], [0, 4]]
    hull = [[[0, 0], [4, 0], [0, 4], [0, 4]]]  # what it used to be scored as
    other = box(0.5, 0.5, 2.5, 2.5)
    got = iou_pairs([inner], [other])[0]
    assert got == pytest.approx(shapely_iou([inner], [other])[0], abs=TOL)
    assert abs(got - shapely_iou(hull, [other])[0]) > 0.1


@settings(max_examples=40, deadline=None)
@given(unit_rows(12, max_rows=1), unit_rows(2, max_rows=1))
def test_iou_scores_any_corner_order_as_the_hull(u, inner):
    """All 24 orders of 4 points in convex position are one box; 3 points and one inside them
    make a concave quad in every order, scored as that polygon."""
    quad = convex_quads(u)[0]
    orders = np.array(list(itertools.permutations(range(4))))
    shuffled = quad[orders]
    assert np.abs(iou_pairs(shuffled, np.repeat(quad[None], 24, axis=0)) - 1).max() <= 1e-12
    # replace corner 3 by a point inside the triangle of the others: every order is a simple
    # concave quad, scored exactly as the polygon it is (shapely, the oracle, agrees)
    weights = np.array([inner[0, 0], inner[0, 1], 1.0]) + 0.05
    triangle_point = (weights / weights.sum()) @ quad[:3]
    with_inner = np.concatenate([quad[:3], triangle_point[None]])[orders]
    other = np.repeat(quad[None] + 0.3 * (quad[1] - quad[0]), 24, axis=0)
    assert np.abs(iou_pairs(with_inner, other) - shapely_iou(with_inner, other)).max() <= TOL
    assert np.abs(iou_pairs(with_inner, with_inner) - 1).max() <= 1e-12


def test_iou_empty_and_shapes():
    assert iou_pairs(np.zeros((0, 4, 2)), np.zeros((0, 4, 2))).shape == (0,)
    assert iou_pairs([], []).shape == (0,)
    flat = np.array(SQUARE, float).reshape(1, 8)
    assert iou_pairs(flat, flat).tolist() == [1.0]
    with pytest.raises(ValueError):
        iou_pairs([SQUARE], [SQUARE, SQUARE])
    with pytest.raises(ValueError):
        iou_pairs([[0, 0, 1]], [[0, 0, 1]])


def test_iou_chunks_agree(monkeypatch):
    rng = np.random.default_rng(7)
    a = np.array([rectangle(*rng.uniform(0, 100, 2), *rng.uniform(5, 40, 2), rng.uniform(0, 180)) for _ in range(23)])
    b = a + rng.normal(0, 5, (23, 1, 2))
    whole = iou_pairs(a, b)
    monkeypatch.setattr(iou_module, "_CHUNK", 5)
    assert np.array_equal(iou_pairs(a, b), whole)
    ia, ib, sparse = sparse_pairwise_iou(a, b)
    assert np.allclose(sparse, iou_pairs(a[ia], b[ib]), atol=1e-15)


def test_iou_from_several_threads_at_once():
    # Each thread clips in its own kept work arrays: results as from one thread.
    rng = np.random.default_rng(11)
    n = 3 * iou_module._CHUNK // 2
    centre = rng.uniform(0, 3840, (n, 2))
    a = rectangles(centre[:, 0], centre[:, 1], rng.uniform(5, 80, n), rng.uniform(5, 80, n), rng.uniform(0, 180, n))
    b = a + rng.normal(0, 6, (n, 1, 2))
    expected = iou_pairs(a, b)
    results = [None] * 4
    def work(slot):
        results[slot] = [iou_pairs(a[slot:], b[slot:]) for _ in range(3)]
    threads = [threading.Thread(target=work, args=(slot,)) for slot in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for slot, runs in enumerate(results):
        assert all(np.array_equal(run, expected[slot:]) for run in runs)
    assert np.abs(expected[:200] - shapely_iou(a[:200], b[:200])).max() <= TOL


# --------------------------------------------------------------------------- properties


@settings(max_examples=200, deadline=None)
@given(unit_rows(12))
def test_iou_rotated_rectangles_match_shapely(u):
    a, b = rectangle_pairs(u)
    got = check_against_shapely(a, b)
    # invariance under reversing the winding and changing the start corner
    assert np.abs(iou_pairs(a[:, ::-1], b) - got).max() <= TOL
    assert np.abs(iou_pairs(a, np.roll(b, 1, axis=1)) - got).max() <= TOL


@settings(max_examples=200, deadline=None)
@given(unit_rows(26))
def test_iou_convex_quads_match_shapely(u):
    check_against_shapely(*convex_quad_pairs(u))


@settings(max_examples=150, deadline=None)
@given(integer_rows)
def test_iou_integer_corners_match_shapely(v):
    check_against_shapely(integer_rectangles(v[:, :5]), integer_rectangles(v[:, 5:]))


@settings(max_examples=60, deadline=None)
@given(unit_rows(12), integer_rows, st.integers(0, 3))
def test_iou_of_a_box_with_itself_is_one(u, v, start):
    for a in (convex_quads(u), integer_rectangles(v[:, :5])):
        for b in (a, np.roll(a, start, axis=1), a[:, ::-1]):
            assert np.abs(iou_pairs(a, b) - 1.0).max() <= 1e-12


@settings(max_examples=60, deadline=None)
@given(unit_rows(12), st.integers(-3000, 3000), st.integers(-2000, 2000))
def test_iou_invariant_under_translation(u, dx, dy):
    a, b = rectangle_pairs(u)
    shift = np.array([dx, dy], float)
    assert np.abs(iou_pairs(a + shift, b + shift) - iou_pairs(a, b)).max() <= TOL


@settings(max_examples=50, deadline=None)
@given(unit_rows(12, max_rows=1), st.floats(1e-13, 1e-7), st.integers(0, 2**32 - 1))
def test_iou_nearly_identical_boxes(u, scale, seed):
    a = np.repeat(convex_quads(u), 3, axis=0)
    b = a + np.random.default_rng(seed).normal(0, scale, a.shape)
    b[1] = np.roll(b[1], 1, axis=0)
    b[2] = b[2][::-1]
    check_against_shapely(a, b)


# --------------------------------------------------------------------------- candidate pairs


def test_candidate_pairs_small_example():
    a = [SQUARE, box(10, 10, 12, 12), box(100, 100, 101, 101)]
    b = [box(11, 11, 13, 13), box(2, 0, 4, 2), box(1, 1, 3, 3), box(-5, -5, 50, 50)]
    ia, ib = candidate_pairs(a, b)
    assert ia.dtype == np.int64 and ib.dtype == np.int64
    assert list(zip(ia.tolist(), ib.tolist())) == [(0, 2), (0, 3), (1, 0), (1, 3)]  # touching (0, 1) left out


def test_candidate_pairs_empty():
    for a, b in (([], [SQUARE]), ([SQUARE], []), ([], [])):
        ia, ib = candidate_pairs(a, b)
        assert ia.shape == ib.shape == (0,)
        assert ia.dtype == np.int64
        ia, ib, iou = sparse_pairwise_iou(a, b)
        assert ia.shape == ib.shape == iou.shape == (0,)
        assert pairwise_iou(a, b).shape == (len(a), len(b))


def box_set(u: np.ndarray) -> np.ndarray:
    """A crowded set of boxes from rows of ``u`` (6 columns): integer axis-aligned boxes (some of
    zero width or height, many with touching bounds), small turned rectangles and a few long thin
    ones (another width class)."""
    kind = u[:, 0]
    x, y = np.floor(30 * u[:, 1]), np.floor(30 * u[:, 2])
    w, h = np.floor(12 * u[:, 3]), np.floor(12 * u[:, 4])
    axis_aligned = rectangles(x + w / 2, y + h / 2, w, h, np.zeros(len(u)))
    small = rectangles(40 * u[:, 1], 40 * u[:, 2], 0.1 + 15 * u[:, 3], 0.1 + 15 * u[:, 4], 180 * u[:, 5])
    long = rectangles(40 * u[:, 1], 40 * u[:, 2], 30 + 50 * u[:, 3], 0.1 + 3 * u[:, 4], 180 * u[:, 5])
    out = np.where((kind < 0.45)[:, None, None], axis_aligned, small)
    return np.where((kind > 0.85)[:, None, None], long, out).reshape(-1, 4, 2)


box_sets = arrays(np.float64, st.tuples(st.integers(0, 25), st.just(6)), elements=st.floats(0, 1)).map(box_set)


@settings(max_examples=100, deadline=None)
@given(box_sets, box_sets)
def test_candidate_pairs_equal_brute_force(a, b):
    ia, ib = candidate_pairs(a, b)
    ra, rb = brute_force_pairs(a, b)
    assert np.array_equal(ia, ra) and np.array_equal(ib, rb)  # same pairs, ordered by ia then ib


@settings(max_examples=100, deadline=None)
@given(box_sets, box_sets, st.integers(1, 4), st.integers(0, 2**32 - 1))
def test_candidate_pairs_by_group_equal_brute_force(a, b, groups, seed):
    # Groups (frames) of arbitrary integer labels: only same-group pairs, as if each group
    # were searched on its own.
    rng = np.random.default_rng(seed)
    a_group = rng.integers(0, groups, len(a)) * 7 - 5
    b_group = rng.integers(0, groups, len(b)) * 7 - 5
    ia, ib = candidate_pairs(a, b, a_group=a_group, b_group=b_group)
    ra, rb = brute_force_pairs(a, b)
    same = a_group[ra] == b_group[rb]
    assert np.array_equal(ia, ra[same]) and np.array_equal(ib, rb[same])


@settings(max_examples=100, deadline=None)
@given(box_sets, box_sets, st.booleans())
def test_candidate_pairs_without_bands_equal_brute_force(a, b, grouped):
    # The two-sided x-search alone (bands never taken): boxes of both sets that start at the
    # same x (many here: integer corners) must come out once, from one side's search only.
    ra, rb = brute_force_pairs(a, b)
    groups = (np.arange(len(a)) % 2, np.arange(len(b)) % 2) if grouped else (None, None)
    original = candidates_module._BAND_LIMIT
    candidates_module._BAND_LIMIT = np.inf
    try:
        ia, ib = candidate_pairs(a, b, *groups)
    finally:
        candidates_module._BAND_LIMIT = original
    same = groups[0][ra] == groups[1][rb] if grouped else np.ones(len(ra), dtype=bool)
    assert np.array_equal(ia, ra[same]) and np.array_equal(ib, rb[same])


@settings(max_examples=100, deadline=None)
@given(box_sets, box_sets, st.booleans(), st.integers(0, 2**32 - 1), st.sampled_from([3, 1, 0.5]))
def test_candidate_pairs_in_bands_equal_brute_force(a, b, grouped, seed, copies):
    # The search within y-bands (taken when many boxes share x-columns), with the bands at
    # their starting height (3 copies per box allowed) or widened (fewer), so pairs whose
    # bounds share several bands must still come out once.
    rng = np.random.default_rng(seed)
    groups = (rng.integers(-2, 2, len(a)), rng.integers(-2, 2, len(b))) if grouped else (None, None)
    ra, rb = brute_force_pairs(a, b)
    saved = candidates_module._BAND_LIMIT, candidates_module._BAND_COPIES
    candidates_module._BAND_LIMIT, candidates_module._BAND_COPIES = -1, copies
    try:
        ia, ib = candidate_pairs(a, b, *groups)
    finally:
        candidates_module._BAND_LIMIT, candidates_module._BAND_COPIES = saved
    same = groups[0][ra] == groups[1][rb] if grouped else np.ones(len(ra), dtype=bool)
    assert np.array_equal(ia, ra[same]) and np.array_equal(ib, rb[same])


def test_candidate_pairs_dense_frame_uses_bands_and_stays_exact(monkeypatch):
    # A crowded lot (rows of boxes sharing x-columns) exceeds the band limit: the banded search
    # must give exactly the brute-force pairs, also with non-finite boxes among them.
    rng = np.random.default_rng(5)
    col, row = np.meshgrid(np.arange(12), np.arange(40))
    centre_x = (col.reshape(-1) + 0.5) * 30 + rng.normal(0, 2, col.size)
    centre_y = (row.reshape(-1) + 0.5) * 25 + rng.normal(0, 2, col.size)
    a = rectangles(centre_x, centre_y, 28 + rng.uniform(0, 8, col.size), np.full(col.size, 20.0),
                   rng.uniform(-40, 40, col.size))
    b = rectangles(centre_x + 3, centre_y - 2, 26 + rng.uniform(0, 8, col.size), np.full(col.size, 21.0),
                   rng.uniform(-40, 40, col.size))
    a[7, 2, 0] = np.nan
    b[11, 0, 1] = np.nan  # (the brute force would pair an infinite bound; candidate_pairs never does)
    ra, rb = brute_force_pairs(a, b)
    banded, calls = candidates_module._banded, []
    monkeypatch.setattr(candidates_module, "_banded", lambda *args: calls.append(1) or banded(*args))
    ia, ib = candidate_pairs(a, b)
    assert calls == [1] and len(ra) > len(a)
    assert np.array_equal(ia, ra) and np.array_equal(ib, rb)
    assert not np.isin(7, ia) and not np.isin(11, ib)


@settings(max_examples=50, deadline=None)
@given(box_sets, box_sets, st.sampled_from([2**51 - 3, -(2**51), 2**52, 2**62]), st.integers(0, 2**32 - 1))
def test_candidate_pairs_with_huge_group_labels(a, b, offset, seed):
    # Labels near 2**51 make the search keys of neighbouring groups round into each other
    # (checked exactly afterwards); from 2**52 on they are renumbered first.
    rng = np.random.default_rng(seed)
    a_group = offset + rng.integers(0, 3, len(a))
    b_group = offset + rng.integers(0, 3, len(b))
    ia, ib = candidate_pairs(a, b, a_group=a_group, b_group=b_group)
    ra, rb = brute_force_pairs(a, b)
    same = a_group[ra] == b_group[rb]
    assert np.array_equal(ia, ra[same]) and np.array_equal(ib, rb[same])


@pytest.mark.parametrize("label", [0, 2**40, 2**51 - 1])
def test_candidate_pairs_one_ulp_apart(label):
    # Bounds one ulp from touching: keys of large groups round them together; still exact.
    below, above = np.nextafter(1000.0, 0), np.nextafter(1000.0, 2000)
    a = [box(0, 0, 1000, 10), box(1000, 0, 1010, 10)]
    b = [box(below, 0, 1500, 10), box(1000, 0, 1500, 10), box(-500, 0, above, 10), box(-500, 0, 1000, 10)]
    ia, ib = candidate_pairs(a, b, a_group=[label] * 2, b_group=[label] * 4)
    assert list(zip(ia.tolist(), ib.tolist())) == [(0, 0), (0, 2), (0, 3), (1, 0), (1, 1), (1, 2)]


def test_candidate_pairs_group_labels_of_any_kind():
    a = [SQUARE, SQUARE, box(1, 1, 3, 3)]
    b = [box(1, 0, 3, 2), SQUARE]
    for a_group, b_group in ((["x", "y", "x"], ["x", "z"]), ([2.5, 7.0, 2.5], [2.5, 1e300])):
        ia, ib = candidate_pairs(a, b, a_group=a_group, b_group=b_group)
        assert list(zip(ia.tolist(), ib.tolist())) == [(0, 0), (2, 0)]


def test_candidate_pairs_skip_non_finite_boxes():
    a = [SQUARE, box(0, 0, np.inf, 2), box(np.nan, 0, 2, 2), box(1, 1, 3, 3)]
    b = [box(1, 0, 3, 2), box(-np.inf, 0, 1, 1), SQUARE]
    ia, ib = candidate_pairs(a, b)
    assert list(zip(ia.tolist(), ib.tolist())) == [(0, 0), (0, 2), (3, 0), (3, 2)]
    ia, ib = candidate_pairs(a[1:3], b[1:2])
    assert ia.size == ib.size == 0


@pytest.mark.parametrize("grouped", [False, True])
def test_a_non_finite_box_of_b_leaves_the_other_pairs_alone(grouped):
    # Its NaN width once became the search reach of every box: no pair was found at all.
    a = [SQUARE, box(1, 1, 3, 3)]
    b = [box(1, 0, 3, 2), box(np.nan, 0, 2, 2), SQUARE, box(0, np.nan, 1, 1)]
    groups = dict(a_group=[0, 0], b_group=[0, 0, 0, 0]) if grouped else {}
    ia, ib = candidate_pairs(a, b, **groups)
    assert list(zip(ia.tolist(), ib.tolist())) == [(0, 0), (0, 2), (1, 0), (1, 2)]


@settings(max_examples=60, deadline=None)
@given(box_sets, box_sets, st.integers(0, 2**32 - 1))
def test_candidate_pairs_with_one_wide_box_per_group_equal_brute_force(a, b, seed):
    # Each group searches as far as its own widest box reaches: a very wide box in one group
    # must still find its pairs, and the other groups theirs.
    rng = np.random.default_rng(seed)
    b = np.concatenate([b, [box(-50, 0, 150, 1)]])
    a_group, b_group = rng.integers(0, 3, len(a)), rng.integers(0, 3, len(b))
    ia, ib = candidate_pairs(a, b, a_group=a_group, b_group=b_group)
    ra, rb = brute_force_pairs(a, b)
    same = a_group[ra] == b_group[rb]
    assert np.array_equal(ia, ra[same]) and np.array_equal(ib, rb[same])


def test_candidate_pairs_groups_go_together():
    with pytest.raises(ValueError, match="together"):
        candidate_pairs([SQUARE], [SQUARE], a_group=[0])
    with pytest.raises(ValueError, match="one group per box"):
        candidate_pairs([SQUARE], [SQUARE], a_group=[0, 1], b_group=[0])


@settings(max_examples=25, deadline=None)
@given(box_sets, box_sets)
def test_candidate_pairs_in_small_batches(a, b):
    ra, rb = brute_force_pairs(a, b)
    original = candidates_module._EXPAND_BUDGET
    candidates_module._EXPAND_BUDGET = 3
    try:
        ia, ib = candidate_pairs(a, b)
    finally:
        candidates_module._EXPAND_BUDGET = original
    assert np.array_equal(ia, ra) and np.array_equal(ib, rb)


def test_candidate_pairs_dense_frame():
    rng = np.random.default_rng(3)
    n = 1500
    centre = rng.uniform([0, 0], [3840, 2160], (n, 2))
    gt = np.array([rectangle(*c, *rng.uniform(20, 120, 2), rng.uniform(0, 180)) for c in centre])
    pred = gt + rng.normal(0, 4, (n, 1, 2))
    pred[::50] = rectangle(1920, 1080, 3000, 40, 0)  # a few very wide boxes: their own width class
    ia, ib = candidate_pairs(gt, pred)
    ra, rb = brute_force_pairs(gt, pred)
    assert np.array_equal(ia, ra) and np.array_equal(ib, rb)


# --------------------------------------------------------------------------- sparse and dense


@settings(max_examples=50, deadline=None)
@given(box_sets, box_sets)
def test_sparse_and_dense_iou_match_shapely(a, b):
    ia, ib, iou = sparse_pairwise_iou(a, b)
    ra, rb = brute_force_pairs(a, b)
    assert np.array_equal(ia, ra) and np.array_equal(ib, rb)  # every candidate kept, even at IoU 0
    dense = pairwise_iou(a, b)
    assert dense.shape == (len(a), len(b))
    expected = np.zeros((len(a), len(b)))
    if len(a) and len(b):
        rows, cols = np.meshgrid(np.arange(len(a)), np.arange(len(b)), indexing="ij")
        expected = shapely_iou(a[rows.ravel()], b[cols.ravel()]).reshape(len(a), len(b))
    assert np.abs(dense - expected).max(initial=0) <= TOL
    assert np.array_equal(dense[ia, ib], iou)
    outside = np.ones_like(dense, dtype=bool)
    outside[ia, ib] = False
    assert (dense[outside] == 0).all()


# --------------------------------------------------------------------------- single pair


def test_calculate_obb_iou_inputs():
    flat = [0, 0, 2, 0, 2, 2, 0, 2]
    assert calculate_obb_iou(flat, SQUARE) == 1.0
    assert calculate_obb_iou(np.array(SQUARE), box(1, 0, 3, 2)) == pytest.approx(1 / 3, abs=1e-15)
    assert isinstance(calculate_obb_iou(flat, flat), float)
    with pytest.raises(ValueError):
        calculate_obb_iou([0, 0, 2, 0, 2, 2], flat)
    with pytest.raises(ValueError):
        calculate_obb_iou([SQUARE], flat)


# --------------------------------------------------------------------------- clipping internals


def clip_once(polygon, direction):
    """Run one clip step on a single polygon; return the clipped vertices in the input frame."""
    polygon = np.asarray(polygon, float)
    wrapped = np.concatenate([polygon[-1:], polygon, polygon[:1]])
    ex, ey = np.array([direction[0]], float), np.array([direction[1]], float)
    x, y = np.empty((len(polygon) + 3, 1)), np.empty((len(polygon) + 3, 1))
    with np.errstate(all="ignore"):
        iou_module._clip(wrapped[:, :1], wrapped[:, 1:], ex, ey, x, y, iou_module._Scratch(1))
    return np.stack([x[1:-1, 0] + ex[0], y[1:-1, 0] + ey[0]], axis=1)


def half_plane_area(polygon, direction):
    """shapely area of the polygon's part left of the line through the origin along ``direction``."""
    d = np.asarray(direction, float) / np.hypot(*direction)
    n = np.array([-d[1], d[0]])
    big = 1e4
    half = shapely.Polygon([-big * d, big * d, big * d + big * n, -big * d + big * n])
    return shapely.Polygon(polygon).intersection(half).area


@pytest.mark.parametrize(
    "polygon",
    [
        # two outside runs (only possible for a non-convex input): each run is clipped on its own
        [(0, 1), (1, -1), (2, -1), (3, 1), (4, 1), (5, -1), (6, -1), (7, 1), (7, 3), (0, 3)],
        # a deep lone vertex and one a rounding hair outside: the hair is projected
        [(0, 1), (1, -1), (2, 1), (3, 1), (4, -1e-15), (5, 1), (5, 3), (0, 3)],
        # convex: one run, exit point repeated over it
        [(0, -1), (2, -3), (4, -1), (4, 2), (0, 2)],
        # a single outside vertex: the entry point is inserted
        [(0, 1), (2, -2), (4, 1), (2, 3)],
    ],
)
def test_clip_step_area(polygon):
    clipped = clip_once(polygon, (1, 0))
    assert len(clipped) == len(polygon) + 1
    x, y = clipped.T
    area = 0.5 * np.sum(x * np.roll(y, -1) - np.roll(x, -1) * y)
    assert area == pytest.approx(half_plane_area(polygon, (1, 0)), abs=1e-12)
    assert (y >= -1e-12).all()


def random_concave_quads(rng, n: int) -> np.ndarray:
    """Arrowheads: a triangle and a fourth corner inside it, listed in a random cyclic place."""
    triangle = rng.uniform(-50, 50, (n, 3, 2))
    weights = rng.dirichlet([1, 1, 1], n)
    inner = np.einsum("nk,nkd->nd", weights, triangle)
    quads = np.concatenate([triangle, inner[:, None]], axis=1)
    return np.stack([np.roll(q, int(r), axis=0) for q, r in zip(quads, rng.integers(0, 4, n))])


def test_concave_pairs_agree_with_shapely_and_convex_pairs_keep_the_kernel():
    rng = np.random.default_rng(13)
    concave = random_concave_quads(rng, 300)
    assert is_concave(concave).all()
    others = np.concatenate([random_concave_quads(rng, 150), convex_quads(rng.uniform(0, 1, (150, 12))) * 60 - 30])
    got = iou_pairs(concave, others)
    assert np.abs(got - shapely_iou(concave, others)).max() <= TOL
    assert (got > 0).sum() > 50  # many pairs overlap: the comparison is not of zeros
    ia, ib, sparse = sparse_pairwise_iou(concave[:40], others[:40])
    assert np.abs(sparse - shapely_iou(concave[:40][ia], others[:40][ib])).max() <= TOL


@settings(max_examples=50, deadline=None)
@given(box_sets, box_sets, st.integers(0, 2**32 - 1))
def test_sparse_iou_by_group_is_iou_pairs_of_the_grouped_candidates_bit_for_bit(a, b, seed):
    # The detection metrics pair each frame's boxes this way: each box prepared once, then
    # gathered per pair. The values must be those of iou_pairs on the gathered corners, to the bit.
    rng = np.random.default_rng(seed)
    a_group, b_group = rng.integers(0, 3, len(a)), rng.integers(0, 3, len(b))
    ia, ib, iou = sparse_pairwise_iou(a, b, a_group=a_group, b_group=b_group)
    ra, rb = candidate_pairs(a, b, a_group=a_group, b_group=b_group)
    assert np.array_equal(ia, ra) and np.array_equal(ib, rb)
    assert iou.tobytes() == iou_pairs(np.asarray(a)[ra], np.asarray(b)[rb]).tobytes()


def test_a_rectangle_inside_another_with_collinear_edges_where_geos_loses_the_overlap():
    # Found by hypothesis: two long thin rectangles with the same centre, angle and breadth, one
    # longer, so the shorter one's long edges lie on the longer one's. GEOS returns a MULTIPOINT
    # for their intersection (area 0; GEOS 3.14.1, shapely 2.2.0) where the overlap is the shorter
    # rectangle itself, so the oracle settles such pairs exactly.
    v = 0.8598052005589338
    outer, inner = box_set(np.array([[v, v, v, 0.99999, v, v]])), box_set(np.array([[v] * 6]))
    exact = exact_convex_iou(outer[0], inner[0])
    def area(r):  # a rectangle's: the product of two adjacent sides
        return math.dist(r[0], r[1]) * math.dist(r[1], r[2])

    assert exact == pytest.approx(area(inner[0]) / area(outer[0]), rel=1e-12)
    assert abs(pairwise_iou(outer, inner)[0, 0] - exact) <= TOL
    assert abs(shapely_iou(outer, inner)[0] - exact) <= TOL  # the oracle settles it exactly
