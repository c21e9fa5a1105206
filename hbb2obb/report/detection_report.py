"""The detection metrics for people: precision, recall, AP and the confusion matrix, as text."""

from __future__ import annotations

import math

from hbb2obb.io.labelmap import class_name
from hbb2obb.report.textable import render_table


def _number(value, digits: int = 4) -> str:
    """A metric, or ``n/a`` where it is undefined (NaN: no ground truth to measure against)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    return f"{value:.{digits}f}"


def render_detection(metrics: dict, label_map: dict | None = None) -> str:
    """The ``=== Detection Metrics ===`` blocks; empty when the run has no detection metrics."""
    if "detection_scored" not in metrics:
        return ""
    label_map = label_map or {}
    lines = ["", "=== Detection Metrics ==="]
    if not metrics["detection_scored"]:
        lines += [
            f"Precision {_number(metrics['precision'])}, Recall {_number(metrics['recall'])}, "
            f"F1 {_number(metrics['f1'])} (IoU>=0.5, one-to-one, class-specific)",
            "Note: AP needs a confidence per prediction (YOLO-OBB 10th field, DOTA score column); "
            "these predictions have none.",
        ]
    else:
        n = metrics["max_dets"]
        rule = "11-point VOC07" if metrics["ap_rule"] == "voc07" else "all-point VOC"
        how = "maximizes F1" if metrics["conf_threshold_chosen"] == "max_f1" else "given by --conf"
        lines += [
            f"COCO rule (101-point, up to {n} detections per frame and class): "
            f"mAP@[.50:.95] {_number(metrics['map50_95'])}, AP50 {_number(metrics['map50'])}, "
            f"AP75 {_number(metrics['map75'])}",
            f"COCO AP by GT area: small {_number(metrics['map_small'])}, medium {_number(metrics['map_medium'])}, "
            f"large {_number(metrics['map_large'])}",
            f"COCO AR: @1 {_number(metrics['mar_1'])}, @10 {_number(metrics['mar_10'])}, "
            f"@{n} {_number(metrics[f'mar_{n}'])}",
            f"DOTA rule (IoU>0.5, {rule}): mAP50 {_number(metrics['dota_map50'])}",
            f"At confidence {_number(metrics['conf_threshold'])} ({how}): Precision {_number(metrics['precision'])}, "
            f"Recall {_number(metrics['recall'])}, F1 {_number(metrics['f1'])}",
        ]
        rows = []
        for class_id, s in sorted(metrics["class_stats"].items()):
            rows.append([class_name(label_map, class_id), s["gt_total"], s["pred_total"], _number(s["ap50"]),
                         _number(s["ap50_95"]), _number(s["dota_ap50"])])
        lines += ["", "=== Detection AP by Class ===",
                  render_table(["Class", "GT", "Pred", "AP50", "AP50:95", "DOTA AP50"], rows, align="lrrrrr", gap=2)]
    on_edge = metrics.get("detections_on_edge_cases", 0)
    if on_edge:
        lines.append(f"{on_edge} detection(s) of ground-truth boxes dropped at the frame edge (--exclude_edge_cases) "
                     "are left out here: neither hits nor false alarms")
    unpaired = metrics.get("detection_frames_without_predictions", 0)
    if unpaired:
        lines.append(f"{unpaired} frame(s) without a prediction file count as frames with no detections here "
                     "(their ground truth is missed)")
    lines += ["", "=== Confusion Matrix ===", render_confusion(metrics, label_map)]
    return "\n".join(lines) + "\n"


def render_confusion(metrics: dict, label_map: dict | None = None) -> str:
    """Rows ground truth, columns predicted, the last of each the background."""
    label_map = label_map or {}
    matrix = metrics["confusion_matrix"]
    names = [class_name(label_map, c) if c != "background" else "background" for c in matrix["classes"]]
    counted = ""
    if metrics.get("detection_scored"):
        counted = f", detections with confidence >= {_number(metrics['conf_threshold'])}"
    header = f"(rows: ground truth, columns: predicted; IoU>=0.5, class-agnostic one-to-one pairs{counted})"
    rows = [[name, *counts] for name, counts in zip(names, matrix["counts"])]
    return header + "\n" + render_table(["GT \\ Pred", *names], rows, gap=2)
