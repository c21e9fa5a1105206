"""Label Studio's JSON export: one ``.json`` file for the set, a list of tasks.

A task is one image: ``data.image`` names it and ``annotations[].result[]`` (or
``predictions[].result[]``) hold its regions. A box is a region of type ``rectanglelabels``:

``value.x``, ``value.y``
    The box's top-left corner before it is turned, in percent of ``original_width`` and
    ``original_height`` (the region's own keys: the image's size in pixels).
``value.width``, ``value.height``
    Its sides, in percent of the same.
``value.rotation``
    Degrees clockwise as shown on screen, about that corner ``(x, y)`` (not the centre).
``value.rectanglelabels[0]``
    The class name.

So, with ``X, Y, w, h`` in pixels and ``a`` the rotation, the corners are ``(X, Y)``,
``(X + w cos a, Y + w sin a)``, ``(X + w cos a - h sin a, Y + w sin a + h cos a)`` and
``(X - h sin a, Y + h cos a)``: clockwise on screen from the corner that was the top-left.

Reading: the ``annotations`` of every task when the file has any annotation that was not
cancelled, else its ``predictions`` (a file holding both is read as annotations). A task with
more than one annotation (or, for predictions, more than one prediction) is refused: which one
is meant is not ours to guess. A region's confidence is its ``score``, else the prediction's.
Regions that are not boxes (polygons, brushes, key points) are broken rows; regions with no
shape (choices, text) are passed over. Class ids come from the label map; without one, the
names found, sorted. Problems are named by JSON path, as ``file.json:[3].annotations[0].result[2]``.

Frames are named by ``data.image``'s last part without its suffix (a URL's query and
percent-escapes undone; Label Studio's local-storage links ``/data/local-files/?d=dir/a.jpg``
name ``a``). A file uploaded to Label Studio is stored as ``/data/upload/<project>/<8 hex
digits>-<name>``: under ``/data/upload/`` that 8-digit prefix is dropped, so
``/data/upload/1/3f2a9c1b-a.jpg`` is frame ``a``.

Writing (pre-annotations to import): one task per frame, ``data.image`` the image's file name
(point it at your storage before importing), regions with ``from_name`` ``label`` and
``to_name`` ``image`` (the names of Label Studio's rectangle-labels template). A set with
confidences is written as ``predictions`` (each region's ``score``; the task's ``score`` their
mean), one without as ``annotations``.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Optional
from urllib.parse import parse_qs, unquote, urlsplit

import numpy as np

from hbb2obb.errors import InputError
from hbb2obb.io.atomic import write_text_atomic
from hbb2obb.io.coco import frame_stem, load_json
from hbb2obb.io.frame_labels import (
    FrameLabels,
    image_name_of,
    json_numbers,
    json_size,
    make_boxes,
    names_lookup,
    pixel_size,
    shown_json,
)
from hbb2obb.io.text import ProblemSink

BOX_TYPE = "rectanglelabels"
#: region types that draw a shape other than a box: a broken row, never passed over unseen
OTHER_SHAPES = ("rectangle", "polygon", "polygonlabels", "ellipse", "ellipselabels", "brush", "brushlabels",
                "keypoint", "keypointlabels", "bitmask", "vectorlabels")
_UPLOAD_PREFIX = re.compile(r"[0-9a-f]{8}-")
_DECIMALS = 12  # percent of a side and degrees: corners of a 10^5-px frame round-trip within 1e-6 px


def sniff(head: bytes) -> bool:
    """Whether a ``.json`` file's head opens a list of tasks with ``data`` and annotations or predictions."""
    head = head.removeprefix(b"\xef\xbb\xbf").lstrip()
    return (head.startswith(b"[") and b'"data"' in head
            and (b'"annotations"' in head or b'"predictions"' in head) and b'"rbox"' not in head)


