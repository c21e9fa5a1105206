"""The other commands as functions: :func:`analyze` (``hbb2obb-analyze``), :func:`convert` (the
built-in converter of ``hbb2obb``) and :func:`sweep` (``hbb2obb-optimize``).

Each calls the core functions its command calls, with the settings objects the command builds
(:class:`~hbb2obb.scoring.evaluate.EvalSettings`, :class:`~hbb2obb.converters.image.params.ImageParams`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, ContextManager, Optional, Union

import numpy as np

from hbb2obb.api.evaluation import (
    Evaluation,
    NothingScored,
    RunWarning,
    Source,
    check_scored,
    evaluate_run,
    plan_run,
    settings_of,
)
from hbb2obb.api.inputs import ImageSizesLike, LabelMapLike, PathLike, image_sizes_of, label_map_of, optional_path
from hbb2obb.boxes import Boxes
from hbb2obb.detection.evaluate import DetectionParams
from hbb2obb.errors import InputError, UsageError
from hbb2obb.io import ImageSizes
from hbb2obb.scoring.evaluate import EvalSettings, check_class_ids

if TYPE_CHECKING:  # named in hints only: each is imported by the function that uses it
    from PIL.Image import Image

    from hbb2obb.analysis.cuts import GroundTruthProperties
    from hbb2obb.analysis.identity_baseline import IdentityMatch
    from hbb2obb.converters.image.converter import ImageConversion
    from hbb2obb.converters.image.params import ImageParams
    from hbb2obb.detection.errors import TideParams
    from hbb2obb.sweeps.runner import SweepOutcome


#: What a progress display takes: ``progress(what, total)`` is a context manager giving a
#: callable that is told how many more frames are done (the command's bars).
Progress = Callable[[str, int], ContextManager[Callable[[int], None]]]
#: The ``hbb`` value that looks for the HBB prompts in ``labels_hbb`` beside the ground-truth folder.
AUTO = "auto"
MIN_BOOTSTRAP = 100
#: What ``run_config.yaml`` names as the command line of a sweep run from Python.
API_CALL = "hbb2obb.sweep() (Python API)"


@dataclass
class Analysis:
    """What :func:`analyze` found: the analysis (as ``analysis.yaml`` holds it) and the run behind it.

    Attributes
    ----------
    data : dict
        Cuts by orientation, size, edge, difficult flag and class, the worst pairs, the identity
        baseline and, with a baseline, the paired comparison; with scored predictions, the
        detection error decomposition under ``"detection_errors"``.
    evaluation : Evaluation
        The scoring run (metric dict, match table).
    warnings : list of RunWarning
        The run's warnings and the analysis's own, in the order the command prints them.
    baseline : Evaluation, optional
        The scoring run of the ``baseline`` predictions.
    properties : GroundTruthProperties, optional
        Orientation, size, edge and difficult flag of every ground-truth row of the match table.
    identity : IdentityMatch, optional
        The HBB prompts matched to the ground truth (the identity baseline), when scored.
    hbb : Path, optional
        The HBB prompt folder the identity baseline was scored from (``None``: not scored).
    """

    data: dict[str, Any]
    evaluation: Evaluation
    warnings: list[RunWarning]
    baseline: Optional[Evaluation] = None
    properties: Optional["GroundTruthProperties"] = None
    identity: Optional["IdentityMatch"] = None
    hbb: Optional[Path] = None


def _label(side: Source, default: str) -> str:
    """How a prediction set is named in the comparison: its path, else ``default`` (frames in memory)."""
    return default if isinstance(side, Mapping) else str(side)


def _scored(result) -> bool:
    """Whether every prediction of a run carries a confidence (the error decomposition needs one)."""
    return result.table.pred.score is not None and len(result.table.pred) > 0


def score_for_analysis(gt: Source, pred: Source, settings: EvalSettings, *, sizes: ImageSizes, label_map: dict,
                       detection: DetectionParams, jobs: int = 1, formats: tuple = (None, None),
                       read_options: Optional[dict] = None, progress: Optional[Progress] = None,
                       what: str = "Evaluating") -> Evaluation:
    """One side of an analysis scored (:func:`~hbb2obb.api.evaluation.evaluate_run`), under ``progress``.

    A run that scored nothing raises :class:`~hbb2obb.api.evaluation.NothingScored` naming
    ``pred``: an analysis of nothing, or a gate on it, would read like a result. Predictions
    without a confidence on every box get no decomposition, so their run's warnings say nothing
    of detection metrics.
    """
    plan = plan_run(gt, pred, settings, label_map=label_map, sizes=sizes, gt_format=formats[0],
                    pred_format=formats[1], read_options=read_options)
    with (progress(what, len(plan.frames)) if progress is not None else contextlib.nullcontext()) as update:
        run = evaluate_run(gt, pred, settings, sizes=sizes, label_map=label_map, detection=detection, jobs=jobs,
                           plan=plan, progress=update, gt_format=formats[0], pred_format=formats[1],
                           read_options=read_options)
    check_scored(run.result, None if isinstance(pred, Mapping) else str(pred))
    if not _scored(run.result):
        from hbb2obb.scoring.run_warnings import run_warnings

        result = run.result
        result.warnings[:] = run_warnings(result.plan, result.health, sizes, settings.missing_pred, False)
    return run


def analyze_run(gt: Source, pred: Source, settings: EvalSettings, *, label_map: dict, sizes: ImageSizes,
                detection: DetectionParams, hbb: Union[PathLike, None] = None, baseline: Optional[Source] = None,
                boundary_classes: Sequence[int] = (), worst: int = 0, seed: int = 0, bootstrap: int = 2000,
                tide: Optional["TideParams"] = None, jobs: int = 1, formats: tuple = (None, None),
                read_options: Optional[dict] = None, progress: Optional[Progress] = None) -> Analysis:
    """The analysis of a run: what :func:`analyze` and ``hbb2obb-analyze`` both call.

    ``hbb`` is the HBB prompt folder of the identity baseline: a folder asked for must be there
    and readable (else :class:`~hbb2obb.InputError`); :data:`AUTO` looks for ``labels_hbb``
    beside the ground-truth folder, and a folder found so that cannot be scored is a warning
    (the rest of the analysis stands). ``progress`` shows the scoring (:data:`Progress`).
    """
    from hbb2obb.analysis.compare import compare_cuts
    from hbb2obb.analysis.cuts import analyze as analyze_cuts
    from hbb2obb.analysis.cuts import ground_truth_properties, standard_cuts
    from hbb2obb.analysis.detection_errors import compare_detectors, decompose_run, detection_errors
    from hbb2obb.detection.errors import TideParams

    if worst < 0:
        raise UsageError(f"worst must not be negative, got {worst}")
    if baseline is not None and bootstrap < MIN_BOOTSTRAP:
        raise UsageError(f"bootstrap must be at least {MIN_BOOTSTRAP}, got {bootstrap}")
    check_class_ids(boundary_classes, "boundary")
    tide = tide or TideParams()

    def score(side: Source, what: str) -> Evaluation:
        return score_for_analysis(gt, side, settings, sizes=sizes, label_map=label_map, detection=detection,
                                  jobs=jobs, formats=formats, read_options=read_options, progress=progress, what=what)

    run = score(pred, "Evaluating")
    result, edge = run.result, settings.edge_tolerance
    warnings = [RunWarning(*warning) for warning in result.warnings] + run.pair_warnings
    props = ground_truth_properties(result.table, run.difficult, edge)
    hbb_dir, explicit = _prompt_folder(gt, hbb)
    identity, match = _identity(run, props, hbb_dir, explicit, warnings)
    decomposed = decompose_run(result, props, tide, edge) if _scored(result) else None
    comparison, other, detectors = None, None, None
    if baseline is not None:
        try:
            other = score(baseline, "Evaluating baseline")
        except NothingScored as exc:  # the predictions' warnings too, and the baseline's said as its
            raise NothingScored(f"baseline: {exc}", warnings + [RunWarning(kind, f"baseline: {message}")
                                                                for kind, message in exc.warnings]) from None
        warnings += [RunWarning(kind, f"baseline: {message}") for kind, message in other.result.warnings]
        comparison = compare_cuts(result.table, other.result.table, standard_cuts(props, label_map), seed=seed,
                                  n_boot=bootstrap)
        comparison.update(a=_label(pred, "predictions"), b=_label(baseline, "baseline"))
        if decomposed is not None and _scored(other.result):
            other_props = ground_truth_properties(other.result.table, other.difficult, edge)
            detectors = compare_detectors(decomposed, decompose_run(other.result, other_props, tide, edge),
                                          label_map, seed=seed, n_boot=bootstrap)
        elif decomposed is not None:
            warnings.append(RunWarning("confidence", f"baseline {_label(baseline, 'baseline')}: its predictions "
                                       "carry no confidence on every box: no AP comparison"))
    data = analyze_cuts(result, props, label_map, identity=identity, comparison=comparison,
                        boundary_classes=tuple(boundary_classes), worst=worst)
    if decomposed is not None:
        data["detection_errors"] = detection_errors(decomposed, label_map, detectors)
    return Analysis(data, run, warnings, other, props, match, hbb_dir if identity is not None else None)


def _prompt_folder(gt: Source, hbb: Union[PathLike, None]) -> tuple[Optional[Path], bool]:
    """The HBB prompt folder and whether it was asked for (``hbb`` a path) or looked for (:data:`AUTO`)."""
    if hbb is None:
        return None, False
    if hbb != AUTO:
        return Path(hbb), True
    if isinstance(gt, Mapping):
        return None, False
    found = Path(gt).resolve().parent / "labels_hbb"
    return (found if found.is_dir() else None), False


def _identity(run: Evaluation, props, hbb_dir: Optional[Path], explicit: bool, warnings: list):
    """The identity-baseline summary and match, or ``(None, None)`` when there are no prompts to score."""
    from hbb2obb.analysis.cuts import orientation_cut, orientation_partition
    from hbb2obb.analysis.identity_baseline import identity_summary, match_identity_baseline

    if hbb_dir is None or not hbb_dir.is_dir():
        if explicit:
            raise InputError(f"{hbb_dir}: HBB prompt folder not found")
        return None, None
    result = run.result
    try:
        match = match_identity_baseline(result.table, hbb_dir, result.settings)
    except InputError as exc:
        if explicit:
            raise
        # Found by default rather than asked for: the rest of the analysis still stands.
        warnings.append(RunWarning("prompts", f"{exc}; identity baseline skipped"))
        return None, None
    warnings.extend(RunWarning(*warning) for warning in match.warnings)
    return identity_summary(result.table, match, orientation_cut(props), orientation_partition(props), hbb_dir), match


def analyze(gt: Source, pred: Source, settings: Optional[EvalSettings] = None, *, label_map: LabelMapLike = None,
            image_sizes: ImageSizesLike = None, hbb: Optional[PathLike] = None, baseline: Optional[Source] = None,
            boundary_classes: Sequence[int] = (), worst: int = 0, seed: int = 0, bootstrap: int = 2000,
            tide_fg: float = 0.5, tide_bg: float = 0.1, gt_format: Optional[str] = None,
            pred_format: Optional[str] = None, jobs: int = 1, **setting_values: Any) -> Analysis:
    """Break a run's score down, as ``hbb2obb-analyze`` does (the command calls the same code).

    Parameters
    ----------
    gt, pred : str, Path or mapping of str to Boxes
        As :func:`~hbb2obb.evaluate` takes them.
    settings, label_map, image_sizes, gt_format, pred_format, jobs, **setting_values
        As :func:`~hbb2obb.evaluate` takes them.
    hbb : str or Path, optional
        The HBB prompts (YOLO-HBB folder): the identity baseline (``-hd``); it must be there.
        ``"auto"``: the command's default, ``labels_hbb`` beside the ground-truth folder when
        it exists (prompts found so that cannot be scored are a warning, not an error).
    baseline : str, Path or mapping of str to Boxes, optional
        A second prediction set: the paired difference per cut (``--baseline``).
    boundary_classes : sequence of int
        Classes the side ratios are restricted to (``-bc``).
    worst : int
        List the ``worst`` pairs of lowest IoU and of largest angle error (``--worst``).
    seed, bootstrap : int
        The bootstrap of the baseline comparison (``--seed``, ``--bootstrap``, at least 100).
    tide_fg, tide_bg : float
        Foreground and background IoU of the detection error decomposition (scored predictions).

    Returns
    -------
    Analysis

    Raises
    ------
    hbb2obb.UsageError, hbb2obb.InputError
        As :func:`~hbb2obb.evaluate` (a side that scored nothing included); an ``hbb`` folder
        that is missing or cannot be read.
    """
    from hbb2obb.detection.errors import TideParams

    return analyze_run(gt, pred, settings_of(settings, setting_values), label_map=label_map_of(label_map),
                       sizes=image_sizes_of(image_sizes), detection=DetectionParams(), hbb=hbb, baseline=baseline,
                       boundary_classes=boundary_classes, worst=worst, seed=seed, bootstrap=bootstrap,
                       tide=TideParams(fg=tide_fg, bg=tide_bg), jobs=jobs, formats=(gt_format, pred_format),
                       progress=None)


def convert(image: Union[PathLike, "Image", np.ndarray], hbbs: Union[Boxes, np.ndarray, Sequence[Sequence[float]]],
            params: Union["ImageParams", Mapping[str, Any], None] = None) -> "ImageConversion":
    """Convert horizontal boxes to oriented ones from the image pixels: the built-in converter.

    Parameters
    ----------
    image : str, Path, PIL image or ndarray
        The frame: an image file, or its pixels (``(h, w, 3)`` 8-bit RGB, or grey).
    hbbs : Boxes or array_like, shape (n, 4)
        The horizontal boxes: :class:`~hbb2obb.Boxes` (their axis-aligned extent is used, their
        classes feed the class-level self-check) or ``x1 y1 x2 y2`` rows in pixels.
    params : ImageParams or dict, optional
        The converter's settings: an :class:`~hbb2obb.converters.image.params.ImageParams`, or
        its public parameters by name (``scale_factor``, ``opening_kernel_percentage``, ``imgsz``,
        ``corner_radius``, ``tightness``) as ``hbb2obb --params_from`` takes them; defaults when omitted.

    Returns
    -------
    ImageConversion
        ``corners`` ``(n, 4, 2)`` (a box that cannot be converted is its HBB, ``fallback``
        True, with its ``reasons``) and a ``confidence`` per box.

    Raises
    ------
    hbb2obb.UsageError
        A bad parameter, boxes of the wrong shape.
    hbb2obb.InputError
        An image file that cannot be read.
    """
    from hbb2obb.converters.image.converter import convert_boxes, image_params, read_frame
    from hbb2obb.converters.image.params import ImageParams

    if params is None:
        params = ImageParams()
    elif isinstance(params, Mapping):
        params = image_params(dict(params))
    elif not isinstance(params, ImageParams):
        raise UsageError(f"params must be an ImageParams or a dict of parameters, got {type(params).__name__}")
    class_ids = None
    if isinstance(hbbs, Boxes):
        xyxy = np.concatenate([hbbs.corners.min(axis=1), hbbs.corners.max(axis=1)], axis=1)
        class_ids = hbbs.class_id
    else:
        xyxy = np.asarray(hbbs, dtype=np.float64)
        if xyxy.size == 0:
            xyxy = xyxy.reshape(0, 4)
        if xyxy.ndim != 2 or xyxy.shape[1] != 4:
            raise UsageError(f"hbbs must be Boxes or rows of x1 y1 x2 y2, got shape {xyxy.shape}")
    if not np.isfinite(xyxy).all():
        raise UsageError("hbbs: a coordinate is not a finite number")
    if isinstance(image, (str, Path)) or hasattr(image, "__fspath__"):
        image = read_frame(Path(image))  # type: ignore[arg-type]
    return convert_boxes(image, xyxy, params, class_ids=class_ids)


def sweep(images: Optional[PathLike], gt: PathLike, hbb: PathLike, out_dir: PathLike,
          axes: Mapping[str, Sequence[Any]], *, converter: str = "image", name: Optional[str] = None,
          settings: Optional[EvalSettings] = None, label_map: Optional[PathLike] = None,
          image_size: Optional[tuple[float, float]] = None, jobs: int = 1, resume: bool = False) -> "SweepOutcome":
    """Sweep a converter's parameters over a grid and score every point, as ``hbb2obb-optimize`` does.

    Parameters
    ----------
    images : str or Path, optional
        The frames (the ``image`` converter needs them).
    gt, hbb : str or Path
        The ground-truth OBB folder and the HBB prompt folder.
    out_dir : str or Path
        The sweep writes ``OUT_DIR/NAME/run_config.yaml``, then ``results.yaml``, a record per
        point, after every point.
    axes : mapping of str to sequence
        Parameter name to its values (``{"scale_factor": [0, 0.02], "imgsz": [640]}``); the
        reference axes left out take the converter's defaults.
    converter : str
        ``image`` (built in), ``identity``, or another registered converter.
    name : str, optional
        The run's name, its folder under ``out_dir`` (default: the converter's name).
    settings : EvalSettings, optional
        How every point is scored; by default the command's (``hbb2obb-optimize`` scores a frame
        the converter wrote no file for as empty: ``missing_pred="empty"``).
    label_map : str or Path, optional
        The label map file.
    image_size : (width, height), optional
        One frame size for all frames, where there is no image folder.
    jobs : int
        Processes; the records do not depend on it.
    resume : bool
        Keep the points an earlier sweep of the same grid measured; without it, a folder that
        holds results already is refused (the command measures it afresh).

    Returns
    -------
    SweepOutcome
        ``records`` in grid order, the ``best`` one by mean IoU, counts of measured and reused points.

    Raises
    ------
    hbb2obb.UsageError
        A bad axis or value, results there without ``resume``, results measured with other
        settings with it, a ``PROVENANCE.txt`` in ``out_dir`` that no sweep wrote.
    hbb2obb.InputError
        A missing folder; the run folder locked by another sweep (its ``.sweep.lock`` names
        the process), from Python or ``hbb2obb-optimize``.
    """
    from hbb2obb.api.sweeping import locked, measure, prepare
    from hbb2obb.sweeps.benchmark import RunSpec, plan_run
    from hbb2obb.sweeps.benchmark_record import check_record_is_ours
    from hbb2obb.sweeps.executors import make_executor
    from hbb2obb.sweeps.runner import SweepInputs, SweepOutcome, best_record, measured_records, read_yaml

    # the evaluation mapping the command builds from its flags: the same defaults (missing_pred "empty")
    evaluation: dict[str, Any] = {"map_path": optional_path(label_map)}
    if image_size is not None:
        evaluation.update(img_width=image_size[0], img_height=image_size[1])
    spec = RunSpec(name or converter, converter, axes=dict(axes), evaluation=evaluation)
    plan = plan_run(spec, SweepInputs(optional_path(images), Path(gt), Path(hbb)), Path(out_dir))
    if settings is not None:
        plan = replace(plan, evaluation=replace(plan.evaluation, settings=settings_of(settings, {})))
    check_record_is_ours(Path(out_dir))  # as the command: a PROVENANCE.txt no sweep wrote is refused
    with locked([plan]):  # a second sweep of the folder, from Python or the command, is refused
        results = plan.folder / "results.yaml"
        if results.exists() and not resume:
            raise UsageError(f"{results} exists: pass resume=True to keep its points, or choose another folder")
        pending = prepare([plan], resume=resume, command_line=API_CALL, jobs=jobs)
        if not pending:  # every point measured already: the records as they are, nothing rewritten
            previous = read_yaml(results)
            done = measured_records(plan, previous)
            records = [done[plan.grid.key(point)] for point in plan.grid.points()]
            return SweepOutcome(records, best_record(records), float(previous.get("sweep_seconds") or 0.0), 0,
                                len(records))
        return measure(pending, make_executor(jobs))[0]
