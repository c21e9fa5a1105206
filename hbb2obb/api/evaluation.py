"""Scoring from Python: :func:`evaluate` and its :class:`Evaluation`, the code path of ``hbb2obb-eval``.

The command pairs its folders with :func:`plan_run` and scores them with :func:`evaluate_run`,
as :func:`evaluate` does; what it prints and writes is read off the same :class:`Evaluation`.
Inputs may be folders (or COCO files) or frames in memory (``{frame name: Boxes}``), so a
training loop can score without writing files.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, NamedTuple, Optional, Union

import numpy as np

from hbb2obb.api.inputs import ImageSizesLike, LabelMapLike, PathLike, image_sizes_of, label_map_of
from hbb2obb.boxes import Boxes
from hbb2obb.detection.evaluate import DetectionParams
from hbb2obb.errors import InputError, UsageError
from hbb2obb.frames.pairing import FramePlan, FrameSpec, plan_any
from hbb2obb.io import ImageSizes
from hbb2obb.io.text import LabelProblem
from hbb2obb.scoring.evaluate import EvalSettings, EvaluationResult, evaluate_frames
from hbb2obb.scoring.metric_dict import summarize

if TYPE_CHECKING:  # the table types are only named in hints: pandas is imported when the table is asked for
    import pandas

    from hbb2obb.api.labels import Frames

#: One side of a run: a folder of label files (or a COCO ``.json``), or ``{frame name: Boxes}``.
Source = Union[PathLike, Mapping[str, Boxes]]


class RunWarning(NamedTuple):
    """One thing the user must hear about a run's inputs (the command prints it on stderr).

    Attributes
    ----------
    kind : str
        What it is about (``"missing prediction file"``, ``"broken prediction file"``, ...).
    message : str
    """

    kind: str
    message: str


class Evaluation:
    """What one scoring run produced: the metric dict, the detection metrics, the match table.

    Made by :func:`evaluate`. Every attribute is computed once, when first read.

    Parameters
    ----------
    result : EvaluationResult
        The accumulated run (:mod:`hbb2obb.scoring.evaluate`): match table, pairing, input health.
    gt_source : Path, optional
        The ground-truth folder, where ``NAME.dota`` files may give difficult flags (``None``: in memory).
    """

    def __init__(self, result: EvaluationResult, gt_source: Optional[Path] = None) -> None:
        self.result = result
        self.gt_source = gt_source

    @property
    def settings(self) -> EvalSettings:
        """The matching settings of the run."""
        return self.result.settings

    @functools.cached_property
    def metrics(self) -> dict[str, Any]:
        """The metric dict, as ``hbb2obb-eval -o`` writes it: the reference tool's keys, in its
        order, then ours (the detection metrics among them)."""
        return summarize(self.result)

    @functools.cached_property
    def detection(self) -> Optional[dict[str, Any]]:
        """The detection metrics (precision, recall, AP by the COCO and DOTA rules): the keys
        they add to :attr:`metrics`, per class under ``class_stats``; ``None`` without them."""
        summary = self.result.detection_summary
        if summary is None:
            return None
        found: dict[str, Any] = {"class_stats": {class_id: {} for class_id in self.metrics["class_stats"]}}
        summary.merge_into(found)
        found["class_stats"] = {class_id: values for class_id, values in found["class_stats"].items() if values}
        return found

    @functools.cached_property
    def _flags(self) -> tuple[np.ndarray, list]:
        """The difficult flag of every ground-truth row, and the warnings met reading them."""
        table = self.result.table
        if self.gt_source is None:
            flags = table.gt.difficult
            return (np.zeros(len(table.gt), dtype=bool) if flags is None else np.asarray(flags, dtype=bool)), []
        from hbb2obb.analysis.cuts import difficult_flags

        return difficult_flags(table, self.gt_source, self.result.label_map)

    @property
    def difficult(self) -> np.ndarray:
        """The difficult flag of every ground-truth row of the match table: the ground truth's
        own (DOTA, VOC), else those of ``NAME.dota`` files beside a folder's ``NAME.txt``."""
        return self._flags[0]

    def pair_columns(self) -> dict[str, np.ndarray]:
        """The match table as arrays: one row per ground-truth box, then one per unmatched
        prediction; the columns of the ``--pairs`` file, plus ``is_gt`` and ``has_pred``.

        Absent values are ``-1`` (lines, classes) and NaN (numbers).
        """
        from hbb2obb.analysis.cuts import ground_truth_properties
        from hbb2obb.report.pairs import pair_columns
        from hbb2obb.scoring.overlap_metrics import row_overlap

        table, settings = self.result.table, self.result.settings
        properties = ground_truth_properties(table, self.difficult, settings.edge_tolerance)
        return pair_columns(table, properties, row_overlap(table, settings.spatial_threshold))

    @functools.cached_property
    def pairs(self) -> Union["pandas.DataFrame", np.ndarray]:
        """The match table (:meth:`pair_columns`): a pandas DataFrame when pandas is installed,
        otherwise a numpy structured array with the same columns."""
        columns = self.pair_columns()
        try:
            import pandas
        except ImportError:
            return _structured(columns)
        return pandas.DataFrame(columns)

    @property
    def pair_warnings(self) -> list[RunWarning]:
        """Warnings met making the match table (difficult flags from ``NAME.dota`` files that do not fit)."""
        return [RunWarning(*warning) for warning in self._flags[1]]

    @property
    def warnings(self) -> list[RunWarning]:
        """Everything the command would print as a warning about this run, in its order."""
        return ([RunWarning(*warning) for warning in self.result.warnings] + self.pair_warnings
                + detection_warnings(self))

    @property
    def skipped(self) -> tuple[LabelProblem, ...]:
        """The prediction lines skipped as broken: each with its ``path``, ``line`` and ``reason``."""
        return tuple(self.result.health.problems)

    def __repr__(self) -> str:
        table = self.result.table
        return (f"Evaluation({len(table.frame_names)} frames, {len(table.gt)} ground-truth boxes, "
                f"{len(table.pred)} predictions, {table.n_matches} matches)")


