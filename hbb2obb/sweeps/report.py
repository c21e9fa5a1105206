"""Reading sweep folders back, and rendering them for people: ``summary.txt`` and dry-run plans.

A results folder may come from this toolkit or from the reference tool, whose older files lack
``sem_iou``, the IoU ladder or the angle keys: :func:`load_run` derives the SEM from the
standard deviation and the match count, and says which metrics are absent instead of failing.
"""

from __future__ import annotations

import datetime
import difflib
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from hbb2obb.errors import InputError, UsageError
from hbb2obb.report.textable import render_table
from hbb2obb.scoring.metrics import LADDER_ALIASES
from hbb2obb.sweeps.records import record_problem
from hbb2obb.sweeps.runner import RESERVED_KEYS, RESULTS_NAME, RUN_CONFIG_NAME, best_record, format_value, read_yaml

#: Metrics ``--plot_metric`` accepts: label, whether higher is better, the key of its spread.
PLOT_METRICS = {
    "avg_iou": ("Average IoU", True, "std_iou"),
    "median_iou": ("Median IoU", True, None),
    "iou_at_50": ("Share of pairs with IoU >= 0.50", True, None),
    "iou_at_75": ("Share of pairs with IoU >= 0.75", True, None),
    "iou_at_85": ("Share of pairs with IoU >= 0.85", True, None),
    "iou_at_90": ("Share of pairs with IoU >= 0.90", True, None),
    "avg_angle_error": ("Mean orientation error (deg)", False, "std_angle_error"),
    "median_angle_error": ("Median orientation error (deg)", False, None),
    "p90_angle_error": ("Orientation error, 90th percentile (deg)", False, None),
}
DEFAULT_PLOT_METRIC = "avg_iou"
#: Drawn beside ``plot.png`` by default: the mean saturates, these keep separating settings.
EXTRA_PLOT_METRICS = ("p90_angle_error", "iou_at_90")


def check_plot_metric(name: str) -> str:
    """``name`` if it is a metric the plots can draw; a usage error listing them otherwise."""
    if name not in PLOT_METRICS:
        close = difflib.get_close_matches(name, PLOT_METRICS, n=1)
        hint = f" (did you mean {close[0]}?)" if close else ""
        raise UsageError(f"unknown plot metric {name!r} (--plot_metric){hint}; choose one of {', '.join(PLOT_METRICS)}")
    return name


def metric_value(record: dict, metric: str) -> Optional[float]:
    """A record's value of a flat metric name (``iou_at_90`` reads the ladder); ``None`` if absent.

    Examples
    --------
    >>> metric_value({"iou_fractions": {"0.90": 0.5}}, "iou_at_90"), metric_value({}, "avg_iou")
    (0.5, None)
    """
    if metric in LADDER_ALIASES:
        value = (record.get("iou_fractions") or {}).get(LADDER_ALIASES[metric])
    else:
        value = record.get(metric)
    return None if value is None or isinstance(value, (dict, list, bool)) else float(value)


def with_sem(record: dict) -> dict:
    """The record with ``sem_iou`` derived from ``std_iou`` and ``total_matches`` when it lacks one."""
    if "sem_iou" in record or "std_iou" not in record or "total_matches" not in record:
        return record
    n = int(record["total_matches"])
    return {**record, "sem_iou": float(record["std_iou"]) / math.sqrt(n) if n > 0 else 0.0}


def infer_axes(records: list) -> list[str]:
    """The grid axes of a results file: the keys each record starts with, before its first metric.

    Records put their axis values first (this toolkit and the reference tool alike), so keys
    after the first metric, including metrics a newer version added, are never taken for axes.

    Examples
    --------
    >>> infer_axes([{"imgsz": 640, "scale_factor": 0.0, "avg_iou": 0.8, "new_metric": 1.0}])
    ['imgsz', 'scale_factor']
    """
    axes: list[str] = []
    for record in records:
        for key in record:
            if key in RESERVED_KEYS:
                break
            if key not in axes:
                axes.append(key)
    return axes


