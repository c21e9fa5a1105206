"""hbb2obb-eval's detection metrics as a user meets them: scored folders, DOTA submissions, gates, figures."""

import json

import pytest
from click.testing import CliRunner

from hbb2obb.cli.eval import main

from conftest import rect

# Frame a: two cars; detections: a hit (0.9), a miss (0.8), a hit (0.7). Frame b: no detections
# at all (an empty file), one bus that is never found.
GT_A = rect(10, 10, 40, 20) + "\n" + rect(100, 100, 40, 20) + "\n"
GT_B = rect(300, 300, 80, 40, cls=1) + "\n"
PRED_A = (rect(10, 10, 40, 20) + " 0.9\n" + rect(200, 200, 40, 20) + " 0.8\n" + rect(100, 100, 40, 20) + " 0.7\n")
# COCO, class car: hits at recall .5 and 1 with precision 1 and 2/3 -> 101-point AP
CAR_AP = (51 + 50 * 2 / 3) / 101
CAR_VOC07 = (6 + 5 * 2 / 3) / 11  # levels 0 ... 0.5 at precision 1, 0.6 ... 1.0 at 2/3
CAR_VOC = 0.5 * 1 + 0.5 * 2 / 3


def run(*args):
    result = CliRunner().invoke(main, [str(a) for a in args])
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def scored(write_labels):
    return write_labels({"gt/a.txt": GT_A, "gt/b.txt": GT_B, "pred/a.txt": PRED_A, "pred/b.txt": "",
                         "classes.yaml": "0: car\n1: bus\n"})


def metrics_of(*args):
    code, out, err = run(*args, "-nb", "--json")
    assert code == 0, err
    return json.loads(out)


def test_scored_predictions_give_ap_by_both_rules(scored):
    m = metrics_of(scored / "gt", scored / "pred")
    assert m["detection_scored"] is True  # the empty prediction file of frame b does not drop the scores
    car, bus = m["class_stats"]["0"], m["class_stats"]["1"]
    assert car["ap50"] == pytest.approx(CAR_AP, abs=1e-12)
    assert car["dota_ap50"] == pytest.approx(CAR_VOC07, abs=1e-12)
    assert bus["ap50"] == 0.0 and bus["dota_ap50"] == 0.0  # ground truth, no detections
    assert m["map50"] == pytest.approx(CAR_AP / 2, abs=1e-12)
    assert m["dota_map50"] == pytest.approx(CAR_VOC07 / 2, abs=1e-12)
    assert m["map50_95"] == pytest.approx(CAR_AP / 2, abs=1e-12)  # exact boxes: every threshold alike
    assert m["mar_100"] == pytest.approx(1 / 2, abs=1e-12)  # car: both found; bus: none
    # the F1 maximum is at 0.7: 2 hits, 1 miss, 3 boxes
    assert m["conf_threshold"] == 0.7 and m["conf_threshold_chosen"] == "max_f1"
    assert (m["precision"], m["recall"], m["f1"]) == pytest.approx((2 / 3, 2 / 3, 2 / 3))
    # the reference's keys are untouched by the new ones
    assert m["total_matches"] == 2 and m["total_gt"] == 3


def test_all_point_rule_and_a_given_confidence(scored):
    m = metrics_of(scored / "gt", scored / "pred", "--ap_rule", "voc", "--conf", "0.85")
    assert m["class_stats"]["0"]["dota_ap50"] == pytest.approx(CAR_VOC, abs=1e-12)
    assert m["ap_rule"] == "voc"
    assert m["conf_threshold"] == 0.85 and m["conf_threshold_chosen"] == "given"
    assert (m["precision"], m["recall"]) == pytest.approx((1.0, 1 / 3))


