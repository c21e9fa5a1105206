#!/usr/bin/env python3
"""The label readers on the same boxes: each format against YOLO-OBB, in one process.

Generates a detection set (benchmarks/detection_sets.py: DOTA ground truth, a Task1
submission, the same boxes as YOLO-OBB), writes the same boxes as COCO, LabelMe and VOC with
``hbb2obb.write_labels``, then times reading each, best of ``--repeat``:

* YOLO-OBB and DOTA folders with the batch reader ``hbb2obb-eval`` uses (``read_obb_batch``);
  YOLO-OBB twice: corners in pixels (integers for the ground truth, the tokenizer's fastest
  path) and normalized to the frame with 6 decimals, as Ultralytics writes its labels,
* the Task1 submission with ``read_task1`` (what ``hbb2obb-eval`` calls for one),
* COCO, LabelMe and VOC (horizontal boxes: the same boxes' extents) with ``hbb2obb.read_labels``
  (their one reader each).

Usage::

    python benchmarks/bench_readers.py                  # 512 frames, about 150,000 detections
    python benchmarks/bench_readers.py --detections 20000 --repeat 3
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import detection_sets  # noqa: E402  (beside this script)

import hbb2obb  # noqa: E402
from hbb2obb.io.dota_task1 import read_task1  # noqa: E402
from hbb2obb.io.labelmap import load_label_map  # noqa: E402
from hbb2obb.io.yolo_obb import read_obb_batch  # noqa: E402

NORMALIZED = "YOLO-OBB normalized"


def normalized_copies(files: list, folder: Path) -> list:
    """The pixel YOLO-OBB files again as Ultralytics writes them: corners divided by the frame, 6 decimals."""
    folder.mkdir()
    copies = []
    for path in files:
        lines = []
        for line in path.read_text().splitlines():
            fields = line.split()
            corners = " ".join(f"{float(v) / detection_sets.FRAME:.6f}" for v in fields[1:9])
            lines.append(" ".join([fields[0], corners, *fields[9:]]) + "\n")
        copies.append(folder / path.name)
        copies[-1].write_text("".join(lines))
    return copies


def best_of(repeat: int, read) -> float:
    best = float("inf")
    for _ in range(repeat):
        began = time.perf_counter()
        read()
        best = min(best, time.perf_counter() - began)
    return best


def reader_table(root: Path, frames: int, detections: int, repeat: int, say=print) -> dict:
    """Generate the set under ``root``, time every reader on it and ``say`` the table; the times by (boxes, format)."""
    made = detection_sets.generate(root / "set", frames, detections)
    names = load_label_map(made.label_map)
    sizes = (detection_sets.FRAME, detection_sets.FRAME)
    gt = sorted((made.root / "gt").glob("*.txt"))
    gt_yolo = sorted((made.root / "gt_yolo").glob("*.txt"))
    pred_yolo = sorted((made.root / "pred_yolo").glob("*.txt"))
    gt_norm = normalized_copies(gt_yolo, root / "gt_norm")
    pred_norm = normalized_copies(pred_yolo, root / "pred_norm")
    rows = [
        ("ground truth", "YOLO-OBB", made.gt_boxes, lambda: read_obb_batch(gt_yolo, strict=True)),
        ("ground truth", NORMALIZED, made.gt_boxes, lambda: read_obb_batch(gt_norm, strict=True)),
        ("ground truth", "DOTA", made.gt_boxes, lambda: read_obb_batch(gt, strict=True, label_map=names)),
        ("detections", "YOLO-OBB", made.detections, lambda: read_obb_batch(pred_yolo, strict=False)),
        ("detections", NORMALIZED, made.detections, lambda: read_obb_batch(pred_norm, strict=False)),
        ("detections", "DOTA Task1", made.detections, lambda: read_task1(made.pred, names)),
    ]
    labels = dict(hbb2obb.read_labels(made.root / "gt_yolo", "yolo", image_sizes=sizes, label_map=names))
    for fmt, label in (("coco", "COCO"), ("labelme", "LabelMe"), ("voc", "VOC")):
        dest = root / fmt / ("labels.json" if fmt == "coco" else "")
        kind = "hbb" if fmt == "voc" else "obb"  # VOC boxes are horizontal: the same boxes' extents
        hbb2obb.write_labels(labels, dest, fmt, kind=kind, label_map=names, image_sizes=sizes)
        rows.append(("ground truth", label, made.gt_boxes,
                     lambda dest=dest, fmt=fmt: hbb2obb.read_labels(dest, fmt, image_sizes=sizes, label_map=names)))
    times = {(kind, label): best_of(repeat, read) for kind, label, _, read in rows}
    say(f"label readers on the same boxes, best of {repeat}, {made.frames} frames "
        f"({made.gt_boxes:,} ground-truth boxes, {made.detections:,} detections), one process")
    say(f"  {'boxes':<13}{'format':<20}{'boxes':>9}{'seconds':>10}{'x YOLO-OBB':>12}{'x normalized':>14}")
    for kind, label, count, _ in rows:
        seconds = times[(kind, label)]
        pixels, normalized = seconds / times[(kind, "YOLO-OBB")], seconds / times[(kind, NORMALIZED)]
        say(f"  {kind:<13}{label:<20}{count:>9,}{seconds:>10.3f}{pixels:>12.2f}{normalized:>14.2f}")
    dota = times[("ground truth", "DOTA")] + times[("detections", "DOTA Task1")]
    for label in ("YOLO-OBB", NORMALIZED):
        both = dota / (times[("ground truth", label)] + times[("detections", label)])
        say(f"  DOTA ground truth + Task1 detections against the same as {label}: {both:.2f}x")
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--frames", type=int, default=512)
    parser.add_argument("--detections", type=int, default=150_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="hbb2obb-readers-"))
    try:
        reader_table(root, args.frames, args.detections, args.repeat)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
