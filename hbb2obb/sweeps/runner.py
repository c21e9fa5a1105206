"""Grid sweeps of a converter (docs/metrics.md §6): expand a grid, score every point, keep results on disk.

Four small pieces, so each can be swapped alone:

- :class:`Grid` and :func:`build_grid`: the axes and their values, checked against the
  converter's parameters before anything runs.
- :func:`run_grid_point`: one point, a pure function of plain, picklable arguments that returns
  a plain dict (its *record*): convert every HBB file into a temporary folder, score it with
  the shared core, and keep the metric dict without per-class detail.
- executors (:mod:`hbb2obb.sweeps.executors`, and on a cluster
  :class:`hbb2obb.sweeps.dask_executor.DaskExecutor`): call a function on a list of argument tuples
  and yield ``(index, result)`` as results arrive, in any order.
- :func:`run_sweep` (:func:`run_sweeps` for several at once): feed the points that are still
  missing to an executor and write ``results.yaml`` atomically after every point, in grid
  order, so an interrupted sweep can resume and the file is the same whichever executor
  produced it.
"""

from __future__ import annotations

import functools
import itertools
import math
import os
import shutil
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Optional

import yaml

from hbb2obb.converters import get_converter
from hbb2obb.errors import ConfigError, Hbb2ObbError, InputError, UsageError
from hbb2obb.io import ImageSizes, load_label_map
from hbb2obb.io.atomic import write_text_atomic
from hbb2obb.io.text_file import read_text_file
from hbb2obb.io.yaml_text import refuse_alias_bomb, too_deep
from hbb2obb.scoring.evaluate import EvalSettings, evaluate_frames
from hbb2obb.scoring.metric_dict import summarize
from hbb2obb.sweeps.executors import Executor, ProcessExecutor, make_executor, serial_executor  # noqa: F401
from hbb2obb.sweeps.records import (
    describe_output_problems,
    fingerprint,
    output_problems,
    record_problem,
    setting_changes,
)

RESULTS_NAME = "results.yaml"
RUN_CONFIG_NAME = "run_config.yaml"
SUMMARY_NAME = "summary.txt"

#: The reference tool's three axes, in its loop order (outermost first), and their defaults.
STANDARD_AXES = ("imgsz", "scale_factor", "opening_kernel_percentage")
DEFAULT_AXIS_VALUES = {
    "imgsz": (640, 960, 1280),
    "scale_factor": (-0.01, 0.0, 0.01, 0.02, 0.03, 0.04, 0.05, 0.06, 0.07, 0.08, 0.09, 0.1),
    "opening_kernel_percentage": (0.15,),
}
MAX_GRID_POINTS = 1_000_000  # a sweep converts the whole set per point: more would run for years
#: Command-line and config spellings of the reference tool, mapped to parameter names.
AXIS_SPELLINGS = {"scale_factors": "scale_factor", "opening_kernels": "opening_kernel_percentage"}

#: Keys of a record that are not grid axes: the metric dict of docs/metrics.md §3 and the bookkeeping.
METRIC_KEYS = (
    "total_gt", "total_pred", "total_matches", "total_unmatched_gt", "total_unmatched_pred",
    "cross_class_matches", "total_edge_cases", "avg_iou", "std_iou", "sem_iou", "median_iou",
    "iou_fractions", "avg_angle_error", "std_angle_error", "median_angle_error", "p90_angle_error",
    "class_stats", "class_agnostic", "exclude_edge_cases", "excluded_classes", "iou_threshold",
    "one_to_one", "frames_scored", "missing_pred_files", "orphan_pred_files", "skipped_pred_lines",
    "reordered_boxes", "degenerate_boxes", "concave_boxes",
)
BOOKKEEPING_KEYS = ("execution_time", "status", "error", "fallbacks", "skipped_hbb_lines", "exit_code",
                    "missing_output_files", "unreadable_output_files", "measured_with")
RESERVED_KEYS = frozenset(METRIC_KEYS + BOOKKEEPING_KEYS)


def canonical_axis(name: str) -> str:
    """The parameter name of an axis, whichever spelling was used."""
    return AXIS_SPELLINGS.get(name, name)


