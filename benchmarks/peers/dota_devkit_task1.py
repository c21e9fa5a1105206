#!/usr/bin/env python3
"""The DOTA devkit's Task1 evaluation as the dotadevkit package ships it, over DOTA v1.0's 15 classes.

``dotadevkit.evaluate.task1.evaluate`` prints its mAP and returns nothing, so this calls its
``voc_eval`` per class with the arguments ``evaluate`` passes (IoU above 0.5, the VOC07
11-point AP, DOTA 1.0: difficult boxes ignored) and prints the per-class APs and their mean as
JSON. The devkit's own prints (every class's TP/FP arrays) go to /dev/null.

``voc_eval`` fails on a class with no detection (its reader expects at least one row): such a
class gets AP 0 when the ground truth has boxes of it that count (not difficult), and no AP when
it has none, as in our ``dota_map50``, which averages the classes that have such boxes.

Usage::

    python dota_devkit_task1.py GT_DIR PRED_DIR IMAGESET   # IMAGESET: a file of frame ids, one a line
"""

import contextlib
import json
import os
import sys
from pathlib import Path

from dotadevkit.evaluate.task1 import voc_eval
from dotadevkit.misc.dota_utils import dota_classes


def main() -> None:
    gt, pred, imageset = sys.argv[1:4]
    aps = {}
    counted = _counted_classes(Path(gt))
    with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink):
        for name in dota_classes:
            detections = Path(pred) / f"Task1_{name}.txt"
            if name not in counted:
                continue
            if not detections.is_file() or not detections.read_text().strip():
                aps[name] = 0.0
                continue
            _, _, ap = voc_eval(str(Path(pred) / "Task1_{:s}.txt"), str(Path(gt) / "{:s}.txt"), imageset, name,
                                ovthresh=0.5, use_07_metric=True, version="1.0")
            aps[name] = float(ap)
    print(json.dumps({"map": sum(aps.values()) / len(aps), "ap": aps}))


def _counted_classes(gt: Path) -> set:
    """The classes with at least one ground-truth box that is not difficult."""
    found = set()
    for path in gt.glob("*.txt"):
        for line in path.read_text().splitlines():
            fields = line.split()
            if len(fields) >= 9 and (len(fields) < 10 or fields[9] != "1"):
                found.add(fields[8])
    return found


if __name__ == "__main__":
    main()
