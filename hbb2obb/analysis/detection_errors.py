"""Why a detector's AP is what it is: the error decomposition, AP by cut, and A against B (docs/analyze.md).

Plain data for the report, ``analysis.yaml`` and the figure, from a run evaluated with detection
parameters and scored predictions:

* :func:`decompose_run`: :func:`~hbb2obb.detection.errors.decompose_errors` of a whole run, the
  frames without a prediction file included as frames with no detections (as the detection
  metrics count them), with every frame's name.
* :func:`group_ap`: the AP of a group of ground-truth boxes, TIDE's qualifier rule on the one
  matching: a hit counts when its box is in the group, a false positive when its own box passes
  the group's test, nothing is re-matched.
* :func:`cut_aps`: AP by ground-truth orientation, size, aspect ratio, frame edge, difficult flag.
* :func:`compare_detectors`: A minus B per class and overall, with paired bootstrap intervals
  over frames, and the error types that changed.
* :func:`detection_errors`: all of it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Optional

import numpy as np

from hbb2obb.analysis.compare import CONFIDENCE, MIN_PAIRED_BOXES, NOISE, TOO_FEW, bootstrap_p_value
from hbb2obb.analysis.cuts import (
    GroundTruthProperties,
    aspect_ratio_cut,
    difficult_cut,
    edge_cut,
    ground_truth_properties,
    orientation_cut,
    short_side_cut,
)
from hbb2obb.boxes import Boxes, crowd_of
from hbb2obb.detection.accumulate import class_ap
from hbb2obb.detection.errors import ERROR_TYPES, SPECIAL_TYPES, ErrorDecomposition, TideParams, decompose_errors
from hbb2obb.detection.summary import counted_detections
from hbb2obb.io.labelmap import class_name
from hbb2obb.scoring.evaluate import EvaluationResult

TYPE_NAMES = {"cls": "classification", "loc": "localization", "both": "both (class and box)", "dupe": "duplicate",
              "bkg": "background", "miss": "missed", "orient": "orientation", "fp": "false positives",
              "fn": "false negatives"}


@dataclass(frozen=True)
class RunDecomposition:
    """A run's decomposition with the names of its frames and the properties of both sides' boxes."""

    errors: ErrorDecomposition
    frame_names: tuple
    gt_props: GroundTruthProperties
    pred_props: GroundTruthProperties


def _joined_props(parts: list) -> GroundTruthProperties:
    return GroundTruthProperties(*(np.concatenate([getattr(p, f.name) for p in parts])
                                   for f in dataclasses.fields(GroundTruthProperties)))


def decompose_run(result: EvaluationResult, gt_props: GroundTruthProperties, tide: TideParams,
                  edge_tolerance: float = 1.0) -> RunDecomposition:
    """The decomposition of an evaluated run (``result.detection`` set, every prediction scored)."""
    table, unpaired = result.table, result.unpaired
    gt, gt_frame, names, props = table.gt, table.gt_frame, tuple(table.frame_names), [gt_props]
    if unpaired is not None and len(unpaired.gt):
        difficult = None
        if gt.difficult is not None or unpaired.gt.difficult is not None:
            difficult = np.concatenate([np.zeros(len(part), dtype=bool) if part.difficult is None else part.difficult
                                        for part in (gt, unpaired.gt)])
        gt = Boxes(np.concatenate([gt.corners, unpaired.gt.corners]),
                   np.concatenate([gt.class_id, unpaired.gt.class_id]), difficult=difficult,
                   crowd=crowd_of([gt, unpaired.gt]))
        gt_frame = np.concatenate([gt_frame, unpaired.gt_frame + len(names)])
        names += tuple(unpaired.frame_names)
        props.append(ground_truth_properties(unpaired, np.zeros(len(unpaired.gt), dtype=bool), edge_tolerance))
    # as the detection metrics count them: not the detections of edge boxes -exc dropped
    pred, pred_frame, pairs = table.pred, table.pred_frame, result.pairs
    if pairs is not None:  # (None: no frame scored, no detection)
        pred, pred_frame, pairs = counted_detections(pred, pred_frame, pairs, table.pred_on_edge_case)
    # the predictions measured as the ground truth is (their own box decides which group a false
    # positive falls in); a prediction has no difficult flag
    as_gt = dataclasses.replace(table, gt=pred, gt_frame=pred_frame)
    pred_props = ground_truth_properties(as_gt, np.zeros(len(pred), dtype=bool), edge_tolerance)
    errors = decompose_errors(gt, gt_frame, pred, pred_frame, pairs, result.detection, tide)
    return RunDecomposition(errors, names, _joined_props(props), pred_props)


def _nanmean(values) -> float:
    values = np.asarray(values, dtype=np.float64)
    defined = values[~np.isnan(values)]
    return float(defined.mean()) if defined.size else float("nan")


def group_ap(dec: ErrorDecomposition, gt_mask: np.ndarray, det_mask: np.ndarray) -> tuple[float, np.ndarray]:
    """AP (mean over classes) and AP per class of a group of ground-truth boxes.

    A hit counts when the box it took is in ``gt_mask``; a false positive when ``det_mask`` holds
    it; the counted boxes are those of the group. NaN where a class has no box in the group.
    """
    in_group = np.zeros(len(dec.det_class), dtype=bool)
    in_group[dec.hit] = gt_mask[dec.matched_gt[dec.hit]]
    in_group |= ~dec.hit & det_mask
    counted = dec.counted & in_group
    npos = np.bincount(dec.gt_class[dec.gt_counted & gt_mask], minlength=len(dec.classes)).astype(np.float64)
    per_class = np.full(len(dec.classes), np.nan)
    ranked = dec.order[counted[dec.order]]
    for k in np.flatnonzero(npos > 0).tolist():
        per_class[k] = class_ap(dec.hit[ranked[dec.det_class[ranked] == k]], npos[k])
    return _nanmean(per_class), per_class


def _number(value: float) -> Optional[float]:
    """A float for YAML; ``None`` for NaN (an AP of a group without boxes)."""
    return None if value is None or np.isnan(value) else float(value)


def cut_aps(run: RunDecomposition) -> list[dict]:
    """AP by ground-truth orientation, short side, aspect ratio, frame edge and difficult flag, with box counts."""
    gt_props, pred_props, dec = run.gt_props, run.pred_props, run.errors
    makers = [orientation_cut, short_side_cut, aspect_ratio_cut]
    if gt_props.any_edge_known:
        makers.append(edge_cut)
    if gt_props.difficult.any():
        makers.append(difficult_cut)
    out = []
    for make in makers:
        cut = make(gt_props)
        pred_masks = dict(zip(make(pred_props).labels, make(pred_props).masks))
        groups = []
        for label, mask in zip(cut.labels, cut.masks):
            det_mask = pred_masks.get(label, np.zeros(len(dec.det_class), dtype=bool))
            ap, _ = group_ap(dec, mask, det_mask)
            groups.append({"label": label, "boxes": int((mask & dec.gt_counted).sum()),
                           "detections": int((dec.counted & det_mask & ~dec.hit).sum()
                                             + mask[dec.matched_gt[dec.hit]].sum()),
                           "ap": _number(ap)})
        out.append({"key": cut.key, "title": cut.title.replace("By ", "AP by ", 1), "groups": groups})
    return out


def summary_keys(dec: ErrorDecomposition, k: Optional[int] = None) -> dict:
    """The gateable numbers, overall or of class ``k``: ``ap_tide``, ``dap_<type>``, ``dap_fp``, ``dap_fn``,
    ``errors_<type>``."""
    if k is None:
        keys = {"ap_tide": _number(dec.ap)}
        keys.update({f"dap_{name}": _number(dec.dap[name]) for name in ERROR_TYPES + SPECIAL_TYPES})
        keys.update({f"errors_{name}": dec.counts[name] for name in ERROR_TYPES})
        return keys
    keys = {"ap_tide": _number(dec.class_ap[k])}
    keys.update({f"dap_{name}": _number(dec.class_dap[name][k]) for name in ERROR_TYPES + SPECIAL_TYPES})
    keys.update({f"errors_{name}": int(dec.class_counts[name][k]) for name in ERROR_TYPES})
    return keys


def _class_rows(dec: ErrorDecomposition, label_map: Optional[dict]) -> list[dict]:
    boxes = np.bincount(dec.gt_class[dec.gt_counted], minlength=len(dec.classes))
    detections = np.bincount(dec.det_class[dec.counted], minlength=len(dec.classes))
    return [{"class": class_name(label_map or {}, int(c)), "class_id": int(c), "boxes": int(boxes[k]),
             "detections": int(detections[k]), **summary_keys(dec, k)} for k, c in enumerate(dec.classes.tolist())]


def _frame_index(names: tuple, common: dict) -> np.ndarray:
    return np.array([common[name] for name in names], dtype=np.int64)


def _resampled_aps(dec: ErrorDecomposition, frame_of: np.ndarray, class_ids: list, weights: np.ndarray) -> np.ndarray:
    """``(B, len(class_ids))`` AP of each class in each resample (frames weighted by how often drawn)."""
    out = np.full((weights.shape[0], len(class_ids)), np.nan)
    ranked = dec.order[dec.counted[dec.order]]
    for j, class_id in enumerate(class_ids):
        k = np.searchsorted(dec.classes, class_id)
        if k >= len(dec.classes) or dec.classes[k] != class_id:
            continue
        dets = ranked[dec.det_class[ranked] == k]
        hits, det_frames = dec.hit[dets], frame_of[dec.det_frame[dets]]
        box_frames = frame_of[dec.gt_frame[dec.gt_counted & (dec.gt_class == k)]]
        for b in range(weights.shape[0]):
            out[b, j] = class_ap(hits, weights[b, box_frames].sum(), weights[b, det_frames])
    return out


def _difference(a: np.ndarray, b: np.ndarray, boxes: int, frames: int) -> dict:
    """A - B of one AP: its value, 95% bootstrap interval and verdict (only where the interval excludes 0)."""
    diff = a[1:] - b[1:]
    diff = diff[~np.isnan(diff)]
    value = a[0] - b[0]
    entry = {"boxes": int(boxes), "frames": int(frames), "ap_a": _number(a[0]), "ap_b": _number(b[0]),
             "ap_diff": _number(value)}
    if np.isnan(value) or not diff.size:
        return {**entry, "ap_ci": None, "p": None, "verdict": "no boxes"}
    tails = [100 * (1 - CONFIDENCE) / 2, 100 * (1 + CONFIDENCE) / 2]
    low, high = (float(v) for v in np.percentile(diff, tails))
    if boxes < MIN_PAIRED_BOXES:
        verdict = TOO_FEW
    elif low > 0:
        verdict = "A better"
    elif high < 0:
        verdict = "B better"
    else:
        verdict = NOISE
    return {**entry, "ap_ci": [low, high], "p": bootstrap_p_value(diff), "verdict": verdict}


def compare_detectors(run_a: RunDecomposition, run_b: RunDecomposition, label_map: Optional[dict] = None, *,
                      seed: int = 0, n_boot: int = 2000) -> dict:
    """A minus B: AP per class and overall with paired bootstrap intervals over frames, and the error types' changes.

    Frames are matched by name; a resample draws frames with replacement and weighs both sides'
    detections and boxes of a frame by how often it was drawn (the same draws for A and B). The
    first row of each bootstrap array is the unresampled value.
    """
    a, b = run_a.errors, run_b.errors
    names = sorted(set(run_a.frame_names) | set(run_b.frame_names))
    common = {name: i for i, name in enumerate(names)}
    frame_a, frame_b = _frame_index(run_a.frame_names, common), _frame_index(run_b.frame_names, common)
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, len(names), size=(n_boot, len(names)))
    weights = np.vstack([np.ones(len(names))] + [np.bincount(row, minlength=len(names)) for row in draws])
    class_ids = sorted(set(a.classes.tolist()) | set(b.classes.tolist()))
    aps_a, aps_b = _resampled_aps(a, frame_a, class_ids, weights), _resampled_aps(b, frame_b, class_ids, weights)
    boxes = np.bincount(a.gt_class[a.gt_counted], minlength=len(a.classes))
    classes = []
    for j, class_id in enumerate(class_ids):
        k = np.searchsorted(a.classes, class_id)
        n_boxes = int(boxes[k]) if k < len(a.classes) and a.classes[k] == class_id else 0
        frames = len({int(f) for f in frame_a[a.gt_frame[a.gt_counted & (a.gt_class == k)]]}) if n_boxes else 0
        classes.append({"class": class_name(label_map or {}, class_id), "class_id": int(class_id),
                        **_difference(aps_a[:, j], aps_b[:, j], n_boxes, frames)})
    with np.errstate(all="ignore"):
        mean_a = np.array([_nanmean(row) for row in aps_a])
        mean_b = np.array([_nanmean(row) for row in aps_b])
    overall = _difference(mean_a, mean_b, int(a.gt_counted.sum()), len(names))
    types = [{"type": name, "errors_a": a.counts.get(name), "errors_b": b.counts.get(name),
              "dap_a": _number(a.dap[name]), "dap_b": _number(b.dap[name]),
              "dap_diff": _number(a.dap[name] - b.dap[name])} for name in ERROR_TYPES + SPECIAL_TYPES]
    changed = [t["type"] for t in types if t["type"] in ERROR_TYPES and t["errors_a"] != t["errors_b"]]
    return {"seed": int(seed), "bootstrap": int(n_boot), "frames": len(names), "overall": overall,
            "classes": classes, "types": types, "changed_types": changed,
            "detections_a": int(a.counted.sum()), "detections_b": int(b.counted.sum())}


def with_error_keys(metrics: dict, errors: Optional[dict]) -> dict:
    """The metric dict with the decomposition's numbers beside its own, for ``--require`` gates.

    ``ap_tide``, ``dap_<type>``, ``dap_fp``, ``dap_fn`` and ``errors_<type>`` join the top level
    (overall) and each class's ``class_stats`` entry; a class the metric dict lacks gets an entry
    of its own. Without a decomposition (predictions without scores) the dict is returned as is.
    """
    if not errors:
        return metrics
    joined = {**metrics, **errors["overall"]}
    classes = {k: dict(v) for k, v in (metrics.get("class_stats") or {}).items()}
    for row in errors["classes"]:
        classes.setdefault(row["class_id"], {}).update(
            {k: v for k, v in row.items() if k not in ("class", "class_id", "boxes", "detections")})
    joined["class_stats"] = classes
    return joined


def detection_errors(run: RunDecomposition, label_map: Optional[dict] = None,
                     comparison: Optional[dict] = None) -> dict:
    """The decomposition, per class, AP by cut and the comparison, as plain data (``analysis.yaml``)."""
    dec = run.errors
    return {
        "fg": float(dec.tide.fg),
        "bg": float(dec.tide.bg),
        "boxes": int(dec.gt_counted.sum()),
        "detections": int(dec.counted.sum()),
        "overall": summary_keys(dec),
        "types": [{"type": name, "name": TYPE_NAMES[name], "errors": dec.counts.get(name),
                   "dap": _number(dec.dap[name])} for name in ERROR_TYPES + SPECIAL_TYPES],
        "classes": _class_rows(dec, label_map),
        "cuts": cut_aps(run),
        "comparison": comparison,
    }
