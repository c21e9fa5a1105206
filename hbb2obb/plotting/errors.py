"""The error-decomposition figure (``errors.png``), drawn from the ``detection_errors`` data of the analysis.

Left: one bar per error type, its dAP overall, the number of errors printed on the bar. Right:
the same types per class, grouped by class, one colour per type (the legend above). dAPs are
AP points gained by fixing that type alone: longer bars are the errors to fix first.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from hbb2obb.plotting.detection import short_name, top_classes  # noqa: E402

TYPES = ("cls", "loc", "orient", "both", "dupe", "bkg", "miss")
LABELS = {"cls": "classification", "loc": "localization", "orient": "orientation", "both": "both",
          "dupe": "duplicate", "bkg": "background", "miss": "missed", "fp": "all false positives",
          "fn": "all false negatives"}
# colour-blind safe (Okabe-Ito), one per main type; FP and FN in greys
COLOURS = {"cls": "#E69F00", "loc": "#56B4E9", "orient": "#009E73", "both": "#CC79A7", "dupe": "#F0E442",
           "bkg": "#0072B2", "miss": "#D55E00", "fp": "#777777", "fn": "#BBBBBB"}


def _value(v) -> float:
    return np.nan if v is None else float(v)


def _overall_panel(ax, errors: dict) -> None:
    by_type = {t["type"]: t for t in errors["types"]}
    names = list(TYPES) + ["fp", "fn"]
    values = [_value(by_type[n]["dap"]) for n in names]
    y = np.arange(len(names))[::-1]
    ax.barh(y, np.nan_to_num(values), color=[COLOURS[n] for n in names], edgecolor="#333333", linewidth=0.5)
    top = max([v for v in values if np.isfinite(v)] + [0.01])
    for yi, n, v in zip(y, names, values):
        count = by_type[n]["errors"]
        text = f"{v:.3f}" + ("" if count is None else f"  ({count} errors)")
        ax.text(np.nan_to_num(v) + top * 0.02, yi, text, va="center", fontsize=8)
    ax.set_yticks(y, [LABELS[n] for n in names], fontsize=9)
    ax.set_xlim(0, top * 1.55)
    ax.axhline(1.5, color="#999999", linewidth=0.6, linestyle="--")
    ax.set_xlabel("dAP (AP gained by fixing this type alone)")
    ap = errors["overall"]["ap_tide"]
    ap_text = "n/a" if ap is None else f"{ap:.3f}"
    ax.set_title(f"Error types, all classes (AP{int(round(errors['fg'] * 100))} = {ap_text})", fontsize=11)
    ax.grid(axis="x", alpha=0.3)


def _shown(classes: list) -> list:
    """The classes the per-class panel draws: all, or the
    :data:`~hbb2obb.plotting.detection.MAX_CLASSES` with the most AP to gain."""
    gain = [sum(np.nan_to_num(_value(c[f"dap_{name}"])) for name in TYPES) for c in classes]
    return [classes[i] for i in top_classes(gain).tolist()]


def _class_panel(ax, classes: list, more: int) -> None:
    """The per-class bars of ``classes`` (those :func:`_shown` picks), ``more`` left out."""
    title = "dAP per class (AP gained in that class by fixing one type)"
    if more:
        title += f"\nthe {len(classes)} classes with the most to gain; {more} more in analysis.yaml"
    ax.set_title(title, fontsize=11, pad=44)
    if not classes:
        ax.text(0.5, 0.5, "no classes", ha="center", va="center", transform=ax.transAxes)
        return
    x = np.arange(len(classes))
    width = 0.8 / len(TYPES)
    for i, name in enumerate(TYPES):
        values = np.nan_to_num([_value(c[f"dap_{name}"]) for c in classes])
        ax.bar(x - 0.4 + width * (i + 0.5), values, width, color=COLOURS[name], label=LABELS[name],
               edgecolor="#333333", linewidth=0.3)
    ticks = [f"{short_name(c['class'])}\nAP {_value(c['ap_tide']):.2f}\nn = {c['boxes']}" for c in classes]
    ax.set_xticks(x, ticks, fontsize=8, rotation=0 if len(classes) <= 8 else 45,
                  ha="center" if len(classes) <= 8 else "right")
    ax.set_ylabel("dAP")
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=4, fontsize=8, frameon=False)
    ax.grid(axis="y", alpha=0.3)
    ax.set_xlim(-0.6, len(classes) - 0.4)


def plot_errors(errors: dict) -> Figure:
    """The two panels of the decomposition (``errors`` as :func:`~hbb2obb.analysis.detection_errors.detection_errors`
    gives it)."""
    classes = _shown(errors["classes"])
    width = max(6.0, 0.9 * len(classes))
    fig = Figure(figsize=(6.5 + width, 5.0), layout="constrained")
    left, right = fig.subplots(1, 2, width_ratios=[6.5, width])
    _overall_panel(left, errors)
    _class_panel(right, classes, len(errors["classes"]) - len(classes))
    return fig