def freeze(value):
    """A hashable, order-insensitive-to-type form of an axis value (``0 == 0.0``, lists as tuples)."""
    if isinstance(value, (list, tuple)):
        return tuple(freeze(v) for v in value)
    return value


def plain(value):
    """An axis value as YAML can write it safely (tuples become lists)."""
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


def format_value(value) -> str:
    """An axis value for people: ``0.05``, ``1280``, ``0.02,0.05``."""
    if isinstance(value, (list, tuple)):
        return ",".join(format_value(v) for v in value)
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


@dataclass(frozen=True)
class Grid:
    """Named axes, each with its values; the points are their product, first axis outermost.

    Examples
    --------
    >>> g = Grid((("imgsz", (640, 1280)), ("scale_factor", (0.0, 0.05))))
    >>> g.size, g.points()[1]
    (4, {'imgsz': 640, 'scale_factor': 0.05})
    >>> g.describe()
    '2 imgsz x 2 scale_factor = 4 points'
    """

    axes: tuple = ()

    @property
    def names(self) -> tuple:
        return tuple(name for name, _ in self.axes)

    @property
    def size(self) -> int:
        return math.prod(len(values) for _, values in self.axes)

    def points(self) -> list[dict]:
        return [dict(zip(self.names, combo)) for combo in itertools.product(*(v for _, v in self.axes))]

    def key(self, point: dict) -> Optional[tuple]:
        """The point's identity; ``None`` when it lacks one of the axes."""
        if any(name not in point for name in self.names):
            return None
        return tuple(freeze(point[name]) for name in self.names)

    def describe(self) -> str:
        parts = " x ".join(f"{len(values)} {name}" for name, values in self.axes) or "no axes"
        return f"{parts} = {self.size} point{'s' if self.size != 1 else ''}"

    def as_dict(self) -> dict:
        return {name: [plain(v) for v in values] for name, values in self.axes}


def build_grid(converter, axes: dict) -> Grid:
    """The grid of ``axes`` (name -> values) for ``converter``, every point checked.

    Axis names may use the reference spellings (``scale_factors``, ``opening_kernels``). The
    reference tool's axes that the converter has but ``axes`` leaves out take the converter's
    ``default_axes``, else the reference defaults; an axis the converter does not have is a usage
    error, as is a point the converter rejects (e.g. a scale factor of -0.6), so nothing runs on a
    grid that would fail half way.
    """
    given: dict = {}
    for name, values in axes.items():
        parameter = canonical_axis(name)
        if parameter in given:
            raise UsageError(f"axis {parameter!r} is given twice")
        if parameter in RESERVED_KEYS:
            raise UsageError(f"{parameter!r} is a metric name, not a converter parameter")
        values = tuple(values) if isinstance(values, (list, tuple)) else (values,)
        if not values:
            raise UsageError(f"axis {parameter!r} has no values")
        if len({freeze(v) for v in values}) != len(values):
            raise UsageError(f"axis {parameter!r} repeats a value: {', '.join(map(format_value, values))}")
        given[parameter] = values
    unknown = [name for name in given if name not in converter.parameters]
    if unknown:
        converter.check_parameters({name: given[name][0] for name in unknown})  # raises, naming them
    defaults = {**DEFAULT_AXIS_VALUES, **converter.default_axes}
    ordered = [(name, given.pop(name) if name in given else tuple(defaults[name]))
               for name in STANDARD_AXES if name in converter.parameters]
    grid = Grid(tuple(ordered) + tuple(given.items()))
    if grid.size > MAX_GRID_POINTS:  # before the points are made: each costs memory, and checking them all, time
        raise UsageError(f"the grid has {grid.size} points, more than a sweep takes "
                         f"({MAX_GRID_POINTS:,}); each point converts the whole set: give fewer values")
    for point in grid.points():
        converter.check_parameters(point)
    return grid


@dataclass(frozen=True)
class SweepInputs:
    """Where a sweep reads: images (may be absent for converters that need none), prompts, truth."""

    img_source: Optional[Path]
    gt_dir: Path
    hbb_dir: Path


