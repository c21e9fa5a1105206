"""FAIR1M XML: one ``<annotation>`` file per frame, each object a closed ring of points (read only).

``objects/object`` holds ``possibleresult/name`` (the class; ``possibleresult/probability``, as
in the challenge's result files, is the confidence) and ``points``: ``<point>x,y</point>`` in pixels,
five of them, the fifth repeating the first (the ring closed; four are read too). The corners are
kept in the order listed, which the dataset does not fix (any start, either way round). An object
whose ``<coordinate>`` is anything but ``pixel`` is broken. The frame size is ``<size>``'s, the
image ``source/filename``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

from hbb2obb.errors import InputError
from hbb2obb.io.frame_labels import FrameLabels, image_name_of
from hbb2obb.io.voc import parse_with_lines
from hbb2obb.io.xml_labels import FrameBuilder, root_tag, xml_numbers, xml_size


def sniff(head: bytes) -> bool:
    """Whether an ``.xml`` file's head is an ``<annotation>`` with FAIR1M's ``<objects>`` or ``<possibleresult>``."""
    return root_tag(head) == "annotation" and any(tag in head for tag in (b"<possibleresult>", b"<objects>",
                                                                        b"<objects/>"))


def object_corners(obj) -> tuple[Optional[list], Optional[str]]:
    """An ``<object>``'s four corners, or why it has none."""
    coordinate = (obj.findtext("coordinate") or "pixel").strip()
    if coordinate != "pixel":
        return None, f"coordinates in {coordinate[:40]!r}, not pixels"
    points = [(p.text or "").split(",") for p in obj.findall("points/point")]
    if any(len(p) != 2 for p in points):
        return None, "a <point> must be x,y"
    values, reason = xml_numbers([v for p in points for v in p],
                                 [f"point {i // 2 + 1} {'xy'[i % 2]}" for i in range(2 * len(points))])
    if reason is not None:
        return None, reason
    corners = [values[i:i + 2] for i in range(0, len(values), 2)]
    if len(corners) > 1 and corners[-1] == corners[0]:  # the ring closed: the first point again
        corners = corners[:-1]
    if len(corners) != 4:
        return None, f"{len(corners)} distinct points; a box is 4 corners (5 points with the first repeated)"
    return corners, None


def read(path: str | Path, *, strict: bool, label_map: Optional[dict] = None,
         discovered: Optional[dict] = None) -> FrameLabels:
    """Read one FAIR1M file (see the module docstring); ``boxes.line`` is each ``<object>``'s line."""
    path = Path(path)
    root, element_line = parse_with_lines(path, "FAIR1M file")
    if root.tag != "annotation":
        raise InputError(f"{path}: not a FAIR1M file (root element <{root.tag}>, expected <annotation>)")
    frame = FrameBuilder(path, strict, label_map, discovered)
    for obj in root.findall("objects/object"):
        corners, reason = object_corners(obj)
        frame.add(element_line.get(id(obj), 0), obj.findtext("possibleresult/name") or "", corners, reason,
                  score=obj.findtext("possibleresult/probability"))
    size = xml_size(root.findtext("size/width"), root.findtext("size/height"))
    return frame.frame(size, image_name_of((root.findtext("source/filename") or "").strip(), path.stem))
