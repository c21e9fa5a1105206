"""The paired comparison of two converted sets on the same ground truth."""

import math
import statistics

import numpy as np
import pytest
from click.testing import CliRunner

import hbb2obb.analysis.compare as compare
from hbb2obb.analysis.compare import align_ground_truth, compare_cuts, paired_difference
from hbb2obb.analysis.cuts import Cut, ground_truth_properties, standard_cuts
from hbb2obb.cli.analyze import main as analyze_main
from hbb2obb.scoring.evaluate import EvalSettings, evaluate_frames

from conftest import shifted_pair

# --------------------------------------------------------------------------- paired_difference


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_paired_difference_statistics_against_statistics_module(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 60))
    a = rng.uniform(0.6, 1.0, n)
    b = np.clip(a - rng.normal(0.01, 0.03, n), 0, 1)
    angle_a, angle_b = rng.uniform(0, 10, n), rng.uniform(0, 12, n)
    d = paired_difference(a, b, angle_a, angle_b, seed=seed, n_boot=500)
    diffs = (a - b).tolist()
    assert d["boxes"] == n
    assert d["iou_diff"] == pytest.approx(statistics.fmean(diffs), abs=1e-12)
    assert d["paired_se"] == pytest.approx(statistics.stdev(diffs) / math.sqrt(n), rel=1e-9)
    independent = math.sqrt(statistics.variance(a.tolist()) + statistics.variance(b.tolist())) / math.sqrt(n)
    assert d["independent_se"] == pytest.approx(independent, rel=1e-9)
    assert d["wins"] == sum(x > 1e-9 for x in diffs)
    assert d["losses"] == sum(x < -1e-9 for x in diffs)
    assert d["wins"] + d["losses"] + d["ties"] == n
    assert d["p90_diff"] == pytest.approx(np.percentile(angle_a, 90) - np.percentile(angle_b, 90))
    assert d["iou_ci"][0] <= d["iou_diff"] <= d["iou_ci"][1]
    assert d["p90_ci"][0] <= d["p90_ci"][1]


def test_bootstrap_is_seeded_and_independent_of_batch_size(monkeypatch):
    rng = np.random.default_rng(3)
    a, b = rng.uniform(0.7, 1, 57), rng.uniform(0.7, 1, 57)
    angles = rng.uniform(0, 10, (2, 57))
    first = paired_difference(a, b, *angles, seed=11, n_boot=700)
    again = paired_difference(a, b, *angles, seed=11, n_boot=700)
    other = paired_difference(a, b, *angles, seed=12, n_boot=700)
    assert first == again
    assert first["iou_ci"] != other["iou_ci"]
    monkeypatch.setattr(compare, "BOOTSTRAP_CELLS", 57 * 9)  # many small batches
    assert paired_difference(a, b, *angles, seed=11, n_boot=700) == first


def test_bootstrap_interval_width_matches_the_normal_approximation():
    rng = np.random.default_rng(8)
    n = 400
    a = rng.uniform(0.5, 1.0, n)
    b = a - rng.normal(0.002, 0.02, n)
    d = paired_difference(a, b, np.zeros(n), np.zeros(n), n_boot=3000)
    width = d["iou_ci"][1] - d["iou_ci"][0]
    assert width == pytest.approx(2 * 1.96 * d["paired_se"], rel=0.15)


@pytest.mark.parametrize(
    "offset, angle_offset, iou_verdict, angle_verdict",
    [
        (+0.02, -3.0, "A better", "A better"),
        (-0.02, +3.0, "B better", "B better"),
        (0.0, 0.0, "within the noise", "within the noise"),
    ],
)
def test_verdicts(offset, angle_offset, iou_verdict, angle_verdict):
    rng = np.random.default_rng(4)
    n = 80
    b = rng.uniform(0.6, 0.95, n)
    noise = rng.normal(0, 0.002, n)
    a = b + offset + (noise - noise.mean() if offset == 0 else noise)
    angle_b = rng.uniform(2, 20, n)
    d = paired_difference(a, b, angle_b + angle_offset, angle_b, n_boot=1000)
    assert d["iou_verdict"] == iou_verdict
    assert d["angle_verdict"] == angle_verdict


