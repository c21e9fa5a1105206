"""Why the AP is what it is: TIDE's error decomposition (Bolya et al., ECCV 2020) for rotated boxes.

Every false positive and every missed ground-truth box gets one error type, and each type's
weight is its dAP: the AP once an oracle fixes just the errors of that type, minus the AP. The
types and thresholds are TIDE's (``tidecv``): foreground ``fg`` 0.5, background ``bg`` 0.1.
A false positive (a counted detection that matched nothing at IoU ``fg``) is, tested in turn:

1. **bkg** when its frame holds no counted ground truth;
2. **loc** when its best IoU with a box of its own class is in ``[bg, fg]``;
3. **cls** when its best IoU with a box of another class is at least ``fg``;
4. **dupe** when its best IoU with a box of its class that another detection took is at least ``fg``;
5. **bkg** when its best IoU with any box is at most ``bg``;
6. **both** otherwise (wrong class and badly placed).

**orient**, which TIDE lacks, is taken out of **loc**: a localization error whose IoU reaches
``fg`` once the detection is turned about its centre to its box's heading (long side along the
box's long side). A ground-truth box that no detection took is **miss** unless some cls, loc or
orient error points at it (fixing that error recovers it).

The oracles, as tidecv applies them: a cls, loc or orient error on a free box becomes a hit on
it (a cls error in the box's class) when it is the highest-scored such error on that box, and is
removed otherwise; a dupe, bkg or both error is removed; a missed box stops counting. ``fp``
removes every false positive, ``fn`` stops counting every box no detection took. Main dAPs are
clipped at 0 as tidecv clips them (the 101-point sampling can move an AP down by a hair), the
``fp`` and ``fn`` ones are not.

The matching and the AP are those of the COCO rule at the one threshold ``fg``
(:func:`~hbb2obb.detection.evaluate.evaluate_detections`,
:func:`~hbb2obb.detection.accumulate.class_ap`): at ``fg = 0.5`` the decomposition's AP is
``map50``. Where tidecv differs (its recall levels ``x / 100``, its cap of detections per frame
rather than per frame and class, a class without ground truth scored 0 rather than left out,
the first box rather than the last on an IoU tie) docs/analyze.md says so.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Optional

import numpy as np

from hbb2obb.boxes import Boxes
from hbb2obb.detection.accumulate import class_ap
from hbb2obb.detection.evaluate import DetectionParams, evaluate_detections, frame_pairs
from hbb2obb.errors import UsageError
from hbb2obb.geometry import box_centers, iou_pairs, orientation

ERROR_TYPES = ("cls", "loc", "both", "dupe", "bkg", "miss", "orient")
"""The main error types, TIDE's order, orientation last."""
FALSE_POSITIVE_TYPES = ERROR_TYPES[:5] + ("orient",)
SPECIAL_TYPES = ("fp", "fn")
_CODE = {name: code for code, name in enumerate(ERROR_TYPES)}


@dataclass(frozen=True)
class TideParams:
    """Thresholds of the decomposition; validated on construction.

    Parameters
    ----------
    fg : float
        Foreground IoU: a hit at or above it (TIDE's ``pos_threshold``).
    bg : float
        Background IoU: a false positive at or below it with every box is background.
    orientation : bool
        Split the orientation errors out of the localization errors (``False``: TIDE's six types).
    """

    fg: float = 0.5
    bg: float = 0.1
    orientation: bool = True

    def __post_init__(self):
        if not (np.isfinite(self.fg) and np.isfinite(self.bg) and 0.0 < self.bg <= self.fg < 1.0):
            raise UsageError(f"--tide_bg and --tide_fg must satisfy 0 < bg <= fg < 1, got bg {self.bg}, fg {self.fg}")


