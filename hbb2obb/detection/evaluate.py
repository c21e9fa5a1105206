"""Detection metrics of oriented boxes: rotated AP by the COCO and the DOTA devkit rules.

When the boxes come from a detector, what people ask first is precision, recall and mean
average precision. Three COCOeval-like steps, on exact polygon IoU:

* :func:`evaluate_detections` matches the detections of every frame and class greedily in
  score order, for every COCO IoU threshold and area range at once (vectorized over frames),
  and applies the DOTA devkit's rule at IoU 0.5;
* :func:`~hbb2obb.detection.accumulate.accumulate` builds COCO's precision
  ``(T, R, K, A, M)`` and recall ``(T, K, A, M)`` arrays and the DOTA devkit's AP per class;
* :func:`~hbb2obb.detection.accumulate.summarize_detections` gives the metric-dict keys
  (``map50_95`` ... ``dota_map50``).

The last two live in :mod:`hbb2obb.detection.accumulate`; this module evaluates.

Ties in score are broken by frame order (files sorted by name), then line order, as COCOeval's
stable sorts break them when image ids follow frame order. Difficult ground-truth boxes follow
:attr:`DetectionParams.difficult` under the COCO rule: ``ignore`` (default) makes them COCO crowd
regions as COCOeval treats ``iscrowd: 1`` (overlap = intersection over the detection's area; a
detection matched to one is neither hit nor miss; never counted toward recall), ``count`` makes
them ordinary boxes (as the devkit's DOTA-to-COCO conversion keeps them). The DOTA rule always
ignores them, as the devkit does. Undefined values (a class without ground truth) are NaN, where COCOeval
writes -1, and are left out of every mean.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from hbb2obb.boxes import Boxes
from hbb2obb.errors import UsageError
from hbb2obb.geometry import polygon_area, sparse_pairwise_iou
from hbb2obb.geometry.matching import best_pair_rows

COCO_IOU_THRESHOLDS = np.linspace(0.5, 0.95, 10)  # as COCOeval's Params builds them
RECALL_THRESHOLDS = np.linspace(0.0, 1.0, 101)
AREA_RANGES = (("all", 0.0, 1e10), ("small", 0.0, 32.0**2), ("medium", 32.0**2, 96.0**2), ("large", 96.0**2, 1e10))
"""COCO's ranges in px^2 of the ground-truth box, bounds inclusive on both sides as COCOeval tests them."""
DEFAULT_MAX_DETS = 100
DIFFICULT_RULES = ("ignore", "count")
"""COCO rule: difficult boxes as crowd regions (``ignore``, default) or as ordinary boxes (``count``)."""
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
    count_missing : bool
        A ground-truth frame without a prediction file is a frame with no detections (its boxes
        are misses), even where the matching keys skip it (``missing_pred="skip"``). Detectors
        write no file for a frame where they found nothing: skipping those frames would drop
        their ground truth and lift every score. ``False`` only when the user asked to skip them.
    difficult : {"ignore", "count"}
        COCO rule: difficult boxes are crowd regions as COCOeval treats ``iscrowd: 1``
        (``ignore``) or ordinary boxes (``count``). The DOTA rule ignores them either way.
    """

    max_dets: int = DEFAULT_MAX_DETS
    ap_rule: str = "voc07"
    conf: Optional[float] = None
    count_missing: bool = True
    difficult: str = "ignore"
    iou_thresholds: np.ndarray = field(default_factory=lambda: COCO_IOU_THRESHOLDS.copy())

    def __post_init__(self):
        if int(self.max_dets) != self.max_dets or self.max_dets < 10:
            # COCOeval sorts its maxDets and reports AR at 1 and 10 besides: a smaller cap has no meaning there
            raise UsageError(f"--max_dets must be an integer of at least 10, got {self.max_dets}")
        if self.difficult not in DIFFICULT_RULES:
            raise UsageError(f"--difficult must be one of {', '.join(DIFFICULT_RULES)}, got {self.difficult!r}")
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
    rows are those of the input (frame order, then line order). Most detections meet no
    competition for their box (their only candidate at IoU 0.5 or more, and its only one): such
    a detection matches ``simple_gt`` at the first ``level`` thresholds, in every area range.
    The others are "contested" and have their match per configuration in ``contested_gt``.

    Attributes
    ----------
    classes : (K,) int64
        Sorted classes of both sides; ``gt_class`` and ``det_class`` index them.
    order : (n_det,) int64
        Detections by descending score, ties in row order.
    rank : (n_det,) int64
        Position of each detection among those of its frame and class, by the same order.
    level, simple_gt : (n_det,) int64
        Uncontested detections: thresholds reached, and the box (-1: none).
    contested_pos : (n_det,) int64
        Column of a contested detection in ``contested_gt``, -1 for the others.
    contested_gt : (C, n_contested) int64
        COCO rule: the matched ground-truth row, -1 where unmatched.
    gt_ignored, det_outside : (A, n_gt) and (A, n_det) bool
        COCO's ``gtIg`` per area range, and which detections lie outside each range.
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
    level: np.ndarray
    simple_gt: np.ndarray
    contested_pos: np.ndarray
    contested_gt: np.ndarray
    gt_ignored: np.ndarray
    det_outside: np.ndarray
    dota_tp: np.ndarray
    dota_fp: np.ndarray
    params: DetectionParams

    def ever_scored(self, area: int, dets: np.ndarray) -> np.ndarray:
        """Which of the detections are not ignored at some threshold, in one area range (a cheap superset)."""
        return self._ever_scored(area, self.level[dets], self.simple_gt[dets], self.contested_pos[dets],
                                 self.det_outside[area, dets])

    def _ever_scored(self, area: int, level, box, position, outside) -> np.ndarray:
        """:meth:`ever_scored` from the detections' ``level, simple_gt, contested_pos`` and ``det_outside[area]``."""
        on_counted_box = (level > 0) & ~self.gt_ignored[area, np.maximum(box, 0)]
        return ~outside | on_counted_box | (position >= 0)

    def flags(self, area: int, dets: np.ndarray, n_thresholds: Optional[int] = None) -> tuple[np.ndarray, np.ndarray]:
        """COCO's matched and not-ignored flags ``(T, len(dets))`` of some detections in one area range.

        A matched detection is ignored when its box is (``dtIg = gtIg[m]``), an unmatched one
        when it lies outside the range. ``n_thresholds``: only the first so many thresholds
        (rows), all when omitted.
        """
        return self._flags(area, self.level[dets], self.simple_gt[dets], self.contested_pos[dets],
                           self.det_outside[area, dets], n_thresholds)

    def _flags(self, area: int, level, box, position, outside, n_thresholds=None) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`flags` from the detections' ``level, simple_gt, contested_pos`` and ``det_outside[area]``.

        The detections' values gathered once serve every area range and both steps (the
        gathers are in score order, which is no order of the rows).
        """
        n_t = len(self.params.iou_thresholds) if n_thresholds is None else n_thresholds
        hit = level[None, :] > np.arange(n_t)[:, None]
        # not ignored = ~where(hit, box ignored, outside), as bit operations on the flags
        # (np.where broadcasting booleans is ten times slower): ~outside ^ (hit & (box ignored ^ outside))
        scored = hit & (self.gt_ignored[area, np.maximum(box, 0)] ^ outside)[None, :]
        np.logical_xor(scored, ~outside[None, :], out=scored)
        some = np.flatnonzero(position >= 0)
        if some.size:
            rows = np.arange(n_t) * self.gt_ignored.shape[0] + area
            matched = self.contested_gt[rows[:, None], position[some][None, :]]  # only these detections' columns
            hit[:, some] = matched >= 0
            scored[:, some] = ~np.where(matched >= 0, self.gt_ignored[area, np.maximum(matched, 0)],
                                        outside[some][None, :])
        return hit, scored


def frame_pairs(gt: Boxes, gt_frame, pred: Boxes, pred_frame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Class-agnostic pairs of one frame's boxes with positive exact IoU: ``(gt, pred, iou)``.

    Examples
    --------
    >>> square = [[0, 0], [2, 0], [2, 2], [0, 2]]
    >>> g, p, v = frame_pairs(Boxes([square], [0]), [0], Boxes([square, square], [1, 0]), [0, 1])
    >>> g.tolist(), p.tolist(), v.tolist()
    ([0], [0], [1.0])
    """
    pair_gt, pair_pred, iou = sparse_pairwise_iou(
        gt.corners,
        pred.corners,
        a_group=np.asarray(gt_frame, dtype=np.int64),
        b_group=np.asarray(pred_frame, dtype=np.int64),
    )
    positive = iou > 0
    return pair_gt[positive], pair_pred[positive], iou[positive]


