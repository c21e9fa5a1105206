"""benchmarks/bench_ties.py: a peer's difference passes only when proven exact ties explain all of it.

Small fake metric dicts and one real label pair (docs/reference-tool.md's 9/10 pair, written to tmp_path):
the proof is computed from those files, so changing one corner takes it away.
"""

import sys
from fractions import Fraction

from conftest import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))
import bench  # noqa: E402
import bench_peers  # noqa: E402
import bench_ties  # noqa: E402

GT_LINE = "0 1095 494 1095 397 1132 397 1132 494"
PRED_LINE = "0 1131 400 1131 492 1095 493 1093 401"  # IoU exactly 9/10 with GT_LINE
OTHER_GT = "0 0 0 10 0 10 10 0 10"
OTHER_PRED = "0 0 0 10 0 10 5 0 5"  # IoU exactly 1/2


def fractions(at_90):
    return {"0.50": 1.0, "0.75": 0.5, "0.85": 0.5, "0.90": at_90}


def metric_dict(ious, at_90):
    """Two matched pairs of class 0 (the 9/10 pair first, then a 1/2 pair)."""
    return {"total_matches": 2, "avg_iou": 0.7, "iou_fractions": fractions(at_90),
            "class_stats": {"0": {"matches": 2, "ious": list(ious), "iou_fractions": fractions(at_90)}}}


OURS = metric_dict([0.9, 0.5], 0.5)
SHAPELY = metric_dict([0.8999999999999997, 0.5], 0.0)  # what a float-only peer prints


def label_files(tmp_path, pred_line=PRED_LINE):
    (tmp_path / "gt").mkdir(parents=True)
    (tmp_path / "pred").mkdir()
    (tmp_path / "gt" / "f.txt").write_text(f"{GT_LINE}\n{OTHER_GT}\n")
    (tmp_path / "pred" / "f.txt").write_text(f"{OTHER_PRED}\n{pred_line}\n")
    rows = [{"frame": "f", "gt_line": "1", "pred_line": "2", "gt_class": "0", "iou": "0.9"},
            {"frame": "f", "gt_line": "2", "pred_line": "1", "gt_class": "0", "iou": "0.5"},
            {"frame": "f", "gt_line": "", "pred_line": "3", "gt_class": "", "iou": ""}]  # a lone prediction
    return lambda: (rows, tmp_path / "gt", tmp_path / "pred")


def test_equal_dicts_agree_without_looking_for_ties():
    def never():
        raise AssertionError("the pairs table is needed only for a difference")
    verdict = bench_ties.peer_verdict(bench.compare_metrics, OURS, metric_dict([0.9, 0.5], 0.5), never)
    assert verdict.agree and verdict.text.startswith("yes (")


def test_difference_explained_by_a_proven_tie_passes_and_says_so(tmp_path):
    verdict = bench_ties.peer_verdict(bench.compare_metrics, OURS, SHAPELY, label_files(tmp_path))
    assert verdict.agree
    assert "differs at 2 value(s) explained by 1 pair(s) whose IoU is exactly a rung" in verdict.text
    assert "f GT line 1 / prediction line 2: IoU 9/10 = rung 0.90" in verdict.text
    assert "proved with exact rationals" in verdict.text
    # The 1/2 pair is a proven tie too (at 0.50), but the peer puts it on the rung as we do.
    ties = bench_ties.proven_ties(label_files(tmp_path / "again")()[0], tmp_path / "again" / "gt",
                                  tmp_path / "again" / "pred", OURS)
    assert [(t.rung, t.exact, t.index) for t in ties] == [("0.90", Fraction(9, 10), 0), ("0.50", Fraction(1, 2), 1)]


def test_a_reference_style_dict_with_iou_values_is_explained_too(tmp_path):
    reference = {"total_matches": 2, "avg_iou": 0.7, "iou_fractions": fractions(0.0),
                 "class_stats": {"0": {"matches": 2, "iou_values": [0.8999999999999997, 0.5]}}}
    ours = bench_peers.reference_view(OURS)  # ours in the reference's key names, as the benchmark compares
    verdict = bench_ties.peer_verdict(bench.compare_metrics, ours, reference, label_files(tmp_path))
    assert verdict.agree and "differs at 1 value(s) explained by 1 pair(s)" in verdict.text


def test_any_other_difference_fails(tmp_path):
    also_mean = dict(SHAPELY, avg_iou=0.69)
    verdict = bench_ties.peer_verdict(bench.compare_metrics, OURS, also_mean, label_files(tmp_path))
    assert not verdict.agree and verdict.text.startswith("NO (")


def test_without_the_exact_proof_the_rung_difference_fails(tmp_path):
    # One corner a pixel off: the float IoU the table claims is no longer an exact tie in the files.
    moved = PRED_LINE.replace("1093 401", "1093 402")
    verdict = bench_ties.peer_verdict(bench.compare_metrics, OURS, SHAPELY, label_files(tmp_path, moved))
    assert not verdict.agree and "iou_fractions.0.90" in verdict.text


def test_more_difference_than_the_proven_ties_fails(tmp_path):
    # The peer counts neither pair at 0.50 although it lists the 1/2 pair at 0.5: not a tie effect.
    peer = metric_dict([0.8999999999999997, 0.5], 0.0)
    peer["iou_fractions"] = dict(peer["iou_fractions"], **{"0.50": 0.5})
    verdict = bench_ties.peer_verdict(bench.compare_metrics, OURS, peer, label_files(tmp_path))
    assert not verdict.agree


def test_a_peer_that_lists_the_tie_on_the_rung_explains_nothing(tmp_path):
    # Its list has the pair at 0.9 but its share says below: that is its own inconsistency.
    peer = metric_dict([0.9, 0.5], 0.0)
    verdict = bench_ties.peer_verdict(bench.compare_metrics, OURS, peer, label_files(tmp_path))
    assert not verdict.agree
