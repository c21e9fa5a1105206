#!/usr/bin/env python3
"""Benchmark: the built-in converter's throughput on one and two cores (``hbb2obb -j 1`` against ``-j 2``).

Generates a synthetic set (``python -m hbb2obb.synthetic``: 1920x1080 drone-like frames of 20-40
vehicles), then times the whole command, ``hbb2obb IMAGES --hbb_dir ... --obb_dir ... -cd ... -nb
-j N``, in interleaved rounds (1, 2, 1, 2, ...) so both see the same stretch of a shared
machine's load. Reports per ``-j``: the median wall time, the median CPU time (user + system of
the command and its worker processes), boxes per second and the speed-up over ``-j 1``; whether
every run wrote the same bytes (labels and confidence side-cars); the load average before and
after; and how much faster two CPU-bound processes run together than one after the other at
that moment (2.00 when two cores are free), which bounds the speed-up ``-j 2`` can show.

Usage::

    python benchmarks/bench_converter.py                    # 120 frames, 3 rounds
    python benchmarks/bench_converter.py --frames 24 --repeat 1
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def console(name: str) -> str:
    """A console script of this environment."""
    beside = Path(sys.executable).with_name(name)
    found = str(beside) if beside.exists() else shutil.which(name)
    if not found:
        sys.exit(f"bench: {name} not found; install the package (make install)")
    return found


def generate(root: Path, frames: int, seed: int) -> Path:
    """A synthetic set with images under ``root``; its folder."""
    data = root / f"converter_{frames}_{seed}"
    if not (data / "images").is_dir():
        subprocess.run([sys.executable, "-m", "hbb2obb.synthetic", str(data), "--frames", str(frames), "--seed",
                        str(seed)], check=True, stdout=subprocess.DEVNULL)
    return data


def digest(folders) -> str:
    """One SHA-256 over the names and bytes of the (non-hidden) files in ``folders``."""
    total = hashlib.sha256()
    for folder in folders:
        for path in sorted(Path(folder).glob("*.txt")):
            total.update(path.name.encode() + b"\0" + path.read_bytes())
    return total.hexdigest()


def run_once(data: Path, out: Path, jobs: int) -> tuple[float, float, str, int]:
    """One conversion into a fresh ``out``: wall seconds, CPU seconds (with its workers), output digest, boxes."""
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    command = [console("hbb2obb"), str(data / "images"), "--hbb_dir", str(data / "labels_hbb"), "--obb_dir",
               str(out / "obb"), "-cd", str(out / "conf"), "-nb", "-j", str(jobs)]
    before = os.times()
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = os.times()
    if done.returncode != 0:
        sys.exit(f"bench: {' '.join(command)} failed with status {done.returncode}:\n{done.stderr[-2000:]}")
    # The children's times include the workers the command waited for (its process pool).
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    boxes = int(done.stdout.split("Converted ", 1)[1].split(" ", 1)[0])
    return wall, cpu, digest([out / "obb", out / "conf"]), boxes


def capacity() -> float:
    """How much faster two CPU-bound processes finish together than one after the other (2 = two free cores)."""
    spin = [sys.executable, "-S", "-c", "x = 0\nfor i in range(6_000_000): x += i"]
    start = time.perf_counter()
    subprocess.run(spin, check=True)
    alone = time.perf_counter() - start
    start = time.perf_counter()
    both = [subprocess.Popen(spin) for _ in range(2)]
    for process in both:
        process.wait()
    return 2 * alone / (time.perf_counter() - start)


def converter_throughput(scratch: Path, frames: int, repeat: int, seed: int, say, jobs=(1, 2)) -> bool:
    """Time the converter on ``jobs`` processes in interleaved rounds and print the table; whether
    every run wrote the same files."""
    data = generate(scratch, frames, seed)
    load_before = os.getloadavg() if hasattr(os, "getloadavg") else None
    spare = capacity()
    runs = {j: [] for j in jobs}
    for _ in range(max(repeat, 1)):
        for j in jobs:
            runs[j].append(run_once(data, scratch / f"converted_j{j}", j))
    load_after = os.getloadavg() if hasattr(os, "getloadavg") else None
    spare = (spare + capacity()) / 2
    digests = {r[2] for rs in runs.values() for r in rs}
    boxes = runs[jobs[0]][0][3]
    base = statistics.median(r[0] for r in runs[jobs[0]])
    rows = []
    for j in jobs:
        wall = statistics.median(r[0] for r in runs[j])
        cpu = statistics.median(r[1] for r in runs[j])
        rows.append((f"-j {j}", f"{wall:.2f} s", f"{cpu:.2f} s", f"{boxes / wall:,.0f}", f"{100 * wall / boxes:.3f} s",
                     f"x{base / wall:.2f}"))
    say(f"converter throughput (issue 38): hbb2obb on {frames} synthetic 1920x1080 frames, {boxes:,} boxes, "
        f"whole processes, median of {len(runs[jobs[0]])} interleaved rounds")
    header = ("", "wall", "CPU", "boxes/s", "s per 100 boxes", "speed-up")
    widths = [max(len(str(row[i])) for row in rows + [header]) for i in range(len(header))]
    for row in [header] + rows:
        say("  " + "  ".join(str(cell).ljust(width) for cell, width in zip(row, widths)).rstrip())
    say(f"  same files in every run: {'yes' if len(digests) == 1 else 'NO'}")
    if load_before is not None:
        say(f"  load average (1 min) {load_before[0]:.2f} before, {load_after[0]:.2f} after; two CPU-bound "
            f"processes ran x{spare:.2f} as fast together as one after the other (2.00: two free cores)")
    return len(digests) == 1


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=120, help="frames of the generated set (default 120)")
    parser.add_argument("--repeat", type=int, default=3, help="interleaved rounds (default 3)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, nargs="+", default=(1, 2), help="-j values to time (default 1 2)")
    parser.add_argument("--keep", type=Path, help="write the data here and keep it (default: a temporary folder)")
    args = parser.parse_args(argv)
    scratch = args.keep or Path(tempfile.mkdtemp(prefix="hbb2obb-bench-converter-"))
    scratch.mkdir(parents=True, exist_ok=True)
    try:
        say = lambda text="": print(text, flush=True)  # noqa: E731
        same = converter_throughput(scratch, args.frames, args.repeat, args.seed, say, tuple(args.jobs))
    finally:
        if args.keep is None:
            shutil.rmtree(scratch, ignore_errors=True)
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
