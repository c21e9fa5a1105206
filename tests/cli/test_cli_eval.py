"""hbb2obb-eval as a user runs it: printed numbers, exit statuses, files written, bad input."""

import json
import re
import subprocess
import sys

import pytest
import yaml
from click.testing import CliRunner

from hbb2obb.cli.eval import main

from conftest import rect

GT = rect(10, 10, 40, 20) + "\n" + rect(100, 100, 30, 30, cls=1) + "\n"
PRED = rect(12, 10, 40, 20) + "\n" + rect(100, 100, 30, 30, cls=1) + "\n"
IOU_SHIFTED = (38 * 20) / (42 * 20)  # 2 px shift of a 40 x 20 box


def run(*args):
    result = CliRunner().invoke(main, [str(a) for a in args])
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def labels(write_labels):
    return write_labels({"gt/a.txt": GT, "pred/a.txt": PRED, "classes.yaml": "0: Car\n1: Bus\n"})


def printed(stdout, label):
    return re.search(rf"^{re.escape(label)}: (.*)$", stdout, re.M).group(1)


def test_report_prints_the_numbers(labels):
    code, out, err = run(labels / "gt", labels / "pred", "-mp", labels / "classes.yaml", "-nb")
    assert code == 0, err
    assert printed(out, "Total Matched Boxes") == "2"
    mean = (IOU_SHIFTED + 1.0) / 2
    assert printed(out, "Average IoU").startswith(f"{mean:.5f} ± ")
    assert re.search(r"^\s+Car\s+1\s+1\s+1\s+" + re.escape(f"{IOU_SHIFTED:.4f}"), out, re.M)
    assert re.search(r"^\s+Bus\s+1\s+1\s+1\s+1\.0000", out, re.M)


def test_class_agnostic_has_no_class_table(labels):
    code, out, _ = run(labels / "gt", labels / "pred", "-ca", "-t", "0.5")
    assert code == 0
    assert "Class-Agnostic" in out and "Results by Class" not in out


def test_json_mode_prints_only_the_metric_dict(labels):
    code, out, _ = run(labels / "gt", labels / "pred", "--json")
    metrics = json.loads(out)
    assert code == 0
    assert metrics["total_matches"] == 2
    assert metrics["avg_iou"] == pytest.approx((IOU_SHIFTED + 1) / 2)


@pytest.mark.parametrize("suffix", [".yaml", ".json"])
def test_output_file_holds_the_metric_dict(labels, suffix):
    target = labels / "out" / f"metrics{suffix}"
    code, _, _ = run(labels / "gt", labels / "pred", "-o", target)
    data = yaml.safe_load(target.read_text())  # JSON is YAML
    assert code == 0
    assert data["total_gt"] == 2 and "class_stats" in data


def test_excluded_classes_take_several_values_after_one_flag(labels):
    code, out, _ = run("-e", 0, 1, "--json", labels / "gt", labels / "pred")
    assert code == 0
    metrics = json.loads(out)
    assert metrics["excluded_classes"] == [0, 1] and metrics["total_gt"] == 0


def test_excluded_classes_before_the_folders_leave_them_alone(labels):
    code, out, _ = run(labels / "gt", labels / "pred", "-e", 1, "--json")
    assert json.loads(out)["total_gt"] == 1


@pytest.mark.parametrize(
    "gates, code, failing",
    [
        (["avg_iou>=0.9"], 0, []),
        (["avg_iou>=0.99"], 1, ["avg_iou>=0.99"]),
        (["iou_at_90>=0.5", "total_unmatched_gt==0"], 0, []),
        (["p90_angle_error<=5", "iou_at_90<1"], 1, ["iou_at_90<1"]),
    ],
)
def test_require_gates(labels, gates, code, failing):
    args = [labels / "gt", labels / "pred"]
    for gate in gates:
        args += ["--require", gate]
    status, out, _ = run(*args)
    assert status == code
    assert sorted(re.findall(r"^FAIL  (\S+)", out, re.M)) == sorted(failing)


