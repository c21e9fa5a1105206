"""The metric dict (docs/metrics.md §3): statistics of matched pairs, overall and per class."""

from __future__ import annotations

import math

import numpy as np

from hbb2obb.scoring.overlap_metrics import paired_statistics

IOU_LADDER = (0.50, 0.75, 0.85, 0.90)
"""Thresholds of the IoU ladder: the share of pairs at or above each."""

LADDER_ALIASES = {f"iou_at_{round(t * 100)}": f"{t:.2f}" for t in IOU_LADDER}
"""Flat names of the ladder rungs (``iou_at_90``), as ``--require`` and ``--plot_metric`` use them."""


def iou_fractions(ious: np.ndarray) -> dict[str, float]:
    """Share of pairs with IoU at or above each ladder rung, keyed ``"0.50"`` ... ``"0.90"``.

    Examples
    --------
    >>> iou_fractions(np.array([0.6, 0.8, 0.95]))
    {'0.50': 1.0, '0.75': 0.6666666666666666, '0.85': 0.3333333333333333, '0.90': 0.3333333333333333}
    >>> iou_fractions(np.array([]))["0.90"]
    0.0
    """
    ious = np.asarray(ious, dtype=np.float64)
    if ious.size == 0:
        return {f"{t:.2f}": 0.0 for t in IOU_LADDER}
    return {f"{t:.2f}": float(np.count_nonzero(ious >= t) / ious.size) for t in IOU_LADDER}


def pair_statistics(ious, angle_errors) -> dict:
    """Statistics of a set of matched pairs; every value is 0 when the set is empty.

    Returns the keys ``avg_iou, std_iou, sem_iou, median_iou, iou_fractions, avg_angle_error,
    std_angle_error, median_angle_error, p90_angle_error`` as plain Python floats.
    """
    ious = np.asarray(ious, dtype=np.float64)
    angles = np.asarray(angle_errors, dtype=np.float64)
    n = ious.size
    if n == 0:
        zero = dict.fromkeys(
            ("avg_iou", "std_iou", "sem_iou", "median_iou", "avg_angle_error", "std_angle_error",
             "median_angle_error", "p90_angle_error"), 0.0)
        zero["iou_fractions"] = iou_fractions(ious)
        return zero
    std = float(np.std(ious))
    return {
        "avg_iou": float(np.mean(ious)),
        "std_iou": std,
        "sem_iou": std / math.sqrt(n),
        "median_iou": float(np.median(ious)),
        "iou_fractions": iou_fractions(ious),
        "avg_angle_error": float(np.mean(angles)),
        "std_angle_error": float(np.std(angles)),
        "median_angle_error": float(np.median(angles)),
        "p90_angle_error": float(np.percentile(angles, 90)),
    }


