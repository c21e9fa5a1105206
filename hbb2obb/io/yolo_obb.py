"""YOLO-OBB labels: ``class x1 y1 x2 y2 x3 y3 x4 y4 [confidence]`` per line."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import numpy as np

from hbb2obb.boxes import Boxes
from hbb2obb.io.text import (
    LabelFile,
    ProblemSink,
    describe_bad_number,
    looks_normalized,
    parse_class_id,
    parse_number,
    split_lines,
)

OBB_FIELDS = (9, 10)  # class + 8 coordinates, optionally a confidence


def _field_count_reason(count: int) -> str:
    return f"expected 9 fields (class x1 y1 x2 y2 x3 y3 x4 y4) or 10 (with confidence), found {count}"


def _row_reason(fields: list[str]) -> Optional[str]:
    """Why a row with the right field count is still broken, or ``None`` when it is fine."""
    if parse_class_id(fields[0]) is None:
        return f"class id is not an integer: {fields[0]!r}"
    for position, token in enumerate(fields[1:], start=2):
        if parse_number(token) is None:
            what = "confidence" if position == 10 else f"field {position}"
            return describe_bad_number(token, what)
    return None


def read_yolo_obb(path: str | Path, *, strict: bool) -> LabelFile:
    """Read a YOLO-OBB label file.

    Parameters
    ----------
    path : path-like
        The label file.
    strict : bool
        ``True`` for ground truth: the first broken line raises
        :class:`~hbb2obb.errors.LabelFormatError`. ``False`` for predictions: broken lines are
        skipped and listed in ``problems``.

    Returns
    -------
    LabelFile

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "f.txt"
    >>> _ = p.write_text("0 0 0 4 0 4 2 0 2\\n1 0 0 1 0 1 nan 0 1\\n")
    >>> f = read_yolo_obb(p, strict=False)
    >>> len(f.boxes), [str(q).split(":", 1)[1] for q in f.problems]
    (1, ['2: field 7 is not finite: 'nan''])
    """
    path = Path(path)
    sink = ProblemSink(path, strict)
    rows: list[list[str]] = []
    lines: list[int] = []
    for number, fields in split_lines(path):
        if len(fields) not in OBB_FIELDS:
            sink.report(number, _field_count_reason(len(fields)))
            continue
        rows.append(fields)
        lines.append(number)
    return _rows_to_file(path, rows, lines, sink)


def _rows_to_file(path: Path, rows: list[list[str]], lines: list[int], sink: ProblemSink) -> LabelFile:
    keep = _bulk_or_checked(rows, lines, sink)
    rows = [rows[i] for i in keep]
    lines = [lines[i] for i in keep]
    if rows:
        class_id = np.array([r[0] for r in rows], dtype=np.int64)
        corners = np.array([r[1:9] for r in rows], dtype=np.float64).reshape(-1, 4, 2)
        with_confidence = all(len(r) == 10 for r in rows)
        score = np.array([r[9] for r in rows], dtype=np.float64) if with_confidence else None
    else:
        class_id, corners, score = np.zeros(0, np.int64), np.zeros((0, 4, 2)), None
    boxes = Boxes(corners=corners, class_id=class_id, score=score, line=np.array(lines, dtype=np.int64))
    return LabelFile(path, boxes, tuple(sink.problems), looks_normalized(corners))


def _bulk_or_checked(rows: list[list[str]], lines: list[int], sink: ProblemSink) -> list[int]:
    """Indices of the good rows. One bulk conversion when the file is clean (the usual case)."""
    try:
        np.array([r[0] for r in rows], dtype=np.int64)
        values = np.array([r[1:] + ["0"] * (10 - len(r)) for r in rows], dtype=np.float64)
        if np.isfinite(values).all():
            return list(range(len(rows)))
    except (ValueError, OverflowError):
        pass
    keep = []
    for index, fields in enumerate(rows):
        reason = _row_reason(fields)
        if reason is None:
            keep.append(index)
        else:
            sink.report(lines[index], reason)
    return keep


def read_obb_labels(path: str | Path, *, strict: bool, label_map: Optional[dict] = None) -> LabelFile:
    """Read an oriented-box label file in YOLO-OBB or DOTA format, telling them apart by content.

    A ``.dota`` suffix, or a first box line whose ninth field is a word rather than a number,
    means DOTA; anything else is read as YOLO-OBB.
    """
    from hbb2obb.io.dota import looks_like_dota, read_dota

    path = Path(path)
    if path.suffix.lower() == ".dota" or looks_like_dota(path):
        return read_dota(path, strict=strict, label_map=label_map)
    return read_yolo_obb(path, strict=strict)


def format_obb_line(class_id: int, corners: np.ndarray, decimals: Optional[int] = None) -> str:
    """One YOLO-OBB line; integers stay integers unless ``decimals`` is given."""
    if decimals is None:
        coords = " ".join(f"{v:g}" if float(v).is_integer() else repr(float(v)) for v in corners.reshape(-1))
    else:
        coords = " ".join(f"{v:.{decimals}f}" for v in corners.reshape(-1))
    return f"{int(class_id)} {coords}"


def write_yolo_obb(path: str | Path, boxes: Boxes, decimals: Optional[int] = None) -> None:
    """Write boxes as a YOLO-OBB file (absolute coordinates as stored), one box per line."""
    text = "".join(
        format_obb_line(c, k, decimals) + "\n" for c, k in zip(boxes.class_id.tolist(), boxes.corners)
    )
    Path(path).write_text(text, encoding="utf-8")
