"""summarize: the metric dict of an accumulated run, its counts against the boxes written."""

import pytest

from hbb2obb.scoring.evaluate import EvalSettings, evaluate_frames
from hbb2obb.scoring.metric_dict import summarize

from conftest import obb_line, rect, rotated_rect, shapely_iou


def _run(write_labels, files, **settings):
    root = write_labels(files)
    return evaluate_frames(root / "gt", root / "pred", EvalSettings(**settings))


def test_counts_and_mean_iou_of_a_small_run(write_labels):
    gt = [rotated_rect(50, 50, 40, 20, 10), rotated_rect(200, 80, 30, 12, 80), rotated_rect(400, 400, 20, 20, 0)]
    pred = [rotated_rect(52, 51, 38, 21, 12), rotated_rect(201, 79, 30, 13, 75)]  # the third GT box unmatched
    files = {"gt/a.txt": "".join(obb_line(0, box) + "\n" for box in gt),
             "pred/a.txt": "".join(obb_line(0, box) + "\n" for box in pred) + rect(900, 900, 5, 5) + "\n"}
    metrics = summarize(_run(write_labels, files))
    assert (metrics["total_gt"], metrics["total_pred"], metrics["total_matches"]) == (3, 3, 2)
    assert (metrics["total_unmatched_gt"], metrics["total_unmatched_pred"]) == (1, 1)
    assert metrics["avg_iou"] == pytest.approx((shapely_iou(gt[0], pred[0]) + shapely_iou(gt[1], pred[1])) / 2,
                                               abs=1e-12)
    assert metrics["frames_scored"] == 1 and metrics["cross_class_matches"] == 0


@pytest.mark.parametrize("settings", [{}, {"class_agnostic": True}, {"iou_threshold": 0.9}])
def test_settings_are_written_back_as_given(write_labels, settings):
    result = _run(write_labels, {"gt/a.txt": rect(0, 0, 10, 5) + "\n", "pred/a.txt": rect(1, 0, 10, 5) + "\n"},
                  **settings)
    metrics = summarize(result)
    for key, value in {"class_agnostic": False, "iou_threshold": 0.1, **settings}.items():
        assert metrics[key] == value
    # the two 10 x 5 rectangles overlap 9 x 5: IoU 45/55, a match at 0.1, none at 0.9
    expected = shapely_iou(rotated_rect(5, 2.5, 10, 5, 0), rotated_rect(6, 2.5, 10, 5, 0))
    assert metrics["total_matches"] == (1 if expected >= metrics["iou_threshold"] else 0)


def test_an_empty_prediction_file_matches_nothing(write_labels):
    metrics = summarize(_run(write_labels, {"gt/a.txt": rect(0, 0, 10, 5) + "\n", "pred/a.txt": ""}))
    assert (metrics["total_gt"], metrics["total_pred"], metrics["total_matches"]) == (1, 0, 0)
    assert metrics["total_unmatched_gt"] == 1
