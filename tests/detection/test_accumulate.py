"""Accumulate and summarize steps of the detection metrics (hbb2obb.detection.accumulate).

The whole pipeline is checked against pycocotools and an independent DOTA implementation in
test_detection.py; these pin the two steps' own rules on small hand-worked cases.
"""

import numpy as np
import pytest

from hbb2obb.boxes import Boxes
from hbb2obb.detection.accumulate import accumulate, summarize_detections, voc_ap
from hbb2obb.detection.evaluate import COCO_IOU_THRESHOLDS, DetectionParams, evaluate_detections

from conftest import rotated_rect


@pytest.mark.parametrize("recall, precision, eleven_point, expected", [
    # one hit of one box, first: the whole curve at precision 1
    ([1.0], [1.0], False, 1.0),
    ([1.0], [1.0], True, 1.0),
    # half the boxes found at precision 1, then the rest at 1/2: 0.5 * 1 + 0.5 * 0.5
    ([0.5, 1.0], [1.0, 0.5], False, 0.75),
    # 11-point: levels 0..0.5 at 1 (6 levels), 0.6..1.0 at 0.5 (5 levels)
    ([0.5, 1.0], [1.0, 0.5], True, (6 * 1.0 + 5 * 0.5) / 11),
    # a later, higher precision lifts the envelope before it (all-point interpolation)
    ([0.5, 0.5, 1.0], [0.5, 0.4, 1.0], False, 1.0),
    # nothing found: no area under the curve
    ([0.0], [0.0], False, 0.0),
    ([], [], False, 0.0),
    ([], [], True, 0.0),
])
def test_voc_ap_by_hand(recall, precision, eleven_point, expected):
    assert voc_ap(np.array(recall, dtype=float), np.array(precision, dtype=float), eleven_point) == pytest.approx(
        expected
    )


def _boxes(rects, labels, scores=None):
    return Boxes([rotated_rect(*r) for r in rects], labels, score=scores)


def test_one_exact_hit_and_one_false_alarm_ranked_below_it():
    gt = _boxes([(50, 50, 40, 20, 30)], [0])
    dt = _boxes([(50, 50, 40, 20, 30), (300, 300, 40, 20, 0)], [0, 0], scores=[0.9, 0.1])
    acc = accumulate(evaluate_detections(gt, [0], dt, [0, 0]))
    assert acc.precision.shape[0] == len(COCO_IOU_THRESHOLDS) and acc.recall.shape[0] == len(COCO_IOU_THRESHOLDS)
    overall, per_class = summarize_detections(acc)
    # the false alarm comes after the only hit, so it lowers no interpolated precision
    # (COCO's mean over 101 recall levels may round to 0.9999999999999999, as COCOeval's does)
    for key in ("map50", "map50_95", "dota_map50", "mar_100"):
        assert overall[key] == pytest.approx(1.0, abs=1e-12)
    assert set(per_class) == {0}


def test_a_false_alarm_ranked_above_the_hit_halves_the_precision_at_its_recall():
    gt = _boxes([(50, 50, 40, 20, 30)], [0])
    dt = _boxes([(50, 50, 40, 20, 30), (300, 300, 40, 20, 0)], [0, 0], scores=[0.1, 0.9])
    overall, _ = summarize_detections(accumulate(evaluate_detections(gt, [0], dt, [0, 0])))
    assert overall["map50"] == pytest.approx(0.5) and overall["dota_map50"] == pytest.approx(0.5)
    assert overall["mar_1"] == 0.0 and overall["mar_10"] == pytest.approx(
        1.0, abs=1e-12
    )  # the hit is the second detection


def test_a_class_without_ground_truth_is_undefined_not_zero():
    gt = _boxes([(50, 50, 40, 20, 30)], [0])
    dt = _boxes([(50, 50, 40, 20, 30), (300, 300, 40, 20, 0)], [0, 1], scores=[0.9, 0.8])
    acc = accumulate(evaluate_detections(gt, [0], dt, [0, 0]))
    overall, per_class = summarize_detections(acc)
    assert overall["map50"] == pytest.approx(1.0, abs=1e-12)  # the class without ground truth is left out of the mean
    assert per_class[0]["ap50"] == pytest.approx(1.0, abs=1e-12) and per_class[0]["dota_ap50"] == 1.0
    assert all(np.isnan(value) for value in per_class[1].values())  # NaN, where COCOeval writes -1


@pytest.mark.parametrize("rule, expected", [("voc", 0.5), ("voc07", (6 * 1.0 + 5 * 0.0) / 11)])
def test_dota_ap_rule_is_the_one_asked_for(rule, expected):
    gt = _boxes([(50, 50, 40, 20, 30), (200, 200, 40, 20, 0)], [0, 0])
    dt = _boxes([(50, 50, 40, 20, 30)], [0], scores=[0.9])  # half the boxes found, at precision 1
    acc = accumulate(evaluate_detections(gt, [0, 0], dt, [0], params=DetectionParams(ap_rule=rule)))
    assert summarize_detections(acc)[0]["dota_map50"] == pytest.approx(expected)
