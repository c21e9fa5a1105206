"""Figures of the detection metrics: the confusion matrix and the precision-recall curve per class."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from hbb2obb.detection.evaluate import RECALL_THRESHOLDS  # noqa: E402
from hbb2obb.io.labelmap import class_name  # noqa: E402


def confusion_figure(metrics: dict, label_map: dict | None = None) -> Figure:
    """The confusion matrix as a heat map, each cell's count written in it; rows ground truth.

    Colours follow each row's share (a row is one ground-truth class), so a rare class reads as
    clearly as a common one; the counts are the numbers.
    """
    label_map = label_map or {}
    matrix = metrics["confusion_matrix"]
    counts = np.asarray(matrix["counts"], dtype=float)
    names = [class_name(label_map, c) if c != "background" else "background" for c in matrix["classes"]]
    totals = counts.sum(axis=1, keepdims=True)
    share = np.divide(counts, totals, out=np.zeros_like(counts), where=totals > 0)
    size = max(4.0, 0.9 * len(names) + 2.5)
    fig = Figure(figsize=(size + 1.2, size), dpi=110)
    ax = fig.add_subplot()
    image = ax.imshow(share, cmap="Blues", vmin=0.0, vmax=1.0)
    for (row, col), count in np.ndenumerate(counts):
        ax.text(col, row, f"{int(count)}", ha="center", va="center", fontsize=9,
                color="white" if share[row, col] > 0.6 else "black")
    ax.set_xticks(range(len(names)), names, rotation=45, ha="right")
    ax.set_yticks(range(len(names)), names)
    ax.set_xlabel("predicted")
    ax.set_ylabel("ground truth")
    where = "IoU≥0.5, class-agnostic one-to-one"
    if metrics.get("detection_scored"):
        where += f", conf≥{metrics['conf_threshold']:.3g}"
    ax.set_title(f"Confusion matrix ({where})", fontsize=10)
    fig.colorbar(image, ax=ax, fraction=0.046, pad=0.04, label="share of the ground-truth row")
    fig.tight_layout()
    return fig


def pr_figure(summary, metrics: dict, label_map: dict | None = None) -> Figure:
    """Precision against recall per class: COCO's 101-point curve at IoU 0.5, AP50 in the legend.

    Parameters
    ----------
    summary : DetectionSummary
        ``EvaluationResult.detection_summary`` of a run whose predictions carry scores.
    """
    label_map = label_map or {}
    acc = summary.accumulation
    fig = Figure(figsize=(6.4, 5.2), dpi=110)
    ax = fig.add_subplot()
    at_50 = int(np.flatnonzero(np.isclose(acc.params.iou_thresholds, 0.5))[0])
    for k, class_id in enumerate(acc.classes.tolist()):
        precision = acc.precision[at_50, :, k, 0, -1]
        if np.isnan(precision).all():
            continue  # no ground truth of this class: no curve
        ap = metrics["class_stats"][int(class_id)]["ap50"]
        ax.plot(RECALL_THRESHOLDS, precision, lw=1.6, label=f"{class_name(label_map, class_id)}  AP50 {ap:.3f}")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("recall")
    ax.set_ylabel("precision (interpolated)")
    ax.grid(alpha=0.3)
    ax.set_title(f"Precision-recall at IoU 0.5 (COCO rule), mAP50 {metrics['map50']:.3f}", fontsize=10)
    ax.legend(loc="lower left", fontsize=8, frameon=False)
    fig.tight_layout()
    return fig
