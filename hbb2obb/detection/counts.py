"""Counts of a detector's output at one operating point: precision, recall, F1, confusion matrix.

* :func:`operating_point`: precision, recall and F1 of the scored detections at a confidence
  (by default the one maximizing F1), from the COCO rule's matches at IoU 0.5;
* :func:`unscored_counts`: the same without scores, from a one-to-one matching at IoU 0.5;
* :func:`confusion_matrix`: classes plus background, class-agnostic one-to-one pairs at IoU 0.5.

Difficult ground-truth boxes count toward nothing: a detection paired with one is neither a hit
nor a miss, and a difficult box left alone is not a miss.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from hbb2obb.boxes import Boxes
from hbb2obb.detection.evaluate import DetectionEval
from hbb2obb.geometry.matching import match_pairs

# match_pairs keeps pairs strictly above its threshold; "IoU at least 0.5" is "above the float just below".
_AT_LEAST_HALF = float(np.nextafter(0.5, 0.0))


def _ratios(tp: int, fp: int, positives: int) -> dict:
    """Precision (NaN without detections), recall (NaN without positives) and F1 (0 when nothing is found)."""
    precision = tp / (tp + fp) if tp + fp else float("nan")
    recall = tp / positives if positives else float("nan")
    f1 = 2 * tp / (2 * tp + fp + (positives - tp)) if tp else 0.0
    return {"precision": float(precision), "recall": float(recall), "f1": float(f1)}


@dataclass(frozen=True)
class OperatingPoint:
    """Counts at one confidence, and the whole curve over confidences (for the report)."""

    conf: float
    tp: int
    fp: int
    positives: int
    chosen: bool  # True: the confidence was picked as the F1 maximum; False: given

    def as_metrics(self) -> dict:
        out = _ratios(self.tp, self.fp, self.positives)
        out["conf_threshold"] = float(self.conf)
        return out


def operating_point(ev: DetectionEval, conf: Optional[float] = None) -> OperatingPoint:
    """Precision, recall and F1 over all classes at a confidence.

    Detections are hits or misses as the COCO rule matches them at IoU 0.5 (area "all", every
    detection, not only the first ``max_dets``), those matched to a difficult box left out. A
    detection counts at confidence ``c`` when its score is at least ``c``.

    Parameters
    ----------
    ev : DetectionEval
    conf : float, optional
        ``None``: the score at which F1 is highest (the highest such score on a tie).
    """
    matched, scored = ev.flags(0, ev.order, n_thresholds=1)  # area "all"; row 0: threshold 0.5
    positives = int(np.count_nonzero(~ev.gt_difficult))
    score = ev.det_score[ev.order]
    tp, fp = np.cumsum(matched[0] & scored[0]), np.cumsum(~matched[0] & scored[0])
    if conf is not None:
        counted = int(np.count_nonzero(score >= conf))
        if counted == 0:
            return OperatingPoint(conf, 0, 0, positives, False)
        return OperatingPoint(conf, int(tp[counted - 1]), int(fp[counted - 1]), positives, False)
    if score.size == 0:
        return OperatingPoint(float("nan"), 0, 0, positives, True)
    ends = np.flatnonzero(np.concatenate([score[1:] != score[:-1], [True]]))  # the last of each run of ties
    f1 = 2 * tp[ends] / np.maximum(tp[ends] + fp[ends] + positives, 1)
    best = ends[int(np.argmax(f1))]
    return OperatingPoint(float(score[best]), int(tp[best]), int(fp[best]), positives, True)


def unscored_counts(gt: Boxes, pred: Boxes, pairs) -> dict:
    """Precision, recall and F1 at IoU 0.5 without scores: one-to-one, highest IoU first, class-aware.

    Examples
    --------
    >>> square = [[0, 0], [2, 0], [2, 2], [0, 2]]
    >>> gt, pred = Boxes([square, square], [0, 1]), Boxes([square], [0])
    >>> unscored_counts(gt, pred, (np.array([0, 1]), np.array([0, 0]), np.array([1.0, 1.0])))["recall"]
    0.5
    """
    return unscored_counts_and_matches(gt, pred, pairs)[0]


def left_out(gt: Boxes) -> np.ndarray:
    """Ground truth that is neither a hit nor a miss here: difficult boxes and COCO crowd regions."""
    difficult = np.zeros(len(gt), dtype=bool) if gt.difficult is None else gt.difficult
    return difficult if gt.crowd is None else difficult | gt.crowd


def unscored_counts_and_matches(gt: Boxes, pred: Boxes, pairs) -> tuple:
    """:func:`unscored_counts`, and its matches when they are also :func:`confusion_matrix`'s (else ``None``).

    When every pair is within one class, the class-aware matching and the confusion matrix's
    class-agnostic one are the same matching of the same pairs: it is made once.

    Examples
    --------
    >>> square = [[0, 0], [2, 0], [2, 2], [0, 2]]
    >>> gt, pred = Boxes([square], [0]), Boxes([square], [0])
    >>> counts, matches = unscored_counts_and_matches(gt, pred, (np.array([0]), np.array([0]), np.array([1.0])))
    >>> counts["recall"], matches.matched.tolist()
    (1.0, [True])
    """
    pair_gt, pair_pred, pair_iou = pairs
    same = gt.class_id[pair_gt] == pred.class_id[pair_pred]
    every = bool(same.all())
    if not every:
        pair_gt, pair_pred, pair_iou = pair_gt[same], pair_pred[same], pair_iou[same]
    matches = match_pairs(pair_gt, pair_pred, pair_iou, len(gt), len(pred), _AT_LEAST_HALF, one_to_one=True,
                          with_best=False)  # only the matches are read
    difficult = left_out(gt)
    on_difficult = np.zeros(len(pred), dtype=bool)
    on_difficult[matches.pred_index[matches.matched & difficult]] = True
    tp = int(np.count_nonzero(matches.matched & ~difficult))
    fp = int(np.count_nonzero(~matches.pred_matched & ~on_difficult))
    return _ratios(tp, fp, int(np.count_nonzero(~difficult))), (matches if every else None)


def confusion_matrix(gt: Boxes, pred: Boxes, pairs, classes: np.ndarray, conf: Optional[float] = None,
                     matches=None) -> np.ndarray:
    """Counts ``(K + 1, K + 1)``: rows the ground-truth class, columns the predicted one, last = background.

    Boxes pair one to one across classes, highest IoU first, at IoU 0.5 or more; a ground-truth
    box left alone counts in the background column, a detection left alone in the background
    row. Only detections with a score of at least ``conf`` count, when given. ``matches``: that
    matching made already (:func:`unscored_counts_and_matches`; only without ``conf``).
    ``classes``: the sorted distinct class ids of both sides (each id of ``gt`` and ``pred`` is one).

    Examples
    --------
    >>> square = [[0, 0], [2, 0], [2, 2], [0, 2]]
    >>> gt, pred = Boxes([square], [0]), Boxes([square, square], [1, 1])
    >>> pairs = (np.array([0, 0]), np.array([0, 1]), np.array([1.0, 1.0]))
    >>> confusion_matrix(gt, pred, pairs, np.array([0, 1])).tolist()
    [[0, 1, 0], [0, 0, 0], [0, 1, 0]]
    """
    pair_gt, pair_pred, pair_iou = pairs
    counted = np.ones(len(pred), dtype=bool)
    if conf is not None and pred.score is not None:
        counted = pred.score >= conf
    if matches is None or conf is not None:
        keep = counted[pair_pred]
        matches = match_pairs(pair_gt[keep], pair_pred[keep], pair_iou[keep], len(gt), len(pred), _AT_LEAST_HALF,
                              one_to_one=True, with_best=False)
    difficult = left_out(gt)
    n = len(classes)
    gt_class = np.searchsorted(classes, gt.class_id)  # every id is one of the classes
    pred_class = np.searchsorted(classes, pred.class_id)
    paired = matches.matched & ~difficult
    on_difficult = np.zeros(len(pred), dtype=bool)
    on_difficult[matches.pred_index[matches.matched & difficult]] = True
    alone_gt = ~matches.matched & ~difficult
    alone_pred = counted & ~matches.pred_matched & ~on_difficult
    # every count is of one cell (row * (n + 1) + column): one bincount instead of np.add.at
    cells = np.concatenate([gt_class[paired] * (n + 1) + pred_class[matches.pred_index[paired]],
                            gt_class[alone_gt] * (n + 1) + n, n * (n + 1) + pred_class[alone_pred]])
    return np.bincount(cells, minlength=(n + 1) ** 2).astype(np.int64).reshape(n + 1, n + 1)