@dataclass(frozen=True)
class EvalSpec:
    """How every grid point is scored: the matching settings and what tells the frame size."""

    settings: EvalSettings = EvalSettings()
    img_width: Optional[float] = None
    img_height: Optional[float] = None
    map_path: Optional[Path] = None

    def as_dict(self) -> dict:
        s = self.settings
        return {"excluded_classes": list(s.excluded_classes), "iou_threshold": s.iou_threshold,
                "class_agnostic": s.class_agnostic, "exclude_edge_cases": s.exclude_edge_cases,
                "edge_tolerance": s.edge_tolerance, "one_to_one": s.one_to_one, "missing_pred": s.missing_pred,
                "img_width": self.img_width, "img_height": self.img_height,
                "map_path": None if self.map_path is None else str(self.map_path)}


def run_grid_point(converter_name: str, converter_options: dict, params: dict, inputs: SweepInputs,
                   evaluation: EvalSpec, scratch_root: Optional[Path] = None) -> dict:
    """Convert and score one grid point; the record of docs/metrics.md §6 as a plain dict.

    ``status`` is ``"ok"`` (with the metric keys), ``"failed"`` when the converter failed or
    its output is unusable (``error`` holds why; the sweep goes on) or ``"error"`` when the
    inputs are unusable (a broken ground-truth line: the sweep must stop). Output is unusable
    when an HBB file has no output file, an output file is not UTF-8 text, or output lines are
    unreadable: such a point is never scored as if it were a conversion. ``execution_time`` is
    the conversion's wall time in seconds, scoring excluded.

    The conversion is written into a folder of its own under ``scratch_root`` (the system temp
    folder when ``None``), removed when the point ends, however it ends short of ``kill -9``.
    """
    record = {name: plain(value) for name, value in params.items()}
    if scratch_root is not None:
        Path(scratch_root).mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="hbb2obb-sweep-", dir=scratch_root))
    try:
        converter = get_converter(converter_name, **converter_options)
        out_dir = scratch / "obb"
        start = time.perf_counter()
        report = converter.convert(inputs.hbb_dir, out_dir, dict(params), img_source=inputs.img_source)
        seconds = time.perf_counter() - start
        if not report.ok:
            return {**record, "execution_time": seconds, "status": "failed", "error": report.error}
        problems = output_problems(inputs.hbb_dir, out_dir)
        if problems:
            return _unusable(record, seconds, problems, inputs.hbb_dir)
        image_dir = inputs.img_source if inputs.img_source is not None and inputs.img_source.is_dir() else None
        sizes = ImageSizes(image_dir, evaluation.img_width, evaluation.img_height)
        result = evaluate_frames(inputs.gt_dir, out_dir, evaluation.settings, sizes=sizes,
                                 label_map=load_label_map(evaluation.map_path))
        metrics = summarize(result)
        if metrics.get("skipped_pred_lines"):
            first = result.health.problems[0]
            problems = {"skipped_pred_lines": int(metrics["skipped_pred_lines"]),
                        "first_skipped_line": f"{Path(first.path).name}:{first.line}: {first.reason}"}
            return _unusable(record, seconds, problems, inputs.hbb_dir)
    except Hbb2ObbError as exc:
        return {**record, "status": "error", "error": str(exc), "exit_code": exc.exit_code}
    except Exception as exc:  # a converter's own bug or resource failure: record it, keep sweeping
        tail = traceback.format_exc().strip().splitlines()[-3:]
        return {**record, "execution_time": 0.0, "status": "failed",
                "error": f"{type(exc).__name__}: {exc}\n" + "\n".join(tail)}
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    record.update((k, v) for k, v in metrics.items() if k != "class_stats")
    if report.fallbacks:
        record["fallbacks"] = report.fallbacks
    if report.details.get("skipped_hbb_lines"):
        record["skipped_hbb_lines"] = int(report.details["skipped_hbb_lines"])
    record["execution_time"] = seconds
    record["status"] = "ok"
    return record


