"""No plausible wrong number (issue 13): each case used to print one with exit 0, or a traceback.

Run through hbb2obb-eval as a CI job runs it (exit status, stderr) and through evaluate_obb.
"""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
import yaml
from click.testing import CliRunner

from hbb2obb.cli.eval import main
from hbb2obb.scoring.metric_dict import evaluate_obb

from conftest import rect, shapely_iou

W, H = 1000, 500
REFERENCE_CLASS_KEYS = ["matches", "gt_total", "pred_total", "iou_sum", "iou_values", "angle_errors"]


def run(*args):
    result = CliRunner().invoke(main, [str(a) for a in args])
    return result.exit_code, result.stdout, result.stderr


def metrics_of(*args):
    code, out, err = run(*args, "--json", "-nb")
    assert code == 0, err
    return json.loads(out), err


def box_line(corners, cls=0):
    return f"{cls} " + " ".join(f"{v:.6f}" for v in np.asarray(corners, float).reshape(-1))


# A rotated box at the right edge of a 1000 x 500 frame: its fitted corner pokes past x = 1.0.
EDGE_BOX = np.array([[950.0, 200.0], [1000.4, 230.0], [985.0, 255.0], [934.6, 225.0]])


def test_normalized_predictions_past_the_edge_are_scaled(write_labels):
    gt = box_line(EDGE_BOX) + "\n" + rect(100, 100, 40, 20) + "\n"
    pred = (
        box_line(EDGE_BOX / [W, H])
        + "\n"
        + box_line(np.array([[100, 100], [140, 100], [140, 120], [100, 120]]) / [W, H])
    )
    root = write_labels({"gt/a.txt": gt, "pred/a.txt": pred + "\n"})
    metrics, err = metrics_of(root / "gt", root / "pred", "-iw", W, "-ih", H)
    assert metrics["total_matches"] == 2  # the 1.0004 corner used to make the file read as pixels: 0 matches
    assert metrics["avg_iou"] == pytest.approx(1.0, abs=1e-9)
    assert metrics["p90_angle_error"] == pytest.approx(0.0, abs=1e-6)
    assert "normalized" not in err


def test_normalized_against_pixels_without_a_size_warns_once(write_labels):
    files = {}
    for name in ("a", "b"):
        files[f"gt/{name}.txt"] = box_line(EDGE_BOX) + "\n"
        files[f"pred/{name}.txt"] = box_line(EDGE_BOX / [W, H]) + "\n"
    root = write_labels(files)
    metrics, err = metrics_of(root / "gt", root / "pred")
    assert metrics["total_matches"] == 0
    assert err.count("normalized") == 1 and "absolute" in err


def test_a_side_mixing_normalized_and_pixel_files_is_warned_about(write_labels):
    root = write_labels({
        "gt/a.txt": box_line(EDGE_BOX) + "\n", "pred/a.txt": box_line(EDGE_BOX) + "\n",
        "gt/b.txt": box_line(EDGE_BOX) + "\n", "pred/b.txt": box_line(EDGE_BOX / [W, H]) + "\n",
    })
    metrics, err = metrics_of(root / "gt", root / "pred", "-iw", W, "-ih", H)
    assert metrics["total_matches"] == 2  # both scaled where normalized
    assert "predictions mix normalized and pixel files (normalized: b.txt, pixels: a.txt)" in err


@pytest.mark.parametrize("side", ["gt", "pred"])
def test_a_normalized_line_among_pixel_lines_is_warned_about(write_labels, side):
    """The file reads as pixels (one value over 1), so its normalized line is a box under a pixel
    at the frame's corner: a miss or a spurious box nobody would find without a word."""
    other = "pred" if side == "gt" else "gt"
    root = write_labels({
        f"{side}/a.txt": box_line(EDGE_BOX) + "\n" + box_line(EDGE_BOX / [W, H]) + "\n",
        f"{other}/a.txt": box_line(EDGE_BOX) + "\n",
    })
    metrics, err = metrics_of(root / "gt", root / "pred", "-iw", W, "-ih", H)
    assert metrics["total_matches"] == 1 and metrics[f"total_unmatched_{side}"] == 1
    assert (f"1 box(es) in files of pixel coordinates look normalized (no coordinate beyond 2; first: "
            f"{root / side / 'a.txt'}:2)") in err
    clean, err = metrics_of(root / other, root / other)
    assert "look normalized" not in err


