"""The scoring core against an independent per-pair shapely implementation (tests/oracles/shapely_reference.py)."""

import warnings

import numpy as np
import pytest

from hbb2obb import evaluate_obb
from hbb2obb.errors import InputError, LabelFormatError, UsageError
from hbb2obb.scoring.evaluate import EvalSettings, Hbb2ObbWarning, evaluate_frames
from hbb2obb.scoring.metric_dict import summarize

from conftest import rect, rotated_rect
from oracles import shapely_reference


def line(cls, corners, decimals):
    return f"{cls} " + " ".join(f"{v:.{decimals}f}" for v in corners.reshape(-1))


def random_label_set(root, seed, n_frames=6, decimals=1):
    """Frames of rotated boxes, predictions jittered, some dropped, some extra, classes mixed."""
    rng = np.random.default_rng(seed)
    (root / "gt").mkdir()
    (root / "pred").mkdir()
    for f in range(n_frames):
        gt_lines, pred_lines = [], []
        for _ in range(rng.integers(0, 25)):
            cx, cy = rng.uniform(0, 800), rng.uniform(0, 600)
            w, h = rng.uniform(8, 80), rng.uniform(8, 40)
            angle = rng.choice([0.0, 90.0, rng.uniform(0, 180)])
            cls = int(rng.integers(0, 3))
            gt = rotated_rect(cx, cy, w, h, angle)
            gt_lines.append(line(cls, gt, decimals))
            if rng.random() < 0.85:
                pred = rotated_rect(cx + rng.normal(0, 3), cy + rng.normal(0, 3), w * rng.uniform(0.8, 1.2),
                                    h * rng.uniform(0.8, 1.2), angle + rng.normal(0, 6))
                pred_cls = cls if rng.random() < 0.9 else int(rng.integers(0, 3))
                pred_lines.append(line(pred_cls, np.roll(pred, int(rng.integers(0, 4)), axis=0), decimals))
        for _ in range(rng.integers(0, 4)):
            extra = rotated_rect(rng.uniform(0, 800), rng.uniform(0, 600), 30, 15, rng.uniform(0, 180))
            pred_lines.append(line(int(rng.integers(0, 3)), extra, decimals))
        rng.shuffle(pred_lines)
        (root / "gt" / f"f{f}.txt").write_text("\n".join(gt_lines) + "\n")
        if f != 1:
            (root / "pred" / f"f{f}.txt").write_text("\n".join(pred_lines) + "\n")
    (root / "pred" / "orphan.txt").write_text("0 1 1 2 1 2 2 1 2\n")
    return root / "gt", root / "pred"


def assert_same_metrics(ours, theirs, tolerance=1e-9):
    for key, value in theirs.items():
        assert key in ours, key
        if key == "class_stats":
            assert set(ours[key]) == set(value)
            for cls, stats in value.items():
                assert_same_metrics(ours[key][cls], stats, tolerance)
        elif isinstance(value, dict):
            assert_same_metrics(ours[key], value, tolerance)
        elif isinstance(value, list) and value and isinstance(value[0], float):
            assert np.allclose(ours[key], value, atol=tolerance, rtol=0), key
        elif isinstance(value, float):
            assert ours[key] == pytest.approx(value, abs=tolerance), key
        else:
            assert ours[key] == value, key


