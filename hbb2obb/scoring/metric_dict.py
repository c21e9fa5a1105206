"""The summarize step: an accumulated run's match table turned into the metric dict.

The third of the core's three steps (:mod:`hbb2obb.scoring.evaluate` evaluates and accumulates).
The keys and their order are the reference's, with ours after them; :class:`EvaluationResult`'s
``metrics`` is this function's result.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hbb2obb.io.labelmap import class_name
from hbb2obb.scoring.metrics import class_statistics, pair_statistics
from hbb2obb.scoring.overlap_metrics import overlap_statistics, row_overlap

if TYPE_CHECKING:  # the result type lives with the step that makes it
    from hbb2obb.scoring.evaluate import EvaluationResult


def summarize(result: "EvaluationResult") -> dict:
    """The metric dict of docs/metrics.md §3 from an accumulated run."""
    table, settings, health = result.table, result.settings, result.health
    matched = table.matched
    metrics = {
        "total_gt": len(table.gt),
        "total_pred": len(table.pred),
        "total_matches": int(matched.sum()),
        "total_unmatched_gt": int((~matched).sum()),
        "total_unmatched_pred": int((~table.pred_matched).sum()),
        "cross_class_matches": int((table.gt.class_id[matched] != table.pred_class_of_match()).sum()),
        "total_edge_cases": health.total_edge_cases,
        # of the unmatched predictions, those a dropped edge box would have matched: not spurious
        "unmatched_pred_on_edge_cases": int((~table.pred_matched & table.pred_on_edge_case).sum())
        if table.pred_on_edge_case is not None else 0,
    }
    metrics.update(pair_statistics(table.iou[matched], table.angle_error[matched]))
    overlap = row_overlap(table, settings.spatial_threshold)
    metrics.update(overlap_statistics(overlap))
    metrics["class_stats"] = class_statistics(table, overlap)
    metrics.update(
        class_agnostic=bool(settings.class_agnostic),
        exclude_edge_cases=bool(settings.exclude_edge_cases),
        excluded_classes=list(settings.excluded_classes),
        iou_threshold=float(settings.iou_threshold),
        spatial_threshold=float(settings.spatial_threshold),
        one_to_one=bool(settings.one_to_one),
        frames_scored=len(table.frame_names),
        missing_pred_files=len(result.plan.missing_pred),
        orphan_pred_files=len(result.plan.orphan_pred) + len(result.plan.orphan_images),
        skipped_pred_lines=health.skipped_pred_lines,
        reordered_boxes=health.reordered_boxes,
        degenerate_boxes=health.degenerate_boxes,
        concave_boxes=health.concave_boxes,
    )
    if result.label_map:  # the classes by name beside their ids, for files read without the map
        metrics["class_names"] = {class_id: class_name(result.label_map, class_id) for class_id in metrics["class_stats"]}
    if result.detection_summary is not None:  # new keys after the reference's, which keep their order
        result.detection_summary.merge_into(metrics)
    return metrics
