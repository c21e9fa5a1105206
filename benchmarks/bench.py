#!/usr/bin/env python3
"""Benchmark: ``hbb2obb-eval`` against its peers (the reference tool, shapely 2) and our per-pair oracle.

Generates, deterministically and into a temporary folder, a Songdo-scale label set (5,419 4K
frames of about 50 vehicles: cars, buses and trucks at real sizes, some axis-aligned, most
rotated along the frame's roads) and a dense set (a few parking-lot frames of 5,000 boxes each),
then times, side by side in one run:

* against the peers a user would otherwise pick (benchmarks/bench_peers.py): the reference tool
  ``hbb2obb`` 1.12.0 in a virtual environment of its own (``.bench/refvenv``, created on first
  use), and ``benchmarks/shapely_vectorized.py`` (shapely 2, an STRtree query per frame), on
  10k and 50k boxes, the Songdo-scale set, 100,000 small files, one dense frame and
  ``hbb2obb-analyze`` at 50k; and a 10-box run against ``python -c 'import numpy'``
  (``--sets`` picks some of them);
* (a) ``hbb2obb-eval GT PRED -nb --json`` as a whole process (interpreter start included)
  against (b) ``tests/oracles/shapely_reference.py GT PRED --json``, one shapely intersection per
  box pair: the test oracle, on the Songdo-scale set;
* the converter's throughput, ``hbb2obb -j 1`` against ``-j 2`` on generated frames with images
  (benchmarks/bench_converter.py; ``--converter-frames``, 0 leaves it out);
* every label reader on the same boxes (benchmarks/bench_readers.py: YOLO-OBB in pixels and
  normalized, DOTA, Task1, COCO, LabelMe, VOC; ``--reader-detections``, 0 leaves it out);
* detection metrics on DOTA-style sets (benchmarks/bench_detection.py): ours against the DOTA
  devkit, supervision and pycocotools fed shapely IoU (``--detection-sets``, none leaves it out).

It prints the median wall time of each, the ratio b/a, the peak resident memory of each
process, whether both printed the same metric dict (every value within 1e-9), how ``--jobs``
scales (with identical output and warnings), the time of a dense frame, and where our time
goes (parsing, IoU, matching, statistics), measured by timers around the pipeline stages.

Usage::

    python benchmarks/bench.py                      # the full benchmark (make bench), minutes
    python benchmarks/bench.py --baseline-frames 500  # time (b) on 500 frames, extrapolate per frame
    python benchmarks/bench.py --frames 20 --boxes 10 10 --dense-boxes 200 --repeat 1 --small-frames 500  # a smoke run
    python benchmarks/bench.py --sets tiny 50k --no-reference   # only these peers rows, without the reference tool
    python benchmarks/bench.py --detection-sets 10k 150k dense 1.5M --detection-rounds 3   # detection sets
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_converter  # noqa: E402  (beside this script)
import bench_detection  # noqa: E402
import bench_peers  # noqa: E402
import bench_readers  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
REFERENCE_SCRIPT = ROOT / "tests" / "oracles" / "shapely_reference.py"
TOLERANCE = 1e-9

SONGDO_FRAMES = 5419  # frames of the Songdo Vision OBB release
SONGDO_SIZE = (3840, 2160)
#: class id: (share, length mean, length sd, breadth mean, breadth sd), pixels in a 4K frame.
VEHICLES = {0: (0.90, 95.0, 7.0, 42.0, 2.5), 1: (0.03, 220.0, 18.0, 48.0, 2.5), 2: (0.07, 150.0, 20.0, 45.0, 2.5)}
ALIGNED_SHARE = 0.18  # share of ground-truth boxes drawn exactly axis-aligned
DROP_SHARE = 0.04  # ground-truth boxes the simulated converter misses
EXTRAS_PER_FRAME = 0.8  # spurious predictions per frame (Poisson mean)


# --------------------------------------------------------------------------- data


@dataclass(frozen=True)
class LabelSet:
    """A generated pair of label folders."""

    name: str
    gt: Path
    pred: Path
    frames: int
    gt_boxes: int
    pred_boxes: int
    size: tuple


def _rectangles(centre, length, breadth, heading_deg):
    """Corners ``(n, 4, 2)``; exact for headings at multiples of 90 degrees."""
    rad = np.radians(heading_deg)
    cos, sin = np.cos(rad), np.sin(rad)
    right = np.isclose(np.mod(heading_deg, 90.0), 0.0)
    cos, sin = np.where(right, np.round(cos), cos), np.where(right, np.round(sin), sin)
    u = np.stack([cos, sin], -1) * (length / 2)[:, None]
    v = np.stack([-sin, cos], -1) * (breadth / 2)[:, None]
    return centre[:, None, :] + np.stack([-u - v, u - v, u + v, -u + v], axis=1)


def _lines(class_id, corners, score=None) -> list[str]:
    values = np.concatenate([class_id[:, None], np.rint(corners).reshape(-1, 8)], axis=1).astype(np.int64)
    lines = [" ".join(row) for row in values.astype(str).tolist()]
    if score is None:
        return lines
    return [f"{line} {value:.3f}" for line, value in zip(lines, score.tolist())]  # 3 decimals: ties too


def _write_frames(folder: Path, names, frame_of_box, lines) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    stops = np.searchsorted(frame_of_box, np.arange(len(names)), side="right")
    start = 0
    for name, stop in zip(names, stops.tolist()):
        (folder / f"{name}.txt").write_text("".join(line + "\n" for line in lines[start:stop]), encoding="utf-8")
        start = stop


def generate(root: Path, name: str, *, frames: int, boxes: tuple, size: tuple, layout: str, seed: int,
             confidence: bool = False) -> LabelSet:
    """Write ``root/name/{gt,pred}``: ground truth and a simulated converter's predictions.

    ``confidence``: the predictions also get a 10th field, as a detector writes it: scores
    drawn high for boxes of real objects (Beta(6, 2)) and low for the spurious ones (Beta(2, 4)),
    drawn after everything else, so the boxes are those written without it.

    ``layout="roads"``: each box in its own cell of a coarse grid (vehicles rarely overlap), an
    18 % share exactly axis-aligned, the rest along one of two road directions of the frame.
    ``layout="parking"``: a dense lot, boxes on a regular grid of stalls, rows either straight
    or angled. Integer corners, like the real labels. The same seed writes the same files.
    """
    rng = np.random.default_rng(seed)
    width, height = size
    shutil.rmtree(root / name, ignore_errors=True)  # a kept folder from an earlier run: start clean
    counts = rng.integers(boxes[0], boxes[1] + 1, size=frames)
    frame_of_box = np.repeat(np.arange(frames), counts)
    total = int(counts.sum())
    within = np.arange(total) - np.repeat(np.cumsum(counts) - counts, counts)
    share = np.array([v[0] for v in VEHICLES.values()])
    class_id = rng.choice(np.array(list(VEHICLES)), size=total, p=share / share.sum())
    spec = np.array([VEHICLES[c][1:] for c in VEHICLES])[class_id]
    length = np.maximum(rng.normal(spec[:, 0], spec[:, 1]), 10.0)
    breadth = np.maximum(rng.normal(spec[:, 2], spec[:, 3]), 6.0)
    if layout == "roads":
        columns, rows = 16, 12
        cell = np.array([width / columns, height / rows])
        slot = np.argsort(rng.random((frames, columns * rows)), axis=1)[frame_of_box, within]
        centre = (np.stack([slot % columns, slot // columns], -1) + 0.5) * cell
        centre += rng.uniform(-0.2, 0.2, (total, 2)) * cell
        road = rng.uniform(0.0, 180.0, (frames, 2))[frame_of_box, rng.integers(0, 2, total)]
        heading = road + rng.choice([0.0, 180.0], total) + rng.normal(0.0, 4.0, total)
        aligned = rng.random(total) < ALIGNED_SHARE
        heading = np.where(aligned, rng.choice([0.0, 90.0, 180.0, 270.0], total), heading)
    else:  # a parking lot: stalls 60 px apart in rows 115 px apart, every third row straight
        pitch = np.array([60.0, 115.0])
        columns = int(width // pitch[0])
        height = int(np.ceil(boxes[1] / columns)) * int(pitch[1])
        stall = np.stack([within % columns, within // columns], -1)
        centre = (stall + 0.5) * pitch + rng.normal(0.0, 2.0, (total, 2))
        tilt = np.where(stall[:, 1] % 3 == 0, 0.0, np.where(stall[:, 1] % 2 == 0, 35.0, -35.0))
        heading = 90.0 + tilt + rng.choice([0.0, 180.0], total)
        length, breadth = np.minimum(length, 100.0), np.minimum(breadth, 46.0)
    gt = _rectangles(centre, length, breadth, heading)
    names = [f"{name}_{i:05d}" for i in range(frames)]
    _write_frames(root / name / "gt", names, frame_of_box, _lines(class_id, gt))

    # The simulated converter: a little off in place, size and angle; misses some; adds a few.
    kept = rng.random(total) >= DROP_SHARE
    jitter = rng.normal(0.0, 1.0, (total, 4, 2))
    pred = _rectangles(centre + rng.normal(0.0, 1.5, (total, 2)), length * rng.normal(1.0, 0.04, total),
                       breadth * rng.normal(1.0, 0.06, total), heading + rng.normal(0.0, 1.5, total)) + jitter
    start = rng.integers(0, 4, total)  # converters start the corner list anywhere, in either winding
    pred = pred[np.arange(total)[:, None], (np.arange(4)[None, :] + start[:, None]) % 4]
    pred = np.where((rng.random(total) < 0.1)[:, None, None], pred[:, ::-1], pred)
    pred_class = np.where(rng.random(total) < 0.02, rng.integers(0, len(VEHICLES), total), class_id)
    extras = rng.poisson(EXTRAS_PER_FRAME, frames)
    extra_frame = np.repeat(np.arange(frames), extras)
    extra_centre = rng.uniform(0.0, 1.0, (extra_frame.size, 2)) * np.array([width, height])
    extra = _rectangles(extra_centre, rng.uniform(30, 120, extra_frame.size), rng.uniform(15, 50, extra_frame.size),
                        rng.uniform(0.0, 180.0, extra_frame.size))
    pred_frame = np.concatenate([frame_of_box[kept], extra_frame])
    pred_corners = np.concatenate([pred[kept], extra])
    pred_classes = np.concatenate([pred_class[kept], rng.integers(0, len(VEHICLES), extra_frame.size)])
    order = np.lexsort((rng.random(pred_frame.size), pred_frame))  # shuffled within each frame
    score = None
    if confidence:
        score = np.concatenate([rng.beta(6.0, 2.0, int(kept.sum())), rng.beta(2.0, 4.0, extra_frame.size)])[order]
    _write_frames(root / name / "pred", names, pred_frame[order],
                  _lines(pred_classes[order], pred_corners[order], score))
    return LabelSet(name, root / name / "gt", root / name / "pred", frames, total, int(pred_frame.size),
                    (width, height))


def subset(label_set: LabelSet, frames: int, root: Path) -> LabelSet:
    """The first ``frames`` frames of a set, as folders of symbolic links (copies where links fail)."""
    frames = min(frames, label_set.frames)
    names = sorted(p.name for p in label_set.gt.glob("*.txt"))[:frames]
    folder = root / f"{label_set.name}_first{frames}"
    shutil.rmtree(folder, ignore_errors=True)
    counts = []
    for side, source in (("gt", label_set.gt), ("pred", label_set.pred)):
        (folder / side).mkdir(parents=True, exist_ok=True)
        lines = 0
        for name in names:
            if not (source / name).exists():
                continue
            target = folder / side / name
            try:
                target.symlink_to((source / name).resolve())  # absolute: a relative --keep works too
            except OSError:
                shutil.copyfile(source / name, target)
            lines += sum(1 for line in (source / name).read_text().splitlines() if line.strip())
        counts.append(lines)
    return LabelSet(folder.name, folder / "gt", folder / "pred", frames, counts[0], counts[1], label_set.size)


# --------------------------------------------------------------------------- processes


@dataclass(frozen=True)
class Run:
    """One finished process: wall time, peak resident memory, what it printed."""

    seconds: float
    peak_rss_mb: float | None
    returncode: int
    stdout: str
    stderr: str
    cpu_seconds: float | None = None  # user + system time of the command (None where not measured)


# The measured command is forked and waited for by a small interpreter (bench_detection.LAUNCHER):
# a child's peak RSS as the kernel reports it includes the memory of the process it was forked
# from, so forking from this script (with its data in memory) would inflate it.


def run_process(command: list) -> Run:
    """Run a command to completion: its wall time, peak RSS (the largest process of its tree), output."""
    command = [str(part) for part in command]
    with tempfile.TemporaryDirectory() as folder, tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        report = Path(folder) / "usage"
        measured = hasattr(os, "fork") and hasattr(os, "wait4")
        start = time.perf_counter()
        if measured:
            command = [sys.executable, "-S", "-c", bench_detection.LAUNCHER, str(report), "0"] + command  # 0: no limit
        returncode = subprocess.run(command, stdout=out, stderr=err).returncode
        seconds, peak, cpu = time.perf_counter() - start, None, None
        if measured and report.exists():
            seconds, maxrss, cpu, _ = report.read_text().split()
            scale = 1 / 2**20 if sys.platform == "darwin" else 1 / 2**10  # bytes on macOS, KiB on Linux
            seconds, peak, cpu = float(seconds), int(maxrss) * scale, float(cpu)
        out.seek(0)
        err.seek(0)
        return Run(seconds, peak, returncode, out.read().decode(), err.read().decode(), cpu)


def eval_command() -> list:
    """Our console script, from the interpreter's environment."""
    beside = Path(sys.executable).with_name("hbb2obb-eval")
    found = beside if beside.exists() else shutil.which("hbb2obb-eval")
    if not found:
        sys.exit("bench: hbb2obb-eval not found; install the package (make install)")
    return [found]


