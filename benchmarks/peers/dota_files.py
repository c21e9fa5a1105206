"""Plain-Python readers of a DOTA set, as a user of the peers would write them (no hbb2obb).

``read_ground_truth``: per-frame DOTA files (header lines skipped; 8 corners, class name,
difficult flag). ``read_task1``: a DOTA Task1 submission, ``Task1_<class>.txt`` with rows
``image_id score x1 y1 ... x4 y4``.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path


def read_ground_truth(folder) -> dict:
    """``{frame: [(class name, [8 corners], difficult)]}`` of every ``*.txt`` in ``folder``."""
    frames = {}
    for path in sorted(Path(folder).glob("*.txt")):
        boxes = []
        for line in path.read_text().splitlines():
            parts = line.split()
            if len(parts) < 9:  # "imagesource:...", "gsd:..." header lines
                continue
            boxes.append((parts[8], [float(v) for v in parts[:8]], len(parts) > 9 and parts[9] == "1"))
        frames[path.stem] = boxes
    return frames


def read_task1(folder) -> dict:
    """``{frame: [(class name, score, [8 corners])]}`` of every ``Task1_<class>.txt`` in ``folder``."""
    frames = defaultdict(list)
    for path in sorted(Path(folder).glob("Task1_*.txt")):
        name = path.stem[len("Task1_"):]
        for line in path.read_text().splitlines():
            parts = line.split()
            if len(parts) == 10:
                frames[parts[0]].append((name, float(parts[1]), [float(v) for v in parts[2:]]))
    return frames


def class_names(ground_truth: dict, detections: dict) -> list:
    """Every class name met, sorted: the category ids are positions in this list."""
    names = {box[0] for boxes in ground_truth.values() for box in boxes}
    return sorted(names | {box[0] for boxes in detections.values() for box in boxes})
