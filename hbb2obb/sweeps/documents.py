"""The files people read a sweep through: each run's ``summary.txt`` and plots, and the documents
of a benchmark folder (``summary.md``, ``summary_<metric>.md``, ``summary.tex``, the figures).

The benchmark documents keep the reference tool's layout (its 1.12.0 column order, headings
and file names), so a script or a manuscript written against its folders reads ours; what this
toolkit adds (a standard error column, the settings that are not the reference's three axes,
failed points, notes) comes after what the reference prints, never in place of it. A run the
reference measured is shown by its SAM models, as the reference shows it; a run of ours by its
name and converter.
"""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Optional

from hbb2obb.sweeps.report import (
    DEFAULT_PLOT_METRIC,
    EXTRA_PLOT_METRICS,
    PLOT_METRICS,
    load_run,
    metric_value,
    render_run_summary,
)
from hbb2obb.sweeps.runner import RESULTS_NAME, RUN_CONFIG_NAME, SUMMARY_NAME, SweepInputs, format_value

BENCHMARK_SUMMARY_NAME, BENCHMARK_TEX_NAME = "summary.md", "summary.tex"
COMPARISON_NAME, PRINT_FIGURE_NAME = "comparison.png", "comparison.pdf"
#: The reference tool's three axes, with how the tables head them (markdown, LaTeX).
STANDARD_AXES = {"imgsz": ("Image size", "Size"), "scale_factor": ("Scale factor", "Scale"),
                 "opening_kernel_percentage": ("Kernel", "Kernel")}


def metric_file_name(stem: str, metric: str, extension: str) -> str:
    """``summary.md`` for the ranking metric, ``summary_<metric>.md`` for any other (same for figures)."""
    return f"{stem}.{extension}" if metric == DEFAULT_PLOT_METRIC else f"{stem}_{metric}.{extension}"


def plot_metrics_for(metric: str) -> list[str]:
    """The metrics a run folder gets plots of: the default, the extras, and ``metric``."""
    wanted = [DEFAULT_PLOT_METRIC] + list(EXTRA_PLOT_METRICS)
    return wanted + ([metric] if metric not in wanted else [])


def plot_file_name(metric: str) -> str:
    return metric_file_name("plot", metric, "png")


def render_run_folder(folder: Path, metric: str = DEFAULT_PLOT_METRIC, plot: bool = True) -> tuple:
    """Rewrite ``summary.txt`` and the plots of a run folder from its ``results.yaml``.

    Returns ``(run, written paths, notes, skipped)``: a metric the results lack is not drawn;
    ``skipped`` says why when that metric is ``metric`` itself (the one asked for), ``notes``
    holds the rest. ``skipped`` is ``None`` when the plot of ``metric`` was drawn or not wanted.
    """
    run = load_run(folder)
    written = [folder / SUMMARY_NAME]
    written[0].write_text(render_run_summary(run), encoding="utf-8")
    notes = [f"{run.name}: {note}" for note in run.notes]
    skipped = None
    if plot:
        from hbb2obb.sweeps.plots import save_figure, sweep_figure

        wanted = plot_metrics_for(metric)
        missing = run.missing_metrics(wanted)
        for name in wanted:
            if name in missing:
                if name == metric:
                    skipped = f"{folder / RESULTS_NAME} holds no grid point recording {name!r}"
                else:
                    notes.append(f"{run.name}: no grid point holds {name}; {plot_file_name(name)} not drawn")
                continue
            title = run.name if run.name == run.converter else f"{run.name} ({run.converter})"
            fig = sweep_figure(run.records, run.axes, name, run.best, title=title)
            written.append(save_figure(fig, folder / plot_file_name(name)))
    return run, written, notes, skipped


# ------------------------------------------------------------------------------ benchmark rows
def best_on(run, metric: str) -> Optional[dict]:
    """The run's grid point that ``metric`` likes most; its best on mean IoU when no point holds it."""
    if metric == DEFAULT_PLOT_METRIC:
        return run.best
    higher = PLOT_METRICS[metric][1]
    scored = [r for r in run.ok_records if metric_value(r, metric) is not None]
    if not scored:
        return run.best  # kept in the table, its cells for the metric empty, as the reference does
    pick = max if higher else min
    return pick(scored, key=lambda r: metric_value(r, metric))  # the first in grid order wins a tie


