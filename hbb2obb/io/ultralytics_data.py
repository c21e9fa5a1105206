"""An Ultralytics dataset YAML as the ground truth of one of its splits (``--split``, default ``val``).

The file is read as Ultralytics' ``check_det_dataset`` and ``YOLODataset`` read it:

``path``
    The dataset root. Absent: the YAML's folder. Relative: Ultralytics takes it from the current
    folder (then from its own datasets folder, a user setting not read here); here it is the
    folder, from the current one or from the YAML's, that holds the split's entries; when both
    hold them and differ, it is refused as ambiguous (make it absolute).
``train``, ``val`` (or ``validation``), ``test``
    Relative to the root (``../x`` that is not there is tried as ``x``, as Ultralytics does); each
    an image folder (searched with its subfolders), a ``.txt`` list of images (a line starting
    with ``./`` is relative to the list's folder, any other as Ultralytics reads it: relative to
    the current folder), or a list of those. Images are the files whose suffix Ultralytics takes
    (``bmp dng jpeg jpg mpo png tif tiff webp pfm heic``).
``names`` (or ``nc``)
    The class names: a list, or a mapping of class id to name.

Each image's labels are the ``.txt`` file at its path with the last ``/images/`` made
``/labels/`` and the suffix ``.txt``; an image without one is a frame without objects (as
Ultralytics reads it), but a split none of whose images has a label file is refused (the layout
is then not the one Ultralytics expects). Labels are YOLO lines normalized to the image:
``class x1 y1 ... x4 y4`` (OBB) or ``class xc yc w h``; they are scaled by each image's size
(read from its header, EXIF orientation applied, as Ultralytics' ``exif_size``). Frames are named
by the image file name without its suffix; two images of one name in a split are refused.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional

import numpy as np

from hbb2obb.errors import InputError
from hbb2obb.io.frame_labels import FrameLabels, make_boxes
from hbb2obb.io.images import image_size
from hbb2obb.io.labelmap import load_label_map, load_yaml
from hbb2obb.io.text import NORMALIZED_LIMIT, split_lines
from hbb2obb.io.yolo_hbb import read_yolo_hbb_pixels
from hbb2obb.io.yolo_obb import read_yolo_obb

#: the image suffixes Ultralytics reads (``ultralytics.data.utils.IMG_FORMATS``)
IMG_FORMATS = ("bmp", "dng", "jpeg", "jpg", "mpo", "png", "tif", "tiff", "webp", "pfm", "heic")
SPLITS = ("train", "val", "test", "minival")


def sniff(head: bytes) -> bool:
    """Whether a ``.yaml`` file's head looks like a dataset YAML: ``names`` or ``nc``, and a split key."""
    lines = [line.split(b":", 1)[0].strip() for line in head.splitlines() if line[:1] not in (b" ", b"\t", b"#")]
    return bool({b"names", b"nc"} & set(lines)) and bool({b"train", b"val", b"validation", b"test"} & set(lines))


def dataset_root(data: dict, path: Path, entries: list) -> Path:
    """The folder the split's ``entries`` are relative to (see the module docstring)."""
    given = data.get("path")
    if given in (None, ""):
        return path.parent
    if not isinstance(given, str):
        raise InputError(f"{path}: 'path' must be a folder name, found {given!r}")
    root = Path(given)
    if root.is_absolute():
        return root
    found = {candidate.resolve() for candidate in (Path.cwd() / root, path.parent / root)
             if candidate.is_dir() and all((candidate / entry).exists() for entry in entries)}
    if len(found) > 1:
        raise InputError(f"{path}: 'path: {given}' holds the split both here ({Path.cwd() / root}) and beside the "
                         f"YAML ({path.parent / root}); which one Ultralytics reads depends on where it runs: make "
                         "it absolute")
    if not found:
        raise InputError(f"{path}: 'path: {given}' does not hold the split ({', '.join(entries)}) here nor beside "
                         "the YAML")
    return found.pop()


def split_images(data: dict, path: Path, split: str) -> list[Path]:
    """The image files of one split, sorted as Ultralytics sorts them."""
    if split == "val" and "val" not in data and "validation" in data:
        split = "validation"
    entry = data.get(split)
    if not entry:
        present = [key for key in (*SPLITS, "validation") if data.get(key)]
        raise InputError(f"{path}: no '{split}' split (it has {', '.join(present) or 'none'}); choose one with --split")
    entries = entry if isinstance(entry, list) else [entry]
    if not all(isinstance(item, str) for item in entries):
        raise InputError(f"{path}: '{split}' must be a path or a list of paths")
    root = dataset_root(data, path, entries)
    files = []
    for item in entries:
        where = (root / item).resolve()
        if isinstance(entry, str) and not where.exists() and item.startswith("../"):
            where = (root / item[3:]).resolve()
        if where.is_dir():
            files += [str(p) for p in where.rglob("*.*") if p.is_file()]
        elif where.is_file():
            text = where.read_text(encoding="utf-8-sig")
            parent = str(where.parent) + os.sep
            files += [line.replace("./", parent, 1) if line.startswith("./") else line
                      for line in text.strip().splitlines()]
        else:
            raise InputError(f"{path}: '{split}' entry {item!r} does not exist ({where})")
    images = sorted(f for f in files if f.rpartition(".")[-1].lower() in IMG_FORMATS)
    if not images:
        raise InputError(f"{path}: no images in the '{split}' split ({', '.join(entries)})")
    return [Path(f) for f in images]


