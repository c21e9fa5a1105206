"""``hbb2obb-optimize``: sweeps, benchmarks, failures, dry runs, resume after a kill, refresh."""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import yaml
from click.testing import CliRunner
from PIL import Image

from hbb2obb.cli.optimize import main
from hbb2obb.synthetic.dataset import generate_dataset

from oracles import shapely_reference

ROOT = Path(__file__).resolve().parents[2]
FAKE = Path(__file__).resolve().parents[1] / "fake_obb_converter.py"
TOOL = f"{shlex.quote(sys.executable)} {shlex.quote(str(FAKE))} {{hbb_dir}} {{out_dir}} --sf {{scale_factor}}"


def run(*args):
    """The CLI on these arguments; sweeps use the image-free ``identity`` converter unless told otherwise."""
    args = [str(a) for a in args]
    if not {"--converter", "--command", "-c", "--config", "--refresh", "--version"} & set(args):
        args += ["--converter", "identity"]
    return CliRunner().invoke(main, args, catch_exceptions=False)


@pytest.fixture
def data(tmp_path):
    info = generate_dataset(tmp_path / "data", n_frames=3, boxes_per_frame=(6, 9), images=False, seed=3)
    return info.root


def results(folder: Path) -> dict:
    return yaml.safe_load((folder / "results.yaml").read_text())


def without_time(document: dict) -> list:
    return [{k: v for k, v in r.items() if k != "execution_time"} for r in document["all_results"]]


def scaled_prompts(hbb_dir: Path, out_dir: Path, factor: float, sizes: dict) -> None:
    """The identity conversion written out independently: each side moved out by factor x its length."""
    out_dir.mkdir()
    for path in hbb_dir.glob("*.txt"):
        width, height = sizes[path.stem]
        lines = []
        for line in path.read_text().splitlines():
            c, xc, yc, w, h = line.split()[:5]
            xc, yc, w, h = map(float, (xc, yc, w, h))
            x1, x2 = max(xc - w / 2 - w * factor, 0), min(xc + w / 2 + w * factor, width)
            y1, y2 = max(yc - h / 2 - h * factor, 0), min(yc + h / 2 + h * factor, height)
            lines.append(f"{c} {x1!r} {y1!r} {x2!r} {y1!r} {x2!r} {y2!r} {x1!r} {y2!r}")
        (out_dir / path.name).write_text("\n".join(lines) + "\n")


def test_identity_sweep_on_the_sample_agrees_with_shapely(sample_dir, tmp_path):
    factors = (-0.01, 0.0, 0.05)
    result = run(sample_dir / "images", sample_dir / "labels_obb_gt", "-o", tmp_path, "-sf", *factors, "--no_plot")
    assert result.exit_code == 0, result.output
    document = results(tmp_path / "identity")
    assert [r["scale_factor"] for r in document["all_results"]] == list(factors)
    sizes = {p.stem: Image.open(p).size for p in (sample_dir / "images").glob("*.jpg")}
    expected = []
    for factor in factors:
        pred = tmp_path / f"pred_{factor}"
        scaled_prompts(sample_dir / "labels_hbb", pred, factor, sizes)
        expected.append(shapely_reference.reference_evaluate(sample_dir / "labels_obb_gt", pred))
    for record, theirs in zip(document["all_results"], expected):
        assert record["total_matches"] == theirs["total_matches"] == 122
        assert record["avg_iou"] == pytest.approx(theirs["avg_iou"], abs=1e-9)
        assert record["p90_angle_error"] == pytest.approx(theirs["p90_angle_error"], abs=1e-9)
    best = max(range(len(factors)), key=lambda i: expected[i]["avg_iou"])
    assert document["best_parameters"]["scale_factor"] == factors[best]
    assert f"Average IoU: {expected[best]['avg_iou']:.5f}" in result.stdout
    assert f"  Scale Factor: {factors[best]:.4f}" in result.stdout