@dataclass
class RunResults:
    """One sweep folder read back from disk."""

    name: str
    folder: Path
    records: list
    axes: list
    sweep_seconds: Optional[float] = None
    run_config: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)

    @property
    def ok_records(self) -> list:
        return [r for r in self.records if r.get("status", "ok") == "ok"]

    @property
    def failed(self) -> list:
        return [r for r in self.records if r.get("status") == "failed"]

    @property
    def best(self) -> Optional[dict]:
        return best_record(self.records)

    @property
    def converter(self) -> str:
        config = self.run_config
        if config.get("converter"):
            return str(config["converter"])
        if self.models:  # written by the reference tool
            return "SAM " + " ".join(self.models)
        return "?"

    @property
    def models(self) -> Optional[list]:
        """The SAM models of a run the reference tool measured (its config names them), else ``None``."""
        models = self.run_config.get("sam_models")
        if isinstance(models, str):
            models = [models]
        return [str(m) for m in models] if isinstance(models, list) and models else None

    def missing_metrics(self, metrics) -> list[str]:
        """Which of ``metrics`` no ok record holds (older results files lack some)."""
        return [m for m in metrics if not any(metric_value(r, m) is not None for r in self.ok_records)]


def load_run(folder: Path) -> RunResults:
    """Read ``results.yaml`` (and ``run_config.yaml`` or the reference's ``config.yaml``) of a run."""
    folder = Path(folder)
    path = folder / RESULTS_NAME
    if not path.is_file():
        raise InputError(f"{path}: no results file (nothing measured yet?)")
    document = read_yaml(path)
    records = document.get("all_results") or []
    if not isinstance(records, list):
        raise InputError(f"{path}: 'all_results' must be a list of mappings")
    notes, sound = [], []
    for number, record in enumerate(records, start=1):
        problem = record_problem(record)
        if problem is None:
            sound.append(record)
            continue
        point = ", ".join(f"{k}={format_value(record[k])}" for k in infer_axes([record])) \
            if isinstance(record, dict) else ""
        notes.append(f"{path}: record {number}{f' ({point})' if point else ''} skipped: {problem}")
    records = sound
    if any("sem_iou" not in r and "avg_iou" in r for r in records):
        notes.append("sem_iou derived from std_iou / sqrt(total_matches) (written by an older version)")
    records = [with_sem(r) for r in records]
    run_config = {}
    for name in (RUN_CONFIG_NAME, "config.yaml"):
        if (folder / name).is_file():
            run_config = read_yaml(folder / name)
            break
    seconds = document.get("sweep_seconds")
    axes = infer_axes(records)
    if run_config.get("sam_models"):  # the reference records its fixed fragment_ratio in every point: no axis
        axes = [a for a in axes if a != "fragment_ratio"]
    return RunResults(folder.name, folder, records, axes,
                      None if seconds is None else float(seconds), run_config, notes)


def _fmt(value, spec: str, suffix: str = "") -> str:
    return "-" if value is None else f"{value:{spec}}{suffix}"


def _ladder_line(record: dict) -> str:
    fractions = record.get("iou_fractions") or {}
    if not fractions:
        return "-"
    return "  ".join(f"IoU>={k}: {float(v):.1%}" for k, v in sorted(fractions.items()))


def edge_notes(records: list, axes: list, best: dict) -> list[str]:
    """A note for each numeric axis (three values or more) whose best value is the smallest or
    largest swept: the optimum may lie outside the grid.

    Examples
    --------
    >>> recs = [{"sf": v} for v in (0.0, 0.1, 0.2)]
    >>> edge_notes(recs, ["sf"], recs[2])
    ['the best sf (0.2) is the largest swept (0 to 0.2): the optimum may lie beyond it']
    """
    notes = []
    for axis in axes:
        values = sorted({r[axis] for r in records if isinstance(r.get(axis), (int, float))
                         and not isinstance(r.get(axis), bool)})
        if len(values) < 3 or axis not in best or best[axis] not in (values[0], values[-1]):
            continue
        side = "smallest" if best[axis] == values[0] else "largest"
        notes.append(f"the best {axis} ({format_value(best[axis])}) is the {side} swept "
                     f"({format_value(values[0])} to {format_value(values[-1])}): the optimum may lie beyond it")
    return notes


