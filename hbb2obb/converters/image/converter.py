"""The ``image`` converter: HBB prompts to OBBs from the image pixels alone (numpy + Pillow).

No model and no download. Per box (:mod:`hbb2obb.converters.image.box`), in a window around the
scaled HBB resampled so that its long side is ``imgsz`` pixels:

1. **Orientation hint** from image gradients: the gradient directions of an object's outline
   (and of its shadow and the lane marks beside it) cluster on two perpendicular axes, so the
   doubled-doubled angle average ``arg sum |g| exp(4i phi)`` gives the axis modulo 90 degrees.
   The long axis is the one nearer the HBB's long side. In a near-square HBB the colour
   structure tensor's edge direction (modulo 180 degrees) picks the diagonal when it is clear
   (boats moored side by side: their long sides and the gaps between them are the longest
   edges); otherwise both are kept.
2. **Segmentation**: colour clusters (k-means) of the window; a soft rectangle prior from the
   hint and the HBB; GrabCut-style rounds that re-estimate how often each cluster is object or
   background, with mean-field smoothing between neighbours. The ring outside the scaled box
   is background by construction, so road, shadow and lane-mark colours are learnt there.
3. **Mask**: the component that best fills the box (and parts lying mostly inside it, e.g. a
   body split by dark windows), then a morphological opening (``opening_kernel_percentage`` of
   the mask's smaller side; negative: closing).
4. **Rectangle**: the mask's minimum-area rectangle (rotating calipers on its convex hull)
   refines the angle when it agrees with the hint (a loose box's angle then moves half way to
   the mask's principal axis when the two agree: every pixel votes there); the four sides are
   then a least-squares compromise between the mask's extents and the HBB. How the HBB is read is the
   ``tightness``: *tight*, the bounding box of the object's rectangle (nearly a constraint;
   less so once shrunk by a margin, whose one value for the frame is off for each box);
   *loose*, the bounding box of a vehicle with rounded corners (``corner_radius`` times its
   breadth), which is why hand-drawn HBBs sit inside the corners of a diagonal vehicle's
   rectangle.
5. **Self-check**: the fitted box is compared with the HBB by how well each follows the
   image's edges and how much its colour stands out from the band around it; when the HBB
   wins both, the HBB is kept. So it is when a box a few pixels across is faint on both counts
   and its fit holds its own mask poorly (an unlit motorcycle at night, whose mask is its lamp).
6. **Confidence** in [0, 1] per box, to rank the boxes to check by hand (not a probability):
   how well the rectangle agrees with the box's own mask, the share of the mask it holds (loose
   HBBs) or the mean of that share and the IoU of mask and rectangle (tight HBBs, whose
   rectangle is nearly fixed by the HBB, so that a rectangle holding more than the object also
   counts; a box narrowed to its side-by-side neighbours, whose mask no longer judges it, 1:
   ``narrowed_confidence``). A tight fit averages that with how closely the rectangle's bounds
   keep to the HBB's sides (:func:`~hbb2obb.converters.image.box.bounds_share`), or, in a box
   shrunk by a margin, whose fit follows its mask more closely, with its colour contrast with its
   surroundings as a share (:func:`~hbb2obb.converters.image.box.contrast_share`). A fallback
   scores 0; a box without a mask of its own (inscribed at its rows' axis) scores its edge
   support against the HBB's, capped at 1. Measured in docs/converter.md (Confidence).

Per frame (:mod:`hbb2obb.converters.image.scene`): ``auto`` tightness is read from the HBBs;
boxes whose own pixels left the diagonal open take their neighbours' orientation; a class
whose fitted boxes as a whole follow the edges less than their HBBs keeps its HBBs; and in a
tight frame a box whose own fit was refused, standing among converted boxes whose axes agree
(modulo 90 degrees: an apron, a parking lot), gets the rectangle inscribed in its HBB at their
axis (a helicopter, whose rotor blades point every way, beside its apron's planes); and a box
near 45 degrees, whose tight HBB fixes its length plus breadth but not their split, is no
broader than the distance to its side-by-side neighbours (buses parked or boats moored in a row,
whose look-alike masks swell across the gaps). In a loose frame, vehicles of one class share a
breadth far more closely than their masks say, so each box fitted to its own mask is refitted at
its breadth pooled with its class's (the class median, its own weighing at most half, and less
the nearer it lies to 45 degrees, where a loose HBB gives little more than length plus breadth),
and the refit is judged as the fit was. Then each side of a loose box at least 25 px across that
stops where a bright body ends moves out to the dark band just beyond it, the lower panels and
tyres an oblique view shows, which colour clusters give to the background
(:mod:`hbb2obb.converters.image.sides`), judged the same way.

A box written as its HBB is counted as a fallback, with its reason. Every setting, from the
public parameters to the tuned numbers, is a field of
:class:`~hbb2obb.converters.image.params.ImageParams`; the alternatives that were measured and
the numbers are there, in docs/converter.md and in CHANGELOG.md's converter history.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Optional

import numpy as np

from hbb2obb.converters.base import ConversionReport, Converter, register
from hbb2obb.converters.identity import scale_factor_pair
from hbb2obb.converters.image.box import (
    REASON_CLASS_LESS_SUPPORTED,
    REASON_LESS_SUPPORTED,
    REASON_OVERSHOOTS,
    REASON_SLIVER,
    REASON_WEAK,
    BoxResult,
    bounds_share,
    contrast_share,
    fit_box,
    hbb_corners,
    inscribed_box,
    is_weak,
    narrowed_box,
    refit_at_breadth,
    segment_box,
)
from hbb2obb.converters.image.params import DEFAULT_PARAMETERS, TIGHTNESS, ImageParams
from hbb2obb.converters.image.reading import read_prompts, shrink_boxes
from hbb2obb.converters.image.scene import (
    breadth_agreements,
    classes_less_supported,
    estimate_tightness,
    hbb_overshoot,
    is_sliver,
    neighbour_axes,
    pooled_breadths,
    row_axes,
    side_by_side_breadths,
)
from hbb2obb.converters.image.sides import banded_result
from hbb2obb.errors import InputError, UsageError

LABEL_SUFFIX = ".txt"


@dataclass
class ImageConversion:
    """The OBBs of one frame and, when asked for, the masks and hulls behind them.

    Attributes
    ----------
    corners : ndarray, shape (n, 4, 2)
        One OBB per input HBB, in image pixels; a fallback is the HBB itself.
    fallback : ndarray of bool, shape (n,)
    confidence : ndarray, shape (n,)
        Per box in [0, 1]: how well the OBB agrees with the box's own mask (0 for a fallback;
        see the module docstring); the boxes to check by hand are the low ones.
    reasons : list of str
        Per box, why it is a fallback ("" for a converted box).
    tightness : str
        ``"tight"`` or ``"loose"``: the model the rectangles were fitted with.
    boxes : list of BoxResult
        Per box window, mask and hull (only with ``keep_masks=True``; else empty).
    margin : float
        The margin the HBBs were shrunk by before the fit (a share of the object's size per side;
        0.0: none); a fallback is then the shrunk box.
    """

    corners: np.ndarray
    fallback: np.ndarray
    boxes: list = field(default_factory=list)
    confidence: np.ndarray = field(default_factory=lambda: np.zeros(0))
    reasons: list = field(default_factory=list)
    tightness: str = "loose"
    margin: float = 0.0

    @property
    def reading(self) -> str:
        """How the frame's HBBs were read, as the summary prints it: ``"tight"``, ``"loose"`` or,
        for prompts with a margin, e.g. ``"tight with a 6% margin"``.

        Examples
        --------
        >>> ImageConversion(np.zeros((0, 4, 2)), np.zeros(0, bool), tightness="tight", margin=0.06).reading
        'tight with a 6% margin'
        """
        if self.margin > 0:
            return f"{self.tightness} with a {100 * self.margin:.0f}% margin"
        return self.tightness


def convert_box(image, xyxy, params: ImageParams, *, keep_masks: bool = False) -> BoxResult:
    """Convert one HBB ``x1 y1 x2 y2`` (image pixels) on its own (no neighbours, no tightness
    estimate: ``params.tightness`` must be ``"tight"`` or ``"loose"``); see the module docstring.

    Returns
    -------
    BoxResult
        ``corners`` ``(4, 2)`` in image pixels, or ``None`` (with the ``reason``) for a fallback.
    """
    if params.tightness not in ("tight", "loose"):
        raise UsageError(f"convert_box needs tightness 'tight' or 'loose', got {params.tightness!r}")
    return fit_box(segment_box(image, xyxy, params), params, keep_masks=keep_masks)


def convert_boxes(image, xyxy, params: ImageParams = ImageParams(), *, class_ids=None,
                  keep_masks: bool = False) -> ImageConversion:
    """Convert every HBB of one frame; a box without a usable, well-supported OBB comes out as itself.

    Parameters
    ----------
    image : PIL.Image.Image or ndarray
        The frame (converted to RGB).
    xyxy : array_like, shape (n, 4)
        HBBs as ``x1 y1 x2 y2`` in image pixels.
    params : ImageParams
        The converter's parameters (see :class:`ImageConverter`), switches and tuned numbers;
        ``"auto"`` tightness is read from this frame's boxes (tight when every side lies on a
        whole pixel) or else from its pixels, with an ``"auto"`` margin
        (:func:`~hbb2obb.converters.image.reading.read_prompts`): HBBs with a margin, read or
        given, are shrunk by it and fitted as tight (or as a given ``tightness`` says). Its switches: ``scene`` lets
        neighbours' orientations decide where a box's own pixels leave the diagonal open, and
        (loose frames, ``pool_breadths``) refits each box at its breadth pooled with its class's
        (:func:`~hbb2obb.converters.image.scene.pooled_breadths`); ``check`` turns on the
        self-checks (per box: a fitted box less supported by the image than its HBB falls back,
        and so does a loose box whose rounded rectangle would reach out of its HBB by more than
        ``max_overshoot``, a tight box fitted as a sliver across a thin HBB
        (:func:`~hbb2obb.converters.image.scene.is_sliver`) and a fit with too little evidence
        behind it (:func:`~hbb2obb.converters.image.box.is_weak`); per class: a class whose fitted
        boxes follow the edges less than their HBBs keeps its HBBs, over at least
        ``min_class_boxes`` boxes).
    class_ids : array_like of int, shape (n,), optional
        The boxes' classes, for the class-level self-check (``None``: one class).
    keep_masks : bool
        Also return every box's window, mask and hull (for visualizations).

    Returns
    -------
    ImageConversion

    Examples
    --------
    >>> from PIL import Image, ImageDraw
    >>> frame = Image.new("RGB", (120, 80), (90, 90, 90))
    >>> ImageDraw.Draw(frame).polygon([(30, 50), (60, 20), (75, 35), (45, 65)], fill=(230, 230, 230))
    >>> result = convert_boxes(frame, [[30, 20, 75, 65]])
    >>> bool(result.fallback[0]), result.corners.shape, bool(0 < result.confidence[0] <= 1)
    (False, (1, 4, 2), True)
    """
    from PIL import Image

    if params.tightness not in TIGHTNESS:
        raise UsageError(f"tightness must be one of {', '.join(TIGHTNESS)}, got {params.tightness!r}")
    if isinstance(image, np.ndarray):
        image = Image.fromarray(np.asarray(image, dtype=np.uint8))
    if image.mode != "RGB":  # converting an RGB image would copy the whole frame
        image = image.convert("RGB")
    xyxy = np.asarray(xyxy, dtype=np.float64).reshape(-1, 4)
    margin = 0.0 if params.margin == "auto" else float(params.margin)
    if params.tightness == "auto":
        tightness = "tight" if margin > 0 else estimate_tightness(xyxy, params)
        if tightness == "loose":  # not boxed from polygons on whole pixels: the pixels decide
            reading = read_prompts(image, xyxy, params)
            tightness = reading.tightness
            if params.margin == "auto":
                margin = reading.margin
        params = replace(params, tightness=tightness)
    if margin > 0:  # what the boxes hold: the objects' bounds, as tight HBBs give them
        xyxy = shrink_boxes(xyxy, margin)
        # a looser constraint than a tight HBB: the frame's one margin is off for each box by its own
        weight = params.margin_hbb_weight if params.margin == "auto" else params.given_margin_hbb_weight
        params = replace(params, tight_hbb_weight=weight)
    tight = params.tight
    classes = np.zeros(len(xyxy), dtype=np.int64) if class_ids is None else np.asarray(class_ids).reshape(-1)
    segmentations = [segment_box(image, box, params) for box in xyxy]
    preferred = neighbour_axes(segmentations, params) if params.scene else [None] * len(segmentations)
    results = [fit_box(segmentation, params, prefer_axis=prefer, keep_masks=keep_masks)
               for segmentation, prefer in zip(segmentations, preferred)]
    if params.check:
        for index in np.flatnonzero(classes_less_supported(results, classes, params)):
            results[index] = results[index].fallen_back(REASON_CLASS_LESS_SUPPORTED)
    if params.scene and not tight and params.pool_breadths:
        agreements = breadth_agreements(results, classes, params)  # of the fits before the pooling
        for index, breadth in enumerate(pooled_breadths(results, classes, params)):
            if breadth is not None:
                refitted = refit_at_breadth(segmentations[index], results[index], breadth, params,
                                            keep_masks=keep_masks)
                if refitted is not None:
                    results[index] = refitted
            if results[index].corners is not None:  # how far the pool had to move its breadth
                results[index].confidence *= float(agreements[index])
    if not tight and params.extend_to_bands:
        results = [banded_result(image, segmentation, result, params, keep_masks=keep_masks)
                   for segmentation, result in zip(segmentations, results)]
    if not tight and params.check:
        for index, result in enumerate(results):
            if hbb_overshoot(result.corners, xyxy[index], params) > params.max_overshoot:
                results[index] = result.fallen_back(REASON_OVERSHOOTS)
    if params.scene and tight:
        results = _rescue_by_rows(xyxy, segmentations, results, params)
        if params.side_by_side:
            for index, breadth in enumerate(side_by_side_breadths(results, params)):
                if breadth is not None:
                    narrowed = narrowed_box(segmentations[index], results[index].corners, breadth, params)
                    if narrowed is not None:
                        results[index].corners = narrowed
                        if results[index].from_mask:  # the mask spilling across the gaps is what
                            # was corrected: it no longer judges the box (see narrowed_confidence)
                            results[index].confidence = params.narrowed_confidence
    if params.check:  # the final fits, one by one
        for index, result in enumerate(results):
            if tight and is_sliver(result.corners, xyxy[index], params):
                results[index] = result.fallen_back(REASON_SLIVER)
            elif is_weak(result, xyxy[index], params):
                results[index] = result.fallen_back(REASON_WEAK)
    if tight:  # a tight fit's confidence: its mask's agreement, and how well the fit sits in its box
        for index, result in enumerate(results):
            if result.corners is None or not result.from_mask:
                continue
            if margin > 0:  # it follows its mask: how much it stands out from its surroundings
                share = contrast_share(result.support, params.margin_contrast)
            else:  # the HBB nearly fixes it: how closely its bounds keep to the HBB's sides
                share = bounds_share(result.corners, xyxy[index], params.tight_bounds)
            result.confidence = (result.confidence + share) / 2
    corners = np.zeros((len(xyxy), 4, 2))
    fallback = np.zeros(len(xyxy), dtype=bool)
    confidence = np.zeros(len(xyxy))
    reasons, kept = [], []
    for index, result in enumerate(results):
        if result.corners is None:
            result.corners = hbb_corners(xyxy[index])
            fallback[index] = True
        corners[index] = result.corners
        confidence[index] = result.confidence
        reasons.append(result.reason)
        if keep_masks:
            kept.append(result)
    return ImageConversion(corners, fallback, kept, confidence, reasons, params.tightness, margin)


def _rescue_by_rows(xyxy, segmentations, results, params: ImageParams) -> list:
    """Fallbacks of a tight frame that stand in rows of converted boxes: the rectangle inscribed
    in the HBB at the rows' axis (:func:`~hbb2obb.converters.image.scene.row_axes`), kept when it
    follows the image's edges about as well as the HBB (``row_min_edge_ratio``: a helicopter's
    rotor disc fills its labelled box while its own pixels point every way; its apron's planes
    do not). Only boxes whose own fit was refused are rescued: they held an object; a box
    without a usable mask had its neighbours' say already (and open water between boats has no
    edges to refuse it)."""
    wanted = [r.reason in (REASON_LESS_SUPPORTED, REASON_CLASS_LESS_SUPPORTED) for r in results]
    rescued = list(results)
    for index, axis in enumerate(row_axes(xyxy, results, wanted, params)):
        if axis is None:
            continue
        result = inscribed_box(segmentations[index], axis, results[index].reason, params,
                               params.row_min_edge_ratio)
        if result.corners is not None:
            rescued[index] = result
    return rescued


def validate_parameters(params: dict) -> dict:
    """Validated parameter values; a bad one is a usage error naming it."""
    scale_factor_pair(params["scale_factor"])
    okp = params["opening_kernel_percentage"]
    if not isinstance(okp, (int, float)) or isinstance(okp, bool) or not math.isfinite(okp) or abs(okp) >= 1:
        raise UsageError(f"opening_kernel_percentage must be a number in (-1, 1), got {okp!r}")
    imgsz = params["imgsz"]
    if isinstance(imgsz, bool) or not isinstance(imgsz, (int, float)) or imgsz != int(imgsz) or not 16 <= imgsz <= 1024:
        raise UsageError(f"imgsz must be a whole number of pixels in [16, 1024], got {imgsz!r}")
    radius = params["corner_radius"]
    if isinstance(radius, bool) or not isinstance(radius, (int, float)) or not 0 <= radius <= 0.5:
        raise UsageError(f"corner_radius must be a number in [0, 0.5], got {radius!r}")
    if params["tightness"] not in TIGHTNESS:
        raise UsageError(f"tightness must be one of {', '.join(TIGHTNESS)}, got {params['tightness']!r}")
    margin = params["margin"]
    if margin != "auto" and (isinstance(margin, bool) or not isinstance(margin, (int, float))
                             or not 0 <= margin < 0.5):
        raise UsageError(f"margin must be 'auto' or a share of the object's size in [0, 0.5), got {margin!r}")
    return {**params, "imgsz": int(imgsz)}


def margin_value(text) -> object:
    """The ``margin`` parameter from its command-line text: ``"auto"`` or a number (validated
    by :func:`validate_parameters`); anything else is a usage error naming it.

    Examples
    --------
    >>> margin_value("auto"), margin_value("0.05")
    ('auto', 0.05)
    """
    if text == "auto":
        return "auto"
    try:
        return float(text)
    except (TypeError, ValueError):
        raise UsageError(f"--margin takes 'auto' or a share of the object's size such as 0.05, got {text!r}") from None


def image_params(params: dict) -> ImageParams:
    """The :class:`ImageParams` of a dict of public parameters (missing ones take their
    defaults; a bad or unknown one is a usage error naming it), the other settings at their
    defaults. ``hbb2obb`` (through :func:`convert_frame`), the sweeps and :func:`hbb2obb.convert`
    all build the converter's settings here.

    Examples
    --------
    >>> image_params({"imgsz": 64.0, "tightness": "loose"}).imgsz
    64
    """
    unknown = sorted(set(params) - set(DEFAULT_PARAMETERS))
    if unknown:  # a misspelt name would otherwise leave its parameter at the default without a word
        raise UsageError(f"converter 'image' has no parameter {', '.join(map(repr, unknown))}; "
                         f"its parameters: {', '.join(DEFAULT_PARAMETERS)}")
    full = validate_parameters({**DEFAULT_PARAMETERS, **params})
    scale_factor = tuple(full["scale_factor"]) if isinstance(full["scale_factor"], list) else full["scale_factor"]
    return ImageParams(scale_factor=scale_factor,
                       opening_kernel_percentage=float(full["opening_kernel_percentage"]),
                       imgsz=int(full["imgsz"]), corner_radius=float(full["corner_radius"]),
                       tightness=full["tightness"],
                       margin=full["margin"] if full["margin"] == "auto" else float(full["margin"]))


def read_frame(path: Path):
    """Decode an image file to an 8-bit RGB PIL image (16-bit frames scaled, not clipped to
    white: :func:`hbb2obb.io.images.decode_rgb`); an unreadable file is an input error."""
    from hbb2obb.io.images import decode_rgb

    return decode_rgb(path)


def hbb_xyxy(label_file, size: tuple[float, float]) -> np.ndarray:
    """``(n, 4)`` pixel ``x1 y1 x2 y2`` of a parsed HBB file; normalized files are scaled by ``size``."""
    corners = label_file.boxes.corners
    xyxy = np.concatenate([corners.min(axis=1), corners.max(axis=1)], axis=1).reshape(-1, 4)
    if label_file.normalized:
        xyxy = xyxy * np.array([size[0], size[1], size[0], size[1]], dtype=np.float64)
    return xyxy


@dataclass
class FrameConversion:
    """One converted frame: the parsed prompts, the decoded image, the boxes in pixels, the result."""

    label_file: object
    image: object
    xyxy: np.ndarray
    conversion: ImageConversion


def write_confidences(path: Path, confidence) -> None:
    """One score per line (four decimals), row-aligned with the frame's OBB file, as the
    reference tool's ``--confidence_dir`` writes them."""
    from hbb2obb.io.atomic import write_text_atomic

    write_text_atomic(path, "".join(f"{float(score):.4f}\n" for score in np.asarray(confidence).reshape(-1)))


