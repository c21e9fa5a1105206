"""Per-class scores of the built-in ``image`` converter on the real samples, against the HBB as is.

    python tools/converter_scores.py [--data ../shared/data] [--samples dota-sample songdo-sample]
                                       [--param tightness=tight ...] [--keep DIR] [--tuned-only]
                                       [--prompts tight|corner|margin [--margin LOW HIGH]]

For every sample it converts the frames exactly as the command line does (``hbb2obb IMAGES
--hbb_dir labels_hbb --obb_dir OUT -nb`` runs the same :meth:`ImageConverter.convert`), emits
the HBBs unchanged with the ``identity`` converter, and scores both with ``evaluate_obb``
(``hbb2obb-eval labels_obb_gt OUT -mp classes.yaml -nb``), once on the frames used while
tuning and once on the frame held out of all tuning. It prints one table per sample and part:
boxes, mean IoU of the HBB as is and of the converter per class, angle error p90, fallbacks by
reason, and the conversion's wall time and process CPU time (the machine may be shared: run
it under ``taskset -c 0`` for the one-core figure).

``--prompts KIND`` replaces the sample's ``labels_hbb`` with prompts of one kind made from its
ground truth (:func:`hbb2obb.synthetic.prompts.make_prompts`, seeded by the frame's name):
``tight`` bounds, ``corner``-cutting boxes, or boxes with a ``margin`` drawn per side from
``--margin`` (default 0 to 0.10 of the box's size). The HBB as is is then those prompts. Each
table also says how every frame's HBBs were read (``--tightness auto``).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import zlib
from pathlib import Path

import numpy as np
import yaml

from hbb2obb.converters import get_converter
from hbb2obb.io import read_yolo_obb
from hbb2obb.scoring.metric_dict import evaluate_obb
from hbb2obb.synthetic.prompts import PROMPT_KINDS, make_prompts

#: The frame of each sample that no tuning loop ever saw (decided before tuning started).
HELD_OUT = {"dota-sample": "P1888", "songdo-sample": "04433"}


def link_subset(source: Path, target: Path, stems: list[str]) -> Path:
    """``target`` holding symbolic links to the files of ``source`` whose stem is in ``stems``."""
    target.mkdir(parents=True)
    for path in sorted(source.iterdir()):
        if path.stem in stems:
            (target / path.name).symlink_to(path.resolve())
    return target


def class_names(sample: Path) -> dict:
    names = yaml.safe_load((sample / "classes.yaml").read_text(encoding="utf-8"))
    return {int(k): str(v) for k, v in names.items()} if isinstance(names, dict) else dict(enumerate(names))


def write_prompts(truth: Path, target: Path, kind: str, margin: tuple) -> Path:
    """``target`` holding YOLO-HBB prompts of ``kind`` made from every ground-truth file in ``truth``
    (absolute pixels, one decimal), each frame's noise seeded by its name."""
    target.mkdir(parents=True)
    for path in sorted(truth.glob("*.txt")):
        boxes = read_yolo_obb(path, strict=True).boxes
        rng = np.random.default_rng(zlib.crc32(path.stem.encode("utf-8")))
        xyxy = make_prompts(boxes.corners, kind, rng, margin=margin)
        lines = [f"{int(c)} {(x1 + x2) / 2:.2f} {(y1 + y2) / 2:.2f} {x2 - x1:.2f} {y2 - y1:.2f}\n"
                 for c, (x1, y1, x2, y2) in zip(boxes.class_id, xyxy)]
        (target / path.name).write_text("".join(lines), encoding="utf-8")
    return target


def score_part(sample: Path, stems: list[str], params: dict, work: Path, keep: Path | None,
               prompts: str | None = None, margin: tuple = (0.0, 0.10)) -> dict:
    """Convert and score the frames ``stems`` of one sample; the numbers of one table."""
    images = link_subset(sample / "images", work / "images", stems)
    truth = link_subset(sample / "labels_obb_gt", work / "labels_obb_gt", stems)
    if prompts is None:
        hbbs = link_subset(sample / "labels_hbb", work / "labels_hbb", stems)
    else:
        hbbs = write_prompts(truth, work / "labels_hbb", prompts, margin)
    out = (keep / sample.name / "_".join(stems)) if keep else work / "obb"
    wall, cpu = time.perf_counter(), time.process_time()
    report = get_converter("image").convert(hbbs, out, params, img_source=images)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    get_converter("identity").convert(hbbs, work / "hbb_as_obb", {})
    converted = evaluate_obb(truth, out)
    as_is = evaluate_obb(truth, work / "hbb_as_obb")
    return {"report": report, "converted": converted, "as_is": as_is, "wall": wall, "cpu": cpu}


