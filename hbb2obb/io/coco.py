"""COCO instance files: one ``.json`` for a whole set of frames.

An oriented box is an 8-number polygon in ``segmentation`` (its envelope in ``bbox``); a
horizontal one is ``bbox`` ``[x, y, w, h]`` alone. Problems are named by JSON path, as
``file.json:annotations[12].bbox``, since a JSON file has no box per line.

COCO-style rotated boxes (Detectron2's rotated datasets and results, and the tools that write
their kind) are a ``bbox`` of five numbers ``[cx, cy, w, h, angle]`` without a segmentation: the
``w x h`` rectangle around the centre ``(cx, cy)`` in pixels, turned by ``angle``. Nothing in
the file says the angle's unit or direction, and a guess from the values would be silently
wrong where it fails, so such a file is read only with the reader's ``angle`` given
(:data:`~hbb2obb.io.format_names.COCO_ANGLES`: ``deg_ccw`` is Detectron2's ``XYWHA_ABS``,
degrees counter-clockwise as shown on screen; ``rad_cw`` the ``xywhr`` of Ultralytics and
mmrotate, radians clockwise on screen); without it the first such box is an error. Its corners
start at the ``(-w/2, -h/2)`` corner and go clockwise on screen.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Optional

import numpy as np

from hbb2obb.errors import InputError
from hbb2obb.io.atomic import write_text_atomic
from hbb2obb.io.format_names import COCO_ANGLES
from hbb2obb.io.frame_labels import (
    FrameLabels,
    axis_rect,
    image_name_of,
    integer_corners,
    integer_envelope,
    json_numbers,
    json_size,
    make_boxes,
    names_lookup,
    pixel_size,
    shown_json,
    turned_rect,
)
from hbb2obb.io.text import ProblemSink
from hbb2obb.io.text_file import read_text_file
from hbb2obb.io.yaml_text import too_deep

COCO_KEYS = ("images", "annotations", "categories")
_INT64_LIMIT = 2**63  # class and image ids are stored as int64


@dataclass(frozen=True)
class CocoIdentity:
    """What a written COCO file takes from the COCO file its boxes were derived from (``--coco_from``).

    Read and checked against the frames by :mod:`hbb2obb.io.coco_identity`; :func:`write_coco`
    only applies it. Box ``k`` of a frame is annotation ``k`` of that frame's image in the source.

    Attributes
    ----------
    source : Path
        The source COCO file.
    images : dict of str to dict
        Frame name to the source's image object (its ``id``, and keys such as ``license``).
    annotation_ids : dict of str to list of int
        Frame name to the ids of its annotations, in the source's order.
    annotation_names : dict of str to list of str
        Frame name to the category name of each of those annotations.
    categories : dict of str to dict
        Category name to the source's category object (its ``id`` and ``supercategory``).
    licenses : list
        The source's ``licenses``, carried as they are.
    """

    source: Path
    images: dict
    annotation_ids: dict
    annotation_names: dict
    categories: dict
    licenses: list = field(default_factory=list)


def load_json(path: Path, what: str = "JSON file"):
    """The parsed JSON of a file; :class:`InputError` at ``file:line`` when it is not JSON.

    UTF-8, or UTF-16/32 with a byte order mark (:func:`~hbb2obb.io.text_file.read_text_file`);
    nesting too deep for Python's stack, and integers of more digits than Python converts, are
    errors naming the file rather than tracebacks. A document :func:`sniff_json` parsed last is
    handed over rather than parsed again, when the file is unchanged since (same size,
    modification time and inode).
    """
    key = file_key(path)
    if key is not None and _SNIFFED and _SNIFFED[0][0] == key:
        return _SNIFFED.pop()[1]
    return _parsed(path, what)


def sniff_json(path: Path):
    """:func:`load_json` for a look at a file's format: the document is kept for the next
    :func:`load_json` of the same file (a format's reader, right after), and for that only.

    One document at most is kept, and given once: a 30 MB COCO file is then parsed once per
    command instead of twice, and kept no longer than until it is read.
    """
    _SNIFFED.clear()
    key = file_key(path)
    data = _parsed(path, "JSON file")
    if key is not None:
        _SNIFFED.append((key, data))
    return data


def forget_sniffed() -> None:
    """Drop the document :func:`sniff_json` kept, if no reader took it (a set's reading ends so)."""
    _SNIFFED.clear()


_SNIFFED: list = []  # at most one (file key, document): parsed by sniff_json, for the reader that follows


def file_key(path: Path) -> Optional[tuple]:
    """What tells a file's versions apart: its path, inode, size and modification time (``None``: no such file)."""
    try:
        stat = Path(path).stat()
    except OSError:
        return None
    return str(path), stat.st_ino, stat.st_size, stat.st_mtime_ns


def _parsed(path: Path, what: str):
    text = read_text_file(path, what)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg})") from None
    except RecursionError:
        raise too_deep(path, what) from None
    except ValueError:  # "Exceeds the limit (4300 digits) for integer string conversion": rare, so read again
        return json.loads(text, parse_int=_integer_or_infinity)  # such a number is then refused where it is


