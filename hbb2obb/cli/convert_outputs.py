"""The output options of ``hbb2obb`` that the reference tool's conversion has, and its provenance record.

Flags, file names and record keys are the reference's (``hbb2obb`` 1.12.0), so scripts written for
it keep working: ``--save_confidence``, ``--confidence_source/-cs``, ``--save_polygon``,
``--polygon_dir/-pd``, ``--polygon_epsilon/-pe``, ``--normalize/-n``, ``--precision/-p``,
``--save_provenance``, the drawing switches ``--show_*``/``--hide_*``, ``--fallback_warn_share/-fw``
and ``--fail_on_fallback_share/-ff``. A flag that would change nothing (a drawing switch without
``--save_img``, ``--polygon_dir`` without ``--save_polygon``) is refused rather than ignored.
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import click

from hbb2obb.converters.image.outputs import (
    CONFIDENCE_SOURCES,
    OutputSettings,
    check_epsilon,
    check_precision,
)
from hbb2obb.errors import UsageError

#: Shown at the end of ``hbb2obb --help`` (``\b`` keeps click from re-wrapping the lines).
EPILOG = """\b
The hbb2obb toolkit has six commands:
  hbb2obb           convert HBB prompts to OBBs from the image pixels (this command)
  hbb2obb-eval      score predicted OBBs against ground truth (IoU, angle error, AP)
  hbb2obb-analyze   break that score down by orientation, size, edge and class
  hbb2obb-optimize  sweep a converter's parameters over a grid, or benchmark sweeps
  hbb2obb-convert   convert labels between YOLO, DOTA, Pascal VOC, COCO and LabelMe
  hbb2obb-view      write a review page of frames, boxes and their errors for a browser