def test_paired_difference_of_no_and_one_pair():
    none = paired_difference([], [], [], [])
    assert none["boxes"] == 0 and none["iou_verdict"] == "no pairs" and none["iou_diff"] == 0.0
    one = paired_difference([0.9], [0.8], [1.0], [2.0], n_boot=100)
    assert one["iou_diff"] == pytest.approx(0.1)
    assert one["paired_se"] == 0.0
    assert one["iou_ci"] == pytest.approx([0.1, 0.1])
    assert one["wins"] == 1 and one["iou_verdict"] == one["angle_verdict"] == "too few boxes"
    assert paired_difference([0.9], [0.8], [1.0], [2.0], n_boot=100, min_boxes=1)["iou_verdict"] == "A better"


@pytest.mark.parametrize("n, verdict", [(9, "too few boxes"), (10, "A better")])
def test_no_verdict_below_the_minimum_group_size(n, verdict):
    rng = np.random.default_rng(2)
    b = rng.uniform(0.6, 0.9, n)
    d = paired_difference(b + 0.05 + rng.normal(0, 0.001, n), b, np.ones(n), np.ones(n), n_boot=400)
    assert d["iou_ci"][0] > 0  # the interval excludes 0 either way: only the size decides
    assert d["iou_verdict"] == verdict
    assert d["boxes"] == n and d["iou_diff"] == pytest.approx(0.05, abs=0.002)


def test_p90_interval_wider_than_the_p90_is_unusable():
    # B has a tail of three 80-degree errors among 40 boxes: whether a resample draws one or
    # four of them decides B's p90, so the interval spans tens of degrees.
    n = 40
    angle_a = np.linspace(1.0, 3.0, n)
    angle_b = np.concatenate([np.linspace(1.0, 3.0, n - 3), [80.0, 81.0, 82.0]])
    d = paired_difference(np.full(n, 0.9), np.full(n, 0.8), angle_a, angle_b, n_boot=600)
    assert d["p90_ci"][1] - d["p90_ci"][0] > max(d["p90_a"], d["p90_b"])
    assert not d["p90_ci_usable"] and d["angle_verdict"] == "interval unusable"
    assert d["iou_verdict"] == "A better"


def test_bootstrap_p_value_counts_both_tails():
    assert compare.bootstrap_p_value(np.array([-1.0, 1.0, 2.0, 3.0])) == pytest.approx(2 * 2 / 5)
    assert compare.bootstrap_p_value(np.arange(1.0, 100.0)) == pytest.approx(2 / 100)


def test_holm_adjust_against_the_step_down_by_hand():
    p = [0.012, 0.001, 0.04, 0.02, 0.3]
    # sorted 0.001, 0.012, 0.02, 0.04, 0.3 times 5, 4, 3, 2, 1: 0.005, 0.048, 0.06, 0.08, 0.3
    assert compare.holm_adjust(p) == pytest.approx([0.048, 0.005, 0.08, 0.06, 0.3])
    assert compare.holm_adjust([0.5, 0.4]) == pytest.approx([0.8, 0.8])  # monotone, capped at 1 below
    assert compare.holm_adjust([0.9, 0.8]).tolist() == [1.0, 1.0]


# --------------------------------------------------------------------------- the bootstrap against the plain one


def reference_bootstrap(iou_diff, angle_a, angle_b, n_boot, seed):
    """The straightforward bootstrap: gather each resample, take its mean and np.percentile."""
    rng = np.random.default_rng(seed)
    n = iou_diff.size
    picks = rng.integers(0, n, size=(n_boot, n))
    means = iou_diff[picks].mean(axis=1)
    p90s = np.percentile(angle_a[picks], 90, axis=1) - np.percentile(angle_b[picks], 90, axis=1)
    return means, p90s


