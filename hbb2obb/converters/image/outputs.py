"""What ``hbb2obb`` writes beside the OBBs of a frame: confidences, polygons, normalized coordinates.

The reference tool's conversion offers these outputs, and scripts written for it read them:

* a per-box confidence, as a 10th column of the OBB file (``--save_confidence``) or in a side-car
  folder, one score per line (``--confidence_dir``); the score is the conversion's own, the
  detector's read from a 6th column of the HBB file, or their product (``--confidence_source``);
* the segmentation polygon behind each OBB (``--save_polygon``), one line per OBB line in the
  same order, so line ``i`` of both files is the same object; a box with no mask of its own
  (a fallback, or a box inscribed at its neighbours' axis) is written as its OBB's four corners;
* coordinates normalized to the frame (``--normalize``) at ``--precision`` decimals.

Everything here formats text; the command checks its outputs and writes the files.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Sequence

import numpy as np

from hbb2obb.errors import UsageError
from hbb2obb.io.frame_labels import DEFAULT_PRECISION
from hbb2obb.io.yolo_obb import format_obb_line

CONFIDENCE_SOURCES = ("conversion", "detector", "combined")
DEFAULT_NORMALIZED_PRECISION = 10  # the reference tool's
MAX_PRECISION = 17  # the reference tool's bound; beyond it a float has no digits left to give
ABSOLUTE_DECIMALS = 1  # what the converter has always written in pixels
CONFIDENCE_DECIMALS = 4


def check_precision(precision: Optional[int], normalize: bool) -> int:
    """The decimals of normalized output; a precision that cannot be used is a usage error.

    ``--precision`` sets the decimals of normalized coordinates only (absolute output keeps its
    one decimal), so without ``--normalize`` it is refused rather than ignored. Zero decimals
    would write every normalized coordinate as 0 or 1.

    Examples
    --------
    >>> check_precision(None, True), check_precision(6, True)
    (10, 6)
    """
    if precision is None:
        return DEFAULT_NORMALIZED_PRECISION
    if not normalize:
        raise UsageError("--precision applies to normalized output; add --normalize or drop it")
    if not 1 <= precision <= MAX_PRECISION:
        raise UsageError(f"--precision must be between 1 and {MAX_PRECISION}, got {precision}")
    return precision


def sufficient_precision(size: Sequence[int]) -> int:
    """The decimals a normalized coordinate of a ``(width, height)`` frame needs to be read back
    within half a hundredth of a pixel (the rounding every derived integer format starts from).

    Examples
    --------
    >>> sufficient_precision((3840, 2160)), sufficient_precision((640, 480))
    (6, 5)
    """
    longest = max(size)
    precision = 1
    while 0.5 * 10.0 ** -precision * longest >= 0.5 * 10.0 ** -DEFAULT_PRECISION:
        precision += 1
    return precision


def lossy_precision_warning(precision: int, size: Sequence[int]) -> Optional[str]:
    """The warning for normalized output too coarse to survive the round trip, or ``None``."""
    needed = sufficient_precision(size)
    if precision >= needed:
        return None
    return (f"--precision {precision} does not survive the round trip on a {size[0]}x{size[1]} frame, "
            f"so reading these labels back moves boxes. Use {needed} or more.")


def check_epsilon(epsilon: float) -> float:
    """``--polygon_epsilon``: a fraction of each contour's perimeter, in [0, 1)."""
    if not (math.isfinite(epsilon) and 0 <= epsilon < 1):
        raise UsageError(f"--polygon_epsilon is a fraction of each contour's perimeter: give a number in [0, 1), "
                         f"got {epsilon}")
    return float(epsilon)


@dataclass(frozen=True)
class OutputSettings:
    """How one run formats its labels.

    Attributes
    ----------
    normalize : bool
        Coordinates divided by the frame's width (x) and height (y).
    precision : int
        Decimals of normalized coordinates (absolute ones keep :data:`ABSOLUTE_DECIMALS`).
    save_confidence : bool
        Append the confidence as a 10th column to OBB (and polygon) lines.
    confidence_source : str
        One of :data:`CONFIDENCE_SOURCES`.
    polygon_epsilon : float
        Douglas-Peucker tolerance as a fraction of each contour's perimeter; 0 keeps every vertex.
    """

    normalize: bool = False
    precision: int = DEFAULT_NORMALIZED_PRECISION
    save_confidence: bool = False
    confidence_source: str = "conversion"
    polygon_epsilon: float = 0.0


