"""Spatial match: a pass/fail per ground-truth box, its share in the metric dict, report and gates."""

import math
import re

import numpy as np
import pytest
from click.testing import CliRunner
from shapely.geometry import Polygon

from hbb2obb import evaluate_obb
from hbb2obb.cli.eval import main
from hbb2obb.errors import UsageError
from hbb2obb.scoring.evaluate import EvalSettings, evaluate_frames
from hbb2obb.scoring.metric_dict import summarize
from hbb2obb.scoring.overlap_metrics import RowOverlap, overlap_statistics

from conftest import rect, rotated_rect

# Five ground-truth boxes far apart, each with a story (IoUs of axis-aligned rectangles, by hand):
GT = "\n".join([
    rect(0, 0, 10, 10),           # pred 10x8 inside: IoU 0.8, passes
    rect(100, 0, 10, 10),         # pred 10x3 inside: IoU 0.3, matched at -t 0.1 but fails
    rect(200, 0, 10, 10, cls=1),  # no prediction: fails
    rect(300, 0, 10, 10, cls=1),  # the same box predicted as class 0: fails unless class-agnostic
    rect(400, 0, 10, 10),         # pred 10x5 inside: IoU exactly 0.5, passes (at least the threshold)
]) + "\n"
PRED = "\n".join([rect(0, 0, 10, 8), rect(100, 0, 10, 3), rect(300, 0, 10, 10), rect(400, 0, 10, 5)]) + "\n"


@pytest.fixture
def labels(write_labels):
    root = write_labels({"gt/a.txt": GT, "pred/a.txt": PRED, "classes.yaml": "0: Car\n1: Bus\n"})
    return root / "gt", root / "pred"


CASES = [
    # settings, overall share, per-class shares
    (dict(), 2 / 5, {0: 2 / 3, 1: 0.0}),
    (dict(class_agnostic=True), 3 / 5, {0: 2 / 3, 1: 1 / 2}),
    (dict(spatial_threshold=0.3), 3 / 5, {0: 1.0, 1: 0.0}),
    (dict(spatial_threshold=0.81), 0.0, {0: 0.0, 1: 0.0}),
    (dict(spatial_threshold=1.0, class_agnostic=True), 1 / 5, {0: 0.0, 1: 1 / 2}),
    # Matching and spatial match are independent: nothing matches above 0.9, yet two boxes pass.
    (dict(iou_threshold=0.9), 2 / 5, {0: 2 / 3, 1: 0.0}),
    (dict(excluded_classes=(1,)), 2 / 3, {0: 2 / 3}),
]


@pytest.mark.parametrize("settings, share, per_class", CASES)
def test_share_of_all_ground_truth_boxes(labels, settings, share, per_class):
    metrics = summarize(evaluate_frames(*labels, EvalSettings(**settings)))
    assert metrics["spatial_match"] == pytest.approx(share, abs=1e-15)
    assert {c: s["spatial_match"] for c, s in metrics["class_stats"].items()} == pytest.approx(per_class, abs=1e-15)
    assert metrics["spatial_threshold"] == settings.get("spatial_threshold", 0.5)


def test_exact_threshold_passes(labels):
    table = evaluate_frames(*labels).table
    assert table.best_iou[4] == 0.5
    assert summarize(evaluate_frames(*labels, EvalSettings(spatial_threshold=0.5)))["spatial_match"] == 2 / 5


def test_one_to_one_box_left_unmatched_still_passes_on_its_best_iou(write_labels):
    # Two GT boxes share their best prediction: IoU 80/120 and 70/130; one-to-one matches only the first.
    root = write_labels({"gt/a.txt": rect(0, 0, 10, 10) + "\n" + rect(5, 0, 10, 10) + "\n",
                         "pred/a.txt": rect(2, 0, 10, 10) + "\n"})
    metrics = summarize(evaluate_frames(root / "gt", root / "pred", EvalSettings(one_to_one=True)))
    assert metrics["total_matches"] == 1
    assert metrics["spatial_match"] == 1.0
    assert summarize(evaluate_frames(root / "gt", root / "pred", EvalSettings(one_to_one=True, spatial_threshold=0.6)
                           ))["spatial_match"] == 0.5


