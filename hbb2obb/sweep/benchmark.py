"""Benchmarks: several sweeps from one YAML file, and the documents that read them together.

A benchmark file has the top-level keys ``img_source``, ``gt_dir``, ``hbb_dir``,
``output_folder``, ``defaults`` and ``runs``; each run may override any default, and its folder
is ``<output_folder>/<name>``. Paths are relative to the working directory. An unknown key
anywhere is a :class:`~hbb2obb.errors.ConfigError` naming it and its line. ::

    img_source: demo/data/images
    gt_dir: demo/data/labels_obb_gt
    output_folder: demo/benchmark_results
    defaults:
      scale_factors: [0.0, 0.02, 0.04]
    runs:
      - name: identity
        converter: identity
      - name: script
        command: python scripts/my_converter.py {hbb_dir} {out_dir} --sf {scale_factor}

The same :class:`RunSpec` describes a single sweep from the command line, so one code path plans,
resumes and renders both.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import yaml

from hbb2obb.converters import available_converters, get_converter
from hbb2obb.errors import ConfigError, InputError, UsageError
from hbb2obb.frames.pairing import MISSING_PRED_POLICIES
from hbb2obb.io.text_file import read_text_file
from hbb2obb.io.yaml_text import refuse_alias_bomb, too_deep
from hbb2obb.scoring.evaluate import EvalSettings
from hbb2obb.sweep.report import DEFAULT_PLOT_METRIC, EXTRA_PLOT_METRICS, load_run, metric_value, render_run_summary
from hbb2obb.sweep.runner import (
    AXIS_SPELLINGS,
    RESULTS_NAME,
    SUMMARY_NAME,
    EvalSpec,
    SweepInputs,
    SweepPlan,
    build_grid,
    format_value,
)

TOP_LEVEL_KEYS = ("img_source", "gt_dir", "hbb_dir", "output_folder", "defaults", "runs")
AXIS_KEYS = ("imgsz", "scale_factors", "opening_kernels", "grid")
EVAL_KEYS = ("excluded_classes", "iou_threshold", "class_agnostic", "exclude_edge_cases", "edge_tolerance",
             "img_width", "img_height", "map_path", "missing_pred", "one_to_one")
RUN_KEYS = ("name", "converter", "command", "command_timeout") + AXIS_KEYS + EVAL_KEYS
DEFAULT_MISSING_PRED = "empty"  # a grid point whose converter wrote no file for a frame scores it empty
BENCHMARK_SUMMARY_NAME, BENCHMARK_TEX_NAME, COMPARISON_NAME = "summary.md", "summary.tex", "comparison.png"


def default_converter() -> str:
    """The built-in image converter once it is installed, else the identity baseline."""
    return "image" if "image" in available_converters() else "identity"


@dataclass(frozen=True)
class RunSpec:
    """One sweep as configured: converter, axes (name -> values), scoring settings."""

    name: str
    converter: str
    command: Optional[str] = None
    command_timeout: Optional[float] = None
    axes: dict = field(default_factory=dict)
    evaluation: dict = field(default_factory=dict)

    def converter_options(self) -> dict:
        if self.converter == "command":
            if not self.command:
                raise UsageError(f"run {self.name!r}: the command converter needs a command template (--command)")
            return {"template": self.command, "timeout": self.command_timeout}
        if self.command:
            raise UsageError(f"run {self.name!r}: a command template is only used by the command converter, "
                             f"not by {self.converter!r}")
        if self.converter == "identity":
            return {k: self.evaluation[k] for k in ("img_width", "img_height") if self.evaluation.get(k) is not None}
        return {}

    def eval_spec(self) -> EvalSpec:
        e = self.evaluation
        map_path = e.get("map_path")
        return EvalSpec(eval_settings(e), e.get("img_width"), e.get("img_height"),
                        None if map_path is None else Path(map_path))


def eval_settings(evaluation: dict) -> EvalSettings:
    """The matching settings of a run's ``evaluation`` mapping: its keys as a benchmark file spells
    them (``hbb2obb-optimize`` builds the same mapping from its flags). YAML numbers are read as the
    settings' types (``iou_threshold: 0`` is 0.0); an absent key takes the sweep's default."""
    e = evaluation
    missing_pred = e.get("missing_pred", DEFAULT_MISSING_PRED)
    if missing_pred not in MISSING_PRED_POLICIES:
        raise UsageError(f"missing_pred must be one of {', '.join(MISSING_PRED_POLICIES)}, got {missing_pred!r}")
    return EvalSettings(excluded_classes=tuple(e.get("excluded_classes") or ()),
                        iou_threshold=float(e.get("iou_threshold", 0.1)),
                        class_agnostic=bool(e.get("class_agnostic", False)),
                        exclude_edge_cases=bool(e.get("exclude_edge_cases", False)),
                        edge_tolerance=float(e.get("edge_tolerance", 1.0)),
                        one_to_one=bool(e.get("one_to_one", False)), missing_pred=missing_pred)


def plan_run(spec: RunSpec, inputs: SweepInputs, output_folder: Path) -> SweepPlan:
    """Resolve and check a run: the converter exists, every axis is one of its parameters, every
    point is acceptable, the folders exist. Raises before anything is converted."""
    converter = get_converter(spec.converter, **spec.converter_options())
    grid = build_grid(converter, spec.axes)
    evaluation = spec.eval_spec()
    for folder, role in ((inputs.gt_dir, "ground-truth"), (inputs.hbb_dir, "HBB")):
        if not Path(folder).is_dir():
            raise InputError(f"{folder}: {role} folder not found")
    if converter.needs_images and (inputs.img_source is None or not Path(inputs.img_source).exists()):
        raise InputError(f"{inputs.img_source}: converter {spec.converter!r} needs the images, and they are not there")
    if evaluation.settings.exclude_edge_cases and evaluation.img_width is None and not (
            inputs.img_source is not None and Path(inputs.img_source).is_dir()):
        raise UsageError("exclude_edge_cases needs the frame size: give img_width and img_height, or an image folder")
    return SweepPlan(spec.name, Path(output_folder) / spec.name, spec.converter, spec.converter_options(), grid,
                     inputs, evaluation)


# ------------------------------------------------------------------------------------ config
class _LineDict(dict):
    """A mapping that remembers the line of each of its keys."""

    line = 0
    key_lines: dict = {}


class _LineLoader(yaml.SafeLoader):
    pass


class _DuplicateKey(Exception):
    pass


def _construct_mapping(loader, node):
    seen = set()
    for key_node, _ in node.value:
        key = getattr(key_node, "value", None)
        if key in seen:  # PyYAML would keep the last silently; in a config it is a typo
            raise _DuplicateKey(f"{key_node.start_mark.line + 1}: key {key!r} given twice")
        seen.add(key)
    mapping = _LineDict(loader.construct_mapping(node, deep=True))
    mapping.line = node.start_mark.line + 1
    mapping.key_lines = {getattr(k, "value", None): k.start_mark.line + 1 for k, _ in node.value}
    return mapping


_LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def _where(path: Path, mapping, key=None) -> str:
    line = getattr(mapping, "key_lines", {}).get(key) or getattr(mapping, "line", 0)
    return f"{path}:{line}" if line else str(path)


def _check_keys(path: Path, mapping, allowed, what: str) -> None:
    if not isinstance(mapping, dict):
        raise ConfigError(f"{_where(path, mapping)}: {what} must be a mapping, got {type(mapping).__name__}")
    for key in mapping:
        if key not in allowed:
            hint = ""
            if key == "sam_models":
                hint = " (this toolkit runs no SAM model itself: sweep the reference tool with converter: command)"
            raise ConfigError(f"{_where(path, mapping, key)}: unknown key {key!r} in {what}{hint}; "
                              f"allowed: {', '.join(allowed)}")


def _number_list(path, mapping, key, kind=float, pairs=False) -> tuple:
    value = mapping[key]
    values = value if isinstance(value, list) else [value]
    out = []
    for v in values:
        if pairs and isinstance(v, list) and len(v) == 2 and all(_is_real(x) for x in v):
            out.append([float(x) for x in v])
        elif _is_real(v) and (kind is float or float(v).is_integer()):
            out.append(kind(v))
        else:
            raise ConfigError(f"{_where(path, mapping, key)}: {key} must be a list of "
                              f"{'integers' if kind is int else 'numbers'}{' or [short, long] pairs' if pairs else ''}"
                              f", got {v!r}")
    return tuple(out)


def _is_real(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


#: What each scalar key of a run (or of ``defaults``) must hold: a check and its description.
_KINDS = {
    "bool": (lambda v: isinstance(v, bool), "true or false"),
    "threshold": (lambda v: _is_real(v) and 0 <= v < 1, "a number in [0, 1)"),
    "non_negative": (lambda v: _is_real(v) and v >= 0, "a number of pixels, 0 or more"),
    "positive": (lambda v: _is_real(v) and v > 0, "a positive number of pixels"),
    "seconds": (lambda v: _is_real(v) and v > 0, "a positive number of seconds"),
    "text": (lambda v: isinstance(v, str) and v.strip() != "", "a non-empty string"),
    "policy": (lambda v: v in MISSING_PRED_POLICIES, f"one of {', '.join(MISSING_PRED_POLICIES)}"),
}
RUN_KEY_KINDS = {
    "name": "text", "converter": "text", "command": "text", "command_timeout": "seconds",
    "iou_threshold": "threshold", "class_agnostic": "bool", "exclude_edge_cases": "bool", "one_to_one": "bool",
    "edge_tolerance": "non_negative", "img_width": "positive", "img_height": "positive", "map_path": "text",
    "missing_pred": "policy",
}
TOP_LEVEL_KINDS = {"img_source": "text", "gt_dir": "text", "hbb_dir": "text", "output_folder": "text"}


def _check_kinds(path: Path, mapping, kinds: dict, what: str) -> None:
    """Every key of ``mapping`` that ``kinds`` knows holds a value of its kind, else a
    :class:`ConfigError` naming the key, its line and what was expected (``null`` is unset)."""
    for key, kind in kinds.items():
        if key not in mapping or mapping[key] is None:
            continue
        check, expected = _KINDS[kind]
        value = mapping[key]
        if not check(value):
            shown = f"{value!r} ({'a string' if isinstance(value, str) else type(value).__name__})"
            raise ConfigError(f"{_where(path, mapping, key)}: {key} in {what} must be {expected}, got {shown}")


def _check_grid_values(path: Path, mapping, what: str) -> None:
    grid = mapping.get("grid")
    if not grid:
        return
    for name, values in grid.items():
        for value in values if isinstance(values, list) else [values]:
            scalar = isinstance(value, (int, float, str, bool))
            pair = isinstance(value, list) and all(_is_real(v) for v in value)
            if not (scalar or pair):
                raise ConfigError(f"{_where(path, grid, name)}: grid axis {name!r} in {what} must list numbers, "
                                  f"words or [short, long] pairs, got {value!r}")


def _run_entry(path: Path, merged: dict, source, index: int) -> RunSpec:
    axes = {}
    if "imgsz" in merged:
        axes["imgsz"] = _number_list(path, source("imgsz"), "imgsz", int)
    if "scale_factors" in merged:
        axes["scale_factors"] = _number_list(path, source("scale_factors"), "scale_factors", pairs=True)
    if "opening_kernels" in merged:
        axes["opening_kernels"] = _number_list(path, source("opening_kernels"), "opening_kernels")
    for name, values in (merged.get("grid") or {}).items():
        canonical = AXIS_SPELLINGS.get(name, name)
        if any(AXIS_SPELLINGS.get(a, a) == canonical for a in axes):
            raise ConfigError(f"{path}: run {index}: axis {name!r} is given twice (in grid and as its own key)")
        axes[name] = tuple(values if isinstance(values, list) else [values])
    evaluation = {k: merged[k] for k in EVAL_KEYS if k in merged}
    if "excluded_classes" in evaluation:
        evaluation["excluded_classes"] = _number_list(path, source("excluded_classes"), "excluded_classes", int)
    converter = str(merged.get("converter") or ("command" if merged.get("command") else default_converter()))
    timeout = merged.get("command_timeout")
    name = str(merged.get("name") or converter)
    if "/" in name or name in (".", ".."):
        raise ConfigError(f"{path}: run {index}: name {name!r} cannot be a folder name")
    return RunSpec(name, converter, merged.get("command"), timeout, axes, evaluation)


@dataclass(frozen=True)
class Benchmark:
    """A loaded benchmark file."""

    path: Path
    text: str
    inputs: SweepInputs
    output_folder: Path
    runs: tuple


def load_benchmark(path: Path) -> Benchmark:
    """Read and check a benchmark file; every problem is a :class:`ConfigError` naming its line."""
    path = Path(path)
    text = read_text_file(path, "benchmark file")
    refuse_alias_bomb(text, _LineLoader, path, "benchmark file")
    try:
        config = yaml.load(text, Loader=_LineLoader)
    except RecursionError:
        raise too_deep(path, "benchmark file") from None
    except _DuplicateKey as exc:
        raise ConfigError(f"{path}:{exc}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise ConfigError(f"{path}:{mark.line + 1 if mark else 0}: not valid YAML "
                          f"({getattr(exc, 'problem', exc)})") from None
    _check_keys(path, config, TOP_LEVEL_KEYS, "the benchmark file")
    _check_kinds(path, config, TOP_LEVEL_KINDS, "the benchmark file")
    for key in ("img_source", "gt_dir", "runs"):
        if not config.get(key):
            raise ConfigError(f"{path}: {key!r} is required")
    defaults = config.get("defaults") or _LineDict()
    _check_keys(path, defaults, tuple(k for k in RUN_KEYS if k != "name"), "defaults")
    _check_kinds(path, defaults, RUN_KEY_KINDS, "defaults")
    if not isinstance(config["runs"], list):
        raise ConfigError(f"{_where(path, config, 'runs')}: 'runs' must be a list of mappings")
    runs = []
    for index, entry in enumerate(config["runs"], start=1):
        _check_keys(path, entry, RUN_KEYS, f"run {index}")
        _check_kinds(path, entry, RUN_KEY_KINDS, f"run {index}")
        for mapping in (defaults.get("grid"), entry.get("grid")):
            if mapping is not None and not isinstance(mapping, dict):
                raise ConfigError(f"{path}: grid must map parameter names to lists of values")
        for mapping, what in ((defaults, "defaults"), (entry, f"run {index}")):
            _check_grid_values(path, mapping, what)
        merged = {**defaults, **entry, "grid": {**(defaults.get("grid") or {}), **(entry.get("grid") or {})}}
        runs.append(_run_entry(path, merged, lambda k, e=entry: e if k in e else defaults, index))
    names = [r.name for r in runs]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ConfigError(f"{path}: run name(s) {', '.join(duplicates)} used twice; give each run its own 'name'")
    img_source = Path(config["img_source"])
    hbb_dir = Path(config["hbb_dir"]) if config.get("hbb_dir") else img_source.parent / "labels_hbb"
    output = Path(config["output_folder"]) if config.get("output_folder") else img_source.parent / "benchmark_results"
    return Benchmark(path, text, SweepInputs(img_source, Path(config["gt_dir"]), hbb_dir), output, tuple(runs))


def select_runs(runs, only) -> list:
    """The runs named in ``only`` (all when empty); an unknown name is a usage error."""
    if not only:
        return list(runs)
    names = [r.name if isinstance(r, RunSpec) else r for r in runs]
    unknown = [n for n in only if n not in names]
    if unknown:
        raise UsageError(f"--only: no run named {', '.join(map(repr, unknown))}; runs: {', '.join(names)}")
    return [r for r, n in zip(runs, names) if n in only]


# --------------------------------------------------------------------------------- rendering
def plot_metrics_for(metric: str) -> list[str]:
    """The metrics a run folder gets plots of: the default, the extras, and ``metric``."""
    wanted = [DEFAULT_PLOT_METRIC] + list(EXTRA_PLOT_METRICS)
    return wanted + ([metric] if metric not in wanted else [])


def plot_file_name(metric: str) -> str:
    return "plot.png" if metric == DEFAULT_PLOT_METRIC else f"plot_{metric}.png"


def render_run_folder(folder: Path, metric: str = DEFAULT_PLOT_METRIC, plot: bool = True) -> tuple:
    """Rewrite ``summary.txt`` and the plots of a run folder from its ``results.yaml``.

    Returns ``(run, written paths, notes)``; a metric the results lack is skipped with a note.
    """
    run = load_run(folder)
    written = [folder / SUMMARY_NAME]
    written[0].write_text(render_run_summary(run), encoding="utf-8")
    notes = [f"{run.name}: {note}" for note in run.notes]
    if plot:
        from hbb2obb.sweep.plots import save_figure, sweep_figure

        wanted = plot_metrics_for(metric)
        missing = run.missing_metrics(wanted)
        for name in wanted:
            if name in missing:
                notes.append(f"{run.name}: no grid point holds {name}; {plot_file_name(name)} not drawn")
                continue
            title = run.name if run.name == run.converter else f"{run.name} ({run.converter})"
            fig = sweep_figure(run.records, run.axes, name, run.best, title=title)
            written.append(save_figure(fig, folder / plot_file_name(name)))
    return run, written, notes


def benchmark_rows(runs: list) -> list[dict]:
    """Best record of each run with its name, converter and size, ranked by average IoU."""
    rows = []
    for run in runs:
        best = run.best
        if best is None:
            continue
        rows.append({**best, "name": run.name, "converter": run.converter, "n_points": len(run.records),
                     "n_failed": len(run.failed), "sweep_seconds": run.sweep_seconds, "axes": run.axes})
    return sorted(rows, key=lambda r: -r["avg_iou"])


def tied_with_leader(rows: list) -> list[bool]:
    """Whether each row's mean IoU is within the leader's SEM of the leader's (the leader too)."""
    if not rows:
        return []
    leader, sem = rows[0]["avg_iou"], float(rows[0].get("sem_iou") or 0.0)
    return [r["avg_iou"] >= leader - sem for r in rows]