def test_jobs_2_gives_the_numbers_of_jobs_1(data):
    args = [data / "images", data / "labels_obb_gt", "-sf", "-0.02", "0", "0.02", "0.04", "--no_plot", "-nb"]
    assert run(*args, "-n", "serial", "--jobs", 1).exit_code == 0
    assert run(*args, "-n", "pooled", "--jobs", 2).exit_code == 0
    serial, pooled = results(data / "benchmark_results" / "serial"), results(data / "benchmark_results" / "pooled")
    assert without_time(serial) == without_time(pooled) and len(serial["all_results"]) == 4
    assert serial["best_parameters"]["scale_factor"] == pooled["best_parameters"]["scale_factor"]


def test_command_sweep_records_failures_and_goes_on(data):
    result = run(data / "images", data / "labels_obb_gt", "--command", TOOL + " --fail_at 0.05", "-n", "tool",
                 "-sf", "0", "0.05", "0.1", "--no_plot")
    assert result.exit_code == 0, result.output
    records = results(data / "benchmark_results" / "tool")["all_results"]
    assert [r["status"] for r in records] == ["ok", "failed", "ok"]
    assert records[1]["error"].splitlines() == ["exit status 3", "loading model weights",
                                                "RuntimeError: out of memory at scale factor 0.05"]
    assert "[2/3] scale_factor=0.05  FAILED: exit status 3" in result.stdout
    assert "FAILED GRID POINTS (1):\n  scale_factor=0.05: exit status 3" in result.stdout
    assert "1 grid point(s) failed" in result.stderr
    summary = (data / "benchmark_results" / "tool" / "summary.txt").read_text()
    assert "RuntimeError: out of memory at scale factor 0.05" in summary


def test_no_point_scored_is_exit_1(data):
    result = run(data / "images", data / "labels_obb_gt", "--command", TOOL + " --fail_at 0", "-sf", "0", "--no_plot")
    assert result.exit_code == 1 and "no grid point of command was scored" in result.stderr


@pytest.mark.parametrize("extra, message", [
    (["-pm", "mean_iou"], "unknown plot metric 'mean_iou' (--plot_metric) (did you mean median_iou?)"),
    (["-iz", "640"], "converter 'identity' has no parameter 'imgsz'"),
    (["--grid", "model=a,b"], "no parameter 'model'"),
    (["-sf", "0.1", "--grid", "scale_factors=0.2"], "given twice"),
    (["--grid", "model"], "expected NAME=V1,V2"),
    (["--command", "echo {out_dir} {scale_factor} {model}"], r"no value: \{model\}"),
    (["--command", "echo {out_dir}", "-sf", "0.1"], "no parameter 'scale_factor'"),
    (["--converter", "identity", "--command", "echo {out_dir}"], "only used by the command converter"),
    (["--converter", "command"], "needs a command template"),
    (["--converter", "sam"], "unknown converter 'sam'"),
    (["--only", "a"], "--only selects runs"),
    (["--refresh", "--resume"], "--refresh converts nothing"),
    (["-sf", "-0.7"], "greater than -0.5"),
    (["-sf", "0", "-iw", "0", "-ih", "0"], "must be positive finite numbers, got 0.0 x 0.0"),
    (["-sf", "0", "-mp", "no_such_map.yaml"], "no_such_map.yaml"),
    (["-sf", "0", "-e", "99999999999999999999"], "excluded class id 99999999999999999999 is out of range"),
    (["-sf", "0", "-n", ".."], "run name '..' must be one folder's name"),
    (["-sf", "0", "-n", "."], "run name '.' must be one folder's name"),
    (["-sf", "0", "-n", "a/b"], "run name 'a/b' must be one folder's name"),
    (["-sf", "abc"], "--scale_factors: a scale factor is one number or two (short,long), got 'abc'"),
    (["-sf", "0.1,0.2,0.3"], "--scale_factors: a scale factor is one number or two (short,long), got '0.1,0.2,0.3'"),
    (["--jobs", "-1"], "--jobs must be 0"),
])
def test_usage_errors_stop_before_anything_runs(data, extra, message):
    result = run(data / "images", data / "labels_obb_gt", *extra, "--no_plot")
    assert result.exit_code == 2, result.output
    assert message.replace("\\", "") in result.stderr or pytest.fail(result.stderr)
    assert not (data / "benchmark_results" / "identity").exists()


