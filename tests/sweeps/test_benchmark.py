"""Benchmark files, reading results folders back (ours and the reference tool's), and the summaries."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import yaml

from hbb2obb.errors import ConfigError, InputError, UsageError
from hbb2obb.sweeps.benchmark import RunSpec, load_benchmark, plan_run, select_runs
from hbb2obb.sweeps.documents import (
    benchmark_rows,
    render_benchmark_folder,
    render_benchmark_md,
    render_benchmark_tex,
    render_run_folder,
    tied_with_leader,
)
from hbb2obb.sweeps.plots import pareto_front
from hbb2obb.sweeps.report import check_plot_metric, edge_notes, infer_axes, load_run, render_dry_run, with_sem
from hbb2obb.sweeps.runner import SweepInputs

VALID = """\
img_source: data/images
gt_dir: data/gt
defaults:
  scale_factors: [0.0, 0.05]
  iou_threshold: 0.2
  grid: {model: [a]}
runs:
  - name: first
    converter: identity
  - converter: identity
    name: second
    scale_factors: [[0.0, 0.1], 0.2]
    excluded_classes: [3]
  - command: echo {out_dir} {scale_factor} {model}
    grid: {model: [b, c]}
"""


def write(tmp_path, text, name="bench.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_load_benchmark_merges_defaults_into_each_run(tmp_path):
    bench = load_benchmark(write(tmp_path, VALID))
    assert [r.name for r in bench.runs] == ["first", "second", "command"]
    first, second, third = bench.runs
    assert first.axes == {"scale_factors": (0.0, 0.05), "model": ("a",)}
    assert second.axes["scale_factors"] == ([0.0, 0.1], 0.2)
    assert second.evaluation == {"iou_threshold": 0.2, "excluded_classes": (3,)}
    assert (third.converter, third.command, third.axes["model"]) == ("command", "echo {out_dir} {scale_factor} {model}",
                                                                     ("b", "c"))
    assert bench.inputs == SweepInputs(Path("data/images"), Path("data/gt"), Path("data/labels_hbb"))
    assert bench.output_folder == Path("data/benchmark_results")
    assert bench.text == VALID


@pytest.mark.parametrize(
    "text, message",
    [
        (VALID.replace("gt_dir:", "gt_dirs:"), r"bench.yaml:2: unknown key 'gt_dirs' in the benchmark file"),
        (
            VALID.replace("  iou_threshold: 0.2", "  iou_treshold: 0.2"),
            r"bench.yaml:5: unknown key 'iou_treshold' in defaults",
        ),
        (
            VALID.replace("    excluded_classes: [3]", "    exclude: [3]"),
            r"bench.yaml:13: unknown key 'exclude' in run 2",
        ),
        (
            VALID.replace("  - name: first", "  - name: first\n    sam_models: [sam_b]"),
            r"'sam_models'.*converter: command",
        ),
        (VALID.replace("  - name: first", "  - name: first\n    name: first"), r"bench.yaml:9: key .name. given twice"),
        (VALID.replace("name: second", "name: first"), "used twice"),
        (
            VALID.replace("scale_factors: [0.0, 0.05]", "scale_factors: [0.0, big]"),
            r"bench.yaml:4: scale_factors must be",
        ),
        (
            VALID.replace("excluded_classes: [3]", "excluded_classes: [1.5]"),
            "excluded_classes must be a list of integers",
        ),
        (VALID.replace("img_source: data/images\n", ""), "'img_source' is required"),
        (VALID.replace("runs:\n", "runs: 3\nold:\n"), "unknown key 'old'"),
        ("img_source: a\ngt_dir: b\nruns: {x: 1}\n", "'runs' must be a list"),
        ("img_source: a\ngt_dir: b\nruns: [3]\n", "run 1 must be a mapping"),
        ("img_source: [a\n", "not valid YAML"),
        ("- a\n- b\n", "must be a mapping"),
        (
            VALID + "    command_timeout: soon\n",
            "bench.yaml:16: command_timeout in run 3 must be a positive number of sec",
        ),
        (VALID.replace("name: second", "name: a/b"), "cannot be a folder name"),
        (VALID + "    scale_factor: [0.1]\n", "unknown key 'scale_factor'"),
    ],
)
def test_config_errors_name_the_key_and_line(tmp_path, text, message):
    with pytest.raises(ConfigError, match=message):
        load_benchmark(write(tmp_path, text))


@pytest.mark.parametrize(
    "line, expected",
    [
        (
            "  class_agnostic: 'false'",
            r"bench.yaml:5: class_agnostic in defaults must be true or false, got 'false' \(a string\)",
        ),
        ("  iou_threshold: high", r"bench.yaml:5: iou_threshold in defaults must be a number in \[0, 1\), got 'high'"),
        (
            "  iou_threshold: [0.1]",
            r"bench.yaml:5: iou_threshold in defaults must be a number in \[0, 1\), got \[0.1\]",
        ),
        ("  iou_threshold: 1.5", r"bench.yaml:5: iou_threshold .* got 1.5"),
        ("  edge_tolerance: abc", r"bench.yaml:5: edge_tolerance in defaults must be a number of pixels, 0 or more"),
        ("  img_width: abc", r"bench.yaml:5: img_width in defaults must be a positive number of pixels, got 'abc'"),
        ("  img_width: -3", r"bench.yaml:5: img_width in defaults must be a positive number"),
        ("  map_path: 5", r"bench.yaml:5: map_path in defaults must be a non-empty string, got 5 \(int\)"),
        ("  missing_pred: drop", r"bench.yaml:5: missing_pred in defaults must be one of"),
        ("  one_to_one: 1", r"bench.yaml:5: one_to_one in defaults must be true or false"),
    ],
)
def test_config_values_are_checked_against_their_kind(tmp_path, line, expected):
    """Every key's type and range is checked up front, naming the key and its line (a string
    'false' would otherwise switch class-agnostic matching on, a word end in a traceback)."""
    text = VALID.replace("  iou_threshold: 0.2", line)
    with pytest.raises(ConfigError, match=expected):
        load_benchmark(write(tmp_path, text))


@pytest.mark.parametrize("text, expected", [
    (VALID.replace("gt_dir: data/gt", "gt_dir: 5"), r"bench.yaml:2: gt_dir in the benchmark file must be a non-empty"),
    (VALID.replace("img_source: data/images", "img_source: [a]"), r"bench.yaml:1: img_source in the benchmark file"),
    (VALID.replace("    converter: identity\n  - converter", "    converter: 3\n  - converter"),
     r"bench.yaml:9: converter in run 1 must be a non-empty string"),
    (VALID.replace("grid: {model: [b, c]}", "grid: {model: [{x: 1}]}"), r"bench.yaml:15: grid axis 'model' in run 3"),
    (VALID.replace("    excluded_classes: [3]", "    excluded_classes: [3]\n    class_agnostic: yes please"),
     r"bench.yaml:14: class_agnostic in run 2 must be true or false"),
])
def test_top_level_and_run_values_are_checked(tmp_path, text, expected):
    with pytest.raises(ConfigError, match=expected):
        load_benchmark(write(tmp_path, text))


def test_missing_config_file_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match="benchmark file not found"):
        load_benchmark(tmp_path / "nope.yaml")


def test_select_runs(tmp_path):
    runs = load_benchmark(write(tmp_path, VALID)).runs
    assert [r.name for r in select_runs(runs, ())] == ["first", "second", "command"]
    assert [r.name for r in select_runs(runs, ("command", "first"))] == ["first", "command"]
    with pytest.raises(UsageError, match="no run named 'third'"):
        select_runs(runs, ("third",))


def test_plan_run_checks_everything_before_running(write_labels):
    root = write_labels({"gt/a.txt": "", "hbb/a.txt": ""})
    inputs = SweepInputs(root / "images", root / "gt", root / "hbb")
    plan = plan_run(RunSpec("r", "identity", axes={"scale_factors": (0.0,)}), inputs, root / "out")
    assert plan.folder == root / "out" / "r" and plan.grid.size == 1 and not (root / "out").exists()
    assert plan.evaluation.settings.missing_pred == "empty"
    cases = [
        (RunSpec("r", "identity", axes={"imgsz": (640,)}), inputs, UsageError, "no parameter 'imgsz'"),
        (RunSpec("r", "nope"), inputs, UsageError, "unknown converter 'nope'"),
        (RunSpec("r", "command"), inputs, UsageError, "needs a command template"),
        (RunSpec("r", "identity", command="echo {out_dir}"), inputs, UsageError, "only used by the command"),
        (RunSpec("r", "identity"), SweepInputs(None, root / "gt", root / "no"), InputError, "HBB folder not found"),
        (RunSpec("r", "command", command="echo {img_source} {out_dir}"), inputs, InputError, "needs the images"),
        (RunSpec("r", "identity", evaluation={"exclude_edge_cases": True}), inputs, UsageError, "frame size"),
        (RunSpec("r", "identity", evaluation={"missing_pred": "maybe"}), inputs, UsageError, "missing_pred"),
    ]
    for spec, where, error, message in cases:
        with pytest.raises(error, match=message):
            plan_run(spec, where, root / "out")


REFERENCE_RESULTS = """\
best_parameters:
  imgsz: 1280
  scale_factor: 0.05
  avg_iou: 0.9
  std_iou: 0.05
  total_matches: 100
  total_gt: 101
  total_pred: 101
  class_agnostic: false
  iou_threshold: 0.1
  excluded_classes: []
  execution_time: 14.0
