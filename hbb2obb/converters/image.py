"""The ``image`` converter: HBB prompts to OBBs from the image pixels alone (numpy + Pillow).

No model and no download. Per box, in a window around the scaled HBB resampled so that its long
side is ``imgsz`` pixels:

1. **Orientation hint** from image gradients: the gradient directions of a vehicle's outline
   (and of its shadow and the lane marks beside it) cluster on two perpendicular axes, so the
   doubled-doubled angle average ``arg sum |g| exp(4i phi)`` gives the axis modulo 90 degrees.
   The long axis is the one nearer the HBB's long side; a near-square HBB keeps both.
2. **Segmentation**: colour clusters (k-means) of the window; a soft rectangle prior from the
   hint and the HBB; GrabCut-style rounds that re-estimate how often each cluster is object or
   background, with mean-field smoothing between neighbours. The ring outside the scaled box
   is background by construction, so road, shadow and lane-mark colours are learnt there.
3. **Mask**: the component that best fills the box (and parts lying mostly inside it, e.g. a
   body split by dark windows), then a morphological opening (``opening_kernel_percentage`` of
   the mask's smaller side; negative: closing).
4. **Rectangle**: the mask's minimum-area rectangle (rotating calipers on its convex hull)
   refines the angle when it agrees with the hint; the four sides are then a least-squares
   compromise between the mask's extents and the HBB, read as the bounding box of a vehicle
   with rounded corners (``corner_radius`` times its breadth), which is why real HBBs sit
   inside the corners of a diagonal vehicle's rectangle.

A box with no usable mask comes out as its HBB and is counted as a fallback. The parameters,
the alternatives that were measured and the numbers are in the README's converter section.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

import numpy as np

from hbb2obb.converters.base import ConversionReport, Converter, register
from hbb2obb.converters.identity import scale_factor_pair, scale_hbbs
from hbb2obb.converters.image_fit import (
    Window,
    crop_window,
    dominant_axis,
    fit_rectangle,
    inside_rectangle,
    long_axis,
    rough_sides,
    wrap_quarter,
)
from hbb2obb.errors import InputError, UsageError
from hbb2obb.geometry.hull import convex_hull, mask_outline_points, minimum_area_rectangle
from hbb2obb.converters.segmentation import foreground_log_odds, kmeans, morphology, select_components

LABEL_SUFFIX = ".txt"
#: Width of the background ring around the scaled box, as a fraction of the HBB's short side.
RING = 0.15
#: Colour clusters per window, and about how many pixels the cluster centres are fitted on.
CLUSTERS = 6
KMEANS_SAMPLES = 1500
#: Strength of the rectangle prior (log-odds at the centre; the negative of it far outside).
PRIOR_STRENGTH = 1.0
#: How fast the prior falls off across the rough rectangle's border (per half-breadth).
PRIOR_SLOPE = 3.0
#: Mean-field coupling between neighbouring pixels' labels, steps per round, and rounds of
#: colour re-estimation after the first.
COUPLING = 0.5
SMOOTHING_STEPS = 5
ROUNDS = 2
#: An HBB whose sides differ by less than this ratio may hold its vehicle along either diagonal.
NEAR_SQUARE = 1.3
#: Largest angle (degrees) between the mask's rectangle and the gradient hint for the mask's to win.
ANGLE_AGREEMENT = 8.0
#: Weight of the HBB's four sides against the mask's four extents in the final fit.
HBB_WEIGHT = 3.0
#: A mask smaller than this share of the HBB's pixels is no object: fall back.
MIN_MASK_SHARE = 0.1
#: Least colour evidence (nats) by which the mask must stand out from the ring around the box;
#: on a featureless or pure-noise window it stays below 0.02, on the real sample's vehicles it
#: is 0.15 at the least (median 4.8).
MIN_CONTRAST = 0.1
#: How far (working pixels) the mask's extents are pulled in. The outline runs along the outer
#: corners of the boundary pixels, where the edge lies on average (it is anywhere within the last
#: pixel whose centre is inside): no inset (0 and 0.5 tie on synthetic data).
OUTLINE_INSET = 0.0

DEFAULT_PARAMETERS = {"scale_factor": 0.0, "opening_kernel_percentage": 0.1, "imgsz": 96, "corner_radius": 0.4}


@dataclass
class BoxResult:
    """What the converter found for one box (``corners`` is ``None`` for a fallback)."""

    corners: Optional[np.ndarray]
    window: Optional[Window] = None
    mask: Optional[np.ndarray] = None
    hull: Optional[np.ndarray] = None


@dataclass
class ImageConversion:
    """The OBBs of one frame and, when asked for, the masks and hulls behind them.

    Attributes
    ----------
    corners : ndarray, shape (n, 4, 2)
        One OBB per input HBB, in image pixels; a fallback is the HBB itself.
    fallback : ndarray of bool, shape (n,)
    boxes : list of BoxResult
        Per box window, mask and hull (only with ``keep_masks=True``; else empty).
    """

    corners: np.ndarray
    fallback: np.ndarray
    boxes: list = field(default_factory=list)


def _rectangle_prior(window: Window, centre, theta: float, long_side: float, short_side: float,
                     in_box: np.ndarray) -> np.ndarray:
    """Prior log-odds: ``+PRIOR_STRENGTH`` deep inside the rough rectangle, the negative outside."""
    dx = window.centres_x[None, :] - centre[0]
    dy = window.centres_y[:, None] - centre[1]
    u = dx * math.cos(theta) + dy * math.sin(theta)
    v = -dx * math.sin(theta) + dy * math.cos(theta)
    outside = np.maximum(np.abs(u) - long_side / 2, np.abs(v) - short_side / 2) / max(short_side / 2, 1.0)
    prior = -PRIOR_STRENGTH * np.clip(PRIOR_SLOPE * outside, -1.0, 1.0)
    return np.where(in_box, prior, -10.0)


def convert_box(image, xyxy, *, scale_factor=DEFAULT_PARAMETERS["scale_factor"],
                opening_kernel_percentage: float = DEFAULT_PARAMETERS["opening_kernel_percentage"],
                imgsz: int = DEFAULT_PARAMETERS["imgsz"], corner_radius: float = DEFAULT_PARAMETERS["corner_radius"],
                keep_masks: bool = False) -> BoxResult:
    """Convert one HBB ``x1 y1 x2 y2`` (image pixels) on a PIL image; see the module docstring.

    Returns
    -------
    BoxResult
        ``corners`` ``(4, 2)`` in image pixels, or ``None`` when no usable mask was found.
    """
    x1, y1, x2, y2 = (float(v) for v in xyxy)
    width, height = x2 - x1, y2 - y1
    if not (width >= 1.0 and height >= 1.0):
        return BoxResult(None)
    short, long = scale_factor_pair(scale_factor)
    scaled = scale_hbbs(np.array([[x1, y1, x2, y2]]), short, long)[0]
    window = crop_window(image, scaled, RING * min(width, height) + 2.0, imgsz)
    if window is None:
        return BoxResult(None)
    centre = ((x1 + x2) / 2, (y1 + y2) / 2)
    in_box, in_hbb = window.inside(scaled), window.inside((x1, y1, x2, y2))
    if not in_hbb.any() or in_box.all():
        return BoxResult(None, window)
    xs, ys = window.centres_x, window.centres_y
    spread = np.exp(-0.5 * ((xs - centre[0]) / (0.35 * width))[None, :] ** 2
                    - 0.5 * ((ys - centre[1]) / (0.35 * height))[:, None] ** 2)
    channels = window.pixels  # whole numbers (a resampled 8-bit crop): any order of sums is exact
    hint = dominant_axis((channels[..., 0] + channels[..., 1] + channels[..., 2]) / 3.0, spread)
    axes = [hint] if width >= NEAR_SQUARE * height else [hint + math.pi / 2] if height >= NEAR_SQUARE * width \
        else [hint, hint + math.pi / 2]
    pixels = window.pixels.reshape(-1, 3)
    _, clusters = kmeans(pixels, CLUSTERS, iterations=6, fit_every=max(1, len(pixels) // KMEANS_SAMPLES))
    clusters = clusters.reshape(window.pixels.shape[:2])
    candidates = []
    for axis in axes:
        long_side, short_side = rough_sides(width, height, axis)
        prior = _rectangle_prior(window, centre, axis, long_side, short_side, in_box)
        posterior, evidence = foreground_log_odds(clusters, prior, rounds=ROUNDS, smoothing_steps=SMOOTHING_STEPS,
                                                  coupling=COUPLING)
        mask = select_components(posterior > 0, in_hbb)
        mask = morphology(mask, opening_kernel_percentage)
        if np.count_nonzero(mask) < MIN_MASK_SHARE * np.count_nonzero(in_hbb):
            continue
        if evidence[mask].mean() - evidence[~in_box].mean() < MIN_CONTRAST:
            continue
        outline = window.to_image(mask_outline_points(mask))
        theta = axis
        turn = wrap_quarter(long_axis(minimum_area_rectangle(outline)) - axis)
        if abs(math.degrees(turn)) <= ANGLE_AGREEMENT:
            theta = axis + turn
        rect = fit_rectangle(outline, theta, centre, scaled, corner_radius, OUTLINE_INSET / window.sx, HBB_WEIGHT)
        if rect is not None:
            candidates.append((rect, evidence, mask, outline))
    if not candidates:
        return BoxResult(None, window)
    best = candidates[0]
    if len(candidates) > 1:  # a near-square HBB: the diagonal whose rectangle holds more evidence
        shared = np.clip(sum(c[1] for c in candidates), -6.0, 6.0) / len(candidates)
        best = max(candidates, key=lambda c: float(shared[inside_rectangle(window, c[0])].sum()))
    rect, _, mask, outline = best
    if not keep_masks:
        return BoxResult(rect)
    return BoxResult(rect, window, mask, convex_hull(outline))


def convert_boxes(image, xyxy, *, scale_factor=DEFAULT_PARAMETERS["scale_factor"],
                  opening_kernel_percentage: float = DEFAULT_PARAMETERS["opening_kernel_percentage"],
                  imgsz: int = DEFAULT_PARAMETERS["imgsz"], corner_radius: float = DEFAULT_PARAMETERS["corner_radius"],
                  keep_masks: bool = False) -> ImageConversion:
    """Convert every HBB of one frame; a box with no usable mask comes out as itself.

    Parameters
    ----------
    image : PIL.Image.Image or ndarray
        The frame (converted to RGB).
    xyxy : array_like, shape (n, 4)
        HBBs as ``x1 y1 x2 y2`` in image pixels.
    scale_factor, opening_kernel_percentage, imgsz, corner_radius
        The converter's parameters (see :class:`ImageConverter`).
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
    >>> bool(result.fallback[0]), result.corners.shape
    (False, (1, 4, 2))
    """
    from PIL import Image

    if isinstance(image, np.ndarray):
        image = Image.fromarray(np.asarray(image, dtype=np.uint8))
    if image.mode != "RGB":  # converting an RGB image would copy the whole frame
        image = image.convert("RGB")
    xyxy = np.asarray(xyxy, dtype=np.float64).reshape(-1, 4)
    corners = np.zeros((len(xyxy), 4, 2))
    fallback = np.zeros(len(xyxy), dtype=bool)
    kept = []
    for index, box in enumerate(xyxy):
        result = convert_box(image, box, scale_factor=scale_factor, opening_kernel_percentage=opening_kernel_percentage,
                             imgsz=imgsz, corner_radius=corner_radius, keep_masks=keep_masks)
        if result.corners is None:
            x1, y1, x2, y2 = box
            result.corners = np.array([[x1, y1], [x2, y1], [x2, y2], [x1, y2]], dtype=np.float64)
            fallback[index] = True
        corners[index] = result.corners
        if keep_masks:
            kept.append(result)
    return ImageConversion(corners, fallback, kept)


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
    return {**params, "imgsz": int(imgsz)}


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


def convert_frame(image_path: Path, hbb_path: Path, out_path: Optional[Path], params: dict,
                  keep_masks: bool = False) -> FrameConversion:
    """Convert the prompts of one frame and write them to ``out_path`` (absolute-pixel YOLO-OBB).

    ``params`` holds the converter's parameters (missing ones take their defaults). Broken
    prompt lines are skipped (they are in ``label_file.problems``); ``out_path=None`` writes
    nothing.
    """
    from hbb2obb.io import read_yolo_hbb, write_yolo_obb

    full = validate_parameters({**DEFAULT_PARAMETERS, **params})
    label_file = read_yolo_hbb(hbb_path, strict=False)
    image = read_frame(image_path)
    xyxy = hbb_xyxy(label_file, image.size)
    conversion = convert_boxes(image, xyxy, keep_masks=keep_masks, **_converter_kwargs(full))
    if out_path is not None:
        write_yolo_obb(out_path, label_file.boxes.with_corners(conversion.corners), decimals=1)
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
        Long side, in pixels, of the window each box is resampled to.
    corner_radius : float
        Corner rounding of the vehicles as a fraction of their breadth: how far inside the
        rectangle's corners an HBB that hugs the vehicle sits.

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
        the files that had fallbacks.
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
        per_file = {}
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
            if progress:
                progress(1)
        return ConversionReport(files=files, boxes=boxes, fallbacks=fallbacks, seconds=time.perf_counter() - start,
                                details={"skipped_hbb_lines": skipped, "fallbacks_per_file": per_file})


def _converter_kwargs(params: dict) -> dict:
    return {"scale_factor": params["scale_factor"],
            "opening_kernel_percentage": float(params["opening_kernel_percentage"]),
            "imgsz": int(params["imgsz"]), "corner_radius": float(params["corner_radius"])}