def test_concave_quads_are_scored_exactly_and_counted(write_labels):
    arrowhead = np.array([[100.0, 100.0], [140.0, 120.0], [180.0, 100.0], [140.0, 180.0]])
    square = np.array([[100.0, 100.0], [180.0, 100.0], [180.0, 180.0], [100.0, 180.0]])
    root = write_labels({"gt/a.txt": box_line(arrowhead) + "\n", "pred/a.txt": box_line(square) + "\n"})
    metrics, err = metrics_of(root / "gt", root / "pred")
    expected = shapely_iou(arrowhead, square)
    assert expected == pytest.approx(0.375)  # its hull, a triangle, would score 0.5
    assert metrics["avg_iou"] == pytest.approx(expected, abs=1e-12)
    assert metrics["concave_boxes"] == 1 and metrics["reordered_boxes"] == 0
    assert "concave" in err


@pytest.mark.parametrize("side", ["gt", "pred"])
@pytest.mark.parametrize("line, reason", [
    ("0 1e120 1e120 4e120 1e120 4e120 3e120 1e120 3e120", "out of range"),
    (f"{2**70} 10 10 50 10 50 30 10 30", "class id is out of range"),
    ("0 1_00 10 50 10 50 30 10 30", "not a number"),
])
def test_extreme_numbers_are_broken_lines(write_labels, side, line, reason):
    good = rect(10, 10, 40, 20)
    files = {"gt/a.txt": good + "\n", "pred/a.txt": good + "\n"}
    files[f"{side}/a.txt"] = good + "\n" + line + "\n"
    root = write_labels(files)
    code, out, err = run(root / "gt", root / "pred", "--json", "-nb")
    assert "Traceback" not in err and "RuntimeWarning" not in err
    if side == "gt":
        assert code == 2 and "a.txt:2: " in err and reason in err
    else:
        assert code == 0 and "a.txt:2: " in err and reason in err
        assert json.loads(out)["skipped_pred_lines"] == 1


def test_bad_bytes_in_a_prediction_skip_the_line_only(write_labels):
    good = rect(10, 10, 40, 20) + "\n"
    root = write_labels({"gt/a.txt": good, "pred/a.txt": good.encode() + b"0 \xe9\xe9 1 2\n",
                         "gt/b.txt": good, "pred/b.txt": good})
    metrics, err = metrics_of(root / "gt", root / "pred")
    assert metrics["total_matches"] == 2 and metrics["skipped_pred_lines"] == 1
    assert "a.txt:2: not UTF-8" in err
    root = write_labels({"gt/a.txt": good.encode() + b"\xff\n"})
    code, _, err = run(root / "gt", root / "pred", "-nb")
    assert code == 2 and "a.txt:2: not UTF-8" in err


@pytest.mark.parametrize("contents", [{}, {"labels.json": "{}"}, {"0001.jpg": "x"}], ids=["empty", "json", "images"])
def test_nothing_to_score_is_an_error(write_labels, tmp_path, contents):
    (tmp_path / "gt").mkdir()
    (tmp_path / "pred").mkdir()
    write_labels({f"gt/{name}": text for name, text in contents.items()} | {"pred/a.txt": rect(1, 1, 5, 5) + "\n"})
    code, out, err = run(tmp_path / "gt", tmp_path / "pred", "--require", "total_unmatched_gt==0", "-nb")
    assert code == 2 and f"no label files in {tmp_path / 'gt'}" in err and out == ""


def test_upper_case_suffixes_are_read_and_broken_links_named(write_labels, tmp_path):
    good = rect(10, 10, 40, 20) + "\n"
    root = write_labels({"gt/A.TXT": good, "pred/A.txt": good, "gt/b.txt": good})
    os.symlink(tmp_path / "nowhere.txt", root / "pred" / "b.txt")
    metrics, err = metrics_of(root / "gt", root / "pred", "--missing_pred", "empty")
    assert metrics["total_gt"] == 2 and metrics["total_matches"] == 1
    assert "b.txt is a broken symbolic link" in err
    os.symlink(tmp_path / "nowhere.txt", root / "gt" / "c.txt")
    code, _, err = run(root / "gt", root / "pred", "-nb")
    assert code == 2 and "c.txt: broken symbolic link" in err