def benchmark_rows(runs: list, metric: str = DEFAULT_PLOT_METRIC) -> list[dict]:
    """Each run's best grid point on ``metric``, with its name, models, converter and size,
    ranked by ``metric`` (runs holding no value of it last). Runs with no scored point are left out."""
    rows = []
    for run in runs:
        point = best_on(run, metric) if run.best is not None else None
        if point is None:
            continue
        rows.append({**point, "name": run.name, "converter": run.converter, "models": run.models,
                     "n_points": len(run.records), "n_failed": len(run.failed),
                     "sweep_seconds": run.sweep_seconds, "axes": run.axes})
    higher = PLOT_METRICS[metric][1]

    def rank(row):
        value = metric_value(row, metric)
        return (1, 0.0) if value is None else (0, -value if higher else value)

    return sorted(rows, key=rank)


def tied_with_leader(rows: list) -> list[bool]:
    """Whether each row's mean IoU is within the leader's SEM of the leader's (the leader too)."""
    if not rows:
        return []
    leader, sem = rows[0]["avg_iou"], float(rows[0].get("sem_iou") or 0.0)
    return [r["avg_iou"] >= leader - sem for r in rows]


def _other_axes(row: dict) -> list[str]:
    return [a for a in row["axes"] if a not in STANDARD_AXES and a in row]


def _axis_text(value) -> str:
    return format_value(value) if isinstance(value, (list, tuple)) else (
        f"{value:g}" if isinstance(value, float) else str(value))


def _f(value, spec, suffix=""):
    return "-" if value is None else format(value, spec) + suffix


def _who(row: dict, tex: bool = False) -> str:
    """A run as the tables name it: its SAM models (a reference run), else its name and converter."""
    if row.get("models"):
        return (" + " if tex else " ").join(row["models"])
    return row["name"] if row["converter"] in (row["name"], "?") else f"{row['name']} ({row['converter']})"


def _who_heading(rows: list) -> str:
    return "Models" if rows and all(r.get("models") for r in rows) else "Run"


def _annotation(row: dict, metric: str) -> str:
    """The best row's score on ``metric`` in words, for the 'Best overall' line."""
    value = metric_value(row, metric)
    if metric == DEFAULT_PLOT_METRIC:
        return f"average IoU {row['avg_iou']:.5f} ± {_f(row.get('std_iou'), '.5f')}"
    if value is None:
        return f"no {metric} recorded"
    if metric.startswith("iou_at_"):
        return f"IoU≥0.{metric[-2:]}: {value:.1%}"
    if metric == "median_iou":
        return f"median IoU={value:.5f}"
    words = {"p90_angle_error": "p90 angle", "median_angle_error": "median angle", "avg_angle_error": "mean angle"}
    return f"{words.get(metric, metric)}={value:.2f}°"


def _where(row: dict) -> str:
    parts = []
    for axis in row["axes"]:
        if axis not in row:
            continue
        value = row[axis]
        if axis == "imgsz":
            parts.append(f"{value} px")
        elif axis in STANDARD_AXES:
            parts.append(f"{'scale factor' if axis == 'scale_factor' else 'opening kernel'} {_axis_text(value)}")
        else:
            parts.append(f"{axis}={format_value(value)}")
    return "at " + ", ".join(parts) if parts else "at its only grid point"


def _inputs(runs: list, inputs: Optional[SweepInputs]) -> list[str]:
    """The three input folders: the benchmark file's, else what every run's config agrees on."""
    if inputs is not None:
        found = (inputs.img_source, inputs.hbb_dir, inputs.gt_dir)
    else:
        seen = {tuple(r.run_config.get(k) for k in ("img_source", "hbb_dir", "gt_dir")) for r in runs}
        found = seen.pop() if len(seen) == 1 else (None, None, None)
    labels = ("Images", "HBB inputs", "Ground truth")
    return [f"- {label}: `{value}`" if value is not None else f"- {label}: not recorded (varies by run or unknown)"
            for label, value in zip(labels, found)]