def test_a_gate_on_a_statistic_of_no_matched_pair_fails_and_says_why(write_labels):
    # every prediction is of the other class: nothing matches, every statistic of the pairs is 0
    root = write_labels({"gt/a.txt": GT, "pred/a.txt": rect(10, 10, 40, 20, cls=1) + "\n",
                         "classes.yaml": "0: Car\n1: Bus\n"})
    junit = root / "gates.xml"
    status, out, _ = run(root / "gt", root / "pred", "-mp", root / "classes.yaml", "--junit", junit,
                         "--require", "p90_angle_error<=5", "--require", "Car:avg_iou<=1",
                         "--require", "total_matches==0")
    assert status == 1
    assert re.search(r"^FAIL  p90_angle_error<=5  \(value 0; no matched pair, so p90_angle_error measures nothing",
                     out, re.M)
    assert re.search(r"^FAIL  Car:avg_iou<=1  \(value 0; no matched pair of this class", out, re.M)
    assert re.search(r"^pass  total_matches==0", out, re.M)
    assert "no matched pair, so p90_angle_error measures nothing" in junit.read_text()


@pytest.mark.parametrize("gate", ["avg_iou=0.5", "avg_iou>=x", "Lorry:avg_iou>=0.5"])
def test_bad_gate_is_a_usage_error_before_reading(tmp_path, gate):
    code, out, err = run(tmp_path / "missing", tmp_path / "missing", "--require", gate)
    assert code == 2
    assert "--require" in err and "not found" not in err
    assert out == ""


@pytest.mark.parametrize(
    "gate, code, value",
    [
        ("Car:avg_iou>=0.9", 0, IOU_SHIFTED),
        ("Car:avg_iou>=0.95", 1, IOU_SHIFTED),
        ("Bus:avg_iou>=0.95", 0, 1.0),
        ("1:matches==1", 0, 1),
        ("Car:iou_at_90<1", 1, 1.0),
        ("Car:spatial_match>=1", 0, 1.0),
        ("frames_scored==1", 0, 1),
        ("avg_giou>0.9", 0, None),
    ],
)
def test_per_class_and_any_numeric_key_gates(labels, gate, code, value):
    status, out, err = run(labels / "gt", labels / "pred", "-mp", labels / "classes.yaml", "--require", gate)
    assert status == code, err
    line = re.search(rf"^(pass|FAIL)  {re.escape(gate)}  \(value (\S+)\)$", out, re.M)
    assert line.group(1) == ("pass" if code == 0 else "FAIL")
    if value is not None:
        assert float(line.group(2)) == pytest.approx(value, rel=1e-5)


def test_every_numeric_key_of_the_metric_dict_is_gateable(labels):
    code, out, _ = run(labels / "gt", labels / "pred", "--json")
    metrics = json.loads(out)
    numeric = [k for k, v in metrics.items() if isinstance(v, (int, float)) and not isinstance(v, bool)]
    args = [labels / "gt", labels / "pred"]
    for key in numeric:
        args += ["--require", f"{key}>=-1e300"]
    status, out, err = run(*args)
    assert status == 0, err
    assert len(re.findall(r"^pass  ", out, re.M)) == len(numeric) > 20


@pytest.mark.parametrize("gate, message", [
    ("mean_iou>=0.5", "unknown metric 'mean_iou'; known: "),
    ("Car:mean_iou>=0.5", "unknown per-class metric 'mean_iou'; known: "),
    ("5:avg_iou>=0.5", "class 5 has no boxes on either side"),
])
def test_gate_on_a_key_the_run_lacks_is_a_usage_error(labels, gate, message):
    written = labels / "metrics.json"
    code, out, err = run(labels / "gt", labels / "pred", "-mp", labels / "classes.yaml", "--require", gate,
                         "-o", written)
    assert code == 2
    assert message in err and gate in err
    assert "Traceback" not in err
    # nothing that reads like a finished run: no report, no metric file
    assert out == "" and not written.exists()