def class_statistics(table, overlap) -> dict:
    """``class_stats`` of the metric dict: one entry per class seen on either side, by class id.

    Each entry holds ``gt_total, pred_total, matches``, the :func:`pair_statistics` and the
    :func:`~hbb2obb.scoring.overlap_metrics.overlap_statistics` of the class's ground-truth rows, and
    the lists ``ious`` and ``angle_errors`` of its matches in table order; and the reference tool's
    keys ``iou_sum`` (summed in table order) and ``iou_values`` (the same list as ``ious``). Classes are counted
    with one bincount and the matched rows grouped with one stable sort, instead of a pass
    over the whole table per class; the values are those of masking the table per class.

    Parameters
    ----------
    table : MatchTable
        An accumulated run (:attr:`EvaluationResult.table`).
    overlap : RowOverlap
        :func:`~hbb2obb.scoring.overlap_metrics.row_overlap` of the same table.

    Returns
    -------
    dict
        ``{class_id: stats}``, in increasing class id.

    Examples
    --------
    >>> from hbb2obb.boxes import Boxes
    >>> from hbb2obb.scoring.evaluate import MatchTable
    >>> from hbb2obb.scoring.overlap_metrics import row_overlap
    >>> square = [[0, 0], [2, 0], [2, 2], [0, 2]]
    >>> gt = Boxes([square, square], [0, 4])
    >>> pred = Boxes([square], [0])
    >>> table = MatchTable((), np.zeros((0, 2)), gt, np.zeros(2, int), pred, np.zeros(1, int),
    ...                    np.array([True, False]), np.array([0, 0]), np.array([1.0, 0.0]),
    ...                    np.array([1.0, np.nan]), np.array([0.0, np.nan]), np.array([True]))
    >>> stats = class_statistics(table, row_overlap(table))
    >>> sorted(stats), stats[0]["matches"], stats[0]["ious"], stats[4]["gt_total"], stats[4]["spatial_match"]
    ([0, 4], 1, [1.0], 1, 0.0)
    """
    classes, gt_class, pred_class = dense_classes(table.gt.class_id, table.pred.class_id)
    n_classes = len(classes)
    gt_total = np.bincount(gt_class, minlength=n_classes)
    pred_total = np.bincount(pred_class, minlength=n_classes)
    passed = np.bincount(gt_class[np.asarray(overlap.spatial_pass, dtype=bool)], minlength=n_classes)
    # Matched rows grouped by class; the stable sort keeps table order inside each class, so
    # every mean and median sees the same values in the same order as a per-class mask.
    rows = np.flatnonzero(table.matched)
    rows = rows[np.argsort(gt_class[rows], kind="stable")]
    ends = np.cumsum(np.bincount(gt_class[rows], minlength=n_classes))
    columns = [np.take(column, rows) for column in
               (table.iou, table.angle_error, overlap.giou, overlap.diou, overlap.ciou, overlap.center_offset)]
    class_stats = {}
    for index, class_id in enumerate(classes.tolist()):
        start = ends[index - 1] if index else 0
        iou, angle, giou, diou, ciou, offset = (column[start:ends[index]] for column in columns)
        stats = {"gt_total": int(gt_total[index]), "pred_total": int(pred_total[index]), "matches": len(iou)}
        stats.update(pair_statistics(iou, angle))
        paired = ~np.isnan(giou)  # matched pairs with a term, as overlap_statistics selects them
        if not paired.all():
            giou, diou, ciou, offset = giou[paired], diou[paired], ciou[paired], offset[paired]
        stats.update(paired_statistics(giou, diou, ciou, offset))
        stats["spatial_match"] = float(int(passed[index]) / stats["gt_total"]) if stats["gt_total"] else 0.0
        stats["ious"], stats["angle_errors"] = iou.tolist(), angle.tolist()
        # The reference tool's own keys, so scripts written for its dict keep working: iou_sum is
        # added up one pair after the other as it does (cumsum: no pairwise or compensated sum).
        stats["iou_sum"] = float(np.cumsum(iou)[-1]) if len(iou) else 0.0
        # a copy: a shared list would be a YAML alias
        stats["iou_values"] = list(stats["ious"])
        class_stats[int(class_id)] = stats
    return class_stats


def dense_classes(gt_class: np.ndarray, pred_class: np.ndarray):
    """The sorted classes of both sides, and each box's index into them.

    Examples
    --------
    >>> classes, gt_dense, pred_dense = dense_classes(np.array([7, 2, 7]), np.array([9]))
    >>> classes.tolist(), gt_dense.tolist(), pred_dense.tolist()
    ([2, 7, 9], [1, 0, 1], [2])
    """
    both = np.concatenate([gt_class, pred_class]).astype(np.int64, copy=False)
    if both.size == 0:
        return both, both[:0], both[:0]
    low, high = int(both.min()), int(both.max())
    if high - low <= 4 * both.size + 1024:  # a short range of ids: a bincount is cheaper than a sort
        offset = both - low
        present = np.bincount(offset, minlength=high - low + 1) > 0
        dense = (np.cumsum(present) - 1)[offset]
        classes = np.flatnonzero(present) + low
    else:
        classes, dense = np.unique(both, return_inverse=True)
        dense = dense.reshape(-1)
    return classes, dense[:len(gt_class)], dense[len(gt_class):]


def flat_metric(metrics: dict, key: str):
    """Look up a metric by its flat name: a top-level key or a ladder alias like ``iou_at_90``.

    Raises ``KeyError`` for a name that is neither.
    """
    if key in LADDER_ALIASES:
        return metrics["iou_fractions"][LADDER_ALIASES[key]]
    value = metrics[key]
    if isinstance(value, (dict, list)):
        raise KeyError(key)
    return value


def numeric_metric_names(metrics: dict) -> list[str]:
    """Every flat name whose value is a number, ladder aliases included."""
    names = [k for k, v in metrics.items() if isinstance(v, (int, float)) and not isinstance(v, bool)]
    return sorted(names + list(LADDER_ALIASES))
