"""The decomposition of a run on label files: AP by cut, the frame bootstrap against a baseline, the command."""

from __future__ import annotations

import numpy as np
import pytest
import yaml
from click.testing import CliRunner

from hbb2obb.analysis.cuts import aspect_ratio_cut, difficult_flags, ground_truth_properties
from hbb2obb.analysis.detection_errors import compare_detectors, decompose_run, detection_errors, group_ap
from hbb2obb.cli.analyze import main
from hbb2obb.detection.accumulate import accumulate, summarize_detections
from hbb2obb.detection.errors import TideParams
from hbb2obb.detection.evaluate import DetectionParams, evaluate_detections
from hbb2obb.scoring.evaluate import evaluate_frames

from conftest import obb_line, rotated_rect


def _scored_sets(root, seed=3, frames=8, per_frame=10, noise_b=5.0):
    """GT of long boxes at random headings; A close to it, B noisier; both drop, relabel and invent some."""
    rng = np.random.default_rng(seed)
    for sub in ("gt", "a", "b"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    for f in range(frames):
        gt, sides = [], {"a": [], "b": []}
        for i in range(per_frame):
            cx, cy = 120.0 * (i % 5) + 60, 150.0 * (i // 5) + 80
            w, h, angle, c = rng.uniform(40, 70), rng.uniform(12, 20), rng.uniform(0, 180), int(rng.integers(0, 3))
            gt.append(obb_line(c, rotated_rect(cx, cy, w, h, angle)))
            for side, noise in (("a", 1.0), ("b", noise_b)):
                if rng.random() < 0.1:
                    continue
                label = (c + 1) % 3 if rng.random() < 0.08 else c
                turn = 70.0 if rng.random() < 0.1 else rng.normal(0, 2)
                box = rotated_rect(cx + rng.normal(0, noise), cy + rng.normal(0, noise), w, h, angle + turn)
                sides[side].append(obb_line(label, box) + f" {rng.uniform(0.05, 1):.6f}")
        for side in sides:
            sides[side].append(obb_line(0, rotated_rect(900, 900, 30, 10, 0)) + f" {rng.uniform(0, 1):.6f}")
            (root / side / f"f{f}.txt").write_text("\n".join(sides[side]) + "\n")
        (root / "gt" / f"f{f}.txt").write_text("\n".join(gt) + "\n")
    return root


def _run(root, side="a"):
    result = evaluate_frames(root / "gt", root / side, detection=DetectionParams())
    flags, _ = difficult_flags(result.table, root / "gt", None)
    props = ground_truth_properties(result.table, flags)
    return result, decompose_run(result, props, TideParams())


def test_decomposition_of_a_run_is_its_map50_and_a_whole_group_is_the_run(tmp_path):
    result, run = _run(_scored_sets(tmp_path))
    table = result.table
    overall, _ = summarize_detections(accumulate(evaluate_detections(table.gt, table.gt_frame, table.pred,
                                                                     table.pred_frame, result.pairs)))
    assert run.errors.ap == pytest.approx(result.detection_summary.overall["map50"], abs=1e-12)
    assert run.errors.ap == pytest.approx(overall["map50"], abs=1e-12)
    everything = np.ones(len(run.errors.gt_class), dtype=bool)
    ap, _ = group_ap(run.errors, everything, np.ones(len(run.errors.det_class), dtype=bool))
    assert ap == pytest.approx(run.errors.ap, abs=1e-12)
    assert sum(run.errors.counts.values()) > 0


def test_cut_groups_count_their_boxes_and_partition_cuts_cover_every_box(tmp_path):
    _, run = _run(_scored_sets(tmp_path))
    data = detection_errors(run)
    cuts = {cut["key"]: cut for cut in data["cuts"]}
    assert {"orientation", "short_side", "aspect_ratio"} <= set(cuts)
    assert sum(g["boxes"] for g in cuts["aspect_ratio"]["groups"]) == data["boxes"]
    ratio = run.gt_props.long_side / run.gt_props.short_side
    mask = aspect_ratio_cut(run.gt_props).masks[2]  # 2 to 3
    assert np.array_equal(mask, (ratio >= 2) & (ratio < 3))
    assert cuts["aspect_ratio"]["groups"][2]["boxes"] == int(mask.sum())


def test_a_detector_against_itself_differs_by_zero_and_draws_no_verdict(tmp_path):
    _, run = _run(_scored_sets(tmp_path))
    same = compare_detectors(run, run, seed=1, n_boot=200)
    assert same["overall"]["ap_diff"] == 0.0
    assert same["overall"]["ap_ci"] == [0.0, 0.0]
    assert same["overall"]["verdict"] == "within the noise"
    assert same["changed_types"] == []


def test_a_clearly_better_detector_wins_with_an_interval_above_zero(tmp_path):
    root = _scored_sets(tmp_path, noise_b=9.0, frames=12)
    _, run_a = _run(root, "a")
    _, run_b = _run(root, "b")
    comparison = compare_detectors(run_a, run_b, seed=0, n_boot=300)
    overall = comparison["overall"]
    assert overall["ap_diff"] == pytest.approx(run_a.errors.ap - run_b.errors.ap)
    assert overall["ap_ci"][0] > 0 and overall["verdict"] == "A better"
    assert overall["frames"] == 12 and overall["boxes"] == 120
    # verdicts only where the interval excludes zero
    for entry in comparison["classes"]:
        if entry["verdict"] in ("A better", "B better"):
            assert entry["ap_ci"][0] > 0 or entry["ap_ci"][1] < 0


def test_analyze_command_reports_and_writes_the_decomposition(tmp_path):
    root = _scored_sets(tmp_path)
    out = tmp_path / "out"
    result = CliRunner().invoke(main, [str(root / "gt"), str(root / "a"), "--baseline", str(root / "b"),
                                       "--bootstrap", "200", "-nb", "-o", str(out), "--tide_fg", "0.5"])
    assert result.exit_code == 0, result.output
    assert "error decomposition" in result.output and "AP against the baseline" in result.output
    written = yaml.safe_load((out / "analysis.yaml").read_text())
    keys = written["detection_errors"]["overall"]
    assert {"dap_cls", "dap_loc", "dap_both", "dap_dupe", "dap_bkg", "dap_miss", "dap_orient", "dap_fp",
            "dap_fn"} <= set(keys)
    assert (out / "errors.png").stat().st_size > 0


def test_analyze_without_scores_has_no_decomposition(tmp_path):
    root = _scored_sets(tmp_path)
    for path in (root / "a").glob("*.txt"):  # drop the confidence column
        path.write_text("\n".join(" ".join(line.split()[:9]) for line in path.read_text().splitlines()) + "\n")
    out = tmp_path / "out"
    result = CliRunner().invoke(main, [str(root / "gt"), str(root / "a"), "-nb", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "error decomposition" not in result.output
    assert "detection_errors" not in yaml.safe_load((out / "analysis.yaml").read_text())
    assert not (out / "errors.png").exists()


def test_bad_tide_thresholds_are_a_usage_error(tmp_path):
    root = _scored_sets(tmp_path, frames=1)
    result = CliRunner().invoke(main, [str(root / "gt"), str(root / "a"), "-nb", "--tide_bg", "0.6"])
    assert result.exit_code == 2
    assert "--tide_bg" in result.output


def test_the_decomposition_is_gateable_overall_and_per_class(tmp_path):
    """``--require dap_loc<=X`` and ``1:dap_miss<=X`` gate on the numbers analysis.yaml holds; a failed gate is
    exit 1 and a JUnit failure; a key that needs scores is a usage error on unscored predictions."""
    from junitparser import JUnitXml

    root = _scored_sets(tmp_path)
    out = tmp_path / "out"
    first = CliRunner().invoke(main, [str(root / "gt"), str(root / "a"), "-nb", "-o", str(out)])
    assert first.exit_code == 0, first.output
    written = yaml.safe_load((out / "analysis.yaml").read_text())["detection_errors"]
    loc = written["overall"]["dap_loc"]
    miss_1 = next(row["dap_miss"] for row in written["classes"] if row["class_id"] == 1)
    passing = [f"dap_loc<={loc + 1e-9}", f"1:dap_miss<={miss_1 + 1e-9}", "avg_iou>0"]
    args = [str(root / "gt"), str(root / "a"), "-nb"]
    ok = CliRunner().invoke(main, args + [a for g in passing for a in ("--require", g)])
    assert ok.exit_code == 0, ok.output
    assert ok.output.count("pass  ") == 3
    junit = tmp_path / "gates.xml"
    failing = CliRunner().invoke(main, args + ["--require", f"dap_loc<{loc}", "--require", "avg_iou>0",
                                               "--junit", str(junit)])
    assert failing.exit_code == 1, failing.output
    assert f"FAIL  dap_loc<{loc}" in failing.output
    suite = JUnitXml.fromfile(str(junit))
    assert (suite.tests, suite.failures) == (2, 1)
    unknown = CliRunner().invoke(main, args + ["--require", "dap_nope<1"])
    assert unknown.exit_code == 2 and "dap_nope" in unknown.output