def _dense(values: np.ndarray, classes: np.ndarray) -> np.ndarray:
    return np.searchsorted(classes, values).astype(np.int64)


def _ranks(order: np.ndarray, group: np.ndarray) -> np.ndarray:
    """Each row's position within its group, groups visited in ``order``."""
    n = order.size
    top = int(group.max()) + 1 if n else 0
    if n and group.min() >= 0 and top <= (2**62) // n:
        # by group, then by position in ``order``: one key per row, all distinct, so any sort
        # gives this permutation, and an unstable sort of it is twice as fast as a stable one
        position = np.empty(n, dtype=np.int64)
        position[order] = np.arange(n)
        by_group = np.argsort(group.astype(np.int64) * n + position)
    else:
        by_group = order[np.argsort(group[order], kind="stable")]  # by group, then by ``order``
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
    classes = np.unique(np.concatenate([gt.class_id, pred.class_id])).astype(np.int64)
    gt_class, det_class = _dense(gt.class_id, classes), _dense(pred.class_id, classes)
    difficult = np.zeros(len(gt), dtype=bool) if gt.difficult is None else gt.difficult.copy()
    region = np.zeros(len(gt), dtype=bool) if gt.crowd is None else gt.crowd  # COCO iscrowd, under either rule
    difficult |= region  # the DOTA rule ignores a crowd region as it ignores a difficult box
    same = gt_class[pair_gt] == det_class[pair_pred]
    pair_gt, pair_pred, pair_iou = pair_gt[same], pair_pred[same], pair_iou[same]
    order = np.argsort(-pred.score, kind="stable")
    span = max(len(classes), 1)
    rank = _ranks(order, pred_frame * span + det_class)
    gt_area, det_area = polygon_area(gt.corners), polygon_area(pred.corners)
    crowd = difficult if params.difficult == "ignore" else region
    gt_ignored = np.stack([crowd | (gt_area < lo) | (gt_area > hi) for _, lo, hi in AREA_RANGES])
    det_outside = np.stack([(det_area < lo) | (det_area > hi) for _, lo, hi in AREA_RANGES])
    coco_iou = _crowd_overlap(pair_gt, pair_pred, pair_iou, crowd, gt_area, det_area)
    matches = _coco_matches(pair_gt, pair_pred, coco_iou, rank, len(gt), len(pred), gt_ignored, crowd,
                            params.iou_thresholds)
    dota_tp, dota_fp = _dota_flags(pair_gt, pair_pred, pair_iou, order, len(pred), difficult)
    return DetectionEval(classes, gt_class, det_class, difficult, pred.score, order, rank, *matches,
                         gt_ignored, det_outside, dota_tp, dota_fp, params)


