"""DOTA labels: ``x1 y1 x2 y2 x3 y3 x4 y4 classname [difficult]``, optional header lines.

Prediction files may carry a confidence instead: ``... classname score`` (a tenth field that is
not the flag 0 or 1 on every line of the file) or ``... classname difficult score``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import numpy as np

from hbb2obb.boxes import Boxes
from hbb2obb.io.atomic import write_text_atomic
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
_HEADERS = tuple(prefix.encode() for prefix in HEADER_PREFIXES)


def _is_header(fields: list[str]) -> bool:
    """An ``imagesource:`` or ``gsd:`` line, whatever its value (``imagesource: Google Earth``)."""
    return fields[0].lower().startswith(HEADER_PREFIXES)


def looks_like_dota(path: Path) -> bool:
    """Whether the first box line of a file is DOTA (a class name in field 9)."""
    for _, fields in split_lines(path, ProblemSink(path, strict=False)):  # the reader reports bad bytes
        if _is_header(fields):
            return True
        return len(fields) in (9, 10, 11) and parse_number(fields[8]) is None and parse_number(fields[0]) is not None
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
        ``boxes.difficult`` carries the flag (0 when the column is absent); ``boxes.score`` the
        confidence of a prediction file that has one on every line (``None`` otherwise).
    """
    path = Path(path)
    sink = ProblemSink(path, strict)
    ids_by_name = {name.lower(): class_id for class_id, name in (label_map or {}).items()}
    corners, classes, difficult, lines, tenth, scores = [], [], [], [], [], []
    counts = (9, 10) if strict else (9, 10, 11)
    for number, fields in split_lines(path, sink):
        if _is_header(fields):
            continue
        if len(fields) not in counts:
            what = "x1 y1 x2 y2 x3 y3 x4 y4 class difficult" + ("" if strict else " [score]")
            sink.report(number, f"expected 10 fields ({what}), found {len(fields)}")
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
        flag = fields[9] if len(fields) >= 10 else "0"
        score = parse_number(fields[10]) if len(fields) == 11 else None
        if len(fields) == 11 and score is None:
            sink.report(number, describe_bad_number(fields[10], "score"))
            continue
        if flag not in ("0", "1") and (strict or len(fields) == 11 or parse_number(flag) is None):
            sink.report(number, f"difficult flag must be 0 or 1, found {shown(flag)}"
                        + ("" if strict or len(fields) == 11 else " (or a score as a number)"))
            continue
        corners.append(values)
        classes.append(ids_by_name[name.lower()])
        difficult.append(flag == "1")
        tenth.append(flag if len(fields) == 10 else None)
        scores.append(score)
        lines.append(number)
    corner_array = np.array(corners, dtype=np.float64).reshape(-1, 4, 2)
    score_array = None
    if not strict and tenth and all(t is not None for t in tenth) and any(t not in ("0", "1") for t in tenth):
        # a tenth field that is not always the 0/1 flag: the detector's confidence
        score_array = np.array([parse_number(t) for t in tenth], dtype=np.float64)
        difficult = [False] * len(tenth)
    elif scores and all(v is not None for v in scores):
        score_array = np.array(scores, dtype=np.float64)
    boxes = Boxes(
        corners=corner_array,
        class_id=np.array(classes, dtype=np.int64),
        score=score_array,
        line=np.array(lines, dtype=np.int64),
        difficult=np.array(difficult, dtype=bool),
    )
    return LabelFile(path, boxes, tuple(sink.problems), looks_normalized(corner_array))


@dataclass(frozen=True)
class DotaRows:
    """The DOTA files read in bulk by :func:`read_dota_many`: their boxes, file after file.

    Attributes
    ----------
    files : (f,) int64
        The files read (indices into the blobs given), increasing.
    file : (r,) int64
        Per box, its file (an index into the blobs given), non-decreasing.
    corners : (r, 4, 2) float64
    class_id, line : (r,) int64
    difficult : (r,) bool
    score : (r,) float64
        The detector's confidence, NaN in a file without one.
    scored : (f,) bool
        Per file read: whether its tenth column is a confidence (not the difficult flag).
    """

    files: np.ndarray
    file: np.ndarray
    corners: np.ndarray
    class_id: np.ndarray
    line: np.ndarray
    difficult: np.ndarray
    score: np.ndarray
    scored: np.ndarray

    @classmethod
    def empty(cls) -> "DotaRows":
        """No file read."""
        none = np.zeros(0, dtype=np.int64)
        return cls(none, none, np.zeros((0, 4, 2)), none, none, np.zeros(0, dtype=bool), np.zeros(0),
                   np.zeros(0, dtype=bool))


