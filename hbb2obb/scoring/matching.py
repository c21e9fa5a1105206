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
    best_iou : (n_gt,) float64
        IoU with the best eligible prediction (0 where there is none), matched or not.
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
        best = _best_pair_rows(gt_index, pred_index, iou, n_gt)
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
    return Matches(matched, chosen_pred, best_iou, match_iou, pred_matched)


def _best_pair_rows(gt_index, pred_index, iou, n_gt) -> np.ndarray:
    """The row of each ground-truth box's best pair: highest IoU, then lowest prediction index.

    That is the first row per box after sorting by (gt, -iou, pred). Most boxes have a single
    candidate, which is its own best; only boxes with several go through the sort.
    """
    several = np.bincount(gt_index, minlength=n_gt)[gt_index] > 1
    if not several.any():
        return np.arange(gt_index.size)
    contested = np.flatnonzero(several)
    order = contested[np.lexsort((pred_index[contested], -iou[contested], gt_index[contested]))]
    first = np.ones(order.size, dtype=bool)
    first[1:] = gt_index[order[1:]] != gt_index[order[:-1]]
    return np.concatenate([np.flatnonzero(~several), order[first]])


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
        matched[g[alone]] = True
        chosen[g[alone]] = p[alone]
        chosen_iou[g[alone]] = v[alone]
        g, p, v = g[~alone], p[~alone], v[~alone]
    order = np.lexsort((p, g, -v))
    taken: set[int] = set()
    # Sequential by nature (each pick removes candidates); only pairs above the threshold get here.
    for gi, pi, vi in zip(g[order].tolist(), p[order].tolist(), v[order].tolist()):
        if matched[gi] or pi in taken:
            continue
        matched[gi] = True
        chosen[gi] = pi
        chosen_iou[gi] = vi
        taken.add(pi)
    return matched, chosen, chosen_iou
