"""Detection metrics of oriented boxes: rotated AP by the COCO and the DOTA devkit rules.

When the boxes come from a detector, what people ask first is precision, recall and mean
average precision. Three COCOeval-like steps, on exact polygon IoU:

* :func:`evaluate_detections` matches the detections of every frame and class greedily in
  score order, for every COCO IoU threshold and area range at once (vectorized over frames),
  and applies the DOTA devkit's rule at IoU 0.5;
* :func:`accumulate` builds COCO's precision ``(T, R, K, A, M)`` and recall ``(T, K, A, M)``
  arrays and the DOTA devkit's AP per class;
* :func:`summarize_detections` gives the metric-dict keys (``map50_95`` ... ``dota_map50``).

Ties in score are broken by frame order (files sorted by name), then line order, as COCOeval's
stable sorts break them when image ids follow frame order. Difficult ground-truth boxes are
COCO crowd regions here: a detection matched to one is neither hit nor miss, and they never
count toward recall. Undefined values (a class without ground truth) are NaN, where COCOeval
writes -1, and are left out of every mean.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from hbb2obb.boxes import Boxes
from hbb2obb.errors import UsageError
from hbb2obb.geometry import candidate_pairs, iou_pairs, polygon_area

COCO_IOU_THRESHOLDS = np.linspace(0.5, 0.95, 10)  # as COCOeval's Params builds them
RECALL_THRESHOLDS = np.linspace(0.0, 1.0, 101)
AREA_RANGES = (("all", 0.0, 1e10), ("small", 0.0, 32.0**2), ("medium", 32.0**2, 96.0**2), ("large", 96.0**2, 1e10))
"""COCO's ranges in px^2 of the ground-truth box, bounds inclusive on both sides as COCOeval tests them."""
DEFAULT_MAX_DETS = 100
AP_RULES = ("voc07", "voc")
"""DOTA devkit interpolation: ``voc07`` the 11-point rule of the task-1 evaluation (default), ``voc`` all points."""
DOTA_IOU = 0.5  # the devkit counts a hit when the IoU is strictly greater


@dataclass(frozen=True)
class DetectionParams:
    """Settings of the detection metrics; validated on construction.

    Parameters
    ----------
    max_dets : int
        Detections per frame and class kept by the COCO rule (COCO's 100; more for dense frames;
        at least 10).
        The COCO recall is also given at 1 and 10 detections.
    ap_rule : {"voc07", "voc"}
        Interpolation of the DOTA rule's AP.
    conf : float, optional
        Confidence at which precision, recall and F1 are given; ``None``: the one maximizing F1.
    """

    max_dets: int = DEFAULT_MAX_DETS
    ap_rule: str = "voc07"
    conf: Optional[float] = None
    iou_thresholds: np.ndarray = field(default_factory=lambda: COCO_IOU_THRESHOLDS.copy())

    def __post_init__(self):
        if int(self.max_dets) != self.max_dets or self.max_dets < 10:
            # COCOeval sorts its maxDets and reports AR at 1 and 10 besides: a smaller cap has no meaning there
            raise UsageError(f"--max_dets must be an integer of at least 10, got {self.max_dets}")
        if self.ap_rule not in AP_RULES:
            raise UsageError(f"--ap_rule must be one of {', '.join(AP_RULES)}, got {self.ap_rule!r}")
        if self.conf is not None and not np.isfinite(self.conf):
            raise UsageError(f"--conf must be a finite number, got {self.conf}")

    @property
    def max_dets_list(self) -> tuple:
        """COCO's ``maxDets``: 1, 10 and the chosen count (the last)."""
        return (1, 10, int(self.max_dets))