def bootstrap_inputs(kind, n, seed):
    rng = np.random.default_rng(seed)
    diff = rng.normal(0.01, 0.05, n)
    angle_a, angle_b = rng.gamma(2.0, 2.0, n), rng.gamma(2.0, 2.5, n)
    if kind == "ties":  # few distinct values on every side, many boxes at the 90th percentile
        diff = rng.integers(-2, 3, n) / 10
        angle_a, angle_b = rng.integers(0, 4, n).astype(float), rng.integers(0, 3, n) * 0.5
    elif kind == "one value":  # every angle the same, a constant IoU difference
        diff, angle_a, angle_b = np.full(n, 0.1), np.full(n, 2.5), np.full(n, 2.5)
    elif kind == "same angles":
        angle_b = angle_a.copy()
    elif kind == "same sets":  # B is A: no difference anywhere
        diff, angle_b = np.zeros(n), angle_a.copy()
    elif kind == "repeated tail":  # the top decile is one repeated value
        angle_a[rng.random(n) < 0.3] = 40.0
    elif kind == "not finite":
        angle_a[0], angle_b[-1] = np.nan, np.inf
    return diff, angle_a, angle_b


KINDS = ["spread", "ties", "one value", "same angles", "same sets", "repeated tail"]


@pytest.mark.parametrize("n, n_boot", [(1, 50), (2, 200), (3, 200), (7, 300), (50, 300), (1001, 100), (60_000, 12)])
@pytest.mark.parametrize("kind", KINDS)
def test_bootstrap_matches_the_plain_gather_and_percentile(kind, n, n_boot):
    diff, angle_a, angle_b = bootstrap_inputs(kind, n, seed=n)
    means, p90s = compare._bootstrap(diff, angle_a, angle_b, n_boot, seed=n + 1)
    expected_means, expected_p90s = reference_bootstrap(diff, angle_a, angle_b, n_boot, seed=n + 1)
    assert np.array_equal(p90s, expected_p90s)  # the same order statistics, interpolated alike
    np.testing.assert_allclose(means, expected_means, rtol=0, atol=1e-12)


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")  # inf - inf in numpy, on both paths
@pytest.mark.parametrize("n", [1, 5, 40])
def test_bootstrap_with_non_finite_angles_follows_numpy(n):
    diff, angle_a, angle_b = bootstrap_inputs("not finite", n, seed=3)
    means, p90s = compare._bootstrap(diff, angle_a, angle_b, 100, seed=9)
    expected_means, expected_p90s = reference_bootstrap(diff, angle_a, angle_b, 100, seed=9)
    np.testing.assert_array_equal(p90s, expected_p90s)  # NaN where numpy gives NaN
    np.testing.assert_allclose(means, expected_means, rtol=0, atol=1e-12)


@pytest.mark.parametrize("kind", ["spread", "ties"])
def test_bootstrap_falls_back_exactly_when_an_order_statistic_leaves_the_window(monkeypatch, kind):
    monkeypatch.setattr(compare, "WINDOW_SIGMAS", 0.0)  # a window of a few ranks: most resamples miss it
    diff, angle_a, angle_b = bootstrap_inputs(kind, 3000, seed=4)
    _, p90s = compare._bootstrap(diff, angle_a, angle_b, 40, seed=2)
    assert np.array_equal(p90s, reference_bootstrap(diff, angle_a, angle_b, 40, seed=2)[1])


def test_bootstrap_of_one_batch_or_many_is_the_same(monkeypatch):
    diff, angle_a, angle_b = bootstrap_inputs("ties", 301, seed=6)
    whole = compare._bootstrap(diff, angle_a, angle_b, 250, seed=1)
    monkeypatch.setattr(compare, "BOOTSTRAP_CELLS", 301 * 7)  # odd-sized batches of 7 resamples
    batched = compare._bootstrap(diff, angle_a, angle_b, 250, seed=1)
    assert np.array_equal(whole[0], batched[0]) and np.array_equal(whole[1], batched[1])