def task_frame(image: str) -> tuple[Optional[str], Optional[str]]:
    """``(frame, image file name)`` a task's ``data.image`` names; ``(None, None)`` when it names none.

    Examples
    --------
    >>> task_frame("/data/upload/1/3f2a9c1b-a.jpg"), task_frame("/data/local-files/?d=imgs/b%20c.png")
    (('a', 'a.jpg'), ('b c', 'b c.png'))
    >>> task_frame("s3://bucket/x/3f2a9c1b-d.jpg?X-Amz=1")
    ('3f2a9c1b-d', '3f2a9c1b-d.jpg')
    """
    parts = urlsplit(image)
    linked = bool(parts.netloc) or parts.path.startswith("/data/")  # a link Label Studio serves: %-escaped
    path = parts.path
    query = parse_qs(parts.query)
    if parts.path.rstrip("/").endswith("/data/local-files") and query.get("d"):
        path = query["d"][0]  # parse_qs has undone its escapes
    elif linked:
        path = unquote(path)
    elif parts.scheme and len(parts.scheme) == 1:  # a Windows drive letter, not a URL scheme
        path = image
    name = path.replace("\\", "/").rsplit("/", 1)[-1]
    if parts.path.startswith("/data/upload/") and _UPLOAD_PREFIX.match(name):
        name = name[9:]
    stem = frame_stem(name)
    return (stem, name) if stem is not None else (None, None)


def box_corners(value: dict, width: float, height: float) -> tuple[Optional[list], Optional[str]]:
    """A ``rectanglelabels`` value's corners in pixels (see the module docstring), or why it has none.

    Examples
    --------
    >>> value = {"x": 10, "y": 20, "width": 30, "height": 10, "rotation": 90}
    >>> [[round(v, 6) + 0.0 for v in p] for p in box_corners(value, 200, 100)[0]]
    [[20.0, 20.0], [20.0, 80.0], [10.0, 80.0], [10.0, 20.0]]
    """
    numbers, reason = json_numbers([value.get(k) for k in ("x", "y", "width", "height")], 4, "box")
    if reason is not None:
        return None, f"x, y, width, height: {reason}"
    rotation = value.get("rotation", 0)
    turn, reason = json_numbers([rotation], 1, "rotation")
    if reason is not None:
        return None, reason
    x, y, w, h = (v / 100 * side for v, side in zip(numbers, (width, height, width, height)))
    if w < 0 or h < 0:
        return None, "width and height must not be negative"
    a = math.radians(turn[0])
    c, s = math.cos(a), math.sin(a)
    return [[x, y], [x + w * c, y + w * s], [x + w * c - h * s, y + w * s + h * c], [x - h * s, y + h * c]], None


def _pick(task: dict, key: str, where: str, sink: ProblemSink) -> Optional[dict]:
    """The one annotation (or prediction) of a task that is read; ``None`` when it has none, or several."""
    entries = task.get(key) or []
    if not isinstance(entries, list):
        sink.report(f"{where}.{key}", "must be a list")
        return None
    kept = [e for e in entries if isinstance(e, dict) and not e.get("was_cancelled")]
    if len(kept) > 1:
        sink.report(f"{where}.{key}", f"{len(kept)} {key} of one image; keep the one to read (which is meant "
                                      "is not ours to guess)")
        return None
    return kept[0] if kept else None


