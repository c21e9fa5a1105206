"""LabelMe JSON: one file per frame, a shape per box (2 points: horizontal, 4 points: oriented).

Problems are named by JSON path, as ``frame.json:shapes[3].points``.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Optional

import numpy as np

from hbb2obb.errors import InputError
from hbb2obb.io.atomic import write_text_atomic
from hbb2obb.io.coco import load_json
from hbb2obb.io.frame_labels import (
    FrameLabels,
    axis_rect,
    image_name_of,
    json_numbers,
    json_size,
    make_boxes,
    names_lookup,
    pixel_size,
    shown_json,
)
from hbb2obb.io.text import ProblemSink, parse_class_id

LABELME_VERSION = "5.5.0"
BOX_SHAPES = {"rectangle": (2,), "polygon": (4,)}
"""The shape types that are boxes, and their point counts; a file without ``shape_type`` goes by the count.
A circle (2 points: centre and rim), line, point or line strip is not a box, whatever its point count."""


def is_labelme(data) -> bool:
    """Whether parsed JSON is a LabelMe file (an object with ``shapes``)."""
    return isinstance(data, dict) and "shapes" in data


def read_labelme(path: str | Path, *, strict: bool, label_map: Optional[dict] = None,
                 discovered: Optional[dict] = None) -> FrameLabels:
    """Read one LabelMe file.

    Parameters
    ----------
    path : path-like
    strict : bool
        Raise at the first broken shape (ground truth) or skip and list it (predictions).
    label_map : dict of int to str, optional
        Labels become these class ids; a label the map lacks is broken.
    discovered : dict of int to str, optional
        Without a map: labels met so far across the set, extended in place. A label that is an
        integer is that class id; a name takes the lowest free id, first seen first (ids 0,
        1, ... as the reference tool numbers a set of names).

    Returns
    -------
    FrameLabels
        ``boxes.line`` is the 1-based position in ``shapes``; the size is ``imageWidth`` x
        ``imageHeight`` when the file gives them.
    """
    path = Path(path)
    data = load_json(path, "LabelMe file")
    if not is_labelme(data) or not isinstance(data["shapes"], list):
        raise InputError(f"{path}: not a LabelMe file (needs a 'shapes' list)")
    sink = ProblemSink(path, strict)
    lookup = names_lookup(label_map) if label_map else None
    if lookup is None and discovered is None:
        discovered = {}
    corners, classes, lines = [], [], []
    for index, shape in enumerate(data["shapes"]):
        where = f"shapes[{index}]"
        if not isinstance(shape, dict):
            sink.report(where, "not an object")
            continue
        points = shape.get("points")
        kind = shape.get("shape_type")
        wanted = BOX_SHAPES.get(kind) if kind is not None else (2, 4)
        if wanted is None:
            sink.report(f"{where}.shape_type", f"a {shown_json(kind)} shape is not a box (only rectangles "
                        "and 4-point polygons are)")
            continue
        if not isinstance(points, list) or len(points) not in wanted or not all(
                isinstance(p, list) and len(p) == 2 for p in points):
            sink.report(f"{where}.points", "expected 2 points (a rectangle) or 4 (an oriented box) of [x, y]")
            continue
        values, reason = json_numbers([v for p in points for v in p], None, "points")
        if reason is not None:
            sink.report(f"{where}.points", reason)
            continue
        label = shape.get("label")
        if not isinstance(label, str) or not label.strip():
            sink.report(f"{where}.label", "missing class label")
            continue
        class_id, reason = _class_of(label.strip(), lookup, discovered, f"{path}:{where}.label")
        if class_id is None:
            sink.report(f"{where}.label", reason)
            continue
        if len(points) == 2:
            xy = np.array(values, dtype=np.float64).reshape(-1, 2)
            quad = axis_rect(xy[:, 0].min(), xy[:, 1].min(), xy[:, 0].max(), xy[:, 1].max())
        else:
            quad = [values[0:2], values[2:4], values[4:6], values[6:8]]
        corners.append(quad)
        classes.append(class_id)
        lines.append(index + 1)
    size, reason = json_size(data.get("imageWidth"), data.get("imageHeight"))
    if reason is not None:
        sink.report("imageWidth", reason)
    return FrameLabels(path.stem, make_boxes(corners, classes, lines), size, path, tuple(sink.problems),
                       image_name_of(data.get("imagePath"), path.stem))


def _class_of(label: str, lookup: Optional[dict], discovered: dict, where: str) -> tuple[Optional[int], Optional[str]]:
    """A label's class id, or why it has none.

    With a map: the name (exact, then ignoring case), else a label that is an integer the map
    holds. Without one: an integer label is that class id; a name takes the lowest id no other
    label holds, first seen first. Two labels for one class (``car`` and ``Car``; ``car`` and
    ``0`` once ``car`` is 0) are an error for the whole set, as in a label map.
    """
    number = parse_class_id(label)
    if lookup is not None:
        class_id = lookup.get(label, lookup.get(label.lower()))
        if class_id is None and number is not None and number in lookup.values():
            class_id = number
        if class_id is None:
            return None, f"class name {label!r} is not in the label map"
        return class_id, None
    for class_id, name in discovered.items():
        if name == label:
            return class_id, None
        if name.lower() == label.lower() or (number is not None and class_id == number):
            raise InputError(f"{where}: LabelMe labels {name!r} and {label!r} would both be class {class_id} "
                             "(give a label map with -mp/--map_path)")
    if number is None:
        number = next(i for i in itertools.count() if i not in discovered)
    discovered[number] = label
    return number, None


def write_labelme(path: str | Path, frame: FrameLabels, names: dict, obb: bool, image_ext: str = ".jpg",
                  image_name: Optional[str] = None) -> None:
    """Write one LabelMe file as the reference tool does: 4-point polygons or 2-point rectangles.

    ``imagePath`` is ``image_name`` (the real image file) when given, else ``stem + image_ext``.
    """
    width, height = pixel_size(frame.size, frame.stem, "LabelMe")
    shapes = []
    for class_id, quad in zip(frame.boxes.class_id.tolist(), frame.boxes.corners):
        if obb:
            points = [[float(x), float(y)] for x, y in quad]
        else:
            points = [[float(quad[:, 0].min()), float(quad[:, 1].min())],
                      [float(quad[:, 0].max()), float(quad[:, 1].max())]]
        shapes.append({"label": names.get(class_id, str(class_id)), "points": points, "group_id": None,
                       "description": "", "shape_type": "polygon" if obb else "rectangle", "flags": {}})
    data = {"version": LABELME_VERSION, "flags": {}, "shapes": shapes,
            "imagePath": image_name or f"{frame.stem}{image_ext}", "imageData": None,
            "imageHeight": height, "imageWidth": width}
    write_text_atomic(path, json.dumps(data, indent=2))
