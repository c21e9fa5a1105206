"""roLabelImg XML: Pascal VOC with rotated boxes, one file per frame.

An ``<object>`` holds either a ``<bndbox>`` (``xmin ymin xmax ymax``, as VOC) or a
``<robndbox>``: centre ``cx cy``, size ``w h`` in pixels, and ``angle`` in radians. The box is
the ``w x h`` rectangle around the centre turned by ``angle`` clockwise as shown on screen
(image y points down), which is how roLabelImg draws it: the corner at ``(-w/2, -h/2)`` from
the centre lands at ``(cx - w/2 cos a + h/2 sin a, cy - w/2 sin a - h/2 cos a)``. roLabelImg
keeps ``angle`` in ``[0, pi)``; any finite angle is read. Corners are listed from that corner
clockwise on screen.

The writer writes every box as a ``<robndbox>`` (``<type>robndbox</type>``), the angle in
``[0, pi)``; roLabelImg reads it back as drawn.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Optional
from xml.etree import ElementTree as ET

import numpy as np

from hbb2obb.io.atomic import write_text_atomic
from hbb2obb.io.frame_labels import (
    FrameLabels,
    axis_rect,
    pixel_size,
)
from hbb2obb.io.text import coordinate_reason, parse_number
from hbb2obb.io.voc import BOUNDS, read_objects
from hbb2obb.io.xml_labels import decimal_text

ROTATED = ("cx", "cy", "w", "h", "angle")
RESHAPE_TOLERANCE = 0.01  # px: a stored rectangle this close to the quad is the quad (6 decimals are written)


def sniff(head: bytes) -> bool:
    """Whether an ``.xml`` file's head (its first 64 KiB) holds a roLabelImg ``<robndbox>``.

    DIOR-R's ``<robndbox>`` of corners (``<x_left_top>``...) is not one.
    """
    return b"<annotation" in head and b"<robndbox>" in head and b"<x_left_top>" not in head


def rotated_corners(cx: float, cy: float, w: float, h: float, angle: float) -> list:
    """The four corners of a roLabelImg box, from the ``(-w/2, -h/2)`` corner clockwise on screen.

    Examples
    --------
    >>> [[round(v, 6) + 0.0 for v in p] for p in rotated_corners(10, 20, 4, 2, math.pi / 2)]
    [[11.0, 18.0], [11.0, 22.0], [9.0, 22.0], [9.0, 18.0]]
    """
    c, s = math.cos(angle), math.sin(angle)
    local = ((-w / 2, -h / 2), (w / 2, -h / 2), (w / 2, h / 2), (-w / 2, h / 2))
    return [[cx + x * c - y * s, cy + x * s + y * c] for x, y in local]


def read(path: str | Path, *, strict: bool, label_map: Optional[dict] = None,
         discovered: Optional[dict] = None) -> FrameLabels:
    """Read one roLabelImg file.

    Parameters
    ----------
    path : path-like
    strict : bool
        Raise at the first broken ``<object>`` (ground truth) or skip and list it (predictions).
    label_map : dict of int to str, optional
        ``<name>`` becomes the class id; a name the map lacks is broken.
    discovered : dict of int to str, optional
        Without a map: names met so far across the set, extended in place (ids 0, 1, ... first
        seen first).

    Returns
    -------
    FrameLabels
        ``boxes.line`` is the line of each ``<object>``; ``<difficult>`` is ``boxes.difficult``.
    """
    return read_objects(path, "roLabelImg file", _object_corners, strict=strict, label_map=label_map,
                        discovered=discovered)


def _object_corners(obj) -> tuple[Optional[list], Optional[str]]:
    """An ``<object>``'s corners, or why it has none."""
    rotated, box = obj.find("robndbox"), obj.find("bndbox")
    if rotated is not None:
        values = [parse_number((rotated.findtext(key) or "").strip()) for key in ROTATED]
        if None in values:
            return None, "<robndbox> needs finite numbers cx, cy, w, h, angle"
        reason = coordinate_reason(values[:4], 1)
        if reason is not None:
            return None, reason.replace("field ", "<robndbox> value ")
        cx, cy, w, h, angle = values
        if w < 0 or h < 0:
            return None, f"<robndbox> has a negative size ({w:g} x {h:g})"
        return rotated_corners(cx, cy, w, h, angle), None
    if box is not None:
        values = [parse_number((box.findtext(key) or "").strip()) for key in BOUNDS]
        if None in values:
            return None, "<bndbox> needs finite numbers xmin, ymin, xmax, ymax"
        reason = coordinate_reason(values, 1)
        if reason is not None:
            return None, reason.replace("field ", "<bndbox> value ")
        x0, y0, x1, y1 = values
        if x1 < x0 or y1 < y0:
            return None, f"<bndbox> has xmax < xmin or ymax < ymin ({x0:g} {y0:g} {x1:g} {y1:g})"
        return axis_rect(x0, y0, x1, y1), None
    return None, "object without <robndbox> or <bndbox>"