def _unusable(record: dict, seconds: float, problems: dict, hbb_dir: Path) -> dict:
    """The failed record of a point whose converter ran but whose output cannot be scored."""
    total = len(list(Path(hbb_dir).glob("*.txt")))
    counts = {k: v for k, v in problems.items() if not k.startswith("first_")}
    return {**record, "execution_time": seconds, "status": "failed", **counts,
            "error": describe_output_problems(problems, total)}


@dataclass(frozen=True)
class SweepPlan:
    """Everything one sweep needs, resolved and checked: what to run and where to write."""

    name: str
    folder: Path
    converter: str
    converter_options: dict
    grid: Grid
    inputs: SweepInputs
    evaluation: EvalSpec = field(default_factory=EvalSpec)
    #: Convert under the run folder (local sweeps); ``False``: in each worker's own temp folder
    #: (a cluster's workers may not share the run folder, and their local disk is faster).
    scratch_in_run_folder: bool = True

    @functools.cached_property
    def measured_with(self) -> dict:
        """The :func:`~hbb2obb.sweeps.records.fingerprint` of this plan, taken once (it reads the
        label folders), at the sweep's start: what every record it measures is stamped with."""
        return fingerprint(self)

    @property
    def scratch_root(self) -> Optional[Path]:
        """Where grid points convert: inside the run folder, so no kill leaves litter elsewhere
        (``None``, the system temp folder, when not :attr:`scratch_in_run_folder`)."""
        from hbb2obb.sweeps.lock import SCRATCH_NAME

        return Path(os.path.abspath(self.folder)) / SCRATCH_NAME if self.scratch_in_run_folder else None


def best_record(records: Iterable[dict], metric: str = "avg_iou") -> Optional[dict]:
    """The ok record of highest ``metric``; the first in grid order wins a tie."""
    best = None
    for record in records:
        if record.get("status", "ok") == "ok" and metric in record:
            if best is None or record[metric] > best[metric]:
                best = record
    return best


def results_document(records: list, sweep_seconds: float, model_load_seconds: float = 0.0) -> dict:
    """The content of ``results.yaml``: the reference layout, records in grid order.

    ``model_load_seconds`` keeps the reference's key. The reference loads its SAM checkpoints
    there; this toolkit's converters load no model, so it holds the time the converter took to
    set up in the sweeping process (see :func:`converter_setup_seconds`), which each grid
    point's ``execution_time`` leaves out as the reference's leaves out the loading.
    """
    best = best_record(records)
    return {"best_parameters": None if best is None else dict(best), "all_results": [dict(r) for r in records],
            "model_load_seconds": float(model_load_seconds), "sweep_seconds": float(sweep_seconds)}


def converter_setup_seconds(plan: SweepPlan) -> float:
    """Wall time of setting the plan's converter up once (:func:`get_converter`), in seconds.

    What the reference records as ``model_load_seconds``. No converter of this toolkit loads a
    model, so this is small: it is measured rather than written as 0 so that a converter which
    does expensive setup shows it.
    """
    start = time.perf_counter()
    get_converter(plan.converter, **plan.converter_options)
    return time.perf_counter() - start


def write_yaml_atomic(path: Path, document: dict) -> None:
    """Write YAML so that a reader (or a kill, or a power cut) never sees a half-written file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = yaml.safe_dump(document, sort_keys=False, default_flow_style=False, allow_unicode=True)
    write_text_atomic(path, text, durable=True)


def read_yaml(path: Path) -> dict:
    """A YAML mapping from disk; a file that is not one is an :class:`InputError`."""
    text = read_text_file(path, "YAML file")
    refuse_alias_bomb(text, yaml.SafeLoader, path, "YAML file")
    try:
        data = yaml.safe_load(text)
    except RecursionError:
        raise too_deep(path, "YAML file") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        raise ConfigError(f"{where}: not valid YAML ({getattr(exc, 'problem', exc)})") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping at the top level")
    return data


def _records_of(document: Optional[dict]) -> list:
    records = (document or {}).get("all_results") or []
    return records if isinstance(records, list) else []


def measured_records(plan: SweepPlan, document: Optional[dict]) -> dict:
    """Records of an earlier attempt that belong to ``plan``'s grid, succeeded, are sound and
    were measured with the plan's settings (``measured_with``), by point key. Any other record
    is measured again: a number taken under other settings is never reused."""
    wanted = {plan.grid.key(p) for p in plan.grid.points()}
    kept = {}
    for record in _records_of(document):
        if record_problem(record) is not None or record.get("status", "ok") != "ok":
            continue
        if record.get("measured_with") != plan.measured_with:
            continue
        key = plan.grid.key(record)
        if key is not None and key in wanted:
            kept[key] = record
    return kept


def is_complete(plan: SweepPlan, document: Optional[dict]) -> bool:
    """Whether a results document holds exactly the plan's grid, every point measured with the
    plan's settings."""
    records = _records_of(document)
    wanted = [plan.grid.key(p) for p in plan.grid.points()]
    return len(records) == len(wanted) and set(measured_records(plan, document)) == set(wanted)


