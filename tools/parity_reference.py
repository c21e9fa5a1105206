#!/usr/bin/env python3
"""Our metric dict against the reference tool's ``evaluate_obb``, key by key, on randomized label sets.

usage: python tools/parity_reference.py [--sets 64] [--seed 0] [--refvenv /work/refvenv] [--keep DIR]

Generates label sets (crowded overlaps, near-squares, tiny boxes, several classes; corners
written with 0, 2 or 6 decimals; scored with and without ``-ca``, at ``-t`` 0.1 or 0.5), runs
the reference tool 1.12.0's ``evaluate_obb`` on all of them in its own virtualenv (one
subprocess; torch and the other heavy imports it does not need for scoring are stubbed) and
ours in this process, then compares every key of the reference's dict, ``class_stats``
included: counts and flags exactly, floats to a relative 1e-9 (IoU comes from two different
exact algorithms, so the last bits differ). Exit 0 when every set agrees.

Not a test: CI machines may lack the reference's virtualenv. The tests use shapely as the oracle.
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import subprocess
import sys
import tempfile
import warnings
from fractions import Fraction
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hbb2obb.scoring.evaluate import Hbb2ObbWarning  # noqa: E402
from hbb2obb.scoring.metric_dict import evaluate_obb  # noqa: E402

REFERENCE_DRIVER = """
import json, sys, types
for name in ('torch', 'psutil', 'cv2', 'ultralytics'):
    sys.modules.setdefault(name, types.ModuleType(name))
from pathlib import Path
import contextlib, io
from hbb2obb.evaluator import evaluate_obb

def plain(value):
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if hasattr(value, 'item'):
        return value.item()
    return value

out = []
for job in json.load(sys.stdin):
    with contextlib.redirect_stdout(io.StringIO()):  # its warnings go to stdout
        metrics = evaluate_obb(Path(job['gt']), Path(job['pred']), iou_threshold=job['t'],
                               class_agnostic=job['ca'], no_bar=True)
    out.append(plain(metrics))