@dataclass(frozen=True)
class ErrorDecomposition:
    """Every detection's and box's part in the decomposition, and the dAP of each error type.

    Attributes
    ----------
    classes : (K,) int64
        Sorted classes of both sides.
    det_class, det_frame, det_score : (n_det,)
        Dense class, frame and score of every detection (input rows).
    order : (n_det,) int64
        Detections by descending score, ties in row order.
    counted : (n_det,) bool
        Detections the AP counts: not on a crowd or difficult region, within ``max_dets``.
    hit : (n_det,) bool
        Counted detections that took a box at IoU ``fg``.
    matched_gt : (n_det,) int64
        The box a hit took, -1 for the others.
    error : (n_det,) int64
        Index into :data:`ERROR_TYPES` of each false positive, -1 for hits and uncounted detections.
    target_gt : (n_det,) int64
        The box a cls, loc or orient error points at, -1 for the others.
    gt_class, gt_frame : (n_gt,)
    gt_counted, gt_missed : (n_gt,) bool
        Boxes the AP counts, and those of them that are missed errors.
    ap, class_ap : float, (K,) float
        AP at ``fg`` (mean over classes with counted boxes) and per class (NaN without).
    counts, class_counts : dict
        Per type (:data:`ERROR_TYPES`): its number of errors, overall and per class ``(K,)``
        (a false positive in its detection's class, a missed box in its own).
    dap, class_dap : dict
        Per type, and for ``fp`` and ``fn``: the dAP, overall and per class ``(K,)``.
    """

    classes: np.ndarray
    det_class: np.ndarray
    det_frame: np.ndarray
    det_score: np.ndarray
    order: np.ndarray
    counted: np.ndarray
    hit: np.ndarray
    matched_gt: np.ndarray
    error: np.ndarray
    target_gt: np.ndarray
    gt_class: np.ndarray
    gt_frame: np.ndarray
    gt_counted: np.ndarray
    gt_missed: np.ndarray
    ap: float
    class_ap: np.ndarray
    counts: dict
    class_counts: dict
    dap: dict
    class_dap: dict
    tide: TideParams

    def error_of(self, name: str) -> np.ndarray:
        """Which detections are errors of type ``name`` (for ``miss``: which boxes)."""
        return self.gt_missed.copy() if name == "miss" else self.error == _CODE[name]


def _nanmean(values: np.ndarray) -> float:
    defined = values[~np.isnan(values)]
    return float(defined.mean()) if defined.size else float("nan")


def class_aps(order, det_class, hits, counted, npos) -> np.ndarray:
    """AP per class (NaN where ``npos`` is not positive) of the counted detections, in ``order``."""
    out = np.full(len(npos), np.nan)
    ranked = order[counted[order]]
    ranked_class = det_class[ranked]
    for k in np.flatnonzero(npos > 0).tolist():
        out[k] = class_ap(hits[ranked[ranked_class == k]], npos[k])
    return out


def _best(pair_det, pair_gt, pair_iou, n_det) -> tuple[np.ndarray, np.ndarray]:
    """Each detection's highest IoU among the pairs and its box (the first row on a tie, as numpy's
    argmax in tidecv); 0 and -1 without a pair."""
    value, box = np.zeros(n_det), np.full(n_det, -1, dtype=np.int64)
    if pair_det.size:
        rows = np.lexsort((pair_gt, -pair_iou, pair_det))
        first = np.concatenate([[True], pair_det[rows[1:]] != pair_det[rows[:-1]]])
        value[pair_det[rows[first]]] = pair_iou[rows[first]]
        box[pair_det[rows[first]]] = pair_gt[rows[first]]
    return value, box


