"""How the public functions take their inputs: label maps and frame sizes as paths or values."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Optional, Union

from hbb2obb.errors import UsageError
from hbb2obb.io import ImageSizes, load_label_map

#: A path given as a string or a :class:`~pathlib.Path`.
PathLike = Union[str, "os.PathLike[str]"]
#: Class names: a label map file (``{id: name}`` YAML) or the mapping itself.
LabelMapLike = Union[PathLike, Mapping[int, str], None]
#: Frame sizes: a folder of the frames (sizes from their headers), one ``(width, height)`` for
#: every frame, or an :class:`~hbb2obb.io.ImageSizes`.
ImageSizesLike = Union[PathLike, tuple[float, float], ImageSizes, None]


def label_map_of(label_map: LabelMapLike) -> dict[int, str]:
    """``{id: name}`` from a label map file or a mapping (checked as a file's would be)."""
    if label_map is None:
        return {}
    if isinstance(label_map, Mapping):
        names = {}
        for key, name in label_map.items():
            if isinstance(key, bool) or not isinstance(key, int) or not isinstance(name, str) or not name:
                raise UsageError(f"label_map: {key!r}: {name!r}: ids must be integers and names non-empty strings")
            names[key] = name
        lowered = [name.lower() for name in names.values()]
        if len(set(lowered)) < len(lowered):
            raise UsageError("label_map: a name is given twice (names are compared case-insensitively)")
        return names
    return load_label_map(Path(label_map))


def image_sizes_of(image_sizes: ImageSizesLike) -> ImageSizes:
    """:class:`~hbb2obb.io.ImageSizes` from a folder of frames, a ``(width, height)`` or one already made."""
    if image_sizes is None:
        return ImageSizes()
    if isinstance(image_sizes, ImageSizes):
        return image_sizes
    if isinstance(image_sizes, tuple):
        if len(image_sizes) != 2:
            raise UsageError(f"image_sizes: give (width, height), got {image_sizes!r}")
        return ImageSizes(None, image_sizes[0], image_sizes[1])
    return ImageSizes(Path(image_sizes))


def optional_path(path: Optional[PathLike]) -> Optional[Path]:
    return None if path is None else Path(path)
