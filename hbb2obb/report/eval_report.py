"""Rendering the evaluation for people: functions that return strings, never print."""

from __future__ import annotations

from hbb2obb.io.labelmap import class_name
from hbb2obb.report.textable import render_table
from hbb2obb.scoring.metrics import IOU_LADDER


def _ladder(fractions: dict) -> str:
    return "  ".join(f"IoU>={key}: {share:.1%}" for key, share in sorted(fractions.items()))


def render_overall(metrics: dict, label_map: dict | None = None) -> str:
    """The ``=== Overall Results ===`` block, in the reference tool's wording."""
    label_map = label_map or {}
    lines = ["", "=== Overall Results ==="]
    if metrics["class_agnostic"]:
        lines.append("Evaluation Mode: Class-Agnostic (matches boxes regardless of class labels)")
        if metrics["cross_class_matches"]:
            share = metrics["cross_class_matches"] / metrics["total_matches"] * 100
            lines.append(f"Cross-Class Matches: {metrics['cross_class_matches']} ({share:.2f}% of total matches)")
    else:
        lines.append("Evaluation Mode: Class-Specific (matches only boxes with same class label)")
    if metrics.get("one_to_one"):
        lines.append("Matching: one-to-one (each prediction matches at most one ground-truth box)")
    lines += [
        f"Total Ground Truth Boxes: {metrics['total_gt']}",
        f"Total Predicted/Converted Boxes: {metrics['total_pred']}",
        f"Total Matched Boxes: {metrics['total_matches']}",
        f"Total Unmatched GT Boxes: {metrics['total_unmatched_gt']}",
        f"Total Unmatched Pred Boxes: {metrics['total_unmatched_pred']}",
    ]
    if metrics["exclude_edge_cases"]:
        if "unmatched_pred_on_edge_cases" in metrics:
            lines.append(f"  of which on excluded edge boxes: {metrics['unmatched_pred_on_edge_cases']} "
                         "(best overlap above the threshold is a dropped edge box: not spurious)")
        lines.append(f"Total Edge Cases Excluded: {metrics['total_edge_cases']}")
    lines.append(f"Average IoU: {metrics['avg_iou']:.5f} ± {metrics['std_iou']:.5f} (SEM {metrics['sem_iou']:.5f})")
    if metrics["total_matches"]:
        lines += [
            f"Median IoU: {metrics['median_iou']:.5f}",
            f"Matched Boxes Above Threshold: {_ladder(metrics['iou_fractions'])}",
            f"Orientation Error: p90 {metrics['p90_angle_error']:.2f}°, median {metrics['median_angle_error']:.2f}°, "
            f"mean {metrics['avg_angle_error']:.2f}° ± {metrics['std_angle_error']:.2f}°",
        ]
    lines += _distance_lines(metrics)
    if metrics["excluded_classes"]:
        names = ", ".join(f"{class_name(label_map, c)} ({c})" if c in label_map else str(c)
                          for c in metrics["excluded_classes"])
        lines.append(f"Excluded Classes: {names}")
    health = _health_line(metrics)
    if health:
        lines.append(f"Input Health: {health}")
    return "\n".join(lines)


def _distance_lines(metrics: dict) -> list[str]:
    """Distance-aware overlap of matched pairs, and the spatial match of every ground-truth box."""
    lines = []
    if metrics.get("total_matches") and "avg_giou" in metrics:
        names = (("GIoU", "giou"), ("DIoU", "diou"), ("CIoU", "ciou"))
        means = ", ".join(f"{name} {metrics[f'avg_{key}']:.5f}" for name, key in names)
        medians = ", ".join(f"{metrics[f'median_{key}']:.5f}" for _, key in names)
        lines += [f"Distance-Aware IoU: {means} (medians {medians})",
                  f"Centre Offset: mean {metrics['avg_center_offset']:.2f} px"]
    if "spatial_match" in metrics:
        lines.append(f"Spatial Match (best IoU>={metrics['spatial_threshold']:.2f}): "
                     f"{metrics['spatial_match']:.1%} of {metrics['total_gt']} GT boxes")
    return lines


def _health_line(metrics: dict) -> str:
    parts = [
        (metrics["missing_pred_files"], "frame(s) without a prediction file"),
        (metrics["orphan_pred_files"], "prediction file(s) without ground truth"),
        (metrics["skipped_pred_lines"], "broken prediction line(s) skipped"),
        (metrics["reordered_boxes"], "bow-tie box(es) reordered"),
        (metrics["degenerate_boxes"], "zero-area box(es)"),
        (metrics.get("concave_boxes", 0), "concave box(es) scored as they are"),
    ]
    return ", ".join(f"{count} {what}" for count, what in parts if count)


