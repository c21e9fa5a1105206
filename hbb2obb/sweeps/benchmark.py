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

from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import yaml

from hbb2obb.converters import available_converters, get_converter
from hbb2obb.errors import ConfigError, InputError, UsageError
from hbb2obb.frames.pairing import MISSING_PRED_POLICIES
from hbb2obb.io.images import ImageSizes
from hbb2obb.io.labelmap import load_label_map
from hbb2obb.io.text_file import read_text_file
from hbb2obb.io.yaml_text import refuse_alias_bomb, too_deep
from hbb2obb.scoring.evaluate import EvalSettings
from hbb2obb.sweeps.report import load_run
from hbb2obb.sweeps.runner import (
    AXIS_SPELLINGS,
    RESULTS_NAME,
    EvalSpec,
    SweepInputs,
    SweepPlan,
    build_grid,
)

TOP_LEVEL_KEYS = ("img_source", "gt_dir", "hbb_dir", "output_folder", "defaults", "runs")
AXIS_KEYS = ("imgsz", "scale_factors", "opening_kernels", "grid")
EVAL_KEYS = ("excluded_classes", "iou_threshold", "class_agnostic", "exclude_edge_cases", "edge_tolerance",
             "img_width", "img_height", "map_path", "missing_pred", "one_to_one")
RUN_KEYS = ("name", "converter", "command", "command_timeout") + AXIS_KEYS + EVAL_KEYS
#: Run keys of the reference tool's benchmark files: read (and ignored) by ``--refresh`` alone.
REFERENCE_RUN_KEYS = ("sam_models", "fragment_ratio", "model_kwargs", "device")
DEFAULT_MISSING_PRED = "empty"  # a grid point whose converter wrote no file for a frame scores it empty


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


def is_folder_name(name: str) -> bool:
    """Whether ``name`` names one folder inside another (not ``..``, no separator)."""
    return name not in ("", ".", "..") and "/" not in name and "\\" not in name


def plan_run(spec: RunSpec, inputs: SweepInputs, output_folder: Path) -> SweepPlan:
    """Resolve and check a run: the converter exists, every axis is one of its parameters, every
    point is acceptable, the folders exist. Raises before anything is converted."""
    if not is_folder_name(spec.name):  # the run's files go in OUTPUT/NAME, never above or beside it
        raise UsageError(f"run name {spec.name!r} must be one folder's name (no '/', not '.' or '..'): the run "
                         f"is written to {Path(output_folder) / '<name>'}")
    converter = get_converter(spec.converter, **spec.converter_options())
    grid = build_grid(converter, spec.axes)
    evaluation = spec.eval_spec()
    for folder, role in ((inputs.gt_dir, "ground-truth"), (inputs.hbb_dir, "HBB")):
        if not Path(folder).is_dir():
            raise InputError(f"{folder}: {role} folder not found")
    if converter.needs_images and (inputs.img_source is None or not Path(inputs.img_source).exists()):
        raise InputError(f"{inputs.img_source}: converter {spec.converter!r} needs the images, and they are not there")
    # read here, and again by every point: a broken label map or frame size is refused before the
    # run's folder and run_config.yaml are written, not after the first point's conversion
    load_label_map(evaluation.map_path)
    ImageSizes(None, evaluation.img_width, evaluation.img_height)
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
            if key in REFERENCE_RUN_KEYS:
                hint = (" (a key of the reference tool's SAM benchmarks: this toolkit runs no SAM model itself; "
                        "sweep the reference with converter: command, or --refresh a folder it wrote)")
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
    if not is_folder_name(name):
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


def _reference_run(entry, defaults) -> dict:
    """A run of the reference's benchmark file with its SAM keys taken out, named as the reference
    names it (its models joined by '-'), for ``--refresh``: nothing of it is run."""
    merged = {**defaults, **entry}
    models = merged.get("sam_models")
    models = [models] if isinstance(models, str) else models
    out = _LineDict({k: v for k, v in entry.items() if k not in REFERENCE_RUN_KEYS})
    out.line, out.key_lines = getattr(entry, "line", 0), getattr(entry, "key_lines", {})
    if "name" not in out and isinstance(models, list) and models:
        out["name"] = "-".join(map(str, models))
    return out


def load_benchmark(path: Path, refresh: bool = False) -> Benchmark:
    """Read and check a benchmark file; every problem is a :class:`ConfigError` naming its line.

    With ``refresh`` (nothing will be converted), the reference tool's SAM run keys
    (:data:`REFERENCE_RUN_KEYS`) are accepted and ignored, and a run without a name takes the
    reference's (its ``sam_models`` joined by '-'), so its benchmark folders can be redrawn.
    """
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
    extra = REFERENCE_RUN_KEYS if refresh else ()
    _check_keys(path, defaults, tuple(k for k in RUN_KEYS if k != "name") + extra, "defaults")
    _check_kinds(path, defaults, RUN_KEY_KINDS, "defaults")
    if not isinstance(config["runs"], list):
        raise ConfigError(f"{_where(path, config, 'runs')}: 'runs' must be a list of mappings")
    runs = []
    reference_defaults = {k: v for k, v in defaults.items() if k in REFERENCE_RUN_KEYS}
    if refresh:
        defaults = _LineDict({k: v for k, v in defaults.items() if k not in REFERENCE_RUN_KEYS})
    for index, entry in enumerate(config["runs"], start=1):
        _check_keys(path, entry, RUN_KEYS + extra, f"run {index}")
        if refresh:
            entry = _reference_run(entry, reference_defaults)
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


