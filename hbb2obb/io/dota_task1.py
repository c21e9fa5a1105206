"""DOTA Task1 result files: one ``Task1_<class>.txt`` per class, rows ``image_id score x1 y1 ... x4 y4``.

A DOTA submission folder is read whole and split by image, so it scores against a folder of
per-image ground-truth files directly. Broken rows are skipped and listed with file and line,
as for any prediction file.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import numpy as np

from hbb2obb.boxes import Boxes
from hbb2obb.errors import InputError, UsageError
from hbb2obb.io.text import (
    LabelProblem,
    ProblemSink,
    coordinate_reason,
    describe_bad_number,
    parse_number,
    split_lines,
)

TASK1_FILE = re.compile(r"^Task1_(.+)\.txt$")


def task1_files(folder: str | Path) -> list[Path]:
    """The ``Task1_<class>.txt`` files of a folder, sorted by name (empty when it has none).

    Every prediction folder is asked (is it a submission?), so the name is matched before the
    file is looked at: a folder of 100,000 per-frame files costs no ``stat`` and no Path each.
    """
    folder = Path(folder)
    if not folder.is_dir():
        return []
    with os.scandir(folder) as entries:
        names = [entry.name for entry in entries if TASK1_FILE.match(entry.name) and entry.is_file()]
    return [folder / name for name in sorted(names)]


@dataclass(frozen=True)
class Task1Detections:
    """A submission split by image.

    Attributes
    ----------
    folder : Path
    boxes : dict of str to Boxes
        Per image id, its detections (class, score, line in its class file), class files in
        name order, then line order.
    problems : tuple of LabelProblem
        Rows skipped, with file and line.
    """

    folder: Path
    boxes: dict
    problems: tuple


def read_task1(folder: str | Path, label_map: Optional[dict]) -> Task1Detections:
    """Read every ``Task1_<class>.txt`` of a folder; class names go through the label map.

    Parameters
    ----------
    folder : path-like
    label_map : dict of int to str
        Names are matched case-insensitively; a file whose class the map lacks is an input error
        (every one of its detections would otherwise be dropped unseen).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> rows = "P1 0.9 0 0 4 0 4 2 0 2\\nP2 0.8 0 0 1 0 1 1 0 1\\nP1 x 0 0 1 0 1 1 0 1\\n"
    >>> _ = (root / "Task1_plane.txt").write_text(rows)
    >>> found = read_task1(root, {0: "plane"})
    >>> sorted(found.boxes), found.boxes["P1"].score.tolist(), [str(p).split(":", 1)[1] for p in found.problems]
    (['P1', 'P2'], [0.9], ["3: score is not a number: 'x'"])
    """
    folder = Path(folder)
    files = task1_files(folder)
    if not files:
        raise InputError(f"{folder}: no Task1_<class>.txt files")
    if not label_map:
        raise UsageError(f"{folder}: DOTA Task1 files name their classes: give the label map (-mp/--map_path)")
    ids_by_name = {name.lower(): class_id for class_id, name in label_map.items()}
    per_image: dict[str, list] = {}
    problems: list[LabelProblem] = []
    for path in files:
        name = TASK1_FILE.match(path.name).group(1)
        if name.lower() not in ids_by_name:
            raise InputError(f"{path}: class {name!r} is not in the label map")
        class_id = ids_by_name[name.lower()]
        sink = ProblemSink(path, strict=False)
        for number, fields in split_lines(path):
            if len(fields) != 10:
                sink.report(number, f"expected 10 fields (image_id score x1 y1 x2 y2 x3 y3 x4 y4), found {len(fields)}")
                continue
            values = [parse_number(t) for t in fields[1:]]
            bad = next((i for i, v in enumerate(values) if v is None), None)
            if bad is not None:
                sink.report(number, describe_bad_number(fields[bad + 1], "score" if bad == 0 else f"field {bad + 2}"))
                continue
            reason = coordinate_reason(values[1:], 3)
            if reason is not None:
                sink.report(number, reason)
                continue
            per_image.setdefault(fields[0], []).append((class_id, values[0], values[1:], number))
        problems.extend(sink.problems)
    boxes = {}
    for image, rows in per_image.items():
        boxes[image] = Boxes(
            corners=np.array([r[2] for r in rows], dtype=np.float64).reshape(-1, 4, 2),
            class_id=np.array([r[0] for r in rows], dtype=np.int64),
            score=np.array([r[1] for r in rows], dtype=np.float64),
            line=np.array([r[3] for r in rows], dtype=np.int64),
        )
    return Task1Detections(folder, boxes, tuple(problems))
