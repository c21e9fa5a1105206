#!/usr/bin/env python3
"""The evaluator a user could write in a few lines with shapely 2: a peer for the speed benchmark.

Per frame: the boxes read with numpy, one ``STRtree`` over the predictions, one bulk ``query``
for the candidate pairs of every ground-truth box, and shapely's vectorized ``intersection``
and ``area`` for their IoU; then numpy for the best match of each ground-truth box and the
statistics. It computes the keys of ``tests/oracles/shapely_reference.py`` (our per-pair oracle)
that the benchmark compares, with the same rules: a ground-truth box takes the prediction of
its class with the highest IoU, the first in file order on a tie, and matches when that IoU is
strictly above the threshold; orientation is the direction of the longer of the edges p1->p2
and p2->p3.

It is not part of the ``hbb2obb`` package and imports nothing from it. Input handling is
minimal on purpose: YOLO-OBB lines of 9 numbers (class and four corners, absolute pixels),
corners in cyclic order, well-formed input assumed.

Usage::

    python benchmarks/shapely_vectorized.py GT_DIR PRED_DIR [-t 0.1] [-ca] [--json]
"""

from __future__ import annotations

import argparse
import json
import math
import os

import numpy as np
import shapely

LADDER = ("0.50", "0.75", "0.85", "0.90")


def read_boxes(path: str) -> tuple[np.ndarray, np.ndarray]:
    """Class ids ``(n,)`` and corners ``(n, 4, 2)`` of a YOLO-OBB file."""
    with open(path, encoding="utf-8-sig") as handle:
        values = np.array(handle.read().split(), dtype=np.float64).reshape(-1, 9)
    return values[:, 0].astype(np.int64), values[:, 1:].reshape(-1, 4, 2)


def orientation(corners: np.ndarray) -> np.ndarray:
    """Degrees in [0, 180) of the longer of the edges p1->p2 and p2->p3 (the first on a tie)."""
    first, second = corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 1]
    longer = np.where(((first**2).sum(1) >= (second**2).sum(1))[:, None], first, second)
    return np.degrees(np.arctan2(longer[:, 1], longer[:, 0])) % 180.0


def match_frame(gt_class, gt_corners, pred_class, pred_corners, threshold: float, agnostic: bool):
    """Per ground-truth box: the matched prediction (-1 if none) and the IoU of the match."""
    best = np.full(len(gt_class), -1)
    best_iou = np.zeros(len(gt_class))
    if len(gt_class) == 0 or len(pred_class) == 0:
        return best, best_iou
    gt_polygons, pred_polygons = shapely.polygons(gt_corners), shapely.polygons(pred_corners)
    gi, pj = shapely.STRtree(pred_polygons).query(gt_polygons, predicate="intersects")
    if not agnostic:
        same = gt_class[gi] == pred_class[pj]
        gi, pj = gi[same], pj[same]
    inter = shapely.area(shapely.intersection(gt_polygons[gi], pred_polygons[pj]))
    union = shapely.area(gt_polygons)[gi] + shapely.area(pred_polygons)[pj] - inter
    iou = np.divide(inter, union, out=np.zeros_like(inter), where=union > 0)
    order = np.lexsort((pj, -iou, gi))  # per ground-truth box: highest IoU first, then file order
    gi, pj, iou = gi[order], pj[order], iou[order]
    first = np.flatnonzero(np.r_[True, gi[1:] != gi[:-1]]) if gi.size else np.zeros(0, dtype=np.int64)
    keep = iou[first] > threshold
    best[gi[first][keep]], best_iou[gi[first][keep]] = pj[first][keep], iou[first][keep]
    return best, best_iou


