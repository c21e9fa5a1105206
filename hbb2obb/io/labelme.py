"""LabelMe JSON: one file per frame, a shape per box (2 points: horizontal, 4 points: oriented).

Problems are named by JSON path, as ``frame.json:shapes[3].points``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import numpy as np

from hbb2obb.errors import InputError
from hbb2obb.io.atomic import write_text_atomic
from hbb2obb.io.coco import load_json
from hbb2obb.io.frame_labels import FrameLabels, axis_rect, make_boxes, names_lookup, pixel_size
from hbb2obb.io.text import ProblemSink

LABELME_VERSION = "5.5.0"


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
        Without a map: names met so far across the set, extended in place, first seen first
        (ids 0, 1, ...), as the reference tool numbers them.

    Returns
    -------
    FrameLabels
        ``boxes.line`` is the 1-based position in ``shapes``; the size is ``imageWidth`` x
        ``imageHeight`` when the file gives them.
    """
    path = Path(path)
    data = load_json(path)
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
        if not isinstance(points, list) or len(points) not in (2, 4) or not all(
                isinstance(p, list) and len(p) == 2 and all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                                            for v in p) for p in points):
            sink.report(f"{where}.points", "expected 2 points (a rectangle) or 4 (an oriented box) of [x, y]")
            continue
        xy = np.array(points, dtype=np.float64)
        if not np.isfinite(xy).all():
            sink.report(f"{where}.points", "a coordinate is not finite")
            continue
        label = shape.get("label")
        if not isinstance(label, str) or not label:
            sink.report(f"{where}.label", "missing class label")
            continue
        if lookup is not None:
            class_id = lookup.get(label, lookup.get(label.lower()))
            if class_id is None:
                sink.report(f"{where}.label", f"class name {label!r} is not in the label map")
                continue
        else:
            known = {name: class_id for class_id, name in discovered.items()}
            class_id = known.get(label, len(discovered))
            discovered.setdefault(class_id, label)
        if len(points) == 2:
            quad = axis_rect(xy[:, 0].min(), xy[:, 1].min(), xy[:, 0].max(), xy[:, 1].max())
        else:
            quad = xy.tolist()
        corners.append(quad)
        classes.append(class_id)
        lines.append(index + 1)
    width, height = data.get("imageWidth"), data.get("imageHeight")
    size = (width, height) if isinstance(width, (int, float)) and isinstance(height, (int, float)) and \
        width > 0 and height > 0 else None
    return FrameLabels(path.stem, make_boxes(corners, classes, lines), size, path, tuple(sink.problems))


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