def _crowd_overlap(pair_gt, pair_pred, pair_iou, crowd, gt_area, det_area) -> np.ndarray:
    """The pairs' overlap as COCOeval measures it: IoU, but intersection over the detection's area on a crowd box.

    The intersection is recovered from the IoU and the two areas: ``I = IoU (A_g + A_d) / (1 + IoU)``.
    """
    on_crowd = crowd[pair_gt] if pair_gt.size else np.zeros(0, dtype=bool)
    if not on_crowd.any():
        return pair_iou
    overlap = pair_iou.astype(np.float64, copy=True)
    iou = pair_iou[on_crowd]
    g, d = pair_gt[on_crowd], pair_pred[on_crowd]
    intersection = iou * (gt_area[g] + det_area[d]) / (1.0 + iou)
    with np.errstate(divide="ignore", invalid="ignore"):
        overlap[on_crowd] = np.where(det_area[d] > 0, np.minimum(intersection / det_area[d], 1.0), 0.0)
    return overlap


def _coco_matches(pair_gt, pair_pred, pair_iou, rank, n_gt, n_det, gt_ignored, crowd, thresholds) -> tuple:
    """COCOeval's greedy matching for every (threshold, area range) at once.

    A pair whose detection and box have no other pair within reach (IoU at least the lowest
    threshold) meets no competition: the detection takes the box wherever the IoU reaches the
    threshold, whatever the area range. Most pairs are such. The other detections are visited
    in turns (:func:`_turns`): the k-th detection by rank of every cluster of detections that
    reach common boxes is matched in the same step, as clusters share no ground truth, so a
    dense frame takes as many steps as its largest cluster has detections, not as it has
    detections of one class. Each takes, among the boxes not yet taken
    (crowd boxes can be taken again) with IoU at least the threshold, a non-ignored box before
    an ignored one, then the highest IoU, then the later box: what COCOeval's inner loop picks.

    Returns
    -------
    level, simple_gt, contested_pos, contested_gt
        As :class:`DetectionEval` holds them.
    """
    n_area = gt_ignored.shape[0]
    cut = np.minimum(np.asarray(thresholds, dtype=np.float64), 1 - 1e-10)
    limits = np.repeat(cut, n_area)
    area_of = np.tile(np.arange(n_area), len(thresholds))
    level = np.zeros(n_det, dtype=np.int64)
    simple_gt = np.full(n_det, -1, dtype=np.int64)
    contested_pos = np.full(n_det, -1, dtype=np.int64)
    reach = pair_iou >= cut.min() if pair_iou.size else np.zeros(0, dtype=bool)
    pg, pd, pv = pair_gt[reach], pair_pred[reach], pair_iou[reach]
    alone = (np.bincount(pd, minlength=n_det)[pd] == 1) & (np.bincount(pg, minlength=n_gt)[pg] == 1)
    simple_gt[pd[alone]] = pg[alone]
    level[pd[alone]] = (pv[alone][:, None] >= cut[None, :]).sum(axis=1)  # thresholds are increasing
    pg, pd, pv = pg[~alone], pd[~alone], pv[~alone]
    contested = np.unique(pd)
    contested_pos[contested] = np.arange(contested.size)
    contested_gt = np.full((limits.size, contested.size), -1, dtype=np.int64)
    if pd.size == 0:
        return level, simple_gt, contested_pos, contested_gt
    # only the contested boxes can be taken: their sorted rows and each pair's index among them
    # (np.unique(pg, return_inverse=True), by a table of the boxes instead of a sort)
    present = np.zeros(n_gt, dtype=bool)
    present[pg] = True
    boxes = np.flatnonzero(present)
    local_gt = (np.cumsum(present) - 1)[pg]
    taken = np.zeros((limits.size, boxes.size), dtype=bool)
    pair_det = contested_pos[pd]
    step = _turns(local_gt, pair_det, rank[contested])[pair_det]  # each pair's detection's turn
    # pairs by turn, then by detection, each detection's best first (highest IoU, then later box)
    by_turn = np.lexsort((-pg, -pv, pd, step))
    pg, pd, pv, local_gt, step = pg[by_turn], pd[by_turn], pv[by_turn], local_gt[by_turn], step[by_turn]
    bounds = _batches(step, pd)
    reusable = crowd[pg]
    ignored = gt_ignored[area_of][:, pg]  # (C, P)
    for start, stop in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
        g, lg, d, v = pg[start:stop], local_gt[start:stop], pd[start:stop], pv[start:stop]
        ok = v[None, :] >= limits[:, None]
        ok &= ~(taken[:, lg] & ~reusable[None, start:stop])
        cc, pp = np.nonzero(ok)  # by (threshold, area) row, then pair: each detection's candidates best first
        if cc.size == 0:
            continue
        dd = d[pp]
        starts = np.flatnonzero(np.concatenate([[True], (cc[1:] != cc[:-1]) | (dd[1:] != dd[:-1])]))
        # per row and detection: its first candidate that is not ignored, else its first
        pick = np.minimum.reduceat(ignored[cc, start + pp] * cc.size + np.arange(cc.size), starts) % cc.size
        cc, pp = cc[pick], pp[pick]
        contested_gt[cc, contested_pos[d[pp]]] = g[pp]
        taken[cc, lg[pp]] = True
    return level, simple_gt, contested_pos, contested_gt