def _integer_or_infinity(token: str):
    """A JSON integer; one of more digits than Python converts is beyond any float: infinity."""
    return int(token) if len(token) <= 4000 else math.inf if token[0] != "-" else -math.inf


def is_coco(data) -> bool:
    """Whether parsed JSON has the three top-level keys of a COCO instance file."""
    return isinstance(data, dict) and all(key in data for key in COCO_KEYS)


def is_id(value) -> bool:
    """A JSON integer id that fits an int64 (``true`` is not one)."""
    return isinstance(value, int) and not isinstance(value, bool) and -_INT64_LIMIT < value < _INT64_LIMIT


def category_classes(data: dict, path: Path, label_map: dict) -> tuple[dict, dict]:
    """``{category id: class id}`` and the class names, from the label map or the ids themselves.

    Without a map a category's class id is its id minus one: :func:`write_coco` writes class
    ``c`` as category ``c + 1``, so classes survive YOLO -> COCO -> YOLO (the reference tool
    numbers categories by their position instead, which renumbers a set whose classes have gaps).
    A category id or name given twice (names compared ignoring case, as the label map compares
    them) is an error: its annotations would otherwise go to one class or the other silently.
    """
    categories = data["categories"]
    if not isinstance(categories, list):
        raise InputError(f"{path}:categories: must be a list")
    seen_ids, seen_names = {}, {}
    for index, category in enumerate(categories):
        if not isinstance(category, dict) or not is_id(category.get("id")):
            raise InputError(f"{path}:categories[{index}]: needs an integer 'id'")
        first = seen_ids.setdefault(category["id"], index)
        if first != index:
            raise InputError(f"{path}:categories[{index}]: category id {category['id']} is given twice "
                             f"(first at categories[{first}])")
        name = str(category.get("name", category["id"])).strip()
        first = seen_names.setdefault(name.lower(), index)
        if first != index:
            raise InputError(f"{path}:categories[{index}]: category name {name!r} is given twice "
                             f"(first at categories[{first}]; names are compared ignoring case)")
    if not label_map:
        return ({c["id"]: c["id"] - 1 for c in categories},
                {c["id"] - 1: str(c.get("name", c["id"])) for c in sorted(categories, key=lambda c: c["id"])})
    lookup = names_lookup(label_map)
    mapping = {}
    for index, category in enumerate(categories):
        name = str(category.get("name", ""))
        if name not in lookup and name.lower() not in lookup:
            raise InputError(f"{path}:categories[{index}].name: class name {name!r} is not in the label map")
        mapping[category["id"]] = lookup.get(name, lookup.get(name.lower()))
    return mapping, dict(label_map)


def frame_stem(file_name: str) -> Optional[str]:
    """The frame an image's ``file_name`` names: its last part without suffix, or ``None`` when odd.

    Folders (``train/a.jpg``, ``../a.jpg``, ``/data/a.jpg``, ``C:\\data\\a.jpg``) are dropped: a
    frame is known by its name alone. An empty name, one starting with a dot (``.jpg`` would be
    written as the hidden ``.txt``), ``.`` or ``..``, and control characters are refused.

    Examples
    --------
    >>> frame_stem("train/0001.jpg"), frame_stem("C:\\\\x\\\\b.png"), frame_stem(".jpg"), frame_stem("")
    ('0001', 'b', None, None)
    """
    name = file_name.replace("\\", "/").rsplit("/", 1)[-1]
    stem = Path(name).stem if name not in (".", "..") else ""
    if not stem or stem.startswith(".") or any(ord(c) < 32 or ord(c) == 127 for c in stem):
        return None
    return stem


