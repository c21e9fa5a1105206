"""Figures of sweeps: a metric against the scale factor per run, and runs against their cost.

Both functions take plain records (the dicts of ``results.yaml``) and return a Figure on an Agg
canvas; :func:`save_figure` writes one. Nothing here reads files or decides what is best: the
caller passes the chosen point.
"""

from __future__ import annotations

import math
from numbers import Real
from pathlib import Path
from typing import Optional, Sequence

import matplotlib
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import PercentFormatter

from hbb2obb.io.atomic import atomic_path
from hbb2obb.sweeps.report import PLOT_METRICS, metric_value
from hbb2obb.sweeps.runner import format_value

COLORS = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000")
MIN_AREA, MAX_AREA = 25.0, 320.0  # marker areas (pt^2) of the fastest and the slowest point


def _is_number(value) -> bool:
    return isinstance(value, Real) and not isinstance(value, bool)


def _x_axis(records: list, axes: list) -> Optional[str]:
    """The axis to draw along: the scale factor when swept, else the first numeric axis."""
    if "scale_factor" in axes:
        return "scale_factor"
    for axis in axes:
        if all(_is_number(r.get(axis)) for r in records):
            return axis
    return None


def _x_of(record: dict, axis: Optional[str], index: int) -> float:
    if axis is None:
        return float(index)
    value = record[axis]
    return float(value[0] if isinstance(value, (list, tuple)) else value)  # a short,long pair: the short side


def _series_key(record: dict, axis: Optional[str], others: list) -> tuple:
    key = [(a, format_value(record.get(a, "-"))) for a in others]
    value = record.get(axis) if axis else None
    if isinstance(value, (list, tuple)) and len(value) == 2:
        key.append(("long-side factor", format_value(value[1])))
    return tuple(key)


TIMES_ALIKE = 1.5  # slowest over fastest below this: marker area would show timing noise, so it is dropped


def _areas(seconds: np.ndarray, top: float) -> np.ndarray:
    if top <= 0:
        return np.full(seconds.shape, (MIN_AREA + MAX_AREA) / 2)
    return MIN_AREA + (MAX_AREA - MIN_AREA) * np.clip(seconds / top, 0, 1)


def standard_error(record: dict, metric: str) -> Optional[float]:
    """The standard error of a record's value of ``metric``: what decides whether two points tie.

    The SEM of a mean (``sem_iou``, else std over the root of the matches), the binomial error
    ``sqrt(p (1 - p) / n)`` of a ladder share; ``None`` for medians and percentiles, whose error
    the record cannot give.

    Examples
    --------
    >>> standard_error({"avg_iou": 0.9, "sem_iou": 0.004}, "avg_iou")
    0.004
    >>> standard_error({"iou_fractions": {"0.90": 0.5}, "total_matches": 100}, "iou_at_90")
    0.05
    >>> standard_error({"p90_angle_error": 4.0, "total_matches": 100}, "p90_angle_error") is None
    True
    """
    n = record.get("total_matches")
    if metric == "avg_iou" and record.get("sem_iou") is not None:
        return float(record["sem_iou"])
    if not _is_number(n) or n <= 0:
        return None
    if metric in ("avg_iou", "avg_angle_error"):
        std = record.get("std_iou" if metric == "avg_iou" else "std_angle_error")
        return None if std is None else float(std) / math.sqrt(n)
    if metric.startswith("iou_at_"):
        share = metric_value(record, metric)
        return None if share is None else math.sqrt(share * (1.0 - share) / n)
    return None


def _value_text(metric: str, value: float, digits: int = 4) -> str:
    """A value in the unit of its axis: shares as percent (one decimal), others to ``digits`` figures."""
    return f"{value:.1%}" if metric.startswith("iou_at_") else f"{value:.{digits}g}"