@pytest.mark.parametrize("excluded", [str(10**23), str(-2**63 - 1)])
def test_an_excluded_class_beyond_64_bits_is_a_usage_error(labels, excluded):
    """Was: an OverflowError traceback and exit 1 (the status of a failed gate)."""
    code, out, err = run(labels / "gt", labels / "pred", "-e", excluded)
    assert code == 2 and out == ""
    assert err.splitlines() == [f"hbb2obb-eval: error: excluded class id {excluded} is out of range "
                                "(more than 63 bits)"]


def test_bad_output_suffix(labels):
    code, _, err = run(labels / "gt", labels / "pred", "-o", labels / "m.txt")
    assert code == 2 and ".yaml" in err


@pytest.mark.parametrize(
    "gt_text, message",
    [
        ("0 1 2 3\n", "a.txt:1: expected 9 fields"),
        (rect(0, 0, 5, 5) + "\n0 nan 0 1 0 1 1 0 1\n", "a.txt:2: field 2 is not finite"),
        ("car 0 0 1 0 1 1 0 1\n", "a.txt:1: class id is not an integer: 'car'"),
    ],
)
def test_broken_ground_truth_exits_2_with_file_and_line(write_labels, gt_text, message):
    root = write_labels({"gt/a.txt": gt_text, "pred/a.txt": PRED})
    code, out, err = run(root / "gt", root / "pred")
    assert code == 2
    assert message in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert "Average IoU" not in out


def test_broken_ground_truth_in_a_worker_exits_2_with_file_and_line(write_labels, monkeypatch):
    import hbb2obb.scoring.evaluate as core

    monkeypatch.setattr(core, "CHUNK_FRAMES", 1)  # a chunk per frame: the broken one is matched in a worker
    root = write_labels({"gt/a.txt": GT, "pred/a.txt": PRED, "gt/b.txt": "0 1 2 3\n", "pred/b.txt": PRED})
    code, out, err = run(root / "gt", root / "pred", "--jobs", 2, "--json")
    assert code == 2, err
    assert err.strip().splitlines() == [f"hbb2obb-eval: error: {root / 'gt' / 'b.txt'}:1: expected 9 fields "
                                        "(class x1 y1 x2 y2 x3 y3 x4 y4) or 10 (with confidence), found 4"]
    assert out == ""


def test_broken_prediction_line_is_warned_and_counted(write_labels):
    root = write_labels({"gt/a.txt": GT, "pred/a.txt": PRED.replace("\n", "\r\n") + "0 1 2\n"})
    code, out, err = run(root / "gt", root / "pred", "--json")
    assert code == 0
    assert "a.txt:3: expected 9 fields" in err
    assert json.loads(out)["skipped_pred_lines"] == 1


def test_missing_folder_and_missing_pred_policy(labels, tmp_path):
    code, _, err = run(tmp_path / "nowhere", labels / "pred")
    assert code == 2 and "ground-truth folder not found" in err
    (labels / "gt" / "b.txt").write_text(GT)
    code, _, err = run(labels / "gt", labels / "pred", "--missing_pred", "error")
    assert code == 2 and "b.txt: no prediction file" in err
    code, out, err = run(labels / "gt", labels / "pred", "--missing_pred", "empty", "--json")
    assert code == 0 and json.loads(out)["total_unmatched_gt"] == 2
    assert "no prediction file for b.txt" in err


def test_edge_exclusion_needs_a_size(labels):
    code, _, err = run(labels / "gt", labels / "pred", "-exc")
    assert code == 2 and "frame size" in err
    code, out, _ = run(labels / "gt", labels / "pred", "-exc", "-et", 10, "-iw", 200, "-ih", 200, "--json")
    assert code == 0 and json.loads(out)["total_edge_cases"] == 1