def ours(label_set: LabelSet, jobs: int = 1) -> list:
    return eval_command() + [label_set.gt, label_set.pred, "-nb", "--json", "--jobs", str(jobs)]


def analyze_command(label_set: LabelSet) -> list:
    """Our ``hbb2obb-analyze`` on a set, report on stdout."""
    return [Path(eval_command()[0]).with_name("hbb2obb-analyze"), label_set.gt, label_set.pred, "-nb"]


def baseline(label_set: LabelSet) -> list:
    return [sys.executable, REFERENCE_SCRIPT, label_set.gt, label_set.pred, "--json"]


@dataclass(frozen=True)
class Timing:
    """Repeated runs of one command: the median wall time and the largest peak RSS."""

    runs: tuple

    @property
    def median(self) -> float:
        return statistics.median(r.seconds for r in self.runs)

    @property
    def peak_rss_mb(self) -> float | None:
        peaks = [r.peak_rss_mb for r in self.runs if r.peak_rss_mb is not None]
        return max(peaks) if peaks else None

    @property
    def first(self) -> Run:
        return self.runs[0]

    @property
    def median_cpu(self) -> float | None:
        """The median user + system time of the runs that measured it (``None`` when none did)."""
        known = [r.cpu_seconds for r in self.runs if r.cpu_seconds is not None]
        return statistics.median(known) if known else None