#: How ``summary.txt`` names the reference tool's three axes: in the best point, and in each ranked line.
AXIS_LABELS = {"imgsz": ("Image Size", "ImgSz"), "scale_factor": ("Scale Factor", "SF"),
               "opening_kernel_percentage": ("Opening Kernel", "K")}


def exact(value, decimals: int = 4) -> str:
    """A number with at least ``decimals`` decimals and as many more (up to 8) as it needs to be
    read back unchanged, so a grid value such as 0.0125 is never shown as a value not swept.
    Pairs (short, long) are joined by a comma; anything else is shown as it is.

    Examples
    --------
    >>> exact(0.04), exact(0.0125), exact(-0.01), exact(1280), exact([0.02, 0.05])
    ('0.0400', '0.0125', '-0.0100', '1280', '0.0200,0.0500')
    >>> exact(1e-9)
    '0.00000000'
    """
    if isinstance(value, (list, tuple)):
        return ",".join(exact(v, decimals) for v in value)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, int):
        return str(value)
    for places in range(decimals, 9):
        text = f"{value:.{places}f}"
        if float(text) == value:
            return text
    return f"{value:.8f}"


def _axis_line(axis: str, value) -> str:
    label = AXIS_LABELS.get(axis, (axis,))[0]
    return f"  {label}: {exact(value) if axis in AXIS_LABELS else format_value(value)}"


def _ranked_line(rank: int, record: dict, axes: list) -> str:
    """One grid point in the reference's layout: axes, ``IoU: mean ± std``, ``Angle p90:``, ladder, time."""
    cells = []
    for axis in axes:
        value = record.get(axis, "-")
        if axis == "imgsz":
            cells.append(f"ImgSz: {format_value(value):>5}")
        elif axis in AXIS_LABELS:
            cells.append(f"{AXIS_LABELS[axis][1]}: {exact(value):>7}")
        else:
            cells.append(f"{axis}: {format_value(value)}")
    share = metric_value(record, "iou_at_90")
    cells += [f"IoU: {record['avg_iou']:8.5f} ± {_fmt(record.get('std_iou'), '8.5f')}",
              f"Angle p90: {_fmt(record.get('p90_angle_error'), '6.2f')} deg",
              f"IoU>=0.90: {_fmt(share, '6.1%')}",
              f"Time: {_fmt(record.get('execution_time'), '5.2f', 's')}",
              f"SEM: {_fmt(record.get('sem_iou'), '.5f')}"]
    return f"{rank:4d}. " + ", ".join(cells)


