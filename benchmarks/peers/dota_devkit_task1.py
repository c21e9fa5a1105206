#!/usr/bin/env python3
"""The DOTA devkit's Task1 evaluation as the dotadevkit package ships it, over DOTA v1.0's 15 classes.

``dotadevkit.evaluate.task1.evaluate`` prints its mAP and returns nothing, so this calls its
``voc_eval`` per class with the arguments ``evaluate`` passes (IoU above 0.5, the VOC07
11-point AP, DOTA 1.0: difficult boxes ignored) and prints the per-class APs and their mean as
JSON. The devkit's own prints (every class's TP/FP arrays) go to /dev/null.

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
    with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink):
        for name in dota_classes:
            _, _, ap = voc_eval(str(Path(pred) / "Task1_{:s}.txt"), str(Path(gt) / "{:s}.txt"), imageset, name,
                                ovthresh=0.5, use_07_metric=True, version="1.0")
            aps[name] = float(ap)
    print(json.dumps({"map": sum(aps.values()) / len(aps), "ap": aps}))


if __name__ == "__main__":
    main()
