"""The YOLO-OBB bad-input rule (docs/metrics.md §1) restated in plain Python, line by line.

The tests' oracle for :func:`hbb2obb.io.read_yolo_obb` and :func:`hbb2obb.io.yolo_obb.read_obb_batch`:
no numpy tokenizer, no code of the package's readers, only ``str.split``, ``float`` and ``int``.
Deliberately slow and obvious.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np

from hbb2obb.boxes import Boxes
from hbb2obb.io.text import LabelFile, LabelProblem

NUMBER = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?")  # ASCII decimal: 12, -0.5, 1e3
INTEGER = re.compile(r"[+-]?[0-9]+")
NON_FINITE = re.compile(r"[+-]?(nan|inf|infinity)", re.IGNORECASE)
LIMIT = 1e12  # |coordinate| beyond this is a broken line


def shown(token: str) -> str:
    """A token as messages quote it: repr, its first 40 characters only when longer."""
    if len(token) <= 40:
        return repr(token)
    return repr(token[:40])[:-1] + f"...' ({len(token)} characters)"


def number_reason(token: str, what: str):
    if NUMBER.fullmatch(token):
        if math.isfinite(float(token)):
            return None
        return f"{what} is not finite: {shown(token)}"
    if NON_FINITE.fullmatch(token):
        return f"{what} is not finite: {shown(token)}"
    return f"{what} is not a number: {shown(token)}"


def line_reason(fields: list):
    """Why a line of 9 or 10 fields is broken, or None."""
    token = fields[0]
    if not INTEGER.fullmatch(token):
        return f"class id is not an integer: {shown(token)}"
    if not -(2**63) <= int(token) < 2**63:
        return f"class id is out of range (more than 63 bits): {shown(token)}"
    for position, token in enumerate(fields[1:], start=2):
        reason = number_reason(token, "confidence" if position == 10 else f"field {position}")
        if reason:
            return reason
    for position, token in enumerate(fields[1:9], start=2):
        if abs(float(token)) > LIMIT:
            return f"field {position} is out of range: {float(token):g} (coordinates beyond +-1e+12 are refused)"
    return None


def read(path: Path, data: bytes) -> LabelFile:
    """The file as the rule reads it with ``strict=False`` (the first problem is the strict error).

    Problems come in the readers' order: bytes that are not UTF-8 and wrong field counts first,
    then every other reason, each group in line order.
    """
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    first, later = [], []
    classes, corners, scores, lines = [], [], [], []
    for number, raw in enumerate(re.split(rb"\r\n|\r|\n", data), start=1):
        try:
            fields = raw.decode("utf-8").split()
        except UnicodeDecodeError as exc:
            first.append(LabelProblem(path, number, f"not UTF-8 text ({exc.reason} at byte {exc.start} of the line)"))
            continue
        if not fields:
            continue
        if len(fields) not in (9, 10):
            first.append(LabelProblem(path, number, "expected 9 fields (class x1 y1 x2 y2 x3 y3 x4 y4) or 10 "
                                                    f"(with confidence), found {len(fields)}"))
            continue
        reason = line_reason(fields)
        if reason:
            later.append(LabelProblem(path, number, reason))
            continue
        classes.append(int(fields[0]))
        corners.append([float(t) for t in fields[1:9]])
        scores.append(float(fields[9]) if len(fields) == 10 else None)
        lines.append(number)
    boxes = Boxes(
        corners=np.array(corners, dtype=np.float64).reshape(-1, 4, 2),
        class_id=np.array(classes, dtype=np.int64),
        score=np.array(scores, dtype=np.float64) if scores and None not in scores else None,
        line=np.array(lines, dtype=np.int64),
    )
    normalized = None if not corners else max(abs(v) for row in corners for v in row) <= 2
    return LabelFile(path, boxes, tuple(first + later), normalized)
