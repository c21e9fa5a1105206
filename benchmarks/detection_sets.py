#!/usr/bin/env python3
"""Detector-style label sets for the detection benchmark, generated deterministically.

A set is aerial frames of DOTA's 15 classes at their typical sizes, ground truth as per-frame
DOTA files (two header lines, integer corners, class name, difficult flag; about 8% difficult)
and predictions as a DOTA Task1 submission (``Task1_<class>.txt``, rows ``image_id score x1 y1
... x4 y4`` with decimals), the layout the DOTA devkit scores. Predictions are the ground truth
jittered as a detector would place it (missed boxes, scores that rank true detections higher, no
two scores equal: with ties, the order of tied detections is each tool's own and AP may differ),
plus false positives of any class at random places (some overlap a ground-truth box).

The same boxes are also written as YOLO-OBB files (``gt_yolo/``, ``pred_yolo/``: class id,
corners in pixels, the score as a tenth field), so the readers of both layouts can be timed on
the same boxes.

Usage::

    python benchmarks/detection_sets.py OUT --frames 512 --detections 150000
    python benchmarks/detection_sets.py OUT --frames 100 --detections 210000 --parking  # dense: 2,100 a frame
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

import numpy as np

#: DOTA v1.0 classes with a typical (length, breadth) in pixels of a 0.3 m frame, and their share.
CLASSES = (
    ("plane", 60, 55, 0.08), ("ship", 45, 14, 0.14), ("storage-tank", 30, 30, 0.08),
    ("baseball-diamond", 90, 90, 0.01), ("tennis-court", 70, 35, 0.03), ("basketball-court", 60, 35, 0.01),
    ("ground-track-field", 200, 110, 0.005), ("harbor", 120, 30, 0.04), ("bridge", 150, 30, 0.01),
    ("large-vehicle", 40, 12, 0.22), ("small-vehicle", 18, 9, 0.33), ("helicopter", 40, 35, 0.005),
    ("roundabout", 100, 100, 0.005), ("soccer-ball-field", 150, 95, 0.005), ("swimming-pool", 30, 20, 0.03),
)
FRAME = 1024  # DOTA's split frames
DIFFICULT_SHARE = 0.08
MISSED_SHARE = 0.12  # ground-truth boxes the simulated detector does not find
FALSE_SHARE = 0.55  # false positives per ground-truth box


@dataclass(frozen=True)
class DetectionSet:
    """Where a generated set lives and how big it is."""

    root: Path
    frames: int
    gt_boxes: int
    detections: int

    @property
    def gt(self) -> Path:
        return self.root / "gt"

    @property
    def pred(self) -> Path:
        return self.root / "pred"

    @property
    def label_map(self) -> Path:
        return self.root / "classes.yaml"


def _boxes(rng: np.random.Generator, n: int, classes: np.ndarray) -> np.ndarray:
    """``n`` rotated rectangles of the given classes at random places, corners ``(n, 4, 2)``."""
    size = np.array([(length, breadth) for _, length, breadth, _ in CLASSES], dtype=np.float64)[classes]
    size *= rng.lognormal(0.0, 0.2, (n, 1))
    return _rectangles(rng.uniform(20, FRAME - 20, (n, 2)), size, rng.uniform(0, np.pi, n))


def _rectangles(centre: np.ndarray, size: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """Rectangles of the given centres, (length, breadth) and angles, corners ``(n, 4, 2)``."""
    cos, sin = np.cos(theta), np.sin(theta)
    half = size / 2
    local = np.array([(-1, -1), (1, -1), (1, 1), (-1, 1)], dtype=np.float64)
    dx = local[None, :, 0] * half[:, None, 0]
    dy = local[None, :, 1] * half[:, None, 1]
    x = centre[:, None, 0] + dx * cos[:, None] - dy * sin[:, None]
    y = centre[:, None, 1] + dx * sin[:, None] + dy * cos[:, None]
    return np.stack([x, y], axis=-1)


PARKING = (3840, 2160)  # a 4K drone frame over parking lots
BAY = (50.0, 100.0)  # one parking bay: width, depth (a car is about 92 x 41 pixels at this scale)
VEHICLES = (CLASSES.index(("small-vehicle", 18, 9, 0.33)), CLASSES.index(("large-vehicle", 40, 12, 0.22)))


def _parked(rng: np.random.Generator, n: int) -> tuple:
    """``n`` vehicles parked in rows of bays over a 4K frame (1,596 bays): corners and classes.

    Dense frames as drones see parking lots: many boxes, side by side, hardly overlapping.
    """
    columns, rows = int(PARKING[0] // BAY[0]), int(PARKING[1] // BAY[1])
    bays = rng.permutation(columns * rows)[:min(n, columns * rows)]
    centre = np.stack([(bays % columns + 0.5) * BAY[0], (bays // columns + 0.5) * BAY[1]], axis=1)
    centre += rng.normal(0, 2.0, centre.shape)
    large = rng.random(bays.size) < 0.1
    size = np.where(large[:, None], (104.0, 46.0), (92.0, 41.0)) * rng.lognormal(0.0, 0.04, (bays.size, 1))
    theta = np.pi / 2 + rng.normal(0, 0.05, bays.size)  # nose to the aisle, a few degrees off
    classes = np.where(large, VEHICLES[1], VEHICLES[0])
    return _rectangles(centre, size, theta), classes


def _frame(rng: np.random.Generator, n_gt: int, parking: bool = False):
    share = np.array([c[3] for c in CLASSES])
    if parking:
        gt, gt_class = _parked(rng, n_gt)
        gt = np.clip(np.rint(gt), 0, np.array(PARKING) - 1)
    else:
        gt_class = rng.choice(len(CLASSES), n_gt, p=share / share.sum())
        gt = np.clip(np.rint(_boxes(rng, n_gt, gt_class)), 0, FRAME - 1)
    n_gt = len(gt)
    difficult = rng.random(n_gt) < DIFFICULT_SHARE
    found = rng.random(n_gt) >= MISSED_SHARE
    size = np.linalg.norm(gt[:, 1] - gt[:, 0], axis=1)[:, None, None]
    hits = gt[found] + rng.normal(0, 0.06, (int(found.sum()), 4, 2)) * size[found]
    hit_class = gt_class[found]
    hit_score = np.clip(rng.beta(5, 2, hits.shape[0]), 0.001, 0.999)
    n_false = rng.poisson(FALSE_SHARE * len(gt))
    if parking:  # a detector's false alarms in a lot: vehicles where there are none, or doubled
        false, false_class = _parked(rng, n_false)
        false += rng.normal(0, 20.0, (len(false), 1, 2))
    else:
        false_class = rng.choice(len(CLASSES), n_false, p=share / share.sum())
        false = _boxes(rng, n_false, false_class)
    false_score = np.clip(rng.beta(2, 5, n_false), 0.001, 0.999)
    pred = np.concatenate([hits, false])
    pred_class = np.concatenate([hit_class, false_class])
    pred_score = np.concatenate([hit_score, false_score])
    return gt, gt_class, difficult, pred, pred_class, pred_score


def generate(root: Path, frames: int, detections: int, seed: int = 0, parking: bool = False) -> DetectionSet:
    """Write a set of about ``detections`` predictions over ``frames`` frames under ``root``.

    ``parking``: 4K frames of vehicles parked side by side (a dense set), instead of 1024-pixel
    frames of all 15 classes scattered.
    """
    rng = np.random.default_rng(seed)
    per_frame = detections / frames / ((1 - MISSED_SHARE) + FALSE_SHARE)  # ground-truth boxes per frame
    root.mkdir(parents=True, exist_ok=True)
    for sub in ("gt", "pred", "gt_yolo", "pred_yolo"):
        (root / sub).mkdir(exist_ok=True)
    (root / "classes.yaml").write_text("names:\n" + "".join(f"  {i}: {c[0]}\n" for i, c in enumerate(CLASSES)))
    task1: list[list[str]] = [[] for _ in CLASSES]
    n_gt = n_pred = 0
    scores: set = set()
    for index in range(frames):
        image = f"P{index:05d}"
        gt, gt_class, difficult, pred, pred_class, pred_score = _frame(rng, max(1, rng.poisson(per_frame)), parking)
        n_gt += len(gt)
        n_pred += len(pred)
        gt_flat = gt.reshape(-1, 8).astype(np.int64)
        lines = ["imagesource:GoogleEarth", "gsd:0.3"]
        lines += [" ".join(map(str, row)) + f" {CLASSES[c][0]} {int(d)}"
                  for row, c, d in zip(gt_flat.tolist(), gt_class.tolist(), difficult.tolist())]
        (root / "gt" / f"{image}.txt").write_text("\n".join(lines) + "\n")
        (root / "gt_yolo" / f"{image}.txt").write_text(
            "".join(f"{c} " + " ".join(map(str, row)) + "\n" for row, c in zip(gt_flat.tolist(), gt_class.tolist())))
        pred_flat = np.round(pred.reshape(-1, 8), 1)
        rows = [" ".join(f"{v:.1f}" for v in row) for row in pred_flat.tolist()]
        yolo = []
        for row, c, s in zip(rows, pred_class.tolist(), pred_score.tolist()):
            score = f"{s:.8f}"
            while score in scores:  # no two detections tie: peers that order ties arbitrarily then agree
                s += 1e-8
                score = f"{s:.8f}"
            scores.add(score)
            task1[c].append(f"{image} {score} {row}\n")
            yolo.append(f"{c} {row} {score}\n")
        (root / "pred_yolo" / f"{image}.txt").write_text("".join(yolo))
    for (name, *_), rows in zip(CLASSES, task1):
        (root / "pred" / f"Task1_{name}.txt").write_text("".join(rows))
    return DetectionSet(root, frames, n_gt, n_pred)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--frames", type=int, default=512)
    parser.add_argument("--detections", type=int, default=150_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--parking", action="store_true", help="4K frames of parked vehicles (the dense set)")
    args = parser.parse_args()
    made = generate(args.out, args.frames, args.detections, args.seed, args.parking)
    print(f"{made.root}: {made.frames} frames, {made.gt_boxes} ground-truth boxes, {made.detections} detections")


if __name__ == "__main__":
    main()