def test_groups_held_by_two_cuts_are_the_same_and_independent(tmp_path):
    gt, a_dir, b_dir, iou_a, iou_b, _ = shifted_pair(tmp_path, n_frames=2)
    a, b = evaluate_frames(gt, a_dir).table, evaluate_frames(gt, b_dir).table
    every = np.ones(len(a.gt), dtype=bool)
    half = np.arange(len(a.gt)) % 2 == 0
    cuts = [Cut("one", "One", ["all", "even"], [every, half]), Cut("two", "Two", ["even"], [half.copy()])]
    result = compare_cuts(a, b, cuts, seed=5, n_boot=300)
    whole, even = result["cuts"][0]["groups"]
    assert even == {**result["cuts"][1]["groups"][0], "label": "even"}
    direct = paired_difference(a.iou[half], b.iou[half], a.angle_error[half], b.angle_error[half], seed=5,
                               n_boot=300)
    holm = ("iou_p_holm", "p90_p_holm", "iou_verdict", "angle_verdict", "label")
    assert {k: v for k, v in even.items() if k not in holm} == {k: v for k, v in direct.items() if k not in holm}
    assert even["iou_p_holm"] >= direct["iou_p"]
    assert even["iou_diff"] == pytest.approx((iou_a - iou_b)[half].mean(), abs=1e-12)
    assert {k: v for k, v in whole.items() if k != "label"} == result["overall"]
    whole["iou_ci"][0] = -1.0  # each group owns its lists
    assert result["overall"]["iou_ci"][0] != -1.0


def test_family_is_the_distinct_groups_big_enough_for_a_verdict(tmp_path):
    gt, a_dir, b_dir, *_ = shifted_pair(tmp_path, n_frames=3)
    a, b = evaluate_frames(gt, a_dir).table, evaluate_frames(gt, b_dir).table
    rows = np.arange(len(a.gt))
    every, half, few = np.ones(len(a.gt), dtype=bool), rows % 2 == 0, rows < 5
    cuts = [Cut("one", "One", ["all", "even", "few"], [every, half, few]), Cut("two", "Two", ["even"], [half])]
    result = compare_cuts(a, b, cuts, seed=1, n_boot=400)
    assert result["family"] == {"min_boxes": 10, "method": "holm", "iou_tests": 2, "angle_tests": 2}
    whole, even, small = result["cuts"][0]["groups"]
    assert small["boxes"] == 5 and small["iou_verdict"] == "too few boxes" and "iou_p_holm" not in small
    # two tests: the smaller p doubled, the larger one at least that and at least its own p
    low, high = sorted([whole["iou_p"], even["iou_p"]])
    assert sorted([whole["iou_p_holm"], even["iou_p_holm"]]) == pytest.approx(
        [min(1, 2 * low), max(min(1, 2 * low), high)]
    )


def test_holm_turns_a_lone_lucky_cut_into_noise():
    def result(p, verdict="A better"):
        return {"iou_p": p, "p90_p": 1.0, "iou_verdict": verdict, "angle_verdict": "within the noise"}

    family = [result(0.001), result(0.03)] + [result(0.5, "within the noise") for _ in range(8)]
    sizes = compare._holm_verdicts(family)
    assert sizes == {"iou_tests": 10, "angle_tests": 10}
    assert family[0]["iou_verdict"] == "A better" and family[0]["iou_p_holm"] == pytest.approx(0.01)
    assert family[1]["iou_verdict"] == "within the noise (Holm)" and family[1]["iou_p_holm"] == pytest.approx(0.27)
    assert all(r["iou_verdict"] == "within the noise" for r in family[2:])


def test_cli_prints_what_the_plain_bootstrap_gives(tmp_path, monkeypatch):
    gt, a_dir, b_dir, *_ = shifted_pair(tmp_path)
    args = [str(gt), str(a_dir), "--baseline", str(b_dir), "-nb", "--seed", "4", "--bootstrap", "300"]
    fast = CliRunner().invoke(analyze_main, args)
    monkeypatch.setattr(compare, "_bootstrap", reference_bootstrap)
    plain = CliRunner().invoke(analyze_main, args)
    assert fast.exit_code == plain.exit_code == 0
    assert "Against the baseline" in fast.output and "95% bootstrap intervals (300 resamples, seed 4)" in fast.output
    assert fast.output == plain.output


# --------------------------------------------------------------------------- aligning two tables


def rect_line(x, cls=0):
    return f"{cls} {x} 0 {x + 40} 0 {x + 40} 20 {x} 20"