def test_report_and_confusion_matrix(scored):
    code, out, err = run(scored / "gt", scored / "pred", "-mp", scored / "classes.yaml", "-nb")
    assert code == 0, err
    assert "=== Detection Metrics ===" in out and "=== Confusion Matrix ===" in out
    assert f"AP50 {CAR_AP / 2:.4f}" in out
    assert "At confidence 0.7000 (maximizes F1)" in out
    rows = {line.split()[0]: line.split()[1:] for line in out.split("=== Confusion Matrix ===")[1].splitlines()[2:]
            if line.strip()}
    assert rows["car"] == ["2", "0", "0"] and rows["bus"] == ["0", "0", "1"] and rows["background"] == ["1", "0", "0"]


def test_gates_on_detection_keys(scored):
    code, out, _ = run(scored / "gt", scored / "pred", "-nb", "--require", "map50>=0.4", "--require", "f1>0.6")
    assert code == 0 and "pass  map50>=0.4" in out
    code, out, _ = run(scored / "gt", scored / "pred", "-nb", "--require", "dota_map50>=0.9")
    assert code == 1 and "FAIL  dota_map50>=0.9" in out


def test_without_scores_precision_recall_and_a_note(write_labels):
    root = write_labels({"gt/a.txt": GT_A, "pred/a.txt": rect(10, 10, 40, 20) + "\n" + rect(0, 200, 5, 5) + "\n"})
    m = metrics_of(root / "gt", root / "pred")
    assert m["detection_scored"] is False and "map50" not in m
    assert (m["precision"], m["recall"], m["f1"]) == pytest.approx((0.5, 0.5, 0.5))
    code, out, _ = run(root / "gt", root / "pred", "-nb")
    assert "Note: AP needs a confidence per prediction" in out
    code, out, err = run(root / "gt", root / "pred", "-nb", "--require", "map50>=0.5")
    assert (
        code == 2
        and "unknown metric 'map50' (AP keys need a confidence column in the predictions)" in err
        and "Traceback" not in err
    )


def test_dota_task1_submission_scores_like_the_same_detections_per_frame(scored, write_labels):
    task1 = {
        "task1/Task1_car.txt": "a 0.9 10 10 50 10 50 30 10 30\na 0.8 200 200 240 200 240 220 200 220\n"
                               "a 0.7 100 100 140 100 140 120 100 120\nghost 0.5 0 0 1 0 1 1 0 1\n"
                               "a 0.6 1 2 3\n",
        "task1/Task1_bus.txt": "",
    }
    write_labels(task1)
    per_frame = metrics_of(scored / "gt", scored / "pred")
    code, out, err = run(scored / "gt", scored / "task1", "-mp", scored / "classes.yaml", "-nb", "--json")
    assert code == 0, err
    m = json.loads(out)
    for key in ("map50", "map50_95", "dota_map50", "precision", "recall", "conf_threshold", "total_matches"):
        assert m[key] == per_frame[key], key
    assert "Task1_car.txt:5: expected 10 fields" in err  # the broken row: skipped and named
    assert "detections of image ghost have no ground-truth file" in err
    assert m["skipped_pred_lines"] == 1 and m["orphan_pred_files"] == 1
    code, _, err = run(scored / "gt", scored / "task1", "-nb")
    assert code == 2 and "label map" in err and "Traceback" not in err


def test_dota_rows_with_a_score_column(write_labels):
    root = write_labels({
        "gt/a.txt": "10 10 50 10 50 30 10 30 car 0\n100 100 140 100 140 120 100 120 car 1\n",
        "pred/a.txt": "10 10 50 10 50 30 10 30 car 0.9\n100 100 140 100 140 120 100 120 car 0.8\n"
                      "300 300 340 300 340 320 300 320 car 0.95\n",
        "classes.yaml": "0: car\n",
    })
    m = metrics_of(root / "gt", root / "pred", "-mp", root / "classes.yaml")
    assert m["detection_scored"] is True
    # the difficult box and the detection on it count for nothing: one box, found after one miss
    assert m["class_stats"]["0"]["dota_ap50"] == pytest.approx(0.5)  # every level: recall 1 at precision 1/2
    assert m["recall"] == 1.0


