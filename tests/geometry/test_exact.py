"""Exact ties: an IoU exactly on a decision bound is decided in rational arithmetic (issue 13)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hbb2obb.geometry import iou_pairs
from hbb2obb.geometry.exact import TIE_WINDOW, exact_iou, exact_iou_ratio, near_bounds, settle_ties
from hbb2obb.scoring.metric_dict import evaluate_obb

from conftest import shapely_iou

# Integer corners, IoU exactly 1/2 (found by tools/parity_reference.py): shapely, hence the
# reference tool, gives 0.49999999999999917 and so misses the 0.50 rung.
GT = np.array([[120.0, 350.0], [120.0, 353.0], [118.0, 353.0], [118.0, 350.0]])
PRED = np.array([[119.0, 349.0], [120.0, 352.0], [118.0, 353.0], [117.0, 350.0]])


def test_exact_iou_is_a_fraction():
    assert exact_iou(GT[::-1], PRED[::-1]) == Fraction(1, 2)
    assert shapely_iou(GT, PRED) != 0.5  # the float of an exact method, off in the last bits


def test_settle_ties_replaces_only_pairs_near_a_bound():
    a, b = np.stack([GT, GT]), np.stack([PRED, GT + [0.5, 0]])
    floats = np.array([0.49999999999999994, 0.7])
    settled = settle_ties(floats, a, b, [0.1, 0.5])
    assert settled.tolist() == [0.5, 0.7]
    assert settle_ties(np.array([0.3]), a[:1], b[:1], [0.5]).tolist() == [0.3]  # far from a bound: untouched


@pytest.mark.parametrize("threshold, matches", [(0.5, 0), (0.1, 1)])
def test_an_exact_tie_decides_the_match_and_the_rung(write_labels, threshold, matches):
    line = "0 " + " ".join(f"{v:.0f}" for v in GT.reshape(-1))
    pred = "0 " + " ".join(f"{v:.0f}" for v in PRED.reshape(-1))
    root = write_labels({"gt/a.txt": line + "\n", "pred/a.txt": pred + "\n"})
    metrics = evaluate_obb(root / "gt", root / "pred", iou_threshold=threshold)
    assert metrics["total_matches"] == matches  # IoU 1/2 is not > 0.5
    if matches:
        assert metrics["avg_iou"] == 0.5 and metrics["iou_fractions"]["0.50"] == 1.0  # and it is >= 0.50


def test_random_ties_settle_to_the_exact_value():
    rng = np.random.default_rng(5)
    a = np.round(rng.uniform(0, 6, (400, 4, 2)))
    a[:, 1:3, 0] = a[:, 0:1, 0] + 3  # integer axis-aligned boxes: many exact rational IoUs
    a[:, 2:4, 1] = a[:, 0:1, 1] + 2
    a[:, 0, 1] = a[:, 1, 1]
    a[:, 3, 0] = a[:, 0, 0]
    b = a[rng.permutation(400)]
    floats = iou_pairs(a, b)
    settled = settle_ties(floats, a, b, [0.5, 0.2, 1 / 3])
    near_half = np.flatnonzero(np.abs(settled - 0.5) < 1e-9)
    assert near_half.size > 5  # the comparison below is not empty
    for i in near_half.tolist():
        assert settled[i] == float(exact_iou(a[i], b[i])) == 0.5
    assert np.abs(floats - settled).max() < 1e-12


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from([0.1, 0.5, 0.5 + 1e-9, 0.5 - 2e-9, 0.95, 1.0, 0.0, -0.0, float("nan")]) |
                st.floats(-0.5, 1.5), min_size=0, max_size=30),
       st.lists(st.sampled_from([0.1, 0.5, 0.75, 0.95, 1.0, 0.0]) | st.floats(0, 1), min_size=0, max_size=6))
def test_near_bounds_is_every_bound_tested_in_turn(values, bounds):
    values = np.array(values, dtype=np.float64)
    want = np.zeros(values.shape, dtype=bool)
    for bound in bounds:
        want |= np.abs(values - bound) <= TIE_WINDOW
    assert near_bounds(values, bounds).tolist() == want.tolist()


def test_settle_ties_with_rows_gathers_the_pairs_itself():
    rng = np.random.default_rng(3)
    a = np.array([[[0.0, 0.0], [10.0, 0.0], [10.0, 1.0], [0.0, 1.0]], [[0.0, 0.0], [2.0, 0.0], [2.0, 2.0], [0.0, 2.0]]])
    b = np.array([[[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]], [[1.0, 0.0], [3.0, 0.0], [3.0, 2.0], [1.0, 2.0]]])
    a_rows, b_rows = rng.integers(0, 2, 40), rng.integers(0, 2, 40)
    floats = iou_pairs(a[a_rows], b[b_rows])
    assert settle_ties(floats, a, b, [0.1, 1 / 3], a_rows, b_rows).tolist() == \
        settle_ties(floats, a[a_rows], b[b_rows], [0.1, 1 / 3]).tolist()


def _fraction_iou(a: np.ndarray, b: np.ndarray):
    """The rational-number algorithm exact_iou used before it went to integers: the test's oracle."""

    def area2(points):
        return sum(x0 * y1 - x1 * y0 for (x0, y0), (x1, y1) in zip(points, points[1:] + points[:1]))

    def clip(subject, start, end):
        (ax, ay), (bx, by) = start, end
        out = []
        for p, q in zip(subject, subject[1:] + subject[:1]):
            sp = (bx - ax) * (p[1] - ay) - (by - ay) * (p[0] - ax)
            sq = (bx - ax) * (q[1] - ay) - (by - ay) * (q[0] - ax)
            if sp >= 0:
                out.append(p)
            if sp * sq < 0:
                t = sp / (sp - sq)
                out.append((p[0] + t * (q[0] - p[0]), p[1] + t * (q[1] - p[1])))
        return out

    pa = [(Fraction(float(x)), Fraction(float(y))) for x, y in a]
    pb = [(Fraction(float(x)), Fraction(float(y))) for x, y in b]
    pa, pb = (p if area2(p) >= 0 else p[::-1] for p in (pa, pb))
    inter = pa
    for start, end in zip(pb, pb[1:] + pb[:1]):
        if inter and start != end:
            inter = clip(inter, start, end)
    union = abs(area2(pa)) + abs(area2(pb)) - (abs(area2(inter)) if len(inter) >= 3 else 0)
    return (abs(area2(inter)) if len(inter) >= 3 else 0) / union if union > 0 else None


