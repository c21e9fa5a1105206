"""Frame sizes: read from image headers (no pixel decoding), or given once for all frames."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Optional

from hbb2obb.errors import InputError, UsageError

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".tif", ".tiff", ".webp")


def find_image(image_dir: Path, stem: str) -> Optional[Path]:
    """The image named ``stem`` with a known suffix (either case), or ``None``."""
    for suffix in IMAGE_SUFFIXES:
        for candidate in (image_dir / f"{stem}{suffix}", image_dir / f"{stem}{suffix.upper()}"):
            if candidate.is_file():
                return candidate
    return None


def image_size(path: Path) -> tuple[int, int]:
    """``(width, height)`` of an image, read from its header only."""
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(path) as image:
            return image.size
    except (UnidentifiedImageError, OSError) as exc:
        raise InputError(f"{path}: cannot read image header ({exc})") from None


class ImageSizes:
    """Frame size lookup: a fixed ``width x height``, an image folder, or nothing known.

    Parameters
    ----------
    image_dir : path-like, optional
        Folder of frames named like the label files.
    width, height : float, optional
        One size for every frame; both or neither. Wins over ``image_dir``.
    """

    def __init__(self, image_dir=None, width=None, height=None):
        if (width is None) != (height is None):
            raise UsageError("--img_width and --img_height must be given together")
        if width is not None and not all(0 < float(v) < math.inf for v in (width, height)):  # nan fails too
            raise UsageError(f"--img_width and --img_height must be positive finite numbers, got {width} x {height}")
        self.fixed = None if width is None else (float(width), float(height))
        self.image_dir = None if image_dir is None else Path(image_dir)
        if self.image_dir is not None and not self.image_dir.is_dir():
            raise InputError(f"{self.image_dir}: image folder not found")
        self._cache: dict[str, Optional[tuple[float, float]]] = {}

    @property
    def known(self) -> bool:
        """Whether any size source was given."""
        return self.fixed is not None or self.image_dir is not None

    def __call__(self, stem: str) -> Optional[tuple[float, float]]:
        """The size of frame ``stem``, or ``None`` when it cannot be known."""
        if self.fixed is not None:
            return self.fixed
        if self.image_dir is None:
            return None
        if stem not in self._cache:
            path = find_image(self.image_dir, stem)
            self._cache[stem] = None if path is None else tuple(float(v) for v in image_size(path))
        return self._cache[stem]
