"""One frame's boxes as the format readers of whole sets return them, and the rounding they share.

The per-frame readers of COCO, LabelMe and Pascal VOC know a frame's size from the file itself,
which the YOLO and DOTA readers cannot; :class:`FrameLabels` carries the boxes together with that
size and the file they came from.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import numpy as np

from hbb2obb.boxes import Boxes
from hbb2obb.errors import InputError
from hbb2obb.io.text import MAX_COORDINATE

DEFAULT_PRECISION = 2  # decimals of a pixel every integer format is derived from (the reference's)


@dataclass(frozen=True)
class FrameLabels:
    """The boxes of one frame in pixels, with its size when known.

    Attributes
    ----------
    stem : str
        The frame's name (image file name without suffix).
    boxes : Boxes
        Absolute pixel corners; ``difficult`` always set (0 where the format cannot carry it);
        ``line`` the 1-based line, shape, object or annotation position in the source.
    size : (int, int) or None
        ``(width, height)`` in pixels.
    source : Path
        The file the boxes were read from.
    problems : tuple of LabelProblem
        What was skipped (only when read with ``strict=False``).
    image_name : str or None
        The frame's image file as the source names it (COCO ``file_name``, LabelMe ``imagePath``,
        VOC ``<filename>``), folders dropped; ``None`` when the source names none, or names a
        file of another frame.
    """

    stem: str
    boxes: Boxes
    size: Optional[tuple]
    source: Path
    problems: tuple = ()
    image_name: Optional[str] = None

    def with_boxes(self, boxes: Boxes) -> "FrameLabels":
        return FrameLabels(self.stem, boxes, self.size, self.source, self.problems, self.image_name)

    def with_size(self, size: Optional[tuple]) -> "FrameLabels":
        return FrameLabels(self.stem, self.boxes, size, self.source, self.problems, self.image_name)


def make_boxes(corners: list, classes: list, lines: list, difficult: Optional[list] = None,
               scores: Optional[list] = None) -> Boxes:
    """:class:`Boxes` from per-box lists; ``score`` is kept only when every box has one."""
    n = len(classes)
    score = None
    if scores is not None and n and all(s is not None for s in scores):
        score = np.array(scores, dtype=np.float64)
    return Boxes(
        corners=np.array(corners, dtype=np.float64).reshape(-1, 4, 2),
        class_id=np.array(classes, dtype=np.int64),
        line=np.array(lines, dtype=np.int64),
        difficult=np.array(difficult if difficult is not None else [False] * n, dtype=bool),
        score=score,
    )


def axis_rect(x0: float, y0: float, x1: float, y1: float) -> list:
    """An axis-aligned quad, clockwise from the top-left in image coordinates."""
    return [[x0, y0], [x1, y0], [x1, y1], [x0, y1]]


def turned_rect(cx: float, cy: float, w: float, h: float, angle: float) -> list:
    """The ``w x h`` rectangle around ``(cx, cy)`` turned by ``angle`` radians clockwise as shown on screen.

    Image y points down, so this is the usual rotation matrix. The corners start at the one
    ``(-w/2, -h/2)`` from the centre before the turn and go clockwise on screen.

    Examples
    --------
    >>> [[round(v, 6) + 0.0 for v in p] for p in turned_rect(10, 20, 4, 2, math.pi / 2)]
    [[11.0, 18.0], [11.0, 22.0], [9.0, 22.0], [9.0, 18.0]]
    """
    c, s = math.cos(angle), math.sin(angle)
    local = ((-w / 2, -h / 2), (w / 2, -h / 2), (w / 2, h / 2), (-w / 2, h / 2))
    return [[cx + x * c - y * s, cy + x * s + y * c] for x, y in local]


def canonical(boxes: Boxes, precision: int = DEFAULT_PRECISION) -> Boxes:
    """The corners rounded once, to ``precision`` decimals: every output format derives from these.

    Rounding twice (full precision to integer in one format, two decimals to integer in another)
    disagrees wherever a value lands on a half, so the integer formats must all start from one
    rounding. ``np.round`` rounds halves to even, as the reference tool does.

    Examples
    --------
    >>> b = Boxes(corners=[[[0.125, 0], [4.004, 0], [4.004, 2.5], [0.125, 2.5]]], class_id=[0])
    >>> canonical(b).corners[0, :2].tolist()
    [[0.12, 0.0], [4.0, 0.0]]
    """
    return boxes.with_corners(np.round(boxes.corners, precision))


def integer_corners(corners: np.ndarray) -> np.ndarray:
    """Corners as integers, halves to even (Python's ``round``), shape kept.

    Examples
    --------
    >>> integer_corners(np.array([[0.5, 1.5], [2.5, -0.5]])).tolist()
    [[0, 2], [2, 0]]
    """
    return np.rint(corners).astype(np.int64)


def integer_envelope(corners: np.ndarray) -> np.ndarray:
    """``(n, 4)`` integer ``x0 y0 x1 y1``: the envelope rounded from the same values as the corners.

    Examples
    --------
    >>> integer_envelope(np.array([[[1.4, 2.6], [5.5, 2.0], [4.0, 7.5], [0.2, 6.0]]])).tolist()
    [[0, 2, 6, 8]]
    """
    envelope = np.concatenate([corners.min(axis=1), corners.max(axis=1)], axis=1)
    return np.rint(envelope).astype(np.int64)


def is_axis_aligned(corners: np.ndarray) -> np.ndarray:
    """Per box: whether its four corners use at most two x and two y values (to 1e-6 px).

    Examples
    --------
    >>> is_axis_aligned(np.array([[[0, 0], [2, 0], [2, 1], [0, 1]], [[0, 0], [2, 1], [1, 3], [-1, 2]]])).tolist()
    [True, False]
    """
    rounded = np.sort(np.round(corners, 6), axis=1)
    distinct = 1 + np.count_nonzero(np.diff(rounded, axis=1), axis=1)  # (n, 2): distinct x and y values
    return (distinct <= 2).all(axis=1)


def pixel_size(size: Optional[tuple], frame: str, what: str) -> tuple[int, int]:
    """A frame's size as integers, or :class:`InputError` when the format needs it and it is unknown."""
    if size is None or not size[0] or not size[1]:
        raise InputError(f"{frame}: frame size unknown, needed to write {what} (give -i IMAGES or -iw/-ih)")
    return int(round(size[0])), int(round(size[1]))


def names_lookup(label_map: dict) -> dict:
    """Class name (exact, then lower-case) to class id."""
    lookup = {name.lower(): class_id for class_id, name in label_map.items()}
    lookup.update({name: class_id for class_id, name in label_map.items()})
    return lookup


_PLAIN_NUMBER = frozenset((int, float))  # JSON's numbers, as json.loads gives them (a bool is no number)


def json_numbers(values, count: Optional[int] = None, what: str = "value") -> tuple[Optional[list], Optional[str]]:
    """Coordinates from parsed JSON as floats, or why they cannot be (the text formats' rule).

    Each must be a JSON number (not ``true``), finite as a float (``1e400`` and a 400-digit
    integer are not) and within :data:`~hbb2obb.io.text.MAX_COORDINATE`; ``count`` is the
    length required.

    Examples
    --------
    >>> json_numbers([1, 2.5], 2)
    ([1.0, 2.5], None)
    >>> json_numbers([1, 10**400], 2, "bbox")[1]
    'bbox value 2 is not a finite number: an integer of more than 40 digits'
    """
    plain = type(values) is list and all(map(_PLAIN_NUMBER.__contains__, map(type, values)))
    if plain and (count is None or len(values) == count):
        # The usual list of plain numbers, checked a whole list at a time; a list that fails
        # (or holds anything else) is checked value by value below for its message.
        try:
            numbers = [float(value) for value in values]
        except OverflowError:  # an integer past float64
            numbers = None
        if numbers is not None and all(-MAX_COORDINATE <= number <= MAX_COORDINATE for number in numbers):
            return numbers, None  # NaN and infinities fail the comparison
    if not isinstance(values, list) or (count is not None and len(values) != count):
        found = f"{len(values)} values" if isinstance(values, list) else type(values).__name__
        return None, f"expected {count} numbers, found {found}"
    numbers = []
    for position, value in enumerate(values, start=1):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return None, f"{what} value {position} is not a number: {shown_json(value)}"
        number = float(value) if not isinstance(value, int) or abs(value) < 2**1023 else math.inf
        if not math.isfinite(number):
            return None, f"{what} value {position} is not a finite number: {shown_json(value)}"
        if abs(number) > MAX_COORDINATE:
            return None, (f"{what} value {position} is out of range: {number:g} "
                          f"(coordinates beyond +-{MAX_COORDINATE:g} are refused)")
        numbers.append(number)
    return numbers, None


def json_size(width, height) -> tuple[Optional[tuple], Optional[str]]:
    """A frame size recorded in a file: ``((w, h), None)``, ``(None, None)`` when absent, or ``(None, reason)``."""
    if width is None and height is None:
        return None, None
    numbers, reason = json_numbers([width, height], 2, "size")
    if reason is None and min(numbers) <= 0:
        reason = "size must be positive"
    if reason is not None:
        return None, f"{reason} (width {shown_json(width)}, height {shown_json(height)})"
    return tuple(int(v) if v.is_integer() else v for v in numbers), None


def shown_json(value) -> str:
    """A parsed JSON value as a message shows it, cut when long (a 5,000-digit integer)."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**40:
        return "an integer of more than 40 digits"  # str() of one beyond 4,300 digits would itself fail
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:40]}... ({len(text)} characters)"


def image_name_of(recorded, stem: str) -> Optional[str]:
    """The last part of an image path a label file records, when it is an image of frame ``stem``.

    Examples
    --------
    >>> image_name_of("../images/a.PNG", "a"), image_name_of("b.jpg", "a"), image_name_of("a", "a")
    ('a.PNG', None, None)
    """
    if not isinstance(recorded, str):
        return None
    name = recorded.replace("\\", "/").rsplit("/", 1)[-1]
    stem_of, dot, suffix = name.rpartition(".")
    if not dot or stem_of != stem or not suffix or any(ord(c) < 32 or ord(c) == 127 for c in suffix):
        return None
    return name
