"""Distance-aware overlap (GIoU, DIoU, CIoU, centre offset) and spatial match over a match table.

Both are computed once per ground-truth row of a :class:`~hbb2obb.scoring.evaluate.MatchTable` and
then summarized over any mask of rows: every ground-truth box for the metric dict, one class
for ``class_stats``, one group for the analysis cuts.

* The distance-aware terms belong to matched pairs, like IoU: NaN on unmatched rows, and their
  statistics are taken over the matched rows of the mask.
* The spatial match is a pass or a fail for *every* ground-truth box: it passes when its best
  IoU against the eligible predictions (same class unless class-agnostic) is at least the
  spatial threshold, matched or not. Its share is over all rows of the mask, so boxes that
  found no prediction count as failures.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from hbb2obb.geometry.distance import DistanceIoU, indexed_distance_ious

DEFAULT_SPATIAL_THRESHOLD = 0.5

DISTANCE_KEYS = ("avg_giou", "median_giou", "avg_diou", "median_diou", "avg_ciou", "median_ciou",
                 "avg_center_offset")
"""Keys :func:`overlap_statistics` adds besides ``spatial_match``, in the order it adds them."""


@dataclass(frozen=True)
class RowOverlap:
    """Per ground-truth row of a match table; the float arrays are NaN where unmatched.

    Attributes
    ----------
    giou, diou, ciou : (n_gt,) float64
        Distance-aware overlap of the matched pair.
    center_offset : (n_gt,) float64
        Distance between the centres of the matched pair, in pixels.
    spatial_pass : (n_gt,) bool
        Best IoU against the eligible predictions at or above the spatial threshold.
    paired : DistanceIoU, optional
        The terms of the matched rows alone, in row order, as :func:`row_overlap` computed them
        before spreading them over the table: the statistics of all rows read them as they are.
    """

    giou: np.ndarray
    diou: np.ndarray
    ciou: np.ndarray
    center_offset: np.ndarray
    spatial_pass: np.ndarray
    paired: Optional[DistanceIoU] = field(default=None, repr=False, compare=False)


def row_overlap(table, spatial_threshold: float = DEFAULT_SPATIAL_THRESHOLD) -> RowOverlap:
    """Distance-aware terms of every matched pair and the spatial pass of every ground-truth box.

    Parameters
    ----------
    table : MatchTable
        An accumulated run (:attr:`EvaluationResult.table`); its corners are taken as already
        repaired (:func:`~hbb2obb.geometry.repair_corners`), as the loader leaves them.
    spatial_threshold : float
        A ground-truth box passes when ``best_iou >= spatial_threshold``.

    Returns
    -------
    RowOverlap

    Examples
    --------
    >>> from hbb2obb.boxes import Boxes
    >>> from hbb2obb.scoring.evaluate import MatchTable
    >>> gt = Boxes([[[0, 0], [4, 0], [4, 2], [0, 2]], [[9, 9], [10, 9], [10, 10], [9, 10]]], [0, 0])
    >>> pred = Boxes([[[0, 0], [2, 0], [2, 2], [0, 2]]], [0])
    >>> table = MatchTable((), np.zeros((0, 2)), gt, np.zeros(2, int), pred, np.zeros(1, int),
    ...                    np.array([True, False]), np.array([0, 0]), np.array([0.5, 0.0]),
    ...                    np.array([0.5, np.nan]), np.array([0.0, np.nan]), np.array([True]))
    >>> rows = row_overlap(table, 0.5)
    >>> rows.giou.tolist()[0], rows.center_offset.tolist()[0], rows.spatial_pass.tolist()
    (0.5, 1.0, [True, False])
    """
    matched = np.asarray(table.matched, dtype=bool)
    rows = np.flatnonzero(matched)
    # The pairs' corners are gathered block by block as they are scored, not copied whole first.
    # The table's boxes were repaired when loaded (evaluate_frames): repairing them again would
    # change nothing.
    terms = indexed_distance_ious(table.gt.corners, rows, table.pred.corners, np.take(table.pred_index, rows),
                                  iou=np.take(table.iou, rows), repaired=True)
    columns = []
    for values in (terms.giou, terms.diou, terms.ciou, terms.center_offset):
        column = np.full(matched.shape, np.nan)
        column[rows] = values
        columns.append(column)
    spatial_pass = np.asarray(table.best_iou, dtype=np.float64) >= spatial_threshold
    return RowOverlap(*columns, spatial_pass=spatial_pass, paired=terms)


def overlap_statistics(overlap: RowOverlap, mask=None) -> dict:
    """Means and medians of the distance-aware terms, and the spatial match share, over a mask.

    Parameters
    ----------
    overlap : RowOverlap
        From :func:`row_overlap`.
    mask : (n_gt,) bool, optional
        The ground-truth rows of the group; every row when omitted.

    Returns
    -------
    dict
        ``avg_giou, median_giou, avg_diou, median_diou, avg_ciou, median_ciou,
        avg_center_offset`` over the matched rows of the mask (0 when there is none), and
        ``spatial_match``: the share of all rows of the mask that pass (0 for an empty mask).

    Examples
    --------
    >>> rows = RowOverlap(np.array([0.5, np.nan]), np.array([0.4, np.nan]), np.array([0.3, np.nan]),
    ...                   np.array([2.0, np.nan]), np.array([True, False]))
    >>> stats = overlap_statistics(rows)
    >>> stats["avg_giou"], stats["avg_center_offset"], stats["spatial_match"]
    (0.5, 2.0, 0.5)
    """
    if mask is None and overlap.paired is not None:  # every row: the matched rows' terms as computed
        terms = (overlap.paired.giou, overlap.paired.diou, overlap.paired.ciou, overlap.paired.center_offset)
        defined = ~np.isnan(terms[0])
        passing, in_group = np.count_nonzero(overlap.spatial_pass), overlap.spatial_pass.shape[0]
    else:
        mask = np.ones(overlap.spatial_pass.shape[0], dtype=bool) if mask is None else np.asarray(mask, dtype=bool)
        terms = (overlap.giou, overlap.diou, overlap.ciou, overlap.center_offset)
        defined = mask & ~np.isnan(overlap.giou)
        passing, in_group = np.count_nonzero(overlap.spatial_pass & mask), int(mask.sum())
    stats = paired_statistics(*(terms if defined.all() else (values[defined] for values in terms)))
    stats["spatial_match"] = float(passing / in_group) if in_group else 0.0
    return stats


def paired_statistics(giou, diou, ciou, center_offset) -> dict:
    """Means and medians of the distance-aware terms of a set of matched pairs.

    The part of :func:`overlap_statistics` that needs only the pairs: callers that already
    hold a group's matched rows (per-class statistics) skip building a mask.

    Parameters
    ----------
    giou, diou, ciou, center_offset : (k,) float64
        The terms of the group's pairs, none NaN.

    Returns
    -------
    dict
        The keys of :data:`DISTANCE_KEYS`, in that order; 0 for an empty group.

    Examples
    --------
    >>> stats = paired_statistics(*(np.array([0.2, 0.4, 0.9]),) * 4)
    >>> round(stats["avg_giou"], 3), stats["median_ciou"], stats["avg_center_offset"] == stats["avg_giou"]
    (0.5, 0.4, True)
    """
    stats = {}
    for name, values in (("giou", giou), ("diou", diou), ("ciou", ciou)):
        stats[f"avg_{name}"] = float(np.mean(values)) if values.size else 0.0
        stats[f"median_{name}"] = float(np.median(values)) if values.size else 0.0
    stats["avg_center_offset"] = float(np.mean(center_offset)) if center_offset.size else 0.0
    return stats
