#!/usr/bin/env python3
"""Deliberately naive reference evaluator for oriented bounding boxes.

This is the straightforward algorithm of docs/metrics.md §2-3 (matching and the
metric dict), written the way a naive evaluator would: one Python loop over
every (ground truth, prediction) pair of a frame, one shapely polygon
intersection and union per pair. It exists for two reasons:

1. it is the test oracle that the vectorized ``hbb2obb`` core must agree with
   (to 1e-9 on every key of the returned dict);
2. it is the baseline ("b" side) of the speed benchmark.

Ties are settled exactly: a pair whose float IoU lies within ``TIE_WINDOW`` of a bound a
decision is taken against (the match threshold ``-t``, an ``iou_fractions`` rung) is
recomputed in rational arithmetic from the coordinates as written in the files (decimal text
read by ``fractions.Fraction``, so ``0.1`` is 1/10), and the decision is taken on the exact
value; the pair's IoU in the statistics becomes the float nearest it. The exact overlap is the
convex hull of the corners inside the other box and the edge crossings, written here on its
own: the oracle imports nothing of the code it checks.

It is NOT part of the ``hbb2obb`` package and must never import from it:
independence from the code under test is the whole point. Only the standard
library, numpy, shapely and yaml are used.

Input handling is minimal on purpose: YOLO-OBB lines
``class x1 y1 x2 y2 x3 y3 x4 y4 [confidence]`` in absolute pixels, blank
lines ignored, well-formed input assumed.

Usage::

    python tests/oracles/shapely_reference.py GT_DIR PRED_DIR [-e C ...] [-t 0.1]
        [-ca] [-exc -et 1 -iw W -ih H] [--json] [--no-lists] [--time]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
import time
from fractions import Fraction

import numpy as np
from shapely.geometry import Polygon

FRACTION_THRESHOLDS = (("0.50", 0.50), ("0.75", 0.75), ("0.85", 0.85), ("0.90", 0.90))
TIE_WINDOW = 1e-9  # far above the float error of an IoU, far below any real difference
LINE_BREAK = re.compile(r"\r\n|\r|\n")  # only these end a line (str.splitlines knows more)


# --------------------------------------------------------------------------- #
# Reading
# --------------------------------------------------------------------------- #
def read_obb_file(path):
    """Return a list of (class_id, [(x1, y1), ..., (x4, y4)], texts) in file order.

    ``texts`` are the eight coordinate fields as written, for the exact arithmetic.
    """
    boxes = []
    with open(path, "r", encoding="utf-8-sig") as handle:
        for line in LINE_BREAK.split(handle.read()):
            fields = line.split()
            if not fields:
                continue
            cls = int(fields[0])
            values = [float(v) for v in fields[1:9]]
            corners = [(values[2 * i], values[2 * i + 1]) for i in range(4)]
            boxes.append((cls, corners, tuple(fields[1:9])))
    return boxes


def read_obb_line(path, line_number):
    """``(class_id, texts)`` of the 1-based line ``line_number`` of a YOLO-OBB file."""
    with open(path, "r", encoding="utf-8-sig") as handle:
        fields = LINE_BREAK.split(handle.read())[line_number - 1].split()
    return int(fields[0]), tuple(fields[1:9])


def list_txt(directory):
    """Sorted names of the ``.txt`` files in a directory."""
    return sorted(
        name
        for name in os.listdir(directory)
        if name.endswith(".txt") and os.path.isfile(os.path.join(directory, name))
    )


# --------------------------------------------------------------------------- #
# Geometry
# --------------------------------------------------------------------------- #
def convex_order(corners):
    """Sort the 4 corners by angle around their centroid (fixes bow-ties)."""
    cx = sum(p[0] for p in corners) / len(corners)
    cy = sum(p[1] for p in corners) / len(corners)
    return sorted(corners, key=lambda p: math.atan2(p[1] - cy, p[0] - cx))


def make_polygon(corners):
    return Polygon(convex_order(corners))


def polygon_iou(poly_a, poly_b):
    """IoU of two shapely polygons; 0 when the union has no area."""
    if poly_a.area == 0.0 or poly_b.area == 0.0:
        # A zero-area box intersects nothing with positive area; also avoids
        # asking GEOS to intersect an invalid (collapsed) polygon.
        inter = 0.0
        union = max(poly_a.area, poly_b.area)
    else:
        inter = poly_a.intersection(poly_b).area
        union = poly_a.union(poly_b).area
    if union == 0.0:
        return 0.0
    return float(inter / union)


# --------------------------------------------------------------------------- #
# Exact IoU, for the pairs on a decision bound
# --------------------------------------------------------------------------- #
def _cross(o, a, b):
    """z of (a - o) x (b - o): positive when o, a, b turn counter-clockwise."""
    return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])


def exact_hull(points):
    """Convex hull, counter-clockwise, without collinear points (Andrew's monotone chain)."""
    points = sorted(set(points))
    if len(points) < 3:
        return points
    lower, upper = [], []
    for p in points:
        while len(lower) >= 2 and _cross(lower[-2], lower[-1], p) <= 0:
            lower.pop()
        lower.append(p)
    for p in reversed(points):
        while len(upper) >= 2 and _cross(upper[-2], upper[-1], p) <= 0:
            upper.pop()
        upper.append(p)
    return lower[:-1] + upper[:-1]


def exact_area(polygon):
    """Area of a counter-clockwise polygon (shoelace), 0 below three points."""
    if len(polygon) < 3:
        return Fraction(0)
    twice = sum(p[0] * q[1] - q[0] * p[1] for p, q in zip(polygon, polygon[1:] + polygon[:1]))
    return Fraction(twice) / 2


def _inside(point, polygon):
    """Whether ``point`` is in the counter-clockwise convex ``polygon`` or on its border."""
    return all(_cross(p, q, point) >= 0 for p, q in zip(polygon, polygon[1:] + polygon[:1]))


def _crossings(a, b):
    """Points where an edge of convex polygon ``a`` meets an edge of ``b`` (non-parallel edges)."""
    found = []
    for p1, p2 in zip(a, a[1:] + a[:1]):
        for q1, q2 in zip(b, b[1:] + b[:1]):
            rx, ry = p2[0] - p1[0], p2[1] - p1[1]
            sx, sy = q2[0] - q1[0], q2[1] - q1[1]
            denominator = rx * sy - ry * sx
            if denominator == 0:  # parallel: any shared stretch ends at corners, found as inside
                continue
            wx, wy = q1[0] - p1[0], q1[1] - p1[1]
            t = Fraction(wx * sy - wy * sx) / denominator
            u = Fraction(wx * ry - wy * rx) / denominator
            if 0 <= t <= 1 and 0 <= u <= 1:
                found.append((p1[0] + t * rx, p1[1] + t * ry))
    return found


def exact_quad(texts):
    """The four corners of a box from its eight coordinate texts, as exact rationals."""
    values = [Fraction(text) for text in texts]
    return [(values[2 * i], values[2 * i + 1]) for i in range(4)]


def exact_iou(texts_a, texts_b):
    """The IoU of two boxes given by their coordinate texts, as a ``Fraction``.

    ``None`` when it is not defined exactly here: a box that is not a strictly convex
    quadrilateral (its hull has fewer than four corners: collapsed, or concave) or a union
    without area. Bow-ties are taken as the hull of their corners, the rectangle they describe.
    """
    a, b = exact_hull(exact_quad(texts_a)), exact_hull(exact_quad(texts_b))
    if len(a) != 4 or len(b) != 4:
        return None
    overlap = exact_hull([p for p in a if _inside(p, b)] + [p for p in b if _inside(p, a)] + _crossings(a, b))
    inter = exact_area(overlap)
    union = exact_area(a) + exact_area(b) - inter
    return inter / union if union > 0 else None


def exact_bound(value):
    """A bound as the decimal it was written as: ``0.1`` is 1/10, not the float nearest it."""
    return Fraction(repr(float(value))) if not isinstance(value, str) else Fraction(value)


def settle(iou, texts_a, texts_b, bounds):
    """``(iou, exact)``: a float IoU within ``TIE_WINDOW`` of a bound, recomputed exactly.

    ``exact`` is the ``Fraction`` (``None`` when the pair is not near a bound or has no exact
    value here); ``iou`` becomes the float nearest it.
    """
    if not any(abs(iou - float(bound)) <= TIE_WINDOW for bound in bounds):
        return iou, None
    exact = exact_iou(texts_a, texts_b)
    if exact is None:
        return iou, None
    return float(exact), exact


def at_least(iou, exact, bound):
    """``iou >= bound``, decided on the exact value where there is one."""
    return exact >= exact_bound(bound) if exact is not None else iou >= float(bound)


def above(iou, exact, bound):
    """``iou > bound``, decided on the exact value where there is one."""
    return exact > exact_bound(bound) if exact is not None else iou > float(bound)


def orientation(corners):
    """Direction in degrees, [0, 180), of the longer of edges p1->p2, p2->p3."""
    (x1, y1), (x2, y2), (x3, y3) = corners[0], corners[1], corners[2]
    dx1, dy1 = x2 - x1, y2 - y1
    dx2, dy2 = x3 - x2, y3 - y2
    if dx1 * dx1 + dy1 * dy1 >= dx2 * dx2 + dy2 * dy2:
        dx, dy = dx1, dy1
    else:
        dx, dy = dx2, dy2
    return math.degrees(math.atan2(dy, dx)) % 180.0


def angle_error(a, b):
    d = abs(a - b) % 180.0
    return min(d, 180.0 - d)


def is_edge_box(corners, tol, width, height):
    for x, y in corners:
        if x <= tol or x >= width - tol or y <= tol or y >= height - tol:
            return True
    return False


# --------------------------------------------------------------------------- #
# Statistics
# --------------------------------------------------------------------------- #
def iou_fractions(ious, exacts=None):
    """Share of pairs at or above each rung; ``exacts`` (aligned, ``None`` where unsettled) decide ties."""
    n = len(ious)
    if n == 0:
        return {key: 0.0 for key, _ in FRACTION_THRESHOLDS}
    exacts = exacts if exacts is not None else [None] * n
    return {key: float(sum(1 for v, e in zip(ious, exacts) if at_least(v, e, key)) / n)
            for key, _ in FRACTION_THRESHOLDS}


def summarize(ious, angle_errors, exacts=None):
    """Statistics over matched pairs; all zero when there are none."""
    n = len(ious)
    if n == 0:
        return {
            "avg_iou": 0.0,
            "std_iou": 0.0,
            "sem_iou": 0.0,
            "median_iou": 0.0,
            "iou_fractions": iou_fractions(ious, exacts),
            "avg_angle_error": 0.0,
            "std_angle_error": 0.0,
            "median_angle_error": 0.0,
            "p90_angle_error": 0.0,
        }
    iou_arr = np.asarray(ious, dtype=float)
    ang_arr = np.asarray(angle_errors, dtype=float)
    std_iou = float(np.std(iou_arr))
    return {
        "avg_iou": float(np.mean(iou_arr)),
        "std_iou": std_iou,
        "sem_iou": float(std_iou / math.sqrt(n)),
        "median_iou": float(np.median(iou_arr)),
        "iou_fractions": iou_fractions(ious, exacts),
        "avg_angle_error": float(np.mean(ang_arr)),
        "std_angle_error": float(np.std(ang_arr)),
        "median_angle_error": float(np.median(ang_arr)),
        "p90_angle_error": float(np.percentile(ang_arr, 90)),
    }


# --------------------------------------------------------------------------- #
# Evaluation
# --------------------------------------------------------------------------- #
def reference_evaluate(
    gt_dir,
    pred_dir,
    *,
    excluded_classes=(),
    iou_threshold=0.1,
    class_agnostic=False,
    exclude_edge_cases=False,
    edge_tolerance=1.0,
    img_width=None,
    img_height=None,
):
    """Score the OBB predictions in ``pred_dir`` against ``gt_dir`` (docs/metrics.md §2-3)."""
    excluded = {int(c) for c in excluded_classes}
    if exclude_edge_cases and (img_width is None or img_height is None):
        raise ValueError("exclude_edge_cases needs img_width and img_height")

    gt_names = list_txt(gt_dir)
    pred_names = set(list_txt(pred_dir))
    gt_name_set = set(gt_names)

    missing_pred_files = 0
    orphan_pred_files = sum(1 for name in pred_names if name not in gt_name_set)

    total_gt = 0
    total_pred = 0
    total_matches = 0
    total_unmatched_pred = 0
    cross_class_matches = 0
    total_edge_cases = 0
    all_ious = []
    all_exacts = []  # the exact IoU of a settled pair, else None; aligned with all_ious
    all_angles = []
    bounds = [iou_threshold] + [key for key, _ in FRACTION_THRESHOLDS]

    gt_per_class = {}
    pred_per_class = {}
    ious_per_class = {}
    exacts_per_class = {}
    angles_per_class = {}

    for name in gt_names:
        if name not in pred_names:
            missing_pred_files += 1
            continue

        gts = [b for b in read_obb_file(os.path.join(gt_dir, name)) if b[0] not in excluded]
        preds = [b for b in read_obb_file(os.path.join(pred_dir, name)) if b[0] not in excluded]

        if exclude_edge_cases:
            kept = []
            for box in gts:
                if is_edge_box(box[1], edge_tolerance, img_width, img_height):
                    total_edge_cases += 1
                else:
                    kept.append(box)
            gts = kept

        total_gt += len(gts)
        total_pred += len(preds)
        for cls, _, _ in gts:
            gt_per_class[cls] = gt_per_class.get(cls, 0) + 1
        for cls, _, _ in preds:
            pred_per_class[cls] = pred_per_class.get(cls, 0) + 1

        pred_polys = [make_polygon(corners) for _, corners, _ in preds]
        chosen = [False] * len(preds)

        for gt_cls, gt_corners, gt_texts in gts:
            gt_poly = make_polygon(gt_corners)
            best_iou = -1.0
            best_j = -1
            for j, (pred_cls, _, _) in enumerate(preds):
                if not class_agnostic and pred_cls != gt_cls:
                    continue
                iou = polygon_iou(gt_poly, pred_polys[j])
                if iou > best_iou:
                    best_iou = iou
                    best_j = j
            if best_j < 0:
                continue
            pred_cls, pred_corners, pred_texts = preds[best_j]
            best_iou, best_exact = settle(best_iou, gt_texts, pred_texts, bounds)
            if not above(best_iou, best_exact, iou_threshold):
                continue
            chosen[best_j] = True
            total_matches += 1
            if pred_cls != gt_cls:
                cross_class_matches += 1
            err = angle_error(orientation(gt_corners), orientation(pred_corners))
            all_ious.append(best_iou)
            all_exacts.append(best_exact)
            all_angles.append(err)
            ious_per_class.setdefault(gt_cls, []).append(best_iou)
            exacts_per_class.setdefault(gt_cls, []).append(best_exact)
            angles_per_class.setdefault(gt_cls, []).append(err)

        total_unmatched_pred += sum(1 for c in chosen if not c)

    class_stats = {}
    for cls in sorted(set(gt_per_class) | set(pred_per_class)):
        ious = ious_per_class.get(cls, [])
        angles = angles_per_class.get(cls, [])
        stats = summarize(ious, angles, exacts_per_class.get(cls, []))
        class_stats[int(cls)] = {
            "gt_total": int(gt_per_class.get(cls, 0)),
            "pred_total": int(pred_per_class.get(cls, 0)),
            "matches": len(ious),
            "avg_iou": stats["avg_iou"],
            "std_iou": stats["std_iou"],
            "median_iou": stats["median_iou"],
            "iou_fractions": stats["iou_fractions"],
            "avg_angle_error": stats["avg_angle_error"],
            "median_angle_error": stats["median_angle_error"],
            "p90_angle_error": stats["p90_angle_error"],
            "ious": [float(v) for v in ious],
            "angle_errors": [float(v) for v in angles],
        }

    result = {
        "total_gt": int(total_gt),
        "total_pred": int(total_pred),
        "total_matches": int(total_matches),
        "total_unmatched_gt": int(total_gt - total_matches),
        "total_unmatched_pred": int(total_unmatched_pred),
        "cross_class_matches": int(cross_class_matches),
        "total_edge_cases": int(total_edge_cases),
    }
    result.update(summarize(all_ious, all_angles, all_exacts))
    result.update(
        {
            "class_stats": class_stats,
            "class_agnostic": bool(class_agnostic),
            "exclude_edge_cases": bool(exclude_edge_cases),
            "excluded_classes": sorted(excluded),
            "iou_threshold": float(iou_threshold),
            "missing_pred_files": int(missing_pred_files),
            "orphan_pred_files": int(orphan_pred_files),
        }
    )
    return result


# --------------------------------------------------------------------------- #
# CLI
# --------------------------------------------------------------------------- #
def main(argv=None):
    parser = argparse.ArgumentParser(
        description="Naive shapely reference OBB evaluator (test oracle / benchmark baseline)."
    )
    parser.add_argument("gt_dir")
    parser.add_argument("pred_dir")
    parser.add_argument("-e", "--excluded_classes", type=int, nargs="+", default=[])
    parser.add_argument("-t", "--iou_threshold", type=float, default=0.1)
    parser.add_argument("-ca", "--class_agnostic", action="store_true")
    parser.add_argument("-exc", "--exclude_edge_cases", action="store_true")
    parser.add_argument("-et", "--edge_tolerance", type=float, default=1.0)
    parser.add_argument("-iw", "--img_width", type=float, default=None)
    parser.add_argument("-ih", "--img_height", type=float, default=None)
    parser.add_argument("--json", action="store_true", help="accepted; output is always JSON")
    parser.add_argument(
        "--no-lists", dest="no_lists", action="store_true",
        help="drop the per-class 'ious' and 'angle_errors' lists",
    )
    parser.add_argument("--time", action="store_true", help="print elapsed seconds to stderr")
    args = parser.parse_args(argv)

    if args.exclude_edge_cases and (args.img_width is None or args.img_height is None):
        parser.error("--exclude_edge_cases needs --img_width and --img_height")

    start = time.perf_counter()
    result = reference_evaluate(
        args.gt_dir,
        args.pred_dir,
        excluded_classes=args.excluded_classes,
        iou_threshold=args.iou_threshold,
        class_agnostic=args.class_agnostic,
        exclude_edge_cases=args.exclude_edge_cases,
        edge_tolerance=args.edge_tolerance,
        img_width=args.img_width,
        img_height=args.img_height,
    )
    elapsed = time.perf_counter() - start

    if args.no_lists:
        for stats in result["class_stats"].values():
            stats.pop("ious", None)
            stats.pop("angle_errors", None)
    print(json.dumps(result, indent=2))
    if args.time:
        print(f"elapsed: {elapsed:.4f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