def _structured(columns: dict[str, np.ndarray]) -> np.ndarray:
    """The columns as one numpy structured array (frame names as unicode strings)."""
    arrays = {name: (np.asarray(values, dtype=str) if name == "frame" else np.asarray(values))
              for name, values in columns.items()}
    rows = len(arrays["frame"])
    dtype = [(name, values.dtype if name != "frame" or rows else "U1") for name, values in arrays.items()]
    table = np.zeros(rows, dtype=dtype)
    for name, values in arrays.items():
        table[name] = values
    return table


def detection_warnings(evaluation: Evaluation) -> list[RunWarning]:
    """Warnings about the detection settings: detections left out by ``max_dets``, a ``conf``
    that has no effect."""
    result, out = evaluation.result, list[RunWarning]()
    params, summary = result.detection, result.detection_summary
    if params is None or summary is None:
        return out
    if summary.capped:
        capped = summary.capped
        where = ", ".join(f"{name} ({count})" for name, count in capped[:5]) + (
            f" and {len(capped) - 5} more frames" if len(capped) > 5 else "")
        out.append(RunWarning("max_dets", f"--max_dets {params.max_dets} left {sum(c for _, c in capped)} "
                              f"detection(s) out of the COCO rule (beyond {params.max_dets} per frame and class) "
                              f"in {where}: raise --max_dets for dense frames"))
    if params.conf is not None and not summary.scored:
        out.append(RunWarning("confidence", f"--conf {params.conf:g} has no effect: the predictions carry no "
                              "confidence"))
    return out


def nothing_scored(result: EvaluationResult) -> Optional[str]:
    """Why the run scored nothing, or ``None``: no frame, no predictions, every prediction line skipped.

    Such a run is an input error, with or without a gate: its numbers describe no prediction,
    and a gate on them could pass on nothing.
    """
    plan, health = result.plan, result.health
    if not plan.frames or (plan.pred_source is None and all(
            spec.pred_file is None and spec.pred_boxes is None for spec in plan.frames)):
        lacking = len(plan.missing_pred)
        return (f"no ground-truth frame has a prediction file ({lacking} frame(s) without one): nothing was scored"
                if lacking else "no frame was scored: nothing to report")
    if len(result.table.pred) == 0 and health.skipped_pred_lines:
        return (f"every prediction line was skipped ({health.skipped_pred_lines} line(s); see the warnings): "
                "nothing was scored")
    return None