def test_align_ground_truth_by_frame_and_line(write_labels):
    root = write_labels({
        "gt/a.txt": rect_line(0) + "\n" + rect_line(100, cls=1) + "\n" + rect_line(200) + "\n",
        "gt/b.txt": rect_line(0) + "\n",
        "gt/c.txt": rect_line(0) + "\n\n" + rect_line(100) + "\n",
        "pa/a.txt": rect_line(0) + "\n", "pa/b.txt": rect_line(0) + "\n", "pa/c.txt": rect_line(0) + "\n",
        "pb/a.txt": rect_line(0) + "\n", "pb/c.txt": rect_line(0) + "\n",  # no b.txt: frame b skipped
    })
    a = evaluate_frames(root / "gt", root / "pa").table
    b = evaluate_frames(root / "gt", root / "pb", EvalSettings(excluded_classes=(1,))).table
    # A rows: a:1 a:2 a:3 b:1 c:1 c:3 ; B rows: a:1 a:3 c:1 c:3
    assert align_ground_truth(a, b).tolist() == [0, -1, 1, -1, 2, 3]
    assert align_ground_truth(b, a).tolist() == [0, 2, 4, 5]
    empty = evaluate_frames(root / "gt", root / "gt", EvalSettings(excluded_classes=(0, 1))).table
    assert align_ground_truth(a, empty).tolist() == [-1] * 6


# --------------------------------------------------------------------------- the constructed comparison


def test_known_shift_gives_the_constructed_paired_difference(tmp_path):
    gt, a_dir, b_dir, iou_a, iou_b, shifted = shifted_pair(tmp_path)
    a = evaluate_frames(gt, a_dir)
    b = evaluate_frames(gt, b_dir)
    assert a.table.matched.all() and b.table.matched.all()
    props = ground_truth_properties(a.table)
    result = compare_cuts(a.table, b.table, standard_cuts(props), seed=3, n_boot=500)
    overall = result["overall"]
    expected = iou_a - iou_b
    assert overall["boxes"] == len(expected)
    assert overall["iou_diff"] == pytest.approx(expected.mean(), abs=1e-12)
    assert overall["paired_se"] == pytest.approx(expected.std(ddof=1) / math.sqrt(expected.size), rel=1e-9)
    assert overall["ties"] == int((~shifted).sum())
    assert overall["wins"] == int((expected[shifted] > 1e-9).sum())
    assert overall["losses"] == int((expected[shifted] < -1e-9).sum())
    assert overall["iou_verdict"] == "A better"
    assert result["matched_by_a_only"] == result["matched_by_b_only"] == 0
    # A cut: each group's difference is the constructed one over that group's boxes.
    cuts = {cut.key: cut for cut in standard_cuts(props)}
    for cut in result["cuts"]:
        mask_of = dict(zip(cuts[cut["key"]].labels, cuts[cut["key"]].masks))
        for group in cut["groups"]:
            mask = mask_of[group["label"]]
            assert group["boxes"] == int(mask.sum())
            if mask.any():
                assert group["iou_diff"] == pytest.approx(expected[mask].mean(), abs=1e-12)


def test_boxes_matched_by_one_side_only_are_counted_apart(write_labels):
    root = write_labels({
        "gt/a.txt": rect_line(0) + "\n" + rect_line(100) + "\n" + rect_line(200) + "\n",
        "pa/a.txt": rect_line(2) + "\n" + rect_line(100) + "\n",
        "pb/a.txt": rect_line(0) + "\n" + rect_line(500) + "\n" + rect_line(200) + "\n",
    })
    a = evaluate_frames(root / "gt", root / "pa").table
    b = evaluate_frames(root / "gt", root / "pb").table
    props = ground_truth_properties(a)
    result = compare_cuts(a, b, standard_cuts(props), n_boot=200)
    assert result["matched_by_a_only"] == 1  # the box at 100
    assert result["matched_by_b_only"] == 1  # the box at 200
    assert result["overall"]["boxes"] == 1
    assert result["overall"]["iou_diff"] == pytest.approx(38 * 20 / (2 * 800 - 38 * 20) - 1.0)