json.dump(out, sys.stdout)
"""

KINDS = ("crowded", "near_square", "tiny", "mixed")


def box_corners(rng, centre, width, height, angle):
    a = math.radians(angle)
    u = np.array([math.cos(a), math.sin(a)]) * width / 2
    v = np.array([-math.sin(a), math.cos(a)]) * height / 2
    return np.array([centre - u - v, centre + u - v, centre + u + v, centre - u + v])


def make_frame(rng, kind: str, n_classes: int):
    """Ground-truth and predicted boxes of one frame: ``[(class, corners)]`` each."""
    n = int(rng.integers(8, 40))
    gt, pred = [], []
    crowd = rng.uniform(200, 1800, 2)
    for _ in range(n):
        this = kind if kind != "mixed" else KINDS[int(rng.integers(0, 3))]
        if this == "tiny":
            width, height = rng.uniform(0.5, 5, 2)
            centre = rng.uniform(20, 1900, 2)
        elif this == "near_square":
            width = rng.uniform(10, 60)
            height = width * rng.uniform(0.97, 1.03)
            centre = rng.uniform(50, 1850, 2)
        else:  # crowded: boxes heaped around one spot, overlapping their neighbours
            width, height = rng.uniform(15, 70), rng.uniform(8, 35)
            centre = crowd + rng.normal(0, 40, 2)
        angle = float(rng.choice([0.0, 90.0, rng.uniform(0, 180)], p=[0.3, 0.1, 0.6]))
        cls = int(rng.integers(0, n_classes))
        gt.append((cls, box_corners(rng, centre, width, height, angle)))
        roll = rng.uniform()
        if roll < 0.1:
            continue  # missed
        scale = max(width, height)
        jitter = rng.normal(0, 0.08 * scale, 2)
        corners = box_corners(rng, centre + jitter, width * rng.uniform(0.85, 1.15), height * rng.uniform(0.85, 1.15),
                              angle + rng.normal(0, 4))
        pred_cls = cls if rng.uniform() > 0.08 else int(rng.integers(0, n_classes))
        pred.append((pred_cls, corners))
    for _ in range(int(rng.integers(0, 4))):  # false positives
        pred.append((int(rng.integers(0, n_classes)),
                     box_corners(rng, rng.uniform(50, 1850, 2), rng.uniform(10, 50), rng.uniform(10, 50),
                                 rng.uniform(0, 180))))
    order = rng.permutation(len(pred))
    return gt, [pred[i] for i in order]


def write(path: Path, boxes, decimals: int) -> None:
    lines = []
    for cls, corners in boxes:
        values = np.round(corners.reshape(-1), decimals)
        text = [f"{v:.0f}" if decimals == 0 else f"{v:.{decimals}f}" for v in values]
        lines.append(f"{cls} " + " ".join(text))
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")


def make_sets(root: Path, count: int, seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)
    jobs = []
    for index in range(count):
        kind = KINDS[index % len(KINDS)]
        decimals = (0, 2, 6)[(index // len(KINDS)) % 3]
        class_agnostic = bool((index // 12) % 2)
        threshold = 0.5 if index % 5 == 4 else 0.1
        n_classes = int(rng.integers(1, 4))
        folder = root / f"set{index:02d}_{kind}_d{decimals}{'_ca' if class_agnostic else ''}_t{threshold}"
        (folder / "gt").mkdir(parents=True)
        (folder / "pred").mkdir()
        for frame in range(int(rng.integers(2, 5))):
            gt, pred = make_frame(rng, kind, n_classes)
            write(folder / "gt" / f"f{frame}.txt", gt, decimals)
            write(folder / "pred" / f"f{frame}.txt", pred, decimals)
        jobs.append({"gt": str(folder / "gt"), "pred": str(folder / "pred"), "ca": class_agnostic, "t": threshold,
                     "name": folder.name})
    return jobs


def differences(ours, theirs, path: str = "") -> list[str]:
    """Every place the reference's value is missing from ours or differs."""
    if isinstance(theirs, dict):
        if not isinstance(ours, dict):
            return [f"{path}: ours is {type(ours).__name__}"]
        ours = {str(k): v for k, v in ours.items()}
        out = []
        for key, value in theirs.items():
            if key not in ours:
                out.append(f"{path}.{key}: missing in ours")
            else:
                out += differences(ours[key], value, f"{path}.{key}" if path else key)
        return out
    if isinstance(theirs, list):
        if not isinstance(ours, list) or len(ours) != len(theirs):
            return [f"{path}: length ours {len(ours) if isinstance(ours, list) else '-'}, reference {len(theirs)}"]
        out = []
        for i, (a, b) in enumerate(zip(ours, theirs)):
            out += differences(a, b, f"{path}[{i}]")
        return out[:3]
    if isinstance(theirs, bool) or isinstance(theirs, int) and not isinstance(ours, float):
        return [] if ours == theirs else [f"{path}: ours {ours!r}, reference {theirs!r}"]
    if isinstance(theirs, (int, float)):
        if math.isclose(float(ours), float(theirs), rel_tol=1e-9, abs_tol=1e-12):
            return []
        return [f"{path}: ours {ours!r}, reference {theirs!r}"]
    return [] if ours == theirs else [f"{path}: ours {ours!r}, reference {theirs!r}"]


def shapely_iou(a, b) -> float:
    """The reference's IoU of one pair, as it computes it (shapely Polygon overlay)."""
    from shapely.geometry import Polygon

    pa, pb = Polygon(a), Polygon(b)
    inter = pa.intersection(pb).area
    union = pa.area + pb.area - inter
    return inter / union if union > 0 else 0.0


