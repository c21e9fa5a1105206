"""``hbb2obb-optimize IMG_SOURCE GT_DIR``: sweep a converter's parameters, or run a benchmark (docs/metrics.md §6)."""

from __future__ import annotations

import contextlib
import shlex
import signal
import sys
import threading
import time
from pathlib import Path

import click
import yaml

from hbb2obb.api.sweeping import locked, measure, prepare
from hbb2obb.cli.common import handles_errors, multi_value_command, progress_bar, version_option, warn
from hbb2obb.cli.options import evaluation_options
from hbb2obb.cli.workers import check_scheduler, task_executor
from hbb2obb.errors import ConfigError, InputError, UsageError
from hbb2obb.frames.pairing import MISSING_PRED_POLICIES
from hbb2obb.io.provenance import BENCHMARK_RECORD
from hbb2obb.report.textable import render_table
from hbb2obb.scoring.evaluate import resolve_jobs
from hbb2obb.sweeps.benchmark import (
    DEFAULT_MISSING_PRED,
    RunSpec,
    default_converter,
    frame_count,
    load_benchmark,
    mean_point_seconds,
    plan_run,
    run_folders,
    select_runs,
)
from hbb2obb.sweeps.benchmark_record import check_record_is_ours, check_run_folder_is_ours, write_benchmark_record
from hbb2obb.sweeps.dask_executor import DEFAULT_RETRIES, with_absolute_paths
from hbb2obb.sweeps.documents import render_benchmark_folder, render_run_folder
from hbb2obb.sweeps.report import DEFAULT_PLOT_METRIC, PLOT_METRICS, check_plot_metric, load_run
from hbb2obb.sweeps.runner import (
    RESULTS_NAME,
    SweepInputs,
    format_value,
    measured_records,
    read_yaml,
)

PROGRAM = "hbb2obb-optimize"
#: Options that describe one run; with -c/--config they belong in the file instead.
RUN_OPTIONS = ("hbb_dir", "output_folder", "run_name", "imgsz", "scale_factors", "opening_kernels", "grid_axes",
               "converter", "command", "command_timeout", "excluded_classes", "iou_threshold", "class_agnostic",
               "exclude_edge_cases", "edge_tolerance", "img_width", "img_height", "map_path", "missing_pred")


def parse_scale_factor(text: str):
    """``"0.05"`` -> 0.05, ``"0.02,0.05"`` -> [0.02, 0.05] (short side, long side); ValueError otherwise."""
    try:
        parts = [float(p) for p in text.split(",")]
    except ValueError:
        parts = []  # not numbers: said below, with the text as given
    if len(parts) == 1:
        return parts[0]
    if len(parts) == 2:
        return parts
    raise ValueError(f"a scale factor is one number or two (short,long), got {text!r}")


def parse_grid_option(text: str) -> tuple:
    """``"NAME=V1,V2"`` -> ``(NAME, (V1, V2))``, each value read as a YAML scalar (1280, 0.1, sam_b)."""
    name, sep, values = text.partition("=")
    if not sep or not name.strip() or not values.strip():
        raise UsageError(f"--grid {text!r}: expected NAME=V1,V2,...")
    parsed = []
    for token in values.split(","):
        try:
            value = yaml.safe_load(token.strip())
        except yaml.YAMLError:
            value = token.strip()
        if not isinstance(value, (int, float, str, bool)):
            raise UsageError(f"--grid {text!r}: value {token!r} is not a number or a word")
        parsed.append(value)
    return name.strip(), tuple(parsed)


def _point_line(record: dict, axes, done: int, total: int) -> str:
    """One finished grid point, for the log."""
    where = "  ".join(f"{a}={format_value(record[a])}" for a in axes if a in record)
    if record.get("status") == "failed":
        first = str(record.get("error", "")).strip().splitlines() or [""]
        return f"[{done}/{total}] {where}  FAILED: {first[0]}"
    return (
        f"[{done}/{total}] {where}  avg IoU {record['avg_iou']:.5f}  IoU>=0.90 {record['iou_fractions']['0.90']:.1%}"
        f"  angle p90 {record['p90_angle_error']:.2f}  {record['execution_time']:.2f} s"
    )



