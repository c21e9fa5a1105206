"""Exact ties: an IoU exactly on a decision bound is decided in rational arithmetic (issue 13)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import shapely_iou
from hbb2obb.geometry import iou_pairs
from hbb2obb.geometry.exact import TIE_WINDOW, exact_iou, near_bounds, settle_ties
from hbb2obb.scoring.evaluate import evaluate_obb

# Integer corners, IoU exactly 1/2 (found by scripts/parity_reference.py): shapely, hence the
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
