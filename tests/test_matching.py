"""Matching rules of SPEC 2 on hand-built candidate tables."""

import numpy as np
import pytest

from hbb2obb.matching import match_pairs


def run(pairs, n_gt, n_pred, threshold=0.1, one_to_one=False):
    g = np.array([p[0] for p in pairs], dtype=np.int64)
    p = np.array([p[1] for p in pairs], dtype=np.int64)
    v = np.array([p[2] for p in pairs], dtype=np.float64)
    return match_pairs(g, p, v, n_gt, n_pred, threshold, one_to_one)


def test_no_pairs_means_nothing_matches():
    m = run([], 3, 2)
    assert m.matched.tolist() == [False, False, False]
    assert m.pred_matched.tolist() == [False, False]
    assert np.isnan(m.iou).all()


def test_empty_sets():
    m = run([], 0, 0)
    assert m.matched.shape == (0,) and m.pred_matched.shape == (0,)


def test_best_iou_wins_and_first_wins_a_tie():
    m = run([(0, 0, 0.5), (0, 1, 0.7), (0, 2, 0.7)], 1, 3)
    assert m.pred_index[0] == 1
    assert m.iou[0] == 0.7
    assert m.pred_matched.tolist() == [False, True, False]


def test_tie_is_won_by_lowest_index_whatever_the_pair_order():
    m = run([(0, 2, 0.7), (0, 1, 0.7)], 1, 3)
    assert m.pred_index[0] == 1


@pytest.mark.parametrize("iou, threshold, matched", [(0.1, 0.1, False), (0.1000001, 0.1, True), (0.5, 0.5, False), (0.0, 0.0, False)])
def test_threshold_is_strict(iou, threshold, matched):
    assert run([(0, 0, iou)], 1, 1, threshold).matched[0] == matched


def test_default_matching_is_not_exclusive():
    m = run([(0, 0, 0.9), (1, 0, 0.6), (1, 1, 0.3)], 2, 2)
    assert m.pred_index.tolist() == [0, 0]
    assert m.matched.tolist() == [True, True]
    assert m.pred_matched.tolist() == [True, False]


def test_one_to_one_gives_the_second_choice():
    m = run([(0, 0, 0.9), (1, 0, 0.6), (1, 1, 0.3)], 2, 2, one_to_one=True)
    assert m.matched.tolist() == [True, True]
    assert m.pred_index.tolist() == [0, 1]
    assert m.iou.tolist() == [0.9, 0.3]
    assert m.pred_matched.tolist() == [True, True]


def test_one_to_one_leaves_a_box_unmatched_when_its_only_candidate_is_taken():
    m = run([(0, 0, 0.9), (1, 0, 0.6)], 2, 1, one_to_one=True)
    assert m.matched.tolist() == [True, False]
    assert m.best_iou.tolist() == [0.9, 0.6]
