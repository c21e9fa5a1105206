"""The detection metrics of a run: what :func:`~hbb2obb.scoring.metric_dict.summarize` adds to the metric dict.

With a confidence on every prediction: the COCO rule's AP and AR, the DOTA rule's mAP,
precision, recall and F1 at a confidence, and the confusion matrix. Without: precision, recall
and F1 of a one-to-one matching at IoU 0.5, and the confusion matrix.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from hbb2obb.boxes import Boxes, crowd_of
from hbb2obb.detection.accumulate import DetectionAccumulation, accumulate, summarize_detections
from hbb2obb.detection.counts import OperatingPoint, confusion_matrix, operating_point, unscored_counts_and_matches
from hbb2obb.detection.evaluate import DetectionParams, evaluate_detections

COCO_KEYS = ("map50_95", "map50", "map75", "map_small", "map_medium", "map_large", "mar_1", "mar_10")
"""The COCO rule's keys; ``mar_<max_dets>`` (``mar_100`` by default) follows them."""
DETECTION_KEYS = COCO_KEYS + ("mar_100", "dota_map50", "precision", "recall", "f1", "conf_threshold")
"""Top-level numbers the detection metrics add (``mar_<N>`` for another ``--max_dets``)."""
CLASS_DETECTION_KEYS = ("ap50", "ap50_95", "dota_ap50")


@dataclass(frozen=True)
class DetectionSummary:
    """Everything the report, the figures and the metric dict need of the detection metrics.

    ``accumulation`` and ``point`` are ``None`` when the predictions carry no scores.
    """

    scored: bool
    overall: dict
    per_class: dict
    classes: np.ndarray
    confusion: np.ndarray
    accumulation: Optional[DetectionAccumulation]
    point: Optional[OperatingPoint]
    unpaired_frames: int = 0  # frames without a prediction file counted as frames with no detections
    capped: tuple = ()  # (frame name, detections beyond max_dets) of each frame the COCO rule capped

    def merge_into(self, metrics: dict) -> None:
        """Add the keys to a metric dict: top-level numbers, per class in ``class_stats``."""
        metrics["detection_scored"] = self.scored
        metrics.update(self.overall)
        metrics["detection_frames_without_predictions"] = self.unpaired_frames
        metrics["confusion_matrix"] = {
            "classes": [int(c) for c in self.classes] + ["background"],
            "rows": "ground truth",
            "counts": self.confusion.tolist(),
        }
        for class_id, values in self.per_class.items():
            if class_id in metrics["class_stats"] or not self.unpaired_frames:
                metrics["class_stats"].setdefault(class_id, {}).update(values)
            else:  # a class only frames without a prediction file hold: no matching keys to sit beside
                metrics.setdefault("detection_unpaired_class_stats", {})[class_id] = values


def counted_detections(pred: Boxes, pred_frame: np.ndarray, pairs: tuple, on_edge: Optional[np.ndarray]) -> tuple:
    """The detections the metrics count, their frames and the pairs among them (renumbered): all but
    those whose best overlap is an edge box ``--exclude_edge_cases`` dropped (``on_edge``)."""
    if on_edge is None or not on_edge.any():
        return pred, pred_frame, pairs
    keep = ~on_edge
    renumbered = np.cumsum(keep) - 1
    paired = keep[pairs[1]]
    return pred[keep], pred_frame[keep], (pairs[0][paired], renumbered[pairs[1][paired]], pairs[2][paired])


def summarize_run(table, pairs, params: DetectionParams, unpaired=None) -> DetectionSummary:
    """The detection metrics of an accumulated run (:class:`~hbb2obb.scoring.evaluate.MatchTable`).

    ``pairs`` are the run's same-frame pairs with positive IoU, any classes (``None`` when no
    frame was scored: then there are none). ``unpaired``: the table of the frames without a
    prediction file that the matching skipped; their ground truth joins as frames with no
    detections (appended after the run's rows, so the pairs' row numbers still hold). With
    ``--exclude_edge_cases``, the detections whose best overlap is a dropped edge box
    (``table.pred_on_edge_case``) are left out, as COCO leaves out detections of its ignore
    regions: neither hits nor false alarms (counted in ``detections_on_edge_cases``).
    """
    gt, pred, gt_frame, pred_frame = table.gt, table.pred, table.gt_frame, table.pred_frame
    if pairs is None:
        pairs = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0))
    # the detections of the edge boxes --exclude_edge_cases dropped: COCO's ignore regions
    pred, pred_frame, pairs = counted_detections(pred, pred_frame, pairs, table.pred_on_edge_case)
    ignored = len(table.pred) - len(pred)
    n_unpaired = 0 if unpaired is None else len(unpaired.frame_names)
    if unpaired is not None and len(unpaired.gt):
        difficult = None
        if gt.difficult is not None or unpaired.gt.difficult is not None:  # a part without the flags has none set
            difficult = np.concatenate([np.zeros(len(part), dtype=bool) if part.difficult is None else part.difficult
                                        for part in (gt, unpaired.gt)])
        gt = Boxes(np.concatenate([gt.corners, unpaired.gt.corners]),
                   np.concatenate([gt.class_id, unpaired.gt.class_id]), difficult=difficult,
                   crowd=crowd_of([gt, unpaired.gt]))
        gt_frame = np.concatenate([gt_frame, unpaired.gt_frame + len(table.frame_names)])
    classes = np.unique(np.concatenate([gt.class_id, pred.class_id])).astype(np.int64)
    if pred.score is None:
        overall, matches = unscored_counts_and_matches(gt, pred, pairs)
        overall["detections_on_edge_cases"] = ignored
        confusion = confusion_matrix(gt, pred, pairs, classes, matches=matches)
        return DetectionSummary(False, overall, {}, classes, confusion, None, None, n_unpaired)
    evaluation = evaluate_detections(gt, gt_frame, pred, pred_frame, pairs, params)
    # the COCO rule keeps the first max_dets detections of each frame and class: say what it dropped
    beyond = np.bincount(pred_frame[evaluation.rank >= params.max_dets], minlength=len(table.frame_names))
    capped = tuple((table.frame_names[f], int(beyond[f])) for f in np.flatnonzero(beyond).tolist())
    acc = accumulate(evaluation)
    overall, per_class = summarize_detections(acc)
    point = operating_point(evaluation, params.conf)
    overall.update(point.as_metrics())
    overall["conf_threshold_chosen"] = "max_f1" if point.chosen else "given"
    overall["max_dets_dropped"] = int(beyond.sum())
    overall["detections_on_edge_cases"] = ignored
    confusion = confusion_matrix(gt, pred, pairs, classes, None if np.isnan(point.conf) else point.conf)
    return DetectionSummary(True, overall, per_class, classes, confusion, acc, point, n_unpaired, capped)