def test_frames_without_prediction_file_count_only_when_scored(write_labels):
    root = write_labels({"gt/a.txt": rect(0, 0, 10, 10) + "\n", "gt/b.txt": rect(0, 0, 10, 10) + "\n",
                         "pred/a.txt": rect(0, 0, 10, 10) + "\n"})
    skipped = summarize(evaluate_frames(root / "gt", root / "pred", EvalSettings(missing_pred="skip")))
    empty = summarize(evaluate_frames(root / "gt", root / "pred", EvalSettings(missing_pred="empty")))
    assert (skipped["total_gt"], skipped["spatial_match"]) == (1, 1.0)
    assert (empty["total_gt"], empty["spatial_match"]) == (2, 0.5)


def test_no_ground_truth_gives_zero(write_labels):
    root = write_labels({"gt/a.txt": "", "pred/a.txt": rect(0, 0, 10, 10) + "\n"})
    metrics = summarize(evaluate_frames(root / "gt", root / "pred"))
    assert metrics["spatial_match"] == 0.0
    assert metrics["class_stats"][0]["spatial_match"] == 0.0


@pytest.mark.parametrize("threshold", [0.0, -0.1, 1.01, math.nan])
def test_threshold_out_of_range_is_a_usage_error(threshold):
    with pytest.raises(UsageError, match="spatial threshold"):
        EvalSettings(spatial_threshold=threshold)


def test_statistics_over_a_mask():
    rows = RowOverlap(*(np.array([0.9, np.nan, 0.1, np.nan]),) * 4, spatial_pass=np.array([True, True, False, False]))
    assert overlap_statistics(rows, np.array([True, True, False, False]))["spatial_match"] == 1.0
    assert overlap_statistics(rows, np.array([False, False, True, True]))["spatial_match"] == 0.0
    assert overlap_statistics(rows)["spatial_match"] == 0.5
    assert overlap_statistics(rows, np.zeros(4, bool))["spatial_match"] == 0.0


# --- against shapely, on random rotated label sets -------------------------------------------------


def random_frames(root, seed, n_frames=4):
    rng = np.random.default_rng(seed)
    frames = []
    for f in range(n_frames):
        gt, pred = [], []
        for _ in range(rng.integers(0, 30)):
            cx, cy, w, h, angle = rng.uniform(0, 500), rng.uniform(0, 400), rng.uniform(8, 60), rng.uniform(8, 30), \
                rng.uniform(0, 180)
            cls = int(rng.integers(0, 3))
            gt.append((cls, rotated_rect(cx, cy, w, h, angle)))
            for _ in range(rng.integers(0, 3)):  # 0, 1 or 2 predictions of varying quality per box
                pred.append((cls if rng.random() < 0.8 else int(rng.integers(0, 3)),
                             rotated_rect(cx + rng.normal(0, 4), cy + rng.normal(0, 4), w * rng.uniform(0.6, 1.3),
                                          h * rng.uniform(0.6, 1.3), angle + rng.normal(0, 15))))
        frames.append((gt, pred))
        for side, boxes in (("gt", gt), ("pred", pred)):
            (root / side).mkdir(exist_ok=True)
            text = "".join(f"{c} " + " ".join(f"{v:.3f}" for v in box.ravel()) + "\n" for c, box in boxes)
            (root / side / f"f{f}.txt").write_text(text)
    return frames


def shapely_spatial(frames, threshold, class_agnostic):
    passed, by_class = [], {}
    for gt, pred in frames:
        for cls, box in gt:
            poly = Polygon(np.round(box, 3))
            best = 0.0
            for pred_cls, other in pred:
                if class_agnostic or pred_cls == cls:
                    q = Polygon(np.round(other, 3))
                    best = max(best, poly.intersection(q).area / poly.union(q).area)
            passed.append(best >= threshold)
            by_class.setdefault(cls, []).append(best >= threshold)
    return (np.mean(passed) if passed else 0.0), {c: np.mean(v) for c, v in by_class.items()}


