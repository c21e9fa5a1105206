"""What every text label format shares: decoding, line splitting, problems, the parsed file."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Optional

import numpy as np

from hbb2obb.boxes import Boxes
from hbb2obb.errors import InputError, LabelFormatError


@dataclass(frozen=True)
class LabelProblem:
    """One broken line that was skipped: where it is and what is wrong with it."""

    path: Path
    line: int
    reason: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.reason}"


@dataclass(frozen=True)
class LabelFile:
    """A parsed label file.

    Attributes
    ----------
    path : Path
        Where the labels came from.
    boxes : Boxes
        The boxes of the well-formed lines, in file order, with their line numbers.
    problems : tuple of LabelProblem
        Lines that were skipped (only with ``strict=False``).
    normalized : bool or None
        Whether every coordinate lies in [0, 1]; ``None`` for a file with no boxes.
    """

    path: Path
    boxes: Boxes
    problems: tuple = ()
    normalized: Optional[bool] = None


def split_lines(path: Path) -> Iterator[tuple[int, list[str]]]:
    """Yield ``(line_number, fields)`` for every non-blank line of a text file.

    A UTF-8 byte order mark and Windows or old-Mac line endings are accepted.
    """
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror})") from None
    for number, line in enumerate(text.splitlines(), start=1):
        fields = line.split()
        if fields:
            yield number, fields


def parse_number(token: str) -> Optional[float]:
    """A finite float, or ``None`` when the token is not one (``nan``, ``inf``, ``car``)."""
    try:
        value = float(token)
    except ValueError:
        return None
    return value if np.isfinite(value) else None


def parse_class_id(token: str) -> Optional[int]:
    """An integer class id written as an integer literal, or ``None``."""
    try:
        return int(token)
    except ValueError:
        return None


def describe_bad_number(token: str, what: str) -> str:
    try:
        float(token)
    except ValueError:
        return f"{what} is not a number: {token!r}"
    return f"{what} is not finite: {token!r}"


class ProblemSink:
    """Collects broken lines, or raises on the first when the file must be clean."""

    def __init__(self, path: Path, strict: bool):
        self.path = path
        self.strict = strict
        self.problems: list[LabelProblem] = []

    def report(self, line: int, reason: str) -> None:
        if self.strict:
            raise LabelFormatError(self.path, line, reason)
        self.problems.append(LabelProblem(self.path, line, reason))


def looks_normalized(corners: np.ndarray) -> Optional[bool]:
    """Whether every coordinate lies in [0, 1]; ``None`` when there are none."""
    if corners.size == 0:
        return None
    return bool(corners.min() >= 0.0 and corners.max() <= 1.0)


def scale_to_pixels(label_file: LabelFile, width: float, height: float) -> LabelFile:
    """Scale a normalized file's corners to pixels; absolute files are returned unchanged.

    Orientation is not invariant under the non-uniform scaling between normalized and pixel
    coordinates of a non-square frame, so this must happen before any angle is measured.
    """
    if not label_file.normalized:
        return label_file
    corners = label_file.boxes.corners * np.array([width, height], dtype=np.float64)
    return LabelFile(label_file.path, label_file.boxes.with_corners(corners), label_file.problems, False)
