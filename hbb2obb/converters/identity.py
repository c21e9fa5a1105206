"""The ``identity`` converter: every HBB prompt emitted as an axis-aligned OBB, optionally scaled.

It needs no images and no model, so it is the null conversion every other converter must beat:
a sweep of its ``scale_factor`` shows how much of a converter's score the prompt alone earns.
"""

from __future__ import annotations

import math
import time
from numbers import Real
from pathlib import Path
from typing import Callable, Optional

import numpy as np

from hbb2obb.boxes import Boxes
from hbb2obb.converters.base import ConversionReport, Converter, register
from hbb2obb.errors import InputError, UsageError
from hbb2obb.io import ImageSizes, read_yolo_hbb, write_yolo_obb

LABEL_SUFFIX = ".txt"


def scale_factor_pair(value) -> tuple[float, float]:
    """``(short, long)`` from one factor or a pair; anything else is a usage error.

    A factor moves each side of a box out by that fraction of its own length, on both ends,
    so a side ``s`` becomes ``s * (1 + 2 * factor)``; below -0.5 a side would turn inside out.

    Examples
    --------
    >>> scale_factor_pair(0.05)
    (0.05, 0.05)
    >>> scale_factor_pair([0.0, 0.1])
    (0.0, 0.1)
    """
    if isinstance(value, (list, tuple)):
        factors = tuple(value)
    else:
        factors = (value, value)
    if len(factors) != 2 or not all(isinstance(f, Real) and not isinstance(f, bool) for f in factors):
        raise UsageError(f"scale_factor must be a number or two numbers (short side, long side), got {value!r}")
    short, long = (float(f) for f in factors)
    for factor in (short, long):
        if not math.isfinite(factor) or factor <= -0.5:
            raise UsageError(f"scale_factor must be finite and greater than -0.5, got {value!r}")
    return short, long


def scale_hbbs(xyxy: np.ndarray, short_factor: float, long_factor: float,
               frame_size: Optional[tuple[float, float]] = None) -> np.ndarray:
    """Scale axis-aligned boxes side by side and clip them to the frame; ``(n, 4)`` xyxy in and out.

    Each side moves out by its factor times its own length at both ends. The short side takes
    ``short_factor``, the long side ``long_factor``; a square box's width counts as its long
    side, as in the reference tool. With ``frame_size`` the result is clipped to
    ``[0, width] x [0, height]``.

    Examples
    --------
    >>> scale_hbbs(np.array([[8.0, 9.0, 12.0, 11.0]]), 0.5, 0.25).tolist()
    [[7.0, 8.0, 13.0, 12.0]]
    >>> scale_hbbs(np.array([[-1.0, 9.0, 3.0, 11.0]]), 0.0, 0.0, frame_size=(100, 100)).tolist()
    [[0.0, 9.0, 3.0, 11.0]]
    """
    xyxy = np.asarray(xyxy, dtype=np.float64).reshape(-1, 4)
    w = xyxy[:, 2] - xyxy[:, 0]
    h = xyxy[:, 3] - xyxy[:, 1]
    width_is_short = w < h
    dx = w * np.where(width_is_short, short_factor, long_factor)
    dy = h * np.where(width_is_short, long_factor, short_factor)
    scaled = xyxy + np.stack([-dx, -dy, dx, dy], axis=1)
    if frame_size is not None:
        width, height = frame_size
        scaled = np.clip(scaled, 0.0, [width, height, width, height])
    return scaled


def _boxes_from_xyxy(xyxy: np.ndarray, template: Boxes) -> Boxes:
    x1, y1, x2, y2 = xyxy.T
    corners = np.stack([np.stack([x1, y1], -1), np.stack([x2, y1], -1),
                        np.stack([x2, y2], -1), np.stack([x1, y2], -1)], axis=1)
    return template.with_corners(corners.reshape(-1, 4, 2))


@register
class IdentityConverter(Converter):
    """HBB prompts emitted unchanged as OBBs, each side scaled by ``scale_factor``.

    Parameters
    ----------
    img_width, img_height : float, optional
        One frame size for every frame, used for clipping and for normalized prompts when the
        image folder cannot tell it.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> (root / "hbb").mkdir()
    >>> _ = (root / "hbb" / "f.txt").write_text("0 10 10 4 2\\n")
    >>> report = IdentityConverter().convert(root / "hbb", root / "obb", {"scale_factor": 0.5})
    >>> report.boxes, (root / "obb" / "f.txt").read_text().strip()
    (1, '0 6 8 14 8 14 12 6 12')
    """

    name = "identity"
    parameters = {"scale_factor": 0.0}
    needs_images = False

    def __init__(self, img_width: Optional[float] = None, img_height: Optional[float] = None):
        ImageSizes(None, img_width, img_height)  # validates the pair
        self.img_width = img_width
        self.img_height = img_height

    def check_parameters(self, params: dict) -> dict:
        full = super().check_parameters(params)
        scale_factor_pair(full["scale_factor"])
        return full

    def convert(self, hbb_dir: Path, out_dir: Path, params: dict, *, img_source: Optional[Path] = None,
                progress: Optional[Callable[[int], None]] = None) -> ConversionReport:
        start = time.perf_counter()
        short, long = scale_factor_pair(self.check_parameters(params)["scale_factor"])
        hbb_dir, out_dir = Path(hbb_dir), Path(out_dir)
        if not hbb_dir.is_dir():
            raise InputError(f"{hbb_dir}: HBB folder not found")
        image_dir = Path(img_source) if img_source is not None and Path(img_source).is_dir() else None
        sizes = ImageSizes(image_dir, self.img_width, self.img_height)
        out_dir.mkdir(parents=True, exist_ok=True)
        files = boxes = skipped = 0
        for path in sorted(hbb_dir.glob(f"*{LABEL_SUFFIX}")):
            label_file = read_yolo_hbb(path, strict=False)
            size = sizes(path.stem)
            xyxy = _xyxy_of(label_file.boxes)
            # A normalized prompt is scaled to pixels when the frame size is known; otherwise it
            # stays normalized, unclipped, and the evaluator scales it once it is given a size.
            if label_file.normalized and size is not None:
                xyxy = xyxy * np.array([size[0], size[1], size[0], size[1]])
            xyxy = scale_hbbs(xyxy, short, long, size)
            write_yolo_obb(out_dir / path.name, _boxes_from_xyxy(xyxy, label_file.boxes))
            files += 1
            boxes += len(label_file.boxes)
            skipped += len(label_file.problems)
            if progress:
                progress(1)
        return ConversionReport(files=files, boxes=boxes, seconds=time.perf_counter() - start,
                                details={"skipped_hbb_lines": skipped})


def _xyxy_of(boxes: Boxes) -> np.ndarray:
    """``x1 y1 x2 y2`` of axis-aligned boxes."""
    return np.concatenate([boxes.corners.min(axis=1), boxes.corners.max(axis=1)], axis=1).reshape(-1, 4)
