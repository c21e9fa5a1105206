"""Figures of the detection metrics: the confusion matrix and the precision-recall curve per class."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from hbb2obb.detection.evaluate import RECALL_THRESHOLDS  # noqa: E402
from hbb2obb.io.labelmap import class_name  # noqa: E402

#: Classes a figure draws at most: a heat map, a legend or a row of bars stays readable (and its
#: picture a few thousand pixels wide); the others are summed or left out, and the figure says so.
MAX_CLASSES = 25


#: Characters of a class name a figure writes; a longer name is cut, ending in "...".
NAME_CHARACTERS = 32


def short_name(name) -> str:
    """A class name as a figure writes it: at most :data:`NAME_CHARACTERS` characters.

    Examples
    --------
    >>> short_name("small-vehicle"), short_name("x" * 40)
    ('small-vehicle', 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxx...')
    """
    name = str(name)
    return name if len(name) <= NAME_CHARACTERS else name[: NAME_CHARACTERS - 3] + "..."


def top_classes(weights, limit: int = MAX_CLASSES) -> np.ndarray:
    """Indices of the ``limit`` largest ``weights`` (the first on a tie), in their own order.

    Examples
    --------
    >>> top_classes([5, 1, 9, 1, 7], limit=3).tolist()
    [0, 2, 4]
    >>> top_classes([1, 2], limit=3).tolist()
    [0, 1]
    """
    weights = np.asarray(weights, dtype=float)
    if weights.size <= limit:
        return np.arange(weights.size)
    return np.sort(np.argsort(-weights, kind="stable")[:limit])


def _capped(counts: np.ndarray, labels: list, limit: int) -> tuple[np.ndarray, list, int]:
    """The confusion counts with every class beyond the ``limit`` with the most boxes summed into one
    row and column (background kept apart): ``(counts, labels with "other" for them, how many)``."""
    real = [i for i, label in enumerate(labels) if label != "background"]
    if len(real) <= limit:
        return counts, labels, 0
    weight = counts.sum(axis=0) + counts.sum(axis=1)
    keep = [real[i] for i in top_classes(weight[real], limit).tolist()]
    rest = sorted(set(real) - set(keep))
    groups = [[i] for i in keep] + [rest] + [[i] for i, label in enumerate(labels) if label == "background"]
    merged = np.array([[counts[np.ix_(rows, cols)].sum() for cols in groups] for rows in groups])
    return merged, [labels[i] for i in keep] + ["other"] + ["background"] * (len(groups) - len(keep) - 1), len(rest)


def confusion_figure(metrics: dict, label_map: dict | None = None) -> Figure:
    """The confusion matrix as a heat map, each cell's count written in it; rows ground truth.

    Colours follow each row's share (a row is one ground-truth class), so a rare class reads as
    clearly as a common one; the counts are the numbers. Beyond :data:`MAX_CLASSES` classes, the
    classes with the most boxes (both sides) are drawn and the others summed into one "other"
    row and column; the whole matrix is in the metric dict.
    """
    label_map = label_map or {}
    matrix = metrics["confusion_matrix"]
    counts, labels, others = _capped(np.asarray(matrix["counts"], dtype=float), list(matrix["classes"]), MAX_CLASSES)
    names = [short_name(class_name(label_map, c)) if c not in ("background", "other") else
             (f"{others} other classes" if c == "other" else c) for c in labels]
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
    shown = f"; the {MAX_CLASSES} classes with the most boxes, {others} more summed" if others else ""
    ax.set_title(f"Confusion matrix\n({where}{shown})", fontsize=10)
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
    at_50 = int(np.flatnonzero(np.isclose(acc.params.iou_thresholds, 0.5))[0])
    # classes with ground truth (the others have no curve), at most MAX_CLASSES: those with the most boxes
    drawn = [k for k in range(len(acc.classes)) if not np.isnan(acc.precision[at_50, :, k, 0, -1]).all()]
    boxes = [metrics["class_stats"].get(int(acc.classes[k]), {}).get("gt_total", 0) for k in drawn]
    shown = [drawn[i] for i in top_classes(boxes).tolist()]
    beside = len(shown) > 8  # a long legend goes beside the curves, not over them
    fig = Figure(figsize=(9.0 if beside else 6.4, 5.2), dpi=110)
    ax = fig.add_subplot()
    for k in shown:
        class_id = int(acc.classes[k])
        precision = acc.precision[at_50, :, k, 0, -1]
        ap = metrics["class_stats"][class_id]["ap50"]
        name = short_name(class_name(label_map, class_id))
        ax.plot(RECALL_THRESHOLDS, precision, lw=1.6, label=f"{name}  AP50 {ap:.3f}")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("recall")
    ax.set_ylabel("precision (interpolated)")
    ax.grid(alpha=0.3)
    more = len(drawn) - len(shown)
    title = f"Precision-recall at IoU 0.5 (COCO rule), mAP50 {metrics['map50']:.3f}"
    if more:
        title += f"\nthe {len(shown)} classes with the most ground truth; {more} more in the metric dict"
    ax.set_title(title, fontsize=10)
    if beside:
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    else:
        ax.legend(loc="lower left", fontsize=8, frameon=False)
    fig.tight_layout()
    return fig