def exact_ties(job: dict) -> list[dict]:
    """Candidate pairs whose IoU is exactly a decision bound, with the reference's float for each.

    A bound is the threshold ``-t`` (a match needs IoU > t) or a ladder rung (a share counts
    IoU >= rung), as written in decimal. Such a pair is decided by the last bit of a float
    unless it is computed exactly; the reference's float is on the wrong side when it is.
    """
    from hbb2obb.geometry import candidate_pairs, iou_pairs, repair_corners
    from hbb2obb.geometry.exact import exact_iou
    from hbb2obb.geometry.polygon import convex_positive, planar
    from hbb2obb.io import read_obb_labels
    from hbb2obb.scoring.metrics import IOU_LADDER

    bounds = [("threshold", job["t"])] + [(f"rung {r:.2f}", r) for r in IOU_LADDER]
    ties = []
    for gt_path in sorted(Path(job["gt"]).glob("*.txt")):
        gt = read_obb_labels(gt_path, strict=True).boxes
        pred = read_obb_labels(Path(job["pred"]) / gt_path.name, strict=False).boxes
        ia, ib = candidate_pairs(gt.corners, pred.corners)
        if not job["ca"]:
            same = gt.class_id[ia] == pred.class_id[ib]
            ia, ib = ia[same], ib[same]
        floats = iou_pairs(gt.corners[ia], pred.corners[ib])
        for i, j, value in zip(ia.tolist(), ib.tolist(), floats.tolist()):
            if not any(abs(value - bound) < 1e-9 for _, bound in bounds):
                continue
            prepared = [convex_positive(*planar(repair_corners(c[None])[0])) for c in (gt.corners[i], pred.corners[j])]
            if any(bad[0] or concave[0] for _, _, bad, concave in prepared):
                continue
            exact = exact_iou(*(np.stack([x[:, 0], y[:, 0]], axis=1) for x, y, _, _ in prepared))
            for name, bound in bounds:
                if exact == Fraction(repr(bound)):
                    theirs = shapely_iou(gt.corners[i], pred.corners[j])
                    wrong = theirs > bound if name == "threshold" else theirs < bound
                    ties.append(dict(frame=gt_path.name, gt_line=int(gt.line[i]), pred_line=int(pred.line[j]),
                                     bound=name, exact=exact, reference=theirs, reference_wrong=wrong))
    return ties


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", type=int, default=64)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--refvenv", type=Path, default=Path("/work/refvenv"))
    parser.add_argument(
        "--keep", type=Path, help="Write the label sets here and keep them (default: a temporary folder)"
    )
    args = parser.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="parity-"))
    try:
        jobs = make_sets(root, args.sets, args.seed)
        # -P and cwd: the reference's own hbb2obb package, never this checkout's of the same name
        done = subprocess.run([str(args.refvenv / "bin" / "python"), "-P", "-c", REFERENCE_DRIVER],
                              input=json.dumps(jobs), capture_output=True, text=True, cwd=root)
        if done.returncode:
            print(done.stderr, file=sys.stderr)
            return 2
        references = json.loads(done.stdout)
        failed = explained = 0
        boxes = 0
        for job, theirs in zip(jobs, references):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", Hbb2ObbWarning)
                ours = evaluate_obb(Path(job["gt"]), Path(job["pred"]), iou_threshold=job["t"],
                                    class_agnostic=job["ca"])
            boxes += ours["total_gt"]
            problems = differences(ours, theirs)
            if problems:
                wrong = [t for t in exact_ties(job) if t["reference_wrong"]]
                explained += bool(wrong)
                failed += not wrong
                print(f"{job['name']}: {len(problems)} difference(s)")
                for problem in problems[:4]:
                    print("    " + problem)
                for tie in wrong:
                    side = "matches (IoU > t)" if tie["bound"] == "threshold" else "misses the rung (IoU < rung)"
                    print(
                        f"    reference wrong: {tie['frame']} GT line {tie['gt_line']} / pred line {tie['pred_line']}: "
                        f"exact IoU {tie['exact']} = the {tie['bound']}, shapely gives {tie['reference']!r}, "
                        f"so the reference {side}"
                    )
                if not wrong:
                    print("    NOT explained by an exact tie the reference rounds the wrong way")
        keys = len(references[0]) if references else 0
        print(f"{len(jobs) - failed - explained} of {len(jobs)} label sets agree with the reference on all {keys} keys "
              f"(class_stats included; {boxes} ground-truth boxes); {explained} differ where the reference rounds "
              f"an exact tie the wrong way (named above); {failed} differ otherwise")
        return 1 if failed else 0
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