def _regions(entry: Optional[dict], where: str, sink: ProblemSink) -> list:
    """``(where, label, value, size, score)`` of every box of an annotation or prediction."""
    if entry is None:
        return []
    result = entry.get("result") or []
    if not isinstance(result, list):
        sink.report(f"{where}.result", "must be a list")
        return []
    found = []
    for index, item in enumerate(result):
        here = f"{where}.result[{index}]"
        kind = item.get("type") if isinstance(item, dict) else None
        if kind in OTHER_SHAPES:
            sink.report(here, f"a {kind} region is not a box (only rectanglelabels are read)")
            continue
        if kind != BOX_TYPE:
            if not isinstance(item, dict):
                sink.report(here, "not an object")
            continue  # choices, text areas, relations: nothing drawn
        value = item.get("value")
        labels = value.get("rectanglelabels") if isinstance(value, dict) else None
        if not isinstance(labels, list) or len(labels) != 1 or not isinstance(labels[0], str) or not labels[0].strip():
            sink.report(here, f"value.rectanglelabels must hold one class name, found {shown_json(labels)}")
            continue
        size, reason = json_size(item.get("original_width"), item.get("original_height"))
        if size is None:
            sink.report(here, reason or "original_width and original_height are needed (percent of what?)")
            continue
        turned, reason = json_numbers([item.get("image_rotation", 0)], 1, "image_rotation")
        if reason is not None or turned[0] != 0:
            sink.report(here, reason or "the image was turned in Label Studio (image_rotation): not read")
            continue
        score = item.get("score", entry.get("score"))
        if score is not None and json_numbers([score])[1] is not None:
            sink.report(f"{here}.score", f"score is not a finite number: {shown_json(score)}")
            continue
        found.append((here, labels[0].strip(), value, size, score))
    return found


def read(path: str | Path, *, strict: bool, label_map: Optional[dict] = None) -> tuple[list, dict, tuple]:
    """Read a Label Studio JSON export: one :class:`FrameLabels` per task, the class names, the problems.

    Parameters
    ----------
    path : path-like
    strict : bool
        Raise at the first broken region (ground truth), or skip it and list it (predictions).
    label_map : dict of int to str, optional
        Class names become these ids; a name the map lacks is a broken region.

    Returns
    -------
    frames : list of FrameLabels
        In task order; ``boxes.line`` is the 1-based position of the region in its result list.
    names : dict of int to str
    problems : tuple of LabelProblem
    """
    path = Path(path)
    tasks = load_json(path, "Label Studio file")
    if not isinstance(tasks, list):
        raise InputError(f"{path}: not a Label Studio JSON export (expected a list of tasks)")
    sink = ProblemSink(path, strict)
    key = "annotations" if any(isinstance(t, dict) and any(isinstance(e, dict) and not e.get("was_cancelled")
                                                           for e in (t.get("annotations") or []
                                                                     if isinstance(t.get("annotations"), list) else []))
                               for t in tasks) else "predictions"
    read_tasks, seen = [], {}
    for index, task in enumerate(tasks):
        where = f"[{index}]"
        data = task.get("data") if isinstance(task, dict) else None
        image = data.get("image") if isinstance(data, dict) else None
        if not isinstance(image, str):
            raise InputError(f"{path}:{where}.data.image: every task needs the image it shows (found "
                             f"{shown_json(image)})")
        stem, name = task_frame(image)
        if stem is None:
            raise InputError(f"{path}:{where}.data.image: {image[:60]!r} names no image file")
        if stem in seen:
            raise InputError(f"{path}:{where}.data.image: frame {stem!r} is also task [{seen[stem]}]")
        seen[stem] = index
        entry = _pick(task, key, where, sink)
        position = f"{where}.{key}[{(task.get(key) or []).index(entry)}]" if entry is not None else where
        read_tasks.append((stem, name, _regions(entry, position, sink)))
    if label_map:
        lookup, names = names_lookup(label_map), dict(label_map)
    else:
        found = sorted({label for *_, regions in read_tasks for _, label, *_ in regions})
        names = dict(enumerate(found))
        lookup = {name: class_id for class_id, name in names.items()}
    frames = []
    for stem, name, regions in read_tasks:
        corners, classes, lines, scores, sizes = [], [], [], [], set()
        for here, label, value, size, score in regions:
            class_id = lookup.get(label, lookup.get(label.lower()))
            if class_id is None:
                sink.report(here, f"class name {label!r} is not in the label map")
                continue
            if sizes and size not in sizes:
                sink.report(here, f"original size {size[0]}x{size[1]} differs from the task's other regions")
                continue
            quad, reason = box_corners(value, *size)
            if reason is not None:
                sink.report(f"{here}.value", reason)
                continue
            sizes.add(size)
            corners.append(quad)
            classes.append(class_id)
            lines.append(int(here.rsplit("[", 1)[1][:-1]) + 1)
            scores.append(None if score is None else float(score))
        boxes = make_boxes(corners, classes, lines, scores=scores)
        frames.append(FrameLabels(stem, boxes, next(iter(sizes), None), path, image_name=image_name_of(name, stem)))
    return frames, names, tuple(sink.problems)