SETTINGS = [
    dict(),
    dict(class_agnostic=True),
    dict(iou_threshold=0.5),
    dict(excluded_classes=[2]),
    dict(exclude_edge_cases=True, edge_tolerance=20, img_width=800, img_height=600),
    dict(class_agnostic=True, iou_threshold=0.0),
]


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("settings", SETTINGS, ids=lambda s: ",".join(s) or "default")
def test_agrees_with_the_shapely_oracle(tmp_path, seed, settings):
    gt, pred = random_label_set(tmp_path, seed, decimals=seed % 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", Hbb2ObbWarning)
        ours = evaluate_obb(gt, pred, **settings)
    theirs = shapely_reference.reference_evaluate(gt, pred, **settings)
    assert ours["total_gt"] > 0
    assert_same_metrics(ours, theirs)


def test_jobs_give_identical_results(tmp_path, monkeypatch):
    import hbb2obb.scoring.evaluate as core

    monkeypatch.setattr(core, "CHUNK_FRAMES", 2)
    gt, pred = random_label_set(tmp_path, 9, n_frames=9)
    one = evaluate_frames(gt, pred, EvalSettings(missing_pred="empty"), jobs=1)
    two = evaluate_frames(gt, pred, EvalSettings(missing_pred="empty"), jobs=2)
    assert summarize(one) == summarize(two)
    assert one.warnings == two.warnings


def test_workers_get_runs_of_even_size(tmp_path, monkeypatch):
    # 20 small frames fit one run by bytes; two workers need runs of at most 20 / 4 frames, or
    # one worker matches nearly everything while the other waits. Below WORKER_RUNS_FROM
    # frames the run stays whole (one process does it).
    import hbb2obb.scoring.evaluate as core
    from hbb2obb.frames.pairing import plan_frames

    gt, pred = random_label_set(tmp_path, 3, n_frames=20)
    specs = plan_frames(gt, pred, "empty").frames
    assert [len(run) for run, _ in core._batches(specs)] == [20]
    assert [len(run) for run, _ in core._batches(specs, jobs=2)] == [20]  # 20 < WORKER_RUNS_FROM
    monkeypatch.setattr(core, "WORKER_RUNS_FROM", 20)
    assert [len(run) for run, _ in core._batches(specs, jobs=2)] == [5, 5, 5, 5]
    assert [len(run) for run, _ in core._batches(specs, jobs=8)] == [2] * 10
    assert [len(run) for run, _ in core._batches(specs, jobs=1)] == [20]


@pytest.mark.parametrize("chunk_frames", [1, 4, 100])  # many chunks, a few, one (the join then copies nothing)
def test_the_run_table_is_the_same_however_the_frames_are_chunked(tmp_path, monkeypatch, chunk_frames):
    import dataclasses

    import hbb2obb.scoring.evaluate as core

    gt, pred = random_label_set(tmp_path, 5, n_frames=9)
    whole = evaluate_frames(gt, pred, EvalSettings(missing_pred="empty")).table  # default: one chunk
    monkeypatch.setattr(core, "CHUNK_FRAMES", chunk_frames)
    table = evaluate_frames(gt, pred, EvalSettings(missing_pred="empty")).table
    assert len(table.gt) > 20 and table.frame_names == whole.frame_names
    for field in dataclasses.fields(table):
        got, want = getattr(table, field.name), getattr(whole, field.name)
        if field.name in ("gt", "pred"):
            for column in ("corners", "class_id", "line"):
                assert np.array_equal(getattr(got, column), getattr(want, column)), (field.name, column)
        elif field.name == "pred_index":  # meaningful where matched (MatchTable)
            assert np.array_equal(got[table.matched], want[whole.matched])
        elif isinstance(want, np.ndarray):
            assert got.dtype == want.dtype and np.array_equal(got, want, equal_nan=want.dtype.kind == "f"), field.name
    assert table.pred_index[table.matched].max() < len(table.pred)  # run-wide indices, not a chunk's


def test_a_broken_ground_truth_in_the_last_chunk_stops_the_run(tmp_path, monkeypatch):
    import hbb2obb.scoring.evaluate as core

    monkeypatch.setattr(core, "CHUNK_FRAMES", 3)
    gt, pred = random_label_set(tmp_path, 4, n_frames=20)
    evaluate_frames(gt, pred, EvalSettings(missing_pred="empty"))
    last = sorted(gt.glob("*.txt"))[-1]
    last.write_text("0 1 2\n")  # broken ground truth in the last chunk: the run stops there
    with pytest.raises(LabelFormatError, match=last.name + ":1"):
        evaluate_frames(gt, pred, EvalSettings(missing_pred="empty"))


def test_identical_boxes_score_exactly_one(write_labels):
    root = write_labels({"gt/a.txt": rect(10, 10, 40, 20) + "\n", "pred/a.txt": rect(10, 10, 40, 20) + "\n"})
    metrics = evaluate_obb(root / "gt", root / "pred")
    assert metrics["avg_iou"] == pytest.approx(1.0, abs=1e-12)
    assert metrics["p90_angle_error"] == 0.0


def test_no_matches_gives_zero_statistics(write_labels):
    root = write_labels({"gt/a.txt": rect(0, 0, 10, 10) + "\n", "pred/a.txt": rect(100, 100, 10, 10) + "\n"})
    metrics = evaluate_obb(root / "gt", root / "pred")
    assert metrics["total_matches"] == 0 and metrics["avg_iou"] == 0.0 and metrics["sem_iou"] == 0.0
    assert metrics["total_unmatched_gt"] == 1 and metrics["total_unmatched_pred"] == 1


def test_missing_prediction_policies(write_labels):
    root = write_labels({"gt/a.txt": rect(0, 0, 10, 10) + "\n", "gt/b.txt": rect(0, 0, 10, 10) + "\n",
                         "pred/a.txt": rect(0, 0, 10, 10) + "\n"})
    with pytest.warns(Hbb2ObbWarning, match="no prediction file for b.txt"):
        skipped = evaluate_obb(root / "gt", root / "pred")
    assert (skipped["total_gt"], skipped["missing_pred_files"]) == (1, 1)
    with pytest.warns(Hbb2ObbWarning):
        empty = evaluate_obb(root / "gt", root / "pred", missing_pred="empty")
    assert (empty["total_gt"], empty["total_unmatched_gt"]) == (2, 1)
    with pytest.raises(InputError, match="b.txt: no prediction file"):
        evaluate_obb(root / "gt", root / "pred", missing_pred="error")


def test_broken_prediction_lines_are_counted(write_labels):
    root = write_labels({"gt/a.txt": rect(0, 0, 10, 10) + "\n",
                         "pred/a.txt": "0 1 2\n" + rect(0, 0, 10, 10) + "\n0 nan 0 1 0 1 1 0 1\n"})
    with pytest.warns(Hbb2ObbWarning, match=r"a.txt:1: .*\(2 broken lines in this file"):
        metrics = evaluate_obb(root / "gt", root / "pred")
    assert metrics["skipped_pred_lines"] == 2
    assert metrics["total_matches"] == 1


def test_broken_ground_truth_stops_with_file_and_line(write_labels):
    root = write_labels({"gt/a.txt": rect(0, 0, 10, 10) + "\ncar 1 2 3 4 5 6 7 8\n", "pred/a.txt": ""})
    with pytest.raises(LabelFormatError, match=r"a.txt:2: class id is not an integer"):
        evaluate_obb(root / "gt", root / "pred")


def test_bow_tie_is_reordered_and_scored_as_its_rectangle(write_labels):
    bow_tie = "0 0 0 10 5 10 0 0 5"  # corners 3 and 4 swapped
    root = write_labels({"gt/a.txt": rect(0, 0, 10, 5) + "\n", "pred/a.txt": bow_tie + "\n"})
    with pytest.warns(Hbb2ObbWarning, match="bow-tie"):
        metrics = evaluate_obb(root / "gt", root / "pred")
    assert metrics["reordered_boxes"] == 1
    assert metrics["avg_iou"] == pytest.approx(1.0)


def test_zero_area_boxes_are_counted(write_labels):
    root = write_labels({"gt/a.txt": rect(0, 0, 10, 5) + "\n", "pred/a.txt": "0 0 0 10 0 10 0 0 0\n"})
    with pytest.warns(Hbb2ObbWarning, match="zero area"):
        metrics = evaluate_obb(root / "gt", root / "pred")
    assert metrics["degenerate_boxes"] == 1 and metrics["total_matches"] == 0


def test_normalized_labels_scaled_with_frame_size(write_labels):
    # A 45-degree box in pixels is not 45 degrees in normalized coordinates of a 16:9 frame.
    px = rotated_rect(400, 300, 80, 40, 45)
    norm = px / np.array([1600, 900])
    root = write_labels({"gt/a.txt": line(0, px, 4) + "\n", "pred/a.txt": line(0, norm, 8) + "\n"})
    with pytest.warns(Hbb2ObbWarning, match="normalized"):
        unscaled = evaluate_obb(root / "gt", root / "pred")
    assert unscaled["total_matches"] == 0
    scaled = evaluate_obb(root / "gt", root / "pred", img_width=1600, img_height=900)
    assert scaled["avg_iou"] == pytest.approx(1.0, abs=1e-4)
    assert scaled["p90_angle_error"] == pytest.approx(0.0, abs=1e-4)


@pytest.mark.parametrize("kwargs, message", [
    (dict(iou_threshold=1.5), "iou threshold"),
    (dict(exclude_edge_cases=True), "needs the frame size"),
    (dict(img_width=100), "together"),
    (dict(missing_pred="maybe"), "missing_pred"),
    (dict(excluded_classes=[2**63]), r"excluded class id 9223372036854775808 is out of range"),
    (dict(excluded_classes=[-2**63 - 1]), "excluded class id -9223372036854775809 is out of range"),
])
def test_bad_settings(write_labels, kwargs, message):
    root = write_labels({"gt/a.txt": "", "pred/a.txt": ""})
    with pytest.raises(UsageError, match=message):
        evaluate_obb(root / "gt", root / "pred", **kwargs)


def test_missing_folder(tmp_path):
    with pytest.raises(InputError, match="ground-truth folder not found"):
        evaluate_obb(tmp_path / "nope", tmp_path)


def test_sample_matches_reference_numbers(sample_dir):
    metrics = evaluate_obb(sample_dir / "labels_obb_gt", sample_dir / "labels_obb_sam_b")
    assert metrics["total_matches"] == 122
    assert round(metrics["avg_iou"], 5) == 0.88853
    assert round(metrics["std_iou"], 5) == 0.07528
    assert round(metrics["sem_iou"], 5) == 0.00682
    assert round(metrics["median_iou"], 5) == 0.90026
    assert round(metrics["p90_angle_error"], 2) == 4.68
    assert metrics["class_stats"][2]["matches"] == 6


def test_unmatched_predictions_of_dropped_edge_boxes_are_counted_apart(write_labels):
    gt = "\n".join([
        rect(0, 50, 40, 20),            # 1: touches the left edge: dropped
        rect(300, 0, 40, 20, cls=1),    # 2: touches the top edge: dropped
        rect(200, 200, 40, 20),         # 3: interior: scored
        rect(760, 300, 40, 20),         # 4: touches the right edge: dropped
    ]) + "\n"
    pred = "\n".join([
        rect(2, 50, 40, 20),            # the edge box 1's own prediction: ignored
        rect(300, 0, 40, 20),           # on edge box 2 but of another class: spurious unless class-agnostic
        rect(201, 200, 40, 20),         # matches box 3
        rect(500, 500, 30, 30),         # on nothing: spurious
        rect(780, 300, 40, 20),         # overlaps box 4 with IoU 1/3: above 0.1, below 0.5
    ]) + "\n"
    root = write_labels({"gt/f.txt": gt, "pred/f.txt": pred})
    common = dict(exclude_edge_cases=True, img_width=800, img_height=600)
    m = evaluate_obb(root / "gt", root / "pred", **common)
    assert (m["total_edge_cases"], m["total_matches"], m["total_unmatched_pred"]) == (3, 1, 4)
    assert m["unmatched_pred_on_edge_cases"] == 2  # boxes 1 and 4's predictions
    assert evaluate_obb(root / "gt", root / "pred", class_agnostic=True, **common)["unmatched_pred_on_edge_cases"] == 3
    assert evaluate_obb(root / "gt", root / "pred", iou_threshold=0.5, **common)["unmatched_pred_on_edge_cases"] == 1
    plain = evaluate_obb(root / "gt", root / "pred", img_width=800, img_height=600)
    assert plain["unmatched_pred_on_edge_cases"] == 0 and plain["total_edge_cases"] == 0


def test_a_prediction_closer_to_a_scored_box_is_not_an_edge_box_prediction(write_labels):
    # the scored box 2 takes the prediction (IoU 1) in non-exclusive matching; a second prediction
    # overlaps the edge box less than the scored box, so it is an unmatched duplicate, not the edge box's own
    gt = rect(0, 100, 40, 20) + "\n" + rect(30, 100, 40, 20) + "\n"
    pred = rect(30, 100, 40, 20) + "\n" + rect(28, 100, 40, 20) + "\n"
    root = write_labels({"gt/f.txt": gt, "pred/f.txt": pred})
    m = evaluate_obb(root / "gt", root / "pred", exclude_edge_cases=True, img_width=800, img_height=600,
                     one_to_one=True)
    assert (m["total_matches"], m["total_unmatched_pred"], m["unmatched_pred_on_edge_cases"]) == (1, 1, 0)
