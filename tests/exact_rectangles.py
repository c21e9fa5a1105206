"""A YOLO-OBB set of exact rotated rectangles, and the scores of a set against it: the formats' round-trip tests.

Corners are integers and sides run along Pythagorean directions, so a rectangle is exact in
every format that stores a centre, a size and an angle, and a written set can be held to the
printed precision of its format.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from click.testing import CliRunner

from hbb2obb.cli.eval import main as eval_main

NAMES = {0: "car", 1: "bus"}


def write_yolo_rectangles(root: Path, frames: int = 3, boxes: int = 5, seed: int = 3) -> Path:
    """``root/gt/f0.txt ...`` (YOLO-OBB, pixels) and ``root/classes.yaml``; returns ``root/gt``."""
    rng = np.random.default_rng(seed)
    directions = [(4, 3), (3, 4), (12, 5), (5, 12), (15, 8), (-4, 3), (-12, 5), (1, 0), (0, 1)]
    (root / "gt").mkdir()
    for frame in range(frames):
        lines = []
        for _ in range(boxes):
            a, b = directions[int(rng.integers(len(directions)))]
            k, m = int(rng.integers(2, 4)), 1  # never a square: a square's heading is undefined
            x, y = (int(v) for v in rng.integers(60, 140, 2))
            side, other = np.array([a, b]) * k, np.array([-b, a]) * m
            quad = np.array([[x, y], [x, y] + side, [x, y] + side + other, [x, y] + other])
            lines.append(f"{int(rng.integers(0, 2))} " + " ".join(str(int(v)) for v in quad.reshape(-1)))
        (root / "gt" / f"f{frame}.txt").write_text("\n".join(lines) + "\n")
    (root / "classes.yaml").write_text("".join(f"{k}: {v}\n" for k, v in NAMES.items()))
    return root / "gt"


def scores(gt: Path, predictions: Path, classes: Path, gt_format: str) -> dict:
    """``hbb2obb-eval GT PREDICTIONS --gt_format FORMAT --json``'s metric dict."""
    out = CliRunner().invoke(eval_main, [str(gt), str(predictions), "-mp", str(classes), "-nb", "--json",
                                         "--gt_format", gt_format])
    assert out.exit_code == 0, out.output
    return json.loads(out.stdout)
