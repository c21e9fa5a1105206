"""``hbb2obb-optimize`` and the reference tool's benchmark folders and files (issue 36).

The reference (hbb2obb 1.12.0) writes its benchmark folders with ``yaml.dump`` (so the best
point is an anchor of one of the grid points), names runs by their SAM models, and reads back
``summary.tex``, ``summary_<metric>.md``, ``comparison.pdf`` and ``PROVENANCE.txt``; these tests
port its test suite's observable checks to our command.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from hbb2obb.cli.optimize import main
from hbb2obb.synthetic.dataset import generate_dataset

REFERENCE_CONFIG = """\
img_source: {root}/images
gt_dir: {root}/labels_obb_gt
output_folder: {root}/bench
defaults:
  imgsz: [960, 1280]
  scale_factors: [-0.01, 0.04]
  opening_kernels: [0.15]
  fragment_ratio: 0.1
runs:
  - sam_models: [sam_b]
  - sam_models: [sam_l, sam_b]
    device: cpu
"""


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def grid_point(imgsz, sf, iou, high=0.41, angle=5.5, seconds=12.5, sem=0.0015, old=False):
    """One record as the reference writes it (every key its writers read, in its order)."""
    point = {"imgsz": imgsz, "scale_factor": sf, "opening_kernel_percentage": 0.15, "fragment_ratio": 0.1,
             "avg_iou": iou, "std_iou": 0.07, "sem_iou": sem, "median_iou": iou + 0.01,
             "iou_fractions": {"0.50": 1.0, "0.75": 0.94, "0.85": 0.73, "0.90": high},
             "median_angle_error": 2.5, "avg_angle_error": 2.9, "std_angle_error": 1.2, "p90_angle_error": angle,
             "total_matches": 200, "total_gt": 201, "total_pred": 201, "class_agnostic": False,
             "iou_threshold": 0.1, "excluded_classes": [], "execution_time": seconds}
    if old:  # measured before 1.9.0: no SEM, ladder or angles
        for key in ("sem_iou", "iou_fractions", "median_angle_error", "avg_angle_error", "std_angle_error",
                    "p90_angle_error", "median_iou"):
            point.pop(key)
    return point


def reference_run(folder: Path, models: list, points: list) -> None:
    """A run folder as the reference's writer leaves it: yaml.dump, best point aliased into the grid."""
    folder.mkdir(parents=True)
    best = max(points, key=lambda p: p["avg_iou"])
    with open(folder / "results.yaml", "w", encoding="utf-8") as handle:
        yaml.dump({"best_parameters": best, "all_results": points, "model_load_seconds": 2.5,
                   "sweep_seconds": sum(p["execution_time"] for p in points)},
                  handle, default_flow_style=False, sort_keys=False)
    with open(folder / "run_config.yaml", "w", encoding="utf-8") as handle:
        yaml.dump({"run_name": folder.name, "img_source": "data/images", "gt_dir": "data/labels_obb_gt",
                   "hbb_dir": "data/labels_hbb", "sam_models": models, "scale_factors": [-0.01, 0.04],
                   "imgsz": [960, 1280], "opening_kernels": [0.15], "fragment_ratio": 0.1, "excluded_classes": [],
                   "iou_threshold": 0.1, "class_agnostic": False, "model_kwargs": None, "device": None},
                  handle, default_flow_style=False, sort_keys=False)


@pytest.fixture
def reference_bench(tmp_path) -> Path:
    """A benchmark the reference wrote and then left: config with sam_models, two runs, its record."""
    bench = tmp_path / "bench"
    reference_run(bench / "sam_b", ["sam_b"], [grid_point(i, sf, 0.880 - abs(sf - 0.04) - (1280 - i) / 1e5,
                                                          seconds=3.0) for i in (960, 1280) for sf in (-0.01, 0.04)])
    reference_run(bench / "sam_l-sam_b", ["sam_l", "sam_b"],
                  [grid_point(i, sf, 0.889 - abs(sf - 0.04) - (1280 - i) / 1e5, high=0.47, angle=3.5, seconds=11.0)
                   for i in (960, 1280) for sf in (-0.01, 0.04)])
    (tmp_path / "bench.yaml").write_text(REFERENCE_CONFIG.format(root=tmp_path))
    (bench / "bench.yaml").write_text(REFERENCE_CONFIG.format(root=tmp_path))
    (bench / "PROVENANCE.txt").write_text("HBB2OBB benchmark provenance\n=====\n(the reference's record)\n")
    return tmp_path


def body(path: Path) -> list:
    """The data rows of a written table, one list of cells each."""
    lines = path.read_text(encoding="utf-8").splitlines()
    start, end = lines.index(r"  \midrule"), lines.index(r"  \bottomrule")
    return [line.strip().removesuffix(r"\\").strip().split(" & ") for line in lines[start + 1:end]]