def render_benchmark_md(rows: list, runs: list, command: str, inputs: Optional[SweepInputs] = None,
                        config_name: Optional[str] = None, notes: Optional[list] = None,
                        metric: str = DEFAULT_PLOT_METRIC, figure: Optional[tuple] = None,
                        provenance: bool = False, elapsed: Optional[float] = None) -> str:
    """``summary.md`` (``summary_<metric>.md`` for another metric) in the reference tool's layout.

    ``figure`` is ``(file name, None)`` when the comparison was drawn, ``(None, reason)`` when it
    could not be, ``None`` without plots. ``elapsed`` is the wall time of the invocation that
    measured the runs (``None`` on a refresh: the runs' own recorded times are summed).
    """
    from hbb2obb import __version__

    lines = ["# HBB2OBB Benchmark Summary", "",
             f"Generated by `{command}` on {datetime.datetime.now():%Y-%m-%d %H:%M}, hbb2obb-toolkit {__version__}.",
             ""] + _inputs(runs, inputs)
    if not rows:
        return "\n".join(lines + ["", "No finished runs to summarise.", ""])
    sizes = {r["n_points"] for r in rows}
    grid = f"{sizes.pop()} grid points per run" if len(sizes) == 1 else "a grid that varies by run"
    lines.append(f"- {len(rows)} run(s), {grid}, {sum(r['n_points'] for r in rows)} conversions of the whole "
                 "image set in total.")
    recorded = [r["sweep_seconds"] for r in rows if r.get("sweep_seconds") is not None]
    if elapsed is not None:
        lines.append(f"- Total wall time: {elapsed / 3600:.2f} h ({elapsed:.1f} s).")
    elif len(recorded) == len(rows):
        lines.append(f"- Total sweep time: {sum(recorded) / 3600:.2f} h ({sum(recorded):.1f} s), "
                     "the sum of the runs' recorded sweep_seconds.")
    lines.append("")
    if provenance:
        lines += ["See `PROVENANCE.txt` beside this file for the command, the code and the input hashes.", ""]
    if config_name:
        lines += [f"The configuration is beside this file as `{config_name}`: the folder re-runs from itself.", ""]
    others = any(_other_axes(r) for r in rows)
    header = [_who_heading(rows)] + [v[0] for v in STANDARD_AXES.values()] + [
        "Average IoU", "Angle p90", "IoU>=0.9", "Matches / GT", "Time", "SEM"] + (["Other settings"] if others else [])
    lines += ["## Best grid point per run", "", "| " + " | ".join(header) + " |",
              "| :--- | ---: | ---: | ---: | :--- | ---: | ---: | ---: | ---: | ---: |" + (" :--- |" if others else "")]
    tied = tied_with_leader(rows) if metric == DEFAULT_PLOT_METRIC else [False] * len(rows)
    for row, bold in zip(rows, tied):
        mean = f"**{row['avg_iou']:.5f}**" if bold else f"{row['avg_iou']:.5f}"
        cells = [f"`{_who(row)}`"] + [_axis_text(row[a]) if a in row else "-" for a in STANDARD_AXES] + [
            f"{mean} ± {_f(row.get('std_iou'), '.5f')}", _f(row.get("p90_angle_error"), ".2f", "°"),
            _f(metric_value(row, "iou_at_90"), ".1%"), f"{row.get('total_matches', '-')} / {row.get('total_gt', '-')}",
            _f(row.get("execution_time"), ".1f", " s"), _f(row.get("sem_iou"), ".5f")]
        if others:
            cells.append(", ".join(f"{a}={format_value(row[a])}" for a in _other_axes(row)) or "-")
        lines.append("| " + " | ".join(cells) + " |")
    best = rows[0]
    lines += ["", f"**Best overall:** `{_who(best)}` {_where(best)}, {_annotation(best, metric)} "
                  f"in {_f(best.get('execution_time'), '.1f', ' s')}.", ""]
    if metric == DEFAULT_PLOT_METRIC:
        lines += ["Runs are ranked by average IoU, highest first; the angle and IoU>=0.9 columns are reported, not",
                  "optimised, and are what to read between runs that tie on the mean.",
                  "",
                  "The ± after the mean is the spread of the boxes, not the uncertainty of the mean: that is the",
                  "SEM column (`sem_iou` in each `results.yaml`). Bold: within one SEM of the leader, a tie rather",
                  "than a rank; the comparison figure shades that band."]
    else:
        lines += [f"Runs are ranked by `{metric}`, and each row is that run's best grid point on it.",
                  f"`{BENCHMARK_SUMMARY_NAME}` ranks the same folder by average IoU, the quantity the sweeps "
                  "optimise."]
    failed = [(r["name"], r["n_failed"]) for r in rows if r["n_failed"]]
    if failed:
        lines += ["", "Failed grid points: " + ", ".join(f"{n} ({k})" for n, k in failed)
                  + " (see each run's summary.txt)."]
    lines.append("")
    if figure is not None:
        name, reason = figure
        if name is None:
            lines += [f"No accuracy-against-compute figure: {reason}.", ""]
        else:
            caption = "Best IoU" if metric == DEFAULT_PLOT_METRIC else PLOT_METRICS[metric][0]
            lines += ["## Accuracy against compute", "", f"![{caption} against execution time]({name})", "",
                      "Each point is one run at its best grid point; the dashed line is the Pareto front, the",
                      "runs that no other run beats on both score and time.", ""]
    lines += ["## Per-run detail", "",
              f"Each `<run>/` folder holds `{RUN_CONFIG_NAME}` (the settings and the host), `{RESULTS_NAME}`",
              f"(every grid point), `{SUMMARY_NAME}` (the same for people) and `plot.png` (the score against",
              "the scale factor).",
              "",
              "The time column is one conversion of the image set at that grid point. The reference tool",
              "times its checkpoint loading apart, as `model_load_seconds` in `results.yaml`; this toolkit's",
              "converters load no model, and that key holds the time the converter took to set up.", ""]
    if notes:
        lines += ["## Notes", ""] + [f"- {n}" for n in notes] + [""]
    return "\n".join(lines)


