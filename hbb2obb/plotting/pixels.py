"""Frame pixels for the pictures: find a frame's image, decode it (shrunk when asked) as RGB,
and put a frame's label coordinates into that image's pixel coordinates.

Label coordinates are continuous: pixel ``(i, j)`` covers ``[i, i + 1) x [j, j + 1)``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Optional, Union

import numpy as np
from PIL import Image, UnidentifiedImageError

from hbb2obb.errors import InputError
from hbb2obb.io import find_image
from hbb2obb.io.images import image_size, quarter_turned, too_large, upright

ImageSource = Union[str, Path, Image.Image, np.ndarray]


def _to_rgb(image: Image.Image) -> Image.Image:
    """8-bit RGB from any PIL mode; 16-bit and float grey are stretched to their own range."""
    if image.mode in ("RGB",):
        return image
    if image.mode in ("I", "I;16", "I;16B", "I;16L", "F"):
        values = np.asarray(image, dtype=np.float64)
        low, high = float(values.min()), float(values.max())
        grey = np.zeros(values.shape, np.uint8) if high <= low else \
            np.round((values - low) * (255.0 / (high - low))).astype(np.uint8)
        return Image.fromarray(grey, "L").convert("RGB")
    return image.convert("RGB")


def _from_array(array: np.ndarray) -> Image.Image:
    array = np.asarray(array)
    if array.dtype != np.uint8:
        if np.issubdtype(array.dtype, np.floating) and array.size and float(np.nanmax(array)) <= 1.0:
            array = array * 255.0
        array = np.clip(np.nan_to_num(array), 0, 255).astype(np.uint8)
    if array.ndim == 3 and array.shape[2] == 1:
        array = array[..., 0]
    return _to_rgb(Image.fromarray(array))


def shrunk_size(size: tuple[int, int], max_side: Optional[float]) -> tuple[int, int]:
    """``(width, height)`` scaled down so the long side is at most ``max_side``; never enlarged.

    Examples
    --------
    >>> shrunk_size((3840, 2160), 1600), shrunk_size((300, 200), 1600)
    ((1600, 900), (300, 200))
    """
    width, height = size
    if max_side is None or max(width, height) <= max_side:
        return int(width), int(height)
    scale = max_side / max(width, height)
    return max(1, round(width * scale)), max(1, round(height * scale))


def open_rgb(source: ImageSource, size: Optional[tuple[int, int]] = None) -> tuple[Image.Image, tuple[int, int]]:
    """Decode an image as RGB, resized to ``size`` when given; also return its original size.

    A JPEG is decoded at a reduced scale when ``size`` is much smaller (``Image.draft``), which
    is what makes a 4K overlay fast.

    Parameters
    ----------
    source : path-like, PIL.Image.Image or ndarray
        The frame. Arrays are ``(h, w)`` or ``(h, w, 3|4)``, uint8 or floats in [0, 1].
    size : (int, int), optional
        Output ``(width, height)``.

    Returns
    -------
    image : PIL.Image.Image
        RGB pixels.
    original : (int, int)
        ``(width, height)`` of the source, the size its label coordinates refer to.

    Raises
    ------
    InputError
        The file cannot be read as an image.

    Examples
    --------
    >>> image, original = open_rgb(np.zeros((20, 40), np.uint8), (20, 10))
    >>> image.mode, image.size, original
    ('RGB', (20, 10), (40, 20))
    """
    if isinstance(source, np.ndarray):
        image = _from_array(source)
    elif isinstance(source, Image.Image):
        image = source
    else:
        path = Path(source)
        try:
            image = Image.open(path)
            turned = quarter_turned(image)  # sizes are of the frame as shown: EXIF orientation applied
            original = image.size[::-1] if turned else image.size
            if size is not None and image.format == "JPEG":
                image.draft("RGB", tuple(size)[::-1] if turned else size)
            image.load()
            image = upright(image)
        except (UnidentifiedImageError, OSError, ValueError) as exc:
            raise InputError(f"{path}: cannot read image ({exc})") from None
        except Image.DecompressionBombError as exc:
            raise too_large(path, exc) from None
        rgb = _to_rgb(image)
        return (rgb if size is None or rgb.size == tuple(size) else
                rgb.resize(tuple(size), Image.Resampling.LANCZOS, reducing_gap=3.0)), original
    original = image.size
    rgb = _to_rgb(image)
    if size is not None and rgb.size != tuple(size):
        rgb = rgb.resize(tuple(size), Image.Resampling.LANCZOS, reducing_gap=3.0)
    return rgb, original


class FrameImages:
    """Where each frame's pixels come from, and which frames had none.

    Parameters
    ----------
    source : path-like, mapping or None
        A folder of images named like the label files (``NAME.jpg``, ``NAME.png`` ...), or a
        mapping from frame name to a path, PIL image or array. ``None``: no frame has pixels.

    Attributes
    ----------
    missing : dict
        Frame name to the reason it had no pixels, filled as frames are asked for.

    Examples
    --------
    >>> images = FrameImages({"a": np.zeros((4, 6, 3), np.uint8)})
    >>> images.locate("a").shape, images.locate("b"), images.missing
    ((4, 6, 3), None, {'b': 'no image'})
    """

    def __init__(self, source=None):
        if isinstance(source, FrameImages):
            source = source.source
        if source is not None and not isinstance(source, Mapping):
            source = Path(source)
            if not source.is_dir():
                raise InputError(f"{source}: image folder not found")
        self.source = source
        self.missing: dict[str, str] = {}

    @classmethod
    def of(cls, images) -> "FrameImages":
        """``images`` itself when it already is a :class:`FrameImages`, else a new one over it."""
        return images if isinstance(images, FrameImages) else cls(images)

    def locate(self, name: str) -> Optional[ImageSource]:
        """The frame's image (a path, PIL image or array), or ``None`` (recorded in ``missing``)."""
        if self.source is None:
            found = None
        elif isinstance(self.source, Mapping):
            found = self.source.get(name)
        else:
            found = find_image(self.source, name)
        if found is None:
            where = f" in {self.source}" if isinstance(self.source, Path) else ""
            self.missing[name] = f"no image{where}"
        return found

    def open(self, name: str, max_side: Optional[float] = None):
        """``(rgb, original_size)`` of the frame, shrunk to ``max_side``; ``None`` when it has no
        image or the image cannot be read (recorded in ``missing``)."""
        found = self.locate(name)
        if found is None:
            return None
        try:
            if max_side is None:
                return open_rgb(found)
            return open_rgb(found, shrunk_size(image_size_of(found), max_side))
        except InputError as exc:
            self.missing[name] = str(exc)
            return None