all_results:
"""


def reference_folder(root: Path, name="sam_b", scores=None) -> Path:
    """A results folder in the layout of the reference tool's older files: no SEM, ladder, angles."""
    scores = scores or {(640, 0.0): 0.80, (640, 0.05): 0.82, (1280, 0.0): 0.88, (1280, 0.05): 0.90}
    records = [{"imgsz": i, "scale_factor": s, "avg_iou": v, "std_iou": 0.05, "total_matches": 100,
                "total_gt": 101, "total_pred": 101, "class_agnostic": False, "iou_threshold": 0.1,
                "excluded_classes": [], "execution_time": 5.0 if i == 640 else 14.0} for (i, s), v in scores.items()]
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "results.yaml").write_text(REFERENCE_RESULTS + yaml.safe_dump(records, sort_keys=False)
                                         + "model_load_seconds: 0.18\nsweep_seconds: 335.5\n")
    (folder / "config.yaml").write_text(f"run_name: {name}\nsam_models:\n- {name}\nimgsz: [640, 1280]\n")
    return folder


def test_load_run_reads_the_reference_layout(tmp_path):
    run = load_run(reference_folder(tmp_path))
    assert run.axes == ["imgsz", "scale_factor"] and run.converter == "SAM sam_b" and run.sweep_seconds == 335.5
    assert run.best["avg_iou"] == 0.90 and run.best["imgsz"] == 1280
    assert run.best["sem_iou"] == pytest.approx(0.05 / math.sqrt(100))
    assert run.missing_metrics(["avg_iou", "p90_angle_error", "iou_at_90"]) == ["p90_angle_error", "iou_at_90"]
    assert any("sem_iou derived" in note for note in run.notes)