def test_refresh_reads_a_benchmark_the_reference_wrote(reference_bench):
    root = reference_bench
    refused = run("-c", root / "bench.yaml", "--dry_run")
    assert refused.exit_code == 2 and "bench.yaml:8: unknown key 'fragment_ratio'" in refused.stderr
    assert "--refresh a folder it wrote" in refused.stderr  # a run converts, and this toolkit runs no SAM
    result = run("-c", root / "bench.yaml", "--refresh")
    assert result.exit_code == 0, result.output
    bench = root / "bench"
    for name in ("summary.md", "summary.tex", "comparison.png", "comparison.pdf", "summary_p90_angle_error.md",
                 "comparison_iou_at_90.png"):
        assert f"Wrote {bench / name}\n" in result.stdout, name
    assert f"Rendering {bench / 'sam_b' / 'plot.png'}\n" in result.stdout
    # the reference's eight columns, its models joined by +, the leader's mean bold with its SEM
    tex = (bench / "summary.tex").read_text()
    assert r"  Models & Size & Scale & Kernel & Mean IoU & IoU$\geq$0.90 & Angle$_{90}$ [$^\circ$] & Time [s] \\" in tex
    assert body(bench / "summary.tex") == [
        [r"sam\_l + sam\_b", "1280", "0.04", "0.15", r"\textbf{0.88900} $\pm$ 0.00150", r"47.0\%", "3.50", "11.0"],
        [r"sam\_b", "1280", "0.04", "0.15", r"0.88000 $\pm$ 0.00150", r"41.0\%", "5.50", "3.0"]]
    assert "2 run(s), 4 grid points per run, 201 ground-truth boxes" in tex
    md = (bench / "summary.md").read_text()
    header = ("| Models | Image size | Scale factor | Kernel | Average IoU | Angle p90 | IoU>=0.9 | "
              "Matches / GT | Time |")
    assert header in md
    assert "**Best overall:** `sam_l sam_b` at 1280 px, scale factor 0.04, opening kernel 0.15, average IoU " \
           "0.88900 ± 0.07000 in 11.0 s." in md
    assert "See `PROVENANCE.txt`" in md and "`bench.yaml`" in md
    assert sum(" time: " in line for line in md.splitlines()) == 1
    text = (bench / "sam_b" / "summary.txt").read_text()
    assert "Angle p90:   5.50 deg" in text and "  Image Size: 1280" in text and "Total Matches: 200" in text
    assert "fragment_ratio" not in text  # the reference's fixed setting, not an axis
    # a refresh redraws: the record of the sweep that measured stays as it was
    assert (bench / "PROVENANCE.txt").read_text().startswith("HBB2OBB benchmark provenance\n=====\n(the ref")


def test_refreshing_on_a_metric_a_run_never_recorded_says_so(tmp_path):
    bench = tmp_path / "bench"
    reference_run(bench / "sam_b", ["sam_b"], [grid_point(1280, sf, 0.9, old=True) for sf in (0.04, 0.05)])
    result = run("--refresh", "-o", bench, "-pm", "median_angle_error")
    assert result.exit_code == 0, result.output
    assert f"Skipping sam_b: {bench / 'sam_b' / 'results.yaml'} holds no grid point recording " \
           "'median_angle_error'" in result.stdout
    summary = (bench / "summary_median_angle_error.md").read_text(encoding="utf-8")
    assert "No accuracy-against-compute figure" in summary
    assert "| Models | Image size" in summary and "| - | - |" in summary  # left empty, not faked
    assert not (bench / "comparison_median_angle_error.png").exists()
    derived = 0.07 / 200 ** 0.5  # the SEM of a run measured before 1.9.0, from its spread and count
    assert body(bench / "summary.tex")[0][4:7] == [rf"\textbf{{0.90000}} $\pm$ {derived:.5f}", "--", "--"]


@pytest.fixture
def data(tmp_path):
    return generate_dataset(tmp_path / "data", n_frames=3, boxes_per_frame=(6, 9), images=False, seed=3).root


def benchmark(data: Path, tmp_path: Path) -> Path:
    config = tmp_path / "bench.yaml"
    config.write_text(f"img_source: {data / 'images'}\ngt_dir: {data / 'labels_obb_gt'}\n"
                      f"output_folder: {tmp_path / 'out'}\ndefaults:\n  converter: identity\n"
                      "  scale_factors: [-0.02, 0.0, 0.02]\nruns:\n  - name: a\n  - name: b\n"
                      "    scale_factors: [0.0, 0.04]\n")
    return config


