"""YOLO-HBB labels (the prompts): ``class xc yc w h [confidence]`` per line."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from hbb2obb.boxes import Boxes
from hbb2obb.io.atomic import write_text_atomic
from hbb2obb.io.text import (
    LabelFile,
    ProblemSink,
    coordinate_reason,
    describe_bad_class_id,
    describe_bad_number,
    looks_normalized,
    parse_class_id,
    parse_number,
    split_lines,
)


def read_yolo_hbb(path: str | Path, *, strict: bool) -> LabelFile:
    """Read horizontal boxes and return them as axis-aligned oriented boxes.

    Corners run clockwise from the top-left in image coordinates, so an HBB can be scored as
    an OBB unchanged (the identity baseline). Negative sizes are broken lines.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "h.txt"
    >>> _ = p.write_text("2 10 20 4 2\\n")
    >>> read_yolo_hbb(p, strict=True).boxes.corners[0, 2].tolist()
    [12.0, 21.0]
    """
    path = Path(path)
    sink = ProblemSink(path, strict)
    classes, values, lines, scores = [], [], [], []
    for number, fields in split_lines(path, sink):
        if len(fields) not in (5, 6):
            sink.report(number, f"expected 5 fields (class xc yc w h) or 6 (with confidence), found {len(fields)}")
            continue
        class_id = parse_class_id(fields[0])
        if class_id is None:
            sink.report(number, describe_bad_class_id(fields[0]))
            continue
        parsed = [parse_number(t) for t in fields[1:]]
        bad = next((i for i, v in enumerate(parsed) if v is None), None)
        if bad is not None:
            sink.report(number, describe_bad_number(fields[1 + bad], f"field {bad + 2}"))
            continue
        reason = coordinate_reason(parsed[:4], 2)
        if reason is not None:
            sink.report(number, reason)
            continue
        if parsed[2] < 0 or parsed[3] < 0:
            sink.report(number, "width and height must not be negative")
            continue
        classes.append(class_id)
        values.append(parsed[:4])
        scores.append(parsed[4] if len(parsed) == 5 else None)
        lines.append(number)
    xywh = np.array(values, dtype=np.float64).reshape(-1, 4)
    scored = sum(s is not None for s in scores)
    score = np.array(scores, dtype=np.float64) if scores and scored == len(scores) else None
    # some lines with a confidence, some without: each line's, NaN where none (as the YOLO-OBB reader keeps them)
    line_scores = np.array([np.nan if s is None else s for s in scores], dtype=np.float64) \
        if 0 < scored < len(scores) else None
    boxes = Boxes.from_xywh(xywh, np.array(classes, dtype=np.int64), score=score, line=np.array(lines, dtype=np.int64))
    return LabelFile(path, boxes, tuple(sink.problems), looks_normalized(xywh), line_scores)


def read_yolo_hbb_pixels(path: str | Path, frame_size: tuple | None, *, strict: bool,
                         normalized_limit: float = 2.0) -> LabelFile:
    """Read horizontal boxes into pixels, scaling ``xc yc w h`` before the corners are formed.

    A file is normalized when no value exceeds ``normalized_limit`` in magnitude (the reference
    converter's rule, which lets a box run past the frame's edge). Scaling the centre and size
    first, as the reference tool does, gives the same float corners it computes, so both round
    a value landing on a half the same way. Needs ``frame_size`` for a normalized file.
    """
    from hbb2obb.errors import InputError

    label_file = read_yolo_hbb(path, strict=strict)
    corners = label_file.boxes.corners
    if not len(corners):
        return LabelFile(label_file.path, label_file.boxes, label_file.problems, None, label_file.line_scores)
    xy_min, xy_max = corners[:, 0], corners[:, 2]
    xywh = np.concatenate([(xy_min + xy_max) / 2, xy_max - xy_min], axis=1)
    if np.abs(xywh).max() > normalized_limit:
        return LabelFile(label_file.path, label_file.boxes, label_file.problems, False, label_file.line_scores)
    if frame_size is None:
        raise InputError(f"{label_file.path}: normalized coordinates need the frame size (give -i IMAGES or -iw/-ih)")
    values = _xywh_values(Path(path), label_file.boxes.line)
    width, height = frame_size
    pixels = values * np.array([width, height, width, height], dtype=np.float64)
    boxes = Boxes.from_xywh(pixels, label_file.boxes.class_id, score=label_file.boxes.score, line=label_file.boxes.line)
    return LabelFile(label_file.path, boxes, label_file.problems, False, label_file.line_scores)


def _xywh_values(path: Path, lines: np.ndarray) -> np.ndarray:
    """The ``xc yc w h`` fields of the given (good) lines, as written."""
    wanted = set(lines.tolist())
    rows = {number: [float(t) for t in fields[1:5]] for number, fields in split_lines(path) if number in wanted}
    return np.array([rows[number] for number in lines.tolist()], dtype=np.float64).reshape(-1, 4)


def write_yolo(path: str | Path, boxes: Boxes, size: tuple | None, *, obb: bool, normalize: bool,
               precision: int) -> None:
    """Write a YOLO file as the reference converter does: HBB ``class xc yc w h`` or OBB 8 corners.

    Values have ``precision`` decimals; ``normalize`` divides by the frame size; a confidence
    column (4 decimals) follows when the boxes carry one.
    """
    corners = boxes.corners
    if obb:
        values = corners.reshape(-1, 8)
    else:
        x0, y0 = corners[..., 0].min(axis=1), corners[..., 1].min(axis=1)
        x1, y1 = corners[..., 0].max(axis=1), corners[..., 1].max(axis=1)
        values = np.stack([(x0 + x1) / 2, (y0 + y1) / 2, x1 - x0, y1 - y0], axis=1)
    if normalize:
        if size is None:
            from hbb2obb.errors import InputError

            raise InputError(f"{path}: frame size unknown, needed by --normalize (give -i IMAGES or -iw/-ih)")
        values = values / np.tile(np.array(size, dtype=np.float64), values.shape[1] // 2)
    lines = []
    for row, class_id in enumerate(boxes.class_id.tolist()):
        line = f"{class_id} " + " ".join(f"{v:.{precision}f}" for v in values[row].tolist())
        if boxes.score is not None:
            line += f" {boxes.score[row]:.4f}"
        lines.append(line + "\n")
    write_text_atomic(path, "".join(lines))
