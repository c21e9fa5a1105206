"""CVAT for images 1.1 and CVAT for video 1.1 XML: one ``<annotations>`` file for the whole set.

CVAT for images lists every frame as ``<image id name width height>`` holding its shapes; a
``<box xtl ytl xbr ybr rotation>`` is the rectangle ``xtl..xbr`` by ``ytl..ybr`` in pixels,
turned by ``rotation`` degrees clockwise as shown on screen (image y points down) about its
centre, as CVAT draws it and as CVAT's own export turns it into a polygon: corners
``(xtl, ytl), (xbr, ytl), (xbr, ybr), (xtl, ybr)`` each turned, the first corner first. A
``<polygon points="x0,y0;x1,y1;...">`` of exactly four points is the quadrilateral as given.

CVAT for video holds ``<track label>`` elements whose shapes carry a ``frame`` number; the export
already holds a shape for every frame of the track (interpolated ones with ``keyframe="0"``), and
a shape with ``outside="1"`` only says the object has left: it is no box. Frame ``N`` is named as
CVAT names video frames, ``frame_NNNNNN`` (six digits), unless the file also has an
``<image id="N" name=...>``, whose name wins. Frames without boxes count: a video file's frames
are the task's (``<meta>``'s ``size`` frames from ``start_frame`` every ``step=`` of
``frame_filter``), an image file's its ``<image>`` elements. The frame size is the image's
``width``/``height``, else ``<original_size>``.

A ``<tag>`` (a label of the whole frame) is passed over; any other shape (mask, polyline,
points, ellipse, cuboid, skeleton, or a polygon of other than four points) is broken, since the
file then holds something that is not a box. Class ids follow the label map, else the order of
the labels in ``<meta>`` (then any other name, first seen first).
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Optional
from xml.etree import ElementTree as ET

import numpy as np

from hbb2obb.errors import InputError
from hbb2obb.io.atomic import write_text_atomic
from hbb2obb.io.coco import frame_stem
from hbb2obb.io.frame_labels import FrameLabels, image_name_of, make_boxes, pixel_size
from hbb2obb.io.rolabelimg import rotated_corners
from hbb2obb.io.text import ProblemSink
from hbb2obb.io.voc import parse_with_lines
from hbb2obb.io.xml_labels import ClassNames, decimal_text, root_tag, xml_numbers, xml_size

BOX_KEYS = ("xtl", "ytl", "xbr", "ybr")
SHAPES = ("box", "polygon")
MAX_FRAMES = 10_000_000  # a video task's frame count beyond this is a broken file, not a video
RECTANGLE_TOLERANCE = 0.01  # px: a quad this close to a rectangle is written as a rotated <box>


def sniff(head: bytes) -> bool:
    """Whether an ``.xml`` file's head (its first bytes) opens CVAT's root element ``<annotations>``."""
    return root_tag(head) == "annotations"


def box_corners(xtl: float, ytl: float, xbr: float, ybr: float, rotation: float) -> list:
    """The corners of a CVAT ``<box>``: top-left, top-right, bottom-right, bottom-left, turned clockwise on screen.

    Examples
    --------
    >>> [[round(v, 6) + 0.0 for v in p] for p in box_corners(8, 19, 12, 21, 90)]
    [[11.0, 18.0], [11.0, 22.0], [9.0, 22.0], [9.0, 18.0]]
    """
    cx, cy = (xtl + xbr) / 2, (ytl + ybr) / 2
    angle = math.radians(rotation)
    c, s = math.cos(angle), math.sin(angle)
    corners = ((xtl, ytl), (xbr, ytl), (xbr, ybr), (xtl, ybr))
    return [[cx + (x - cx) * c - (y - cy) * s, cy + (x - cx) * s + (y - cy) * c] for x, y in corners]


def _shape_corners(shape) -> tuple[Optional[list], Optional[str]]:
    """A ``<box>``'s or 4-point ``<polygon>``'s corners, or why it has none."""
    if shape.tag == "box":
        values, reason = xml_numbers([shape.get(k) for k in BOX_KEYS] + [shape.get("rotation", "0")],
                                     [*BOX_KEYS, "rotation"])
        if reason is not None:
            return None, f"<box> {reason}"
        xtl, ytl, xbr, ybr, rotation = values
        if xbr < xtl or ybr < ytl:
            return None, f"<box> has xbr < xtl or ybr < ytl ({xtl:g} {ytl:g} {xbr:g} {ybr:g})"
        return box_corners(xtl, ytl, xbr, ybr, rotation), None
    points = (shape.get("points") or "").strip()
    pairs = [p.split(",") for p in points.split(";")] if points else []
    if len(pairs) != 4:
        return None, f"a <polygon> of {len(pairs)} points is not an oriented box (it needs 4)"
    if any(len(p) != 2 for p in pairs):
        return None, "<polygon> points must be x,y pairs separated by ';'"
    values, reason = xml_numbers([v for p in pairs for v in p], [f"point {i // 2 + 1} {'xy'[i % 2]}" for i in range(8)])
    if reason is not None:
        return None, f"<polygon> {reason}"
    return np.reshape(values, (4, 2)).tolist(), None


def _meta(root):
    """The ``<task>`` or ``<job>`` of ``<meta>`` (``None`` when the file has neither)."""
    meta = root.find("meta")
    if meta is None:
        return None
    return next((meta.find(k) for k in ("task", "job", "project") if meta.find(k) is not None), None)


def _video_frames(task, path: Path) -> list[int]:
    """The frame numbers of a video task, from its ``size``, ``start_frame``, ``stop_frame`` and ``frame_filter``."""
    if task is None or task.findtext("size") is None:
        return []
    values, reason = xml_numbers([task.findtext("size"), task.findtext("start_frame") or "0"], ["size", "start_frame"])
    match = re.fullmatch(r"\s*step\s*=\s*(\d+)\s*", task.findtext("frame_filter") or "step=1")
    if reason is not None or not all(float(v).is_integer() and 0 <= v <= MAX_FRAMES for v in values) or not match:
        raise InputError(f"{path}: <meta> gives no usable frame range (size, start_frame, frame_filter)")
    size, start = (int(v) for v in values)
    step = max(int(match.group(1)), 1)
    frames = [start + k * step for k in range(size)]
    stop = task.findtext("stop_frame")
    stop_values, _ = xml_numbers([stop], ["stop_frame"]) if stop is not None else ([None], None)
    if stop_values is not None and stop_values[0] is not None:
        frames = [f for f in frames if f <= stop_values[0]]
    return frames


def _frame_number(text: Optional[str]) -> Optional[int]:
    """A frame number or image id: a decimal integer ``0 <= n``; ``None`` otherwise."""
    text = (text or "").strip()
    return int(text) if text.isascii() and text.isdigit() and len(text) <= 18 else None


class _Frames:
    """The frames of a file as they are met: number to stem, size, image name and rows of boxes."""

    def __init__(self, path: Path, default_size: Optional[tuple]):
        self.path = path
        self.default_size = default_size
        self.info: dict[int, tuple] = {}
        self.rows: dict[int, list] = {}
        self.stems: set = set()

    def add(self, number: int, stem: str, size: Optional[tuple], image_name: Optional[str], line: int) -> None:
        if number in self.info or stem in self.stems:
            raise InputError(f"{self.path}:{line}: image id {number} or name {stem!r} appears twice")
        self.info[number] = (stem, size if size is not None else self.default_size, image_name)
        self.rows[number] = []
        self.stems.add(stem)

    def ensure(self, number: int, line: int) -> None:
        if number not in self.info:
            self.add(number, f"frame_{number:06d}", None, None, line)

    def frames(self) -> list:
        found = []
        for number in sorted(self.info):
            stem, size, image_name = self.info[number]
            rows = self.rows[number]
            corners, classes, lines = ([r[i] for r in rows] for i in range(3))
            found.append(FrameLabels(stem, make_boxes(corners, classes, lines), size, self.path,
                                     image_name=image_name))
        return found


def read(path: str | Path, *, strict: bool, label_map: Optional[dict] = None) -> tuple[list, dict, tuple]:
    """Read a CVAT for images or CVAT for video 1.1 file.

    Parameters
    ----------
    path : path-like
    strict : bool
        Raise at the first broken shape (ground truth) or skip and list it (predictions).
    label_map : dict of int to str, optional
        A shape's ``label`` becomes the class id; a name the map lacks is broken.

    Returns
    -------
    frames : list of FrameLabels
        By image id or frame number; ``boxes.line`` is the line of each shape.
    names : dict of int to str
    problems : tuple of LabelProblem
    """
    path = Path(path)
    root, element_line = parse_with_lines(path, "CVAT file")
    if root.tag != "annotations":
        raise InputError(f"{path}: not a CVAT XML file (root element <{root.tag}>, expected <annotations>)")
    sink = ProblemSink(path, strict)
    task = _meta(root)
    discovered: dict = {}
    if not label_map and task is not None:
        for label in task.iter("label"):  # the task's labels in order; a skeleton's points are no class
            name = (label.findtext("name") or "").strip()
            if name and label.find("parent") is None and name not in discovered.values():
                discovered[len(discovered)] = name
    classes = ClassNames(label_map, discovered)
    original = task.find("original_size") if task is not None else None
    default_size = xml_size(original.findtext("width"), original.findtext("height")) if original is not None else None
    frames = _Frames(path, default_size)
    images = root.findall("image")
    for image in images:
        line = element_line.get(id(image), 0)
        number, name = _frame_number(image.get("id")), image.get("name")
        stem = frame_stem(name) if isinstance(name, str) else None
        if number is None or stem is None:
            raise InputError(f"{path}:{line}: <image> needs an integer id and a name naming an image file")
        size = None
        if image.get("width") is not None or image.get("height") is not None:
            size = xml_size(image.get("width"), image.get("height"))
            if size is None:
                sink.report(line, f"<image> size is not two positive numbers ({image.get('width')!r}, "
                                  f"{image.get('height')!r})")
        frames.add(number, stem, size, image_name_of(name, stem), line)
        for shape in image:
            _add_shape(shape, number, shape.get("label"), frames, classes, sink, element_line)
    if not images:
        for number in _video_frames(task, path):
            frames.ensure(number, 0)
    for track in root.findall("track"):
        for shape in track:
            if shape.tag == "attribute":
                continue
            line = element_line.get(id(shape), 0)
            number = _frame_number(shape.get("frame"))
            if number is None:
                sink.report(line, f"<{shape.tag}> needs a frame number, found {shape.get('frame')!r}")
                continue
            frames.ensure(number, line)
            if shape.get("outside", "0").strip() == "1":  # the object has left the frame: no box
                continue
            _add_shape(shape, number, track.get("label"), frames, classes, sink, element_line)
    return frames.frames(), dict(classes.discovered if not label_map else label_map), tuple(sink.problems)


def _add_shape(shape, number: int, label: Optional[str], frames: _Frames, classes: ClassNames, sink: ProblemSink,
               element_line: dict) -> None:
    """One shape of frame ``number``: a box added to it, a tag passed over, anything else reported."""
    if shape.tag in ("tag", "attribute"):
        return
    line = element_line.get(id(shape), 0)
    if shape.tag not in SHAPES:
        sink.report(line, f"a <{shape.tag}> is not an oriented box (a <box> or a 4-point <polygon>)")
        return
    corners, reason = _shape_corners(shape)
    if reason is None:
        class_id, reason = classes.class_id((label or "").strip())
    if reason is not None:
        sink.report(line, reason)
        return
    frames.rows[number].append((corners, class_id, line))


def fit_rectangle(quad) -> tuple[tuple, float]:
    """``(cx, cy, w, h, angle)`` of the rectangle nearest a quad, from its first corner clockwise, and its distance.

    The angle (radians, clockwise on screen) is that of the first side, averaged with the other
    three (each turned onto it) so that a rectangle rounded to a few decimals keeps its heading;
    a quad listed counter-clockwise is read from its first corner the other way round. The
    distance is the largest corner offset in pixels between the quad and the rectangle.

    Examples
    --------
    >>> params, distance = fit_rectangle(box_corners(8, 19, 12, 21, 30))
    >>> [round(v, 6) for v in params[:4]] + [round(math.degrees(params[4]), 6), round(distance, 9)]
    [10.0, 20.0, 4.0, 2.0, 30.0, 0.0]
    """
    q = np.asarray(quad, dtype=np.float64)
    x, y = q[:, 0], q[:, 1]
    if np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1)) < 0:  # counter-clockwise on screen
        q = q[[0, 3, 2, 1]]
    along = (q[1] - q[0]) + (q[2] - q[3])
    across = (q[3] - q[0]) + (q[2] - q[1])
    heading = along + np.array([across[1], -across[0]])  # the side across, turned back onto the first
    angle = math.atan2(heading[1], heading[0]) if np.any(heading) else 0.0
    u = np.array([math.cos(angle), math.sin(angle)])
    w, h = float(along @ u) / 2, float(across @ np.array([-u[1], u[0]])) / 2
    cx, cy = (float(v) for v in q.mean(axis=0))
    if w < 0 or h < 0:
        return (cx, cy, w, h, angle), math.inf
    rebuilt = np.array(rotated_corners(cx, cy, w, h, angle))
    return (cx, cy, w, h, angle), float(np.abs(rebuilt - q).max())


def _shape_element(parent, quad, name: str, obb: bool) -> None:
    """A ``<box>`` for a rectangle (turned when ``obb``), else a 4-point ``<polygon>``."""
    attrs = {"label": name, "source": "manual", "occluded": "0"}
    quad = np.asarray(quad, dtype=np.float64)
    if not obb:
        (x0, y0), (x1, y1) = quad.min(axis=0), quad.max(axis=0)
        ET.SubElement(parent, "box", attrs, xtl=decimal_text(x0), ytl=decimal_text(y0), xbr=decimal_text(x1),
                      ybr=decimal_text(y1), z_order="0")
        return
    (cx, cy, w, h, angle), distance = fit_rectangle(quad)
    if distance > RECTANGLE_TOLERANCE:  # not a rectangle: the quad itself, exactly
        points = ";".join(f"{decimal_text(x)},{decimal_text(y)}" for x, y in quad)
        ET.SubElement(parent, "polygon", attrs, points=points, z_order="0")
        return
    box = {"xtl": cx - w / 2, "ytl": cy - h / 2, "xbr": cx + w / 2, "ybr": cy + h / 2}
    element = ET.SubElement(parent, "box", attrs, **{k: decimal_text(v) for k, v in box.items()})
    rotation = math.degrees(angle) % 360
    if decimal_text(rotation, 10) not in ("0", "360"):
        # ten decimals of a degree: a corner 1e4 px from the centre moves by under 2e-9 px
        element.set("rotation", decimal_text(rotation, 10))
    element.set("z_order", "0")


def write(path: str | Path, frames, names: dict, *, obb: bool, image_names: Optional[dict] = None,
          image_ext: str = ".jpg") -> None:
    """Write one CVAT for images 1.1 file for the whole set, frames by name, ids from 0.

    A rectangle (within :data:`RECTANGLE_TOLERANCE` px) becomes a ``<box>`` turned by its first
    side's heading (six decimals, the rotation ten, in degrees ``[0, 360)``); any other quad a
    4-point ``<polygon>``; with ``obb`` false every box is its axis-aligned envelope.
    """
    root = ET.Element("annotations")
    ET.SubElement(root, "version").text = "1.1"
    task = ET.SubElement(ET.SubElement(root, "meta"), "task")
    ordered = sorted(frames, key=lambda f: f.stem)
    ET.SubElement(task, "name").text = "hbb2obb"
    ET.SubElement(task, "size").text = str(len(ordered))
    ET.SubElement(task, "mode").text = "annotation"
    labels = ET.SubElement(task, "labels")
    for class_id in sorted(names):
        label = ET.SubElement(labels, "label")
        ET.SubElement(label, "name").text = str(names[class_id])
        ET.SubElement(label, "type").text = "any"
        ET.SubElement(label, "attributes")
    for number, frame in enumerate(ordered):
        width, height = pixel_size(frame.size, frame.stem, "CVAT")
        name = (image_names or {}).get(frame.stem, f"{frame.stem}{image_ext}")
        image = ET.SubElement(root, "image", id=str(number), name=name, width=str(width), height=str(height))
        for row in range(len(frame.boxes)):
            class_id = int(frame.boxes.class_id[row])
            _shape_element(image, frame.boxes.corners[row], str(names.get(class_id, class_id)), obb)
    ET.indent(root)
    write_text_atomic(path, '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n")
