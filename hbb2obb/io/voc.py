"""Pascal VOC XML: one file per frame, an ``<object>`` with an integer ``<bndbox>`` per box.

Horizontal boxes only. Problems are named by the line of the ``<object>`` element.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional
from xml.etree import ElementTree as ET
from xml.parsers import expat

from hbb2obb.errors import InputError
from hbb2obb.io.atomic import write_text_atomic
from hbb2obb.io.frame_labels import (
    FrameLabels,
    axis_rect,
    image_name_of,
    integer_envelope,
    make_boxes,
    names_lookup,
    pixel_size,
)
from hbb2obb.io.text import ProblemSink, coordinate_reason, parse_number
from hbb2obb.io.text_file import read_file_bytes
from hbb2obb.io.xml_labels import FrameBuilder, xml_size

BOUNDS = ("xmin", "ymin", "xmax", "ymax")


class _LineBuilder(ET.TreeBuilder):
    """A tree builder that notes the source line of every element (ElementTree keeps none itself)."""

    def __init__(self):
        super().__init__()
        self.lines: dict[int, int] = {}
        self.parser = None

    def start(self, tag, attrs):
        element = super().start(tag, attrs)
        self.lines[id(element)] = self.parser.parser.CurrentLineNumber  # the expat parser inside
        return element


def parse_with_lines(path: Path, what: str = "VOC file"):
    """The XML root, and the source line of every element.

    Parsed by :mod:`defusedxml`: entity declarations (the "billion laughs") and external
    entities (``SYSTEM "file:///etc/passwd"``) are refused, as no label writer makes them.
    ``what`` names the file in messages.
    """
    from defusedxml import DefusedXmlException
    from defusedxml.ElementTree import DefusedXMLParser

    data = read_file_bytes(path, what)
    builder = _LineBuilder()
    parser = DefusedXMLParser(target=builder)
    builder.parser = parser
    try:
        parser.feed(data)
        root = parser.close()
    except ET.ParseError as exc:
        line = exc.position[0] if getattr(exc, "position", None) else 0
        raise InputError(f"{path}:{line}: not valid XML ({expat.ErrorString(exc.code)})") from None
    except DefusedXmlException as exc:
        raise InputError(f"{path}: refused: the XML declares entities or refers to external ones ({exc}); "
                         f"a {what} needs neither") from None
    return root, builder.lines


def read_objects(path: str | Path, what: str, object_corners, *, strict: bool, label_map: Optional[dict] = None,
                 discovered: Optional[dict] = None) -> FrameLabels:
    """A VOC-shaped file of another format (roLabelImg, DIOR-R): ``<annotation>``, its
    ``<object>`` elements with ``<name>``, ``<difficult>`` and a shape, ``<size>``, ``<filename>``.

    ``object_corners(obj)`` gives an object's corners, or ``None`` and why; ``what`` names the
    file in messages (``"DIOR-R file"``). ``boxes.line`` is the line of each ``<object>``.
    """
    path = Path(path)
    root, element_line = parse_with_lines(path, what)
    if root.tag != "annotation":
        raise InputError(f"{path}: not a {what} (root element <{root.tag}>, expected <annotation>)")
    frame = FrameBuilder(path, strict, label_map, discovered)
    for obj in root.iter("object"):
        corners, reason = object_corners(obj)
        frame.add(element_line.get(id(obj), 0), obj.findtext("name") or "", corners, reason, obj.findtext("difficult"))
    size = xml_size(root.findtext("size/width"), root.findtext("size/height"))
    return frame.frame(size, image_name_of((root.findtext("filename") or "").strip(), path.stem))


def voc_names(paths) -> dict:
    """The class names a set of VOC files uses, first seen first, as ids 0, 1, ... (no label map)."""
    names: dict[int, str] = {}
    for path in paths:
        root, _ = parse_with_lines(Path(path))
        for obj in root.iter("object"):
            name = (obj.findtext("name") or "").strip()
            if name and name not in names.values():
                names[len(names)] = name
    return names


def read_voc(path: str | Path, *, strict: bool, label_map: dict) -> FrameLabels:
    """Read one Pascal VOC file; ``<difficult>`` becomes ``boxes.difficult``.

    Parameters
    ----------
    path : path-like
    strict : bool
        Raise at the first broken ``<object>`` (ground truth) or skip and list it (predictions).
    label_map : dict of int to str
        ``<name>`` becomes the class id; a name the map lacks is broken (see :func:`voc_names`
        for a set without a map).

    Returns
    -------
    FrameLabels
        ``boxes.line`` is the line of each ``<object>``; the size is ``<size>`` when given.
    """
    path = Path(path)
    root, element_line = parse_with_lines(path)
    if root.tag != "annotation":
        raise InputError(f"{path}: not a Pascal VOC file (root element <{root.tag}>, expected <annotation>)")
    sink = ProblemSink(path, strict)
    lookup = names_lookup(label_map)
    corners, classes, lines, difficult = [], [], [], []
    for obj in root.iter("object"):
        line = element_line.get(id(obj), 0)
        name = (obj.findtext("name") or "").strip()
        class_id = lookup.get(name, lookup.get(name.lower()))
        if class_id is None:
            sink.report(line, f"class name {name!r} is not in the label map" if name else "object without <name>")
            continue
        box = obj.find("bndbox")
        values = [parse_number((box.findtext(key) or "").strip()) if box is not None else None for key in BOUNDS]
        if None in values:
            sink.report(line, "<bndbox> needs finite numbers xmin, ymin, xmax, ymax")
            continue
        reason = coordinate_reason(values, 1)
        if reason is not None:
            sink.report(line, reason.replace("field ", "<bndbox> value "))
            continue
        x0, y0, x1, y1 = values
        if x1 < x0 or y1 < y0:
            sink.report(line, f"<bndbox> has xmax < xmin or ymax < ymin ({x0:g} {y0:g} {x1:g} {y1:g})")
            continue
        flag = (obj.findtext("difficult") or "0").strip()
        if flag not in ("0", "1"):
            sink.report(line, f"<difficult> must be 0 or 1, found {flag!r}")
            continue
        corners.append(axis_rect(x0, y0, x1, y1))
        classes.append(class_id)
        lines.append(line)
        difficult.append(flag == "1")
    size = xml_size(root.findtext("size/width"), root.findtext("size/height"))
    return FrameLabels(path.stem, make_boxes(corners, classes, lines, difficult), size, path, tuple(sink.problems),
                       image_name_of((root.findtext("filename") or "").strip(), path.stem))


def write_voc(path: str | Path, frame: FrameLabels, names: dict, image_ext: str = ".jpg", folder: str = "images",
              database: str = "Unknown", edge_tolerance: int = 1, image_name: Optional[str] = None) -> None:
    """Write one Pascal VOC file as the reference tool does.

    ``<filename>`` is ``image_name`` (the real image file) when given, else ``stem + image_ext``;
    ``<path>`` is ``folder/filename``.

    The integer envelope of each box goes in ``<bndbox>``; ``<truncated>`` is 1 for a box within
    ``edge_tolerance`` px of the frame's edge (``hbb2obb-eval --edge_tolerance``'s default).
    """
    width, height = pixel_size(frame.size, frame.stem, "Pascal VOC")
    root = ET.Element("annotation")
    ET.SubElement(root, "folder").text = folder
    image_name = image_name or f"{frame.stem}{image_ext}"
    ET.SubElement(root, "filename").text = image_name
    ET.SubElement(root, "path").text = f"{folder}/{image_name}"
    ET.SubElement(ET.SubElement(root, "source"), "database").text = database
    size = ET.SubElement(root, "size")
    for key, value in (("width", width), ("height", height), ("depth", 3)):
        ET.SubElement(size, key).text = str(value)
    ET.SubElement(root, "segmented").text = "0"
    boxes = frame.boxes
    difficult = boxes.difficult if boxes.difficult is not None else [False] * len(boxes)
    for class_id, envelope, flag in zip(boxes.class_id.tolist(), integer_envelope(boxes.corners).tolist(), difficult):
        x0, y0, x1, y1 = envelope
        obj = ET.SubElement(root, "object")
        ET.SubElement(obj, "name").text = names.get(class_id, str(class_id))
        ET.SubElement(obj, "pose").text = "Unspecified"
        truncated = x0 <= edge_tolerance or y0 <= edge_tolerance or x1 >= width - edge_tolerance or \
            y1 >= height - edge_tolerance
        ET.SubElement(obj, "truncated").text = str(int(truncated))
        ET.SubElement(obj, "difficult").text = str(int(flag))
        bndbox = ET.SubElement(obj, "bndbox")
        for key, value in zip(BOUNDS, envelope):
            ET.SubElement(bndbox, key).text = str(value)
    ET.indent(root, space="    ")
    text = '<?xml version="1.0" ?>\n' + ET.tostring(root, encoding="unicode") + "\n"
    write_text_atomic(path, text)