def detector_scores(label_file) -> tuple[np.ndarray, list[str]]:
    """The 6th column of each read HBB line (``nan`` where it has none or is not in [0, 1]).

    Returns the scores, one per box of ``label_file``, and a ``file:line`` problem for every
    score that is present but unusable.
    """
    from hbb2obb.io.text import ProblemSink, parse_number, split_lines

    boxes = label_file.boxes
    lines = boxes.line.tolist() if boxes.line is not None else []
    wanted = set(lines)
    fields = {number: tokens for number, tokens in split_lines(Path(label_file.path), ProblemSink(label_file.path,
                                                                                                   False))
              if number in wanted}
    scores, problems = np.full(len(lines), np.nan), []
    for row, number in enumerate(lines):
        tokens = fields.get(number, [])
        if len(tokens) < 6:
            continue
        value = parse_number(tokens[5])
        if value is None or not math.isfinite(value) or not 0 <= value <= 1:
            problems.append(f"{label_file.path}:{number}: detector confidence {tokens[5]!r} is not a number in "
                            "[0, 1]; the conversion's score is used for this box")
            continue
        scores[row] = value
    return scores, problems


def resolve_confidences(conversion, detector, source: str) -> tuple[np.ndarray, int]:
    """The confidence to report per box, and how many boxes had no detector score to use.

    ``conversion`` is the converter's score, ``detector`` the HBB file's (``nan`` where a line
    has none, which then reports the conversion score). ``combined`` is their product.

    Examples
    --------
    >>> scores, missing = resolve_confidences([0.9, 0.5], [0.8, float("nan")], "combined")
    >>> [round(s, 2) for s in scores.tolist()], missing
    ([0.72, 0.5], 1)
    """
    conversion = np.asarray(conversion, dtype=np.float64).reshape(-1)
    if source == "conversion":
        return conversion, 0
    if source not in CONFIDENCE_SOURCES:
        raise UsageError(f"--confidence_source must be one of {', '.join(CONFIDENCE_SOURCES)}, got {source!r}")
    detector = np.asarray(detector, dtype=np.float64).reshape(-1)
    if len(detector) != len(conversion):
        raise ValueError(f"one detector score per box: {len(detector)} scores for {len(conversion)} boxes")
    missing = np.isnan(detector)
    chosen = detector if source == "detector" else detector * conversion
    return np.where(missing, conversion, chosen), int(missing.sum())


def mask_polygon(box, epsilon: float = 0.0) -> Optional[np.ndarray]:
    """The outline of the mask a box was fitted to, in image pixels, or ``None`` without one.

    The vertices are the centres of the mask's boundary cells on its working grid (the window the
    box was segmented in, resampled), traced by OpenCV. A mask in several pieces gives the convex
    hull of all of them, as the OBB was fitted to all of them. ``epsilon`` > 0 simplifies the
    outline with a tolerance of that fraction of its perimeter, keeping at least a triangle.
    """
    import cv2

    mask, window = getattr(box, "mask", None), getattr(box, "window", None)
    if mask is None or window is None or not np.any(mask):
        return None
    contours, _ = cv2.findContours(np.ascontiguousarray(mask, dtype=np.uint8), cv2.RETR_EXTERNAL,
                                   cv2.CHAIN_APPROX_SIMPLE)
    points = [c.reshape(-1, 2) for c in contours if len(c)]
    if not points:
        return None
    outline = points[0] if len(points) == 1 else cv2.convexHull(np.vstack(points)).reshape(-1, 2)
    image = np.empty(outline.shape, dtype=np.float64)
    image[:, 0] = window.x0 + (outline[:, 0] + 0.5) / window.sx
    image[:, 1] = window.y0 + (outline[:, 1] + 0.5) / window.sy
    if epsilon > 0 and len(image) > 3:
        curve = image.astype(np.float32).reshape(-1, 1, 2)
        simplified = cv2.approxPolyDP(curve, epsilon * cv2.arcLength(curve, True), True).reshape(-1, 2)
        if len(simplified) >= 3:
            image = simplified.astype(np.float64)
    return image if len(image) >= 3 else None


