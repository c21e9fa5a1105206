"""Did A beat B? The paired comparison of two converted sets on the same ground truth.

Both sets are scored on the same ground-truth boxes, so their IoUs are paired: box by box, most
of the spread (small boxes, occluded boxes) is shared, and the difference of the means has a
much smaller error than two independent SEMs suggest. Everything here is over the ground-truth
boxes *both* sets matched; a box matched by one set only is counted apart.

* :func:`align_ground_truth`: which row of B's table is each ground-truth row of A's.
* :func:`paired_difference`: mean IoU difference, paired SE, bootstrap interval, wins/losses/
  ties, angle p90 difference and its interval, and a verdict in words.
* :func:`compare_cuts`: the same for every group of every cut.
"""

from __future__ import annotations

import math
from typing import Optional, Sequence

import numpy as np

from hbb2obb.analysis import Cut
from hbb2obb.evaluate import MatchTable

TIE_TOLERANCE = 1e-9  # IoUs closer than this are the same score (float noise of equal boxes)
BOOTSTRAP_CELLS = 4_000_000  # resampled values held in memory at once
CONFIDENCE = 0.95


def align_ground_truth(table_a: MatchTable, table_b: MatchTable) -> np.ndarray:
    """For each ground-truth row of ``table_a``, the row of ``table_b`` holding the same box.

    Rows are the same box when frame name and line number agree (both tables read the same
    ground-truth folder; frames one side skipped simply have no counterpart).

    Returns
    -------
    (n_a,) int64
        Row index into ``table_b.gt``, ``-1`` where B has no such row.
    """
    out = np.full(len(table_a.gt), -1, dtype=np.int64)
    if not len(table_a.gt) or not len(table_b.gt):
        return out
    a_index = {name: i for i, name in enumerate(table_a.frame_names)}
    b_to_a = np.array([a_index.get(name, -1) for name in table_b.frame_names], dtype=np.int64)
    b_frame = b_to_a[table_b.gt_frame]
    stride = int(max(table_a.gt.line.max(), table_b.gt.line.max())) + 1
    key_a = table_a.gt_frame * stride + table_a.gt.line
    key_b = np.where(b_frame >= 0, b_frame * stride + table_b.gt.line, -1)
    order = np.argsort(key_b, kind="stable")
    position = np.searchsorted(key_b[order], key_a)
    position = np.minimum(position, len(order) - 1)
    found = key_b[order][position] == key_a
    out[found] = order[position[found]]
    return out


def _verdict(low: float, high: float, lower_is_better: bool) -> str:
    if low <= 0.0 <= high:
        return "within the noise"
    a_ahead = high < 0.0 if lower_is_better else low > 0.0
    return "A better" if a_ahead else "B better"