def sweep_figure(records: Sequence[dict], axes: Sequence[str], metric: str = "avg_iou",
                 best: Optional[dict] = None, title: str = "") -> Figure:
    """The metric against the scale factor: one series per combination of the other axes.

    Error bars are the standard error of each point (:func:`standard_error`): two points closer
    than about two of them are a tie. Marker area grows with the conversion time, unless the
    times are all alike (slowest under :data:`TIMES_ALIKE` times the fastest), and ``best`` (the
    ranked best point) is starred. The legend and the best point's description sit beside the
    axes, where they cover no point. Axes holding one value across the records are named in the
    subtitle, not in the legend.

    Examples
    --------
    >>> recs = [{"scale_factor": s, "avg_iou": 0.8 + s, "sem_iou": 0.005, "execution_time": 1.0}
    ...         for s in (0.0, 0.05)]
    >>> fig = sweep_figure(recs, ["scale_factor"], best=recs[1])
    >>> fig.axes[0].get_xlabel()
    'scale_factor'
    """
    label, higher_better, _ = PLOT_METRICS[metric]
    failed = sum(1 for r in records if r.get("status", "ok") != "ok")
    records = [r for r in records if r.get("status", "ok") == "ok" and metric_value(r, metric) is not None]
    axis = _x_axis(records, list(axes))
    varying = [a for a in axes if a != axis and len({format_value(r.get(a, "-")) for r in records}) > 1]
    fixed = [a for a in axes if a != axis and a not in varying and records and a in records[0]]
    fig = Figure(figsize=(11.0, 5.6), dpi=110, facecolor="white", layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    times = np.array([float(r.get("execution_time") or 0.0) for r in records])
    top = float(times.max()) if times.size else 0.0
    fastest = float(times.min()) if times.size else 0.0
    sized = top > 0 and (fastest <= 0 or top / fastest >= TIMES_ALIKE)
    groups: dict = {}
    for index, record in enumerate(records):
        groups.setdefault(_series_key(record, axis, varying), []).append((_x_of(record, axis, index), record))
    xs = [_x_of(r, axis, i) for i, r in enumerate(records)]
    dodge = 0.006 * ((max(xs) - min(xs)) if xs else 0.0)  # error bars of series sharing an x side by side
    errors_drawn = False
    for number, (key, members) in enumerate(groups.items()):
        members.sort(key=lambda pair: pair[0])
        x = np.array([m[0] for m in members])
        y = np.array([metric_value(m[1], metric) for m in members])
        color = COLORS[number % len(COLORS)]
        name = ", ".join(f"{a}={v}" for a, v in key) or "all points"
        errors = [standard_error(m[1], metric) for m in members]
        if all(e is not None for e in errors):
            shift = (number - (len(groups) - 1) / 2) * dodge
            ax.errorbar(x + shift, y, yerr=np.array(errors), fmt="none", ecolor=color, alpha=0.8, capsize=3,
                        linewidth=1.2, zorder=2)
            errors_drawn = True
        ax.plot(x, y, color=color, linewidth=1.3, alpha=0.8, label=name)
        seconds = np.array([float(m[1].get("execution_time") or 0.0) for m in members])
        area = _areas(seconds, top) if sized else np.full(len(members), 60.0)
        ax.scatter(x, y, s=area, color=color, alpha=0.75, edgecolors="white", linewidths=0.6, zorder=3)
    if best is not None and metric_value(best, metric) is not None and best in records:
        bx, by = _x_of(best, axis, records.index(best)), metric_value(best, metric)
        ax.scatter([bx], [by], marker="*", s=420, color="gold", edgecolors="black", linewidths=1.0, zorder=5,
                   label="best (highest average IoU)")
        where = "\n".join(f"{a}={format_value(best[a])}" for a in axes if a in best)
        error = standard_error(best, metric)
        spread = f" ± {_value_text(metric, error, 2)}" if error is not None else ""
        ax.text(1.02, 0.0, f"best point (star):\n{where}\n{metric} = {_value_text(metric, by)}{spread}",
                transform=ax.transAxes, ha="left", va="bottom", fontsize=8.5,
                bbox={"boxstyle": "round,pad=0.4", "facecolor": "white", "edgecolor": "0.6"})
    ax.set_xlabel(axis or "grid point")
    if axis is not None and any(isinstance(r.get(axis), (list, tuple)) for r in records):
        ax.set_xlabel(f"{axis} (short side)")
    ax.set_ylabel(label + ("" if higher_better else "  (lower is better)"))
    if metric.startswith("iou_at_"):
        ax.yaxis.set_major_formatter(PercentFormatter(1.0))
    ax.grid(True, alpha=0.3)
    subtitle = ", ".join(f"{a}={format_value(records[0][a])}" for a in fixed)
    if sized:
        timing = f"marker area: conversion time ({fastest:.2g} to {top:.2g} s)"
    elif top:
        timing = f"conversion times alike ({fastest:.2g} to {top:.2g} s): one marker size"
    else:
        timing = ""
    notes = [s for s in (subtitle, timing,
                         "error bars: ±1 standard error (the point's own uncertainty)" if errors_drawn else
                         "no error bars: the results give no standard error of this statistic" if records else "",
                         f"{failed} failed point(s) not drawn" if failed else "") if s]
    ax.set_title((title + "\n" if title else "") + "; ".join(notes), fontsize=10)
    handles, labels = ax.get_legend_handles_labels()
    if sized:
        for seconds in sorted({fastest, top}):
            handles.append(Line2D([], [], linestyle="none", marker="o", color="0.5",
                                  markersize=math.sqrt(_areas(np.array([seconds]), top)[0])))
            labels.append(f"{seconds:.2g} s")
    if handles:
        ax.legend(handles, labels, fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0,
                  frameon=False, labelspacing=1.0)
    if not records:
        ax.text(0.5, 0.5, f"no grid point has {metric}", ha="center", va="center", transform=ax.transAxes)
    return fig


def pareto_front(seconds: Sequence[float], scores: Sequence[float], higher_better: bool = True) -> list[int]:
    """Indices of the points no other point beats on both time (lower) and score, fastest first.

    Examples
    --------
    >>> pareto_front([1.0, 2.0, 3.0, 4.0], [0.80, 0.79, 0.85, 0.85])
    [0, 2]
    """
    sign = 1.0 if higher_better else -1.0
    order = sorted(range(len(seconds)), key=lambda i: (seconds[i], -sign * scores[i]))
    front, best = [], -math.inf
    for i in order:
        if sign * scores[i] > best:
            front.append(i)
            best = sign * scores[i]
    return front


def comparison_figure(rows: Sequence[dict], metric: str = "avg_iou", title: str = "") -> Figure:
    """Each run's best point: its score against its conversion time, the Pareto front dashed.

    ``rows`` are best records with a ``name`` key, ranked leader first. For ``avg_iou`` the
    leader's ±1 SEM band is shaded: runs inside it are tied with the leader.
    """
    label, higher_better, _ = PLOT_METRICS[metric]
    rows = [r for r in rows if metric_value(r, metric) is not None]
    fig = Figure(figsize=(9.0, 5.6), dpi=110, facecolor="white")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    seconds = [max(float(r.get("execution_time") or 0.0), 1e-3) for r in rows]
    scores = [metric_value(r, metric) for r in rows]
    if rows and metric == "avg_iou" and rows[0].get("sem_iou") is not None:
        leader, sem = rows[0]["avg_iou"], float(rows[0]["sem_iou"])
        ax.axhspan(leader - sem, leader + sem, color="#56B4E9", alpha=0.18, linewidth=0,
                   label=f"leader ±1 SEM ({sem:.4f})")
    front = pareto_front(seconds, scores, higher_better)
    if len(front) > 1:
        ax.plot([seconds[i] for i in front], [scores[i] for i in front], linestyle="--", color="0.35",
                linewidth=1.2, label="Pareto front", zorder=2, drawstyle="steps-post")
    for members, color, name in ((front, "#D55E00", "on the Pareto front"),
                                 ([i for i in range(len(rows)) if i not in set(front)], "#0072B2", "dominated")):
        if members:
            ax.scatter([seconds[i] for i in members], [scores[i] for i in members], s=70, zorder=3, color=color,
                       edgecolors="black", linewidths=0.6, label=name)
    if seconds and max(seconds) / min(seconds) > 20:
        ax.set_xscale("log")
    ax.margins(x=0.15, y=0.15)
    ax.set_xlabel("conversion time of the best grid point (s)")
    ax.set_ylabel(label + ("" if higher_better else "  (lower is better)"))
    if metric.startswith("iou_at_"):
        ax.yaxis.set_major_formatter(PercentFormatter(1.0))
    ax.set_title(title or f"Best grid point per run: {label} against time", fontsize=10)
    ax.grid(True, alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=8, loc="best")
    if not rows:
        ax.text(0.5, 0.5, f"no run has {metric}", ha="center", va="center", transform=ax.transAxes)
    fig.tight_layout()
    _label_points(fig, ax, seconds, scores, [str(r.get("name", i)) for i, r in enumerate(rows)])  # after the layout
    return fig


def _label_points(fig, ax, xs, ys, labels, fontsize: float = 8.0) -> None:
    """Name each point, trying positions around it so that no two names overlap and every name
    stays inside the axes (a name past the right edge is cut off in the saved file)."""
    from matplotlib.transforms import Bbox

    renderer = fig.canvas.get_renderer()
    frame = ax.get_window_extent(renderer)
    centres = ax.transData.transform(np.column_stack([xs, ys])) if len(xs) else np.zeros((0, 2))
    radius = 7.0 * fig.dpi / 72  # a marker's half width in pixels
    markers = [Bbox.from_extents(cx - radius, cy - radius, cx + radius, cy + radius) for cx, cy in centres]
    placed = []
    offsets = ((6, 4, "left", "bottom"), (6, -4, "left", "top"), (-6, 4, "right", "bottom"),
               (-6, -4, "right", "top"), (6, 14, "left", "bottom"), (6, -14, "left", "top"),
               (-6, 14, "right", "bottom"), (-6, -14, "right", "top"))

    def outside(extent) -> float:
        """How far, in pixels, a name reaches past the axes."""
        return max(0.0, frame.x0 - extent.x0, extent.x1 - frame.x1, frame.y0 - extent.y0, extent.y1 - frame.y1)

    for i, (x, y, text) in enumerate(zip(xs, ys, labels)):
        obstacles = placed + markers[:i] + markers[i + 1:]
        tried = []
        for dx, dy, ha, va in offsets:
            note = ax.annotate(text, (x, y), xytext=(dx, dy), textcoords="offset points", ha=ha, va=va,
                                fontsize=fontsize)
            extent = note.get_window_extent(renderer)
            overlaps = sum(extent.overlaps(other) for other in obstacles)
            if not overlaps and not outside(extent):
                placed.append(extent)
                break
            tried.append((outside(extent) > 0, overlaps, outside(extent), (dx, dy, ha, va)))
            note.remove()
        else:  # no free place: inside the axes first, then the fewest overlaps
            *_, (dx, dy, ha, va) = min(tried, key=lambda t: t[:3])
            note = ax.annotate(text, (x, y), xytext=(dx, dy), textcoords="offset points", ha=ha, va=va,
                                fontsize=fontsize)
            placed.append(note.get_window_extent(renderer))


def save_figure(fig: Figure, path: Path) -> Path:
    """Write a figure as PNG (atomically) and return the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(path) as temporary:
        fig.savefig(temporary, dpi=fig.dpi, facecolor="white", format="png")
    return path


#: The panels of the print figure: metric, scale of its axis, axis label.
PRINT_PANELS = (("avg_iou", 1.0, "Mean IoU"), ("iou_at_90", 100.0, "Boxes at IoU \u2265 0.90 [%]"))
PRINT_WIDTH, PRINT_HEIGHT, PRINT_FONT = 6.4, 2.6, 7.5  # inches (a manuscript's text width), points


def print_figure(rows_by_metric: dict) -> Optional[Figure]:
    """The benchmark drawn for a manuscript: one panel per metric of :data:`PRINT_PANELS`, each
    run at its own best grid point for that metric against its conversion time.

    Drawn at text width so it is included at 100 %: no title (the caption's job), no type under
    7 pt, every point named, the Pareto front dashed and, on the mean, the leader's ±1 SEM band.
    A metric no run holds has no panel; ``None`` when neither has anything to draw.
    ``rows_by_metric`` maps each metric to its ranked rows (leader first).
    """
    panels = [(rows, metric, scale, label) for metric, scale, label in PRINT_PANELS
              for rows in [[r for r in rows_by_metric.get(metric) or [] if metric_value(r, metric) is not None]]
              if rows]
    if not panels:
        return None
    with matplotlib.rc_context({"font.size": PRINT_FONT, "axes.labelsize": PRINT_FONT, "xtick.labelsize": 7.0,
                                "ytick.labelsize": 7.0, "legend.fontsize": 7.0, "axes.linewidth": 0.6}):
        fig = Figure(figsize=(PRINT_WIDTH * len(panels) / len(PRINT_PANELS), PRINT_HEIGHT), dpi=150,
                     facecolor="white")
        FigureCanvasAgg(fig)
        axes = fig.subplots(1, len(panels), squeeze=False)[0]
        drawn = []
        for ax, (rows, metric, scale, label) in zip(axes, panels):
            higher = PLOT_METRICS[metric][1]
            seconds = [max(float(r.get("execution_time") or 0.0), 1e-3) for r in rows]
            scores = [metric_value(r, metric) * scale for r in rows]
            error = standard_error(rows[0], metric) if metric == "avg_iou" else None
            if error:
                ax.axhspan(scores[0] - error * scale, scores[0] + error * scale, color="0.5", alpha=0.15,
                           linewidth=0, zorder=1, label="\u00b11 standard error of the best")
            front = pareto_front(seconds, scores, higher)
            if len(front) > 1:
                ax.plot([seconds[i] for i in front], [scores[i] for i in front], color="0.35", linestyle="--",
                        linewidth=0.8, zorder=2, drawstyle="steps-post", label="Pareto front")
            ax.scatter(seconds, scores, s=22, color=COLORS[0], edgecolors="black", linewidths=0.4, zorder=3)
            ax.margins(x=0.2, y=0.25)
            if max(seconds) / min(seconds) > 20:
                ax.set_xscale("log")
            else:  # a linear time axis that starts below zero shows times that cannot be
                ax.set_xlim(left=max(0.0, ax.get_xlim()[0]))
            ax.set_xlabel("Time per conversion [s]")
            ax.set_ylabel(label)
            ax.grid(True, linestyle=":", linewidth=0.5, alpha=0.7)
            drawn.append((ax, seconds, scores, [str(r.get("name", i)) for i, r in enumerate(rows)]))
        handles, names = [], []
        for ax in axes:
            for handle, name in zip(*ax.get_legend_handles_labels()):
                if name not in names:
                    handles.append(handle)
                    names.append(name)
        fig.tight_layout(w_pad=2.0, rect=(0, 0, 1, 0.9 if handles else 1))
        if handles:
            fig.legend(handles, names, loc="upper center", ncol=len(handles), frameon=False)
        for ax, seconds, scores, names in drawn:
            _label_points(fig, ax, seconds, scores, names, fontsize=7.0)
    return fig


def save_pdf(fig: Figure, path: Path) -> Path:
    """Write a figure as PDF with TrueType fonts (publishers reject Type 3) and no creation date,
    so redrawing an unchanged folder writes the same bytes; atomically. Returns the path."""
    path = Path(path)
    with matplotlib.rc_context({"pdf.fonttype": 42}), atomic_path(path) as temporary:
        fig.savefig(temporary, format="pdf", bbox_inches="tight", pad_inches=0.02, metadata={"CreationDate": None})
    return path
