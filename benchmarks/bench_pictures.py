#!/usr/bin/env python3
"""Benchmark: how long the pictures take on the real two-frame sample (issue 9).

Times, in one process after the imports, the median of ``--repeat`` runs of:

* the overlays of every frame (``write_overlays``, long side ``--size``, JPEG);
* one contact sheet of the ``--tiles`` pairs of lowest IoU (``write_contact_sheet``, PNG);

then the whole ``hbb2obb-analyze GT PRED -i IMAGES --worst N -o OUT --overlay OUT/overlays``
command as a process (interpreter start, scoring, analysis figure and both sheets included),
against the same command without the picture flags.

Usage::

    python benchmarks/bench_pictures.py                 # the sample in ../shared/data/songdo-sample
    python benchmarks/bench_pictures.py --data DIR --pred labels_obb_pred --repeat 5
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT.parent / "shared" / "data" / "songdo-sample"


def median_seconds(function, repeat: int, clock=time.perf_counter) -> float:
    """Median time of ``repeat`` calls by ``clock``: wall time by default; ``time.process_time`` gives
    this process's CPU time, less sensitive to a busy machine."""
    times = []
    for _ in range(repeat):
        start = clock()
        function()
        times.append(clock() - start)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data", type=Path, default=SAMPLE, help="folder with labels_obb_gt/, images/ (default: sample)"
    )
    parser.add_argument("--pred", default="labels_obb_sam_b", help="prediction sub-folder (default labels_obb_sam_b)")
    parser.add_argument("--tiles", type=int, default=24, help="tiles on the sheet (default 24)")
    parser.add_argument("--size", type=int, default=1600, help="overlay long side (default 1600)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per timing, median reported (default 3)")
    args = parser.parse_args()
    gt, pred, images = args.data / "labels_obb_gt", args.data / args.pred, args.data / "images"
    if not gt.is_dir() or not images.is_dir():
        print(f"no data in {args.data} (needs labels_obb_gt/ and images/)", file=sys.stderr)
        return 2

    from hbb2obb.analysis.cuts import worst_pairs
    from hbb2obb.io import ImageSizes
    from hbb2obb.plotting.contact_sheet import write_contact_sheet
    from hbb2obb.plotting.overlay import write_overlays
    from hbb2obb.scoring.evaluate import evaluate_frames

    table = evaluate_frames(gt, pred, sizes=ImageSizes(images)).table
    rows = worst_pairs(table, args.tiles)
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch)
        def overlays():
            write_overlays(table, images, out / "overlays", args.size)

        def sheet():
            write_contact_sheet(out / "worst.png", table, rows, images)

        print(f"{len(table.frame_names)} frames, {len(table.gt)} ground-truth boxes, {table.n_matches} pairs")
        total_wall = total_cpu = 0.0
        for what, function in ((f"overlays ({len(table.frame_names)} frames, long side {args.size})", overlays),
                               (f"contact sheet ({len(rows)} tiles)", sheet)):
            wall, cpu = median_seconds(function, args.repeat), median_seconds(function, args.repeat, time.process_time)
            total_wall, total_cpu = total_wall + wall, total_cpu + cpu
            print(f"{what:<40} {wall:5.2f} s wall, {cpu:5.2f} s CPU")
        print(f"{'both':<40} {total_wall:5.2f} s wall, {total_cpu:5.2f} s CPU")

        analyze = str(Path(sys.executable).with_name("hbb2obb-analyze"))
        base = [analyze, str(gt), str(pred), "-i", str(images), "-nb"]
        pictures = ["--worst", str(args.tiles), "-o", str(out / "cli"), "--overlay", str(out / "cli" / "overlays")]

        def run(command):
            subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

        plain = median_seconds(lambda: run(base), args.repeat)
        full = median_seconds(lambda: run(base + pictures), args.repeat)
        print(f"{'hbb2obb-analyze -i IMAGES (no pictures)':<40} {plain:5.2f} s wall")
        print(f"{'  ... --worst N -o OUT --overlay DIR':<40} {full:5.2f} s wall "
              f"(+{full - plain:.2f} s: analysis.png, two sheets, overlays)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