def test_render_run_folder_skips_absent_metrics_and_says_so(tmp_path):
    folder = reference_folder(tmp_path)
    run, written, notes, skipped = render_run_folder(folder, "median_iou")
    assert sorted(p.name for p in written) == ["plot.png", "summary.txt"]
    assert sum("not drawn" in n for n in notes) == 2  # p90 angle and IoU>=0.90 are not in the file
    assert skipped == f"{folder / 'results.yaml'} holds no grid point recording 'median_iou'"  # the one asked for
    summary = (folder / "summary.txt").read_text()
    assert "Average IoU: 0.90000 ± 0.05000 (SEM 0.00500)" in summary
    assert "IoU>=0.90" in summary and "Orientation Error: p90 -" in summary
    ranked = [line.split(", ")[:2] for line in summary.splitlines() if line[:4].strip().isdigit()]
    assert ranked == [["   1. ImgSz:  1280", "SF:  0.0500"], ["   2. ImgSz:  1280", "SF:  0.0000"],
                      ["   3. ImgSz:   640", "SF:  0.0500"], ["   4. ImgSz:   640", "SF:  0.0000"]]


@pytest.mark.parametrize("record, sem", [
    ({"std_iou": 0.1, "total_matches": 4}, 0.05),
    ({"std_iou": 0.1, "total_matches": 0}, 0.0),
    ({"std_iou": 0.1, "total_matches": 4, "sem_iou": 0.7}, 0.7),
    ({"total_matches": 4}, None),
])
def test_with_sem(record, sem):
    assert with_sem(record).get("sem_iou") == sem


@pytest.mark.parametrize("records, axes", [
    ([{"imgsz": 640, "scale_factor": 0.0, "opening_kernel_percentage": 0.15, "avg_iou": 0.8}],
     ["imgsz", "scale_factor", "opening_kernel_percentage"]),
    ([{"scale_factor": 0.0, "total_gt": 3, "future_metric": 1.0}], ["scale_factor"]),
    ([{"status": "failed", "error": "x"}, {"model": "a", "status": "failed"}], ["model"]),
    ([], []),
])
def test_infer_axes(records, axes):
    assert infer_axes(records) == axes


@pytest.mark.parametrize("scores, tied", [
    ([(0.90, 0.01), (0.895, 0.01), (0.889, 0.01)], [True, True, False]),
    ([(0.90, 0.0), (0.90, 0.0)], [True, True]),
    ([(0.90, 0.02)], [True]),
    ([], []),
])
def test_tied_with_leader(scores, tied):
    assert tied_with_leader([{"avg_iou": a, "sem_iou": s} for a, s in scores]) == tied