def read_dota_many(blobs, strict, label_map: Optional[dict]) -> DotaRows:
    """The DOTA files among many that can be read in bulk, read as :func:`read_dota` reads each.

    Every file whose lines are all ``x1 y1 ... y4 classname [difficult]``, with a class of the
    label map, numbers the bulk tokenizer takes and single spaces between fields, is read in a
    few passes over all of them together; every other file (a broken line, a score column after
    the flag, unusual text) is left out, for :func:`read_dota` and its exact messages.

    Parameters
    ----------
    blobs : sequence of bytes or None
        The files' bytes.
    strict : sequence of bool
        Per file: ground truth (a difficult column other than ``0``/``1`` is left to the careful
        reader, which raises) or predictions (such a column is the detector's confidence).
    label_map : dict of int to str or None
        Without one, nothing is read (every class name needs it).

    Returns
    -------
    DotaRows
    """
    from hbb2obb.io.word_column import word_rows

    ids_by_name = {name.lower(): class_id for class_id, name in (label_map or {}).items()}
    strict = np.broadcast_to(np.asarray(strict, dtype=bool), (len(blobs),))
    waiting = np.ones(len(blobs), dtype=bool) if ids_by_name else np.zeros(len(blobs), dtype=bool)
    parts = []
    for column in (-2, -1):  # "... classname difficult" lines, then "... classname" lines
        index = np.flatnonzero(waiting)
        if not index.size:
            break
        split = word_rows([blobs[i] for i in index.tolist()], column, _blank_headers)
        part = _dota_rows(split, column, ids_by_name, strict[index])
        parts.append(_renumbered(part, index))
        waiting[part.files] = False
    if not parts:
        return DotaRows.empty()
    if len(parts) == 1:
        return parts[0]
    merged = [np.concatenate([getattr(part, name) for part in parts]) for name in DotaRows.__dataclass_fields__]
    files = merged[0]
    file_order = np.argsort(files, kind="stable")
    row_order = np.argsort(merged[1], kind="stable")
    return DotaRows(files[file_order], *(column[row_order] for column in merged[1:7]), merged[7][file_order])


def _renumbered(part: DotaRows, index: np.ndarray) -> DotaRows:
    """``part``, read from ``blobs[index]``, with its files numbered as in ``blobs``."""
    return DotaRows(index[part.files], index[part.file], part.corners, part.class_id, part.line, part.difficult,
                    part.score, part.scored)


def _blank_headers(text: bytes) -> bytes:
    """The header lines at the top of a DOTA file (``imagesource:``, ``gsd:``) made blank."""
    start, lines = 0, 0
    while text[start:start + 12].lower().startswith(_HEADERS):
        end = text.find(b"\n", start)
        start = end + 1 if end >= 0 else len(text)
        lines += 1
    return b"\n" * lines + memoryview(text)[start:] if lines else text  # one copy of the text, not one a line


def _dota_rows(split, column: int, ids_by_name: dict, strict: np.ndarray) -> DotaRows:
    """The files of ``split`` that are clean DOTA rows with the word ``column`` (numbered within ``split``)."""
    from hbb2obb.io.word_column import table

    rows = split.rows
    numbers = 9 if column == -2 else 8  # the eight corners, then the difficult column
    good = rows.clean.copy()
    vocabulary = np.array([ids_by_name.get(word.lower(), -1) if parse_number(word) is None else -1
                           for word in split.vocabulary], dtype=np.int64)
    class_id = vocabulary[split.word] if split.word.size else np.zeros(0, dtype=np.int64)
    good[rows.row_file[class_id < 0]] = False
    keep, values = table(rows, good, numbers, slice(0, 8))
    row_file, line, class_id = rows.row_file[keep], rows.row_line[keep], class_id[keep]
    flag = split.after[keep] if column == -2 else np.full(row_file.size, ord("0"), dtype=np.uint8)
    not_flag = (flag != ord("0")) & (flag != ord("1"))
    scored = np.zeros(good.size, dtype=bool)  # a tenth column that is not always the 0/1 flag: confidences
    scored[row_file[not_flag]] = True
    good[scored & strict] = False  # ground truth: the careful reader raises at the line
    keep = good[row_file]
    if not keep.all():
        row_file, values, class_id, line, flag = row_file[keep], values[keep], class_id[keep], line[keep], flag[keep]
    score = np.full(row_file.size, np.nan)
    with_score = scored[row_file]
    if column == -2 and with_score.any():
        score[with_score] = values[with_score, 8]
    difficult = (flag == ord("1")) & ~with_score
    files = np.flatnonzero(good)
    return DotaRows(files, row_file, values[:, :8].reshape(-1, 4, 2), class_id, line, difficult, score, scored[files])


def write_dota(path: str | Path, boxes: Boxes, names: dict, imagesource: str = "drone", gsd: str = "null") -> None:
    """Write a DOTA file as the reference tool does: two header lines, then integer corners.

    Corners are rounded halves to even (from :func:`~hbb2obb.io.frame_labels.canonical` values);
    the class is named through ``names``; the difficult flag is 0 where ``boxes`` has none.
    """
    from hbb2obb.io.frame_labels import integer_corners

    difficult = boxes.difficult if boxes.difficult is not None else np.zeros(len(boxes), dtype=bool)
    lines = [f"imagesource:{imagesource}", f"gsd:{gsd}"]
    for class_id, quad, flag in zip(boxes.class_id.tolist(), integer_corners(boxes.corners), difficult.tolist()):
        lines.append(" ".join(map(str, quad.reshape(-1).tolist())) + f" {names.get(class_id, class_id)} {int(flag)}")
    write_text_atomic(path, "".join(line + "\n" for line in lines))