def image_table(data: dict, path: Path, sink: ProblemSink) -> dict:
    """``{image id: (stem, size, image name)}`` in file order; a repeated id or name is an error."""
    images = data["images"]
    if not isinstance(images, list):
        raise InputError(f"{path}:images: must be a list")
    found, stems = {}, set()
    for index, image in enumerate(images):
        where = f"{path}:images[{index}]"
        if not isinstance(image, dict) or not is_id(image.get("id")) or not isinstance(image.get("file_name"), str):
            raise InputError(f"{where}: needs an integer 'id' and a 'file_name'")
        stem = frame_stem(image["file_name"])
        if stem is None:
            raise InputError(f"{where}.file_name: {image['file_name'][:60]!r} names no image file "
                             "(empty, hidden, '.' or '..', or with control characters)")
        if image["id"] in found or stem in stems:
            raise InputError(f"{where}: image id {image['id']} or name {stem!r} appears twice")
        size, reason = json_size(image.get("width"), image.get("height"))
        if reason is not None:
            sink.report(f"images[{index}].width", reason)
        found[image["id"]] = (stem, size, image_name_of(image["file_name"], stem))
        stems.add(stem)
    return found


def _segmentation_reason(segmentation) -> str:
    """Why a segmentation is not one 4-corner polygon, in the user's terms."""
    if isinstance(segmentation, dict):
        return "an RLE mask is not an oriented box (expected one polygon of 8 numbers)"
    if isinstance(segmentation, list) and all(isinstance(p, list) for p in segmentation):
        if len(segmentation) > 1:
            return f"{len(segmentation)} polygons; an oriented box is one polygon of 8 numbers"
        return f"a polygon of {len(segmentation[0])} numbers; an oriented box is one of 8 (4 corners)"
    return "expected one polygon of 8 numbers, as [[x1, y1, ..., x4, y4]]"


def _annotation_corners(annotation: dict, angle: Optional[str] = None) -> tuple[Optional[list], Optional[str],
                                                                                 Optional[str]]:
    """The annotation's quad, or the key at fault and the reason it has none.

    One 8-number polygon in ``segmentation`` is an oriented box; no segmentation (absent,
    ``null`` or ``[]``) is the horizontal ``bbox``, or with five numbers the rotated one (read
    with ``angle``, one of :data:`~hbb2obb.io.format_names.COCO_ANGLES`). Anything else (6 or 10
    numbers, several polygons, an RLE mask) is broken: neither the bbox nor the first polygon is
    what it means.
    """
    segmentation = annotation.get("segmentation")
    if segmentation not in (None, []):
        if not (isinstance(segmentation, list) and len(segmentation) == 1 and isinstance(segmentation[0], list)
                and len(segmentation[0]) == 8):
            return None, "segmentation", _segmentation_reason(segmentation)
        values, reason = json_numbers(segmentation[0], 8, "polygon")
        if reason is not None:
            return None, "segmentation", reason
        return [values[0:2], values[2:4], values[4:6], values[6:8]], None, None
    bbox = annotation.get("bbox")
    if isinstance(bbox, list) and len(bbox) == 5:
        return _rotated_corners(bbox, angle)
    bbox, reason = json_numbers(bbox, 4, "bbox")
    if reason is not None:
        return None, "bbox", f"expected [x, y, width, height] (or an 8-number segmentation): {reason}"
    x, y, w, h = bbox
    if w < 0 or h < 0:
        return None, "bbox", "width and height must not be negative"
    return axis_rect(x, y, x + w, y + h), None, None


def _rotated_corners(bbox: list, angle: Optional[str]) -> tuple[Optional[list], Optional[str], Optional[str]]:
    """The corners of a five-number ``bbox`` ``[cx, cy, w, h, angle]`` read with the angle rule ``angle``."""
    if angle is None:
        raise _AngleUnsaid
    values, reason = json_numbers(bbox, 5, "bbox")
    if reason is not None:
        return None, "bbox", f"expected [cx, cy, width, height, angle]: {reason}"
    cx, cy, w, h, turn = values
    if w < 0 or h < 0:
        return None, "bbox", "width and height must not be negative"
    turn = math.radians(turn) if angle.startswith("deg") else turn
    # turned_rect turns clockwise on screen (y down): a counter-clockwise angle is its negative
    return turned_rect(cx, cy, w, h, turn if angle.endswith("_cw") else -turn), None, None


class _AngleUnsaid(Exception):
    """A five-number bbox met with no angle rule given: the whole file is unreadable, not one box."""


