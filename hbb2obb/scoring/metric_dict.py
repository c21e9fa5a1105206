"""The summarize step: an accumulated run's match table turned into the metric dict.

The third of the core's three steps (:mod:`hbb2obb.scoring.evaluate` evaluates and accumulates),
and :func:`evaluate_obb`, which takes all three. The keys and their order are the reference's,
with ours after them.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Optional

from hbb2obb.detection.evaluate import DetectionParams
from hbb2obb.io import ImageSizes, load_label_map
from hbb2obb.io.labelmap import class_name
from hbb2obb.scoring.evaluate import EvalSettings, EvaluationResult, Hbb2ObbWarning, evaluate_frames
from hbb2obb.scoring.metrics import class_statistics, pair_statistics
from hbb2obb.scoring.overlap_metrics import DEFAULT_SPATIAL_THRESHOLD, overlap_statistics, row_overlap


def summarize(result: EvaluationResult) -> dict:
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
        metrics["class_names"] = {
            class_id: class_name(result.label_map, class_id) for class_id in metrics["class_stats"]
        }
    if result.detection_summary is not None:  # new keys after the reference's, which keep their order
        result.detection_summary.merge_into(metrics)
    return metrics


def evaluate_obb(
    gt_dir,
    pred_dir,
    excluded_classes=None,
    iou_threshold: float = 0.1,
    class_agnostic: bool = False,
    exclude_edge_cases: bool = False,
    edge_tolerance: float = 1,
    img_width: Optional[float] = None,
    img_height: Optional[float] = None,
    debug: bool = False,
    no_bar: bool = True,
    *,
    img_source=None,
    map_path=None,
    one_to_one: bool = False,
    missing_pred: str = "skip",
    jobs: int = 1,
    spatial_threshold: float = DEFAULT_SPATIAL_THRESHOLD,
    detection: bool = True,
    ap_rule: str = "voc07",
    conf: Optional[float] = None,
    max_dets: int = 100,
    gt_format: Optional[str] = None,
    pred_format: Optional[str] = None,
) -> dict:
    """Score the OBBs in ``pred_dir`` against the ground truth in ``gt_dir``.

    Either side may be in any label format (``gt_format``/``pred_format``: ``yolo dota voc coco
    labelme``, detected when omitted; a COCO side is its ``.json`` file).

    The positional parameters are those of the reference tool's ``evaluate_obb``, so existing
    calls keep working; ``debug`` and ``no_bar`` are accepted and have no effect here (the
    command line prints; this function only computes). Warnings are issued as
    :class:`Hbb2ObbWarning`. ``detection``, ``ap_rule``, ``conf`` and ``max_dets`` are the
    detection metrics' settings, as ``hbb2obb-eval`` takes them (``detection=False``:
    ``--no_detection``).

    Returns
    -------
    dict
        The metric dict of docs/metrics.md §3: counts, IoU and angle statistics, ``class_stats`` per
        ground-truth class, the settings, and the input-health counters.

    Raises
    ------
    hbb2obb.errors.Hbb2ObbError
        A missing folder, a broken ground-truth line (``file:line``), bad settings.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> for sub, line in (("gt", "0 0 0 10 0 10 5 0 5"), ("pred", "0 1 0 11 0 11 5 1 5")):
    ...     (root / sub).mkdir()
    ...     _ = (root / sub / "f.txt").write_text(line + "\\n")
    >>> m = evaluate_obb(root / "gt", root / "pred")
    >>> m["total_matches"], round(m["avg_iou"], 4)
    (1, 0.8182)
    """
    del debug, no_bar
    settings = EvalSettings(
        excluded_classes=tuple(excluded_classes or ()),
        iou_threshold=iou_threshold,
        class_agnostic=class_agnostic,
        exclude_edge_cases=exclude_edge_cases,
        edge_tolerance=edge_tolerance,
        one_to_one=one_to_one,
        missing_pred=missing_pred,
        spatial_threshold=spatial_threshold,
    )
    sizes = ImageSizes(img_source, img_width, img_height)
    label_map = load_label_map(map_path)
    params = DetectionParams(max_dets=max_dets, ap_rule=ap_rule, conf=conf) if detection else None
    result = evaluate_frames(Path(gt_dir), Path(pred_dir), settings, sizes=sizes, label_map=label_map, jobs=jobs,
                             detection=params, gt_format=gt_format, pred_format=pred_format)
    for _, message in result.warnings:
        warnings.warn(message, Hbb2ObbWarning, stacklevel=2)
    return summarize(result)