@dataclass(frozen=True)
class DetectionEval:
    """The evaluate step's result: every detection's match under every configuration.

    A configuration ``c`` is an IoU threshold ``c // A`` and an area range ``c % A``. Detection
    rows are those of the input (frame order, then line order).

    Attributes
    ----------
    classes : (K,) int64
        Sorted classes of both sides; ``gt_class`` and ``det_class`` index them.
    order : (n_det,) int64
        Detections by descending score, ties in row order.
    rank : (n_det,) int64
        Position of each detection among those of its frame and class, by the same order.
    det_gt : (C, n_det) int64
        COCO rule: the matched ground-truth row, -1 where unmatched.
    det_ignored, gt_ignored : (C, n_det) and (A, n_gt) bool
        COCO's ``dtIg`` and ``gtIg``.
    dota_tp, dota_fp : (n_det,) bool
        DOTA rule at IoU 0.5 (a detection on a difficult box is neither).
    """

    classes: np.ndarray
    gt_class: np.ndarray
    det_class: np.ndarray
    gt_difficult: np.ndarray
    det_score: np.ndarray
    order: np.ndarray
    rank: np.ndarray
    det_gt: np.ndarray
    det_ignored: np.ndarray
    gt_ignored: np.ndarray
    dota_tp: np.ndarray
    dota_fp: np.ndarray
    params: DetectionParams