def test_missing_arguments_and_bad_config_are_usage_errors(tmp_path, data):
    assert "give IMG_SOURCE and GT_DIR" in run().stderr
    config = tmp_path / "b.yaml"
    config.write_text(f"img_source: {data / 'images'}\ngt_dir: {data / 'labels_obb_gt'}\nruns:\n  - nme: x\n")
    result = run("-c", config)
    assert result.exit_code == 2 and f"{config}:4: unknown key 'nme' in run 1" in result.stderr
    result = run("-c", config, "-sf", "0.1")
    assert result.exit_code == 2 and "set --scale_factors in" in result.stderr


def test_dry_run_prints_the_plan_and_writes_nothing(data):
    result = run(data / "images", data / "labels_obb_gt", "--dry_run")
    assert result.exit_code == 0
    assert "identity  identity   12 scale_factor = 12 points      12  to measure" in result.stdout
    assert "12 conversion(s) of the whole set of 3 frame(s) (36 frame conversions)" in result.stdout
    assert not (data / "benchmark_results").exists()


def test_plot_metric_writes_its_own_plot_and_never_plot_png(data):
    from hbb2obb.sweeps.plots import save_figure, sweep_figure
    from hbb2obb.sweeps.report import load_run

    folder = data / "benchmark_results" / "identity"
    assert run(data / "images", data / "labels_obb_gt", "-sf", "0", "0.05", "-pm", "median_iou", "-nb").exit_code == 0
    names = sorted(p.name for p in folder.glob("*.png"))
    assert names == ["plot.png", "plot_iou_at_90.png", "plot_median_iou.png", "plot_p90_angle_error.png"]
    sweep = load_run(folder)
    for metric, name in (("avg_iou", "plot.png"), ("median_iou", "plot_median_iou.png")):
        save_figure(sweep_figure(sweep.records, sweep.axes, metric, sweep.best, title="identity"), data / name)
        assert (folder / name).read_bytes() == (data / name).read_bytes()


def write_benchmark(data: Path, tmp_path: Path) -> Path:
    config = tmp_path / "bench.yaml"
    config.write_text(f"""\
img_source: {data / 'images'}
gt_dir: {data / 'labels_obb_gt'}
output_folder: {tmp_path / 'out'}
defaults:
  scale_factors: [-0.02, 0.0, 0.02]
runs:
  - name: baseline
    converter: identity
  - name: tool
    command: {TOOL} --imgsz {{imgsz}}
    imgsz: [960, 1920]
""")
    return config


def test_benchmark_runs_resumes_and_refreshes(data, tmp_path):
    config = write_benchmark(data, tmp_path)
    out = tmp_path / "out"
    result = run("-c", config, "-nb", "--no_plot")
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out.iterdir()) == ["PROVENANCE.txt", "baseline", "bench.yaml", "summary.md",
                                                     "summary.tex", "tool"]
    assert not list(out.rglob("*.png"))
    assert (out / "bench.yaml").read_text() == config.read_text()
    assert len(results(out / "tool")["all_results"]) == 6
    bests = {name: results(out / name)["best_parameters"]["avg_iou"] for name in ("baseline", "tool")}
    leader = max(bests, key=bests.get)
    assert (out / "summary.md").read_text().count(f"| `{leader} (") == 1  # named with its converter
    assert f"**Best overall:** `{leader} (" in (out / "summary.md").read_text()
    stamps = {name: (out / name / "results.yaml").stat().st_mtime_ns for name in ("baseline", "tool")}
    again = run("-c", config, "--resume", "-nb", "--no_plot")
    assert again.exit_code == 0
    assert "baseline: complete (3 points" in again.stdout and "tool: complete (6 points" in again.stdout
    assert "[1/" not in again.stdout
    assert {name: (out / name / "results.yaml").stat().st_mtime_ns for name in stamps} == stamps
    dry = run("-c", config, "--resume", "--dry_run")
    assert "0 to measure" in dry.stdout
    refreshed = run("-c", config, "--refresh", "--only", "tool", "--no_plot")
    assert refreshed.exit_code == 0 and refreshed.stdout.startswith("tool: 6 points redrawn")


