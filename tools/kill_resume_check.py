"""Kill a sweep with SIGKILL at random moments, resume it each time, and check nothing was lost.

    python tools/kill_resume_check.py [--kills 10] [--seed 1] [--jobs 2] [--converter image]

On a generated data set (:mod:`hbb2obb.synthetic`), in a folder of its own that it removes at the
end (``--keep`` keeps it):

1. an uninterrupted ``hbb2obb-optimize`` sweep gives the expected ``results.yaml``;
2. the same sweep into another folder is started, killed (``kill -9`` of its whole process
   group, workers and converter processes included) at a random moment, then started again
   with ``--resume`` and killed again, ``--kills`` times; a last ``--resume`` runs to the end;
3. meanwhile a watcher parses ``results.yaml`` and ``run_config.yaml`` as often as it can.

It checks that the final numbers equal the uninterrupted run's (every key of every record but
``execution_time``), that every read of the files parsed, that no scratch folder is left (in
the run folder, or ``hbb2obb-sweep-*`` in the temp folder), and no lock file. The sweeps run
with ``TMPDIR`` set to a folder of the check's own, so a temp folder left there is theirs and
not another program's. It prints
what it saw and exits 1 when a check fails. Needs the toolkit installed (its console scripts
beside this Python).
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import yaml

SCALE_FACTORS = ("0", "0.01", "0.02", "0.03", "0.04", "0.05", "0.06", "0.07", "0.08", "0.09")


class Watcher(threading.Thread):
    """Parse the run folder's YAML files over and over; count the reads and the failures."""

    def __init__(self, folder: Path):
        super().__init__(daemon=True)
        self.folder = folder
        self.reads = 0
        self.failures: list[str] = []
        self.most_points = 0
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            for name in ("results.yaml", "run_config.yaml"):
                path = self.folder / name
                try:
                    text = path.read_text(encoding="utf-8")
                except FileNotFoundError:
                    continue
                self.reads += 1
                try:
                    document = yaml.safe_load(text)
                    if not isinstance(document, dict):
                        raise ValueError(f"not a mapping: {text[:80]!r}")
                    if name == "results.yaml":
                        self.most_points = max(self.most_points, len(document["all_results"]))
                except Exception as exc:  # any failure to parse is what this check is for
                    self.failures.append(f"{name}: {type(exc).__name__}: {exc}")
            time.sleep(0.002)


def sweep_command(data: Path, out: Path, name: str, converter: str, jobs: int) -> list[str]:
    exe = Path(sys.executable).with_name("hbb2obb-optimize")
    return [str(exe), str(data / "images"), str(data / "labels_obb_gt"), "-o", str(out), "-n", name,
            "--converter", converter, "-sf", *SCALE_FACTORS, "-j", str(jobs), "--no_plot", "-nb"]


def numbers(path: Path) -> list[dict]:
    document = yaml.safe_load(path.read_text(encoding="utf-8"))
    return [{k: v for k, v in r.items() if k != "execution_time"} for r in document["all_results"]]


def sweep_scratch(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.glob("hbb2obb-sweep-*"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kills", type=int, default=10)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--converter", default="image")
    parser.add_argument("--frames", type=int, default=2)
    parser.add_argument("--keep", action="store_true", help="Keep the work folder (its path is printed).")
    args = parser.parse_args()

    from hbb2obb.synthetic.dataset import generate_dataset

    rng = random.Random(args.seed)
    work = Path(tempfile.mkdtemp(prefix="kill-resume-check-"))
    private_temp = work / "tmp"
    private_temp.mkdir()
    env = {**os.environ, "TMPDIR": str(private_temp)}
    failures: list[str] = []
    try:
        data = generate_dataset(work / "data", n_frames=args.frames, seed=args.seed, width=640, height=480).root
        start = time.monotonic()
        subprocess.run(sweep_command(data, work / "out", "uninterrupted", args.converter, args.jobs), check=True,
                       stdout=subprocess.DEVNULL, env=env)
        full_seconds = time.monotonic() - start
        expected = numbers(work / "out" / "uninterrupted" / "results.yaml")
        print(f"uninterrupted sweep: {len(expected)} points in {full_seconds:.1f} s")

        folder = work / "out" / "killed"
        command = sweep_command(data, work / "out", "killed", args.converter, args.jobs)
        watcher = Watcher(folder)
        watcher.start()
        for kill in range(1, args.kills + 1):
            # Most of the time the sweep is partly done when killed, some kills land in its start-up.
            delay = rng.uniform(0.2, full_seconds / 2)
            process = subprocess.Popen(command + (["--resume"] if kill > 1 else []), stdout=subprocess.DEVNULL,
                                       stderr=subprocess.PIPE, text=True, start_new_session=True, env=env)
            try:
                process.wait(timeout=delay)
                outcome = f"finished first (exit {process.returncode})"
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
                outcome = "killed"
            stderr = process.stderr.read()
            process.stderr.close()
            if process.returncode not in (0, -signal.SIGKILL):
                failures.append(f"run {kill} exited {process.returncode}: {stderr.strip()}")
            on_disk = len(numbers(folder / "results.yaml")) if (folder / "results.yaml").is_file() else 0
            print(f"run {kill:2d}: {outcome} after {delay:.2f} s; {on_disk} point(s) on disk")
        final = subprocess.run(command + ["--resume"], capture_output=True, text=True, env=env)
        time.sleep(0.05)
        watcher.stop.set()
        watcher.join()
        print(f"final --resume: exit {final.returncode}; "
              + next((line for line in final.stdout.splitlines() if "killed:" in line), ""))
        if final.returncode != 0:
            failures.append(f"final --resume exited {final.returncode}: {final.stderr.strip()}")
        got = numbers(folder / "results.yaml")
        measured_with = {repr(r.pop("measured_with", None)) for r in got + expected}
        if got != expected:
            failures.append("final results.yaml numbers differ from the uninterrupted run's")
        if len(measured_with) != 1:
            failures.append("records were measured with different settings")
        print(f"final numbers equal the uninterrupted run's: {got == expected} ({len(got)} points)")
        print(
            f"watcher: {watcher.reads} reads of results.yaml/run_config.yaml, {len(watcher.failures)} failed to parse"
        )
        failures += watcher.failures[:5]
        leftovers = [str(p) for p in folder.rglob("*") if p.name in (".scratch", ".sweep.lock")
                     or p.name.startswith(("hbb2obb-sweep-", ".results.yaml."))]
        new_temp = sweep_scratch(private_temp)
        print(f"left in the run folder: {leftovers or 'nothing'}; hbb2obb-sweep-* in the sweeps' "
              f"TMPDIR: {new_temp or 'none'}")
        if leftovers or new_temp:
            failures.append("scratch or lock files were left behind")
    finally:
        if args.keep:
            print(f"work folder kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    for failure in failures:
        print(f"FAIL: {failure}", file=sys.stderr)
    print("OK" if not failures else f"{len(failures)} check(s) failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