def test_a_benchmark_writes_every_artifact_and_a_record(data, tmp_path):
    config = benchmark(data, tmp_path)
    result = run("-c", config, "-nb")
    assert result.exit_code == 0, result.output
    out = tmp_path / "out"
    for name in ("summary.md", "summary.tex", "comparison.png", "comparison.pdf", "PROVENANCE.txt",
                 "comparison_p90_angle_error.png", "summary_p90_angle_error.md", "comparison_iou_at_90.png",
                 "summary_iou_at_90.md"):
        assert (out / name).is_file(), name
    record = (out / "PROVENANCE.txt").read_text()
    assert record.startswith("hbb2obb-toolkit benchmark provenance\n")
    assert "Benchmark configuration, verbatim" in record and f"hbb2obb-optimize -c {out / 'bench.yaml'}" in record
    assert "source sha256" in record and "GT sha256      : " in record and "(3 files)" in record
    summary = (out / "summary.md").read_text()
    assert "PROVENANCE.txt" in summary and "bench.yaml" in summary
    walls = set()
    for name in ("summary.md", "summary_p90_angle_error.md", "summary_iou_at_90.md"):
        lines = [ln for ln in (out / name).read_text().splitlines() if " time: " in ln]
        assert len(lines) == 1, name
        walls.add(lines[0])
    assert len(walls) == 1  # one sweep, one wall time
    document = yaml.safe_load((out / "a" / "results.yaml").read_text())
    assert list(document) == ["best_parameters", "all_results", "model_load_seconds", "sweep_seconds"]
    assert isinstance(document["model_load_seconds"], float) and 0.0 <= document["model_load_seconds"] < 5.0
    # a refresh rewrites the table and the print figure byte for byte, and leaves the record
    before = {n: (out / n).read_bytes() for n in ("summary.tex", "comparison.pdf", "PROVENANCE.txt")}
    assert run("-c", config, "--refresh").exit_code == 0
    assert {n: (out / n).read_bytes() for n in before} == before
    assert sorted(p.name for p in out.glob("*.pdf")) == ["comparison.pdf"]


def test_resume_records_only_what_it_measured(data, tmp_path):
    config = benchmark(data, tmp_path)
    assert run("-c", config, "-nb", "--no_plot").exit_code == 0
    record = tmp_path / "out" / "PROVENANCE.txt"
    before = record.read_text()
    assert run("-c", config, "-nb", "--no_plot", "--resume").exit_code == 0
    assert record.read_text() == before  # nothing measured, nothing restamped
    results = tmp_path / "out" / "a" / "results.yaml"
    document = yaml.safe_load(results.read_text())
    document["all_results"] = document["all_results"][:1]
    results.write_text(yaml.safe_dump(document, sort_keys=False))
    assert run("-c", config, "-nb", "--no_plot", "--resume").exit_code == 0
    text = record.read_text()
    assert "Resumed benchmark" in text and "measured : a" in text and "kept     : b" in text
    assert not (tmp_path / "out" / "comparison.pdf").exists()  # --no_plot: the table, no figure
    assert (tmp_path / "out" / "summary.tex").is_file()


def test_a_record_the_command_did_not_write_is_refused(data, tmp_path):
    config = benchmark(data, tmp_path)
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "PROVENANCE.txt").write_text("my own notes\n")
    result = run("-c", config, "-nb")
    assert result.exit_code == 2 and "is not a record hbb2obb-optimize wrote" in result.stderr
    assert not (tmp_path / "out" / "a").exists()
    assert (tmp_path / "out" / "PROVENANCE.txt").read_text() == "my own notes\n"


def test_a_single_sweep_records_itself_beside_its_run(data, tmp_path):
    out = tmp_path / "sweep"
    exe = Path(sys.executable).with_name("hbb2obb-optimize")  # the command line is the process's own
    result = subprocess.run([str(exe), str(data / "images"), str(data / "labels_obb_gt"), "--converter", "identity",
                             "-sf", "0", "0.05", "-o", str(out), "-nb", "--no_plot"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert f"Wrote {out / 'PROVENANCE.txt'}" in result.stdout
    record = (out / "PROVENANCE.txt").read_text()
    assert "-sf 0 0.05" in record and "identity" in record
    assert (out / "summary.md").is_file() and not (out / "identity" / "PROVENANCE.txt").exists()
    assert "-sf 0 0.05" in (out / "summary.md").read_text()  # the command it records reproduces the grid


def test_a_typo_in_the_plot_metric_names_the_real_ones(data, tmp_path):
    config = benchmark(data, tmp_path)
    result = run("-c", config, "--plot_metric", "orientaton")
    assert result.exit_code == 2
    assert "unknown plot metric 'orientaton'" in result.stderr and "median_angle_error" in result.stderr
    assert not (tmp_path / "out").exists()  # stopped before any sweep ran