# Rotated rectangles at 4K coordinates with arbitrary float corners (not integers, not short
# decimals): the integer arithmetic must give the very fraction the rational one gives.
_coordinate = st.floats(min_value=-50.0, max_value=4000.0, allow_nan=False, allow_infinity=False)
_rectangle = st.tuples(_coordinate, _coordinate, st.floats(0.01, 300.0), st.floats(0.01, 300.0),
                       st.floats(-np.pi, np.pi))


def _corners(cx, cy, length, breadth, angle):
    c, s = np.cos(angle), np.sin(angle)
    half = np.array([[length, breadth], [-length, breadth], [-length, -breadth], [length, -breadth]]) / 2
    return np.column_stack([cx + half[:, 0] * c - half[:, 1] * s, cy + half[:, 0] * s + half[:, 1] * c])


@settings(max_examples=150, deadline=None)
@given(_rectangle, st.floats(-20.0, 20.0), st.floats(-20.0, 20.0), _rectangle)
def test_the_integer_arithmetic_gives_the_rational_algorithm_s_fraction(first, dx, dy, other):
    a = _corners(*first)
    near = _corners(first[0] + dx, first[1] + dy, *other[2:])  # overlapping more often than not
    for b in (near, _corners(*other), a[::-1].copy(), a + 0.5):
        assert exact_iou(a, b) == _fraction_iou(a, b)


@pytest.mark.parametrize("a, b, expected", [
    (GT, PRED, Fraction(1, 2)),
    (GT, GT + [10.0, 0.0], Fraction(0)),  # apart
    (GT, GT, Fraction(1)),
    (GT * 2.0 ** -40, PRED * 2.0 ** -40, Fraction(1, 2)),  # scaled far below 1: the same IoU
    (GT * 2.0 ** 40, PRED * 2.0 ** 40, Fraction(1, 2)),  # and far above
    (np.zeros((4, 2)), np.zeros((4, 2)), None),  # no union
])
def test_exact_iou_on_a_table_of_cases(a, b, expected):
    assert exact_iou(a, b) == expected
    assert exact_iou_ratio(a, b) == (None if expected is None else (expected.numerator, expected.denominator))