def frame_pairs(gt: Boxes, gt_frame, pred: Boxes, pred_frame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Class-agnostic pairs of one frame's boxes with positive exact IoU: ``(gt, pred, iou)``.

    Examples
    --------
    >>> square = [[0, 0], [2, 0], [2, 2], [0, 2]]
    >>> g, p, v = frame_pairs(Boxes([square], [0]), [0], Boxes([square, square], [1, 0]), [0, 1])
    >>> g.tolist(), p.tolist(), v.tolist()
    ([0], [0], [1.0])
    """
    pair_gt, pair_pred = candidate_pairs(gt.corners, pred.corners, a_group=np.asarray(gt_frame, dtype=np.int64),
                                         b_group=np.asarray(pred_frame, dtype=np.int64))
    iou = iou_pairs(gt.corners[pair_gt], pred.corners[pair_pred])
    positive = iou > 0
    return pair_gt[positive], pair_pred[positive], iou[positive]


def _dense(values: np.ndarray, classes: np.ndarray) -> np.ndarray:
    return np.searchsorted(classes, values).astype(np.int64)


def _ranks(order: np.ndarray, group: np.ndarray) -> np.ndarray:
    """Each row's position within its group, groups visited in ``order``."""
    position = np.empty(order.size, dtype=np.int64)
    position[order] = np.arange(order.size)
    by_group = np.lexsort((position, group))
    sorted_group = group[by_group]
    starts = np.flatnonzero(np.concatenate([[True], sorted_group[1:] != sorted_group[:-1]])) if order.size else []
    first = np.zeros(order.size, dtype=np.int64)
    if order.size:
        first[starts] = starts
        first = np.maximum.accumulate(first)
    rank = np.empty(order.size, dtype=np.int64)
    rank[by_group] = np.arange(order.size) - first
    return rank


def evaluate_detections(gt: Boxes, gt_frame, pred: Boxes, pred_frame, pairs=None,
                        params: DetectionParams = DetectionParams()) -> DetectionEval:
    """Match scored detections to ground truth by the COCO rule (all thresholds) and the DOTA rule.

    Parameters
    ----------
    gt, pred : Boxes
        Ground truth (``difficult`` optional) and detections (``score`` required), rows in
        frame order then line order.
    gt_frame, pred_frame : (n,) int
        Frame of each box.
    pairs : tuple of (k,) arrays, optional
        ``(gt_row, pred_row, iou)`` of every same-frame pair with positive IoU (any classes),
        as :func:`frame_pairs` gives them; computed when not given.
    params : DetectionParams

    Returns
    -------
    DetectionEval
    """
    if pred.score is None:
        raise ValueError("detection metrics need a confidence per prediction")
    gt_frame, pred_frame = np.asarray(gt_frame, dtype=np.int64), np.asarray(pred_frame, dtype=np.int64)
    if pairs is None:
        pairs = frame_pairs(gt, gt_frame, pred, pred_frame)
    pair_gt, pair_pred, pair_iou = (np.asarray(a) for a in pairs)
    classes = np.union1d(gt.class_id, pred.class_id).astype(np.int64)
    gt_class, det_class = _dense(gt.class_id, classes), _dense(pred.class_id, classes)
    difficult = np.zeros(len(gt), dtype=bool) if gt.difficult is None else gt.difficult.copy()
    same = gt_class[pair_gt] == det_class[pair_pred]
    pair_gt, pair_pred, pair_iou = pair_gt[same], pair_pred[same], pair_iou[same]
    order = np.argsort(-pred.score, kind="stable")
    span = max(len(classes), 1)
    rank = _ranks(order, pred_frame * span + det_class)
    gt_area, det_area = polygon_area(gt.corners), polygon_area(pred.corners)
    gt_ignored = np.stack([difficult | (gt_area < lo) | (gt_area > hi) for _, lo, hi in AREA_RANGES])
    det_outside = np.stack([(det_area < lo) | (det_area > hi) for _, lo, hi in AREA_RANGES])
    det_gt = _coco_matches(pair_gt, pair_pred, pair_iou, rank, len(gt), len(pred), gt_ignored, difficult,
                           params.iou_thresholds)
    n_area = len(AREA_RANGES)
    area_of = np.tile(np.arange(n_area), len(params.iou_thresholds))
    matched = det_gt >= 0
    det_ignored = np.where(matched, np.take_along_axis(gt_ignored[area_of], np.maximum(det_gt, 0), axis=1),
                           det_outside[area_of])
    dota_tp, dota_fp = _dota_flags(pair_gt, pair_pred, pair_iou, order, len(pred), difficult)
    return DetectionEval(classes, gt_class, det_class, difficult, pred.score, order, rank, det_gt, det_ignored,
                         gt_ignored, dota_tp, dota_fp, params)


def _coco_matches(pair_gt, pair_pred, pair_iou, rank, n_gt, n_det, gt_ignored, crowd, thresholds) -> np.ndarray:
    """COCOeval's greedy matching for every (threshold, area range) at once.

    Detections are visited by rank within their frame and class: the k-th detection of every
    group is matched in the same step, as groups share no ground truth. Each takes, among the
    boxes not yet taken (crowd boxes can be taken again) with IoU at least the threshold, a
    non-ignored box before an ignored one, then the highest IoU, then the later box: what
    COCOeval's inner loop picks.
    """
    n_area = gt_ignored.shape[0]
    limits = np.repeat(np.minimum(np.asarray(thresholds, dtype=np.float64), 1 - 1e-10), n_area)
    area_of = np.tile(np.arange(n_area), len(thresholds))
    n_config = limits.size
    det_gt = np.full((n_config, n_det), -1, dtype=np.int64)
    reach = pair_iou >= limits.min() if pair_iou.size else np.zeros(0, dtype=bool)
    pg, pd, pv = pair_gt[reach], pair_pred[reach], pair_iou[reach]
    if pd.size == 0:
        return det_gt
    taken = np.zeros((n_config, n_gt), dtype=bool)
    by_rank = np.argsort(rank[pd], kind="stable")
    pg, pd, pv = pg[by_rank], pd[by_rank], pv[by_rank]
    step_rank = rank[pd]
    bounds = np.flatnonzero(np.concatenate([[True], step_rank[1:] != step_rank[:-1], [True]]))
    reusable = crowd[pg]
    ignored = gt_ignored[area_of][:, pg]  # (C, P)
    configs = np.arange(n_config)[:, None]
    for start, stop in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
        g, d, v = pg[start:stop], pd[start:stop], pv[start:stop]
        ok = v[None, :] >= limits[:, None]
        ok &= ~(taken[:, g] & ~reusable[None, start:stop])
        cc, pp = np.nonzero(ok)
        if cc.size == 0:
            continue
        pick = np.lexsort((-g[pp], -v[pp], ignored[cc, start + pp], d[pp], cc))
        cc, pp = cc[pick], pp[pick]
        first = np.concatenate([[True], (cc[1:] != cc[:-1]) | (d[pp[1:]] != d[pp[:-1]])])
        cc, pp = cc[first], pp[first]
        det_gt[cc, d[pp]] = g[pp]
        taken[cc, g[pp]] = True
    del configs
    return det_gt


def _dota_flags(pair_gt, pair_pred, pair_iou, order, n_det, difficult) -> tuple[np.ndarray, np.ndarray]:
    """The DOTA devkit's hits and misses at IoU 0.5.

    Each detection's best box is its highest-IoU box of its frame and class, taken or not (the
    first box on a tie); a hit when that IoU is above 0.5 and the box is neither difficult nor
    taken by a higher-ranked detection; a detection on a difficult box is neither.
    """
    best_iou = np.zeros(n_det)
    best_gt = np.full(n_det, -1, dtype=np.int64)
    if pair_iou.size:
        rows = np.lexsort((pair_gt, -pair_iou, pair_pred))
        first = np.concatenate([[True], pair_pred[rows[1:]] != pair_pred[rows[:-1]]])
        rows = rows[first]
        best_iou[pair_pred[rows]] = pair_iou[rows]
        best_gt[pair_pred[rows]] = pair_gt[rows]
    over = best_iou > DOTA_IOU
    on_difficult = over & difficult[np.maximum(best_gt, 0)] if difficult.size else np.zeros(n_det, dtype=bool)
    contender = over & ~on_difficult
    tp = np.zeros(n_det, dtype=bool)
    ranked = order[contender[order]]  # contenders by descending score: the first on each box wins it
    if ranked.size:
        _, first_of_box = np.unique(best_gt[ranked], return_index=True)
        tp[ranked[first_of_box]] = True
    fp = ~tp & ~on_difficult
    return tp, fp


@dataclass(frozen=True)
class DetectionAccumulation:
    """COCO's ``precision (T, R, K, A, M)`` and ``recall (T, K, A, M)`` (NaN where COCO has -1),
    and per class the DOTA rule's ``dota_ap (K,)`` (NaN without non-difficult ground truth)."""

    classes: np.ndarray
    precision: np.ndarray
    recall: np.ndarray
    dota_ap: np.ndarray
    dota_curves: tuple  # per class (recall, precision) of the DOTA rule, in score order
    params: DetectionParams


def voc_ap(recall: np.ndarray, precision: np.ndarray, eleven_point: bool) -> float:
    """VOC average precision of a precision/recall curve, 11-point (VOC07) or all-point.

    Examples
    --------
    >>> round(voc_ap(np.array([0.5, 1.0]), np.array([1.0, 0.5]), eleven_point=False), 6)
    0.75
    >>> round(voc_ap(np.array([0.5, 1.0]), np.array([1.0, 0.5]), eleven_point=True), 6)
    0.772727
    """
    if eleven_point:
        # the 11 recall levels 0, 0.1, ..., 1.0, spelt as the devkit makes them
        levels = np.arange(0.0, 1.1, 0.1)
        best = [precision[recall >= level].max() if (recall >= level).any() else 0.0 for level in levels]
        return float(np.sum(best) / 11.0)
    edges = np.concatenate([[0.0], recall, [1.0]])
    envelope = np.concatenate([[0.0], precision, [0.0]])
    envelope = np.maximum.accumulate(envelope[::-1])[::-1]
    steps = np.flatnonzero(edges[1:] != edges[:-1])
    return float(np.sum((edges[steps + 1] - edges[steps]) * envelope[steps + 1]))


def accumulate(evaluation: DetectionEval) -> DetectionAccumulation:
    """Precision and recall arrays as COCOeval's ``accumulate`` builds them, and the DOTA AP per class."""
    ev, params = evaluation, evaluation.params
    n_t, n_a = len(params.iou_thresholds), len(AREA_RANGES)
    max_dets = params.max_dets_list
    n_k, n_m, n_r = len(ev.classes), len(max_dets), len(RECALL_THRESHOLDS)
    precision = np.full((n_t, n_r, n_k, n_a, n_m), np.nan)
    recall = np.full((n_t, n_k, n_a, n_m), np.nan)
    dota_ap = np.full(n_k, np.nan)
    curves = []
    area_of = np.tile(np.arange(n_a), n_t)
    sorted_class = ev.det_class[ev.order]
    for k in range(n_k):
        in_class = ev.gt_class == k
        npig = np.count_nonzero(~ev.gt_ignored[:, in_class], axis=1)  # (A,)
        dets = ev.order[sorted_class == k]
        for m, cap in enumerate(max_dets):
            kept = dets[ev.rank[dets] < cap]
            hit = ev.det_gt[:, kept] >= 0
            ignored = ev.det_ignored[:, kept]
            tp = np.cumsum(hit & ~ignored, axis=1).astype(float)
            fp = np.cumsum(~hit & ~ignored, axis=1).astype(float)
            for c in range(n_t * n_a):
                a = area_of[c]
                if npig[a] == 0:
                    continue
                t = c // n_a
                rc = tp[c] / npig[a]
                pr = tp[c] / (fp[c] + tp[c] + np.spacing(1))
                recall[t, k, a, m] = rc[-1] if kept.size else 0.0
                if kept.size:
                    pr = np.maximum.accumulate(pr[::-1])[::-1]
                    at = np.searchsorted(rc, RECALL_THRESHOLDS, side="left")
                    precision[t, :, k, a, m] = np.where(at < kept.size, pr[np.minimum(at, kept.size - 1)], 0.0)
                else:
                    precision[t, :, k, a, m] = 0.0
        npos = np.count_nonzero(in_class & ~ev.gt_difficult)
        tp = np.cumsum(ev.dota_tp[dets]).astype(float)
        fp = np.cumsum(ev.dota_fp[dets]).astype(float)
        if npos:
            rec = tp / npos
            prec = tp / np.maximum(tp + fp, np.finfo(np.float64).eps)
            dota_ap[k] = voc_ap(rec, prec, eleven_point=params.ap_rule == "voc07")
            curves.append((rec, prec))
        else:
            curves.append((np.zeros(0), np.zeros(0)))
    return DetectionAccumulation(ev.classes, precision, recall, dota_ap, tuple(curves), params)


def _mean(values: np.ndarray) -> float:
    """COCOeval's ``_summarize``: the mean of the defined entries, NaN when there are none."""
    defined = values[~np.isnan(values)]
    return float(np.mean(defined)) if defined.size else float("nan")


def summarize_detections(acc: DetectionAccumulation) -> tuple[dict, dict]:
    """The metric-dict keys of the COCO and DOTA rules, overall and per class.

    Returns
    -------
    overall : dict
        ``map50_95, map50, map75, map_small, map_medium, map_large, mar_1, mar_10, mar_<N>``
        (``N`` = ``max_dets``, 100 by default), ``dota_map50``, ``max_dets``, ``ap_rule``.
    per_class : dict
        ``{class_id: {"ap50", "ap50_95", "dota_ap50"}}``.
    """
    params = acc.params
    max_dets = params.max_dets_list
    last = len(max_dets) - 1
    thresholds = np.asarray(params.iou_thresholds)
    at_50 = np.flatnonzero(np.isclose(thresholds, 0.5))
    at_75 = np.flatnonzero(np.isclose(thresholds, 0.75))
    p = acc.precision
    overall = {
        "map50_95": _mean(p[:, :, :, 0, last]),
        "map50": _mean(p[at_50][:, :, :, 0, last]),
        "map75": _mean(p[at_75][:, :, :, 0, last]),
        "map_small": _mean(p[:, :, :, 1, last]),
        "map_medium": _mean(p[:, :, :, 2, last]),
        "map_large": _mean(p[:, :, :, 3, last]),
    }
    for m, cap in enumerate(max_dets):
        overall[f"mar_{cap}"] = _mean(acc.recall[:, :, 0, m])
    overall["dota_map50"] = _mean(acc.dota_ap)
    overall["max_dets"] = int(params.max_dets)
    overall["ap_rule"] = params.ap_rule
    per_class = {}
    for k, class_id in enumerate(acc.classes.tolist()):
        per_class[int(class_id)] = {
            "ap50": _mean(p[at_50][:, :, k, 0, last]),
            "ap50_95": _mean(p[:, :, k, 0, last]),
            "dota_ap50": float(acc.dota_ap[k]),
        }
    return overall, per_class