class NothingScored(InputError):
    """A run that scored nothing (:func:`nothing_scored`), with the warnings that say why.

    Attributes
    ----------
    warnings : list of RunWarning
        The run's warnings (missing or broken prediction files): the command prints them
        before its one-line error.
    """

    def __init__(self, message: str, warnings: Sequence[tuple[str, str]] = ()) -> None:
        super().__init__(message)
        self.warnings = [RunWarning(*warning) for warning in warnings]


def check_scored(result: EvaluationResult, where: Optional[str] = None) -> None:
    """Raise :class:`NothingScored` when the run scored nothing (:func:`nothing_scored`).

    ``where`` (the prediction folder) starts the message when given.
    """
    problem = nothing_scored(result)
    if problem is not None:
        raise NothingScored(problem if where is None else f"{where}: {problem}", result.warnings)


def _frames_of(side: Mapping, role: str, strict: bool) -> tuple[dict[str, Boxes], list[LabelProblem]]:
    """The frames of a side in memory, checked: ground truth raises on a box that cannot be
    scored, predictions skip it (listed as a problem, as a broken line of a file is)."""
    frames, problems = {}, []
    for name, boxes in side.items():
        if not isinstance(name, str):
            raise UsageError(f"{role}: frame names must be strings, got {name!r}")
        if not isinstance(boxes, Boxes):
            raise UsageError(f"{role} frame {name!r}: expected Boxes, got {type(boxes).__name__}")
        bad = ~np.isfinite(boxes.corners).all(axis=(1, 2))
        if boxes.score is not None:
            bad |= ~np.isfinite(boxes.score)
        if bad.any():
            first = int(np.argmax(bad))
            where = int(boxes.line[first]) if boxes.line is not None else first + 1
            reason = "a corner or the confidence is not a finite number"
            if strict:
                raise InputError(f"ground truth frame {name}: box {where}: {reason}")
            problems += [LabelProblem(Path(name), int(boxes.line[i]) if boxes.line is not None else int(i) + 1,
                                      reason) for i in np.flatnonzero(bad)]
            boxes = boxes[~bad]
        if boxes.line is None:  # boxes made in memory: their position stands for the line (warnings, pairs)
            boxes = Boxes(boxes.corners, boxes.class_id, boxes.score, np.arange(1, len(boxes) + 1),
                          boxes.difficult, boxes.crowd)
        frames[name] = boxes
    return frames, problems


def _memory_plan(gt: Mapping, pred: Mapping, missing_pred: str) -> FramePlan:
    """The plan of a run on frames in memory: frames by name, in name order, as folders are paired."""
    gt_frames, _ = _frames_of(gt, "ground truth", True)
    if not gt_frames:
        raise InputError("the ground truth holds no frame: nothing to score")
    pred_frames, problems = _frames_of(pred, "predictions", False)
    problems = [*getattr(pred, "problems", ()), *problems]  # lines read_labels skipped count as a file's do
    sizes = {**getattr(pred, "sizes", {}), **getattr(gt, "sizes", {})}  # as a file records its frame's size
    frames, missing, missing_specs = [], [], []
    for name in sorted(gt_frames):
        size = sizes.get(name)
        size = None if size is None else tuple(float(v) for v in size)
        if name not in pred_frames:
            if missing_pred == "error":
                raise InputError(f"ground truth frame {name}: no predictions (missing_pred='error')")
            missing.append(Path(name))
            spec = FrameSpec(name, name, None, gt_frames[name], None, size)
            if missing_pred == "skip":
                missing_specs.append(spec)
                continue
            frames.append(spec)
            continue
        frames.append(FrameSpec(name, name, name, gt_frames[name], pred_frames[name], size))
    orphans = tuple(Path(name) for name in sorted(set(pred_frames) - set(gt_frames)))
    return FramePlan(tuple(frames), tuple(missing), orphans, pred_problems=tuple(problems),
                     missing_specs=tuple(missing_specs))