def box_parameters(quad: np.ndarray) -> tuple[float, float, float, float, float]:
    """``(cx, cy, w, h, angle)`` of a quadrilateral as roLabelImg stores a box, angle in ``[0, pi)``.

    ``w`` is the length of the first side (corner 0 to corner 1), ``h`` the mean length of the two
    sides next to it, the centre the mean of the corners; a rectangle comes back exactly as
    :func:`rotated_corners` makes it, up to the half turn the ``[0, pi)`` range takes away.

    Examples
    --------
    >>> [round(v, 6) for v in box_parameters(np.array(rotated_corners(10, 20, 4, 2, 0.3)))]
    [10.0, 20.0, 4.0, 2.0, 0.3]
    """
    quad = np.asarray(quad, dtype=np.float64)
    cx, cy = quad.mean(axis=0)
    first = quad[1] - quad[0]
    w = float(np.hypot(*first))
    h = float((np.hypot(*(quad[2] - quad[1])) + np.hypot(*(quad[3] - quad[0]))) / 2)
    angle = math.atan2(first[1], first[0]) % math.pi if w > 0 else 0.0
    if angle >= math.pi - 1e-12:  # atan2 rounding up to pi: the same box at angle 0
        angle = 0.0
    return float(cx), float(cy), w, h, angle


def reshaped(frames, tolerance: float = RESHAPE_TOLERANCE) -> tuple[int, Optional[str], float]:
    """The boxes of ``frames`` whose stored rectangle moves a corner more than ``tolerance`` px: count, first, farthest.

    The rectangle is the one :func:`box_parameters` stores, which Label Studio's regions store too
    (the centre of the corners, the first side, the mean of the two next to it): it gives a
    rectangle back, any other quad changed.

    Examples
    --------
    >>> from hbb2obb.io.frame_labels import make_boxes
    >>> trapezoid = make_boxes([[[0, 0], [4, 0], [3, 2], [1, 2]], [[0, 0], [4, 0], [4, 2], [0, 2]]], [0, 0], [7, 8])
    >>> count, first, farthest = reshaped([FrameLabels("a", trapezoid, None, Path("a.txt"))])
    >>> count, first, round(farthest, 6)
    (1, 'a.txt:7', 1.0)
    """
    count, first, farthest = 0, None, 0.0
    for frame in frames:
        for row, quad in enumerate(frame.boxes.corners):
            stored = np.array(rotated_corners(*box_parameters(quad)))
            # the angle kept in [0, pi) may start the rectangle at the opposite corner
            moved = min(float(np.abs(np.roll(stored, shift, axis=0) - quad).max()) for shift in (0, 2))
            if moved <= tolerance:
                continue
            count, farthest = count + 1, max(farthest, moved)
            if first is None:
                line = frame.boxes.line[row] if frame.boxes.line is not None else row + 1
                first = f"{frame.source}:{line}"
    return count, first, farthest


def write(path: str | Path, frame: FrameLabels, names: dict, *, obb: bool, image_name: Optional[str] = None,
          image_ext: str = ".jpg") -> None:
    """Write one roLabelImg file: every box a ``<robndbox>`` (6 decimals, the angle 10), the frame's size recorded.

    The corners should be rectangles (:func:`~hbb2obb.io.frame_labels.canonical` sets are). The
    box starts at the corner the set lists first, so the angle is that of its first side.
    """
    width, height = pixel_size(frame.size, frame.stem, "roLabelImg")
    image_name = image_name or f"{frame.stem}{image_ext}"
    root = ET.Element("annotation", verified="no")
    ET.SubElement(root, "folder").text = "images"
    ET.SubElement(root, "filename").text = Path(image_name).stem
    ET.SubElement(root, "path").text = f"images/{image_name}"
    ET.SubElement(ET.SubElement(root, "source"), "database").text = "Unknown"
    size = ET.SubElement(root, "size")
    for key, value in (("width", width), ("height", height), ("depth", 3)):
        ET.SubElement(size, key).text = str(value)
    ET.SubElement(root, "segmented").text = "0"
    boxes = frame.boxes
    difficult = boxes.difficult if boxes.difficult is not None else np.zeros(len(boxes), dtype=bool)
    for row in range(len(boxes)):
        obj = ET.SubElement(root, "object")
        ET.SubElement(obj, "type").text = "robndbox"
        ET.SubElement(obj, "name").text = str(names.get(int(boxes.class_id[row]), int(boxes.class_id[row])))
        ET.SubElement(obj, "pose").text = "Unspecified"
        ET.SubElement(obj, "truncated").text = "0"
        ET.SubElement(obj, "difficult").text = str(int(difficult[row]))
        robndbox = ET.SubElement(obj, "robndbox")
        for key, value in zip(ROTATED, box_parameters(boxes.corners[row])):
            # the angle to 10 decimals: 1e-6 rad would move a corner 40 px away by 4e-5 px
            ET.SubElement(robndbox, key).text = decimal_text(value, 10 if key == "angle" else 6)
    ET.indent(root)
    write_text_atomic(path, ET.tostring(root, encoding="unicode") + "\n")
