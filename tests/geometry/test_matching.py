"""Matching rules of docs/metrics.md §2 on hand-built candidate tables."""

import numpy as np
import pytest

from hbb2obb.geometry import matching
from hbb2obb.geometry.matching import match_pairs


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


@pytest.mark.parametrize(
    "iou, threshold, matched", [(0.1, 0.1, False), (0.1000001, 0.1, True), (0.5, 0.5, False), (0.0, 0.0, False)]
)
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


def brute_force(g, p, v, n_gt, threshold, one_to_one):
    """Matching by plain Python over the pair list: (matched, pred, iou) per ground-truth box, and best IoU."""
    pairs = list(zip(g.tolist(), p.tolist(), v.tolist()))
    best = {}
    for gi, pi, vi in pairs:  # highest IoU, then lowest prediction index
        if gi not in best or (vi, -pi) > (best[gi][1], -best[gi][0]):
            best[gi] = (pi, vi)
    best_iou = [best[i][1] if i in best else 0.0 for i in range(n_gt)]
    if not one_to_one:
        return [
            (best[i][0], best[i][1]) if i in best and best[i][1] > threshold else None for i in range(n_gt)
        ], best_iou
    out, taken = [None] * n_gt, set()
    for gi, pi, vi in sorted((t for t in pairs if t[2] > threshold), key=lambda t: (-t[2], t[0], t[1])):
        if out[gi] is None and pi not in taken:
            out[gi] = (pi, vi)
            taken.add(pi)
    return out, best_iou


def random_candidates(seed, n_gt, n_pred, per_gt):
    """Unique (gt, pred) pairs in shuffled order, IoUs on a coarse grid so that ties are common."""
    rng = np.random.default_rng(seed)
    g = np.repeat(np.arange(n_gt), rng.integers(0, per_gt + 1, n_gt))
    p = rng.integers(0, n_pred, g.size)
    keep = np.unique(g * n_pred + p, return_index=True)[1]
    g, p = g[keep], p[keep]
    v = rng.integers(0, 8, g.size) / 8
    order = rng.permutation(g.size)
    return g[order], p[order], v[order]


@pytest.mark.parametrize("one_to_one", [False, True])
@pytest.mark.parametrize("seed, n_gt, n_pred, per_gt", [
    (0, 50, 40, 1),     # at most one candidate per box: no box goes through the sort
    (1, 200, 60, 3),    # a mix of single, contested and candidate-free boxes
    (2, 30, 5, 5),      # crowded: many ties
    (3, 1, 1, 0),       # no candidate at all
])
def test_matching_equals_brute_force(seed, n_gt, n_pred, per_gt, one_to_one):
    g, p, v = random_candidates(seed, n_gt, n_pred, per_gt)
    m = match_pairs(g, p, v, n_gt, n_pred, 0.2, one_to_one)
    expected, best_iou = brute_force(g, p, v, n_gt, 0.2, one_to_one)
    assert m.best_iou.tolist() == best_iou
    assert m.matched.tolist() == [e is not None for e in expected]
    assert [(int(m.pred_index[i]), float(m.iou[i])) for i in range(n_gt) if m.matched[i]] == [e for e in expected if e]
    assert np.isnan(m.iou[~m.matched]).all()
    assert m.pred_matched.tolist() == [j in {e[0] for e in expected if e} for j in range(n_pred)]
    if per_gt > 1:
        assert (np.bincount(g, minlength=n_gt) > 1).any() and m.matched.any() and not m.matched.all()


@pytest.mark.parametrize("least_share", [None, 10**9])
def test_one_to_one_on_a_long_chain_of_conflicts_equals_brute_force(monkeypatch, least_share):
    # Box i competes with box i + 1 for prediction i + 1, the later pair always a hair higher:
    # each round of the vectorized greedy settles one link, so the rest goes through the plain
    # loop, at once (a round taking so few pairs) or, with that switch off, after the chain
    # outlasts the rounds; both parts must give the greedy's choice.
    if least_share is not None:
        monkeypatch.setattr(matching, "_LEAST_SHARE", least_share)
    n = 300
    g = np.concatenate([np.arange(n), np.arange(n)])
    p = np.concatenate([np.arange(n), np.arange(1, n + 1)])
    v = np.concatenate([0.3 + 0.001 * np.arange(n), 0.3005 + 0.001 * np.arange(n)])
    m = match_pairs(g, p, v, n, n + 1, 0.2, one_to_one=True)
    expected, _ = brute_force(g, p, v, n, 0.2, True)
    assert [(int(m.pred_index[i]), float(m.iou[i])) for i in range(n) if m.matched[i]] == [e for e in expected if e]
    assert m.matched.tolist() == [e is not None for e in expected]


@pytest.mark.parametrize("seed", range(4))
def test_one_to_one_without_the_best_pairs_makes_the_same_matches(seed):
    rng = np.random.default_rng(seed)
    gt, pred = rng.integers(0, 40, 300), rng.integers(0, 50, 300)
    iou = rng.choice([0.3, 0.5, 0.7, 0.9], 300)  # ties, so the order rules matter
    full = match_pairs(gt, pred, iou, 40, 50, 0.4, one_to_one=True)
    lean = match_pairs(gt, pred, iou, 40, 50, 0.4, one_to_one=True, with_best=False)
    assert lean.best_iou is None and full.best_iou is not None
    for name in ("matched", "iou", "pred_matched"):
        np.testing.assert_array_equal(getattr(lean, name), getattr(full, name))
    np.testing.assert_array_equal(lean.pred_index[lean.matched], full.pred_index[full.matched])
    assert match_pairs(gt, pred, iou, 40, 50, 0.4, with_best=False).best_iou is not None  # not one-to-one: kept


@pytest.mark.parametrize("least_share", [None, 10**9])
def test_one_to_one_among_identical_boxes_equals_brute_force(monkeypatch, least_share):
    # 60 boxes and 60 predictions all at one IoU (a box written 60 times on each side): every
    # pair ties, each vectorized round would settle one; the greedy pairs them in index order
    if least_share is not None:
        monkeypatch.setattr(matching, "_LEAST_SHARE", least_share)
    n = 60
    g, p = np.repeat(np.arange(n), n), np.tile(np.arange(n), n)
    v = np.full(g.size, 0.9)
    order = np.random.default_rng(0).permutation(g.size)
    m = match_pairs(g[order], p[order], v[order], n, n, 0.5, one_to_one=True)
    expected, _ = brute_force(g, p, v, n, 0.5, True)
    assert [(int(m.pred_index[i]), float(m.iou[i])) for i in range(n)] == expected == [(i, 0.9) for i in range(n)]