def _best_point(row: dict) -> str:
    return ", ".join(f"{a}={format_value(row[a])}" for a in row["axes"] if a in row) or "-"


def _f(value, spec):
    return "-" if value is None else format(value, spec)


def render_benchmark_md(rows: list, runs: list, command: str, inputs: Optional[SweepInputs],
                        config_name: Optional[str], notes: list) -> str:
    """``summary.md``: the best point of every run, ranked, ties with the leader in bold."""
    tied = tied_with_leader(rows)
    total_points = sum(len(r.records) for r in runs)
    lines = ["# Sweep benchmark", "",
             f"Written by `{command}` on {datetime.datetime.now():%Y-%m-%d %H:%M}.", ""]
    if inputs is not None:
        lines += [f"- Images: `{inputs.img_source}`", f"- HBB prompts: `{inputs.hbb_dir}`",
                  f"- Ground truth: `{inputs.gt_dir}`"]
    lines.append(f"- {len(runs)} run(s), {total_points} grid point(s) in total.")
    recorded = [r.sweep_seconds for r in runs if r.sweep_seconds is not None]
    if recorded:
        lines.append(f"- Sweep time: {sum(recorded):.1f} s.")
    if config_name:
        lines.append(f"- The configuration is beside this file as `{config_name}`: the folder re-runs from itself.")
    lines += ["", "## Best grid point per run", "",
              "| # | Run | Converter | Best point | Average IoU | SEM | IoU>=0.90 | Angle p90 | Matches / GT | Time |",
              "| ---: | :--- | :--- | :--- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for rank, (row, bold) in enumerate(zip(rows, tied), start=1):
        b = "**" if bold else ""
        fractions = row.get("iou_fractions") or {}
        lines.append(
            f"| {rank} | {b}{row['name']}{b} | {row['converter']} | {_best_point(row)} | {b}{row['avg_iou']:.5f}{b} | "
            f"{_f(row.get('sem_iou'), '.5f')} | {_f(fractions.get('0.90'), '.1%')} | "
            f"{_f(row.get('p90_angle_error'), '.2f')} | {row.get('total_matches', '-')} / {row.get('total_gt', '-')} | "
            f"{_f(row.get('execution_time'), '.2f')} s |")
    if rows:
        lines += ["", f"Bold: within one standard error of the leader's mean IoU "
                      f"({rows[0]['avg_iou']:.5f} ± {float(rows[0].get('sem_iou') or 0):.5f}); such runs are tied, "
                      "not ranked. The ranking uses the mean IoU alone; the IoU>=0.90 share and the angle p90 are "
                      "what to read between tied runs, since the mean saturates on tight boxes."]
    failed = [(r.name, len(r.failed)) for r in runs if r.failed]
    if failed:
        lines += ["", "Failed grid points: " + ", ".join(f"{n} ({k})" for n, k in failed)
                  + " — see each run's summary.txt."]
    lines += ["", "## Accuracy against compute", "", f"![Best score against time]({COMPARISON_NAME})", "",
              "Each point is one run at its best grid point; the dashed line is the Pareto front (the runs no "
              "other run beats on both score and time); the band is the leader's ±1 SEM.", ""]
    if notes:
        lines += ["## Notes", ""] + [f"- {n}" for n in notes] + [""]
    return "\n".join(lines)


def _tex(text: str) -> str:
    table = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
             "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}
    return "".join(table.get(c, c) for c in str(text))


def render_benchmark_tex(rows: list) -> str:
    """``summary.tex``: a booktabs tabular of the best point per run; ties with the leader in bold."""
    lines = ["% Best grid point per run; needs \\usepackage{booktabs}. Bold: within one SEM of the leader.",
             r"\begin{tabular}{rllrrrrr}", r"\toprule",
             r"\# & Run & Best point & Mean IoU & SEM & IoU $\geq$ 0.90 & Angle p90 ($^\circ$) & Time (s) \\",
             r"\midrule"]
    for rank, (row, bold) in enumerate(zip(rows, tied_with_leader(rows)), start=1):
        fractions = row.get("iou_fractions") or {}
        cells = [_tex(row["name"]), _tex(_best_point(row)), f"{row['avg_iou']:.5f}"]
        if bold:
            cells = [rf"\textbf{{{c}}}" for c in cells]
        share = fractions.get("0.90")
        lines.append(" & ".join([str(rank)] + cells + [
            _f(row.get("sem_iou"), ".5f"), "--" if share is None else f"{100 * share:.1f}\\%",
            "--" if row.get("p90_angle_error") is None else f"{row['p90_angle_error']:.2f}",
            _f(row.get("execution_time"), ".2f")]) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", ""]
    return "\n".join(lines)


def render_benchmark_folder(folder: Path, runs: list, command: str, inputs: Optional[SweepInputs] = None,
                            config_name: Optional[str] = None, metric: str = DEFAULT_PLOT_METRIC,
                            plot: bool = True, notes: Optional[list] = None) -> list[Path]:
    """Write ``summary.md``, ``summary.tex`` and ``comparison.png`` (plus ``comparison_<metric>.png``)."""
    folder = Path(folder)
    rows = benchmark_rows(runs)
    notes = list(notes or [])
    written = []
    if plot:
        from hbb2obb.sweep.plots import comparison_figure, save_figure

        for name in dict.fromkeys([DEFAULT_PLOT_METRIC, metric]):
            target = folder / (COMPARISON_NAME if name == DEFAULT_PLOT_METRIC else f"comparison_{name}.png")
            if rows and not any(metric_value(r, name) is not None for r in rows):
                notes.append(f"no run's results hold {name}: {target.name} not drawn")
                continue
            written.append(save_figure(comparison_figure(rows, name), target))
    (folder / BENCHMARK_SUMMARY_NAME).write_text(render_benchmark_md(rows, runs, command, inputs, config_name, notes),
                                                 encoding="utf-8")
    (folder / BENCHMARK_TEX_NAME).write_text(render_benchmark_tex(rows), encoding="utf-8")
    return [folder / BENCHMARK_SUMMARY_NAME, folder / BENCHMARK_TEX_NAME] + written


def run_folders(output_folder: Path) -> list[Path]:
    """Sub-folders of ``output_folder`` that hold a ``results.yaml``, by name."""
    if not Path(output_folder).is_dir():
        raise InputError(f"{output_folder}: results folder not found")
    return sorted(p for p in Path(output_folder).iterdir() if (p / RESULTS_NAME).is_file())


def mean_point_seconds(folder: Path) -> Optional[float]:
    """Mean conversion time of the points already measured in ``folder``, for cost estimates."""
    try:
        run = load_run(folder)
    except (InputError, ConfigError):
        return None
    times = [float(r["execution_time"]) for r in run.ok_records if r.get("execution_time") is not None]
    return sum(times) / len(times) if times else None


def frame_count(inputs: SweepInputs) -> int:
    return len(list(Path(inputs.hbb_dir).glob("*.txt"))) if Path(inputs.hbb_dir).is_dir() else 0


