"""Accumulate and summarize detection metrics: COCO's precision and recall arrays, the DOTA
devkit's AP, and the metric-dict keys.

The second and third of the three COCOeval-like steps of :mod:`hbb2obb.detection.evaluate`
(which evaluates: matches detections to ground truth per threshold and area range):

* :func:`accumulate` builds COCO's precision ``(T, R, K, A, M)`` and recall ``(T, K, A, M)``
  arrays and the DOTA devkit's AP per class;
* :func:`summarize_detections` gives the metric-dict keys (``map50_95`` ... ``dota_map50``).

Undefined values (a class without ground truth) are NaN, where COCOeval writes -1, and are left
out of every mean.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hbb2obb.detection.evaluate import AREA_RANGES, RECALL_THRESHOLDS, DetectionEval, DetectionParams


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


def _curve(tp_flags: np.ndarray, scored: np.ndarray, npig: int) -> tuple[np.ndarray, np.ndarray]:
    """Final recall ``(T,)`` and interpolated precision ``(T, R)`` of detections in score order.

    The values of COCOeval's accumulate, in the same floating-point operations, computed at the
    hits only: its precision, made non-increasing from the right, is read at the first
    detection reaching each recall threshold, and that detection is a hit (recall rises only at
    hits), where the non-increasing envelope is the highest precision of the hits from there on
    (precision falls between hits). At the k-th hit, recall is ``k / npig`` and precision
    ``k / (scored so far + eps)``, as COCOeval divides them.
    """
    n_t, n = tp_flags.shape
    precision = np.zeros((n_t, len(RECALL_THRESHOLDS)))
    final = np.zeros(n_t)
    if n == 0:
        return final, precision
    # tp + fp after each detection, one threshold at a time into one reused row: a (T, n) int64
    # cumsum is ten fresh rows of pages, and only its values at the hits are read
    seen = np.empty(n, dtype=np.int64)
    for t in range(n_t):
        at_hit = np.flatnonzero(tp_flags[t])
        hits = at_hit.size
        final[t] = hits / npig
        if hits == 0:
            continue
        np.cumsum(scored[t], dtype=np.int64, out=seen)
        k = np.arange(1, hits + 1, dtype=np.float64)
        envelope = np.maximum.accumulate((k / (seen[at_hit] + np.spacing(1)))[::-1])[::-1]
        at = np.searchsorted(k / npig, RECALL_THRESHOLDS, side="left")
        inside = at < hits
        precision[t, inside] = envelope[at[inside]]
    return final, precision


def accumulate(evaluation: DetectionEval, every_max_dets: bool = False) -> DetectionAccumulation:
    """Precision and recall arrays as COCOeval's ``accumulate`` builds them, and the DOTA AP per class.

    Parameters
    ----------
    every_max_dets : bool
        Also fill the precision at the smaller ``maxDets`` (1 and 10), which no summary number
        uses; by default it is left NaN there (recall is filled at every ``maxDets``).
    """
    ev, params = evaluation, evaluation.params
    n_t, n_a = len(params.iou_thresholds), len(AREA_RANGES)
    max_dets = params.max_dets_list
    n_k, n_m, n_r = len(ev.classes), len(max_dets), len(RECALL_THRESHOLDS)
    precision = np.full((n_t, n_r, n_k, n_a, n_m), np.nan)
    recall = np.full((n_t, n_k, n_a, n_m), np.nan)
    dota_ap = np.full(n_k, np.nan)
    curves = []
    # every detection's values gathered once, class by class and in score order within a class:
    # each class then takes its own run of them (a slice, not a mask over every detection)
    by_class = ev.order[np.argsort(ev.det_class[ev.order], kind="stable")]
    bounds = np.searchsorted(ev.det_class[by_class], np.arange(n_k + 1)).tolist()
    by_score = [np.take(values, by_class) for values in (ev.level, ev.simple_gt, ev.contested_pos, ev.rank,
                                                          ev.dota_tp, ev.dota_fp)]
    outside_by_score = np.take(ev.det_outside, by_class, axis=1)  # (A, n)
    # boxes that count, per area range and class, and the DOTA rule's per class: counted once
    # for all classes (a mask over every box per class grew with boxes times classes)
    counted = np.stack([np.bincount(ev.gt_class[~ignored], minlength=n_k) for ignored in ev.gt_ignored])
    positives = np.bincount(ev.gt_class[~ev.gt_difficult], minlength=n_k)
    for k in range(n_k):
        npig = counted[:, k]  # (A,)
        of_class = slice(bounds[k], bounds[k + 1])
        level, box, position, ranks, dota_tp, dota_fp = (values[of_class] for values in by_score)
        for a in np.flatnonzero(npig).tolist():
            outside = outside_by_score[a, of_class]
            if a:  # detections ignored at every threshold add nothing to any curve: leave them out
                relevant = ev._ever_scored(a, level, box, position, outside)
                area_values = [values[relevant] for values in (level, box, position, outside)]
                area_ranks = ranks[relevant]
            else:
                area_values, area_ranks = (level, box, position, outside), ranks
            hit, scored = ev._flags(a, *area_values)  # (T, n) in score order
            all_tp = np.logical_and(hit, scored, out=hit)  # hit is not read again
            top_rank = area_ranks.max(initial=-1)
            for m, cap in enumerate(max_dets):
                capped = top_rank >= cap
                if m < n_m - 1 and not every_max_dets:  # recall only: the final hit count
                    # the hits among the first ``cap`` of each frame, counted in place of a copy of them
                    tp_flags = all_tp & (area_ranks < cap) if capped else all_tp
                    recall[:, k, a, m] = np.count_nonzero(tp_flags, axis=1) / npig[a]
                    continue
                if capped:
                    kept = area_ranks < cap
                    tp_flags, block_scored = all_tp[:, kept], scored[:, kept]
                else:
                    tp_flags, block_scored = all_tp, scored
                recall[:, k, a, m], precision[:, :, k, a, m] = _curve(tp_flags, block_scored, npig[a])
        npos = int(positives[k])
        tp = np.cumsum(dota_tp).astype(float)
        fp = np.cumsum(dota_fp).astype(float)
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
    at_50_all, all_all = p[at_50][:, :, :, 0, last], p[:, :, :, 0, last]  # once: overall and per class
    overall = {
        "map50_95": _mean(all_all),
        "map50": _mean(at_50_all),
        "map75": _mean(p[at_75][:, :, :, 0, last]),
        "map_small": _mean(p[:, :, :, 1, last]),
        "map_medium": _mean(p[:, :, :, 2, last]),
        "map_large": _mean(p[:, :, :, 3, last]),
    }
    for m, cap in enumerate(max_dets):
        overall[f"mar_{cap}"] = _mean(acc.recall[:, :, 0, m])
    overall["dota_map50"] = _mean(acc.dota_ap)
    overall["max_dets"] = int(params.max_dets)
    overall["difficult"] = params.difficult
    overall["ap_rule"] = params.ap_rule
    per_class = {}
    for k, class_id in enumerate(acc.classes.tolist()):
        per_class[int(class_id)] = {
            "ap50": _mean(at_50_all[:, :, k]),
            "ap50_95": _mean(all_all[:, :, k]),
            "dota_ap50": float(acc.dota_ap[k]),
        }
    return overall, per_class


def class_ap(hits: np.ndarray, npos: float, weights=None) -> float:
    """COCO's 101-point AP of one class at one IoU threshold, from its detections in score order.

    The AP the COCO rule's ``precision`` array holds (:func:`_curve`, the same floating-point
    operations), for callers that change which detections are hits or how many boxes count:
    the error decomposition's oracles (:mod:`hbb2obb.detection.errors`) and AP by group.

    Parameters
    ----------
    hits : (n,) bool
        Whether each counted detection is a hit, detections by descending score.
    npos : float
        Ground-truth boxes that count (``npig``); NaN is returned when it is not positive.
    weights : (n,) float, optional
        How many times each detection counts (a frame bootstrap draws frames several times):
        the AP of the list with each detection repeated that many times. Copies of one
        detection are adjacent, and the precision at the last copy of a hit is the highest of
        its copies, so reading it there gives the repeated list's interpolated precision.

    Examples
    --------
    >>> round(class_ap(np.array([True, False, True]), 2), 6)
    0.834983
    >>> class_ap(np.array([True, False, True]), 2, weights=np.ones(3)) == class_ap(np.array([True, False, True]), 2)
    True
    """
    hits = np.asarray(hits, dtype=bool)
    if not npos > 0:
        return float("nan")
    if weights is None:
        _, precision = _curve(hits[None, :], np.ones((1, hits.size), dtype=bool), npos)
        return float(precision[0].mean())
    weights = np.asarray(weights, dtype=np.float64)
    at_hit = np.flatnonzero(hits & (weights > 0))
    precision = np.zeros(len(RECALL_THRESHOLDS))
    if at_hit.size:
        found = np.cumsum(weights * hits)[at_hit]
        seen = np.cumsum(weights)[at_hit]
        envelope = np.maximum.accumulate((found / (seen + np.spacing(1)))[::-1])[::-1]
        at = np.searchsorted(found / npos, RECALL_THRESHOLDS, side="left")
        inside = at < at_hit.size
        precision[inside] = envelope[at[inside]]
    return float(precision.mean())