def read_coco(path: str | Path, *, strict: bool, label_map: Optional[dict] = None,
              angle: Optional[str] = None) -> tuple[list, dict, tuple]:
    """Read a COCO instance file: one :class:`FrameLabels` per image, and the class names.

    Parameters
    ----------
    path : path-like
    strict : bool
        Raise :class:`~hbb2obb.errors.LabelFormatError` at the first broken annotation (ground
        truth), or skip it and list it in ``problems`` (predictions).
    label_map : dict of int to str, optional
        Category names become these class ids. Without it, a class id is its category id minus
        one, the inverse of :func:`write_coco`.
    angle : str, optional
        How the angle of a five-number ``bbox`` is given (see the module docstring); a file
        holding one is an :class:`InputError` without it.

    Returns
    -------
    frames : list of FrameLabels
        In the order of ``images``; ``boxes.line`` is the 1-based position in ``annotations``;
        ``boxes.crowd`` is ``iscrowd`` (a crowd region: neither hit nor miss), and so is
        ``boxes.difficult``, so that formats with a difficult flag keep the region out of counts.
    names : dict of int to str
    problems : tuple of LabelProblem
        The skipped annotations, named by JSON path.
    """
    path = Path(path)
    data = load_json(path)
    if not is_coco(data):
        raise InputError(f"{path}: not a COCO instance file (needs 'images', 'annotations' and 'categories')")
    class_of, names = category_classes(data, path, label_map or {})
    sink = ProblemSink(path, strict)
    images = image_table(data, path, sink)
    annotations = data["annotations"]
    if not isinstance(annotations, list):
        raise InputError(f"{path}:annotations: must be a list")
    per_image = {image_id: ([], [], [], [], []) for image_id in images}
    first_of_id: dict = {}  # annotation id -> index of the annotation that has it
    for index, annotation in enumerate(annotations):
        where = f"annotations[{index}]"
        if not isinstance(annotation, dict):
            sink.report(where, "not an object")
            continue
        annotation_id = annotation.get("id")
        if isinstance(annotation_id, (int, float, str)):  # ids are optional (detector results carry none)
            if annotation_id in first_of_id:
                sink.report(f"{where}.id", f"annotation id {shown_json(annotation_id)} is also annotations"
                            f"[{first_of_id[annotation_id]}]'s: ids must be unique (pycocotools keeps one of "
                            "the two and reads it twice)")
                continue
            first_of_id[annotation_id] = index
        image_id, category = annotation.get("image_id"), annotation.get("category_id")
        if not is_id(image_id) or image_id not in images:
            sink.report(f"{where}.image_id", f"no image with id {shown_json(image_id)}")
            continue
        if not is_id(category) or category not in class_of:
            sink.report(f"{where}.category_id", f"no category with id {shown_json(category)}")
            continue
        try:
            corners, key, reason = _annotation_corners(annotation, angle)
        except _AngleUnsaid:
            raise InputError(f"{path}:{where}.bbox: five numbers [cx, cy, w, h, angle], and nothing says the "
                             f"angle's unit and direction: give --coco_angle ({', '.join(COCO_ANGLES)})") from None
        if corners is None:
            sink.report(f"{where}.{key}", reason)
            continue
        score = annotation.get("score")
        if score is not None and json_numbers([score])[1] is not None:
            sink.report(f"{where}.score", f"score is not a finite number: {shown_json(score)}")
            continue
        crowd = annotation.get("iscrowd", 0)
        if crowd not in (0, 1) or isinstance(crowd, float):
            sink.report(f"{where}.iscrowd", f"must be 0 or 1, found {shown_json(crowd)}")
            continue
        rows = per_image[image_id]
        # a crowd region is also marked difficult: converted to DOTA or VOC it stays out of the
        # counts; the detection metrics tell the two apart by ``crowd``
        for column, value in zip(rows, (corners, class_of[category], index + 1, bool(crowd),
                                        None if score is None else float(score))):
            column.append(value)
    frames = []
    for image_id, (stem, size, image_name) in images.items():
        corners, classes, lines, difficult, scores = per_image[image_id]
        boxes = make_boxes(corners, classes, lines, difficult, scores)
        frames.append(FrameLabels(stem, replace(boxes, crowd=boxes.difficult), size, path, image_name=image_name))
    return frames, names, tuple(sink.problems)


