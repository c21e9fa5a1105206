"""The sweep core: grids, one grid point, executors, incremental results and resume."""

from __future__ import annotations

import math
import os
import shlex
import stat
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml
from shapely.geometry import Polygon, box

from hbb2obb.converters import get_converter
from hbb2obb.errors import InputError, UsageError
from hbb2obb.scoring.evaluate import EvalSettings
from hbb2obb.sweeps.runner import (
    DEFAULT_AXIS_VALUES,
    RESULTS_NAME,
    RUN_CONFIG_NAME,
    EvalSpec,
    Grid,
    ProcessExecutor,
    SweepInputs,
    SweepPlan,
    best_record,
    build_grid,
    check_resumable,
    is_complete,
    make_executor,
    measured_records,
    read_yaml,
    results_document,
    run_config_document,
    run_grid_point,
    run_sweep,
    serial_executor,
    write_yaml_atomic,
)

FAKE = Path(__file__).resolve().parents[1] / "fake_obb_converter.py"
FAKE_TEMPLATE = f"{shlex.quote(sys.executable)} {shlex.quote(str(FAKE))} {{hbb_dir}} {{out_dir}} --sf {{scale_factor}}"

# (frame, class, centre x, centre y, length, breadth, heading in degrees); boxes far apart, so each
# ground-truth box can only match its own prompt and the expected scores need no matcher.
VEHICLES = [
    ("f1", 0, 100.0, 100.0, 60.0, 24.0, 0.0),
    ("f1", 0, 300.0, 120.0, 50.0, 20.0, 12.0),
    ("f1", 2, 200.0, 300.0, 90.0, 30.0, 33.0),
    ("f2", 0, 120.0, 250.0, 40.0, 40.0, 45.0),
    ("f2", 1, 320.0, 320.0, 70.0, 22.0, 80.0),
]


def rotated(cx, cy, length, breadth, heading):
    t = math.radians(heading)
    u, v = np.array([math.cos(t), math.sin(t)]), np.array([-math.sin(t), math.cos(t)])
    return np.array([[cx, cy] + sx * length / 2 * u + sy * breadth / 2 * v
                     for sx, sy in ((-1, -1), (1, -1), (1, 1), (-1, 1))])


@pytest.fixture
def dataset(write_labels):
    files = {}
    for frame, cls, *geometry in VEHICLES:
        corners = rotated(*geometry)
        (x1, y1), (x2, y2) = corners.min(0).tolist(), corners.max(0).tolist()
        files.setdefault(f"gt/{frame}.txt", "")
        files.setdefault(f"hbb/{frame}.txt", "")
        files[f"gt/{frame}.txt"] += f"{cls} " + " ".join(repr(float(v)) for v in corners.ravel()) + "\n"
        files[f"hbb/{frame}.txt"] += f"{cls} {(x1 + x2) / 2!r} {(y1 + y2) / 2!r} {x2 - x1!r} {y2 - y1!r}\n"
    root = write_labels(files)
    return SweepInputs(None, root / "gt", root / "hbb")


def expected_mean_iou(factor: float) -> float:
    """Mean IoU of each ground-truth box and its own prompt scaled by ``factor``, by shapely."""
    ious = []
    for _, _, *geometry in VEHICLES:
        corners = rotated(*geometry)
        (x1, y1), (x2, y2) = corners.min(0), corners.max(0)
        dx, dy = (x2 - x1) * factor, (y2 - y1) * factor
        gt, prompt = Polygon(corners), box(x1 - dx, y1 - dy, x2 + dx, y2 + dy)
        ious.append(gt.intersection(prompt).area / gt.union(prompt).area)
    return float(np.mean(ious))


def plan_for(inputs, folder, converter="identity", options=None, axes=None, settings=EvalSettings()):
    grid = build_grid(get_converter(converter, **(options or {})), axes or {"scale_factors": (0.0, 0.05, 0.1)})
    return SweepPlan("run", Path(folder), converter, options or {}, grid, inputs, EvalSpec(settings))