def region_value(quad: np.ndarray, width: float, height: float) -> dict:
    """A rectangle's ``x, y, width, height`` (percent) and ``rotation`` (degrees in ``[0, 360)``).

    The first side (corner 0 to corner 1) is the width, whichever way the corners go round; the
    height is the mean of the two sides next to it, the centre the mean of the corners, so a
    rectangle comes back as :func:`box_corners` makes it.

    Examples
    --------
    >>> value = {"x": 10, "y": 20, "width": 30, "height": 10, "rotation": 30}
    >>> {k: round(v, 9) for k, v in region_value(np.array(box_corners(value, 200, 100)[0]), 200, 100).items()}
    {'x': 10.0, 'y': 20.0, 'width': 30.0, 'height': 10.0, 'rotation': 30.0}
    """
    quad = np.asarray(quad, dtype=np.float64)
    centre = quad.mean(axis=0)
    first = quad[1] - quad[0]
    w = float(np.hypot(*first))
    h = float((np.hypot(*(quad[2] - quad[1])) + np.hypot(*(quad[3] - quad[0]))) / 2)
    u = first / w if w > 0 else np.array([1.0, 0.0])
    normal = np.array([-u[1], u[0]])  # u turned a quarter clockwise on screen: where the height goes
    corner = centre - u * w / 2 - normal * h / 2
    rotation = math.degrees(math.atan2(u[1], u[0])) % 360.0
    if rotation >= 360.0 - 1e-12:  # rounding up to a full turn: the same box at 0
        rotation = 0.0
    return {"x": _rounded(corner[0] / width * 100), "y": _rounded(corner[1] / height * 100),
            "width": _rounded(w / width * 100), "height": _rounded(h / height * 100), "rotation": _rounded(rotation)}


def _rounded(value: float) -> float:
    value = round(float(value), _DECIMALS)
    return 0.0 if value == 0 else value  # no -0.0


def write(path: str | Path, frames, names: dict, *, obb: bool, image_names: dict) -> None:
    """Write the set as Label Studio tasks to import: ``predictions`` when it has confidences, else ``annotations``.

    Every frame needs its size (the regions are in percent of it). ``obb`` is not consulted: a
    horizontal box is a box turned by 0 degrees.
    """
    import json

    del obb
    scored = any(frame.boxes.score is not None for frame in frames)
    tasks = []
    for index, frame in enumerate(frames):
        width, height = pixel_size(frame.size, frame.stem, "Label Studio")
        boxes, result = frame.boxes, []
        if scored and boxes.score is None and len(boxes):  # a confidence made up would be a silent lie
            raise InputError(f"{frame.source}: frame {frame.stem} has no confidences, while other frames have")
        for row in range(len(boxes)):
            name = str(names.get(int(boxes.class_id[row]), int(boxes.class_id[row])))
            item = {"id": f"r{index + 1}_{row + 1}", "type": BOX_TYPE, "from_name": "label", "to_name": "image",
                    "original_width": width, "original_height": height, "image_rotation": 0,
                    "value": {**region_value(boxes.corners[row], width, height), "rectanglelabels": [name]}}
            if scored:
                item["score"] = float(boxes.score[row])
            result.append(item)
        task = {"id": index + 1, "data": {"image": image_names[frame.stem]}}
        if scored:
            mean = float(np.mean(boxes.score)) if boxes.score is not None and len(boxes) else 0.0
            task["predictions"] = [{"model_version": "hbb2obb", "score": mean, "result": result}]
        else:
            task["annotations"] = [{"result": result}]
        tasks.append(task)
    write_text_atomic(path, json.dumps(tasks, indent=1, ensure_ascii=False) + "\n")