def timed(command: list, repeat: int) -> Timing:
    runs = []
    for _ in range(max(repeat, 1)):
        run = run_process(command)
        if run.returncode != 0:
            sys.exit(f"bench: {' '.join(map(str, command))} failed with status {run.returncode}:\n{run.stderr[-2000:]}")
        runs.append(run)
    return Timing(tuple(runs))


def parallel_capacity() -> float:
    """How much faster two CPU-bound processes finish together than one after the other (2 = two free cores).

    Tells whether ``--jobs 2`` can help on this machine at this moment (other load shares the cores).
    """
    spin = [sys.executable, "-S", "-c", "x = 0\nfor i in range(6_000_000): x += i"]
    alone = run_process(spin).seconds
    start = time.perf_counter()
    both = [subprocess.Popen(spin) for _ in range(2)]
    for process in both:
        process.wait()
    return 2 * alone / (time.perf_counter() - start)


# --------------------------------------------------------------------------- agreement


def compare_metrics(ours_dict: dict, theirs: dict, path: str = "") -> tuple[int, float, list]:
    """Compare every value the reference printed with ours: ``(values compared, max |diff|, mismatches)``.

    Numbers must agree within :data:`TOLERANCE`, everything else exactly; keys only we print
    (input-health counters) are not compared.
    """
    compared, worst, bad = 0, 0.0, []
    for key, value in theirs.items():
        where = f"{path}{key}"
        if key not in ours_dict:
            bad.append(f"{where}: missing from ours")
            continue
        mine = ours_dict[key]
        if isinstance(value, dict):
            n, w, b = compare_metrics(mine, value, where + ".")
            compared, worst, bad = compared + n, max(worst, w), bad + b
        elif isinstance(value, list) and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
            if len(mine) != len(value):
                bad.append(f"{where}: {len(mine)} values against {len(value)}")
                continue
            diff = float(np.max(np.abs(np.subtract(mine, value)))) if value else 0.0
            compared, worst = compared + len(value), max(worst, diff)
            if diff > TOLERANCE:
                bad.append(f"{where}: differs by {diff:.3g}")
        elif isinstance(value, float) and not isinstance(mine, bool):
            diff = abs(float(mine) - value)
            compared, worst = compared + 1, max(worst, diff)
            if not diff <= TOLERANCE:
                bad.append(f"{where}: {mine!r} against {value!r}")
        else:
            compared += 1
            if mine != value:
                bad.append(f"{where}: {mine!r} against {value!r}")
    return compared, worst, bad