def test_grid_points_are_the_product_first_axis_outermost():
    grid = Grid((("imgsz", (640, 1280)), ("scale_factor", (0.0, [0.01, 0.02])), ("k", ("a",))))
    assert grid.size == 4 and grid.names == ("imgsz", "scale_factor", "k")
    assert grid.points() == [{"imgsz": 640, "scale_factor": 0.0, "k": "a"},
                             {"imgsz": 640, "scale_factor": [0.01, 0.02], "k": "a"},
                             {"imgsz": 1280, "scale_factor": 0.0, "k": "a"},
                             {"imgsz": 1280, "scale_factor": [0.01, 0.02], "k": "a"}]
    assert grid.describe() == "2 imgsz x 2 scale_factor x 1 k = 4 points"
    assert grid.key({"imgsz": 640.0, "scale_factor": (0.01, 0.02), "k": "a", "avg_iou": 1}) == (640, (0.01, 0.02), "a")
    assert grid.key({"imgsz": 640}) is None
    assert Grid().points() == [{}] and Grid().size == 1


@pytest.mark.parametrize("axes, expected", [
    ({}, {"scale_factor": DEFAULT_AXIS_VALUES["scale_factor"]}),
    ({"scale_factors": [0.0, [0.0, 0.1]]}, {"scale_factor": (0.0, [0.0, 0.1])}),
    ({"scale_factor": 0.05}, {"scale_factor": (0.05,)}),
])
def test_build_grid_for_identity(axes, expected):
    assert dict(build_grid(get_converter("identity"), axes).axes) == expected


@pytest.mark.parametrize("axes, message", [
    ({"imgsz": [640]}, "no parameter 'imgsz'"),
    ({"opening_kernels": [0.1]}, "no parameter 'opening_kernel_percentage'"),
    ({"scale_factors": [0.0], "scale_factor": [0.1]}, "given twice"),
    ({"scale_factors": []}, "no values"),
    ({"scale_factors": [0.1, 0.1]}, "repeats"),
    ({"scale_factors": [0.0, -0.7]}, "greater than -0.5"),
    ({"avg_iou": [1]}, "metric name"),
])
def test_build_grid_rejects_before_running(axes, message):
    with pytest.raises(UsageError, match=message):
        build_grid(get_converter("identity"), axes)


def test_build_grid_for_a_command_template_fills_reference_defaults_and_needs_the_rest():
    converter = get_converter("command", template="echo {out_dir} {imgsz} {scale_factor} {model}")
    grid = build_grid(converter, {"model": ["a", "b"]})
    assert grid.names == ("imgsz", "scale_factor", "model")
    assert grid.size == 3 * 12 * 2
    with pytest.raises(UsageError, match=r"no value: \{model\}"):
        build_grid(converter, {})


def test_run_grid_point_scores_the_conversion(dataset):
    for factor in (0.0, 0.05):
        record = run_grid_point("identity", {}, {"scale_factor": factor}, dataset, EvalSpec())
        assert list(record)[0] == "scale_factor" and record["status"] == "ok"
        assert "class_stats" not in record and "skipped_hbb_lines" not in record and record["execution_time"] >= 0
        assert record["total_matches"] == record["total_gt"] == len(VEHICLES)
        assert record["avg_iou"] == pytest.approx(expected_mean_iou(factor), abs=1e-9)
        assert record["sem_iou"] == pytest.approx(record["std_iou"] / math.sqrt(len(VEHICLES)))
    pair = run_grid_point("identity", {}, {"scale_factor": (0.05, 0.05)}, dataset, EvalSpec())
    assert pair["scale_factor"] == [0.05, 0.05] and pair["avg_iou"] == pytest.approx(expected_mean_iou(0.05))


def test_run_grid_point_failed_and_error_records(dataset, tmp_path):
    failed = run_grid_point("command", {"template": FAKE_TEMPLATE + " --fail_at 0.1"}, {"scale_factor": 0.1},
                            dataset, EvalSpec())
    assert failed["status"] == "failed" and failed["error"].startswith("exit status 3")
    assert "avg_iou" not in failed and failed["scale_factor"] == 0.1
    (tmp_path / "badgt").mkdir()
    (tmp_path / "badgt" / "f1.txt").write_text("0 1 2 3\n")
    broken = SweepInputs(None, tmp_path / "badgt", dataset.hbb_dir)
    error = run_grid_point("identity", {}, {"scale_factor": 0.0}, broken, EvalSpec())
    assert error["status"] == "error" and "f1.txt:1" in error["error"]


@pytest.mark.parametrize("values, best_index", [
    ([0.7, 0.8, 0.8, 0.6], 1),   # a tie: the first in grid order wins
    ([None, 0.5], 1),            # failed points are never best
    ([None], None),
    ([], None),
])
def test_best_record(values, best_index):
    records = [{"p": i, "status": "failed"} if v is None else {"p": i, "avg_iou": v, "status": "ok"}
               for i, v in enumerate(values)]
    best = best_record(records)
    assert (best is None and best_index is None) or best is records[best_index]