def test_debug_lists_unmatched_boxes(write_labels):
    root = write_labels({"gt/a.txt": GT, "pred/a.txt": rect(12, 10, 40, 20) + "\n"})
    code, out, _ = run(root / "gt", root / "pred", "-d")
    assert code == 0
    assert "--- File: a ---" in out and "Unmatched GT:" in out and "line 2:" in out


def test_version_and_console_script():
    code, out, _ = run("--version")
    assert code == 0 and re.match(r"hbb2obb-eval \d+\.\d+\.\d+", out)
    proc = subprocess.run([sys.executable, "-m", "hbb2obb.cli.eval", "--help"], capture_output=True, text=True)
    assert proc.returncode == 0 and "--iou_threshold" in proc.stdout


@pytest.mark.parametrize(
    "args, reference",
    [(["-mp", "classes.yaml"], "eval_sam_b.txt"), (["-ca", "-t", "0.5"], "eval_sam_b_agnostic_t05.txt")],
)
def test_sample_against_reference_output(sample_dir, reference_dir, monkeypatch, args, reference):
    """Every number the reference tool printed on the real sample, checked by the shared checker."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "check_reference", reference_dir.parent / "tools" / "check_reference.py"
    )
    checker = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(checker)
    monkeypatch.chdir(sample_dir)
    code, out, _ = run("labels_obb_gt", "labels_obb_sam_b", *args, "-nb")
    assert code == 0
    assert checker.compare(out, (reference_dir / reference).read_text(encoding="utf-8")) == []


def test_exclude_edge_cases_prints_the_unmatched_predictions_of_dropped_boxes(write_labels):
    root = write_labels({"gt/a.txt": rect(0, 50, 40, 20) + "\n" + rect(200, 200, 40, 20) + "\n",
                         "pred/a.txt": rect(1, 50, 40, 20) + "\n" + rect(200, 200, 40, 20) + "\n"
                         + rect(400, 400, 20, 20) + "\n"})
    code, out, err = run(root / "gt", root / "pred", "-exc", "-iw", 800, "-ih", 600, "-nb",
                         "--require", "unmatched_pred_on_edge_cases==1")
    assert code == 0, err
    assert printed(out, "Total Unmatched Pred Boxes") == "2"
    assert re.search(r"^Total Unmatched Pred Boxes: 2\n  of which on excluded edge boxes: 1 ", out, re.M)
    _, plain, _ = run(root / "gt", root / "pred", "-nb")
    assert "of which on excluded edge boxes" not in plain


def test_json_alone_prints_the_bytes_of_the_metric_file(write_labels):
    """--json alone prints the same bytes as -o metrics.json writes."""
    boxes = range(150)  # more than 64 matches in class 0, a few in class 1, one class with predictions only
    gt = "".join(rect(30 * (i % 30), 30 * (i // 30), 20, 10, cls=int(i % 7 == 0)) + "\n" for i in boxes)
    pred = "".join(rect(30 * (i % 30) + i % 3, 30 * (i // 30), 20, 10, cls=int(i % 7 == 0)) + "\n" for i in boxes)
    labels = write_labels({"gt/a.txt": gt, "pred/a.txt": pred + rect(5, 900, 8, 8, cls=4) + "\n"})
    code, printed_json, err = run(labels / "gt", labels / "pred", "--json", "-nb", "--require", "avg_iou>0.5")
    assert code == 0, err
    code, _, err = run(labels / "gt", labels / "pred", "--json", "-nb", "-o", labels / "m.json")
    assert code == 0, err
    assert printed_json == (labels / "m.json").read_text()
    metrics = json.loads(printed_json)
    assert printed_json == json.dumps(metrics, indent=2) + "\n"
    assert len(metrics["class_stats"]["0"]["ious"]) > 64 and metrics["class_stats"]["4"]["ious"] == []
    assert metrics["class_stats"]["0"]["iou_values"] == metrics["class_stats"]["0"]["ious"]