@pytest.mark.parametrize("seed, threshold, class_agnostic", [(0, 0.5, False), (1, 0.7, False), (2, 0.5, True)])
def test_agrees_with_shapely(tmp_path, seed, threshold, class_agnostic):
    frames = random_frames(tmp_path, seed)
    share, per_class = shapely_spatial(frames, threshold, class_agnostic)
    metrics = evaluate_obb(tmp_path / "gt", tmp_path / "pred", class_agnostic=class_agnostic,
                           spatial_threshold=threshold)
    assert 0.0 < share < 1.0
    assert metrics["spatial_match"] == pytest.approx(share, abs=1e-12)
    for cls, value in per_class.items():
        assert metrics["class_stats"][cls]["spatial_match"] == pytest.approx(value, abs=1e-12)


# --- command line ----------------------------------------------------------------------------------


def run(*args):
    result = CliRunner().invoke(main, [str(a) for a in args])
    return result.exit_code, result.stdout, result.stderr


def test_report_line_and_class_table(labels):
    code, out, err = run(*labels, "-mp", labels[0].parent / "classes.yaml", "-nb")
    assert code == 0, err
    assert "Spatial Match (best IoU>=0.50): 40.0% of 5 GT boxes" in out
    block = out.split("=== Spatial Match and Distance-Aware Overlap by Class ===")[1]
    assert re.search(r"^\s+Car\s+3\s+3\s+66\.7%", block, re.M)
    assert re.search(r"^\s+Bus\s+2\s+0\s+0\.0%", block, re.M)


def test_threshold_flag_changes_the_share(labels):
    code, out, _ = run(*labels, "--spatial_threshold", "0.3", "-nb")
    assert code == 0
    assert "Spatial Match (best IoU>=0.30): 60.0% of 5 GT boxes" in out


@pytest.mark.parametrize("gate, code, verdict", [
    ("spatial_match>=0.99", 1, "FAIL"),
    ("spatial_match>=0.4", 0, "pass"),
    ("spatial_match<0.41", 0, "pass"),
])
def test_gate_on_spatial_match(labels, gate, code, verdict):
    exit_code, out, _ = run(*labels, "--require", gate, "-nb")
    assert exit_code == code
    assert f"{verdict}  {gate}  (value 0.4)" in out


@pytest.mark.parametrize("value", ["0", "1.5", "-1"])
def test_bad_threshold_flag_exits_2(labels, value):
    code, _, err = run(*labels, "--spatial_threshold", value)
    assert code == 2
    assert "spatial threshold must be in (0, 1]" in err


# --- per group in analyze ---------------------------------------------------------------------------


def test_analyze_groups_carry_the_same_keys(labels):
    from hbb2obb.analysis.cuts import analyze, ground_truth_properties
    from hbb2obb.analysis.report import render_markdown
    from hbb2obb.scoring.overlap_metrics import DISTANCE_KEYS

    result = evaluate_frames(*labels)
    data = analyze(result, ground_truth_properties(result.table), {0: "Car", 1: "Bus"})
    metrics = summarize(result)
    assert data["overall"]["spatial_match"] == metrics["spatial_match"] == 2 / 5
    assert data["settings"]["spatial_threshold"] == 0.5
    by_class = next(cut for cut in data["cuts"] if cut["key"] == "class")
    for group, class_id in zip(by_class["groups"], (0, 1)):
        stats = metrics["class_stats"][class_id]
        assert {k: group[k] for k in DISTANCE_KEYS + ("spatial_match",)} == \
            {k: stats[k] for k in DISTANCE_KEYS + ("spatial_match",)}
    markdown = render_markdown(data)
    assert "| Spatial match |" in markdown
    assert re.search(r"^\| Car \| 3 \|.*\| 66\.7% \|$", markdown, re.M)
