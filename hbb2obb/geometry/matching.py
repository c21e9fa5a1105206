"""Matching ground truth to predictions from scored candidate pairs (docs/metrics.md §2).

Works on flat arrays of candidate pairs so that many frames are matched in one call: the
caller gives every pair a global ground-truth and prediction index, and pairs never cross
frames, so matching the whole batch equals matching each frame on its own.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Matches:
    """The outcome of matching ``n_gt`` ground-truth boxes against ``n_pred`` predictions.

    Attributes
    ----------
    matched : (n_gt,) bool
        Whether each ground-truth box has a match.
    pred_index : (n_gt,) int64
        Index of the matched prediction; meaningful only where ``matched``.
    best_iou : (n_gt,) float64 or None
        IoU with the best eligible prediction (0 where there is none), matched or not; ``None``
        when the caller asked for none (``match_pairs(..., with_best=False)``).
    iou : (n_gt,) float64
        IoU of the match; NaN where unmatched.
    pred_matched : (n_pred,) bool
        Whether each prediction was chosen by at least one ground-truth box.
    """

    matched: np.ndarray
    pred_index: np.ndarray
    best_iou: np.ndarray
    iou: np.ndarray
    pred_matched: np.ndarray


def match_pairs(
    gt_index: np.ndarray,
    pred_index: np.ndarray,
    iou: np.ndarray,
    n_gt: int,
    n_pred: int,
    iou_threshold: float,
    one_to_one: bool = False,
    with_best: bool = True,
) -> Matches:
    """Match ground-truth boxes to predictions given the IoU of each eligible pair.

    Parameters
    ----------
    gt_index, pred_index : (k,) int
        The candidate pairs (already restricted to eligible classes). Pairs absent here have
        IoU 0 and can never match a non-negative threshold.
    iou : (k,) float
        IoU of each pair.
    n_gt, n_pred : int
        Number of ground-truth boxes and predictions the indices refer to.
    iou_threshold : float
        A pair matches only when its IoU is strictly greater.
    one_to_one : bool
        ``False`` (the default, reference behaviour): every ground-truth box independently takes
        its highest-IoU prediction, the lowest prediction index winning a tie. ``True``: greedy
        exclusive assignment, highest IoU first (ties by ground-truth then prediction index).
    with_best : bool
        ``False``: leave ``best_iou`` out (``None``), for callers of a one-to-one matching that
        read only the matches; its search for each box's best pair is then skipped. Without
        ``one_to_one`` the best pairs are the matches and are always found.

    Examples
    --------
    >>> m = match_pairs(np.array([0, 1]), np.array([0, 0]), np.array([0.8, 0.6]), 2, 1, 0.1)
    >>> m.matched.tolist(), m.pred_matched.tolist()
    ([True, True], [True])
    >>> match_pairs(np.array([0, 1]), np.array([0, 0]), np.array([0.8, 0.6]), 2, 1, 0.1, True).matched.tolist()
    [True, False]
    """
    gt_index = np.asarray(gt_index, dtype=np.int64)
    pred_index = np.asarray(pred_index, dtype=np.int64)
    iou = np.asarray(iou, dtype=np.float64)
    chosen_pred = np.zeros(n_gt, dtype=np.int64)
    best_iou = np.zeros(n_gt, dtype=np.float64)
    matched = np.zeros(n_gt, dtype=bool)
    match_iou = np.full(n_gt, np.nan)
    if iou.size:
        if with_best or not one_to_one:
            best = best_pair_rows(gt_index, pred_index, iou, n_gt)
            best_iou[gt_index[best]] = iou[best]
            chosen_pred[gt_index[best]] = pred_index[best]
        if one_to_one:
            # The exclusive match may be a ground-truth box's second choice: it brings its own IoU.
            matched, chosen_pred, match_iou = _greedy_exclusive(gt_index, pred_index, iou, n_gt, iou_threshold)
        else:
            matched = best_iou > iou_threshold
            match_iou[matched] = best_iou[matched]
    pred_matched = np.zeros(n_pred, dtype=bool)
    pred_matched[chosen_pred[matched]] = True
    return Matches(matched, chosen_pred, best_iou if with_best or not one_to_one else None, match_iou, pred_matched)


def best_pair_rows(gt_index, pred_index, iou, n_gt) -> np.ndarray:
    """The row of each ground-truth box's best pair: highest IoU, then lowest prediction index.

    The roles are symmetric: with the detections as ``gt_index`` and the boxes as
    ``pred_index``, each detection's best box (the DOTA rule's).

    Each box's highest IoU is a maximum over its pairs (``fmax``: a NaN is never the best), and
    among its pairs at that IoU the lowest prediction index is a minimum: two passes over the
    pairs, no sort. Rows come in pair order.
    """
    best_iou = np.full(n_gt, -np.inf)
    np.fmax.at(best_iou, gt_index, iou)
    top = np.flatnonzero(iou == best_iou[gt_index])
    first_pred = np.full(n_gt, np.iinfo(np.int64).max)
    np.minimum.at(first_pred, gt_index[top], pred_index[top])
    return top[pred_index[top] == first_pred[gt_index[top]]]


def _greedy_exclusive(gt_index, pred_index, iou, n_gt, iou_threshold):
    above = iou > iou_threshold
    g, p, v = gt_index[above], pred_index[above], iou[above]
    matched = np.zeros(n_gt, dtype=bool)
    chosen = np.zeros(n_gt, dtype=np.int64)
    chosen_iou = np.full(n_gt, np.nan)
    if g.size:
        # A pair whose two boxes have no other pair above the threshold is matched whenever the
        # loop would reach it, and touches no other pair: set all such pairs at once.
        n_pred = int(p.max()) + 1
        alone = (np.bincount(g, minlength=n_gt)[g] == 1) & (np.bincount(p, minlength=n_pred)[p] == 1)
        alone_gt = g[alone]
        matched[alone_gt] = True
        chosen[alone_gt] = p[alone]
        chosen_iou[alone_gt] = v[alone]
        contested = np.flatnonzero(~alone)  # few: an index is quicker than a mask three times
        g, p, v = g[contested], p[contested], v[contested]
    order = np.lexsort((p, g, -v))
    g, p, v = g[order], p[order], v[order]
    # The sequential greedy (pairs in this order, each taken when both its boxes are free) takes
    # every pair that comes first among the pairs of its ground-truth box and among those of
    # its prediction: nothing before it touches either box. Taking all such pairs at once and
    # dropping the pairs that share a box with them (the greedy would skip those) leaves the
    # same problem on fewer pairs, so rounds of this give the greedy's matching exactly.
    rounds = 0
    while g.size:
        rounds += 1
        if rounds > _VECTOR_ROUNDS:  # a long chain of conflicts: the plain loop is quicker there
            _greedy_loop(g, p, v, matched, chosen, chosen_iou)
            break
        first_of_gt = _first_rows(g, n_gt)
        first_of_pred = _first_rows(p, int(p.max()) + 1)
        rows = np.arange(g.size)
        take = (first_of_gt[g] == rows) & (first_of_pred[p] == rows)
        gi, pi = g[take], p[take]
        if gi.size * _LEAST_SHARE < g.size:  # a round takes few pairs (ties, a box with many twins): so would the next
            _greedy_loop(g, p, v, matched, chosen, chosen_iou)
            break
        matched[gi] = True
        chosen[gi] = pi
        chosen_iou[gi] = v[take]
        free_pred = np.ones(int(p.max()) + 1, dtype=bool)
        free_pred[pi] = False
        left = ~matched[g] & free_pred[p]
        g, p, v = g[left], p[left], v[left]
    return matched, chosen, chosen_iou


_VECTOR_ROUNDS = 32
_LEAST_SHARE = 64  # a round taking under 1/64 of the pairs left hands them to the loop (64 rounds cost more)


def _first_rows(keys: np.ndarray, size: int) -> np.ndarray:
    """For each key value, the first row holding it (``keys.size`` where none)."""
    first = np.full(size, keys.size, dtype=np.int64)
    np.minimum.at(first, keys, np.arange(keys.size))
    return first


def _greedy_loop(g, p, v, matched, chosen, chosen_iou) -> None:
    """The greedy itself, pair after pair in the given order (free boxes only), into the arrays."""
    taken: set[int] = set()
    # Sequential by nature (each pick removes candidates)
    for gi, pi, vi in zip(g.tolist(), p.tolist(), v.tolist()):
        if matched[gi] or pi in taken:
            continue
        matched[gi] = True
        chosen[gi] = pi
        chosen_iou[gi] = vi
        taken.add(pi)