@pytest.mark.parametrize("args, problem", [
    (["-iw", "nan", "-ih", "500"], "--img_width"),
    (["-iw", "inf", "-ih", "500"], "--img_width"),
    (["-iw", "0", "-ih", "500"], "--img_width"),
    (["-iw", "1000", "-ih", "-5"], "--img_width"),
    (["-et", "nan"], "edge tolerance"),
])
def test_frame_sizes_must_be_positive_finite(write_labels, args, problem):
    root = write_labels({"gt/a.txt": rect(10, 10, 40, 20) + "\n", "pred/a.txt": rect(10, 10, 40, 20) + "\n"})
    code, _, err = run(root / "gt", root / "pred", *args, "-nb")
    assert code == 2 and problem in err and "Traceback" not in err


def test_a_gate_bound_may_end_in_a_dot(write_labels):
    root = write_labels({"gt/a.txt": rect(10, 10, 40, 20) + "\n", "pred/a.txt": rect(10, 10, 40, 20) + "\n"})
    code, out, err = run(root / "gt", root / "pred", "--require", "p90_angle_error<=5.", "-nb")
    assert code == 0, err
    assert "pass  p90_angle_error<=5." in out


@pytest.mark.parametrize("map_text, problem", [
    ("0: Car\n0: Bus\n", ":2: label map key 0 is given twice"),
    ("0: Car\n1: car\n", "class name 'car' is given to ids 0 and 1"),
])
def test_label_map_problems_stop_the_run(write_labels, map_text, problem):
    root = write_labels({"gt/a.txt": rect(10, 10, 40, 20) + "\n", "pred/a.txt": rect(10, 10, 40, 20) + "\n",
                         "classes.yaml": map_text})
    code, _, err = run(root / "gt", root / "pred", "-mp", root / "classes.yaml", "-nb")
    assert code == 2 and problem in err and "classes.yaml" in err
    code, _, err = run(root / "gt", root / "pred", "-mp", root, "-nb")
    assert code == 2 and "is a folder" in err and "Traceback" not in err


def test_class_stats_carry_the_reference_keys_everywhere(write_labels):
    gt = rect(10, 10, 40, 20) + "\n" + rect(100, 100, 30, 30, cls=1) + "\n" + rect(200, 10, 40, 20) + "\n"
    pred = rect(12, 10, 40, 20) + "\n" + rect(100, 100, 30, 30, cls=1) + "\n" + rect(201, 10, 40, 20) + "\n"
    root = write_labels({"gt/a.txt": gt, "pred/a.txt": pred, "classes.yaml": "0: Car\n1: Bus\n"})
    metrics, _ = metrics_of(root / "gt", root / "pred")
    api = evaluate_obb(root / "gt", root / "pred")
    out = root / "metrics.yaml"
    code, _, err = run(root / "gt", root / "pred", "-mp", root / "classes.yaml", "-o", out, "-nb")
    assert code == 0, err
    written = yaml.safe_load(out.read_text())
    for stats in (metrics["class_stats"]["0"], api["class_stats"][0], written["class_stats"][0]):
        assert [k for k in REFERENCE_CLASS_KEYS if k in stats] == REFERENCE_CLASS_KEYS
        assert stats["matches"] == 2 and stats["iou_values"] == stats["ious"]
        assert stats["iou_sum"] == pytest.approx(38 / 42 + 39 / 41, abs=1e-12)
        assert len(stats["angle_errors"]) == 2
    assert written["class_names"] == {0: "Car", 1: "Bus"}
    assert "class_names" not in metrics  # no map, no names


def test_pixel_boxes_at_the_frame_corner_are_not_taken_for_normalized_ones(write_labels):
    """Only a box with every coordinate within 2 looks normalized, whichever corner comes first."""
    near = np.array([[0.5, 0.5], [1.5, 0.5], [1.5, 40.0], [0.5, 40.0]])  # first corner within 2, the rest not
    unit = np.array([[0.5, 1.0], [1.5, 1.0], [1.5, 1.5], [0.5, 1.5]])
    late = np.array([[30.0, 0.5], [1.5, 0.5], [1.5, 1.5], [0.5, 1.5]])  # only the first corner beyond 2
    lines = "".join(box_line(box) + "\n" for box in (EDGE_BOX, near, late, unit, unit))
    root = write_labels({"gt/a.txt": lines, "pred/a.txt": lines})
    _, err = metrics_of(root / "gt", root / "pred", "-iw", W, "-ih", H)
    assert (f"4 box(es) in files of pixel coordinates look normalized (no coordinate beyond 2; first: "
            f"{root / 'gt' / 'a.txt'}:4)") in err