def render_run_summary(run: RunResults, written: Optional[datetime.datetime] = None) -> str:
    """``summary.txt``: the best point in full, every point ranked by mean IoU, then failures.

    The labels are the reference tool's (``Image Size:``, ``Total Matches:``, one ``Angle p90:``
    line per grid point), so what a script reads out of its summaries it reads out of these;
    the lines it lacks (converter, ties, notes, SEM) are added, never put in place of one.
    """
    written = written or datetime.datetime.now()
    best = run.best
    lines = [f"Benchmark Run: {run.name}", f"Converter: {run.converter}",
             f"Written: {written:%Y-%m-%d %H:%M:%S}",
             f"Grid points: {len(run.records)} ({len(run.ok_records)} ok, {len(run.failed)} failed)"]
    if run.sweep_seconds is not None:
        lines.append(f"Sweep time: {run.sweep_seconds:.2f} s")
    lines += [""] + [f"Note: {note}" for note in run.notes] + ([""] if run.notes else [])
    if best is None:
        lines.append("BEST PARAMETERS: none (no grid point was scored)")
    else:
        tied = [r for r in run.ok_records if r is not best
                and r["avg_iou"] >= best["avg_iou"] - best.get("sem_iou", 0.0)]
        lines += ["BEST PARAMETERS:"]
        lines += [_axis_line(axis, best[axis]) for axis in run.axes if axis in best]
        lines += [
            f"  Average IoU: {best['avg_iou']:.5f} ± {_fmt(best.get('std_iou'), '.5f')} "
            f"(SEM {_fmt(best.get('sem_iou'), '.5f')})",
            f"  Median IoU: {_fmt(best.get('median_iou'), '.5f')}",
            f"  Matched Boxes Above Threshold: {_ladder_line(best)}",
            f"  Orientation Error: p90 {_fmt(best.get('p90_angle_error'), '.2f', ' deg')}, "
            f"median {_fmt(best.get('median_angle_error'), '.2f', ' deg')}, "
            f"mean {_fmt(best.get('avg_angle_error'), '.2f')} +/- {_fmt(best.get('std_angle_error'), '.2f', ' deg')}",
            f"  Total Matches: {best.get('total_matches', '-')}",
            f"  Total GT: {best.get('total_gt', '-')}",
            f"  Total Pred: {best.get('total_pred', '-')}",
            f"  Execution Time: {_fmt(best.get('execution_time'), '.2f', ' seconds')}",
            f"  Within one SEM of it (a tie): {len(tied)} other point(s)",
        ]
        lines += [f"  Note: {note}" for note in edge_notes(run.ok_records, run.axes, best)]
    ranked = sorted(run.ok_records, key=lambda r: -r["avg_iou"])  # stable: grid order breaks ties
    lines += ["", "ALL RESULTS (sorted by Average IoU):"]
    lines += [_ranked_line(i + 1, r, run.axes) for i, r in enumerate(ranked)]
    if run.failed:
        lines += ["", f"FAILED GRID POINTS ({len(run.failed)}):"]
        for record in run.failed:
            where = ", ".join(f"{a}={format_value(record[a])}" for a in run.axes if a in record)
            error = str(record.get("error", "")).strip().splitlines() or ["(no message)"]
            lines.append(f"  {where}: {error[0]}")
            lines += [f"      {line}" for line in error[1:]]
    return "\n".join(lines) + "\n"


def render_dry_run(entries: list, frames: int, title: str) -> str:
    """What a sweep or benchmark would do: runs, grid sizes, points to measure, total cost.

    ``entries`` holds ``(name, converter, grid description, points, to_measure, seconds_per_point)``
    tuples; ``seconds_per_point`` is the mean conversion time of earlier results, or ``None``.
    """
    rows, total, todo, estimate, known = [], 0, 0, 0.0, True
    for name, converter, grid, points, to_measure, per_point in entries:
        status = "complete" if to_measure == 0 else ("to measure" if to_measure == points
                                                     else f"{points - to_measure} measured, {to_measure} to go")
        rows.append([name, converter, grid, points, status])
        total += points
        todo += to_measure
        if per_point is None:
            known = known and to_measure == 0
        else:
            estimate += per_point * to_measure
    lines = [title, render_table(["run", "converter", "grid", "points", "status"], rows, align="lllrl", indent="  "),
             "",
             f"Total: {len(entries)} run(s), {total} grid point(s), {todo} to measure: "
             f"{todo} conversion(s) of the whole set of {frames} frame(s) ({todo * frames} frame conversions)."]
    if todo and known:
        lines.append(f"Estimated conversion time from earlier results: {estimate:.1f} s.")
    elif todo:
        lines.append("No earlier results to estimate the time from: the cost is the grid points above.")
    lines.append("Dry run: nothing was converted or written.")
    return "\n".join(lines) + "\n"
