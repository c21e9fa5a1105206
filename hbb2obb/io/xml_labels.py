"""What the XML label readers beyond VOC share: class names, numbers, sizes, the root element of a head.

The formats of :data:`~hbb2obb.io.format_names.REGISTERED` stored as ``.xml`` (roLabelImg, CVAT,
HRSC2016, DIOR-R, FAIR1M) all name classes by text and write numbers as element text or
attribute values; these helpers apply one rule to all of them: a class name is looked up in the
label map (exact, then ignoring case) or numbered first seen first, and a number must be finite
and within :data:`~hbb2obb.io.text.MAX_COORDINATE`.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Optional

from hbb2obb.errors import InputError
from hbb2obb.io.frame_labels import FrameLabels, make_boxes, names_lookup
from hbb2obb.io.text import MAX_COORDINATE, ProblemSink, parse_number


class ClassNames:
    """Class names to ids for one set: from the label map, or numbered first seen first.

    Parameters
    ----------
    label_map : dict of int to str, optional
        A name it lacks is broken.
    discovered : dict of int to str, optional
        Without a map: the names met so far across the set, extended in place.
    """

    def __init__(self, label_map: Optional[dict] = None, discovered: Optional[dict] = None):
        self.lookup = names_lookup(label_map) if label_map else None
        self.discovered = {} if discovered is None else discovered

    def class_id(self, name: str) -> tuple[Optional[int], Optional[str]]:
        """The id of ``name``, or ``None`` and why it has none."""
        if not name:
            return None, "no class name"
        if self.lookup is not None:
            class_id = self.lookup.get(name, self.lookup.get(name.lower()))
            if class_id is None:
                return None, f"class name {name!r} is not in the label map"
            return class_id, None
        class_id = next((i for i, known in self.discovered.items() if known == name), len(self.discovered))
        self.discovered.setdefault(class_id, name)
        return class_id, None


def xml_numbers(texts, names) -> tuple[Optional[list], Optional[str]]:
    """Numbers from XML text (``None`` for a missing element or attribute), or why they cannot be.

    Each must be a finite number as label files write them and within
    :data:`~hbb2obb.io.text.MAX_COORDINATE`; ``names`` name the values in messages.

    Examples
    --------
    >>> xml_numbers(["1", " 2.5 "], ["x", "y"])
    ([1.0, 2.5], None)
    >>> xml_numbers(["1", None], ["x", "y"])[1]
    'y is missing'
    >>> xml_numbers(["nan", "1"], ["x", "y"])[1]
    "x is not a finite number: 'nan'"
    """
    values = []
    for text, name in zip(texts, names):
        if text is None:
            return None, f"{name} is missing"
        value = parse_number(text.strip())
        if value is None:
            shown = text.strip()
            shown = repr(shown) if len(shown) <= 40 else repr(shown[:40]) + "..."
            return None, f"{name} is not a finite number: {shown}"
        if abs(value) > MAX_COORDINATE:
            return None, f"{name} is out of range: {value:g} (coordinates beyond +-{MAX_COORDINATE:g} are refused)"
        values.append(value)
    return values, None


def xml_size(width: Optional[str], height: Optional[str]) -> Optional[tuple]:
    """A frame size a file records, or ``None`` when absent or not two positive numbers.

    Examples
    --------
    >>> xml_size("800", "600.0"), xml_size("0", "600"), xml_size(None, "600")
    ((800, 600), None, None)
    """
    values, reason = xml_numbers([width, height], ["width", "height"])
    if reason is not None or min(values) <= 0:
        return None
    return tuple(int(v) if v.is_integer() else v for v in values)


def decimal_text(value: float, decimals: int = 6) -> str:
    """``decimals`` decimals without trailing zeros (``0.5``, ``12``, ``0``).

    Examples
    --------
    >>> decimal_text(0.5), decimal_text(12.0), decimal_text(-1e-9), decimal_text(1 / 3, 4)
    ('0.5', '12', '0', '0.3333')
    """
    text = f"{value:.{decimals}f}".rstrip("0").rstrip(".")
    return "0" if text in ("", "-0") else text


_SKIPPED = re.compile(rb"<\?.*?\?>|<!--.*?-->|<!DOCTYPE(?:[^\[>]|\[.*?\])*>", re.DOTALL)
_START_TAG = re.compile(rb"<([A-Za-z_][\w.:-]*)")


def root_tag(head: bytes) -> Optional[str]:
    """The name of the first element of an XML file's head (its root), or ``None``.

    Examples
    --------
    >>> root_tag(b'<?xml version="1.0"?>\\n<!-- <x> -->\\n<annotations>\\n<image')
    'annotations'
    """
    match = _START_TAG.search(_SKIPPED.sub(b"", head))
    return match.group(1).decode("ascii", "replace") if match else None


class FrameBuilder:
    """The boxes of one per-frame XML file as its objects are met, with the bad-input rule applied.

    Parameters
    ----------
    path : Path
    strict : bool
        Raise at the first broken object (ground truth) or skip it and list it (predictions).
    label_map, discovered : dict, optional
        As :class:`ClassNames`.
    """

    def __init__(self, path: Path, strict: bool, label_map: Optional[dict] = None,
                 discovered: Optional[dict] = None):
        self.path = path
        self.sink = ProblemSink(path, strict)
        self.classes = ClassNames(label_map, discovered)
        self.rows: list = []

    def add(self, line: int, name: str, corners: Optional[list], reason: Optional[str] = None,
            difficult: Optional[str] = None, score: Optional[str] = None) -> None:
        """One object: its class name, its corners (or why it has none), its ``difficult`` and score texts."""
        flag = (difficult or "0").strip()
        if reason is None and flag not in ("0", "1"):
            reason = f"difficult must be 0 or 1, found {flag[:40]!r}"
        value = None
        if reason is None and score is not None:
            values, reason = xml_numbers([score], ["the probability"])
            value = values[0] if values else None
        class_id = None
        if reason is None:
            class_id, reason = self.classes.class_id(name.strip())
        if reason is not None:
            self.sink.report(line, reason)
            return
        self.rows.append((corners, class_id, line, flag == "1", value))

    def frame(self, size: Optional[tuple], image_name: Optional[str]) -> FrameLabels:
        """The frame read, named by the file's stem."""
        corners, classes, lines, difficult, scores = ([r[i] for r in self.rows] for i in range(5))
        plain = [line for line, score in zip(lines, scores) if score is None]
        if plain and len(plain) < len(lines):  # a score dropped without a word would rank the others alone
            raise InputError(f"{self.path}:{plain[0]}: no probability, while other objects of the file have one "
                             "(give every object a probability, or none)")
        return FrameLabels(self.path.stem, make_boxes(corners, classes, lines, difficult, scores), size, self.path,
                           tuple(self.sink.problems), image_name)
