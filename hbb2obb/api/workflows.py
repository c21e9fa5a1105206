"""The other commands as functions: :func:`analyze` (``hbb2obb-analyze``), :func:`convert` (the
built-in converter of ``hbb2obb``) and :func:`sweep` (``hbb2obb-optimize``).

Each calls the core functions its command calls, with the settings objects the command builds
(:class:`~hbb2obb.scoring.evaluate.EvalSettings`, :class:`~hbb2obb.converters.image.params.ImageParams`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional, Union

import numpy as np

from hbb2obb.api.evaluation import Evaluation, RunWarning, Source, evaluate
from hbb2obb.api.inputs import ImageSizesLike, LabelMapLike, PathLike, label_map_of, optional_path
from hbb2obb.boxes import Boxes
from hbb2obb.detection.evaluate import DetectionParams
from hbb2obb.errors import InputError, UsageError
from hbb2obb.scoring.evaluate import EvalSettings

if TYPE_CHECKING:  # named in hints only: each is imported by the function that uses it
    from PIL.Image import Image

    from hbb2obb.converters.image.converter import ImageConversion
    from hbb2obb.converters.image.params import ImageParams
    from hbb2obb.sweeps.runner import SweepOutcome


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
        The run's warnings and the analysis's own.
    """

    data: dict[str, Any]
    evaluation: Evaluation
    warnings: list[RunWarning]


def analyze(gt: Source, pred: Source, settings: Optional[EvalSettings] = None, *, label_map: LabelMapLike = None,
            image_sizes: ImageSizesLike = None, hbb: Optional[PathLike] = None, baseline: Optional[Source] = None,
            boundary_classes: Sequence[int] = (), worst: int = 0, seed: int = 0, bootstrap: int = 2000,
            tide_fg: float = 0.5, tide_bg: float = 0.1, **setting_values: Any) -> Analysis:
    """Break a run's score down, as ``hbb2obb-analyze`` does.

    Parameters
    ----------
    gt, pred : str, Path or mapping of str to Boxes
        As :func:`~hbb2obb.evaluate` takes them.
    settings, label_map, image_sizes, **setting_values
        As :func:`~hbb2obb.evaluate` takes them.
    hbb : str or Path, optional
        The HBB prompts (YOLO-HBB folder): the identity baseline (``-hd``).
    baseline : str, Path or mapping of str to Boxes, optional
        A second prediction set: the paired difference per cut (``--baseline``).
    boundary_classes : sequence of int
        Classes the side ratios are restricted to (``-bc``).
    worst : int
        List the ``worst`` pairs of lowest IoU and of largest angle error (``--worst``).
    seed, bootstrap : int
        The bootstrap of the baseline comparison (``--seed``, ``--bootstrap``).
    tide_fg, tide_bg : float
        Foreground and background IoU of the detection error decomposition (scored predictions).

    Returns
    -------
    Analysis

    Raises
    ------
    hbb2obb.UsageError, hbb2obb.InputError
        As :func:`~hbb2obb.evaluate`; a missing ``hbb`` folder.
    """
    from hbb2obb.analysis.compare import compare_cuts
    from hbb2obb.analysis.cuts import analyze as analyze_cuts
    from hbb2obb.analysis.cuts import ground_truth_properties, orientation_cut, orientation_partition, standard_cuts
    from hbb2obb.analysis.detection_errors import compare_detectors, decompose_run, detection_errors
    from hbb2obb.analysis.identity_baseline import identity_summary, match_identity_baseline
    from hbb2obb.detection.errors import TideParams

    if worst < 0:
        raise UsageError(f"worst must not be negative, got {worst}")
    names = label_map_of(label_map)
    tide = TideParams(fg=tide_fg, bg=tide_bg)
    run = evaluate(gt, pred, settings, detection=DetectionParams(), label_map=names, image_sizes=image_sizes,
                   **setting_values)
    result = run.result
    warnings = run.warnings
    edge = result.settings.edge_tolerance
    props = ground_truth_properties(result.table, run._flags[0], edge)
    identity = None
    if hbb is not None:
        hbb_dir = Path(hbb)
        if not hbb_dir.is_dir():
            raise InputError(f"{hbb_dir}: HBB prompt folder not found")
        match = match_identity_baseline(result.table, hbb_dir, result.settings)
        warnings += [RunWarning(*warning) for warning in match.warnings]
        identity = identity_summary(result.table, match, orientation_cut(props), orientation_partition(props), hbb_dir)
    scored = result.table.pred.score is not None and len(result.table.pred) > 0
    decomposed = decompose_run(result, props, tide, edge) if scored else None
    comparison, detectors = None, None
    if baseline is not None:
        other = evaluate(gt, baseline, result.settings, detection=DetectionParams(), label_map=names,
                         image_sizes=image_sizes)
        warnings += [RunWarning(kind, f"baseline: {message}") for kind, message in other.warnings]
        comparison = compare_cuts(result.table, other.result.table, standard_cuts(props, names), seed=seed,
                                  n_boot=bootstrap)
        other_props = ground_truth_properties(other.result.table, other._flags[0], edge)
        if decomposed is not None and other.result.table.pred.score is not None and len(other.result.table.pred):
            detectors = compare_detectors(decomposed, decompose_run(other.result, other_props, tide, edge), names,
                                          seed=seed, n_boot=bootstrap)
    data = analyze_cuts(result, props, names, identity=identity, comparison=comparison,
                        boundary_classes=tuple(boundary_classes), worst=worst)
    if decomposed is not None:
        data["detection_errors"] = detection_errors(decomposed, names, detectors)
    return Analysis(data, run, warnings)


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
        The sweep writes ``OUT_DIR/NAME/results.yaml``, a record per point, after every point.
    axes : mapping of str to sequence
        Parameter name to its values (``{"scale_factor": [0, 0.02], "imgsz": [640]}``); the
        reference axes left out take the converter's defaults.
    converter : str
        ``image`` (built in), ``identity``, or another registered converter.
    name : str, optional
        The run's name, its folder under ``out_dir`` (default: the converter's name).
    settings : EvalSettings, optional
        How every point is scored (defaults: the command's).
    label_map : str or Path, optional
        The label map file.
    image_size : (width, height), optional
        One frame size for all frames, where there is no image folder.
    jobs : int
        Processes; the records do not depend on it.
    resume : bool
        Keep the points an earlier sweep of the same grid measured; without it, a folder that
        holds results already is refused.

    Returns
    -------
    SweepOutcome
        ``records`` in grid order, the ``best`` one by mean IoU, counts of measured and reused points.
    """
    from hbb2obb.sweeps.benchmark import RunSpec, plan_run
    from hbb2obb.sweeps.executors import make_executor
    from hbb2obb.sweeps.runner import EvalSpec, SweepInputs, check_resumable, read_yaml, run_sweep

    size = {} if image_size is None else {"img_width": image_size[0], "img_height": image_size[1]}
    spec = RunSpec(name or converter, converter, axes=dict(axes), evaluation=size)
    plan = plan_run(spec, SweepInputs(optional_path(images), Path(gt), Path(hbb)), Path(out_dir))
    plan = replace(plan, evaluation=EvalSpec(settings or EvalSettings(), size.get("img_width"), size.get("img_height"),
                                             optional_path(label_map)))
    results = plan.folder / "results.yaml"
    previous = None
    if results.exists():
        if not resume:
            raise UsageError(f"{results} exists: pass resume=True to keep its points, or choose another folder")
        previous = read_yaml(results)
        check_resumable(plan, previous)
    plan.folder.mkdir(parents=True, exist_ok=True)
    return run_sweep(plan, make_executor(jobs), previous)
