"""COCO instance files: one ``.json`` for a whole set of frames.

An oriented box is an 8-number polygon in ``segmentation`` (its envelope in ``bbox``); a
horizontal one is ``bbox`` ``[x, y, w, h]`` alone. Problems are named by JSON path, as
``file.json:annotations[12].bbox``, since a JSON file has no box per line.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import numpy as np

from hbb2obb.errors import InputError
from hbb2obb.io.atomic import write_text_atomic
from hbb2obb.io.frame_labels import (
    FrameLabels,
    axis_rect,
    integer_corners,
    integer_envelope,
    make_boxes,
    names_lookup,
    pixel_size,
)
from hbb2obb.io.text import ProblemSink
from hbb2obb.io.text_file import read_text_file

COCO_KEYS = ("images", "annotations", "categories")


def load_json(path: Path):
    """The parsed JSON of a file; :class:`InputError` at ``file:line`` when it is not JSON."""
    text = read_text_file(path, "JSON file")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg})") from None


def is_coco(data) -> bool:
    """Whether parsed JSON has the three top-level keys of a COCO instance file."""
    return isinstance(data, dict) and all(key in data for key in COCO_KEYS)


def _finite_numbers(values, count: Optional[int] = None) -> Optional[list]:
    if not isinstance(values, list) or (count is not None and len(values) != count):
        return None
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        return None
    return [float(v) for v in values] if np.isfinite(values).all() else None


def _categories(data: dict, path: Path, label_map: dict) -> tuple[dict, dict]:
    """``{category id: class id}`` and the class names, from the label map or the file's order."""
    categories = data["categories"]
    if not isinstance(categories, list):
        raise InputError(f"{path}:categories: must be a list")
    for index, category in enumerate(categories):
        if not isinstance(category, dict) or not isinstance(category.get("id"), int):
            raise InputError(f"{path}:categories[{index}]: needs an integer 'id'")
    ordered = sorted(categories, key=lambda c: c["id"])
    if not label_map:  # no map: class ids follow the categories' id order, as the reference reads them
        return ({c["id"]: i for i, c in enumerate(ordered)},
                {i: str(c.get("name", c["id"])) for i, c in enumerate(ordered)})
    lookup = names_lookup(label_map)
    mapping = {}
    for index, category in enumerate(categories):
        name = str(category.get("name", ""))
        if name not in lookup and name.lower() not in lookup:
            raise InputError(f"{path}:categories[{index}].name: class name {name!r} is not in the label map")
        mapping[category["id"]] = lookup.get(name, lookup.get(name.lower()))
    return mapping, dict(label_map)


def _images(data: dict, path: Path) -> dict:
    """``{image id: (stem, size)}`` in file order; a repeated id or name is an error."""
    images = data["images"]
    if not isinstance(images, list):
        raise InputError(f"{path}:images: must be a list")
    found, stems = {}, set()
    for index, image in enumerate(images):
        where = f"{path}:images[{index}]"
        if not isinstance(image, dict) or not isinstance(image.get("id"), int) or not isinstance(
                image.get("file_name"), str):
            raise InputError(f"{where}: needs an integer 'id' and a 'file_name'")
        stem = Path(image["file_name"]).stem
        if image["id"] in found or stem in stems:
            raise InputError(f"{where}: image id {image['id']} or name {stem!r} appears twice")
        width, height = image.get("width"), image.get("height")
        size = (width, height) if isinstance(width, (int, float)) and isinstance(height, (int, float)) and \
            width > 0 and height > 0 else None
        found[image["id"]] = (stem, size)
        stems.add(stem)
    return found


def _annotation_corners(annotation: dict) -> tuple[Optional[list], Optional[str]]:
    """The annotation's quad, or the reason it has none (the key at fault, the problem)."""
    segmentation = annotation.get("segmentation")
    if isinstance(segmentation, list) and segmentation and isinstance(segmentation[0], list) \
            and len(segmentation[0]) == 8:
        values = _finite_numbers(segmentation[0], 8)
        if values is None:
            return None, "segmentation[0]: the polygon must be 8 finite numbers"
        return np.reshape(values, (4, 2)).tolist(), None
    bbox = _finite_numbers(annotation.get("bbox"), 4)
    if bbox is None:
        return None, "bbox: expected [x, y, width, height] of finite numbers (or an 8-number segmentation)"
    x, y, w, h = bbox
    if w < 0 or h < 0:
        return None, "bbox: width and height must not be negative"
    return axis_rect(x, y, x + w, y + h), None