def test_results_document_has_no_yaml_aliases(tmp_path):
    records = [{"scale_factor": 0.0, "avg_iou": 0.5, "status": "ok"}]
    write_yaml_atomic(tmp_path / "r.yaml", results_document(records, 1.5))
    text = (tmp_path / "r.yaml").read_text()
    assert "&id" not in text and "*id" not in text
    assert read_yaml(tmp_path / "r.yaml") == {"best_parameters": records[0], "all_results": records,
                                              "model_load_seconds": 0.0, "sweep_seconds": 1.5}
    mode = stat.S_IMODE(os.stat(tmp_path / "r.yaml").st_mode)
    umask = os.umask(0)
    os.umask(umask)
    assert mode == 0o666 & ~umask
    assert [p.name for p in tmp_path.iterdir()] == ["r.yaml"]


def _without_time(document):
    return [{k: v for k, v in r.items() if k != "execution_time"} for r in document["all_results"]]


def test_process_executor_gives_the_same_results_as_serial(dataset, tmp_path):
    axes = {"scale_factors": (0.0, 0.02, 0.05, 0.1)}
    serial = run_sweep(plan_for(dataset, tmp_path / "a", axes=axes), serial_executor)
    pooled = run_sweep(plan_for(dataset, tmp_path / "b", axes=axes), ProcessExecutor(2))
    a, b = read_yaml(tmp_path / "a" / RESULTS_NAME), read_yaml(tmp_path / "b" / RESULTS_NAME)
    assert _without_time(a) == _without_time(b) and len(a["all_results"]) == 4
    assert [r["scale_factor"] for r in b["all_results"]] == [0.0, 0.02, 0.05, 0.1]
    assert serial.best["scale_factor"] == pooled.best["scale_factor"] == a["best_parameters"]["scale_factor"]
    assert a["best_parameters"]["avg_iou"] == pytest.approx(max(expected_mean_iou(f) for f in axes["scale_factors"]))
    assert make_executor(1) is serial_executor and isinstance(make_executor(2), ProcessExecutor)


def test_resume_measures_only_the_missing_points(dataset, tmp_path):
    plan = plan_for(dataset, tmp_path, axes={"scale_factors": (0.0, 0.05, 0.1)})
    stamp = {"measured_with": plan.measured_with}
    previous = {"all_results": [
        {"scale_factor": 0.05, "avg_iou": 0.123, "execution_time": 99.0, "status": "ok", **stamp},
        {"scale_factor": 0.1, "status": "failed", "error": "x", **stamp},       # failed: measured again
        {"scale_factor": 0.3, "avg_iou": 0.9, "status": "ok", **stamp},          # not in the grid any more: dropped
    ], "sweep_seconds": 50.0}
    seen = []
    outcome = run_sweep(plan, serial_executor, previous, lambda record, best: seen.append(record["scale_factor"]))
    assert (outcome.measured, outcome.reused) == (2, 1) and seen == [0.0, 0.1]
    written = read_yaml(tmp_path / RESULTS_NAME)
    assert [r["scale_factor"] for r in written["all_results"]] == [0.0, 0.05, 0.1]
    assert written["all_results"][1]["execution_time"] == 99.0 and written["sweep_seconds"] >= 50.0
    assert is_complete(plan, written)


def test_interrupted_sweep_keeps_the_points_already_measured(dataset, tmp_path):
    plan = plan_for(dataset, tmp_path, axes={"scale_factors": (0.0, 0.05, 0.1)})

    def interrupted(function, calls):
        for index, item in serial_executor(function, calls):
            if index == 2:
                raise KeyboardInterrupt
            yield index, item

    with pytest.raises(KeyboardInterrupt):
        run_sweep(plan, interrupted)
    written = read_yaml(tmp_path / RESULTS_NAME)
    assert [r["scale_factor"] for r in written["all_results"]] == [0.0, 0.05]
    assert not is_complete(plan, written)


def test_unusable_inputs_stop_the_sweep(dataset, tmp_path):
    (tmp_path / "badgt").mkdir()
    (tmp_path / "badgt" / "f1.txt").write_text("0 1 2 3 4 5 6 7 x\n")
    plan = plan_for(SweepInputs(None, tmp_path / "badgt", dataset.hbb_dir), tmp_path / "out")
    with pytest.raises(InputError, match="f1.txt:1"):
        run_sweep(plan)


