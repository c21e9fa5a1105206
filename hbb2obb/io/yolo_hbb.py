"""YOLO-HBB labels (the prompts): ``class xc yc w h [confidence]`` per line."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from hbb2obb.boxes import Boxes
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
    score = np.array(scores, dtype=np.float64) if scores and all(s is not None for s in scores) else None
    boxes = Boxes.from_xywh(xywh, np.array(classes, dtype=np.int64), score=score, line=np.array(lines, dtype=np.int64))
    return LabelFile(path, boxes, tuple(sink.problems), looks_normalized(xywh))
