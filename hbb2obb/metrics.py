"""The metric dict (SPEC 3): statistics of matched pairs, overall and per class."""

from __future__ import annotations

import math

import numpy as np

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