def test_resume_measures_only_what_an_interrupted_sweep_left(data):
    args = [data / "images", data / "labels_obb_gt", "-sf", "0", "0.01", "0.02", "0.03", "--no_plot", "-nb"]
    assert run(*args).exit_code == 0
    path = data / "benchmark_results" / "identity" / "results.yaml"
    document = yaml.safe_load(path.read_text())
    kept = document["all_results"][:2]
    document["all_results"] = kept
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    result = run(*args, "--resume")
    assert result.exit_code == 0
    assert "2 already measured" in result.stdout
    assert "[3/4] scale_factor=0.02" in result.stdout and "[1/4]" not in result.stdout
    assert results(data / "benchmark_results" / "identity")["all_results"][:2] == kept
    changed = run(*args, "--resume", "-t", "0.5")
    assert changed.exit_code == 2 and "measured with other evaluation" in changed.stderr


def test_two_kills_then_resume_give_the_numbers_of_an_uninterrupted_sweep(data):
    """kill -9 twice (once a point is on disk, then at a moment part-way into a point), --resume
    after each: the final numbers are an uninterrupted sweep's, results.yaml parsed whenever it
    was read, and no scratch or lock file is left. tools/kill_resume_check.py does ten."""
    import threading

    exe = Path(sys.executable).with_name("hbb2obb-optimize")
    args = [str(exe), str(data / "images"), str(data / "labels_obb_gt"), "-n", "slow", "--no_plot", "-nb",
            "--command", TOOL + " --sleep 0.3", "-sf", "0", "0.01", "0.02"]
    folder = data / "benchmark_results" / "slow"
    path = folder / "results.yaml"
    reads, broken, stop = [0], [], threading.Event()

    def watch():
        while not stop.is_set():
            text = _text(path)
            if text:
                reads[0] += 1
                try:
                    assert isinstance(yaml.safe_load(text)["all_results"], list)
                except Exception as exc:  # noqa: BLE001 - any failure to parse is the finding
                    broken.append(repr(exc))
            time.sleep(0.003)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    on_disk = []
    try:
        for kill, extra in enumerate(([], ["--resume"])):
            process = subprocess.Popen(args + extra, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            try:
                deadline = time.monotonic() + 60
                while time.monotonic() < deadline and len(_points(path)) <= (on_disk[-1] if on_disk else 0):
                    time.sleep(0.02)
                time.sleep(0.15 * kill)  # the second kill lands inside the next point's conversion
                os.kill(process.pid, signal.SIGKILL)
            finally:
                process.wait()
            assert process.returncode == -signal.SIGKILL
            on_disk.append(len(_points(path)))
        resumed = subprocess.run(args + ["--resume"], capture_output=True, text=True)
    finally:
        stop.set()
        watcher.join()
    assert resumed.returncode == 0, resumed.stderr
    assert 1 <= on_disk[0] <= on_disk[1] < 3
    assert f"{on_disk[1]} already measured" in resumed.stdout
    assert resumed.stdout.count("] scale_factor=") == 3 - on_disk[1]
    assert reads[0] > 10 and broken == []
    fresh = CliRunner().invoke(main, [str(data / "images"), str(data / "labels_obb_gt"), "-n", "fresh", "--no_plot",
                                      "-nb", "--command", TOOL, "-sf", "0", "0.01", "0.02"])
    assert fresh.exit_code == 0

    def numbers(document):  # the template differs by --sleep, so what they were measured with does too
        return [{k: v for k, v in r.items() if k not in ("execution_time", "measured_with")}
                for r in document["all_results"]]

    assert numbers(results(folder)) == numbers(results(data / "benchmark_results" / "fresh"))
    assert sorted(p.name for p in folder.iterdir()) == ["results.yaml", "run_config.yaml", "summary.txt"]


def _points(path: Path) -> list:
    try:
        return yaml.safe_load(path.read_text())["all_results"]
    except (FileNotFoundError, TypeError, KeyError):
        return []


REFERENCE_LAYOUT = """\
best_parameters:
  imgsz: 1280
  scale_factor: 0.05
  avg_iou: 0.8964195421701038
  std_iou: 0.06833553557106074
  total_matches: 200
  total_gt: 201
  total_pred: 201
  execution_time: 14.07821011543274
all_results:
- imgsz: 640
  scale_factor: 0.05
  avg_iou: 0.790811106285735
  std_iou: 0.10332482203117781
  total_matches: 200
  total_gt: 201
  total_pred: 201
  execution_time: 5.0580480098724365
- imgsz: 1280
  scale_factor: 0.05
  avg_iou: 0.8964195421701038
  std_iou: 0.06833553557106074
  total_matches: 200
  total_gt: 201
  total_pred: 201
  execution_time: 14.07821011543274
model_load_seconds: 0.18159818649291992
sweep_seconds: 335.5106599330902
"""


def test_refresh_renders_a_folder_written_by_the_reference_tool(tmp_path):
    for name in ("sam_b", "sam_l"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "results.yaml").write_text(REFERENCE_LAYOUT.replace("0.8964195421701038", "0.91")
                                                      if name == "sam_l" else REFERENCE_LAYOUT)
    result = run("--refresh", "-o", tmp_path)
    assert result.exit_code == 0, result.output
    assert "no grid point holds p90_angle_error; plot_p90_angle_error.png not drawn" in result.stderr
    assert "sem_iou derived from std_iou" in result.stderr
    assert sorted(p.name for p in (tmp_path / "sam_b").iterdir()) == ["plot.png", "results.yaml", "summary.txt"]
    sem = 0.06833553557106074 / np.sqrt(200)
    assert f"Average IoU: 0.89642 ± 0.06834 (SEM {sem:.5f})" in (tmp_path / "sam_b" / "summary.txt").read_text()
    md = (tmp_path / "summary.md").read_text()
    assert md.index("| `sam_l` | 1280 | 0.05 | - | **0.91000**") < md.index("| `sam_b` | 1280 | 0.05 | - | 0.89642 ±")
    # 0.91 - 0.8964 is more than one SEM: sam_b is not bold
    assert (tmp_path / "comparison.png").is_file() and (tmp_path / "summary.tex").is_file()


def test_version():
    result = run("--version")
    assert result.exit_code == 0 and result.stdout.startswith("hbb2obb-optimize ")


def test_refresh_finds_the_run_folder_without_the_data(data, tmp_path):
    assert run(data / "images", data / "labels_obb_gt", "-sf", "0", "0.05", "--no_plot", "-n", "base").exit_code == 0
    by_name = run(data / "images", data / "labels_obb_gt", "--refresh", "-n", "base", "--no_plot")
    assert by_name.exit_code == 0 and by_name.stdout.startswith("base: 2 points redrawn")
    everything = run("--refresh", "-o", data / "benchmark_results", "--no_plot")
    assert everything.exit_code == 0 and "base: 2 points redrawn" in everything.stdout
    missing = run("--refresh", "-o", tmp_path / "nowhere")
    assert missing.exit_code == 2 and "results folder not found" in missing.stderr
    absent = run("--refresh", "-o", data / "benchmark_results", "-n", "other")
    assert absent.exit_code == 2 and "no results.yaml in" in absent.stderr


# ------------------------------------------------------------------ stale numbers, lost work
MISBEHAVING = '''\
import pathlib, subprocess, sys
mode, fake, hbb, out, sf = sys.argv[1:6]
subprocess.run([sys.executable, fake, hbb, out, "--sf", sf], check=True)
out = pathlib.Path(out)
if float(sf) == 0.05:
    files = sorted(out.glob("*.txt"))
    if mode == "nothing":
        for path in files:
            path.unlink()
    elif mode == "missing":
        files[0].unlink()
    elif mode == "hbb":
        for path in files:
            path.write_text((pathlib.Path(hbb) / path.name).read_text())
    elif mode == "latin1":
        files[0].write_bytes("0 caf\\xe9 1 2 3 4 5 6 7 8\\n".encode("latin-1"))
'''


@pytest.mark.parametrize("mode, message", [
    ("nothing", r"no output file for 3 of 3 HBB file\(s\) \(first: frame_0000.txt\)"),
    ("missing", r"no output file for 1 of 3 HBB file\(s\)"),
    ("hbb", r"output line\(s\) unreadable and skipped \(first: frame_0000.txt:1: expected 9 fields"),
    ("latin1", r"1 output file\(s\) unreadable \(first: frame_0000.txt: not UTF-8 text"),
])
def test_a_misbehaving_converter_fails_its_point_and_the_sweep_goes_on(data, tmp_path, mode, message):
    """Output missing frames or unreadable is never scored as a conversion (IoU 0 chosen as best,
    lines dropped unsaid) and never stops the sweep: the point fails, saying why."""
    script = tmp_path / "misbehaving.py"
    script.write_text(MISBEHAVING)
    template = (f"{shlex.quote(sys.executable)} {shlex.quote(str(script))} {mode} {shlex.quote(str(FAKE))} "
                "{hbb_dir} {out_dir} {scale_factor}")
    result = run(data / "images", data / "labels_obb_gt", "--command", template, "-n", mode, "-sf", "0", "0.05",
                 "0.1", "--no_plot", "-nb")
    assert result.exit_code == 0, result.output
    document = results(data / "benchmark_results" / mode)
    records = document["all_results"]
    assert [r["status"] for r in records] == ["ok", "failed", "ok"]
    assert re.search(message, records[1]["error"]), records[1]["error"]
    assert "avg_iou" not in records[1] and document["best_parameters"]["scale_factor"] != 0.05
    counts = {"nothing": ("missing_output_files", 3), "missing": ("missing_output_files", 1),
              "latin1": ("unreadable_output_files", 1)}
    if mode in counts:
        assert records[1][counts[mode][0]] == counts[mode][1]
    else:
        total = sum(len(p.read_text().splitlines()) for p in (data / "labels_hbb").glob("*.txt"))
        assert records[1]["skipped_pred_lines"] == total
    assert "[2/3] scale_factor=0.05  FAILED: converter output unusable" in result.stdout
    assert "1 grid point(s) failed" in result.stderr and "Traceback" not in result.output


def test_resume_after_a_settings_change_never_reports_the_old_numbers(data):
    """Issue 14, item 1: -t 0.1 to the end, a -t 0.7 run stopped before its first point (it
    rewrote run_config.yaml), then --resume -t 0.7 must not call the 0.1 records complete."""
    args = [data / "images", data / "labels_obb_gt", "-sf", "0", "0.05", "0.1", "--no_plot", "-nb"]
    assert run(*args, "-t", "0.1").exit_code == 0
    folder = data / "benchmark_results" / "identity"
    at_01 = results(folder)["all_results"]
    exe = Path(sys.executable).with_name("hbb2obb-optimize")
    slow = [str(exe), *map(str, args), "-t", "0.7", "--command", TOOL + " --sleep 30", "-n", "identity"]
    process = subprocess.Popen(slow, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and "0.7" not in _text(folder / "run_config.yaml"):
            time.sleep(0.05)
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    assert yaml.safe_load((folder / "run_config.yaml").read_text())["iou_threshold"] == 0.7
    assert results(folder)["all_results"] == at_01  # the interrupted run measured nothing
    resumed = run(*args, "-t", "0.7", "--resume")
    assert resumed.exit_code == 2 and "complete" not in resumed.stdout
    assert "3 record(s)" in resumed.stderr and "evaluation.iou_threshold 0.1 -> 0.7" in resumed.stderr
    assert "run without --resume" in resumed.stderr
    fresh = run(*args, "-t", "0.7")
    assert fresh.exit_code == 0
    at_07 = results(folder)["all_results"]
    assert [r["iou_threshold"] for r in at_07] == [0.7] * 3
    assert all(r["measured_with"]["evaluation"]["iou_threshold"] == 0.7 for r in at_07)
    assert [r["total_matches"] for r in at_07] != [r["total_matches"] for r in at_01]
    assert run(*args, "-t", "0.7", "--resume").stdout.startswith("identity: complete (3 points")


def _text(path: Path) -> str:
    try:
        return path.read_text()
    except FileNotFoundError:
        return ""


def test_two_sweeps_on_one_folder_one_refuses_the_other_completes(data):
    exe = Path(sys.executable).with_name("hbb2obb-optimize")
    args = [str(exe), str(data / "images"), str(data / "labels_obb_gt"), "-n", "shared", "--no_plot", "-nb",
            "--command", TOOL + " --sleep 0.3", "-sf", "0", "0.01", "0.02"]
    folder = data / "benchmark_results" / "shared"
    first = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not (folder / ".sweep.lock").is_file():
            time.sleep(0.02)
        second = subprocess.run(args[:-4] + ["-sf", "0.5", "0.6"], capture_output=True, text=True)
        out, err = first.communicate(timeout=120)
    finally:
        first.kill()
        first.wait()
    assert second.returncode == 2, second.stderr
    assert f"is in use by another sweep (pid {first.pid} on " in second.stderr and "Traceback" not in second.stderr
    assert first.returncode == 0, err
    document = results(folder)
    assert [r["scale_factor"] for r in document["all_results"]] == [0.0, 0.01, 0.02]
    config = yaml.safe_load((folder / "run_config.yaml").read_text())
    assert config["scale_factors"] == [0.0, 0.01, 0.02]  # the grid that results.yaml holds
    assert not (folder / ".sweep.lock").exists() and not (folder / ".scratch").exists()


def test_a_lock_left_by_a_dead_sweep_is_taken_over_with_a_warning(data):
    folder = data / "benchmark_results" / "identity"
    folder.mkdir(parents=True)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    import json
    import socket
    (folder / ".sweep.lock").write_text(json.dumps({"pid": int(dead.stdout), "host": socket.gethostname(),
                                                    "started": "2026-12-01T20:00:00"}))
    (folder / ".scratch" / "hbb2obb-sweep-x").mkdir(parents=True)
    result = run(data / "images", data / "labels_obb_gt", "-sf", "0", "--no_plot", "-nb")
    assert result.exit_code == 0, result.output
    assert f"took over the lock of a sweep that is gone (pid {int(dead.stdout)} on" in result.stderr
    assert "removed the scratch space an interrupted sweep left" in result.stderr
    assert sorted(p.name for p in folder.iterdir()) == ["results.yaml", "run_config.yaml", "summary.txt"]


def test_refresh_skips_a_malformed_record_with_a_warning(data):
    args = [data / "images", data / "labels_obb_gt", "-sf", "0", "0.05", "0.1", "--no_plot", "-nb"]
    assert run(*args).exit_code == 0
    path = data / "benchmark_results" / "identity" / "results.yaml"
    document = yaml.safe_load(path.read_text())
    document["all_results"][1]["avg_iou"] = "high"
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    result = run("--refresh", "-o", data / "benchmark_results", "-n", "identity", "--no_plot")
    assert result.exit_code == 0, result.output
    assert "record 2 (scale_factor=0.05) skipped: avg_iou is 'high', not a number" in result.stderr
    assert "identity: 2 points redrawn" in result.stdout and "Traceback" not in result.output
    resumed = run(*args, "--resume")  # resume measures the broken point again
    assert resumed.exit_code == 0 and "2 already measured" in resumed.stdout
    assert isinstance(results(path.parent)["all_results"][1]["avg_iou"], float)


def test_scratch_space_stays_in_the_run_folder_and_a_kill_leaves_none_after_resume(data, tmp_path):
    """Each point converts under <run folder>/.scratch, removed when it ends; a SIGKILLed
    sweep's leftovers go with the next --resume, a SIGTERMed sweep cleans up itself."""
    log = tmp_path / "out_dirs.txt"
    script = tmp_path / "logging_converter.py"
    # The wrapper replaces itself with the fake converter (exec) rather than starting it as a
    # child: the kernel's kill-with-parent covers the sweep's own child only (docs/sweeps.md: "programs
    # it starts itself are not covered"), and a grandchild outliving the SIGKILLed sweep would
    # sleep on and then write into this test's folder after it was removed.
    script.write_text("import os, sys\n"
                      f"open({str(log)!r}, 'a').write(sys.argv[2] + '\\n')\n"
                      f"os.execv(sys.executable, [sys.executable, {str(FAKE)!r}, *sys.argv[1:]])\n")
    exe = Path(sys.executable).with_name("hbb2obb-optimize")
    folder = data / "benchmark_results" / "slow"
    args = [str(exe), str(data / "images"), str(data / "labels_obb_gt"), "-n", "slow", "--no_plot", "-nb",
            "--command", f"{shlex.quote(sys.executable)} {shlex.quote(str(script))} {{hbb_dir}} {{out_dir}} "
                         "--sf {scale_factor} --sleep 30", "-sf", "0", "0.01"]
    for stop in (signal.SIGKILL, signal.SIGTERM):
        process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and not _text(log):
                time.sleep(0.02)
            out_dir = Path(_text(log).split()[-1])
            assert out_dir.parent.parent == folder / ".scratch" and out_dir.parent.is_dir()
            process.send_signal(stop)
            process.wait(timeout=60)
        finally:
            process.kill()
            process.wait()
        if stop == signal.SIGKILL:
            assert out_dir.parent.is_dir()  # nothing can clean up after kill -9 ...
        else:
            assert process.returncode == 130 and not (folder / ".scratch").exists()  # ... SIGTERM cleans
        log.write_text("")
    quick = args[:-4] + [f"{shlex.quote(sys.executable)} {shlex.quote(str(FAKE))} {{hbb_dir}} {{out_dir}} "
                         "--sf {scale_factor}", "-sf", "0", "0.01", "--resume"]
    resumed = subprocess.run(quick, capture_output=True, text=True)
    assert resumed.returncode == 0, resumed.stderr
    assert sorted(p.name for p in folder.iterdir()) == ["results.yaml", "run_config.yaml", "summary.txt"]


@pytest.mark.parametrize("name", ["results.yaml", "run_config.yaml", "summary.txt"])
def test_a_file_of_the_run_folder_a_sweep_did_not_write_is_never_replaced(data, name):
    # before: a sweep (and its --refresh) replaced them silently, exit 0
    folder = data / "benchmark_results" / "identity"
    folder.mkdir(parents=True)
    (folder / name).write_text("my notes on the last sweep\n")
    result = run(data / "images", data / "labels_obb_gt", "-sf", 0)
    assert result.exit_code == 2
    assert f"{folder / name} exists and is not a file hbb2obb-optimize wrote" in result.stderr
    assert sorted(p.name for p in folder.iterdir()) == [name]  # nothing else written either
    assert (folder / name).read_text() == "my notes on the last sweep\n"
    if name != "results.yaml":  # --refresh draws from a results.yaml: give it the reference tool's
        (folder / "results.yaml").write_text(REFERENCE_LAYOUT)
        result = run("--refresh", "-o", folder.parent)
        assert result.exit_code == 2 and (folder / name).read_text() == "my notes on the last sweep\n"


def test_a_sweep_run_again_replaces_its_own_files(data):
    first = run(data / "images", data / "labels_obb_gt", "-sf", 0)
    again = run(data / "images", data / "labels_obb_gt", "-sf", 0, 0.1)
    assert first.exit_code == 0 and again.exit_code == 0, again.output
    assert len(results(data / "benchmark_results" / "identity")["all_results"]) == 2
