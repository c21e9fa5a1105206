#!/usr/bin/env python3
"""How far rotated AP moves when exact polygon IoU is replaced by ProbIoU (issue 16).

Ultralytics' OBB validation scores pairs by ProbIoU, the Gaussian approximation of Llerena et
al. (2021, "Gaussian Bounding Boxes and Probabilistic Intersection-over-Union for Object
Detection"): a box ``(cx, cy, w, h, theta)`` becomes the normal distribution with mean
``(cx, cy)`` and covariance ``R diag(w^2/12, h^2/12) R^T``; two boxes are compared by their
Bhattacharyya distance ``B = 1/8 dmu^T S^-1 dmu + 1/2 ln(det S / sqrt(det S1 det S2))``,
``S = (S1 + S2) / 2``, and ``ProbIoU = 1 - sqrt(1 - exp(-B))`` (one minus the Hellinger distance).

This script generates a Songdo-like label set with a confidence column (the benchmark's
generator), adds more localization noise to the detections at two levels, scores each with our
exact IoU and again with ProbIoU on the same candidate pairs (every pair whose bounds overlap),
and prints the AP of both and their difference.

Usage::

    python scripts/probiou_ap.py                  # 400 frames per noise level
    python scripts/probiou_ap.py --frames 100
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench  # noqa: E402  (the label-set generator)

from hbb2obb.detection.evaluate import DetectionParams, evaluate_detections  # noqa: E402
from hbb2obb.detection.accumulate import accumulate, summarize_detections  # noqa: E402
from hbb2obb.scoring.evaluate import EvalSettings, evaluate_frames  # noqa: E402

KEYS = ("map50", "map75", "map50_95", "dota_map50")


def gaussian(corners: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean ``(n, 2)`` and covariance ``(n, 2, 2)`` of boxes given as four corners.

    The box's sides are taken from the corners as listed (opposite sides averaged), its angle
    from the first side: the ``xywhr`` a rotated detector would output for it.
    """
    centre = corners.mean(axis=1)
    first = 0.5 * ((corners[:, 1] - corners[:, 0]) + (corners[:, 2] - corners[:, 3]))
    second = 0.5 * ((corners[:, 3] - corners[:, 0]) + (corners[:, 2] - corners[:, 1]))
    w, h = np.linalg.norm(first, axis=1), np.linalg.norm(second, axis=1)
    theta = np.arctan2(first[:, 1], first[:, 0])
    c, s = np.cos(theta), np.sin(theta)
    a, b = w**2 / 12.0, h**2 / 12.0
    cov = np.empty((len(corners), 2, 2))
    cov[:, 0, 0] = a * c**2 + b * s**2
    cov[:, 1, 1] = a * s**2 + b * c**2
    cov[:, 0, 1] = cov[:, 1, 0] = (a - b) * c * s
    return centre, cov


def probiou(a: np.ndarray, b: np.ndarray, eps: float = 1e-7) -> np.ndarray:
    """ProbIoU of aligned pairs of boxes ``(k, 4, 2)``, as defined above (no clamping of B but at 100)."""
    mu1, s1 = gaussian(a)
    mu2, s2 = gaussian(b)
    s = 0.5 * (s1 + s2)
    det = s[:, 0, 0] * s[:, 1, 1] - s[:, 0, 1] ** 2
    inv = np.stack([np.stack([s[:, 1, 1], -s[:, 0, 1]], -1), np.stack([-s[:, 0, 1], s[:, 0, 0]], -1)], 1)
    inv /= (det + eps)[:, None, None]
    d = mu1 - mu2
    mahalanobis = np.einsum("ki,kij,kj->k", d, inv, d)
    det1 = s1[:, 0, 0] * s1[:, 1, 1] - s1[:, 0, 1] ** 2
    det2 = s2[:, 0, 0] * s2[:, 1, 1] - s2[:, 0, 1] ** 2
    distance = 0.125 * mahalanobis + 0.5 * np.log((det + eps) / (np.sqrt(np.clip(det1 * det2, 0, None)) + eps))
    distance = np.clip(distance, eps, 100.0)
    return 1.0 - np.sqrt(1.0 - np.exp(-distance) + eps)


def score(gt_dir: Path, pred_dir: Path) -> tuple[dict, dict, float, float]:
    """AP keys with exact IoU and with ProbIoU, and the mean |ProbIoU - IoU| over pairs with IoU >= 0.5."""
    params = DetectionParams()
    result = evaluate_frames(gt_dir, pred_dir, EvalSettings(), detection=params)
    table, (pg, pp, exact) = result.table, result.pairs
    approx = probiou(table.gt.corners[pg], table.pred.corners[pp])
    runs = []
    for values in (exact, approx):
        ev = evaluate_detections(table.gt, table.gt_frame, table.pred, table.pred_frame, (pg, pp, values), params)
        runs.append(summarize_detections(accumulate(ev))[0])
    close = exact >= 0.5
    gap = np.abs(approx[close] - exact[close])
    return runs[0], runs[1], float(gap.mean()), float(np.percentile(gap, 90))


def perturbed(pred_dir: Path, out_dir: Path, degrees: float, pixels: float, seed: int) -> Path:
    """A copy of a prediction folder with every box turned by N(0, degrees) about its centre and
    moved by N(0, pixels) in x and y; classes and scores kept."""
    rng = np.random.default_rng(seed)
    out_dir.mkdir(parents=True, exist_ok=True)
    for path in sorted(pred_dir.glob("*.txt")):
        rows = [line.split() for line in path.read_text().splitlines() if line.strip()]
        lines = []
        for row in rows:
            corners = np.array(row[1:9], dtype=float).reshape(4, 2)
            centre = corners.mean(axis=0)
            angle = np.radians(rng.normal(0.0, degrees)) if degrees else 0.0
            turn = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
            moved = (corners - centre) @ turn.T + centre + (rng.normal(0.0, pixels, 2) if pixels else 0.0)
            lines.append(" ".join([row[0], *(f"{v:.2f}" for v in moved.reshape(-1)), *row[9:]]))
        (out_dir / path.name).write_text("".join(line + "\n" for line in lines))
    return out_dir


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=400)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    print(f"{'extra noise':<16} {'key':<10} {'exact IoU':>9} {'ProbIoU':>8} {'diff':>8}   |ProbIoU-IoU| at IoU>=0.5: mean, p90")
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        labels = bench.generate(root, "probiou", frames=args.frames, boxes=(41, 60), size=bench.SONGDO_SIZE,
                                layout="roads", seed=args.seed, confidence=True)
        print(f"# {args.frames} frames, {labels.gt_boxes:,} ground-truth boxes, {labels.pred_boxes:,} detections")
        for degrees, pixels in ((0.0, 0.0), (3.0, 2.0), (8.0, 4.0)):
            pred = labels.pred if not (degrees or pixels) else perturbed(
                labels.pred, root / f"pred_{degrees}_{pixels}", degrees, pixels, args.seed)
            exact, approx, mean_gap, p90_gap = score(labels.gt, pred)
            what = "none" if not (degrees or pixels) else f"{degrees:g} deg, {pixels:g} px"
            for key in KEYS:
                print(f"{what:<16} {key:<10} {exact[key]:9.4f} {approx[key]:8.4f} {approx[key] - exact[key]:+8.4f}"
                      + (f"   {mean_gap:.4f}, {p90_gap:.4f}" if key == KEYS[0] else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