@pytest.mark.parametrize("seconds, scores, higher, front", [
    ([1.0, 2.0, 3.0, 4.0], [0.80, 0.79, 0.85, 0.85], True, [0, 2]),
    ([5.0, 1.0, 3.0], [0.9, 0.7, 0.8], True, [1, 2, 0]),
    ([1.0, 1.0], [0.5, 0.6], True, [1]),
    ([1.0, 2.0], [10.0, 5.0], False, [0, 1]),
    ([], [], True, []),
])
def test_pareto_front(seconds, scores, higher, front):
    assert pareto_front(seconds, scores, higher) == front


def _runs(tmp_path):
    return [load_run(reference_folder(tmp_path, "sam_b")),
            load_run(reference_folder(tmp_path, "mobile_sam", {(640, 0.0): 0.70, (640, 0.05): 0.896})),
            load_run(reference_folder(tmp_path, "tiny_one", {(640, 0.0): 0.60}))]


def test_benchmark_summaries_rank_and_bold_ties(tmp_path):
    rows = benchmark_rows(_runs(tmp_path))
    assert [r["name"] for r in rows] == ["sam_b", "mobile_sam", "tiny_one"]
    md = render_benchmark_md(rows, _runs(tmp_path / "again"), "hbb2obb-optimize -c b.yaml", None, "b.yaml", [])
    lines = [line for line in md.splitlines() if line.startswith("| `")]
    assert lines[0].startswith("| `sam_b` | 1280 | 0.05 | - | **0.90000** ± 0.05000 |")
    assert lines[1].startswith("| `mobile_sam` | 640 | 0.05 | - | **0.89600** ± 0.05000 |")  # within 0.005 of 0.900
    assert lines[2].startswith("| `tiny_one` | 640 | 0 | - | 0.60000 ± 0.05000 | - | - | 100 / 101 | 5.0 s |")
    tex = render_benchmark_tex(rows)
    assert r"\begin{tabular}{lrrrrrrr}" in tex.splitlines()
    assert r"\toprule" in tex and r"\midrule" in tex and r"\bottomrule" in tex
    assert r"  mobile\_sam & 640 & 0.05 & -- & \textbf{0.89600} $\pm$ 0.00500 & -- & -- & 5.0 \\" in tex
    assert r"  tiny\_one & 640 & 0 & -- & 0.60000 $\pm$ 0.00500 & -- & -- & 5.0 \\" in tex


def test_render_benchmark_folder_writes_the_three_documents(tmp_path):
    runs = _runs(tmp_path)
    written = render_benchmark_folder(tmp_path, runs, "cmd", metric="p90_angle_error",
                                      notes=["sam_b: something"])
    assert [p.name for p in written] == ["comparison.png", "summary.md", "summary.tex", "comparison.pdf",
                                         "summary_p90_angle_error.md"]  # no run holds p90: no figure of it
    assert "- sam_b: something" in (tmp_path / "summary.md").read_text()
    assert "No accuracy-against-compute figure: no run recorded 'p90_angle_error'; nothing to compare." in (
        tmp_path / "summary_p90_angle_error.md").read_text()


def test_edge_notes():
    records = [{"a": v, "b": "x"} for v in (1, 2, 3)]
    assert edge_notes(records, ["a", "b"], records[1]) == []
    assert len(edge_notes(records, ["a"], records[0])) == 1
    assert edge_notes(records[:2], ["a"], records[0]) == []


def test_dry_run_text():
    text = render_dry_run([("a", "identity", "3 scale_factor = 3 points", 3, 3, None),
                           ("b", "command", "2 imgsz = 2 points", 2, 0, 1.5)], 12, "Benchmark x")
    assert "a    identity" in text and "complete" in text
    assert "Total: 2 run(s), 5 grid point(s), 3 to measure: 3 conversion(s) of the whole set of 12 frame(s) " \
           "(36 frame conversions)." in text
    assert "nothing was converted or written" in text


def test_plot_metric_names():
    assert check_plot_metric("p90_angle_error") == "p90_angle_error"
    with pytest.raises(UsageError, match=r"unknown plot metric 'orientaton' \(--plot_metric\); choose one of "
                                         r"avg_iou, .*p90_angle_error"):
        check_plot_metric("orientaton")  # the reference's words; no name is close enough to suggest
    with pytest.raises(UsageError, match=r"unknown plot metric 'p90_angle' \(--plot_metric\) "
                                         r"\(did you mean p90_angle_error\?\)"):
        check_plot_metric("p90_angle")