def written_categories(names: dict, identity: Optional[CocoIdentity] = None) -> tuple[list, dict]:
    """The ``categories`` of a written file and ``{class id: category id}``.

    Class ``c`` is category ``c + 1``. With ``identity``, a class whose name the source has takes
    that category as the source wrote it (id, supercategory and any other key), so the written
    file joins the source on ``category_id`` too; a class the source lacks takes an id above every
    source category's, so no two categories share one.

    Examples
    --------
    >>> written_categories({0: "car", 1: "bus"})
    ([{'id': 1, 'name': 'car'}, {'id': 2, 'name': 'bus'}], {0: 1, 1: 2})
    """
    if identity is None:
        return ([{"id": class_id + 1, "name": name} for class_id, name in sorted(names.items())],
                {class_id: class_id + 1 for class_id in names})
    fresh = max((category["id"] for category in identity.categories.values()), default=0)
    categories, ids = [], {}
    for class_id, name in sorted(names.items()):
        carried = identity.categories.get(name)
        if carried is None:
            fresh += 1
            carried = {"id": fresh, "name": name}
        categories.append(dict(carried))
        ids[class_id] = carried["id"]
    return categories, ids


def _image_entry(image_id: int, file_name: str, width: int, height: int, carried: Optional[dict]) -> dict:
    """One ``images`` object; the source's other keys (``license``, ``date_captured``...) follow ours."""
    entry = {"id": image_id, "file_name": file_name, "width": width, "height": height}
    for key, value in (carried or {}).items():
        entry.setdefault(key, value)
    return entry


def write_coco(path: str | Path, frames, names: dict, obb: bool, image_ext: str = ".jpg",
               image_names: Optional[dict] = None, identity: Optional[CocoIdentity] = None,
               info: Optional[dict] = None) -> None:
    """Write one COCO instance file for the whole set, laid out as the reference tool writes it.

    Images are numbered 1.. in frame-name order and annotations 1.. in frame then box order, so an
    OBB file and an HBB file written from the same boxes join by id. ``category_id`` is the
    class id plus one. Oriented boxes carry the integer quad in ``segmentation`` and the
    shoelace area of that quad; horizontal ones only ``bbox`` and its area. A confidence goes
    in ``score`` (4 decimals). Corners should be :func:`~hbb2obb.io.frame_labels.canonical`.
    ``file_name`` is ``image_names[stem]`` when given (the real image file), else ``stem + image_ext``.

    ``identity`` (checked against ``frames`` beforehand, see :mod:`hbb2obb.io.coco_identity`)
    replaces the numbering by the source file's image, annotation and category ids and carries
    its ``licenses``; ``info`` is written as the ``info`` object (empty when not given).
    """
    categories, category_ids = written_categories(names, identity)
    images, annotations = [], []
    for position, frame in enumerate(sorted(frames, key=lambda f: f.stem), start=1):
        width, height = pixel_size(frame.size, frame.stem, "COCO")
        file_name = (image_names or {}).get(frame.stem, f"{frame.stem}{image_ext}")
        carried = identity.images[frame.stem] if identity is not None else None
        image_id = carried["id"] if carried is not None else position
        images.append(_image_entry(image_id, file_name, width, height, carried))
        boxes = frame.boxes
        envelopes = integer_envelope(boxes.corners)
        quads = integer_corners(boxes.corners)
        crowd = np.zeros(len(boxes), dtype=bool) if boxes.crowd is None else boxes.crowd
        for row in range(len(boxes)):
            x0, y0, x1, y1 = envelopes[row].tolist()
            annotation_id = (identity.annotation_ids[frame.stem][row] if identity is not None
                             else len(annotations) + 1)
            annotation = {"id": annotation_id, "image_id": image_id,
                          "category_id": category_ids[int(boxes.class_id[row])]}
            if obb:
                quad = quads[row].astype(np.float64)
                x, y = quad[:, 0], quad[:, 1]
                area = abs(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1))) / 2
                annotation["segmentation"] = [quads[row].reshape(-1).tolist()]
                annotation.update(bbox=[x0, y0, x1 - x0, y1 - y0], area=int(round(float(area))),
                                  iscrowd=int(crowd[row]))
            else:
                annotation.update(bbox=[x0, y0, x1 - x0, y1 - y0], area=(x1 - x0) * (y1 - y0), iscrowd=int(crowd[row]))
            if boxes.score is not None:
                annotation["score"] = round(float(boxes.score[row]), 4)
            annotations.append(annotation)
    data = {
        "info": dict(info or {}),
        "licenses": list(identity.licenses) if identity is not None else [],
        "images": images,
        "annotations": annotations,
        "categories": categories,
    }
    write_text_atomic(path, json.dumps(data, indent=1))