def stale_records(plan: SweepPlan, document: Optional[dict]) -> list:
    """``(record, changes)`` of each ok record of ``document`` measured with other settings than
    ``plan``'s (or not saying what it was measured with); ``changes`` in words."""
    stale = []
    for record in _records_of(document):
        if record_problem(record) is None and record.get("status", "ok") == "ok" \
                and record.get("measured_with") != plan.measured_with:
            stale.append((record, setting_changes(record.get("measured_with"), plan.measured_with)))
    return stale


@dataclass
class SweepOutcome:
    """What a sweep left in ``results.yaml``, and what it measured this time."""

    records: list
    best: Optional[dict]
    sweep_seconds: float
    measured: int
    reused: int

    @property
    def failed(self) -> list:
        return [r for r in self.records if r.get("status") == "failed"]


@dataclass
class _SweepState:
    """One plan's points while a sweep runs: their keys in grid order and the records so far."""

    keys: list
    done: dict
    reused: int
    measured: int
    earlier_seconds: float
    seconds: float

    def ordered(self) -> list:
        return [self.done[k] for k in self.keys if k in self.done]


def run_sweep(plan: SweepPlan, executor: Executor = serial_executor, previous: Optional[dict] = None,
              on_point: Optional[Callable[[dict, Optional[dict]], None]] = None) -> SweepOutcome:
    """Measure the grid points of ``plan`` that ``previous`` (an earlier ``results.yaml``) lacks.

    ``results.yaml`` in ``plan.folder`` is rewritten atomically after every point, records in
    grid order, so its numbers do not depend on the executor and a killed sweep loses at most
    the points in flight. ``on_point(record, best_so_far)`` is called after each point.

    Raises
    ------
    Hbb2ObbError
        When a grid point finds the inputs unusable (e.g. a broken ground-truth line); the
        points measured before it stay on disk.
    """
    report = None if on_point is None else (lambda _plan, record, best: on_point(record, best))
    return run_sweeps([plan], executor, [previous], report)[0]