def _bootstrap(iou_diff: np.ndarray, angle_a: np.ndarray, angle_b: np.ndarray, n_boot: int, seed: int):
    """Bootstrap distributions of the mean IoU difference and the angle p90 difference."""
    rng = np.random.default_rng(seed)
    n = iou_diff.size
    batch = max(1, BOOTSTRAP_CELLS // n)
    means, p90s = [], []
    for start in range(0, n_boot, batch):
        picks = rng.integers(0, n, size=(min(batch, n_boot - start), n))
        means.append(iou_diff[picks].mean(axis=1))
        p90s.append(np.percentile(angle_a[picks], 90, axis=1) - np.percentile(angle_b[picks], 90, axis=1))
    return np.concatenate(means), np.concatenate(p90s)


def paired_difference(iou_a, iou_b, angle_a, angle_b, *, seed: int = 0, n_boot: int = 2000) -> dict:
    """A minus B over aligned pairs of scores of the same ground-truth boxes.

    Parameters
    ----------
    iou_a, iou_b, angle_a, angle_b : (n,) array_like
        IoU and orientation error of each box under A and under B.
    seed : int
        Seed of the bootstrap: the same seed gives the same intervals.
    n_boot : int
        Bootstrap resamples (boxes drawn with replacement, pairs kept together).

    Returns
    -------
    dict
        ``boxes``; ``iou_a``, ``iou_b``, ``iou_diff`` (mean of A − B); ``paired_se`` (sample
        standard deviation of the per-box differences over ``sqrt(n)``); ``independent_se``
        (what two independent SEMs would claim); ``iou_ci`` (95% percentile bootstrap interval);
        ``wins``, ``losses``, ``ties`` (boxes where A's IoU is higher, lower, equal within
        1e-9); ``p90_a``, ``p90_b``, ``p90_diff`` and ``p90_ci`` (angle p90, degrees, lower is
        better); ``iou_verdict`` and ``angle_verdict``: ``"A better"``, ``"B better"`` or
        ``"within the noise"`` (the interval holds 0), ``"no pairs"`` when ``n`` is 0.

    Examples
    --------
    >>> d = paired_difference([0.9, 0.8, 0.7], [0.8, 0.7, 0.6], [1, 2, 3], [1, 2, 3], n_boot=200)
    >>> round(d["iou_diff"], 6), d["paired_se"] < 1e-12, d["wins"], d["iou_verdict"]
    (0.1, True, 3, 'A better')
    """
    iou_a, iou_b = np.asarray(iou_a, dtype=np.float64), np.asarray(iou_b, dtype=np.float64)
    angle_a, angle_b = np.asarray(angle_a, dtype=np.float64), np.asarray(angle_b, dtype=np.float64)
    n = int(iou_a.size)
    if n == 0:
        return dict(boxes=0, iou_a=0.0, iou_b=0.0, iou_diff=0.0, paired_se=0.0, independent_se=0.0,
                    iou_ci=[0.0, 0.0], wins=0, losses=0, ties=0, p90_a=0.0, p90_b=0.0, p90_diff=0.0,
                    p90_ci=[0.0, 0.0], iou_verdict="no pairs", angle_verdict="no pairs")
    diff = iou_a - iou_b
    ddof = 1 if n > 1 else 0
    root_n = math.sqrt(n)
    boot_mean, boot_p90 = _bootstrap(diff, angle_a, angle_b, n_boot, seed)
    tails = [100 * (1 - CONFIDENCE) / 2, 100 * (1 + CONFIDENCE) / 2]
    iou_ci = [float(v) for v in np.percentile(boot_mean, tails)]
    p90_ci = [float(v) for v in np.percentile(boot_p90, tails)]
    p90_a, p90_b = float(np.percentile(angle_a, 90)), float(np.percentile(angle_b, 90))
    return dict(
        boxes=n,
        iou_a=float(iou_a.mean()),
        iou_b=float(iou_b.mean()),
        iou_diff=float(diff.mean()),
        paired_se=float(diff.std(ddof=ddof) / root_n),
        independent_se=float(math.hypot(iou_a.std(ddof=ddof), iou_b.std(ddof=ddof)) / root_n),
        iou_ci=iou_ci,
        wins=int(np.count_nonzero(diff > TIE_TOLERANCE)),
        losses=int(np.count_nonzero(diff < -TIE_TOLERANCE)),
        ties=int(np.count_nonzero(np.abs(diff) <= TIE_TOLERANCE)),
        p90_a=p90_a,
        p90_b=p90_b,
        p90_diff=p90_a - p90_b,
        p90_ci=p90_ci,
        iou_verdict=_verdict(*iou_ci, lower_is_better=False),
        angle_verdict=_verdict(*p90_ci, lower_is_better=True),
    )


def compare_cuts(table_a: MatchTable, table_b: MatchTable, cuts: Sequence[Cut], *, seed: int = 0,
                 n_boot: int = 2000, b_rows: Optional[np.ndarray] = None) -> dict:
    """:func:`paired_difference` overall and for every group of every cut, as plain data.

    The cuts are masks over ``table_a``'s ground-truth rows (the ground truth is the same, so
    its properties are too). Each group is bootstrapped with the same ``seed``, so a group's
    interval does not depend on which other groups were asked for.

    Returns
    -------
    dict
        ``overall`` (a :func:`paired_difference` dict), ``cuts`` (``key``, ``title``, ``groups``
        of ``{"label", ...}``), ``matched_by_a_only``, ``matched_by_b_only``.
    """
    b_rows = align_ground_truth(table_a, table_b) if b_rows is None else b_rows
    b_matched = np.zeros(len(table_a.gt), dtype=bool)
    present = b_rows >= 0
    b_matched[present] = table_b.matched[b_rows[present]]
    both = table_a.matched & b_matched
    b_iou = np.full(len(table_a.gt), np.nan)
    b_angle = np.full(len(table_a.gt), np.nan)
    b_iou[both] = table_b.iou[b_rows[both]]
    b_angle[both] = table_b.angle_error[b_rows[both]]

    def over(mask: np.ndarray) -> dict:
        rows = mask & both
        return paired_difference(table_a.iou[rows], b_iou[rows], table_a.angle_error[rows], b_angle[rows],
                                 seed=seed, n_boot=n_boot)

    return {
        "seed": int(seed),
        "bootstrap": int(n_boot),
        "matched_by_a_only": int((table_a.matched & ~b_matched).sum()),
        "matched_by_b_only": int((~table_a.matched & b_matched).sum()),
        "overall": over(np.ones(len(table_a.gt), dtype=bool)),
        "cuts": [
            {"key": cut.key, "title": cut.title,
             "groups": [{"label": label, **over(mask)} for label, mask in zip(cut.labels, cut.masks)]}
            for cut in cuts
        ],
    }