def convert_frame(image_path: Path, hbb_path: Path, out_path: Optional[Path], params: dict,
                  keep_masks: bool = False, confidence_path: Optional[Path] = None) -> FrameConversion:
    """Convert the prompts of one frame and write them to ``out_path`` (absolute-pixel YOLO-OBB).

    ``params`` holds the converter's parameters (missing ones take their defaults). Broken
    prompt lines are skipped (they are in ``label_file.problems``); ``out_path=None`` writes
    nothing. ``confidence_path`` also writes the per-box confidences there.
    """
    from hbb2obb.io import read_yolo_hbb, write_yolo_obb

    settings = image_params(params)
    label_file = read_yolo_hbb(hbb_path, strict=False)
    image = read_frame(image_path)
    xyxy = hbb_xyxy(label_file, image.size)
    conversion = convert_boxes(image, xyxy, settings, class_ids=label_file.boxes.class_id, keep_masks=keep_masks)
    if out_path is not None:
        write_yolo_obb(out_path, label_file.boxes.with_corners(conversion.corners), decimals=1)
    if confidence_path is not None:
        write_confidences(confidence_path, conversion.confidence)
    return FrameConversion(label_file, image, xyxy, conversion)


@register
class ImageConverter(Converter):
    """HBB prompts to OBBs from the image pixels alone: segmentation and a constrained rectangle fit.

    Parameters (of :meth:`convert`)
    -------------------------------
    scale_factor : float or (float, float)
        How far beyond the HBB the object may reach: each side grows by this fraction of its
        own length at both ends (one value, or short side then long side), as the reference
        tool scales its prompts. It also says how much looser than the HBB the final box is.
    opening_kernel_percentage : float
        Morphological opening of the mask with a square kernel of this fraction of the mask's
        smaller side; negative closes instead; 0 is off.
    imgsz : int
        Long side, in pixels, of the window each box is resampled to (a small box's window is
        smaller: it is not resampled finer than the image, down to a long side of 48 pixels).
    corner_radius : float
        Corner rounding of the vehicles as a fraction of their breadth: how far inside the
        rectangle's corners an HBB that hugs the vehicle sits (loose HBBs only).
    tightness : {"auto", "tight", "loose"}
        How the HBBs relate to the objects' rectangles. ``tight``: each HBB is the bounding box
        of its object's rectangle (DOTA-HBB, any set boxed from OBBs), so the rectangle is
        inscribed and touches all four sides; the fit holds the HBB nearly as a constraint and
        searches the angle and the diagonal. ``loose``: hand-drawn HBBs that cut a vehicle's
        rounded corners (``corner_radius``), one opinion beside the mask's. ``auto`` (default)
        reads it per frame: tight when every HBB side lies on a whole pixel, else from the pixels
        (:mod:`~hbb2obb.converters.image.reading`).
    margin : "auto" or float
        The room the HBBs leave around their objects, as a share of the object's size per side
        (a detector's boxes, 0.05-0.10 is typical): the boxes are shrunk by it and fitted as
        tight (or as ``tightness`` says, when given). ``auto`` (default) reads it per frame from
        the pixels when ``tightness`` is ``auto`` and the HBBs are not on whole pixels
        (:mod:`~hbb2obb.converters.image.reading`); 0 turns it off.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from PIL import Image, ImageDraw
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> for sub in ("images", "hbb"): (root / sub).mkdir()
    >>> frame = Image.new("RGB", (120, 80), (90, 90, 90))
    >>> ImageDraw.Draw(frame).rectangle([30, 30, 79, 49], fill=(230, 230, 230))
    >>> frame.save(root / "images" / "f.png")
    >>> _ = (root / "hbb" / "f.txt").write_text("0 55 40 50 20\\n")
    >>> report = ImageConverter().convert(root / "hbb", root / "obb", {}, img_source=root / "images")
    >>> report.boxes, report.fallbacks
    (1, 0)
    """

    name = "image"
    parameters = dict(DEFAULT_PARAMETERS)
    needs_images = True
    # The reference's imgsz (640-1280) is a SAM input size; this converter's window is ~100 px.
    default_axes = {
        "imgsz": (DEFAULT_PARAMETERS["imgsz"],),
        "opening_kernel_percentage": (DEFAULT_PARAMETERS["opening_kernel_percentage"],),
    }

    def check_parameters(self, params: dict) -> dict:
        return validate_parameters(super().check_parameters(params))

    def convert(self, hbb_dir: Path, out_dir: Path, params: dict, *, img_source: Optional[Path] = None,
                progress: Optional[Callable[[int], None]] = None) -> ConversionReport:
        """Convert every ``hbb_dir/*.txt`` with the frame of the same name in ``img_source``.

        Writes ``out_dir/<name>.txt`` in absolute-pixel YOLO-OBB (one decimal). A label file
        without its image is an input error naming both; broken HBB lines are skipped and
        counted in ``details["skipped_hbb_lines"]``; ``details["fallbacks_per_file"]`` lists
        the files that had fallbacks, ``details["fallback_reasons"]`` counts them by reason and
        ``details["tightness_per_file"]`` gives the reading each frame was fitted with.
        """
        from hbb2obb.io import find_image

        start = time.perf_counter()
        full = self.check_parameters(params)
        hbb_dir, out_dir = Path(hbb_dir), Path(out_dir)
        if not hbb_dir.is_dir():
            raise InputError(f"{hbb_dir}: HBB folder not found")
        if img_source is None:
            raise UsageError("the image converter needs the frames: give the image folder (img_source)")
        if not Path(img_source).is_dir():
            raise InputError(f"{img_source}: image folder not found")
        out_dir.mkdir(parents=True, exist_ok=True)
        files = boxes = fallbacks = skipped = 0
        per_file, reasons, tightness = {}, {}, {}
        for path in sorted(hbb_dir.glob(f"*{LABEL_SUFFIX}")):
            image_path = find_image(Path(img_source), path.stem)
            if image_path is None:
                raise InputError(f"{path}: no image named {path.stem}.* in {img_source}")
            frame = convert_frame(image_path, path, out_dir / path.name, full)
            result = frame.conversion
            files += 1
            boxes += len(result.corners)
            fallbacks += int(result.fallback.sum())
            skipped += len(frame.label_file.problems)
            if result.fallback.any():
                per_file[path.name] = int(result.fallback.sum())
            for reason in result.reasons:
                if reason:
                    reasons[reason] = reasons.get(reason, 0) + 1
            tightness[path.name] = result.reading
            if progress:
                progress(1)
        return ConversionReport(files=files, boxes=boxes, fallbacks=fallbacks, seconds=time.perf_counter() - start,
                                details={"skipped_hbb_lines": skipped, "fallbacks_per_file": per_file,
                                         "fallback_reasons": reasons, "tightness_per_file": tightness})

