"""What every text label format shares: decoding, line splitting, problems, the parsed file."""

from __future__ import annotations

import errno
import math
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Optional

import numpy as np

from hbb2obb.boxes import Boxes
from hbb2obb.errors import InputError, LabelFormatError
from hbb2obb.io.numeric_text import NumericRows, numeric_rows  # noqa: F401 (the bulk tokenizer, re-exported)
from hbb2obb.io.text_file import read_file_bytes


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
        Whether the file is normalized (every |coordinate| at most 2, :func:`looks_normalized`);
        ``None`` for a file with no boxes.
    line_scores : (n,) float or None
        Each box's confidence, NaN where its line has none, for a file where some lines have one
        and others none (``boxes.score`` is then ``None``): which lines lack one, for the warning.
    """

    path: Path
    boxes: Boxes
    problems: tuple = ()
    normalized: Optional[bool] = None
    line_scores: Optional[np.ndarray] = None


_LINE_BREAK = re.compile(rb"\r\n|\r|\n")  # the only line ends of a label file (not \f, \v, NEL, U+2028)
# A label number as C and numpy write one, ASCII only: Python's float() also takes "1_00" and
# Arabic-Indic digits, which no label writer produces and no other reader takes.
# (Digits after the dot only after a literal dot: "[0-9]+\.?[0-9]*" backtracks quadratically on
# a long run of digits that then fails.)
_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_NON_FINITE = re.compile(r"[+-]?(?:inf|infinity|nan)", re.IGNORECASE)
_INTEGER = re.compile(r"[+-]?[0-9]+")
_INT64_LIMIT = 2**63  # class ids are stored as int64
MAX_COORDINATE = 1e12
"""Largest coordinate magnitude a label line may hold. Far beyond any frame (a trillion pixels),
far inside what the float64 geometry scores exactly (it fails past about 1e100)."""
_SHOWN_CHARACTERS = 40  # a token longer than this is cut in messages: a 20 MB token is not echoed whole


def shown(token: str) -> str:
    """A token as a message quotes it: ``repr``, cut to its first characters when long.

    Examples
    --------
    >>> shown("car"), shown("9" * 50)
    ("'car'", "'9999999999999999999999999999999999999999...' (50 characters)")
    """
    if len(token) <= _SHOWN_CHARACTERS:
        return repr(token)
    return f"{token[:_SHOWN_CHARACTERS]!r}"[:-1] + f"...' ({len(token)} characters)"


def split_lines(path: Path, sink: Optional["ProblemSink"] = None) -> Iterator[tuple[int, list[str]]]:
    """Yield ``(line_number, fields)`` for every non-blank line of a text file.

    Lines end at ``\\n``, ``\\r\\n`` or ``\\r`` only (form feed, vertical tab, NEL and U+2028 are
    not line breaks in a label file), so ``file:line`` is the line an editor shows. A UTF-8 byte
    order mark is accepted. A line that is not UTF-8 is reported to ``sink`` (raised or skipped
    by its rule) and not yielded; without a sink it raises :class:`InputError` at ``file:line``.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "f.txt"
    >>> _ = p.write_bytes(b"a b\\x0cc\\r\\n\\n d\\r")
    >>> list(split_lines(p))
    [(1, ['a', 'b', 'c']), (3, ['d'])]
    """
    data = read_file_bytes(path, "label file")
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    for number, raw in enumerate(_LINE_BREAK.split(data), start=1):
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            reason = f"not UTF-8 text ({exc.reason} at byte {exc.start} of the line)"
            if sink is None:
                raise InputError(f"{path}:{number}: {reason}") from None
            sink.report(number, reason)
            continue
        fields = line.split()
        if fields:
            yield number, fields


def parse_number(token: str) -> Optional[float]:
    """A finite float written as a label number, or ``None`` (``nan``, ``inf``, ``car``, ``1_00``).

    Examples
    --------
    >>> parse_number("-1.5e3"), parse_number("1_00"), parse_number("nan")
    (-1500.0, None, None)
    """
    if not _NUMBER.fullmatch(token):
        return None
    value = float(token)
    return value if math.isfinite(value) else None


def parse_class_id(token: str) -> Optional[int]:
    """An integer class id written as a decimal integer that fits an int64, or ``None``.

    Examples
    --------
    >>> parse_class_id("3"), parse_class_id("1.0"), parse_class_id(str(2**70))
    (3, None, None)
    """
    if len(token) > 20 or not _INTEGER.fullmatch(token):  # 20: a sign and 19 digits hold every int64
        return None
    value = int(token)
    return value if -_INT64_LIMIT <= value < _INT64_LIMIT else None


def describe_bad_number(token: str, what: str) -> str:
    if _NON_FINITE.fullmatch(token) or (_NUMBER.fullmatch(token) and not math.isfinite(float(token))):
        return f"{what} is not finite: {shown(token)}"
    return f"{what} is not a number: {shown(token)}"


def describe_bad_class_id(token: str) -> str:
    if _INTEGER.fullmatch(token):
        return f"class id is out of range (more than 63 bits): {shown(token)}"
    return f"class id is not an integer: {shown(token)}"


def coordinate_reason(values, first_field: int) -> Optional[str]:
    """Why parsed coordinates cannot be scored (a magnitude beyond :data:`MAX_COORDINATE`), or ``None``."""
    for position, value in enumerate(values, start=first_field):
        if abs(value) > MAX_COORDINATE:
            return f"field {position} is out of range: {value:g} (coordinates beyond +-{MAX_COORDINATE:g} are refused)"
    return None


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


NORMALIZED_LIMIT = 2.0
"""A file is normalized when no coordinate in it is farther than this from 0 (the reference's rule:
a fitted OBB at the border legitimately reaches -0.005 or 1.008, and no real frame is 2 pixels)."""


def looks_normalized(corners: np.ndarray) -> Optional[bool]:
    """Whether every |coordinate| is at most :data:`NORMALIZED_LIMIT`; ``None`` when there are none.

    Examples
    --------
    >>> looks_normalized(np.array([-0.0004, 1.0004])), looks_normalized(np.array([0, 3.0]))
    (True, False)
    >>> print(looks_normalized(np.zeros(0)))
    None
    """
    if corners.size == 0:
        return None
    return bool(max(corners.max(), -corners.min()) <= NORMALIZED_LIMIT)


def scale_to_pixels(label_file: LabelFile, width: float, height: float) -> LabelFile:
    """Scale a normalized file's corners to pixels; absolute files are returned unchanged.

    Orientation is not invariant under the non-uniform scaling between normalized and pixel
    coordinates of a non-square frame, so this must happen before any angle is measured.
    """
    if not label_file.normalized:
        return label_file
    corners = label_file.boxes.corners * np.array([width, height], dtype=np.float64)
    return LabelFile(label_file.path, label_file.boxes.with_corners(corners), label_file.problems, False)


_READ_SIZE = 1 << 16  # one read for a small file; a short read is the end
_OPEN_AHEAD = 128  # files open at once while reading (well inside the usual limit of 1,024 descriptors)
_SLOW_READ = 50e-6  # seconds: a read this slow waited for the disk (a file in memory reads far quicker)


def read_blobs(paths) -> list:
    """The bytes of each file, ``None`` where it cannot be opened or read (the careful reader reports why).

    Plain ``os.open``/``os.read``: for thousands of small files, ``open()`` costs about twice as
    much. Each file is read whole (reads of 64 KiB until a short one: a small file takes one),
    ``_OPEN_AHEAD`` files open at a time. Once a read has had to wait for the disk (the pages
    were not in memory), every file open is announced to the kernel
    (``posix_fadvise(WILLNEED)``) before the next is read, so the kernel fetches them together
    instead of one after the other. Files in memory are not announced: the announcement would
    cost more than it saves.

    Examples
    --------
    >>> import os
    >>> read_blobs([os.devnull, os.path.join(os.devnull, "missing.txt"), os.path.dirname(os.devnull)])
    [b'', None, None]
    """
    paths = list(paths)
    blobs = []
    flags = os.O_RDONLY | getattr(os, "O_BINARY", 0)
    open_file, read, close, clock = os.open, os.read, os.close, time.perf_counter
    cold = not hasattr(os, "posix_fadvise")  # no way to announce: never look for slow reads
    start = 0
    while start < len(paths):
        handles = []
        try:
            for path in paths[start:start + _OPEN_AHEAD]:
                try:
                    handles.append(open_file(path, flags))
                except OSError as exc:
                    if exc.errno in (errno.EMFILE, errno.ENFILE) and handles:
                        break  # out of descriptors: read the files open, then open this one again
                    handles.append(None)
            if cold:
                _announce(handles)
            for index, handle in enumerate(handles):
                if handle is None:
                    blobs.append(None)
                    continue
                try:
                    if cold:
                        blob = read(handle, _READ_SIZE)
                    else:
                        began = clock()
                        blob = read(handle, _READ_SIZE)
                        if clock() - began > _SLOW_READ:
                            cold = True
                            _announce(handles[index + 1:])
                    if len(blob) == _READ_SIZE:  # a short read of a regular file is its end
                        parts = [blob]
                        while len(parts[-1]) == _READ_SIZE:
                            parts.append(read(handle, _READ_SIZE))
                        blob = b"".join(parts)
                except OSError:
                    blob = None
                blobs.append(blob)
        finally:
            for handle in handles:
                if handle is not None:
                    close(handle)
        start += len(handles)
    return blobs


def _announce(handles: list) -> None:
    """Tell the kernel these open files are about to be read (only a hint: where it cannot, nothing)."""
    advise = getattr(os, "posix_fadvise", None)
    if advise is None:
        return
    for handle in handles:
        if handle is not None:
            try:
                advise(handle, 0, 0, os.POSIX_FADV_WILLNEED)
            except OSError:
                pass