# ------------------------------------------------------------------------------------- LaTeX
def latex_escape(text: str) -> str:
    """Escape what LaTeX reads as markup, so a run name prints as it is spelt."""
    table = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
             "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}
    return "".join(table.get(c, c) for c in str(text))


def _tex_number(value) -> str:
    """A table number with a true minus sign (``$-$0.01``), pairs joined by a comma."""
    if isinstance(value, (list, tuple)):
        return ",".join(_tex_number(v) for v in value)
    text = _axis_text(value)
    return f"$-${text[1:]}" if text.startswith("-") else latex_escape(text)


def render_benchmark_tex(rows: list) -> str:
    """``summary.tex``: a booktabs tabular in the reference's eight columns, one row per run at its
    point of highest mean IoU, mean ± its standard error, runs tied with the leader in bold.

    Nothing in it is dated, so redrawing an unchanged folder writes the same bytes. Runs with
    axes other than the reference's three get one more column naming them.
    """
    from hbb2obb import __version__

    if not rows:
        return ""
    sizes, truths = {r["n_points"] for r in rows}, {r.get("total_gt") for r in rows}
    counts = [f"{len(rows)} run(s)",
              f"{sizes.pop()} grid points per run" if len(sizes) == 1 else "a grid that varies by run",
              f"{truths.pop()} ground-truth boxes" if len(truths) == 1 else "a ground truth that varies by run"]
    others = any(_other_axes(r) for r in rows)
    header = [_who_heading(rows)] + [v[1] for v in STANDARD_AXES.values()] + [
        "Mean IoU", r"IoU$\geq$0.90", r"Angle$_{90}$ [$^\circ$]", "Time [s]"] + (["Other"] if others else [])
    lines = [f"% Written by hbb2obb-toolkit {__version__} (hbb2obb-optimize) from each run's {RESULTS_NAME}; "
             "redraw it with --refresh instead of editing it.",
             f"% {', '.join(counts)}. One row per run: its grid point of highest mean IoU, ranked by that mean.",
             "% Mean IoU +- its standard error; bold: within one standard error of the leader (tied with it).",
             "% Time: one conversion of the image set at that point, in seconds. Needs \\usepackage{booktabs}.",
             r"\begin{tabular}{lrrrrrrr" + ("l" if others else "") + "}", r"  \toprule",
             "  " + " & ".join(header) + r" \\", r"  \midrule"]
    for row, bold in zip(rows, tied_with_leader(rows)):
        mean = f"{row['avg_iou']:.5f}"
        mean = rf"\textbf{{{mean}}}" if bold else mean
        if row.get("sem_iou") is not None:
            mean += rf" $\pm$ {row['sem_iou']:.5f}"
        share, angle = metric_value(row, "iou_at_90"), row.get("p90_angle_error")
        cells = [latex_escape(_who(row, tex=True))] + [_tex_number(row[a]) if a in row else "--" for a in STANDARD_AXES]
        cells += [mean, "--" if share is None else f"{100 * share:.1f}\\%", "--" if angle is None else f"{angle:.2f}",
                  _f(row.get("execution_time"), ".1f")]
        if others:
            cells.append(latex_escape(", ".join(f"{a}={format_value(row[a])}" for a in _other_axes(row))) or "--")
        lines.append("  " + " & ".join(cells) + r" \\")
    lines += [r"  \bottomrule", r"\end{tabular}", ""]
    return "\n".join(lines)