def agreement(ours_run: Run, baseline_run: Run) -> tuple[int, float, list]:
    return compare_metrics(json.loads(ours_run.stdout), json.loads(baseline_run.stdout))


def messy_copy(label_set: LabelSet, frames: int, root: Path) -> LabelSet:
    """A copy of the first frames with broken prediction lines, bow-ties, a missing and an orphan file.

    Used to check that ``--jobs`` keeps the warnings and their order.
    """
    source = subset(label_set, frames, root / "links")
    folder = root / f"{label_set.name}_messy"
    shutil.rmtree(folder, ignore_errors=True)
    for side in ("gt", "pred"):
        (folder / side).mkdir(parents=True, exist_ok=True)
        for path in sorted((source.gt if side == "gt" else source.pred).glob("*.txt")):
            shutil.copyfile(path, folder / side / path.name)
    preds = sorted((folder / "pred").glob("*.txt"))
    for index, path in enumerate(preds):
        lines = path.read_text().splitlines()
        if index % 7 == 3:
            lines.insert(len(lines) // 2, "0 1 2 3")
        if index % 11 == 5:
            lines.append("1 10 10 nan 10 20 20 10 20")
        if index % 5 == 1 and lines:
            fields = lines[0].split()
            lines[0] = " ".join(fields[:5] + fields[7:9] + fields[5:7])  # corners 3 and 4 swapped
        path.write_text("\n".join(lines) + "\n")
    if len(preds) > 2:
        preds[len(preds) // 2].unlink()
    (folder / "pred" / "zz_orphan.txt").write_text("0 1 1 20 1 20 9 1 9\n")
    return LabelSet(folder.name, folder / "gt", folder / "pred", source.frames, source.gt_boxes, source.pred_boxes,
                    label_set.size)


# --------------------------------------------------------------------------- profile

# Run in a fresh interpreter, so interpreter start and imports are measured as the console
# script pays them. Timers wrap the pipeline stages where the core looks them up.
PROFILE_CHILD = r"""
import time
began = time.perf_counter()
import json, sys
import hbb2obb.cli.eval as cli
imported = time.perf_counter()
import hbb2obb.scoring.evaluate as core
import hbb2obb.frames.loading as frames
import hbb2obb.detection.evaluate as detection
import hbb2obb.geometry.iou as iou_module
try:  # the Python API the command scores through (older cores call the stages from the command itself)
    import hbb2obb.api.evaluation as api
except ImportError:
    api = None
spent = {}
def wrap(module, name, label):
    original = getattr(module, name, None)
    if original is None:
        return
    def timed(*args, **kwargs):
        start = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            spent[label] = spent.get(label, 0.0) + time.perf_counter() - start
    setattr(module, name, timed)
STAGES
gt, pred, out = sys.argv[1:4]
try:
    cli.main([gt, pred, "-nb", "--json"], standalone_mode=False)
finally:
    spent["imports"] = imported - began
    spent["in process"] = time.perf_counter() - began
    with open(out, "w") as handle:
        json.dump(spent, handle)
"""
STAGES = [  # (module, attribute, label); a missing attribute is skipped (older versions of the core)
    ("cli", "plan_frames", "pairing files"),
    ("cli", "plan_any", "pairing files"),  # what the command calls (plan_frames, or a Task1 submission)
    ("cli", "evaluate_frames", "evaluate"),
    ("api", "plan_any", "pairing files"),  # the command pairs and scores through hbb2obb.api.evaluation now
    ("api", "evaluate_frames", "evaluate"),
    ("core", "_match_chunk", "chunk"),
    ("core", "load_frame", "load"),
    ("core", "load_frames", "load"),
    ("frames", "read_obb_labels", "parsing"),
    ("frames", "read_obb_batch", "parsing"),  # the bytes are read before (read_frame_batches)
    ("core", "candidate_pairs", "candidate pairs"),
    ("core", "iou_pairs", "IoU"),
    # the default run (detection metrics on) pairs and scores in detection.frame_pairs:
    # sparse_pairwise_iou, whose candidate search is iou_module.pairs_of_bounds
    ("detection", "candidate_pairs", "candidate pairs"),  # older cores: frame_pairs called these two
    ("detection", "iou_pairs", "IoU"),
    ("detection", "sparse_pairwise_iou", "pairs and IoU"),
    ("core", "sparse_pairwise_iou", "pairs and IoU"),
    ("iou_module", "pairs_of_bounds", "candidate pairs within pairs and IoU"),
    ("core", "match_pairs", "matching"),
    ("core", "orientation_errors", "orientation"),
    ("core", "summarize", "statistics"),
    ("cli", "summarize", "statistics"),  # what the command calls now (with the lists' arrays for the JSON)
    ("api", "summarize", "statistics"),  # through Evaluation.metrics
    ("cli", "metrics_json", "JSON"),
    ("cli", "metrics_json_bytes", "JSON"),  # older cores: bytes to stdout
    ("cli", "metrics_json_pieces", "JSON"),  # what the command calls now (pieces to stdout, not joined)
]


def profile(label_set: LabelSet, scratch: Path) -> tuple[float, dict]:
    """Wall time of one instrumented run and the seconds spent per stage."""
    code = PROFILE_CHILD.replace("STAGES", "\n".join(f"wrap({m}, {a!r}, {label!r})" for m, a, label in STAGES))
    out = scratch / "profile.json"
    run = run_process([sys.executable, "-c", code, label_set.gt, label_set.pred, out])
    if run.returncode != 0:
        sys.exit(f"bench: profiling run failed:\n{run.stderr[-2000:]}")
    return run.seconds, json.loads(out.read_text())


def profile_rows(wall: float, spent: dict) -> list:
    """Exclusive seconds per stage (nested stages subtracted), in pipeline order."""
    get = spent.get
    # sparse_pairwise_iou times both steps: its candidate search is timed inside it, the rest is IoU
    searched = get("candidate pairs", 0.0) + get("candidate pairs within pairs and IoU", 0.0)
    clipped = get("IoU", 0.0) + get("pairs and IoU", 0.0) - get("candidate pairs within pairs and IoU", 0.0)
    chunk_parts = get("load", 0.0) + searched + clipped + get("matching", 0.0) + get("orientation", 0.0)
    rows = [
        ("interpreter start", wall - get("in process", wall)),
        ("imports", get("imports", 0.0)),
        ("pairing files", get("pairing files", 0.0)),
        ("parsing labels", get("parsing", 0.0)),
        ("repair, scaling, filters", get("load", 0.0) - get("parsing", 0.0)),
        ("candidate pairs (AABB)", searched),
        ("IoU (polygon clipping)", clipped),
        ("matching", get("matching", 0.0)),
        ("orientation errors", get("orientation", 0.0)),
        ("rest of the chunk work", get("chunk", 0.0) - chunk_parts),
        # label bytes are read between chunks (by a thread with -j 1: here only the wait for it)
        ("reading label files, joining chunks", get("evaluate", 0.0) - get("chunk", 0.0)),
        ("statistics (metric dict)", get("statistics", 0.0)),
        ("JSON text", get("JSON", 0.0)),
    ]
    accounted = sum(seconds for _, seconds in rows)
    rows.append(("printing, CLI, other", wall - accounted))
    return rows


# --------------------------------------------------------------------------- report


def _times(ratio: float) -> str:
    return f"{ratio:.1f}x" if ratio < 10 else f"{ratio:.0f}x"


def _mb(value) -> str:
    return "n/a" if value is None else f"{value:.0f} MB"


def _table(rows: list, header: tuple) -> str:
    widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]
    lines = ["  ".join(str(c).ljust(w) if i == 0 else str(c).rjust(w) for i, (c, w) in enumerate(zip(r, widths)))
             for r in [header] + rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join("  " + line for line in lines)


def _describe(label_set: LabelSet) -> str:
    return (f"{label_set.frames:,} frames, {label_set.gt_boxes:,} ground-truth boxes, {label_set.pred_boxes:,} "
            f"predictions, {label_set.size[0]}x{label_set.size[1]}")


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=SONGDO_FRAMES, help="frames of the Songdo-scale set")
    parser.add_argument("--boxes", type=int, nargs=2, default=(41, 60), metavar=("MIN", "MAX"),
                        help="ground-truth boxes per frame, inclusive range (default 41 60: about 50)")
    parser.add_argument("--dense-frames", type=int, default=3, help="frames of the dense set")
    parser.add_argument("--dense-boxes", type=int, default=5000, help="boxes per dense frame")
    parser.add_argument("--repeat", type=int, default=5, help="runs of each of our timings (the median is shown)")
    parser.add_argument("--baseline-repeat", type=int, default=1, help="runs of the shapely baseline")
    parser.add_argument("--baseline-frames", type=int, default=0,
                        help="time the baseline on the first N frames only and extrapolate per frame (0: all)")
    parser.add_argument("--dense-baseline", action="store_true",
                        help="also time the baseline on one dense frame (minutes at 5,000 boxes)")
    parser.add_argument("--jobs", type=int, nargs="+", default=(1, 2), help="--jobs values to time (default 1 2)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--converter-frames", type=int, default=120,
                        help="frames of the converter's throughput set, timed on 1 and 2 cores (0: skip it)")
    parser.add_argument("--keep", type=Path, help="write the data here and keep it (default: a temporary folder)")
    parser.add_argument("--no-profile", dest="profile", action="store_false", help="skip the stage breakdown")
    parser.add_argument("--detection-only", action="store_true",
                        help="only the cost of the detection metrics (issue 16): a Songdo-scale set with scores")
    parser.add_argument("--sets", nargs="+", default=list(bench_peers.SETS), choices=list(bench_peers.SETS) + ["none"],
                        help="sets timed against the peers (default all): tiny (10 boxes against python -c "
                             "'import numpy'), 10k, 50k, songdo, small (many small files), dense (one frame), "
                             "analyze (hbb2obb-analyze at 50k); none: skip the peers")
    parser.add_argument("--small-frames", type=int, default=100_000, help="frames of 3 boxes in the small-files set")
    parser.add_argument("--peer-repeat", type=int, default=1, help="runs of each peer per set (the median is shown)")
    parser.add_argument("--start-up-rounds", type=int, default=bench_peers.START_UP_ROUNDS,
                        help="interleaved rounds of the 10-box start-up row (ours, import numpy, with one BLAS "
                             "thread; default %(default)s)")
    parser.add_argument("--reference-python", help="interpreter of an existing hbb2obb 1.12.0 installation "
                                                   "(default: .bench/refvenv, created on first use)")
    parser.add_argument("--no-reference", action="store_true", help="leave the reference tool out of the peers")
    parser.add_argument("--reader-detections", type=int, default=150_000,
                        help="detections of the set the label readers are timed on (0 leaves the reader table out)")
    parser.add_argument("--reader-frames", type=int, default=512, help="frames of that set (default 512)")
    bench_detection.add_arguments(parser, prefix="detection-")
    return parser.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    scratch = Path(tempfile.mkdtemp(prefix="hbb2obb-bench-")) if args.keep is None else args.keep
    scratch.mkdir(parents=True, exist_ok=True)
    try:
        return _run(args, scratch)
    finally:
        if args.keep is None:
            shutil.rmtree(scratch, ignore_errors=True)


def compile_package() -> str:
    """Compile the package's bytecode, as ``pip install`` does for an installed package.

    An editable install leaves the sources uncompiled, and where PYTHONDONTWRITEBYTECODE is
    set (it is on our build machines) every run would compile every module again: 50-90 ms
    that a user of an installed package never pays. Both timed commands import from here.
    """
    import compileall

    # hbb2obb_launch too: every console script starts there (3 ms a run to compile it)
    ok = all([compileall.compile_dir(str(ROOT / package), quiet=1) for package in ("hbb2obb", "hbb2obb_launch")])
    return "bytecode compiled" if ok else "bytecode NOT compiled (compileall failed)"


def install_kind() -> str:
    """Which install of ours is timed: what a user's ``pip install`` gives, or ``make install``'s editable one.

    The editable install starts through setuptools' import finder (``python -c pass``: 88
    million instructions against 38 for a regular install), but ``hbb2obb-eval`` imports what
    the finder imports anyway (pathlib, re): a 10-box run counted 529.8 million instructions
    editable and 527.5 million regular (callgrind, 2026-12-02), 0.4 %, so the editable
    install stands for a user's and the benchmark says which it timed.
    """
    try:
        from importlib.metadata import distribution

        text = distribution("hbb2obb-toolkit").read_text("direct_url.json") or "{}"
        editable = bool(json.loads(text).get("dir_info", {}).get("editable"))
    except Exception:  # noqa: BLE001 - only the wording of the header depends on it
        return "install of hbb2obb-toolkit unknown"
    if editable:
        return "timing the editable install of this checkout (make install's; install_kind says how it compares)"
    return "timing a regular (non-editable) install, as pip installs it for users"


def detection_cost(args, scratch: Path, say) -> None:
    """What the detection metrics add to ``hbb2obb-eval`` on a Songdo-scale set with a confidence column.

    The same command with and without ``--no_detection``, alternated so both see the same
    stretch of the machine's load; wall and CPU (user + system) medians.
    """
    scored = generate(scratch, "songdo_scored", frames=args.frames, boxes=tuple(args.boxes), size=SONGDO_SIZE,
                      layout="roads", seed=args.seed, confidence=True)
    command = eval_command() + [scored.gt, scored.pred, "-nb", "--json"]
    with_runs, without_runs = [], []
    for _ in range(max(args.repeat, 1)):
        without_runs += timed(command + ["--no_detection"], 1).runs
        with_runs += timed(command, 1).runs
    plain, full = Timing(tuple(without_runs)), Timing(tuple(with_runs))
    keys = json.loads(full.first.stdout)
    rows = [("--no_detection", f"{plain.median:.2f} s", f"{plain.median_cpu:.2f} s", _mb(plain.peak_rss_mb)),
            ("default (detection metrics)", f"{full.median:.2f} s", f"{full.median_cpu:.2f} s", _mb(full.peak_rss_mb))]
    say(f"detection metrics (issue 16): Songdo-scale set with a confidence column, {_describe(scored)}, "
        f"median of {len(full.runs)} alternated runs each, -j 1")
    say(_table(rows, ("hbb2obb-eval", "wall", "CPU", "peak RSS")))
    wall_added, cpu_added = full.median / plain.median - 1, full.median_cpu / plain.median_cpu - 1
    say(f"  added: wall {100 * wall_added:+.0f} %, CPU {100 * cpu_added:+.0f} %"
        f" (budget +30 %); map50_95 {keys['map50_95']:.4f}, dota_map50 {keys['dota_map50']:.4f}")


def settle_files() -> None:
    """Write every generated file out to disk before anything is timed.

    The sets are written just before they are timed: 200,000 small files leave hundreds of MB
    of dirty pages, and the kernel's write-back of them would run beside whichever command
    happens to be timed first (a suspect, not proven, for one run of ours on the small files
    that took 11.2 s against a median of 5.4 s). After ``sync`` every command reads the same
    settled, cached files.
    """
    if hasattr(os, "sync"):
        os.sync()


def _peers(args, scratch: Path, songdo: LabelSet, dense_one: LabelSet, say) -> list:
    """The peers table (benchmarks/bench_peers.py): ours against the reference tool and shapely 2.

    Returns the peers' metric dicts that differ from ours unexplained (an exact tie on a rung,
    proved, is explained and said so in the table; benchmarks/bench_ties.py).
    """
    sets = {"songdo": songdo, "dense": dense_one}
    if "tiny" in args.sets:
        sets["tiny"] = generate(scratch, "tiny", frames=1, boxes=(10, 10), size=SONGDO_SIZE, layout="roads",
                                seed=args.seed + 2)
    for name, frames in (("10k", 200), ("50k", 1000), ("analyze", 1000)):
        if name in args.sets:
            sets[name] = subset(songdo, frames, scratch / "links")
    if "small" in args.sets:
        sets["small"] = generate(scratch, "small", frames=args.small_frames, boxes=(3, 3), size=SONGDO_SIZE,
                                 layout="roads", seed=args.seed + 3)
    settle_files()
    tools = argparse.Namespace(say=say, timed=timed, compare=compare_metrics, Timing=Timing, scratch=scratch,
                               ours=ours, analyze=analyze_command, compare_reports=bench_peers.compare_reports)
    rows = bench_peers.run_peers(args, sets, tools)
    say("against the peers: whole processes, wall time, peak RSS; ratio = peer / ours "
        "(10k and 50k are the first 200 and 1,000 frames of the Songdo-scale set)")
    for line in bench_peers.render(rows, _mb, _times):
        say(line)
    say()
    return [f"{row.label}, {line}" for row in rows for line in row.disagreements]


def _run(args, scratch: Path) -> int:
    say = lambda text="": print(text, flush=True)  # noqa: E731
    started = time.perf_counter()
    compiled = f"{compile_package()}, {install_kind()}"
    if args.detection_only:
        say(f"hbb2obb benchmark, Python {sys.version.split()[0]}, {os.cpu_count()} cores, {compiled}")
        detection_cost(args, scratch, say)
        say(f"benchmark finished in {time.perf_counter() - started:.0f} s")
        return 0
    songdo = generate(scratch, "songdo", frames=args.frames, boxes=tuple(args.boxes), size=SONGDO_SIZE,
                      layout="roads", seed=args.seed)
    dense = generate(scratch, "dense", frames=args.dense_frames, boxes=(args.dense_boxes, args.dense_boxes),
                     size=(8192, None), layout="parking", seed=args.seed + 1)
    dense_one = subset(dense, 1, scratch / "links")
    say(f"hbb2obb benchmark, Python {sys.version.split()[0]}, {os.cpu_count()} cores, "
        f"data generated in {time.perf_counter() - started:.1f} s (seed {args.seed}), {compiled}")
    settle_files()
    say(f"Songdo-scale set: {_describe(songdo)}")
    say(f"dense set:        {_describe(dense)}")
    say()
    peer_mismatches = _peers(args, scratch, songdo, dense_one, say) if "none" not in args.sets else []

    # (a) against (b) on the Songdo-scale set.
    a = timed(ours(songdo), args.repeat)
    partial = 0 < args.baseline_frames < songdo.frames
    base_set = subset(songdo, args.baseline_frames, scratch / "links") if partial else songdo
    b = timed(baseline(base_set), args.baseline_repeat)
    # The VM's speed drifts by tens of percent over minutes: time (a) again after (b), so its
    # median covers the same stretch of time as the reference's runs.
    a = Timing(a.runs + timed(ours(songdo), args.repeat).runs)
    a_same = a if not partial else timed(ours(base_set), 1)
    compared, worst, mismatches = agreement(a_same.first, b.first)
    b_seconds = b.median * songdo.frames / base_set.frames if partial else b.median
    ratio = b_seconds / a.median
    rows = [
        ("(a) hbb2obb-eval -j 1", f"{a.median:.2f} s", _mb(a.peak_rss_mb),
         f"median of {len(a.runs)}, half before (b), half after; {min(r.seconds for r in a.runs):.2f}"
         f"-{max(r.seconds for r in a.runs):.2f} s"),
        ("(b) shapely reference", f"{b_seconds:.1f} s", _mb(b.peak_rss_mb),
         (f"{b.median:.1f} s on {base_set.frames:,} frames, x{songdo.frames / base_set.frames:.2f} (linear per frame)"
          if partial else f"median of {len(b.runs)}")),
    ]
    say("Songdo-scale set: whole processes, wall time")
    say(_table(rows, ("", "time", "peak RSS", "runs")))
    say(f"  ratio b/a: {_times(ratio)}" + ("  (b extrapolated linearly per frame from the subset)" if partial else ""))
    say(f"  metric dicts agree: {'yes' if not mismatches else 'NO'} ({compared:,} values compared"
        f"{' on the subset' if partial else ''}, largest difference {worst:.1e}, tolerance {TOLERANCE:g})")
    for line in mismatches[:10]:
        say(f"    mismatch: {line}")
    say()

    # --jobs: scaling on the clean set, identical output and warnings on a messy one.
    messy = messy_copy(songdo, min(songdo.frames, 640), scratch)
    rows, reference_out = [], None
    for jobs in args.jobs:
        t = a if jobs == 1 else timed(ours(songdo, jobs), args.repeat)
        messy_run = run_process(ours(messy, jobs))
        same = reference_out is None or (t.first.stdout, messy_run.stdout, messy_run.stderr) == reference_out
        reference_out = reference_out or (t.first.stdout, messy_run.stdout, messy_run.stderr)
        rows.append((f"-j {jobs}", f"{t.median:.2f} s", f"x{a.median / t.median:.2f}", _mb(t.peak_rss_mb),
                     "yes" if same else "NO"))
    warnings_count = reference_out[2].count("warning:") if reference_out else 0
    say("--jobs scaling (Songdo-scale set; output and warnings compared on a copy of "
        f"{messy.frames} frames with broken lines, bow-ties, a missing and an orphan file: {warnings_count} warnings)")
    say(_table(rows, ("jobs", "time", "speed-up", "peak RSS*", "same output and warnings")))
    say("  * peak RSS of the largest single process (each worker holds its own chunk)")
    say(f"  this machine now: two CPU-bound processes run x{parallel_capacity():.2f} as fast together as one after "
        "the other (2.00: two free cores)")
    say()

    # Memory against frame count.
    rows = []
    for fraction in (16, 4):
        part = subset(songdo, max(songdo.frames // fraction, 1), scratch / "links")
        run = run_process(ours(part))
        rows.append(
            (
                f"{part.frames:,} frame{'s' if part.frames != 1 else ''}",
                f"{part.gt_boxes:,}",
                _mb(run.peak_rss_mb),
                f"{run.seconds:.2f} s",
            )
        )
    rows.append((f"{songdo.frames:,} frames", f"{songdo.gt_boxes:,}", _mb(a.peak_rss_mb), f"{a.median:.2f} s"))
    say("peak RSS against frame count (-j 1)")
    say(_table(rows, ("set", "GT boxes", "peak RSS", "time")))
    say()

    # Dense frames.
    one = timed(ours(dense_one), args.repeat)
    whole = timed(ours(dense), args.repeat)
    rows = [(f"1 frame of {args.dense_boxes:,} boxes", f"{one.median:.2f} s", _mb(one.peak_rss_mb), "")]
    rows.append((f"{dense.frames} frames of {args.dense_boxes:,}", f"{whole.median:.2f} s", _mb(whole.peak_rss_mb), ""))
    if args.dense_baseline:
        dense_b = timed(baseline(dense_one), 1)
        n, w, bad = agreement(one.first, dense_b.first)
        rows.append(
            (
                "shapely reference, 1 frame",
                f"{dense_b.median:.1f} s",
                _mb(dense_b.peak_rss_mb),
                f"ratio {_times(dense_b.median / one.median)}, agree: {'yes' if not bad else 'NO'} ({n:,} values)",
            )
        )
        mismatches += bad
    say("dense set: whole processes on one core (-j 1)")
    say(_table(rows, ("", "time", "peak RSS", "")))
    say()

    detection_cost(args, scratch, say)
    say()

    if args.converter_frames > 0:  # benchmarks/bench_converter.py: hbb2obb -j 1 against -j 2
        if not bench_converter.converter_throughput(scratch, args.converter_frames, args.repeat, args.seed, say):
            mismatches.append("hbb2obb -j 1 and -j 2 wrote different files")
        say()

    if args.reader_detections > 0:  # benchmarks/bench_readers.py: every label reader on the same boxes
        bench_readers.reader_table(scratch / "readers", args.reader_frames, args.reader_detections, 7, say)
        say()

    if "none" not in args.detection_sets:  # benchmarks/bench_detection.py: against the DOTA devkit and others
        peer_mismatches += bench_detection.run_sets(args.detection_sets, args.detection_rounds, args.peer_timeout,
                                                    args.peer_python, say, scratch / "detection", args.seed,
                                                    peer_names=args.detection_peers)
        say()

    if args.profile:
        wall, spent = profile(songdo, scratch)
        rows = [
            (label, f"{seconds:.3f} s", f"{100 * seconds / wall:.0f} %") for label, seconds in profile_rows(wall, spent)
        ]
        say(f"where our time goes (Songdo-scale set, one instrumented run of {wall:.2f} s, -j 1)")
        say(_table(rows, ("stage", "time", "share")))
        say()
    say(f"benchmark finished in {time.perf_counter() - started:.0f} s")
    for line in peer_mismatches:
        say(f"peer disagrees: {line}")
    return 1 if mismatches or peer_mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
