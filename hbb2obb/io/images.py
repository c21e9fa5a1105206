"""Frame sizes: read from image headers (no pixel decoding), or given once for all frames."""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Optional

from hbb2obb.errors import InputError, UsageError

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".tif", ".tiff", ".webp")


def find_image(image_dir: Path, stem: str) -> Optional[Path]:
    """The image named ``stem`` with a known suffix (either case), or ``None``.

    Two images of that name (``a.jpg`` and ``a.png``) are an :class:`InputError`: the labels of
    frame ``a`` belong to one of them, and taking either would give the other's size or pixels
    to its boxes without a word.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "a.jpg").write_bytes(b""); find_image(folder, "a").name, find_image(folder, "b")
    ('a.jpg', None)
    >>> _ = (folder / "a.png").write_bytes(b""); find_image(folder, "a")
    Traceback (most recent call last):
    ...
    hbb2obb.errors.InputError: .../a.jpg and .../a.png: 2 images named 'a'; keep one of them
    >>> import shutil; shutil.rmtree(folder)
    """
    found: list[Path] = []
    for suffix in IMAGE_SUFFIXES:
        for candidate in (image_dir / f"{stem}{suffix}", image_dir / f"{stem}{suffix.upper()}"):
            # a case-insensitive file system finds one file under both spellings
            if candidate.is_file() and not any(os.path.samefile(candidate, other) for other in found):
                found.append(candidate)
    if len(found) > 1:
        raise InputError(f"{' and '.join(str(p) for p in found)}: {len(found)} images named {stem!r}; keep one of them")
    return found[0] if found else None


EXIF_ORIENTATION = 0x0112
QUARTER_TURNS = (5, 6, 7, 8)  # EXIF orientations that show the frame turned a quarter: width and height swap


def image_size(path: Path) -> tuple[int, int]:
    """``(width, height)`` of the frame as a viewer shows it, read from the image's header only.

    An EXIF orientation of 5 to 8 (a phone held upright) swaps the two: labels are drawn on the
    frame as shown, which is also how OpenCV's ``imread``, the reference tool and Ultralytics
    read it. The pixels are turned the same way wherever they are decoded (:func:`upright`).
    """
    from PIL import Image, UnidentifiedImageError

    limit = Image.MAX_IMAGE_PIXELS
    Image.MAX_IMAGE_PIXELS = None  # only the header is read, no pixel decoded: a frame of any size has a size
    try:
        with Image.open(path) as image:
            width, height = image.size
            if quarter_turned(image):
                return height, width
            return width, height
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as exc:  # a broken EXIF block included
        raise InputError(f"{path}: cannot read image header ({exc})") from None
    finally:
        Image.MAX_IMAGE_PIXELS = limit


def too_large(path, exc) -> InputError:
    """The error for a frame Pillow will not decode (``DecompressionBombError``): more pixels than
    twice ``PIL.Image.MAX_IMAGE_PIXELS``, a guard against files that declare a huge frame."""
    said = str(exc).rstrip(".")
    return InputError(f"{path}: cannot read image (more pixels than the image library decodes safely: {said}; "
                      "split the frame into tiles)")


ORIENTED_FORMATS = ("JPEG", "MPO")  # whose EXIF block is in the header; OpenCV and the reference turn these


def orientation(image) -> int:
    """The EXIF orientation (1-8) of an open PIL image, 1 when it has none or is no JPEG.

    Only JPEG's is read: it sits in the header, where a PNG's ``eXIf`` chunk may follow the
    pixels (Pillow then decodes the whole frame to find it, which made reading a size 500 times
    slower), and OpenCV's ``imread`` and the reference tool turn JPEGs only. A broken EXIF block
    has no orientation.
    """
    if image.format not in ORIENTED_FORMATS:
        return 1
    try:
        value = image.getexif().get(EXIF_ORIENTATION, 1)
    except (OSError, SyntaxError, ValueError, TypeError):
        return 1
    return value if value in range(1, 9) else 1


def quarter_turned(image) -> bool:
    """Whether an open PIL image is shown turned a quarter (width and height swap)."""
    return orientation(image) in QUARTER_TURNS


def upright(image):
    """A loaded PIL image turned as its EXIF orientation says a viewer shows it (itself when no turn)."""
    from PIL import ImageOps

    if orientation(image) == 1:
        return image
    return ImageOps.exif_transpose(image)


#: Pillow modes of more than 8 bits per sample: ``convert("RGB")`` clips them to 255 (a white frame).
WIDE_MODES = ("I;16", "I;16B", "I;16L", "I;16N", "I", "F")


def decode_rgb(path: Path):
    """Decode an image file to an 8-bit RGB PIL image, turned upright; an unreadable file is an :class:`InputError`.

    A greyscale frame of more than 8 bits per sample (16-bit PNG or TIFF, 32-bit integer or
    float) is scaled linearly so that its brightest pixel becomes 255 (negative values become
    0); Pillow's own conversion would clip every value above 255 to white. A frame whose values
    all fit in 0-255 is kept as it is.

    Examples
    --------
    >>> import tempfile, pathlib, numpy as np
    >>> from PIL import Image
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "deep.png"
    >>> Image.fromarray(np.array([[0, 1000], [2000, 4000]], dtype=np.uint16)).save(path)
    >>> np.asarray(decode_rgb(path))[..., 0].tolist()
    [[0, 64], [128, 255]]
    >>> path.unlink(); path.parent.rmdir()
    """
    import numpy as np
    from PIL import Image, UnidentifiedImageError

    try:
        image = Image.open(path)
    except (UnidentifiedImageError, OSError) as exc:
        raise InputError(f"{path}: cannot read image ({exc})") from None
    except Image.DecompressionBombError as exc:
        raise too_large(path, exc) from None
    try:
        image.load()  # decodes and closes the file; an RGB frame is used as decoded, not copied
    except OSError as exc:  # e.g. a truncated file
        image.close()
        raise InputError(f"{path}: cannot read image ({exc})") from None
    image = upright(image)  # the frame the labels were drawn on, as image_size measures it
    if image.mode == "RGB":
        return image
    if image.mode not in WIDE_MODES:
        return image.convert("RGB")
    values = np.clip(np.asarray(image, dtype=np.float64), 0.0, None)
    if not np.isfinite(values).all():
        raise InputError(f"{path}: cannot read image (it holds values that are not finite numbers)")
    brightest = float(values.max()) if values.size else 0.0
    if brightest > 255.0:
        values = values * (255.0 / brightest)
    grey = np.rint(values).astype(np.uint8)
    return Image.fromarray(np.repeat(grey[..., None], 3, axis=2), "RGB")


class ImageSizes:
    """Frame size lookup: a fixed ``width x height``, an image folder, or nothing known.

    Parameters
    ----------
    image_dir : path-like, optional
        Folder of frames named like the label files.
    width, height : float, optional
        One size for every frame; both or neither. Wins over ``image_dir``.

    Sizes are those of the frames as a viewer shows them (EXIF orientation applied; see
    :func:`image_size`).
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