def print_table(title: str, part: dict, names: dict) -> list[str]:
    """The table of one part; returns the classes whose converter mean is below the HBB's."""
    converted, as_is, report = part["converted"], part["as_is"], part["report"]
    print(f"\n{title}")
    print("| class | boxes | HBB as is | converter | angle p90 (deg) |")
    print("| --- | --- | --- | --- | --- |")
    below = []
    for class_id, stats in converted["class_stats"].items():
        base = as_is["class_stats"][class_id]["avg_iou"]
        mark = "" if stats["avg_iou"] >= base else " (below)"
        if mark:
            below.append(names.get(class_id, str(class_id)))
        print(f"| {names.get(class_id, class_id)} | {stats['gt_total']} | {base:.3f} | {stats['avg_iou']:.3f}{mark} "
              f"| {stats['p90_angle_error']:.1f} |")
    print(f"| all | {converted['total_gt']} | {as_is['avg_iou']:.3f} | {converted['avg_iou']:.3f} "
          f"| {converted['p90_angle_error']:.1f} |")
    reasons = report.details.get("fallback_reasons", {})
    listed = "; ".join(f"{count} {reason}" for reason, count in sorted(reasons.items())) or "none"
    readings = report.details.get("tightness_per_file", {})
    per_frame = ", ".join(f"{Path(name).stem} {reading}" for name, reading in sorted(readings.items()))
    print(f"fallbacks: {report.fallbacks} ({listed}); HBBs read as: {per_frame}")
    print(f"time: {part['wall']:.2f} s wall, {part['cpu']:.2f} s CPU for {report.boxes} boxes "
          f"({100 * part['cpu'] / max(report.boxes, 1):.2f} s CPU per 100 boxes)")
    return below


def print_combined(title: str, parts: list, names: dict) -> None:
    """Both parts together (every frame of the sample), from the per-match IoUs and angle errors."""
    print(f"\n{title}")
    print("| class | boxes | HBB as is | converter | angle p90 (deg) |")
    print("| --- | --- | --- | --- | --- |")
    every = {"base": [], "iou": [], "angle": []}
    for class_id in sorted({c for part in parts for c in part["converted"]["class_stats"]}):
        rows = [part for part in parts if class_id in part["converted"]["class_stats"]]
        iou = sum((part["converted"]["class_stats"][class_id]["ious"] for part in rows), [])
        angle = sum((part["converted"]["class_stats"][class_id]["angle_errors"] for part in rows), [])
        base = sum((part["as_is"]["class_stats"][class_id]["ious"] for part in rows), [])
        every["iou"] += iou
        every["angle"] += angle
        every["base"] += base
        print(f"| {names.get(class_id, class_id)} | {len(iou)} | {np.mean(base):.3f} | {np.mean(iou):.3f} "
              f"| {np.percentile(angle, 90):.1f} |")
    print(f"| all | {len(every['iou'])} | {np.mean(every['base']):.3f} | {np.mean(every['iou']):.3f} "
          f"| {np.percentile(every['angle'], 90):.1f} |")


def parse_param(text: str) -> tuple[str, object]:
    name, _, value = text.partition("=")
    if not name or not _:
        raise argparse.ArgumentTypeError(f"--param takes NAME=VALUE, got {text!r}")
    return name, yaml.safe_load(value)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[1].parent / "shared" / "data")
    parser.add_argument("--samples", nargs="+", default=list(HELD_OUT))
    parser.add_argument("--param", type=parse_param, action="append", default=[],
                        help="A converter parameter NAME=VALUE (default: the converter's defaults).")
    parser.add_argument("--keep", type=Path, help="Keep the converted OBB files under this folder.")
    parser.add_argument("--prompts", choices=PROMPT_KINDS,
                        help="Prompts of this kind made from the ground truth instead of labels_hbb.")
    parser.add_argument("--margin", type=float, nargs=2, default=(0.0, 0.10), metavar=("LOW", "HIGH"),
                        help="--prompts margin: the range each side grows by, as a share of the box's size.")
    parser.add_argument("--tuned-only", action="store_true",
                        help="Score only the frames used while tuning; the held-out frame stays unseen "
                             "(what every tuning loop runs).")
    args = parser.parse_args(argv)
    params = dict(args.param)
    below_anywhere = []
    for name in args.samples:
        sample = args.data / name
        if not (sample / "labels_obb_gt").is_dir():
            print(f"{sample}: no sample there (labels_obb_gt missing)", file=sys.stderr)
            return 2
        stems = sorted(p.stem for p in (sample / "labels_hbb").glob("*.txt"))
        held = HELD_OUT.get(name)
        parts = [("tuned on", [s for s in stems if s != held]), ("held out", [s for s in stems if s == held])]
        if args.tuned_only:
            parts = parts[:1]
        names = class_names(sample)
        scored = []
        for label, part_stems in parts:
            if not part_stems:
                continue
            with tempfile.TemporaryDirectory(prefix="converter_scores_") as work:
                part = score_part(sample, part_stems, params, Path(work), args.keep, args.prompts,
                                  tuple(args.margin))
            title = f"{name}, {label}: {', '.join(part_stems)}"
            below_anywhere += [f"{name} {label} {c}" for c in print_table(title, part, names)]
            scored.append(part)
        if len(scored) > 1:
            print_combined(f"{name}, all frames", scored, names)
    print("\nevery class at least its HBB-as-is value" if not below_anywhere
          else "\nbelow the HBB as is: " + ", ".join(below_anywhere))
    return 0


if __name__ == "__main__":
    sys.exit(main())