def _run_plans(plans, resume: bool, jobs: int, no_bar: bool, command_line: str, scheduler=None, retries: int = 0):
    """Measure the planned sweeps (what is missing of them with ``resume``) through one executor,
    so a cluster gets every run's points at once; ``{name: outcome}`` of the runs measured."""
    if scheduler is not None:  # workers read the inputs by path, whatever their working folder
        plans = [with_absolute_paths(plan) for plan in plans]

    def said(plan, reused):
        if reused is None:
            click.echo(f"{plan.name}: complete ({plan.grid.size} points in {plan.folder / RESULTS_NAME}), skipped")
            return
        click.echo(f"{plan.name}: {plan.converter}, {plan.grid.describe()}"
                   + (f", {reused} already measured" if reused else "") + f" -> {plan.folder}")

    extra = None if scheduler is None else {"scheduler": scheduler.describe(), "retries": retries}
    pending = prepare(plans, resume=resume, command_line=command_line, jobs=jobs, extra_config=extra, on_plan=said)
    if not pending:
        return {}
    todo = sum(run.plan.grid.size - run.reused for run in pending)
    several = len(pending) > 1
    counters = {run.plan.name: run.reused for run in pending}
    with task_executor(PROGRAM, jobs, scheduler, retries) as executor, \
            progress_bar(todo, "benchmark" if several else pending[0].plan.name, no_bar, unit="point") as bar:

        def on_point(plan, record, best):
            counters[plan.name] += 1
            prefix = f"{plan.name}: " if several else ""  # a benchmark's runs finish interleaved
            bar.clear()
            click.echo(prefix + _point_line(record, plan.grid.names, counters[plan.name], plan.grid.size))
            bar.update(1)
            if best is not None:
                bar.set_postfix_str(f"{prefix}best avg IoU {best['avg_iou']:.4f}")

        outcomes = measure(pending, executor, on_point)
    for run, outcome in zip(pending, outcomes):
        if outcome.failed:
            click.echo(f"{PROGRAM}: warning: {run.plan.name}: {len(outcome.failed)} grid point(s) failed; "
                       f"see {run.plan.folder / 'summary.txt'}", err=True)
    return {run.plan.name: outcome for run, outcome in zip(pending, outcomes)}


@contextlib.contextmanager
def _sweeping(plans):
    """Hold the lock of every run folder (refusing, exit 2, when another sweep holds one) and
    turn SIGTERM into an interruption, so a stopped sweep cleans its scratch space as Ctrl-C does."""
    with contextlib.ExitStack() as stack:
        notes = stack.enter_context(locked(plans))
        warn(PROGRAM, [("lock", note) for note in notes])
        if threading.current_thread() is threading.main_thread():
            previous = signal.signal(signal.SIGTERM, _interrupt)
            stack.callback(signal.signal, signal.SIGTERM, previous)
        yield


