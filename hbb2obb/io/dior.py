"""DIOR-R XML: Pascal VOC with a rotated box as four corners, one file per frame (read only).

An ``<object>``'s ``<robndbox>`` lists its corners in pixels as ``x_left_top y_left_top
x_right_top y_right_top x_right_bottom y_right_bottom x_left_bottom y_left_bottom``: for an
upright box that is clockwise on screen from the top-left corner, and the corners are kept in that
order whatever the box's turn (the dataset's loaders read them so). The ``<angle>`` beside it
repeats what the corners already say and is not read. An object with a plain VOC ``<bndbox>``
instead is read as that axis-aligned box. ``<name>`` is the class, ``<difficult>`` is kept, the
frame size is ``<size>``'s and the image ``<filename>``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

from hbb2obb.io.frame_labels import FrameLabels, axis_rect
from hbb2obb.io.voc import BOUNDS, read_objects
from hbb2obb.io.xml_labels import root_tag, xml_numbers

CORNERS = ("x_left_top", "y_left_top", "x_right_top", "y_right_top",
           "x_right_bottom", "y_right_bottom", "x_left_bottom", "y_left_bottom")


def sniff(head: bytes) -> bool:
    """Whether an ``.xml`` file's head is a VOC ``<annotation>`` holding DIOR-R's ``<x_left_top>`` corners."""
    return root_tag(head) == "annotation" and b"<x_left_top>" in head


def object_corners(obj) -> tuple[Optional[list], Optional[str]]:
    """An ``<object>``'s corners, or why it has none."""
    rotated, box = obj.find("robndbox"), obj.find("bndbox")
    if rotated is not None:
        values, reason = xml_numbers([rotated.findtext(key) for key in CORNERS], CORNERS)
        if reason is not None:
            return None, f"<robndbox> {reason}"
        return [values[i:i + 2] for i in range(0, 8, 2)], None
    if box is not None:
        values, reason = xml_numbers([box.findtext(key) for key in BOUNDS], BOUNDS)
        if reason is not None:
            return None, f"<bndbox> {reason}"
        x0, y0, x1, y1 = values
        if x1 < x0 or y1 < y0:
            return None, f"<bndbox> has xmax < xmin or ymax < ymin ({x0:g} {y0:g} {x1:g} {y1:g})"
        return axis_rect(x0, y0, x1, y1), None
    return None, "object without <robndbox> or <bndbox>"


def read(path: str | Path, *, strict: bool, label_map: Optional[dict] = None,
         discovered: Optional[dict] = None) -> FrameLabels:
    """Read one DIOR-R file (see the module docstring); ``boxes.line`` is each ``<object>``'s line."""
    return read_objects(path, "DIOR-R file", object_corners, strict=strict, label_map=label_map,
                        discovered=discovered)
