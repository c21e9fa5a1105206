"""DOTA labels: ``x1 y1 x2 y2 x3 y3 x4 y4 classname [difficult]``, optional header lines."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import numpy as np

from hbb2obb.boxes import Boxes
from hbb2obb.io.text import (
    LabelFile,
    ProblemSink,
    coordinate_reason,
    describe_bad_number,
    looks_normalized,
    parse_number,
    shown,
    split_lines,
)

HEADER_PREFIXES = ("imagesource:", "gsd:")


def _is_header(fields: list[str]) -> bool:
    """An ``imagesource:`` or ``gsd:`` line, whatever its value (``imagesource: Google Earth``)."""
    return fields[0].lower().startswith(HEADER_PREFIXES)


def looks_like_dota(path: Path) -> bool:
    """Whether the first box line of a file is DOTA (a class name in field 9)."""
    for _, fields in split_lines(path, ProblemSink(path, strict=False)):  # the reader reports bad bytes
        if _is_header(fields):
            return True
        return len(fields) in (9, 10) and parse_number(fields[8]) is None and parse_number(fields[0]) is not None
    return False


def read_dota(path: str | Path, *, strict: bool, label_map: Optional[dict] = None) -> LabelFile:
    """Read a DOTA file; class names become ids through the label map.

    Parameters
    ----------
    path : path-like
    strict : bool
        Raise on the first broken line (ground truth) or skip and list it (predictions).
    label_map : dict of int to str, optional
        Names are matched case-insensitively. A line whose name the map lacks is broken.

    Returns
    -------
    LabelFile
        ``boxes.difficult`` carries the flag (0 when the column is absent).
    """
    path = Path(path)
    sink = ProblemSink(path, strict)
    ids_by_name = {name.lower(): class_id for class_id, name in (label_map or {}).items()}
    corners, classes, difficult, lines = [], [], [], []
    for number, fields in split_lines(path, sink):
        if _is_header(fields):
            continue
        if len(fields) not in (9, 10):
            sink.report(number, f"expected 10 fields (x1 y1 x2 y2 x3 y3 x4 y4 class difficult), found {len(fields)}")
            continue
        values = [parse_number(t) for t in fields[:8]]
        bad = next((i for i, v in enumerate(values) if v is None), None)
        if bad is not None:
            sink.report(number, describe_bad_number(fields[bad], f"field {bad + 1}"))
            continue
        reason = coordinate_reason(values, 1)
        if reason is not None:
            sink.report(number, reason)
            continue
        name = fields[8]
        if not ids_by_name:
            sink.report(number, f"class name {shown(name)} needs a label map (-mp/--map_path)")
            continue
        if name.lower() not in ids_by_name:
            sink.report(number, f"class name {shown(name)} is not in the label map")
            continue
        flag = fields[9] if len(fields) == 10 else "0"
        if flag not in ("0", "1"):
            sink.report(number, f"difficult flag must be 0 or 1, found {shown(flag)}")
            continue
        corners.append(values)
        classes.append(ids_by_name[name.lower()])
        difficult.append(flag == "1")
        lines.append(number)
    corner_array = np.array(corners, dtype=np.float64).reshape(-1, 4, 2)
    boxes = Boxes(
        corners=corner_array,
        class_id=np.array(classes, dtype=np.int64),
        line=np.array(lines, dtype=np.int64),
        difficult=np.array(difficult, dtype=bool),
    )
    return LabelFile(path, boxes, tuple(sink.problems), looks_normalized(corner_array))