def _side_path(side: Source, role: str) -> Optional[Path]:
    if isinstance(side, Mapping):
        return None
    if isinstance(side, (str, Path)) or hasattr(side, "__fspath__"):
        return Path(side)
    raise UsageError(f"{role}: give a path or a mapping of frame names to Boxes, got {type(side).__name__}")


def _flags_from_side_cars(frames: "Frames") -> "Frames":
    """YOLO ground truth without difficult flags of its own, as the folder planner reads it.

    YOLO files carry no difficult flag: ``read_labels`` gives them all False, where the planner
    of two folders gives none, so that the ``NAME.dota`` beside a ``NAME.txt`` gives them
    (:attr:`Evaluation.difficult`). Read beside predictions in memory, the ground truth must be
    the same, or the side-cars would be ignored there and only there.
    """
    from dataclasses import replace

    from hbb2obb.api.labels import Frames

    if frames.format != "yolo":
        return frames
    return Frames({name: replace(boxes, difficult=None) for name, boxes in frames.items()}, format=frames.format,
                  names=frames.names, sizes=frames.sizes, problems=frames.problems, sources=frames.sources)


def plan_run(gt: Source, pred: Source, settings: EvalSettings, *, label_map: dict, sizes: ImageSizes,
             gt_format: Optional[str] = None, pred_format: Optional[str] = None,
             read_options: Optional[dict] = None) -> FramePlan:
    """Which frames a run scores: two folders paired by file name (or a DOTA Task1 submission),
    or frames in memory paired by name; a path beside frames in memory is read whole first."""
    gt_path, pred_path = _side_path(gt, "ground truth"), _side_path(pred, "predictions")
    if gt_path is not None and pred_path is not None:
        return plan_any(gt_path, pred_path, settings.missing_pred, label_map, gt_format=gt_format,
                        pred_format=pred_format, sizes=sizes, read_options=read_options)
    from hbb2obb.api.labels import read_labels

    if gt_path is not None:
        gt = _flags_from_side_cars(read_labels(gt_path, gt_format, sizes, label_map, **(read_options or {})))
    if pred_path is not None:
        pred = read_labels(pred_path, pred_format, sizes, label_map, strict=False, **(read_options or {}))
    return _memory_plan(gt, pred, settings.missing_pred)  # type: ignore[arg-type]


def evaluate_run(gt: Source, pred: Source, settings: EvalSettings, *, sizes: ImageSizes, label_map: dict,
                 detection: Optional[DetectionParams], jobs: int = 1, plan: Optional[FramePlan] = None,
                 progress: Optional[Callable[[int], None]] = None, gt_format: Optional[str] = None,
                 pred_format: Optional[str] = None, read_options: Optional[dict] = None) -> Evaluation:
    """Score a run: what :func:`evaluate` and ``hbb2obb-eval`` both call (``plan`` from :func:`plan_run`).

    ``read_options``: what some readers take besides the file (``split``, ``coco_angle``; see
    :data:`~hbb2obb.io.format_names.READ_OPTIONS`).
    """
    plan = plan or plan_run(gt, pred, settings, label_map=label_map, sizes=sizes, gt_format=gt_format,
                            pred_format=pred_format, read_options=read_options)
    gt_path, pred_path = _side_path(gt, "ground truth"), _side_path(pred, "predictions")
    in_memory = gt_path is None or pred_path is None
    result = evaluate_frames(gt_path, pred_path, settings, sizes=sizes, label_map=label_map, jobs=jobs,
                             progress=progress, plan=plan, detection=detection,
                             gt_format=None if in_memory else gt_format, pred_format=None if in_memory else pred_format,
                             read_options=read_options)
    # a folder's NAME.dota files give the difficult flags its own files lack
    return Evaluation(result, gt_path)