def _batches(step: np.ndarray, det: np.ndarray) -> np.ndarray:
    """Where the sorted contested pairs are cut into batches matched at once (with both ends).

    A batch never spans two steps nor splits one detection's pairs; a step whose pairs pass
    :data:`_BATCH_PAIRS` is cut at detection boundaries (its detections are independent), so the
    work arrays of a step, a row per threshold and area range, stay small on a dense frame.
    """
    n = step.size
    new_step = np.concatenate([[True], step[1:] != step[:-1]])
    new_det = np.flatnonzero(new_step | np.concatenate([[False], det[1:] != det[:-1]]))
    step_start = np.maximum.accumulate(np.where(new_step, np.arange(n), 0))[new_det]
    bucket = (new_det - step_start) // _BATCH_PAIRS
    cut = new_step[new_det] | np.concatenate([[True], bucket[1:] != bucket[:-1]])
    return np.concatenate([new_det[cut], [n]])


_BATCH_PAIRS = 4096  # contested pairs matched at once, at most (plus one detection's)
_CLUSTER_ROUNDS = 64  # label-spreading rounds before a chain of contests is matched by rank alone


def _turns(box, det, rank) -> np.ndarray:
    """When each contested detection is matched: its place by rank within its cluster.

    A cluster is a connected set of detections and boxes, linked by the pairs ``(box[i],
    det[i])``. Greedy matching within one cluster never looks at another's boxes, so the
    clusters can go step by step side by side. The clusters come from spreading the smallest
    detection label over the pairs until nothing changes; a chain too long for
    :data:`_CLUSTER_ROUNDS` rounds falls back to the rank within frame and class (every
    detection of a frame and class in its own step: the same matches, more steps).

    Parameters
    ----------
    box, det : (p,) int
        The contested pairs: boxes and detections as indices from 0, every detection in a pair.
    rank : (c,) int
        Each detection's position by score within its frame and class.

    Returns
    -------
    (c,) int64
        Each detection's turn.

    Examples
    --------
    >>> _turns(np.array([0, 0, 1, 1]), np.array([0, 1, 2, 3]), np.array([0, 1, 0, 3])).tolist()
    [0, 1, 0, 1]
    """
    label = np.arange(rank.size)
    box_label = np.empty(int(box.max()) + 1 if box.size else 0, dtype=label.dtype)
    for _ in range(_CLUSTER_ROUNDS):
        box_label.fill(rank.size)
        np.minimum.at(box_label, box, label[det])
        spread = label.copy()
        np.minimum.at(spread, det, box_label[box])
        if np.array_equal(spread, label):
            return _ranks(np.argsort(rank, kind="stable"), label)
        label = spread
    return np.asarray(rank, dtype=np.int64)