def image_size_of(source: ImageSource) -> tuple[int, int]:
    """``(width, height)`` of an image source, from the header for files (as shown: EXIF orientation applied)."""
    if isinstance(source, np.ndarray):
        return int(source.shape[1]), int(source.shape[0])
    if isinstance(source, Image.Image):
        return source.size
    return image_size(Path(source))


def to_image_pixels(corners: np.ndarray, frame_size, image_size) -> np.ndarray:
    """A frame's corners in the pixel coordinates of its image.

    The evaluation already scaled normalized labels when it knew the frame size
    (``frame_size``); corners in that size's coordinates are stretched to the image's when the
    two differ. With the frame size unknown (NaN), corners that are all in [0, 1] are taken as
    normalized and scaled to the image; others are used as they are.

    Examples
    --------
    >>> to_image_pixels(np.array([[[0.5, 0.5]] * 4]), (np.nan, np.nan), (200, 100))[0, 0].tolist()
    [100.0, 50.0]
    >>> to_image_pixels(np.array([[[960, 540]] * 4]), (1920, 1080), (480, 270))[0, 0].tolist()
    [240.0, 135.0]
    """
    corners = np.asarray(corners, dtype=np.float64).reshape(-1, 4, 2)
    image_size = np.asarray(image_size, dtype=np.float64)
    frame_size = np.asarray(frame_size, dtype=np.float64)
    if corners.size == 0:
        return corners
    if np.all(np.isfinite(frame_size)) and np.all(frame_size > 0):
        return corners if np.array_equal(frame_size, image_size) else corners * (image_size / frame_size)
    if corners.min() >= 0.0 and corners.max() <= 1.0:
        return corners * image_size
    return corners