def settings_of(settings: Optional[EvalSettings], setting_values: Mapping[str, Any]) -> EvalSettings:
    """The run's :class:`EvalSettings`: ``settings``, or one made of the setting values by name
    (not both); an unknown name is a :class:`~hbb2obb.UsageError` listing the known ones."""
    if settings is not None and setting_values:
        raise UsageError(f"give settings or setting values ({', '.join(setting_values)}), not both")
    if settings is None:
        try:
            return EvalSettings(**setting_values)
        except TypeError:
            from dataclasses import fields

            known = {field.name for field in fields(EvalSettings)}
            unknown = sorted(set(setting_values) - known)
            raise UsageError(f"unknown setting(s) {', '.join(unknown)}; EvalSettings has {', '.join(sorted(known))}"
                             ) from None
    if not isinstance(settings, EvalSettings):
        raise UsageError(f"settings must be an EvalSettings, got {type(settings).__name__}")
    return settings


def evaluate(gt: Source, pred: Source, settings: Optional[EvalSettings] = None, *,
             detection: Union[DetectionParams, bool] = True, label_map: LabelMapLike = None,
             image_sizes: ImageSizesLike = None, gt_format: Optional[str] = None, pred_format: Optional[str] = None,
             jobs: int = 1, **setting_values: Any) -> Evaluation:
    """Score predictions against ground truth, as ``hbb2obb-eval`` does.

    Parameters
    ----------
    gt, pred : str, Path or mapping of str to Boxes
        A folder of label files (any format the toolkit reads, or a COCO ``.json``; the
        predictions may also be a DOTA Task1 submission), or the frames in memory as
        ``{frame name: Boxes}`` in pixels (:func:`~hbb2obb.read_labels` returns them).
    settings : EvalSettings, optional
        The matching settings; the defaults are the command's.
    detection : DetectionParams or bool
        The detection metrics' settings (``--ap_rule``, ``--conf``, ``--max_dets``,
        ``--difficult``); ``True``: their defaults; ``False``: no detection metrics
        (``--no_detection``).
    label_map : str, Path or dict of int to str, optional
        Class names (``-mp``): needed to read DOTA; names the classes in the metric dict.
    image_sizes : str, Path or (width, height), optional
        The frames' folder (``-i``) or one size for all (``-iw``/``-ih``): for normalized
        labels and ``exclude_edge_cases``. Frames read with :func:`~hbb2obb.read_labels`
        carry the sizes their files or images gave.
    gt_format, pred_format : str, optional
        The label format of a side given as a path; detected when omitted.
    jobs : int
        Processes (``0``: every core); the numbers do not depend on it.
    **setting_values
        Fields of :class:`EvalSettings` instead of ``settings`` (``iou_threshold=0.5``, ...).

    Returns
    -------
    Evaluation

    Raises
    ------
    hbb2obb.UsageError
        A bad setting, both ``settings`` and setting values, an input of the wrong type.
    hbb2obb.InputError
        Broken ground truth (``file:line``, or the frame and box in memory), a missing folder,
        a run that scored nothing (no frame with predictions, every prediction line skipped).

    Examples
    --------
    >>> from hbb2obb import Boxes, evaluate
    >>> gt = {"f": Boxes([[[0, 0], [10, 0], [10, 5], [0, 5]]], class_id=[0])}
    >>> pred = {"f": Boxes([[[1, 0], [11, 0], [11, 5], [1, 5]]], class_id=[0], score=[0.9])}
    >>> run = evaluate(gt, pred, iou_threshold=0.5)
    >>> run.metrics["total_matches"], round(run.metrics["avg_iou"], 4), run.detection["detection_scored"]
    (1, 0.8182, True)
    """
    settings = settings_of(settings, setting_values)
    params = DetectionParams() if detection is True else (detection or None)
    if params is not None and not isinstance(params, DetectionParams):
        raise UsageError(f"detection must be a DetectionParams or a bool, got {type(detection).__name__}")
    run = evaluate_run(gt, pred, settings, sizes=image_sizes_of(image_sizes), label_map=label_map_of(label_map),
                       detection=params, jobs=jobs, gt_format=gt_format, pred_format=pred_format)
    check_scored(run.result)
    return run
