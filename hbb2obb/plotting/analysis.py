"""The analysis figure (``analysis.png``): three panels drawn from :func:`hbb2obb.analysis.cuts.analyze` data.

1. Mean IoU by ground-truth orientation band (the partition): points with SEM bars on a zoomed
   axis, said in the axis label; a bar would have to start at 0 and hide the differences.
2. The HBB prompt as-is against the conversion, per band: bars from 0, the lengths compare.
3. Converted-to-reference side ratios by reference off-axis band: bars from 1 (no change).

Each group carries its box count under the axis, so a high mean over three boxes reads as such.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

CONVERTED, AS_IS = "#1f77b4", "#bbbbbb"
RATIO_COLOURS = {"short_side": "#d62728", "long_side": "#2ca02c", "area": "#9467bd"}


def _tick_labels(labels, counts) -> list[str]:
    """Compact band label over its box count: ``"5 to 15 deg"`` becomes ``"5–15°\\nn = 22"``."""
    short = [label.replace(" to ", "–").replace(" deg", "°").replace(" ", "\n") for label in labels]
    return [f"{label}\nn = {count}" for label, count in zip(short, counts)]


def _legend_above(ax, columns: int) -> None:
    """Legend in a row between the title and the plot, where it can cover no bar."""
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=columns, fontsize=9, frameon=False)


def _zoomed_limits(values, errors) -> tuple[float, float]:
    """A y range around the points and their error bars, with a margin; within [0, 1]."""
    present = [(v, e) for v, e in zip(values, errors) if np.isfinite(v)]
    if not present:
        return 0.0, 1.0
    low = min(v - e for v, e in present)
    high = max(v + e for v, e in present)
    margin = max(0.01, 0.15 * (high - low))
    return max(0.0, low - margin), min(1.0, high + margin)


def _empty_panel(ax, message: str) -> None:
    ax.text(0.5, 0.5, message, ha="center", va="center", transform=ax.transAxes, fontsize=10, wrap=True)
    ax.set_xticks([])
    ax.set_yticks([])


def _orientation_panel(ax, partition: dict) -> None:
    groups = partition["groups"]
    ax.set_title("Mean IoU by ground-truth orientation", pad=24)
    if not any(g["boxes"] for g in groups):
        _empty_panel(ax, "no matched boxes")
        return
    x = np.arange(len(groups))
    # an empty band has no mean: no point, only its "n = 0" tick
    means = [g["avg_iou"] if g["boxes"] else np.nan for g in groups]
    sems = [g["sem_iou"] if g["boxes"] else np.nan for g in groups]
    ax.errorbar(x, means, yerr=sems, fmt="o", markersize=7, capsize=5, color=CONVERTED, elinewidth=1.4)
    ax.set_xticks(x, _tick_labels([g["label"] for g in groups], [g["boxes"] for g in groups]), fontsize=9)
    ax.set_xlim(-0.5, len(groups) - 0.5)
    ax.set_ylim(*_zoomed_limits(means, sems))
    ax.set_ylabel("mean IoU (± SEM); axis zoomed, not from 0")
    ax.set_xlabel("ground-truth off-axis angle")


def _identity_panel(ax, identity) -> None:
    if not identity:
        _empty_panel(ax, "no HBB prompts\n(give -hd/--hbb_dir)")
        ax.set_title("Prompt as-is vs converted", pad=24)
        return
    rows = identity["partition"]
    x = np.arange(len(rows))
    width = 0.38
    as_is = [r["iou_as_is"] for r in rows]
    converted = [r["iou_converted"] for r in rows]
    ax.bar(x - width / 2, as_is, width, yerr=[r["sem_as_is"] for r in rows], capsize=3, color=AS_IS,
           label="HBB prompt as-is")
    ax.bar(x + width / 2, converted, width, yerr=[r["sem_converted"] for r in rows], capsize=3, color=CONVERTED,
           label="converted")
    ax.set_xticks(x, _tick_labels([r["label"] for r in rows], [r["boxes"] for r in rows]), fontsize=9)
    ax.set_ylim(0.0, 1.0)
    ax.set_ylabel("mean IoU (± SEM)")
    ax.set_xlabel("ground-truth off-axis angle")
    ax.set_title("Prompt as-is vs converted", pad=24)
    _legend_above(ax, 2)


def _ratio_panel(ax, side_ratios: dict) -> None:
    bands = side_ratios["bands"]
    if not any(b["boxes"] for b in bands):
        _empty_panel(ax, "no matched boxes in the controlled subset")
        ax.set_title("Converted / reference size", pad=24)
        return
    x = np.arange(len(bands))
    width = 0.26
    values = []
    for k, (key, colour) in enumerate(RATIO_COLOURS.items()):
        heights = np.array([b[key] if b["boxes"] else np.nan for b in bands])
        values += heights[np.isfinite(heights)].tolist()
        # Bars grow from 1 (no change), so a shrink reads as a bar pointing down.
        ax.bar(x + (k - 1) * width, heights - 1.0, width, bottom=1.0, color=colour, label=key.replace("_", " "))
    ax.axhline(1.0, color="black", linewidth=0.8, linestyle="--")
    spread = max(abs(v - 1.0) for v in values) if values else 0.1
    margin = max(0.02, spread * 1.25)
    ax.set_ylim(1.0 - margin, 1.0 + margin)
    ax.set_xticks(x, _tick_labels([b["label"] for b in bands], [b["boxes"] for b in bands]), fontsize=9)
    ax.set_ylabel("converted / reference (mean per box); bars from 1, no change")
    ax.set_xlabel("reference off-axis angle")
    ax.set_title("Converted / reference size", pad=24)
    _legend_above(ax, 3)


def plot_analysis(data: dict) -> Figure:
    """The three-panel figure of an analysis.

    Parameters
    ----------
    data : dict
        From :func:`hbb2obb.analysis.cuts.analyze`.

    Returns
    -------
    matplotlib.figure.Figure
        Not saved; the caller writes it (``fig.savefig(path, dpi=120)``).
    """
    fig = Figure(figsize=(18, 5.6), layout="constrained")
    axes = fig.subplots(1, 3)
    _orientation_panel(axes[0], data["orientation_partition"])
    _identity_panel(axes[1], data.get("identity"))
    _ratio_panel(axes[2], data["side_ratios"])
    for ax in axes:
        ax.grid(axis="y", alpha=0.3)
        ax.set_axisbelow(True)
    o = data["overall"]
    fig.suptitle(f"{o['boxes']} matched boxes: mean IoU {o['avg_iou']:.4f} (SEM {o['sem_iou']:.4f}), "
                 f"orientation error p90 {o['p90_angle_error']:.2f}°", fontsize=12)
    return fig