def statistics(ious: np.ndarray, angles: np.ndarray) -> dict:
    if ious.size == 0:
        return dict(avg_iou=0.0, std_iou=0.0, sem_iou=0.0, median_iou=0.0, iou_fractions=dict.fromkeys(LADDER, 0.0),
                    avg_angle_error=0.0, std_angle_error=0.0, median_angle_error=0.0, p90_angle_error=0.0)
    std = float(np.std(ious))
    return dict(avg_iou=float(np.mean(ious)), std_iou=std, sem_iou=std / math.sqrt(ious.size),
                median_iou=float(np.median(ious)),
                iou_fractions={key: float(np.count_nonzero(ious >= float(key)) / ious.size) for key in LADDER},
                avg_angle_error=float(np.mean(angles)), std_angle_error=float(np.std(angles)),
                median_angle_error=float(np.median(angles)), p90_angle_error=float(np.percentile(angles, 90)))


def evaluate(gt_dir: str, pred_dir: str, threshold: float = 0.1, agnostic: bool = False) -> dict:
    """The metric dict of the frames present on both sides (a GT file without predictions is skipped)."""
    names = sorted(n for n in os.listdir(gt_dir) if n.endswith(".txt"))
    predicted = set(os.listdir(pred_dir))
    gt_classes, pred_classes, hit_classes, ious, angles = [], [], [], [], []
    unmatched_pred = cross = 0
    for name in names:
        if name not in predicted:
            continue
        gt_class, gt_corners = read_boxes(os.path.join(gt_dir, name))
        pred_class, pred_corners = read_boxes(os.path.join(pred_dir, name))
        best, best_iou = match_frame(gt_class, gt_corners, pred_class, pred_corners, threshold, agnostic)
        hit = best >= 0
        error = np.abs(orientation(gt_corners[hit]) - orientation(pred_corners[best[hit]])) % 180.0
        gt_classes.append(gt_class)
        pred_classes.append(pred_class)
        hit_classes.append(gt_class[hit])
        ious.append(best_iou[hit])
        angles.append(np.minimum(error, 180.0 - error))
        unmatched_pred += len(pred_class) - np.unique(best[hit]).size
        cross += int((gt_class[hit] != pred_class[best[hit]]).sum())
    joined = [np.concatenate(parts) if parts else np.zeros(0) for parts in (gt_classes, pred_classes, hit_classes,
                                                                              ious, angles)]
    gt_class, pred_class, hit_class, iou, angle = joined
    metrics = dict(total_gt=int(gt_class.size), total_pred=int(pred_class.size), total_matches=int(iou.size),
                   total_unmatched_gt=int(gt_class.size - iou.size), total_unmatched_pred=int(unmatched_pred),
                   cross_class_matches=int(cross))
    metrics.update(statistics(iou, angle))
    class_stats = {}
    for cls in np.union1d(gt_class, pred_class).astype(np.int64).tolist():
        rows = hit_class == cls
        stats = statistics(iou[rows], angle[rows])
        class_stats[cls] = dict(gt_total=int((gt_class == cls).sum()), pred_total=int((pred_class == cls).sum()),
                                matches=int(rows.sum()), **{key: stats[key] for key in (
                                    "avg_iou", "std_iou", "median_iou", "iou_fractions", "avg_angle_error",
                                    "median_angle_error")},
                                ious=iou[rows].tolist(), angle_errors=angle[rows].tolist())
    metrics["class_stats"] = class_stats
    return metrics


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("gt_dir")
    parser.add_argument("pred_dir")
    parser.add_argument("-t", "--iou_threshold", type=float, default=0.1)
    parser.add_argument("-ca", "--class_agnostic", action="store_true")
    parser.add_argument("--json", action="store_true", help="print the metric dict as JSON (default: a summary)")
    args = parser.parse_args(argv)
    metrics = evaluate(args.gt_dir, args.pred_dir, args.iou_threshold, args.class_agnostic)
    if args.json:
        print(json.dumps(metrics, indent=2))
    else:
        print(f"{metrics['total_matches']} of {metrics['total_gt']} ground-truth boxes matched, "
              f"mean IoU {metrics['avg_iou']:.4f}, p90 angle error {metrics['p90_angle_error']:.2f} deg")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