# ---------------------------------------------------------------------------------- the folder
def render_benchmark_folder(folder: Path, runs: list, command: str, inputs: Optional[SweepInputs] = None,
                            config_name: Optional[str] = None, metric: str = DEFAULT_PLOT_METRIC,
                            plot: bool = True, notes: Optional[list] = None, provenance: bool = False,
                            elapsed: Optional[float] = None) -> list[Path]:
    """Write a benchmark folder's documents from its runs; the paths written, in order.

    ``summary.md`` and ``comparison.png`` rank the runs by mean IoU, ``summary.tex`` too, and
    ``comparison.pdf`` is the print figure. ``metric`` (when not the mean) gets
    ``summary_<metric>.md`` and ``comparison_<metric>.png``, each row that run's best point on
    it; with plots, so do the metrics of :data:`EXTRA_PLOT_METRICS` that some run holds. A
    comparison no run can be drawn on is not drawn, and its summary says why. ``provenance``:
    whether a ``PROVENANCE.txt`` lies beside them, for the summaries to point at.
    """
    from hbb2obb.io.atomic import write_text_atomic

    folder = Path(folder)
    extras = [m for m in EXTRA_PLOT_METRICS if plot and m != metric]
    written = []
    for name in dict.fromkeys([DEFAULT_PLOT_METRIC, metric] + extras):
        rows = benchmark_rows(runs, name)
        holds = any(metric_value(r, name) is not None for r in rows)
        if name in extras and not holds:
            continue  # an extra no run recorded: nothing to say about it
        figure = None
        if plot and holds:
            from hbb2obb.sweeps.plots import comparison_figure, save_figure

            target = folder / metric_file_name("comparison", name, "png")
            written.append(save_figure(comparison_figure(rows, name), target))
            figure = (target.name, None)
        elif plot:
            figure = (None, f"no run recorded {name!r}; nothing to compare")
        summary = folder / metric_file_name("summary", name, "md")
        write_text_atomic(summary, render_benchmark_md(rows, runs, command, inputs, config_name,
                                                       notes if name == DEFAULT_PLOT_METRIC else None, name,
                                                       figure, provenance, elapsed))
        written.append(summary)
        if name != DEFAULT_PLOT_METRIC:
            continue
        if rows:
            write_text_atomic(folder / BENCHMARK_TEX_NAME, render_benchmark_tex(rows))
            written.append(folder / BENCHMARK_TEX_NAME)
        if plot:
            from hbb2obb.sweeps.plots import print_figure, save_pdf

            fig = print_figure({m: benchmark_rows(runs, m) for m in ("avg_iou", "iou_at_90")})
            if fig is not None:
                written.append(save_pdf(fig, folder / PRINT_FIGURE_NAME))
    return written