def polygons(conversion, epsilon: float = 0.0) -> list:
    """One polygon per box of an :class:`ImageConversion` made with ``keep_masks=True``: its mask's
    outline, or its OBB's four corners for a fallback or a box without a mask of its own."""
    shapes = []
    for index, corners in enumerate(conversion.corners):
        polygon = None
        if not conversion.fallback[index] and index < len(conversion.boxes):
            polygon = mask_polygon(conversion.boxes[index], epsilon)
        shapes.append(np.asarray(corners, dtype=np.float64) if polygon is None else polygon)
    return shapes


def _trimmed(value: float, precision: int) -> str:
    text = f"{value:.{precision}f}".rstrip("0").rstrip(".")
    return "0" if text in ("", "-0") else text


def coordinate_text(points, settings: OutputSettings, size: Optional[Sequence[int]]) -> str:
    """``x1 y1 x2 y2 ...`` of an ``(n, 2)`` array: pixels at one decimal, or normalized to ``size``
    at ``settings.precision`` decimals, trailing zeros dropped (as the reference writes them)."""
    points = np.asarray(points, dtype=np.float64).reshape(-1, 2)
    if not settings.normalize:
        return " ".join(f"{v:.{ABSOLUTE_DECIMALS}f}" for v in points.reshape(-1))
    if not size:
        raise ValueError("normalized coordinates need the frame size")
    scaled = points / np.array([size[0], size[1]], dtype=np.float64)
    return " ".join(_trimmed(v, settings.precision) for v in scaled.reshape(-1).tolist())


def label_text(class_ids, shapes, settings: OutputSettings, size=None, confidences=None) -> str:
    """A label file's text: ``class x1 y1 ... [confidence]`` per shape, in order.

    With the defaults (pixels, no confidence) the OBB lines are byte for byte what the converter
    has always written.
    """
    lines = []
    for row, (class_id, shape) in enumerate(zip(np.asarray(class_ids).tolist(), shapes)):
        if settings.normalize:
            line = f"{int(class_id)} {coordinate_text(shape, settings, size)}"
        else:
            line = format_obb_line(class_id, np.asarray(shape, dtype=np.float64), ABSOLUTE_DECIMALS)
        if confidences is not None:
            line += f" {float(confidences[row]):.{CONFIDENCE_DECIMALS}f}"
        lines.append(line + "\n")
    return "".join(lines)


def confidence_text(confidences) -> str:
    """The side-car's text: one score per line, row-aligned with the OBB file."""
    return "".join(f"{float(s):.{CONFIDENCE_DECIMALS}f}\n" for s in np.asarray(confidences).reshape(-1))


@dataclass
class FrameTexts:
    """The texts of one frame's files and what was noticed making them.

    ``confidences`` are the reported scores (``None`` when nothing asked for them);
    ``missing_scores`` counts boxes whose HBB line had no detector score to report.
    """

    obb: str
    polygon: Optional[str] = None
    confidence: Optional[str] = None
    confidences: Optional[np.ndarray] = None
    missing_scores: int = 0
    problems: list = field(default_factory=list)


def frame_texts(frame, settings: OutputSettings, *, polygons_wanted: bool = False,
                confidences_wanted: bool = False, side_car: bool = False) -> FrameTexts:
    """Format one converted frame (a :class:`~hbb2obb.converters.image.converter.FrameConversion`).

    ``confidences_wanted``: resolve the scores (for the 10th column, the side-car or the picture);
    ``side_car``: also the side-car's text; ``polygons_wanted``: the polygon file's text (the
    frame must have been converted with ``keep_masks=True``).
    """
    conversion = frame.conversion
    class_ids = frame.label_file.boxes.class_id
    size = frame.image.size if settings.normalize else None
    texts = FrameTexts(obb="")
    if confidences_wanted or settings.save_confidence or side_car:
        detector, problems = (detector_scores(frame.label_file) if settings.confidence_source != "conversion"
                              else (np.full(len(conversion.confidence), np.nan), []))
        texts.confidences, texts.missing_scores = resolve_confidences(conversion.confidence, detector,
                                                                      settings.confidence_source)
        texts.problems = problems
    in_line = texts.confidences if settings.save_confidence else None
    texts.obb = label_text(class_ids, list(conversion.corners), settings, size, in_line)
    if polygons_wanted:
        texts.polygon = label_text(class_ids, polygons(conversion, settings.polygon_epsilon), settings, size, in_line)
    if side_car:
        texts.confidence = confidence_text(texts.confidences)
    return texts
