"""The statistics of the metric dict."""

import math

import numpy as np
import pytest

from hbb2obb.boxes import Boxes
from hbb2obb.scoring.evaluate import MatchTable
from hbb2obb.scoring.metrics import class_statistics, flat_metric, iou_fractions, pair_statistics
from hbb2obb.scoring.overlap_metrics import RowOverlap, overlap_statistics


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


def random_table(seed, n_gt, n_pred, class_ids, nan_terms=False):
    """A match table and row overlap with random values: class_statistics reads only classes and columns."""
    rng = np.random.default_rng(seed)
    square = np.array([[0, 0], [1, 0], [1, 1], [0, 1]], dtype=float)
    gt = Boxes(np.repeat(square[None], n_gt, axis=0), rng.choice(class_ids, n_gt))
    pred = Boxes(np.repeat(square[None], n_pred, axis=0), rng.choice(class_ids, n_pred))
    matched = rng.random(n_gt) < 0.7 if n_pred else np.zeros(n_gt, bool)
    pred_index = rng.integers(0, max(n_pred, 1), n_gt)
    iou = np.where(matched, rng.uniform(0.1, 1, n_gt), np.nan)
    best_iou = np.where(matched, iou, rng.uniform(0, 0.1, n_gt))
    angle = np.where(matched, rng.uniform(0, 90, n_gt), np.nan)
    pred_matched = np.zeros(n_pred, bool)
    pred_matched[pred_index[matched]] = True
    table = MatchTable((), np.zeros((0, 2)), gt, np.zeros(n_gt, int), pred, np.zeros(n_pred, int),
                       matched, pred_index, best_iou, iou, angle, pred_matched)
    terms = [np.where(matched, rng.normal(0.5, 0.3, n_gt), np.nan) for _ in range(4)]
    if nan_terms:  # a matched row without terms counts for IoU but not for the distance terms
        terms[0][np.flatnonzero(matched)[::5]] = np.nan
    return table, RowOverlap(*terms, spatial_pass=best_iou >= 0.5)


def per_class_masks(table, overlap):
    """The per-class statistics as a mask over the whole table, one class at a time."""
    out = {}
    for class_id in np.union1d(table.gt.class_id, table.pred.class_id).tolist():
        rows = table.gt.class_id == class_id
        hit = rows & table.matched
        stats = {"gt_total": int(rows.sum()), "pred_total": int((table.pred.class_id == class_id).sum()),
                 "matches": int(hit.sum())}
        stats.update(pair_statistics(table.iou[hit], table.angle_error[hit]))
        stats.update(overlap_statistics(overlap, rows))
        stats["ious"] = table.iou[hit].tolist()
        stats["angle_errors"] = table.angle_error[hit].tolist()
        total = 0.0  # the reference tool's running sum, one pair after the other
        for value in stats["ious"]:
            total += value
        stats["iou_sum"] = total
        stats["iou_values"] = table.iou[hit].tolist()
        out[int(class_id)] = stats
    return out


@pytest.mark.parametrize("n_gt, n_pred, class_ids, nan_terms", [
    (0, 0, [0], False),                        # empty run
    (0, 5, [0, 3], False),                     # predictions only: classes with no ground truth
    (7, 0, [2], False),                        # nothing to match
    (1, 1, [5], False),
    (500, 400, [0, 1, 2], False),
    (500, 400, [-3, 0, 7, 40], True),          # negative ids, gaps, matched rows without terms
    (300, 300, [0, 10**12, -(10**12)], False),  # ids too far apart for a bincount
])
def test_class_statistics_equal_a_mask_per_class(n_gt, n_pred, class_ids, nan_terms):
    table, overlap = random_table(n_gt + n_pred, n_gt, n_pred, class_ids, nan_terms)
    got, expected = class_statistics(table, overlap), per_class_masks(table, overlap)
    assert list(got) == list(expected)
    for class_id, stats in expected.items():
        assert list(got[class_id]) == list(stats)  # same keys in the same order: the JSON text depends on it
        assert got[class_id] == stats  # exact: the same values in the same order reach every mean and median
        assert all(type(got[class_id][k]) is type(v) for k, v in stats.items())
    if n_gt > 100:
        assert sum(s["matches"] for s in got.values()) == table.n_matches
        assert any(0 < s["spatial_match"] < 1 for s in got.values())


@pytest.mark.parametrize("nan_terms", [False, True])
def test_overlap_statistics_of_every_row_from_the_paired_terms(nan_terms):
    """The matched rows' own terms (as row_overlap keeps them) give the statistics of the whole-table mask."""
    from dataclasses import replace

    from hbb2obb.geometry.distance import DistanceIoU

    table, overlap = random_table(7, 400, 300, [0, 1, 2], nan_terms=nan_terms)
    rows = np.flatnonzero(table.matched)
    paired = DistanceIoU(table.iou[rows], *(np.take(column, rows) for column in
                                            (overlap.giou, overlap.diou, overlap.ciou, overlap.center_offset)))
    with_paired = replace(overlap, paired=paired)
    assert overlap_statistics(with_paired) == overlap_statistics(overlap)
    assert overlap_statistics(with_paired) == overlap_statistics(overlap, np.ones(400, bool))
    mask = table.gt.class_id == 1  # a group mask still reads the columns
    assert overlap_statistics(with_paired, mask) == overlap_statistics(overlap, mask)


def test_row_overlap_keeps_the_paired_terms_of_its_columns():
    from hbb2obb.scoring.overlap_metrics import row_overlap

    rng = np.random.default_rng(3)
    n = 50
    base = rng.uniform(0, 100, (n, 1, 2)) + np.array([[0, 0], [8, 0], [8, 4], [0, 4]], dtype=float)
    gt, pred = Boxes(base, np.zeros(n, int)), Boxes(base + rng.uniform(-1, 1, (n, 1, 2)), np.zeros(n, int))
    matched = rng.random(n) < 0.6
    iou = np.where(matched, 0.7, np.nan)
    table = MatchTable((), np.zeros((0, 2)), gt, np.zeros(n, int), pred, np.zeros(n, int), matched,
                       np.arange(n), np.where(matched, 0.7, 0.0), iou, np.where(matched, 1.0, np.nan), matched.copy())
    overlap = row_overlap(table)
    rows = np.flatnonzero(matched)
    for name in ("giou", "diou", "ciou", "center_offset"):
        np.testing.assert_array_equal(getattr(overlap.paired, name), getattr(overlap, name)[rows])
        assert np.isnan(getattr(overlap, name)[~matched]).all()