def _dota_flags(pair_gt, pair_pred, pair_iou, order, n_det, difficult) -> tuple[np.ndarray, np.ndarray]:
    """The DOTA devkit's hits and misses at IoU 0.5.

    Each detection's best box is its highest-IoU box of its frame and class, taken or not (the
    first box on a tie); a hit when that IoU is above 0.5 and the box is neither difficult nor
    taken by a higher-ranked detection; a detection on a difficult box is neither.
    """
    best_iou = np.zeros(n_det)
    best_gt = np.full(n_det, -1, dtype=np.int64)
    if pair_iou.size:
        rows = best_pair_rows(pair_pred, pair_gt, pair_iou, n_det)  # the first box on a tie
        best_iou[pair_pred[rows]] = pair_iou[rows]
        best_gt[pair_pred[rows]] = pair_gt[rows]
    over = best_iou > DOTA_IOU
    on_difficult = over & difficult[np.maximum(best_gt, 0)] if difficult.size else np.zeros(n_det, dtype=bool)
    contender = over & ~on_difficult
    tp = np.zeros(n_det, dtype=bool)
    ranked = order[contender[order]]  # contenders by descending score: the first on each box wins it
    if ranked.size:
        # the first contender of each box: np.unique(..., return_index=True) without its stable sort
        first_of_box = np.full(len(difficult), ranked.size, dtype=np.int64)
        np.minimum.at(first_of_box, best_gt[ranked], np.arange(ranked.size))
        tp[ranked[first_of_box[first_of_box < ranked.size]]] = True
    fp = ~tp & ~on_difficult
    return tp, fp