def render_class_table(metrics: dict, label_map: dict | None = None) -> str:
    """The ``=== Results by Class ===`` block."""
    label_map = label_map or {}
    top = f"{IOU_LADDER[-1]:.2f}"
    rows = []
    for class_id, s in sorted(metrics["class_stats"].items()):
        rows.append([
            class_name(label_map, class_id), s["gt_total"], s["pred_total"], s["matches"],
            f"{s['avg_iou']:.4f} ± {s['std_iou']:.4f}", f"{s['median_iou']:.4f}",
            f"{s['iou_fractions'][top]:.1%}", f"{s['p90_angle_error']:.2f}", f"{s['median_angle_error']:.2f}",
        ])
    headers = ["Class", "GT", "Pred", "Matches", "IoU (mean ± std)", "IoU (median)", "IoU>=0.9",
               "Angle p90 (°)", "Angle p50 (°)"]
    return "\n".join(["", "=== Results by Class ===", render_table(headers, rows, align="r" * len(headers), gap=1)])


def render_class_distance_table(metrics: dict, label_map: dict | None = None) -> str:
    """Per class: spatial match and distance-aware overlap, in a block of its own.

    A separate block because the ``=== Results by Class ===`` table keeps the reference tool's
    columns, which scripts parse.
    """
    label_map = label_map or {}
    rows = []
    for class_id, s in sorted(metrics["class_stats"].items()):
        rows.append([
            class_name(label_map, class_id), s["gt_total"], s["matches"], f"{s['spatial_match']:.1%}",
            f"{s['avg_giou']:.4f}", f"{s['avg_diou']:.4f}", f"{s['avg_ciou']:.4f}", f"{s['avg_center_offset']:.2f}",
        ])
    threshold = f"{metrics['spatial_threshold']:.2f}"
    headers = ["Class", "GT", "Matches", f"Spatial (IoU>={threshold})", "GIoU (mean)", "DIoU (mean)", "CIoU (mean)",
               "Centre offset (px)"]
    return "\n".join(["", "=== Spatial Match and Distance-Aware Overlap by Class ===",
                      render_table(headers, rows, align="r" * len(headers), gap=1)])


def render_report(metrics: dict, label_map: dict | None = None) -> str:
    """The whole eval report: overall block, then the class table unless class-agnostic."""
    parts = [render_overall(metrics, label_map)]
    if not metrics["class_agnostic"] and metrics["class_stats"]:
        parts.append(render_class_table(metrics, label_map))
        if "spatial_match" in next(iter(metrics["class_stats"].values())):
            parts.append(render_class_distance_table(metrics, label_map))
    return "\n".join(parts) + "\n"


def render_unmatched(table, label_map: dict | None = None, limit: int = 3) -> str:
    """Per frame with unmatched boxes: counts and up to ``limit`` examples of each side (``--debug``)."""
    import numpy as np

    label_map = label_map or {}
    blocks = []
    for frame, name in enumerate(table.frame_names):
        gt_rows = np.flatnonzero((table.gt_frame == frame) & ~table.matched)
        pred_rows = np.flatnonzero((table.pred_frame == frame) & ~table.pred_matched)
        if not gt_rows.size and not pred_rows.size:
            continue
        n_gt = int((table.gt_frame == frame).sum())
        n_pred = int((table.pred_frame == frame).sum())
        lines = [
            f"--- File: {name} ---",
            f"GT boxes: {n_gt}, Pred boxes: {n_pred}, Matched: {int(table.matched[table.gt_frame == frame].sum())}, "
            f"Unmatched GT: {gt_rows.size}, Unmatched Pred: {pred_rows.size}",
        ]
        for title, boxes, rows in (("Unmatched GT", table.gt, gt_rows), ("Unmatched Pred", table.pred, pred_rows)):
            if rows.size:
                lines.append(f"{title}:")
                for r in rows[:limit]:
                    corners = " ".join(f"({x:.1f}, {y:.1f})" for x, y in boxes.corners[r])
                    best = f" best IoU {table.best_iou[r]:.3f}" if boxes is table.gt else ""
                    lines.append(f"  line {boxes.line[r]}: {class_name(label_map, boxes.class_id[r])} {corners}{best}")
                if rows.size > limit:
                    lines.append(f"  ... and {rows.size - limit} more")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)