def read_coco(path: str | Path, *, strict: bool, label_map: Optional[dict] = None) -> tuple[list, dict, tuple]:
    """Read a COCO instance file: one :class:`FrameLabels` per image, and the class names.

    Parameters
    ----------
    path : path-like
    strict : bool
        Raise :class:`~hbb2obb.errors.LabelFormatError` at the first broken annotation (ground
        truth), or skip it and list it in ``problems`` (predictions).
    label_map : dict of int to str, optional
        Category names become these class ids. Without it, class ids are the categories'
        positions in id order (category ids 1..n written by :func:`write_coco` give 0..n-1).

    Returns
    -------
    frames : list of FrameLabels
        In the order of ``images``; ``boxes.line`` is the 1-based position in ``annotations``.
    names : dict of int to str
    problems : tuple of LabelProblem
        The skipped annotations, named by JSON path.
    """
    path = Path(path)
    data = load_json(path)
    if not is_coco(data):
        raise InputError(f"{path}: not a COCO instance file (needs 'images', 'annotations' and 'categories')")
    class_of, names = _categories(data, path, label_map or {})
    images = _images(data, path)
    annotations = data["annotations"]
    if not isinstance(annotations, list):
        raise InputError(f"{path}:annotations: must be a list")
    sink = ProblemSink(path, strict)
    per_image = {image_id: ([], [], [], [], []) for image_id in images}
    for index, annotation in enumerate(annotations):
        where = f"annotations[{index}]"
        if not isinstance(annotation, dict):
            sink.report(where, "not an object")
            continue
        image_id, category = annotation.get("image_id"), annotation.get("category_id")
        if image_id not in images:
            sink.report(f"{where}.image_id", f"no image with id {image_id!r}")
            continue
        if category not in class_of:
            sink.report(f"{where}.category_id", f"no category with id {category!r}")
            continue
        corners, reason = _annotation_corners(annotation)
        if corners is None:
            sink.report(f"{where}.{reason.split(':', 1)[0]}", reason.split(": ", 1)[1])
            continue
        score = annotation.get("score")
        if score is not None and _finite_numbers([score]) is None:
            sink.report(f"{where}.score", f"score is not a finite number: {score!r}")
            continue
        rows = per_image[image_id]
        for column, value in zip(rows, (corners, class_of[category], index + 1, False,
                                        None if score is None else float(score))):
            column.append(value)
    frames = []
    for image_id, (stem, size) in images.items():
        corners, classes, lines, difficult, scores = per_image[image_id]
        frames.append(FrameLabels(stem, make_boxes(corners, classes, lines, difficult, scores), size, path))
    return frames, names, tuple(sink.problems)


def write_coco(path: str | Path, frames, names: dict, obb: bool, image_ext: str = ".jpg",
               image_names: Optional[dict] = None) -> None:
    """Write one COCO instance file for the whole set, laid out as the reference tool writes it.

    Images are numbered 1.. in frame-name order and annotations 1.. in frame then box order, so an
    OBB file and an HBB file written from the same boxes join by id. ``category_id`` is the
    class id plus one. Oriented boxes carry the integer quad in ``segmentation`` and the
    shoelace area of that quad; horizontal ones only ``bbox`` and its area. A confidence goes
    in ``score`` (4 decimals). Corners should be :func:`~hbb2obb.io.frame_labels.canonical`.
    ``file_name`` is ``image_names[stem]`` when given (the real image file), else ``stem + image_ext``.
    """
    images, annotations = [], []
    for image_id, frame in enumerate(sorted(frames, key=lambda f: f.stem), start=1):
        width, height = pixel_size(frame.size, frame.stem, "COCO")
        file_name = (image_names or {}).get(frame.stem, f"{frame.stem}{image_ext}")
        images.append({"id": image_id, "file_name": file_name, "width": width, "height": height})
        boxes = frame.boxes
        envelopes = integer_envelope(boxes.corners)
        quads = integer_corners(boxes.corners)
        for row in range(len(boxes)):
            x0, y0, x1, y1 = envelopes[row].tolist()
            annotation = {"id": len(annotations) + 1, "image_id": image_id,
                          "category_id": int(boxes.class_id[row]) + 1}
            if obb:
                quad = quads[row].astype(np.float64)
                x, y = quad[:, 0], quad[:, 1]
                area = abs(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1))) / 2
                annotation["segmentation"] = [quads[row].reshape(-1).tolist()]
                annotation.update(bbox=[x0, y0, x1 - x0, y1 - y0], area=int(round(float(area))), iscrowd=0)
            else:
                annotation.update(bbox=[x0, y0, x1 - x0, y1 - y0], area=(x1 - x0) * (y1 - y0), iscrowd=0)
            if boxes.score is not None:
                annotation["score"] = round(float(boxes.score[row]), 4)
            annotations.append(annotation)
    data = {
        "info": {},
        "licenses": [],
        "images": images,
        "annotations": annotations,
        "categories": [{"id": class_id + 1, "name": name} for class_id, name in sorted(names.items())],
    }
    write_text_atomic(path, json.dumps(data, indent=1))
