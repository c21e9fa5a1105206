"""The peers section of ``benchmarks/bench.py``: ``hbb2obb-eval`` against what a user would otherwise run.

Side by side, whole processes, interleaved, on the same generated files:

* the reference tool itself, ``hbb2obb`` 1.12.0, installed into a virtual environment of its
  own (``.bench/refvenv``, created on first use: it shares our import name) and run through
  ``benchmarks/reference_driver.py`` (its console functions, with an empty ``torch`` module);
* ``benchmarks/shapely_vectorized.py``: shapely 2 as a user would write it in a few lines, an
  ``STRtree`` query per frame and vectorized ``intersection``/``area``;
* for the start-up floor, ``python -c 'import numpy'`` against a 10-box ``hbb2obb-eval``.

Each ratio is the peer's median wall time over ours; every metric dict is compared with ours
value by value.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

import bench_ties  # beside this script

ROOT = Path(__file__).resolve().parents[1]
REFERENCE_VERSION = "1.12.0"
REFERENCE_VENV = ROOT / ".bench" / "refvenv"  # gitignored
REFERENCE_DEPENDENCIES = ("shapely", "pandas", "tqdm", "pyyaml", "matplotlib", "numpy")
DRIVER = ROOT / "benchmarks" / "reference_driver.py"
VECTORIZED = ROOT / "benchmarks" / "shapely_vectorized.py"
ONE_BLAS_THREAD = "import os; os.environ['OPENBLAS_NUM_THREADS'] = '1'; "  # what our commands set
#: Interleaved rounds of the start-up row (bench.py --start-up-rounds): a 0.2 s process on a
#: shared VM varies by half from run to run (three rounds gave medians of 1.08x-1.58x of
#: ``import numpy`` on one day), and fifteen cost a few seconds.
START_UP_ROUNDS = 15
SETS = ("tiny", "10k", "50k", "songdo", "small", "dense", "analyze")


def reference_python(given: Optional[str], say: Callable) -> Optional[str]:
    """The interpreter of the reference's environment: ``given``, or ``.bench/refvenv`` (created if needed).

    Returns ``None`` (and says why) when it cannot be set up, so the rest of the benchmark runs.
    """
    if given:
        return given
    python = REFERENCE_VENV / "bin" / "python"
    stamp = REFERENCE_VENV / f".installed-{REFERENCE_VERSION}"
    if stamp.exists():
        return str(python)
    say(f"setting up the reference tool in {REFERENCE_VENV.relative_to(ROOT)} (once): "
        f"pip install --no-deps hbb2obb=={REFERENCE_VERSION} plus {' '.join(REFERENCE_DEPENDENCIES)}")
    steps = [[sys.executable, "-m", "venv", str(REFERENCE_VENV)],
             [str(python), "-m", "pip", "install", "--quiet", "--no-deps", f"hbb2obb=={REFERENCE_VERSION}"],
             [str(python), "-m", "pip", "install", "--quiet", *REFERENCE_DEPENDENCIES]]
    for step in steps:
        done = subprocess.run(step, capture_output=True, text=True)
        if done.returncode != 0:
            say(f"  could not set up the reference ({' '.join(step[:4])} ...): {done.stderr.strip()[-500:]}")
            say("  the reference columns are left out; --reference-python PATH uses an existing installation")
            return None
    stamp.touch()
    return str(python)


@dataclass(frozen=True)
class PeerRow:
    label: str
    ours: object  # Timing
    peers: dict  # name -> (Timing, agreement text)
    disagreements: tuple = ()  # "peer: text" of every metric dict that differs unexplained


def _agreement(compare, ours_json: dict, theirs: dict, pairs: Callable) -> bench_ties.Verdict:
    """Value by value; a difference only proven exact ties explain is said so and agrees (benchmarks/bench_ties.py)."""
    return bench_ties.peer_verdict(compare, ours_json, theirs, pairs)


def _pairs_once(tools, label_set, path: Path) -> Callable:
    """A callable running ours once with ``--pairs`` (only if a difference needs explaining)."""
    made = []

    def pairs():
        if not made:
            tools.timed(tools.ours(label_set) + ["--pairs", path], 1)
            made.append((bench_ties.read_pairs(path), label_set.gt, label_set.pred))
        return made[0]
    return pairs


def reference_view(ours: dict) -> dict:
    """Our metric dict with the reference's per-class names added (``iou_values``, ``iou_sum``).

    The reference keeps each class's IoU list as ``iou_values`` and its plain sum, added in
    table order, as ``iou_sum``; ours has the list as ``ious``, in the same order.
    """
    view = dict(ours)
    view["class_stats"] = {
        key: dict(entry, iou_values=entry["ious"], iou_sum=sum(entry["ious"], 0.0))
        for key, entry in ours.get("class_stats", {}).items()
    }
    return view


def run_peers(args, sets: dict, tools) -> list:
    """Time every selected set; ``tools`` gives ``timed``, ``run_process``, ``ours``, ``compare``, ``say``."""
    say, timed, compare = tools.say, tools.timed, tools.compare
    python = reference_python(args.reference_python, say) if not args.no_reference else None
    rows, scratch = [], tools.scratch
    for name in [s for s in SETS if s in args.sets]:
        label_set = sets.get(name)
        if label_set is None:
            continue
        if name == "tiny":  # interleaved, so a drift of the machine's speed hits all three alike
            floors = {"python -c 'import numpy'": [sys.executable, "-c", "import numpy"],
                      "the same, 1 BLAS thread": [sys.executable, "-c", ONE_BLAS_THREAD + "import numpy"]}
            runs = {key: [] for key in ["ours", *floors]}
            for _ in range(max(args.start_up_rounds, 1)):
                runs["ours"] += timed(tools.ours(label_set), 1).runs
                for key, command in floors.items():
                    runs[key] += timed(command, 1).runs
            rows.append(PeerRow(f"{label_set.gt_boxes} boxes (start-up)", tools.Timing(tuple(runs["ours"])),
                                {key: (tools.Timing(tuple(runs[key])), "") for key in floors}))
            continue
        analyze = name == "analyze"
        ours_command = tools.analyze(label_set) if analyze else tools.ours(label_set)
        half = max(args.repeat // 2, 1)
        ours_runs = list(timed(ours_command, half).runs)
        peers, disagreements = {}, []
        pairs = _pairs_once(tools, label_set, scratch / f"pairs_{name}.csv")
        if python is not None:
            out = scratch / f"reference_{name}.json"
            command = [python, DRIVER, "analyze" if analyze else "eval", label_set.gt, label_set.pred, "-nb"]
            ref = timed(command + ([] if analyze else ["--json-out", out]), args.peer_repeat)
            if analyze:
                agree = tools.compare_reports(ref.first.stdout, timed(ours_command, 1).first.stdout)
            else:
                verdict = _agreement(compare, reference_view(json.loads(ours_runs[0].stdout)),
                                     json.loads(out.read_text()), pairs)
                agree = verdict.text
                disagreements += [] if verdict.agree else [f"reference {REFERENCE_VERSION}: {agree}"]
            peers[f"reference {REFERENCE_VERSION}"] = (ref, agree)
        if not analyze:
            vec = timed([sys.executable, VECTORIZED, label_set.gt, label_set.pred, "--json"], args.peer_repeat)
            verdict = _agreement(compare, json.loads(ours_runs[0].stdout), json.loads(vec.first.stdout), pairs)
            disagreements += [] if verdict.agree else [f"shapely 2 vectorized: {verdict.text}"]
            peers["shapely 2 vectorized"] = (vec, verdict.text)
        ours_runs += timed(ours_command, max(args.repeat - half, 1)).runs
        rows.append(PeerRow(_set_label(name, label_set), tools.Timing(tuple(ours_runs)), peers, tuple(disagreements)))
    return rows


def _set_label(name: str, label_set) -> str:
    what = {"analyze": "hbb2obb-analyze, ", "dense": "one frame, ", "small": "small files, "}.get(name, "")
    return f"{what}{label_set.frames:,} frames, {label_set.gt_boxes:,} boxes"


def _cpu(timing) -> str:
    """The median CPU time (user + system, the process and its children) of a timing, or "?"."""
    cpu = timing.median_cpu
    return f"{cpu:>7.3f} s" if cpu is not None else "      ? s"


def render(rows: list, mb: Callable, times: Callable) -> list:
    """Table lines: per set, ours and each peer with its ratio, peak memory and agreement.

    Wall time makes the ratio; CPU time is shown beside it because the read-ahead helper process
    lets one ``-j 1`` run of ours use some of the second core (the reading of the next files).
    """
    lines = ["    (wall time, CPU time = user + system, peak RSS)"]
    for row in rows:
        ours = row.ours
        lines.append(f"  {row.label}")
        lines.append(f"    {'hbb2obb (ours)':<28} {ours.median:>8.3f} s {_cpu(ours)}  {mb(ours.peak_rss_mb):>7}  "
                     f"median of {len(ours.runs)} ({min(r.seconds for r in ours.runs):.3f}-"
                     f"{max(r.seconds for r in ours.runs):.3f} s)")
        for peer, (timing, agree) in row.peers.items():
            ratio = timing.median / ours.median
            spread = "" if len(timing.runs) == 1 else f", median of {len(timing.runs)}"
            shown = f"ours take {ours.median / timing.median:.2f}x this" if agree == "" else f"ratio {times(ratio)}"
            lines.append(f"    {peer:<28} {timing.median:>8.3f} s {_cpu(timing)}  {mb(timing.peak_rss_mb):>7}  "
                         f"{shown}{spread}{'; agree: ' + agree if agree else ''}")
    return lines


def summary_ratios(rows: list) -> dict:
    """``{set label: {peer: ratio}}`` for a closing line or the table of docs/performance.md."""
    return {row.label: {peer: timing.median / row.ours.median for peer, (timing, _) in row.peers.items()}
            for row in rows}


def compare_reports(reference_text: str, ours_text: str) -> str:
    """The reference's printed report against ours, number by number, by ``../shared/tools/check_reference.py``.

    That tool is the project's check against the reference's output; where it is absent the
    reports are not compared (and the row says so).
    """
    tool = ROOT.parent / "shared" / "tools" / "check_reference.py"
    if not tool.exists():
        return "not compared (../shared/tools/check_reference.py absent)"
    import importlib.util

    spec = importlib.util.spec_from_file_location("check_reference", tool)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    problems = module.compare(ours_text, reference_text)
    if not problems:
        return "yes (every number the reference printed, check_reference rules)"
    sections = sorted({p.split("[", 1)[1].split("]", 1)[0] for p in problems if "[" in p})
    return (f"{len(problems)} reference line(s) not matched, in section(s): {'; '.join(sections)} "
            "(every other number agrees)")