def run_sweeps(plans: list, executor: Executor = serial_executor, previous: Optional[list] = None,
               on_point: Optional[Callable[[SweepPlan, dict, Optional[dict]], None]] = None) -> list:
    """:func:`run_sweep` for several plans at once: the missing points of all of them go to the
    executor in one list (a cluster gets the whole benchmark), each plan's ``results.yaml`` is
    rewritten as its own points arrive, and ``on_point(plan, record, best_so_far)`` follows each.

    ``previous`` holds each plan's earlier ``results.yaml`` (or ``None``); the outcomes come back
    in the order of ``plans``. A plan's ``sweep_seconds`` runs until its own last point arrived.
    """
    previous = list(previous) if previous is not None else [None] * len(plans)
    states, calls, owners = [], [], []
    for number, (plan, document) in enumerate(zip(plans, previous)):
        points = plan.grid.points()
        keys = [plan.grid.key(p) for p in points]
        done = measured_records(plan, document)
        earlier = float((document or {}).get("sweep_seconds") or 0.0) if done else 0.0
        todo = [i for i, key in enumerate(keys) if key not in done]
        states.append(_SweepState(keys, done, len(done), len(todo), earlier, earlier))
        calls += [(plan.converter, plan.converter_options, points[i], plan.inputs, plan.evaluation,
                   plan.scratch_root) for i in todo]
        owners += [(number, keys[i]) for i in todo]

    setup = [converter_setup_seconds(plan) for plan in plans]
    start = time.perf_counter()
    for position, record in executor(run_grid_point, calls):
        if record.get("status") == "error":
            error = InputError(record["error"])
            error.exit_code = record.get("exit_code", 2)
            raise error
        number, key = owners[position]
        plan, state = plans[number], states[number]
        record = {**record, "measured_with": plan.measured_with}
        state.done[key] = record
        state.seconds = state.earlier_seconds + time.perf_counter() - start
        write_yaml_atomic(plan.folder / RESULTS_NAME, results_document(state.ordered(), state.seconds, setup[number]))
        if on_point:
            on_point(plan, record, best_record(state.ordered()))
    outcomes = []
    for plan, state, seconds in zip(plans, states, setup):
        records = state.ordered()
        if not state.measured:
            write_yaml_atomic(plan.folder / RESULTS_NAME, results_document(records, state.seconds, seconds))
        outcomes.append(SweepOutcome(records, best_record(records), state.seconds, state.measured, state.reused))
    return outcomes


def run_config_document(plan: SweepPlan, command_line: str, jobs: int) -> dict:
    """``run_config.yaml``: the resolved settings, the grid, the command line, versions and host."""
    import platform
    import socket
    import sys

    import matplotlib
    import numpy
    import shapely

    from hbb2obb import __version__

    grid = plan.grid.as_dict()
    reference_names = {"imgsz": "imgsz", "scale_factor": "scale_factors",
                       "opening_kernel_percentage": "opening_kernels"}
    document = {"run_name": plan.name,
                "img_source": None if plan.inputs.img_source is None else str(plan.inputs.img_source),
                "gt_dir": str(plan.inputs.gt_dir), "hbb_dir": str(plan.inputs.hbb_dir),
                "converter": plan.converter, "converter_options": dict(plan.converter_options)}
    document.update({reference_names[a]: grid.pop(a) for a in STANDARD_AXES if a in grid})
    document["grid"] = grid
    document.update(plan.evaluation.as_dict())
    now = time.time()
    document.update({
        "grid_points": plan.grid.size, "jobs": jobs, "command_line": command_line,
        "measured_with": plan.measured_with,
        "system_metadata": {
            "start_date": time.strftime("%Y-%m-%d", time.localtime(now)),
            "start_time": time.strftime("%H:%M:%S", time.localtime(now)),
            "os": {"system": platform.system(), "platform": platform.platform(), "release": platform.release()},
            "software": {"python": platform.python_version(), "python_full": sys.version,
                         "hbb2obb_toolkit": __version__, "numpy": numpy.__version__,
                         "shapely": shapely.__version__, "matplotlib": matplotlib.__version__},
            "hardware": {"architecture": platform.machine(), "processor": platform.processor(),
                         "cpu_cores": os.cpu_count(), "host": socket.gethostname()},
        },
    })
    return document


def check_resumable(plan: SweepPlan, document: Optional[dict]) -> None:
    """Raise :class:`UsageError` when ``document`` (the folder's ``results.yaml``) holds records
    measured with other settings than ``plan``'s, naming what changed.

    ``--resume`` then refuses rather than measure some points anew beside old ones, or drop the
    old ones: the person decides (a fresh run, or another run name keeps them).
    """
    stale = stale_records(plan, document)
    if not stale:
        return
    record, changes = stale[0]
    where = ", ".join(f"{a}={format_value(record[a])}" for a in plan.grid.names if a in record) or "a record"
    raise UsageError(
        f"--resume: {len(stale)} record(s) of {plan.folder / RESULTS_NAME} were measured with other evaluation "
        f"settings, converter or inputs than this run ({where}: {'; '.join(changes)}); run without --resume to "
        "measure the grid afresh (replacing them), or use another --run_name to keep them")
