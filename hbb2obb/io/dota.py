"""DOTA labels: ``x1 y1 x2 y2 x3 y3 x4 y4 classname [difficult]``, optional header lines.

Prediction files may carry a confidence instead: ``... classname score`` (a tenth field that is
not the flag 0 or 1 on every line of the file) or ``... classname difficult score``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import numpy as np

from hbb2obb.boxes import Boxes
from hbb2obb.io.atomic import write_text_atomic
from hbb2obb.io.text import (
    MAX_COORDINATE,
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


def read_dota_many(blobs, paths, strict, label_map: Optional[dict]) -> dict:
    """The DOTA files among many that are read in bulk, as :func:`read_dota` reads each.

    Every file whose lines are all ``x1 y1 ... y4 classname [difficult]`` with a class of the
    label map, numbers the bulk tokenizer takes and single spaces between fields is read in a
    few passes over all of them; every other file (a broken line, a score column, unusual text)
    is left out, for :func:`read_dota` and its exact messages.

    Parameters
    ----------
    blobs : sequence of bytes or None
        The files' bytes.
    paths : sequence of str or Path
        Their paths (the ``LabelFile`` of each).
    strict : sequence of bool
        Per file: ground truth (a difficult column other than ``0``/``1`` is left to the careful
        reader, which raises) or predictions (such a column is the detector's confidence).
    label_map : dict of int to str or None
        Without one, nothing is read in bulk (every class name needs it).

    Returns
    -------
    dict of int to LabelFile
        By index into ``blobs``, the files read.
    """
    from hbb2obb.io.word_column import word_rows

    ids_by_name = {name.lower(): class_id for class_id, name in (label_map or {}).items()}
    if not ids_by_name or not len(blobs):
        return {}
    read: dict = {}
    waiting = np.ones(len(blobs), dtype=bool)
    for column in (-2, -1):  # "... classname difficult" lines, then "... classname" lines
        index = np.flatnonzero(waiting)
        if not index.size:
            break
        split = word_rows([blobs[i] for i in index.tolist()], column, _blank_headers)
        taken = _dota_rows(split, column, ids_by_name, np.asarray(strict, dtype=bool)[index])
        for local, label_file in taken(paths, index).items():
            read[int(index[local])] = label_file
            waiting[index[local]] = False
    return read


def _blank_headers(text: bytes) -> bytes:
    """The header lines at the top of a DOTA file (``imagesource:``, ``gsd:``) made blank."""
    lines = 0
    while text[:12].lower().startswith(_HEADERS):
        end = text.find(b"\n")
        text = text[end + 1:] if end >= 0 else b""
        lines += 1
    return b"\n" * lines + text if lines else text


def _dota_rows(split, column: int, ids_by_name: dict, strict: np.ndarray):
    """The files of ``split`` that are clean DOTA: a function giving their ``LabelFile`` by index."""
    rows = split.rows
    numbers = 9 if column == -2 else 8  # the eight corners, then the difficult column
    files = rows.clean.size
    good = rows.clean.copy()
    vocabulary = np.array([ids_by_name.get(word.lower(), -1) if parse_number(word) is None else -1
                           for word in split.vocabulary], dtype=np.int64)
    class_id = vocabulary[split.word] if split.word.size else np.zeros(0, dtype=np.int64)
    fine = (rows.row_fields == numbers) & (class_id >= 0)
    good[rows.row_file[~fine]] = False
    keep = good[rows.row_file]
    starts = rows.row_start[keep]
    values = rows.values[starts[:, None] + np.arange(numbers)] if starts.size else np.zeros((0, numbers))
    row_file, row_line, class_id = rows.row_file[keep], rows.row_line[keep], class_id[keep]
    corners = values[:, :8]
    if not rows.plain and corners.size:
        bad = ~(np.isfinite(corners) & (np.abs(corners) <= MAX_COORDINATE)).all(axis=1)
        if column == -2:
            bad |= ~np.isfinite(values[:, 8])
        if bad.any():  # the careful reader says which line and why
            good[row_file[bad]] = False
    flag_text = split.after[keep] if column == -2 else np.full(row_file.size, ord("0"), dtype=np.uint8)
    is_flag = (flag_text == ord("0")) | (flag_text == ord("1"))
    scored = np.zeros(files, dtype=bool)  # a tenth column that is not always the flag: confidences
    if not is_flag.all():
        scored[row_file[~is_flag]] = True
        good[scored & strict] = False  # ground truth: the careful reader raises at the line
    keep = good[row_file]
    bounds = np.searchsorted(row_file[keep], np.arange(files + 1))
    corners, class_id, row_line = corners[keep].reshape(-1, 4, 2), class_id[keep], row_line[keep]
    tenth, difficult = values[keep, 8] if column == -2 else None, flag_text[keep] == ord("1")

    def label_files(paths, index) -> dict:
        found = {}
        for local in np.flatnonzero(good).tolist():
            a, b = bounds[local], bounds[local + 1]
            quads = corners[a:b]
            score = None
            flags = difficult[a:b]
            if scored[local]:
                score, flags = tenth[a:b].copy(), np.zeros(b - a, dtype=bool)
            boxes = Boxes(corners=quads, class_id=class_id[a:b], score=score, line=row_line[a:b], difficult=flags)
            found[local] = LabelFile(Path(paths[int(index[local])]), boxes, (), looks_normalized(quads))
        return found

    return label_files


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