def _interrupt(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


def _render_runs(folders, plot_metric: str, no_plot: bool, report: bool = False) -> list:
    """Rewrite summary.txt and the plots of each run folder; with ``report`` (a refresh) name each
    plot drawn and say so per run. A run that holds no value of the metric asked for is skipped
    with a line saying so, as the reference tool does; the other runs are drawn."""
    runs = []
    for folder in folders:
        run, written, notes, skipped = render_run_folder(folder, plot_metric, not no_plot)
        warn(PROGRAM, [("refresh" if report else "plot", n) for n in notes])
        runs.append(run)
        if report:
            for path in written[1:]:
                click.echo(f"Rendering {path}")
        if skipped:
            click.echo(f"Skipping {run.name}: {skipped}")
        if report:
            best = run.best
            click.echo(f"{run.name}: {len(run.records)} points redrawn"
                       + (f", best avg IoU {best['avg_iou']:.5f}" if best else ", none scored"))
    return runs


def _benchmark_summary(folder, runs, command_line, inputs, config_name, plot_metric, no_plot,
                       elapsed=None) -> None:
    """Write the benchmark documents of ``folder``, print the ranking and a ``Wrote`` line per file."""
    folder = Path(folder)
    if config_name and not (folder / config_name).is_file():
        config_name = None  # point only at a copy that is there
    written = render_benchmark_folder(folder, runs, command_line, inputs, config_name, plot_metric, not no_plot,
                                      provenance=(folder / BENCHMARK_RECORD).is_file(), elapsed=elapsed)
    rows = sorted((r for r in runs if r.best is not None), key=lambda r: -r.best["avg_iou"])
    table = [[i + 1, r.name, r.converter, f"{r.best['avg_iou']:.5f}", f"{r.best.get('sem_iou', 0):.5f}",
              ", ".join(f"{a}={format_value(r.best[a])}" for a in r.axes if a in r.best)]
             for i, r in enumerate(rows)]
    click.echo(render_table(["#", "run", "converter", "avg IoU", "SEM", "best point"], table, align="rllrrl"))
    for path in written:
        click.echo(f"Wrote {path}")


def _dry_run(plans, inputs, resume: bool, title: str) -> str:
    from hbb2obb.sweeps.report import render_dry_run

    entries = []
    for plan in plans:
        previous = read_yaml(plan.folder / RESULTS_NAME) if (plan.folder / RESULTS_NAME).is_file() else None
        measured = len(measured_records(plan, previous)) if resume else 0
        entries.append((plan.name, plan.converter, plan.grid.describe(), plan.grid.size, plan.grid.size - measured,
                        mean_point_seconds(plan.folder) if previous else None))
    return render_dry_run(entries, frame_count(inputs), title)


@multi_value_command({"imgsz": int, "scale_factors": parse_scale_factor, "opening_kernels": float,
                      "excluded_classes": int, "only": str}, name=PROGRAM)
@click.argument("img_source", required=False, type=click.Path(path_type=Path))
@click.argument("gt_dir", required=False, type=click.Path(path_type=Path))
@click.option(
    "-hd", "--hbb_dir", type=click.Path(path_type=Path), help="HBB prompts [default: IMG_SOURCE/../labels_hbb]."
)
@click.option("-o", "--output_folder", type=click.Path(path_type=Path),
              help="Where run folders go [default: IMG_SOURCE/../benchmark_results].")
@click.option("-n", "--run_name", help="The run's folder name [default: the converter's name].")
@click.option("-iz", "--imgsz", type=int, multiple=True, help="Image sizes to sweep; several after one flag.")
@click.option("-sf", "--scale_factors", multiple=True,
              help="Scale factors to sweep: one number or short,long per value; several after one flag.")
@click.option("-ok", "--opening_kernels", type=float, multiple=True, help="Opening kernel percentages to sweep.")
@click.option("--grid", "grid_axes", multiple=True, metavar="NAME=V1,V2,...",
              help="Another converter parameter to sweep. Repeatable.")
@click.option("--converter", help="Converter name [default: image when installed, else identity].")
@click.option("--command", help="External converter template, e.g. 'tool {hbb_dir} {out_dir} --sf {scale_factor}'.")
@click.option("--command_timeout", type=float, help="Seconds one grid point of --command may take.")
@evaluation_options
@click.option("-mp", "--map_path", type=click.Path(path_type=Path), help="Label map YAML {id: name} (DOTA truth).")
@click.option("--missing_pred", type=click.Choice(MISSING_PRED_POLICIES), default=DEFAULT_MISSING_PRED,
              show_default=True, help="A frame the converter wrote no file for: score it empty, skip it, or stop.")
@click.option("-pm", "--plot_metric", default=DEFAULT_PLOT_METRIC, show_default=True,
              help=f"Metric the plots draw: {', '.join(PLOT_METRICS)}. Ranking stays on avg_iou.")
@click.option("--no_plot", is_flag=True, help="Write no PNG.")
@click.option("-c", "--config", type=click.Path(path_type=Path), help="Benchmark YAML: several runs.")
@click.option("--dry_run", is_flag=True, help="Print the runs, grid sizes and cost; write nothing.")
@click.option("--resume", is_flag=True, help="Skip complete runs; measure only the missing points of the others.")
@click.option("--refresh", is_flag=True, help="Redraw summaries and plots from the results on disk; convert nothing.")
@click.option("--only", multiple=True, help="Benchmark runs to do, by name; several after one flag.")
@click.option(
    "-j", "--jobs", type=int, default=1, show_default=True, help="Grid points in parallel processes (0: all cores)."
)
@click.option("--scheduler", metavar="ADDRESS|local[:N]",
              help="Run the grid points (of every run) as Dask tasks: on the scheduler at ADDRESS "
                   "(tcp://10.0.0.5:8786) or on N local worker processes. Workers read the inputs by path. "
                   "Needs: pip install 'hbb2obb-toolkit[dask]'.")
@click.option("--retries", type=int, default=DEFAULT_RETRIES, show_default=True,
              help="With --scheduler: times a grid point whose converter failed or whose worker died is "
                   "tried again before it is recorded as failed.")
@click.option("-nb", "--no_bar", is_flag=True, help="No progress bar.")
@version_option(PROGRAM)
@click.pass_context
@handles_errors(PROGRAM)
def main(ctx, img_source, gt_dir, hbb_dir, output_folder, run_name, imgsz, scale_factors, opening_kernels, grid_axes,
         converter, command, command_timeout, excluded_classes, iou_threshold, class_agnostic, exclude_edge_cases,
         edge_tolerance, img_width, img_height, map_path, missing_pred, plot_metric, no_plot, config, dry_run, resume,
         refresh, only, jobs, scheduler, retries, no_bar):
    """Sweep a converter's parameters over IMG_SOURCE's HBB prompts, scoring each grid point
    against GT_DIR; or run the benchmark of -c FILE.

    Each run folder gets run_config.yaml, results.yaml (every grid point), summary.txt and plots.
    """
    check_plot_metric(plot_metric)
    resolve_jobs(jobs)
    scheduler = check_scheduler(ctx, scheduler, retries)
    command_line = shlex.join([PROGRAM] + sys.argv[1:])
    if refresh and (dry_run or resume):
        raise UsageError("--refresh converts nothing: it goes without --dry_run and --resume")
    if config is not None:
        given = [
            name for name in RUN_OPTIONS if ctx.get_parameter_source(name) == click.core.ParameterSource.COMMANDLINE
        ]
        if img_source is not None or given:
            what = ", ".join(["IMG_SOURCE/GT_DIR"] * (img_source is not None) + ["--" + g for g in given])
            raise UsageError(f"-c/--config describes the runs: set {what} in {config} instead")
        return _benchmark(config, only, dry_run, resume, refresh, jobs, no_bar, plot_metric, no_plot, command_line,
                          scheduler, retries)
    if only and not refresh:
        raise UsageError("--only selects runs of a benchmark: use it with -c/--config or --refresh")
    if refresh:  # from disk alone: the folder is all it needs, not the converter or the data
        if output_folder is None and img_source is None:
            raise UsageError("--refresh needs IMG_SOURCE (for the default output folder) or -o/--output_folder")
        output_folder = output_folder or img_source.parent / "benchmark_results"
        name = run_name or converter or ("command" if command else None)
        folders = [output_folder / name] if name else run_folders(output_folder)
        return _refresh(output_folder, folders, only, plot_metric, no_plot, command_line, summary=name is None)
    if img_source is None or gt_dir is None:
        raise UsageError("give IMG_SOURCE and GT_DIR, or a benchmark file with -c")
    hbb_dir = hbb_dir or img_source.parent / "labels_hbb"
    output_folder = output_folder or img_source.parent / "benchmark_results"
    if command and not converter:
        converter = "command"
    converter = converter or default_converter()
    axes = {}
    try:  # a value the several-values parser did not take reaches here as click's plain text
        factors = [parse_scale_factor(v) for v in scale_factors]
    except ValueError as exc:
        raise UsageError(f"--scale_factors: {exc}") from None
    for name, values in (("imgsz", imgsz), ("scale_factors", factors), ("opening_kernels", opening_kernels)):
        if values:
            axes[name] = tuple(values)
    for text in grid_axes:
        name, values = parse_grid_option(text)
        if name in axes:
            raise UsageError(f"axis {name!r} is given twice")
        axes[name] = values
    evaluation = {"excluded_classes": excluded_classes, "iou_threshold": iou_threshold,
                  "class_agnostic": class_agnostic, "exclude_edge_cases": exclude_edge_cases,
                  "edge_tolerance": edge_tolerance, "img_width": img_width, "img_height": img_height,
                  "map_path": map_path, "missing_pred": missing_pred}
    spec = RunSpec(run_name or converter, converter, command, command_timeout, axes, evaluation)
    plan = plan_run(spec, SweepInputs(img_source, gt_dir, hbb_dir), output_folder)
    if dry_run:
        click.echo(_dry_run([plan], plan.inputs, resume, f"Sweep {plan.name} -> {plan.folder}"), nl=False)
        return
    check_record_is_ours(output_folder)
    check_run_folder_is_ours(plan.folder)
    started = time.monotonic()
    with _sweeping([plan]):
        measured = _run_plans([plan], resume, jobs, no_bar, command_line, scheduler, retries)
        run, written, notes, skipped = render_run_folder(plan.folder, plot_metric, not no_plot)
    warn(PROGRAM, [("plot", n) for n in notes])
    if skipped:
        click.echo(f"Skipping {run.name}: {skipped}")
    click.echo((plan.folder / "summary.txt").read_text(encoding="utf-8"), nl=False)
    click.echo(f"Results: {plan.folder}")
    elapsed = None
    if measured:  # a record only of numbers this invocation measured
        elapsed = time.monotonic() - started
        click.echo(f"Wrote {write_benchmark_record(output_folder, command_line, [plan], elapsed)}")
    _summarise_folder(output_folder, command_line, plot_metric, no_plot, elapsed)
    if run.best is None:
        click.echo(f"{PROGRAM}: error: no grid point of {plan.name} was scored: nothing to choose from", err=True)
        raise SystemExit(1)


def _summarise_folder(output_folder, command_line, plot_metric, no_plot, elapsed=None) -> None:
    """The benchmark documents over every run folder of ``output_folder``, as the reference
    summarises a single sweep's folder too; a run whose results cannot be read is left out, warned."""
    runs = []
    for folder in run_folders(output_folder):
        try:
            runs.append(load_run(folder))
        except (InputError, ConfigError) as exc:
            warn(PROGRAM, [("summary", f"{folder.name} left out of the summary: {exc}")])
    _benchmark_summary(output_folder, runs, command_line, None, None, plot_metric, no_plot, elapsed)


def _refresh(output_folder, folders, only, plot_metric, no_plot, command_line, summary: bool):
    folders = [f for f in folders if not only or f.name in only]
    missing = [f for f in folders if not (f / RESULTS_NAME).is_file()]
    if missing or not folders:
        raise UsageError(f"--refresh: no {RESULTS_NAME} in {missing[0] if missing else output_folder}")
    for folder in folders:
        check_run_folder_is_ours(folder)
    runs = _render_runs(folders, plot_metric, no_plot, report=True)
    if summary:
        _benchmark_summary(output_folder, runs, command_line, None, None, plot_metric, no_plot)


def _benchmark(config, only, dry_run, resume, refresh, jobs, no_bar, plot_metric, no_plot, command_line,
               scheduler=None, retries=0):
    bench = load_benchmark(config, refresh=refresh)
    specs = select_runs(bench.runs, only)
    if refresh:  # redraws only: the provenance stays the record of the sweep that measured
        folders = [bench.output_folder / s.name for s in specs]
        present = [f for f in folders if (f / RESULTS_NAME).is_file()]
        for folder in sorted(set(folders) - set(present)):
            warn(PROGRAM, [("refresh", f"{folder}: no {RESULTS_NAME} yet, nothing to redraw")])
        if not present:
            raise UsageError(f"--refresh: no run of {config} has a {RESULTS_NAME} under {bench.output_folder}")
        for folder in present:
            check_run_folder_is_ours(folder)
        _render_runs(present, plot_metric, no_plot, report=True)
        _finish_benchmark(bench, _all_finished(bench), command_line, plot_metric, no_plot)
        return
    plans = [plan_run(spec, bench.inputs, bench.output_folder) for spec in specs]  # every check before any run
    if dry_run:
        click.echo(_dry_run(plans, bench.inputs, resume, f"Benchmark {config} -> {bench.output_folder}"), nl=False)
        return
    check_record_is_ours(bench.output_folder)
    for plan in plans:
        check_run_folder_is_ours(plan.folder)
    started = time.monotonic()
    with _sweeping(plans):
        bench.output_folder.mkdir(parents=True, exist_ok=True)
        copy = bench.output_folder / config.name
        if copy.resolve() != config.resolve():
            copy.write_text(bench.text, encoding="utf-8")
        outcomes = _run_plans(plans, resume, jobs, no_bar, command_line, scheduler, retries)
        for plan in plans:
            if plan.name in outcomes or not (plan.folder / "summary.txt").is_file():
                _render_runs([plan.folder], plot_metric, no_plot)
    elapsed = None
    if outcomes:  # a record only of numbers this invocation measured
        elapsed = time.monotonic() - started
        measured = [plan for plan in plans if plan.name in outcomes]
        kept = [plan.name for plan in plans if plan.name not in outcomes]
        click.echo("Wrote " + str(write_benchmark_record(bench.output_folder, command_line, measured, elapsed,
                                                         bench.text, copy, kept)))
    _finish_benchmark(bench, _all_finished(bench), command_line, plot_metric, no_plot, elapsed)
    empty = [plan.name for plan in plans if load_run(plan.folder).best is None]
    if empty:
        click.echo(f"{PROGRAM}: error: no grid point was scored in run(s) {', '.join(empty)}", err=True)
        raise SystemExit(1)


def _all_finished(bench) -> list:
    return [load_run(bench.output_folder / s.name) for s in bench.runs
            if (bench.output_folder / s.name / RESULTS_NAME).is_file()]


def _finish_benchmark(bench, runs, command_line, plot_metric, no_plot, elapsed=None):
    _benchmark_summary(bench.output_folder, runs, command_line, bench.inputs, bench.path.name, plot_metric, no_plot,
                       elapsed)
