"""The statistics of the metric dict."""

import math

import numpy as np
import pytest

from hbb2obb.metrics import flat_metric, iou_fractions, pair_statistics


def test_empty_statistics_are_zero():
    stats = pair_statistics([], [])
    assert all(v == 0.0 for k, v in stats.items() if k != "iou_fractions")
    assert stats["iou_fractions"] == {"0.50": 0.0, "0.75": 0.0, "0.85": 0.0, "0.90": 0.0}


def test_statistics_against_numpy():
    rng = np.random.default_rng(1)
    ious, angles = rng.uniform(0.4, 1, 57), rng.uniform(0, 90, 57)
    stats = pair_statistics(ious, angles)
    assert stats["avg_iou"] == pytest.approx(ious.mean(), abs=1e-15)
    assert stats["std_iou"] == pytest.approx(ious.std(ddof=0), abs=1e-15)
    assert stats["sem_iou"] == pytest.approx(ious.std() / math.sqrt(57), abs=1e-15)
    assert stats["median_iou"] == np.median(ious)
    assert stats["p90_angle_error"] == np.percentile(angles, 90)
    assert stats["iou_fractions"]["0.75"] == np.mean(ious >= 0.75)


def test_ladder_is_at_or_above():
    assert iou_fractions(np.array([0.5, 0.75, 0.85, 0.9]))["0.90"] == 0.25
    assert iou_fractions(np.array([0.49999]))["0.50"] == 0.0


def test_flat_metric_names():
    metrics = {"avg_iou": 0.8, "iou_fractions": {"0.90": 0.4}, "class_stats": {}}
    assert flat_metric(metrics, "iou_at_90") == 0.4
    assert flat_metric(metrics, "avg_iou") == 0.8
    with pytest.raises(KeyError):
        flat_metric(metrics, "class_stats")
