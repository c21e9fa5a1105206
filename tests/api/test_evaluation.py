"""The Python API scores as ``hbb2obb-eval`` does: same metric dict, detection metrics and match table,
from files or from frames in memory."""

from __future__ import annotations

import csv
import math
import sys

import numpy as np
import pytest
import yaml
from click.testing import CliRunner

from hbb2obb.api.evaluation import evaluate
from hbb2obb.api.labels import read_labels
from hbb2obb.boxes import Boxes
from hbb2obb.cli.eval import main as eval_main
from hbb2obb.errors import InputError, UsageError
from hbb2obb.report.pairs import COLUMNS
from hbb2obb.scoring.evaluate import EvalSettings

from conftest import rect


def run_cli(*args):
    result = CliRunner().invoke(eval_main, [str(a) for a in args] + ["-nb"])
    assert result.exit_code == 0, result.output
    return result


def same_pairs(frame_table, csv_path):
    """The API's match table against the --pairs CSV, cell by cell (an empty cell: absent)."""
    with open(csv_path, newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == len(frame_table)
    for name in COLUMNS:
        ours = list(frame_table[name])
        for row, (cell, value) in enumerate(zip((r[name] for r in rows), ours)):
            where = f"{name} row {row}"
            if cell == "":
                assert (value == -1 if isinstance(value, (int, np.integer)) and not isinstance(value, bool)
                        else (not frame_table["is_gt"][row]) if name in ("edge", "difficult") else
                        math.isnan(value)), where
            elif name == "frame":
                assert cell == value, where
            elif name in ("edge", "difficult"):
                assert int(cell) == int(value), where
            else:
                assert float(cell) == pytest.approx(float(value), rel=1e-12, abs=1e-12), where


def test_songdo_in_memory_matches_the_command_on_files(sample_dir, tmp_path):
    """Done when: the shared sample through the API from in-memory Boxes gives the metric dict,
    detection metrics and pairs of ``hbb2obb-eval -o --pairs`` on the files."""
    gt_dir, pred_dir = sample_dir / "labels_obb_gt", sample_dir / "labels_obb_sam_b"
    images, names = sample_dir / "images", sample_dir / "classes.yaml"
    run_cli(gt_dir, pred_dir, "-i", images, "-mp", names, "-o", tmp_path / "cli.yaml", "--pairs", tmp_path / "p.csv")
    gt = read_labels(gt_dir, image_sizes=images, label_map=names)
    pred = read_labels(pred_dir, image_sizes=images, label_map=names, strict=False)
    assert all(isinstance(boxes, Boxes) for boxes in gt.values()) and sorted(gt) == ["00164", "04433"]
    # in memory from here on: plain dicts of Boxes (the frame sizes given as the images' folder)
    run = evaluate(dict(gt), dict(pred), label_map=names, image_sizes=images)
    from hbb2obb.report.serialize import write_metrics

    write_metrics(run.metrics, tmp_path / "api.yaml")
    cli = yaml.safe_load((tmp_path / "cli.yaml").read_text())
    assert yaml.safe_load((tmp_path / "api.yaml").read_text()) == cli
    assert cli["total_matches"] == 122 and run.metrics["total_matches"] == 122
    for key, value in run.detection.items():
        if key != "class_stats":
            assert cli[key] == yaml.safe_load(yaml.safe_dump(value)), key
    for class_id, values in run.detection["class_stats"].items():
        assert {k: cli["class_stats"][class_id][k] for k in values} == yaml.safe_load(yaml.safe_dump(values))
    same_pairs(run.pairs, tmp_path / "p.csv")
    assert run.warnings == [] and run.skipped == ()


def scored_set(root, n_frames=4):
    """Ground truth and scored predictions, one prediction file missing and one broken line."""
    (root / "gt").mkdir()
    (root / "pred").mkdir()
    for f in range(n_frames):
        gt = [rect(30 * k, 10 * f, 20, 10, cls=k % 2) for k in range(6)]
        (root / "gt" / f"f{f}.txt").write_text("".join(line + "\n" for line in gt))
        if f == n_frames - 1:
            continue  # a frame the detector wrote nothing for
        pred = [rect(30 * k + (k % 3), 10 * f, 20, 10, cls=k % 2) + f" {0.2 + 0.1 * ((k + f) % 7):.2f}"
                for k in range(6) if (k + f) % 4]
        if f == 1:
            pred.append("0 1 2 3 x 5 6 7 8 0.5")
        (root / "pred" / f"f{f}.txt").write_text("".join(line + "\n" for line in pred))
    return root / "gt", root / "pred"


def test_scored_predictions_in_memory_give_the_files_detection_metrics(tmp_path):
    gt_dir, pred_dir = scored_set(tmp_path)
    result = CliRunner().invoke(eval_main, [str(gt_dir), str(pred_dir), "-nb", "-o", str(tmp_path / "cli.yaml"),
                                            "--pairs", str(tmp_path / "p.csv")])
    assert result.exit_code == 0, result.output
    cli = yaml.safe_load((tmp_path / "cli.yaml").read_text())
    gt, pred = read_labels(gt_dir), read_labels(pred_dir, strict=False)
    run = evaluate(gt, pred)
    assert run.metrics["detection_scored"] is True and cli["detection_scored"] is True
    from hbb2obb.report.serialize import write_metrics

    write_metrics(run.metrics, tmp_path / "api.yaml")
    assert (tmp_path / "api.yaml").read_text() == (tmp_path / "cli.yaml").read_text()  # NaN == NaN as text
    # the frame without predictions: warned, skipped by the matching keys, its boxes missed by AP
    assert [w.kind for w in run.warnings].count("missing prediction file") == 1
    assert cli["missing_pred_files"] == 1 and run.detection["detection_frames_without_predictions"] == 1
    # the broken prediction line: skipped, counted and listed as data
    assert run.metrics["skipped_pred_lines"] == 1
    assert [(p.path.name, p.line) for p in run.skipped] == [("f1.txt", 6)]  # five boxes, then the broken line
    same_pairs(run.pairs, tmp_path / "p.csv")


def test_settings_defaults_are_the_commands():
    from hbb2obb.cli.options import SETTINGS_NAMES

    context = eval_main.make_context("hbb2obb-eval", ["gt", "pred"])
    assert EvalSettings(**{name: context.params[name] for name in SETTINGS_NAMES}) == EvalSettings()


def test_a_folder_beside_frames_in_memory(tmp_path):
    gt_dir, pred_dir = scored_set(tmp_path)
    files = evaluate(gt_dir, pred_dir)
    mixed = evaluate(gt_dir, read_labels(pred_dir, strict=False))
    assert repr(mixed.metrics) == repr(files.metrics)
    assert mixed.metrics["skipped_pred_lines"] == 1  # the line read_labels skipped (Frames.problems) counts


def test_bad_ground_truth_in_memory_raises_and_bad_predictions_are_skipped():
    good = Boxes([[[0, 0], [10, 0], [10, 5], [0, 5]]], class_id=[0])
    broken = Boxes([[[0, 0], [10, 0], [10, 5], [0, 5]], [[0, 0], [np.nan, 0], [10, 5], [0, 5]]], class_id=[0, 0])
    with pytest.raises(InputError, match="ground truth frame a: box 2"):
        evaluate({"a": broken}, {"a": good})
    run = evaluate({"a": good}, {"a": broken})
    assert run.metrics["total_pred"] == 1 and run.metrics["skipped_pred_lines"] == 1
    assert run.skipped[0].line == 2 and "broken prediction file" in [w.kind for w in run.warnings]
    with pytest.raises(InputError, match="nothing was scored"):
        evaluate({"a": good}, {"a": broken[1:]})
    with pytest.raises(UsageError, match="expected Boxes"):
        evaluate({"a": [[0, 0]]}, {"a": good})
    with pytest.raises(UsageError, match="unknown setting"):
        evaluate({"a": good}, {"a": good}, iou_treshold=0.5)
    with pytest.raises(UsageError, match="iou threshold"):
        evaluate({"a": good}, {"a": good}, iou_threshold=1.5)
    with pytest.raises(UsageError, match="not both"):
        evaluate({"a": good}, {"a": good}, EvalSettings(), iou_threshold=0.5)


def test_in_memory_frames_follow_the_missing_prediction_policies():
    box = Boxes([[[0, 0], [10, 0], [10, 5], [0, 5]]], class_id=[0], score=[0.8])
    gt, pred = {"a": box, "b": box}, {"a": box, "c": box}
    run = evaluate(gt, pred)
    assert run.metrics["frames_scored"] == 1 and run.metrics["missing_pred_files"] == 1
    assert run.metrics["orphan_pred_files"] == 1
    # the skipped frame's box is a miss for the detection metrics, as for files
    assert run.detection["recall"] == pytest.approx(0.5)
    assert evaluate(gt, pred, missing_pred="empty").metrics["total_gt"] == 2
    with pytest.raises(InputError, match="no predictions"):
        evaluate(gt, pred, missing_pred="error")


def test_pairs_are_a_structured_array_without_pandas(monkeypatch):
    box = Boxes([[[0, 0], [10, 0], [10, 5], [0, 5]]], class_id=[0], line=[3])
    far = Boxes([[[50, 0], [60, 0], [60, 5], [50, 5]]], class_id=[1], line=[7])
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas now fails
    pairs = evaluate({"a": box}, {"a": far}).pairs
    assert isinstance(pairs, np.ndarray) and pairs.dtype.names[:3] == ("frame", "gt_line", "pred_line")
    assert list(pairs["frame"]) == ["a", "a"] and list(pairs["gt_line"]) == [3, -1]
    assert list(pairs["pred_line"]) == [-1, 7] and np.isnan(pairs["iou"]).all()


def test_difficult_side_cars_beside_ground_truth_files_count_with_predictions_in_memory(tmp_path):
    """``NAME.dota`` beside ``NAME.txt`` gives the ground truth's difficult flags whether the
    predictions are files or frames in memory: the API's pairs, metric dict and analysis are the
    commands' on the same files."""
    from hbb2obb.analysis.reference_layout import analysis_file, reference_keys
    from hbb2obb.api.workflows import analyze
    from hbb2obb.cli.analyze import main as analyze_main

    for side in ("gt", "pred"):
        (tmp_path / side).mkdir()
    (tmp_path / "gt" / "a.txt").write_text(rect(0, 0, 40, 20) + "\n" + rect(100, 100, 40, 20) + "\n")
    (tmp_path / "gt" / "a.dota").write_text("0 0 40 0 40 20 0 20 car 1\n100 100 140 100 140 120 100 120 car 0\n")
    (tmp_path / "pred" / "a.txt").write_text(rect(1, 0, 40, 20) + " 0.9\n" + rect(300, 300, 40, 20) + " 0.8\n")
    (tmp_path / "m.yaml").write_text("0: car\n")
    gt_dir, names = tmp_path / "gt", tmp_path / "m.yaml"
    run_cli(gt_dir, tmp_path / "pred", "-mp", names, "-o", tmp_path / "cli.yaml", "--pairs", tmp_path / "p.csv")
    result = CliRunner().invoke(analyze_main, [str(gt_dir), str(tmp_path / "pred"), "-mp", str(names), "-nb",
                                               "-o", str(tmp_path / "analysis")])
    assert result.exit_code == 0, result.output
    pred = read_labels(tmp_path / "pred", label_map=names, strict=False)
    run = evaluate(gt_dir, pred, label_map=names)
    assert run.pairs["difficult"][:2].tolist() == [True, False]  # the side-car's flags, box for box
    same_pairs(run.pairs, tmp_path / "p.csv")
    from hbb2obb.report.serialize import write_metrics

    write_metrics(run.metrics, tmp_path / "api.yaml")
    assert (tmp_path / "api.yaml").read_text() == (tmp_path / "cli.yaml").read_text()
    found = analyze(gt_dir, pred, label_map=names)
    by_flag = next(cut for cut in found.data["cuts"] if cut["key"] == "difficult")
    assert [group["boxes"] for group in by_flag["groups"]] == [1, 0]  # the matched box is the difficult one
    reference = reference_keys(run.result.table, found.properties, None, {0: "car"}, ())
    written = yaml.safe_load((tmp_path / "analysis" / "analysis.yaml").read_text())
    assert yaml.safe_load(yaml.safe_dump(analysis_file(found.data, reference), sort_keys=False)) == written