def turned_iou(pred_corners: np.ndarray, gt_corners: np.ndarray) -> np.ndarray:
    """IoU of each prediction turned about its centre to the heading of its aligned ground-truth box.

    The turn brings the prediction's long side along the box's long side (headings modulo 180,
    :func:`~hbb2obb.geometry.orientation`); size and centre are kept.

    Examples
    --------
    >>> wide = [[[0, 4], [20, 4], [20, 14], [0, 14]]]
    >>> tall = [[[5, -1], [15, -1], [15, 19], [5, 19]]]
    >>> turned_iou(np.array(wide, float), np.array(tall, float)).round(6).tolist()
    [1.0]
    """
    if not len(pred_corners):
        return np.zeros(0)
    turn = np.radians(orientation(gt_corners) - orientation(pred_corners))
    centre = box_centers(pred_corners)[:, None, :]
    offset = pred_corners - centre
    cos, sin = np.cos(turn)[:, None], np.sin(turn)[:, None]
    turned = np.stack([offset[..., 0] * cos - offset[..., 1] * sin, offset[..., 0] * sin + offset[..., 1] * cos],
                      axis=-1) + centre
    return iou_pairs(turned, gt_corners)


def decompose_errors(gt: Boxes, gt_frame, pred: Boxes, pred_frame, pairs=None,
                     params: Optional[DetectionParams] = None, tide: Optional[TideParams] = None) -> ErrorDecomposition:
    """TIDE's error decomposition of scored detections, with orientation errors apart.

    Parameters
    ----------
    gt, pred, gt_frame, pred_frame, pairs, params
        As :func:`~hbb2obb.detection.evaluate.evaluate_detections` takes them (its IoU
        thresholds are replaced by ``tide.fg``); default :class:`DetectionParams`.
    tide : TideParams, optional
        Default :class:`TideParams`.

    Returns
    -------
    ErrorDecomposition
    """
    params, tide = params or DetectionParams(), tide or TideParams()
    gt_frame, pred_frame = np.asarray(gt_frame, dtype=np.int64), np.asarray(pred_frame, dtype=np.int64)
    if pairs is None:
        pairs = frame_pairs(gt, gt_frame, pred, pred_frame)
    at_fg = dataclasses.replace(params, iou_thresholds=np.array([tide.fg]))
    ev = evaluate_detections(gt, gt_frame, pred, pred_frame, pairs, at_fg)
    n_det, n_gt, n_k = len(pred), len(gt), len(ev.classes)
    hit, scored = ev.flags(0, np.arange(n_det))
    counted = scored[0] & (ev.rank < params.max_dets)
    hit = hit[0] & counted
    matched = np.where(hit & (ev.level > 0), ev.simple_gt, -1)
    contested = hit & (ev.contested_pos >= 0)
    matched[contested] = ev.contested_gt[0, ev.contested_pos[contested]]
    gt_counted = ~ev.gt_ignored[0]
    used = np.zeros(n_gt, dtype=bool)
    used[matched[hit]] = True

    # the IoUs tidecv tests, over the counted boxes only (crowd and difficult regions are not candidates)
    pair_gt, pair_det, pair_iou = (np.asarray(a) for a in pairs)
    keep = gt_counted[pair_gt] if pair_gt.size else np.zeros(0, dtype=bool)
    pair_gt, pair_det, pair_iou = pair_gt[keep], pair_det[keep], pair_iou[keep]
    same = ev.gt_class[pair_gt] == ev.det_class[pair_det]
    best_same, same_gt = _best(pair_det[same], pair_gt[same], pair_iou[same], n_det)
    best_other, other_gt = _best(pair_det[~same], pair_gt[~same], pair_iou[~same], n_det)
    on_used = same & used[pair_gt]
    best_used, _ = _best(pair_det[on_used], pair_gt[on_used], pair_iou[on_used], n_det)
    best_any, _ = _best(pair_det, pair_gt, pair_iou, n_det)
    frame_has_gt = np.zeros(int(max(gt_frame.max(initial=-1), pred_frame.max(initial=-1))) + 1, dtype=bool)
    frame_has_gt[gt_frame[gt_counted]] = True

    false_positive = counted & ~hit
    empty_frame = false_positive & ~frame_has_gt[pred_frame]
    rest = false_positive & ~empty_frame
    loc = rest & (best_same >= tide.bg) & (best_same <= tide.fg)
    cls = rest & ~loc & (best_other >= tide.fg)
    dupe = rest & ~loc & ~cls & (best_used >= tide.fg)
    bkg = empty_frame | (rest & ~loc & ~cls & ~dupe & (best_any <= tide.bg))
    both = rest & ~loc & ~cls & ~dupe & ~bkg
    orient = np.zeros(n_det, dtype=bool)
    if tide.orientation and loc.any():
        rows = np.flatnonzero(loc)
        orient[rows] = turned_iou(pred.corners[rows], gt.corners[same_gt[rows]]) >= tide.fg
        loc &= ~orient
    error = np.full(n_det, -1, dtype=np.int64)
    for name, mask in (("cls", cls), ("loc", loc), ("both", both), ("dupe", dupe), ("bkg", bkg), ("orient", orient)):
        error[mask] = _CODE[name]
    target = np.full(n_det, -1, dtype=np.int64)
    target[cls] = other_gt[cls]
    target[loc | orient] = same_gt[loc | orient]

    # tidecv's BestGTMatch: of the cls, loc and orient errors on a free box, the highest-scored
    # (the first in frame then score order on a tie) is the one its oracle turns into a hit
    fixable = np.flatnonzero((target >= 0) & ~used[np.maximum(target, 0)])
    usable = np.zeros(n_gt, dtype=bool)
    usable[target[fixable]] = True
    ranked = fixable[np.lexsort((fixable, -ev.det_score[fixable], pred_frame[fixable]))]
    best_of_box = np.full(n_gt, -1, dtype=np.int64)
    for d in ranked[::-1].tolist():  # the last write of each box is its first error in that order
        best_of_box[target[d]] = d
    winner = np.zeros(n_det, dtype=bool)
    winner[best_of_box[best_of_box >= 0]] = True
    missed = gt_counted & ~used & ~usable

    npos = np.bincount(ev.gt_class[gt_counted], minlength=n_k).astype(np.float64)
    base = class_aps(ev.order, ev.det_class, hit, counted, npos)
    fixed = {}
    for name in ERROR_TYPES:
        det_class, hits, kept, boxes = ev.det_class, hit, counted, npos
        mask = error == _CODE[name]
        if name in ("cls", "loc", "orient"):
            fix = mask & winner
            hits = hit | fix
            kept = counted & ~(mask & ~fix)
            if name == "cls":
                det_class = ev.det_class.copy()
                det_class[fix] = ev.gt_class[target[fix]]
        elif name == "miss":
            boxes = npos - np.bincount(ev.gt_class[missed], minlength=n_k)
        else:
            kept = counted & ~mask
        fixed[name] = class_aps(ev.order, det_class, hits, kept, boxes)
    fixed["fp"] = class_aps(ev.order, ev.det_class, hit, counted & ~false_positive, npos)
    fixed["fn"] = class_aps(ev.order, ev.det_class, hit, counted, np.bincount(ev.gt_class[used], minlength=n_k)
                            .astype(np.float64))
    ap = _nanmean(base)
    dap, class_dap = {}, {}
    for name, values in fixed.items():
        change = _nanmean(values) - ap
        per_class = values - base
        if name not in SPECIAL_TYPES:  # as tidecv: a main dAP below 0 is a sampling artefact
            change, per_class = max(change, 0.0), np.where(np.isnan(per_class), np.nan, np.maximum(per_class, 0.0))
        dap[name], class_dap[name] = float(change), per_class
    counts, class_counts = {}, {}
    for name in ERROR_TYPES:
        of_class = ev.gt_class[missed] if name == "miss" else ev.det_class[error == _CODE[name]]
        class_counts[name] = np.bincount(of_class, minlength=n_k)
        counts[name] = int(class_counts[name].sum())
    return ErrorDecomposition(ev.classes, ev.det_class, pred_frame, ev.det_score, ev.order, counted, hit, matched,
                              error, target, ev.gt_class, gt_frame, gt_counted, missed, ap, base, counts,
                              class_counts, dap, class_dap, tide)