def label_path(image: Path) -> Path:
    """Ultralytics' ``img2label_paths``: the last ``/images/`` made ``/labels/``, the suffix ``.txt``."""
    text = str(image)
    images, labels = f"{os.sep}images{os.sep}", f"{os.sep}labels{os.sep}"
    return Path(labels.join(text.rsplit(images, 1)).rsplit(".", 1)[0] + ".txt")


def dataset_names(data: dict, path: Path) -> dict:
    """The class names of a dataset YAML (``names``, else ``class_0 ... `` for ``nc``)."""
    if data.get("names") is not None:
        return load_label_map(path)
    count = data.get("nc")
    if isinstance(count, bool) or not isinstance(count, int) or count < 0:
        raise InputError(f"{path}: needs 'names' (or an integer 'nc')")
    return {i: f"class_{i}" for i in range(count)}


def read(path: str | Path, *, strict: bool, label_map: Optional[dict] = None,
         split: str = "val") -> tuple[list, dict, tuple]:
    """Read one split of an Ultralytics dataset: one :class:`FrameLabels` per image, in pixels.

    Parameters
    ----------
    path : path-like
        The dataset YAML.
    strict : bool
        Raise at the first broken label line (ground truth), or skip it and list it.
    label_map : dict of int to str, optional
        Class names that win over the YAML's (the ids are the label files').
    split : str
        ``train``, ``val`` or ``test`` (any key of the YAML naming images).

    Returns
    -------
    frames : list of FrameLabels
        Sorted by image path; each with its image's size and name.
    names : dict of int to str
    problems : tuple of LabelProblem
    """
    path = Path(path)
    data = load_yaml(path, "dataset YAML")
    if not isinstance(data, dict):
        raise InputError(f"{path}: not an Ultralytics dataset YAML (expected a mapping with names and splits)")
    names = dict(label_map) if label_map else dataset_names(data, path)
    frames, seen, labelled = [], {}, 0
    images = split_images(data, path, split)
    for image in images:
        stem = image.stem
        if stem in seen:
            raise InputError(f"{path}: two images of frame {stem!r} in the '{split}' split: {seen[stem]} and {image}")
        seen[stem] = image
        size = image_size(image)  # an image that cannot be read is an InputError naming it
        labels = label_path(image)
        if labels.is_file():
            labelled += 1
            frame = _read_labels(labels, stem, size, strict)
        else:
            frame = FrameLabels(stem, make_boxes([], [], []), size, labels)
        frames.append(FrameLabels(stem, frame.boxes, size, frame.source, frame.problems, image.name))
    if not labelled:
        raise InputError(f"{path}: no label file for any of the {len(frames)} images of the '{split}' split "
                         f"(looked for {label_path(images[0])} and the like)")
    problems = tuple(problem for frame in frames for problem in frame.problems)
    return frames, names, problems


def _read_labels(labels: Path, stem: str, size: tuple, strict: bool) -> FrameLabels:
    """One normalized label file in pixels: OBB or HBB by its first line's field count."""
    first = next((fields for _, fields in split_lines(labels)), [])
    if len(first) in (5, 6):
        label_file = read_yolo_hbb_pixels(labels, size, strict=strict, normalized_limit=NORMALIZED_LIMIT)
        if label_file.normalized is False:
            raise InputError(f"{labels}: coordinates beyond {NORMALIZED_LIMIT:g}: Ultralytics labels are normalized")
        boxes = label_file.boxes
    else:
        label_file = read_yolo_obb(labels, strict=strict)
        boxes = label_file.boxes
        if len(boxes) and np.abs(boxes.corners).max() > NORMALIZED_LIMIT:
            raise InputError(f"{labels}: coordinates beyond {NORMALIZED_LIMIT:g}: Ultralytics labels are normalized")
        boxes = boxes.with_corners(boxes.corners * np.array(size, dtype=np.float64))
    boxes = type(boxes)(corners=boxes.corners, class_id=boxes.class_id, score=boxes.score, line=boxes.line,
                        difficult=np.zeros(len(boxes), dtype=bool))
    return FrameLabels(stem, boxes, size, labels, label_file.problems)
