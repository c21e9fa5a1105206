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
    ProblemSink,
    coordinate_reason,
    describe_bad_number,
    parse_number,
    read_blobs,
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
    classes = []
    for path in files:
        name = TASK1_FILE.match(path.name).group(1)
        if name.lower() not in ids_by_name:
            raise InputError(f"{path}: class {name!r} is not in the label map")
        classes.append(ids_by_name[name.lower()])
    vocabulary, bulk = _bulk_rows(read_blobs(files))
    known = {name: index for index, name in enumerate(vocabulary)}
    parts, problems = [], []
    for index, (path, class_id) in enumerate(zip(files, classes)):
        part = bulk.get(index)
        if part is None:  # not clean: line by line, with the message of each broken row
            (names, scores, corners, lines), skipped = _careful_rows(path)
            problems.extend(skipped)
            images = np.array([known.setdefault(name, len(known)) for name in names], dtype=np.int64)
            part = images, scores, corners, lines
        images, scores, corners, lines = part
        parts.append((images, np.full(len(scores), class_id, dtype=np.int64), scores, corners, lines))
    return Task1Detections(folder, _by_image(parts, list(known)), tuple(problems))


def _bulk_rows(blobs) -> tuple:
    """The Task1 files whose every row is clean, in bulk.

    Returns the image ids seen, and by file index (image id as an index into them, scores,
    corners, lines).
    """
    from hbb2obb.io.word_column import table, word_rows

    split = word_rows(blobs, 0)
    rows = split.rows
    good = rows.clean.copy()
    keep, values = table(rows, good, 9, slice(1, None))  # the score, then the corners
    row_file, row_line, word = rows.row_file[keep], rows.row_line[keep], split.word[keep]
    bounds = np.searchsorted(row_file, np.arange(len(blobs) + 1))
    return split.vocabulary, {
        f: (word[bounds[f]:bounds[f + 1]], values[bounds[f]:bounds[f + 1], 0], values[bounds[f]:bounds[f + 1], 1:],
            row_line[bounds[f]:bounds[f + 1]])
        for f in np.flatnonzero(good).tolist()}


def _careful_rows(path: Path) -> tuple:
    """A Task1 file line by line: its good rows (image ids, scores, corners, lines) and its problems."""
    sink = ProblemSink(path, strict=False)
    images, scores, corners, lines = [], [], [], []
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
        images.append(fields[0])
        scores.append(values[0])
        corners.append(values[1:])
        lines.append(number)
    return (images, np.array(scores, dtype=np.float64), np.array(corners, dtype=np.float64).reshape(-1, 8),
            np.array(lines, dtype=np.int64)), sink.problems


def _by_image(parts: list, names: list) -> dict:
    """Rows of every class file (in file order, then line order) gathered per image id.

    ``parts`` give each row's image as an index into ``names``. Images come in the order of
    their first row, as a dict filled row by row would hold them.
    """
    if not parts:
        return {}
    images = np.concatenate([p[0] for p in parts]).astype(np.int64)
    if images.size == 0:
        return {}
    class_id, scores, corners, lines = (np.concatenate([p[k] for p in parts]) for k in range(1, 5))
    order = np.argsort(images, kind="stable")  # per image, its rows in file then line order
    # in image order once, so each image's rows are one slice (Boxes copies a slice, where a
    # gather per image made a copy that Boxes copied again)
    corners, class_id, scores, lines = corners.reshape(-1, 4, 2)[order], class_id[order], scores[order], lines[order]
    counts = np.bincount(images, minlength=len(names))
    bounds = np.concatenate([[0], np.cumsum(counts)])
    first = np.full(len(names), images.size)
    first[counts > 0] = order[bounds[:-1][counts > 0]]  # the first row of each image present
    bounds = bounds.tolist()
    boxes = {}
    for image in np.argsort(first, kind="stable")[:np.count_nonzero(counts)].tolist():
        rows = slice(bounds[image], bounds[image + 1])
        boxes[names[image]] = Boxes(corners=corners[rows], class_id=class_id[rows], score=scores[rows],
                                    line=lines[rows])
    return boxes