def test_plots_are_written(scored, tmp_path):
    code, _, err = run(scored / "gt", scored / "pred", "-nb", "--plots", tmp_path / "figures")
    assert code == 0, err
    for name in ("confusion_matrix.png", "pr_curves.png"):
        assert (tmp_path / "figures" / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("args, message", [
    (["--max_dets", "5"], "--max_dets must be an integer of at least 10"),
    (["--no_detection", "--plots", "x"], "cannot go with --no_detection"),
])
def test_bad_detection_options(scored, args, message):
    code, _, err = run(scored / "gt", scored / "pred", "-nb", *args)
    assert code == 2 and message in err


def test_no_detection_keeps_the_reference_keys_only(scored):
    m = metrics_of(scored / "gt", scored / "pred", "--no_detection")
    assert "map50" not in m and "precision" not in m and "confusion_matrix" not in m


def test_python_api_gives_the_same_detection_keys(scored):
    from hbb2obb.scoring.metric_dict import evaluate_obb

    api = evaluate_obb(scored / "gt", scored / "pred", ap_rule="voc")
    cli = metrics_of(scored / "gt", scored / "pred", "--ap_rule", "voc")
    for key in ("map50", "map50_95", "dota_map50", "precision", "recall", "f1", "conf_threshold"):
        assert api[key] == cli[key], key
    assert "map50" not in evaluate_obb(scored / "gt", scored / "pred", detection=False)


def test_confidence_on_some_files_only_names_the_first_unscored_line(write_labels):
    # pred/a.txt is scored on every line; pred/b.txt on its first line only: line 2 is the first
    # prediction line without a confidence, in frame order.
    root = write_labels({"gt/a.txt": GT_A, "gt/b.txt": GT_A, "pred/a.txt": PRED_A,
                         "pred/b.txt": rect(10, 10, 40, 20) + " 0.6\n" + rect(100, 100, 40, 20) + "\n"})
    code, _, err = run(root / "gt", root / "pred", "-nb", "--json")
    assert code == 0
    said = [line for line in err.splitlines() if "without a confidence" in line]
    assert len(said) == 1 and f"first line without one: {root / 'pred' / 'b.txt'}:2" in said[0]


def test_confidence_on_some_lines_of_one_file_is_said(write_labels):
    # One file scored on its first line only: no file has a score on every box, and the run used to
    # drop AP without a word.
    root = write_labels({"gt/a.txt": GT_A, "pred/a.txt": rect(10, 10, 40, 20) + " 0.9\n" + rect(100, 100, 40, 20)
                         + "\n"})
    code, out, err = run(root / "gt", root / "pred", "-nb", "--json")
    assert code == 0 and json.loads(out)["detection_scored"] is False
    said = [line for line in err.splitlines() if "without a confidence" in line]
    assert len(said) == 1 and f"first line without one: {root / 'pred' / 'a.txt'}:2" in said[0]


def test_an_unscored_line_among_broken_lines_is_named_by_file_and_line(write_labels):
    # Line 2 is broken (skipped, warned), line 3 has no confidence: the warning sends the user to
    # line 3 of that file, not to the file alone.
    pred = rect(10, 10, 40, 20) + " 0.9\n0 1 2\n" + rect(100, 100, 40, 20) + "\n"
    root = write_labels({"gt/a.txt": GT_A, "pred/a.txt": pred})
    code, out, err = run(root / "gt", root / "pred", "-nb", "--json")
    assert code == 0 and json.loads(out)["detection_scored"] is False
    said = [line for line in err.splitlines() if "without a confidence" in line]
    assert len(said) == 1 and said[0].endswith(f"first line without one: {root / 'pred' / 'a.txt'}:3)"), said
    assert f"{root / 'pred' / 'a.txt'}:2" in err  # the broken line, warned on its own


def test_ground_truth_with_a_confidence_column_warns_of_swapped_folders(write_labels):
    # The folders given the wrong way round: the "ground truth" carries the detector's scores.
    root = write_labels({"gt/a.txt": PRED_A, "gt/b.txt": PRED_A, "pred/a.txt": GT_A, "pred/b.txt": GT_A})
    for extra in ((), ("--no_detection",)):
        code, _, err = run(root / "gt", root / "pred", "-nb", *extra)
        assert code == 0
        said = [line for line in err.splitlines() if "swapped" in line]
        assert len(said) == 1 and f"{root / 'gt' / 'a.txt'}" in said[0] and "confidence" in said[0]
    code, _, err = run(root / "pred", root / "gt", "-nb")
    assert code == 0 and "swapped" not in err


def test_confidence_on_some_files_only_is_said(write_labels):
    root = write_labels({"gt/a.txt": GT_A, "gt/b.txt": GT_A, "pred/a.txt": PRED_A,
                         "pred/b.txt": rect(10, 10, 40, 20) + "\n"})
    code, out, err = run(root / "gt", root / "pred", "-nb", "--json", "--conf", "0.5")
    assert code == 0
    assert "1 prediction file(s) have boxes without a confidence and 1 have one on every box" in err
    assert "--conf 0.5 has no effect" in err
    assert json.loads(out)["detection_scored"] is False


def test_detections_of_dropped_edge_boxes_are_neither_hits_nor_false_alarms(write_labels):
    # Frame a (100 x 100): a car touching the border, found, and a car inside, found and missed
    # once more. With -exc the border car is dropped: its detection must change nothing, so the
    # run scores as the same files with the border car and its detection deleted by hand.
    edge, inside = rect(0, 10, 20, 20), rect(50, 50, 20, 20)
    files = {"gt/a.txt": edge + "\n" + inside + "\n", "classes.yaml": "0: car\n",
             "pred/a.txt": edge + " 0.95\n" + inside + " 0.6\n" + rect(30, 70, 10, 10) + " 0.9\n"}
    root = write_labels(files)
    by_hand = write_labels({"hand/gt/a.txt": inside + "\n",
                            "hand/pred/a.txt": inside + " 0.6\n" + rect(30, 70, 10, 10) + " 0.9\n"})
    excluded = metrics_of(root / "gt", root / "pred", "-exc", "-iw", 100, "-ih", 100)
    expected = metrics_of(by_hand / "hand" / "gt", by_hand / "hand" / "pred", "-iw", 100, "-ih", 100)
    assert excluded["total_edge_cases"] == 1 and excluded["detections_on_edge_cases"] == 1
    for key in ("map50", "map50_95", "mar_100", "dota_map50", "precision", "recall", "f1", "conf_threshold"):
        assert excluded[key] == expected[key], key
    assert expected["map50"] < 0.9  # the false alarm above the hit costs AP: the comparison can fail
    assert metrics_of(root / "gt", root / "pred", "-iw", 100, "-ih", 100)["detections_on_edge_cases"] == 0


def test_without_scores_the_detections_of_dropped_edge_boxes_are_left_out_too_and_the_report_says_so(write_labels):
    edge, inside = rect(0, 10, 20, 20), rect(50, 50, 20, 20)
    root = write_labels({"gt/a.txt": edge + "\n" + inside + "\n", "unscored/a.txt": edge + "\n" + inside + "\n",
                         "scored/a.txt": edge + " 0.9\n" + inside + " 0.8\n"})
    unscored = metrics_of(root / "gt", root / "unscored", "-exc", "-iw", 100, "-ih", 100)
    assert (unscored["precision"], unscored["recall"], unscored["detections_on_edge_cases"]) == (1.0, 1.0, 1)
    code, out, _ = run(root / "gt", root / "scored", "-exc", "-iw", 100, "-ih", 100, "-nb")
    assert code == 0
    assert "1 detection(s) of ground-truth boxes dropped at the frame edge (--exclude_edge_cases) are left out" in out