@pytest.mark.parametrize("factors, statuses, complete", [
    ((0.0, 0.05), ("ok", "ok"), True),
    ((0.05, 0.0), ("ok", "ok"), True),
    ((0.0,), ("ok",), False),
    ((0.0, 0.05, 0.1), ("ok", "ok", "ok"), False),
    ((0.0, 0.05), ("ok", "failed"), False),
    ((), (), False),
])
def test_is_complete_means_exactly_the_grid(dataset, tmp_path, factors, statuses, complete):
    plan = plan_for(dataset, tmp_path, axes={"scale_factors": (0.0, 0.05)})
    document = {"all_results": [{"scale_factor": f, "avg_iou": 0.5, "status": s, "measured_with": plan.measured_with}
                                for f, s in zip(factors, statuses)]}
    assert is_complete(plan, document) is complete
    for record in document["all_results"]:  # the same records measured with other settings: never complete
        record["measured_with"] = {**plan.measured_with, "converter_options": {"img_width": 9}}
    assert not is_complete(plan, document)


def test_check_resumable_names_what_changed(dataset, tmp_path):
    plan = plan_for(dataset, tmp_path)
    run_sweep(plan)
    document = read_yaml(tmp_path / RESULTS_NAME)
    check_resumable(plan, document)
    check_resumable(plan, None)
    stricter = plan_for(dataset, tmp_path, settings=EvalSettings(iou_threshold=0.5))
    with pytest.raises(UsageError, match=r"3 record\(s\).*other evaluation.*evaluation.iou_threshold 0.1 -> 0.5"):
        check_resumable(stricter, document)
    assert measured_records(stricter, document) == {} and not is_complete(stricter, document)
    with open(dataset.gt_dir / "f1.txt", "a") as handle:  # the ground truth corrected in place
        handle.write("0 1 1 5 1 5 4 1 4\n")
    with pytest.raises(UsageError, match="the files in gt_dir"):
        check_resumable(plan_for(dataset, tmp_path), document)
    old = {"all_results": [{k: v for k, v in r.items() if k != "measured_with"} for r in document["all_results"]]}
    with pytest.raises(UsageError, match="not recorded"):  # written before records said what they were measured with
        check_resumable(plan, old)
    write_yaml_atomic(tmp_path / RUN_CONFIG_NAME, run_config_document(plan, "cmd", 1))
    config = yaml.safe_load((tmp_path / RUN_CONFIG_NAME).read_text())
    assert config["scale_factors"] == [0.0, 0.05, 0.1] and config["converter"] == "identity"
    assert config["grid_points"] == 3 and config["system_metadata"]["software"]["python"]


def test_broken_prompt_lines_are_counted_in_the_record(dataset):
    with open(dataset.hbb_dir / "f1.txt", "a") as handle:
        handle.write("0 1 2 three 4\n")
    record = run_grid_point("identity", {}, {"scale_factor": 0.0}, dataset, EvalSpec())
    assert record["skipped_hbb_lines"] == 1 and record["total_pred"] == len(VEHICLES)


def test_unswept_standard_axes_take_the_converters_own_defaults():
    """The image converter's window is ~100 px: the reference's SAM imgsz (640-1280) would be rejected."""
    from hbb2obb.converters import get_converter
    from hbb2obb.sweeps.runner import DEFAULT_AXIS_VALUES, build_grid

    image = get_converter("image")
    grid = dict(build_grid(image, {"scale_factors": [0.0, 0.02]}).axes)
    assert grid["imgsz"] == (image.parameters["imgsz"],)
    assert grid["opening_kernel_percentage"] == (image.parameters["opening_kernel_percentage"],)
    assert grid["scale_factor"] == (0.0, 0.02)
    identity = dict(build_grid(get_converter("identity"), {}).axes)
    assert identity["scale_factor"] == DEFAULT_AXIS_VALUES["scale_factor"]


@pytest.mark.parametrize("sizes", [(1001, 1000), (10_000, 10_000, 10_000)])
def test_a_grid_too_large_to_sweep_is_refused_before_its_points_are_made(sizes):
    # every point was made and checked first: 6 million points took 30 s and 1.3 GB, 10**12 never ended
    names = "abc"[:len(sizes)]
    converter = get_converter("command", template="echo {out_dir} " + " ".join(f"{{{n}}}" for n in names))
    axes = {name: list(range(size)) for name, size in zip(names, sizes)}
    with pytest.raises(UsageError, match=f"{math.prod(sizes)} points, more than a sweep takes"):
        build_grid(converter, axes)