Run any of them with --help for its own options, e.g. hbb2obb-eval --help."""

#: The drawing switches: (parameter, on flag(s), off flag(s), default, what it draws).
DRAWING_SWITCHES = (
    ("show_hbb", ["--show_hbb"], ["--hide_hbb"], True, "the HBB prompts"),
    ("show_masks", ["--show_masks"], ["--hide_masks"], True, "the segmentation masks"),
    ("show_segments", ["--show_segments"], ["--hide_segments"], True, "the masks' (convex) contours"),
    ("show_obb", ["--show_obb"], ["--hide_obb"], True, "the OBBs"),
    ("show_labels", ["--show_class_labels", "--show_labels"], ["--hide_class_labels", "--hide_labels"], True,
     "the class names ('--show_labels'/'--hide_labels' are the reference's older spellings)"),
    ("show_confidence", ["--show_confidence"], ["--hide_confidence"], False,
     "each box's confidence, independently of the class names"),
)


def output_options(function):
    """Add the output options to the ``hbb2obb`` command (its ``main`` takes them as keywords)."""
    options = [
        click.option("--save_confidence", is_flag=True,
                     help="Append each box's confidence as a 10th column to the OBB (and polygon) lines. "
                          "YOLO-OBB readers such as Ultralytics reject a 10th column: --confidence_dir keeps "
                          "the label files standard."),
        click.option("-cs", "--confidence_source", type=click.Choice(CONFIDENCE_SOURCES), default="conversion",
                     show_default=True,
                     help="The score reported: the conversion's own, the detector's (a 6th column of the HBB "
                          "file; a line without one reports the conversion's), or their product (combined)."),
        click.option("--save_polygon", is_flag=True,
                     help="Also write the segmentation polygon behind each OBB, one line per OBB line in the "
                          "same order (a box without a mask of its own: its OBB's four corners)."),
        click.option("-pd", "--polygon_dir", type=click.Path(path_type=Path),
                     help="Folder of the polygons (default: IMG_SOURCE/../labels_polygon)."),
        click.option("-pe", "--polygon_epsilon", type=float, default=0.0, show_default=True,
                     help="Simplify each polygon with a tolerance of this fraction of its perimeter; 0 keeps "
                          "every vertex."),
        click.option("-n", "--normalize", is_flag=True,
                     help="Write coordinates relative to the frame, in [0, 1] (what Ultralytics reads)."),
        click.option("-p", "--precision", type=int,
                     help="Decimals of normalized coordinates [default: 10]; absolute output keeps one."),
        click.option("--save_provenance", is_flag=True,
                     help="Write PROVENANCE_obb.txt beside the OBB folder (in its parent): the command that "
                          "reproduces the labels, the settings, digests of the code and the inputs, the boxes "
                          "and how many fell back to their HBB."),
        click.option("-fw", "--fallback_warn_share", type=float, default=0.5, show_default=True, metavar="SHARE",
                     help="Warn when more than this share of a frame's boxes fall back to their HBB "
                          "(0: any fallback; 1: never)."),
        click.option("-ff", "--fail_on_fallback_share", type=float, metavar="SHARE",
                     help="Exit with status 1 when more than this share of the run's boxes fall back to their "
                          "HBB; every file is written first."),
    ]
    for name, on, off, default, what in DRAWING_SWITCHES:
        declarations = [f"{a}/{b}" for a, b in zip(on, off)]
        options.append(click.option(*declarations, name, default=default, show_default=True,
                                    help=f"--save_img: draw (or hide) {what}."))
    for option in reversed(options):
        function = option(function)
    return function


@dataclass(frozen=True)
class RequestedOutputs:
    """The checked output options of one run."""

    settings: OutputSettings
    polygon_dir: Optional[Path]
    save_provenance: bool
    drawing: dict
    fallback_warn_share: float
    fail_on_fallback_share: Optional[float]

    @property
    def confidences_shown(self) -> bool:
        return bool(self.drawing.get("show_confidence"))


def _given(name: str) -> bool:
    """Whether the option was typed on the command line (not a default)."""
    context = click.get_current_context(silent=True)
    if context is None:
        return False
    return context.get_parameter_source(name) is click.core.ParameterSource.COMMANDLINE


def requested_outputs(options: dict, *, save_img: bool, confidence_dir_given: bool,
                      default_polygon_dir: Path) -> RequestedOutputs:
    """Check the output options together; a flag that would change nothing is a usage error.

    ``options`` are the keywords :func:`output_options` added to the command.
    """
    for name in ("fallback_warn_share", "fail_on_fallback_share"):
        share = options[name]
        if share is not None and not 0.0 <= share <= 1.0:  # NaN included
            raise UsageError(f"--{name} is a share of the boxes, so it must be between 0 and 1, got {share}")
    normalize = options["normalize"]
    precision = check_precision(options["precision"], normalize)
    epsilon = check_epsilon(options["polygon_epsilon"])
    if not options["save_polygon"]:
        for name in ("polygon_dir", "polygon_epsilon"):
            if options[name] is not None and _given(name):
                raise UsageError(f"--{name} shapes the polygons of --save_polygon: add --save_polygon or drop it")
    drawing = {name: options[name] for name, *_ in DRAWING_SWITCHES}
    if not save_img:
        typed = [f"{on[0]}/{off[0]}" for name, on, off, *_ in DRAWING_SWITCHES if _given(name)]
        if typed:
            raise UsageError(f"{typed[0]} changes the --save_img pictures: add --save_img or drop it")
    source = options["confidence_source"]
    shown = save_img and drawing["show_confidence"]
    if source != "conversion" and not (options["save_confidence"] or confidence_dir_given or shown):
        raise UsageError(f"--confidence_source {source} changes only the confidences written or drawn: add "
                         "--save_confidence, --confidence_dir or --save_img --show_confidence, or drop it")
    settings = OutputSettings(normalize=normalize, precision=precision, save_confidence=options["save_confidence"],
                              confidence_source=source, polygon_epsilon=epsilon)
    polygon_dir = (options["polygon_dir"] or default_polygon_dir) if options["save_polygon"] else None
    return RequestedOutputs(settings, polygon_dir, options["save_provenance"], drawing,
                            options["fallback_warn_share"], options["fail_on_fallback_share"])


def record_path(obb_dir: Path) -> Path:
    """Where the conversion's record goes: beside the OBB folder (in its parent), never inside it,
    so a ``labels/*.txt`` glob does not read it as a frame."""
    from hbb2obb.io.provenance import CONVERSION_RECORD

    return Path(os.path.abspath(obb_dir)).parent / CONVERSION_RECORD


def reproducing_command(img_source: Path, hbb_dir: Path, obb_dir: Path, params: dict, outputs: RequestedOutputs,
                        confidence_dir: Optional[Path]) -> str:
    """The command that writes the same labels: every setting spelled out (a ``--params_from``
    file's values included), the reporting and drawing flags left out (they change no label)."""
    scale = params["scale_factor"]
    scale = scale if isinstance(scale, (list, tuple)) else [scale]
    command = ["hbb2obb", str(img_source), "--hbb_dir", str(hbb_dir), "--obb_dir", str(obb_dir),
               "--scale_factors", *[str(s) for s in scale],
               "--opening_kernel_percentage", str(params["opening_kernel_percentage"]),
               "--imgsz", str(params["imgsz"]), "--corner_radius", str(params["corner_radius"]),
               "--tightness", str(params["tightness"]), "--margin", str(params["margin"])]
    settings = outputs.settings
    if settings.confidence_source != "conversion":
        command += ["--confidence_source", settings.confidence_source]
    if settings.save_confidence:
        command.append("--save_confidence")
    if confidence_dir is not None:
        command += ["--confidence_dir", str(confidence_dir)]
    if outputs.polygon_dir is not None:
        command += ["--save_polygon", "--polygon_dir", str(outputs.polygon_dir)]
        if settings.polygon_epsilon:
            command += ["--polygon_epsilon", str(settings.polygon_epsilon)]
    if settings.normalize:
        command += ["--normalize", "--precision", str(settings.precision)]
    return shlex.join(command)


def _placement(save_confidence: bool, confidence_dir: Optional[Path]) -> str:
    places = (["10th column"] if save_confidence else []) + ([f"side-car {confidence_dir}"] if confidence_dir else [])
    return " and ".join(places) if places else "not written"


@dataclass
class RunTotals:
    """What a run did, for its summary and its record."""

    frames: list
    hbb_files: list
    written: list
    boxes: int = 0
    fallbacks: int = 0
    reasons: Optional[dict] = None
    readings: Optional[dict] = None
    skipped: Optional[list] = None


def write_conversion_record(path: Path, command: str, img_source: Path, hbb_dir: Path, obb_dir: Path, params: dict,
                            outputs: RequestedOutputs, confidence_dir: Optional[Path], params_from: Optional[Path],
                            totals: RunTotals) -> Path:
    """Write ``PROVENANCE_obb.txt`` (:mod:`hbb2obb.io.provenance`); keys as the reference's record."""
    from hbb2obb.io.provenance import section, sha256_of_files, write_record

    settings = outputs.settings
    scale = params["scale_factor"]
    scale = " ".join(str(s) for s in (scale if isinstance(scale, (list, tuple)) else [scale]))
    readings = ", ".join(f"{name}: {count} frame(s)" for name, count in sorted((totals.readings or {}).items()))
    coordinates = (f"normalized to [0, 1], {settings.precision} decimals" if settings.normalize
                   else "absolute pixels, 1 decimal")
    polygons = "not written"
    if outputs.polygon_dir is not None:
        polygons = f"{outputs.polygon_dir} (simplified: {settings.polygon_epsilon} of the perimeter)" \
            if settings.polygon_epsilon else f"{outputs.polygon_dir}"
    lines = [
        "Converter                : built-in image converter (pixels only, no model)",
        f"Scale factor(s)          : {scale}",
        f"Opening kernel           : {params['opening_kernel_percentage']}",
        f"Window size (imgsz)      : {params['imgsz']}",
        f"Corner radius            : {params['corner_radius']}",
        f"Tightness                : {params['tightness']}" + (f" (read as {readings})" if readings else ""),
        f"Margin                   : {params['margin']}",
        f"Confidence source        : {settings.confidence_source}",
        f"Confidence written       : {_placement(settings.save_confidence, confidence_dir)}",
        f"Polygons written         : {polygons}",
        f"Coordinates              : {coordinates}",
        f"Working directory        : {os.getcwd()}",
    ]
    if params_from is not None:
        lines.append(f"Parameters from          : {params_from}")
    share = totals.fallbacks / totals.boxes if totals.boxes else 0.0
    io = [
        f"images         : {img_source}",
        f"image count    : {len(totals.frames)} converted",
        f"images sha256  : {sha256_of_files(totals.frames)}",
        f"HBB labels     : {hbb_dir}",
        f"HBB sha256     : {sha256_of_files(totals.hbb_files)}",
        f"OBB labels     : {obb_dir}",
        f"OBB count      : {len(totals.written)} .txt files",
        f"OBB boxes      : {totals.boxes}",
        f"HBB fallbacks  : {totals.fallbacks} ({share:.2%})",
    ]
    io += [f"    {count}: {reason}" for reason, count in sorted((totals.reasons or {}).items())]
    for count, what in totals.skipped or []:
        if count:
            io.append(f"skipped        : {count} {what}")
    return write_record(path, "hbb2obb conversion provenance", command,
                        [section("Conversion settings", lines), section("Inputs and outputs", io)])
