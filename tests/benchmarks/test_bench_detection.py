"""benchmarks/bench_detection.py on tiny sets: our side runs and parses, a peer agrees, the verdicts are honest.

Speed itself is measured by the benchmark (make bench), never asserted here.
"""

import json
import subprocess
import sys

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))
import bench_detection  # noqa: E402
import detection_sets  # noqa: E402

COCO_PEER = next(p for p in bench_detection.PEER_LIST if p.script == "coco_shapely.py")
DEVKIT = next(p for p in bench_detection.PEER_LIST if p.script == "dota_devkit_task1.py")
SUPERVISION = next(p for p in bench_detection.PEER_LIST if p.script == "supervision_obb.py")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return detection_sets.generate(tmp_path_factory.mktemp("det") / "tiny", frames=6, detections=900, seed=3)


def test_our_side_runs_on_both_layouts_and_reads_every_box(tiny):
    result = bench_detection.measure("tiny", tiny, None, 1, 0.0, lambda text="": None)
    assert result.peers == [] and result.disagreements == []
    dota, yolo = json.loads(result.ours.runs[0].stdout), json.loads(result.yolo.runs[0].stdout)
    for metrics in (dota, yolo):
        assert metrics["total_gt"] == tiny.gt_boxes and metrics["total_pred"] == tiny.detections
        assert 0 < metrics["map50_95"] < metrics["map50"] <= 1
    assert 0 < dota["dota_map50"] <= 1
    assert result.two.runs[0].stdout == result.ours.runs[0].stdout  # --jobs 2: the same metric dict
    assert result.warnings == result.ours.runs[0].stderr.count("warning:")
    assert result.ours.peak_mb > 10 and result.ours.median > 0
    assert (tiny.root / "imageset.txt").read_text().split() == [f"P{i:05d}" for i in range(6)]
    lines = bench_detection.render([result], {})
    assert any(line.startswith("| tiny | ") for line in lines)


def test_pycocotools_with_shapely_agrees_with_ours_to_1e9(tiny):
    pytest.importorskip("pycocotools")
    pytest.importorskip("shapely")
    peer = subprocess.run([sys.executable, str(bench_detection.PEERS / COCO_PEER.script), str(tiny.gt),
                           str(tiny.pred)], capture_output=True, text=True, timeout=120)
    assert peer.returncode == 0, peer.stderr
    theirs = json.loads(peer.stdout)
    ours = json.loads(bench_detection.run([bench_detection.eval_command(), tiny.gt, tiny.pred, "-mp",
                                           tiny.label_map, "-nb", "--json"]).stdout)
    for key in ("map50", "map50_95", "map75"):
        assert ours[key] == pytest.approx(theirs[key], abs=1e-9), key
    text, agrees = bench_detection.agreement(COCO_PEER, ours, theirs, set())
    assert agrees and "UNEXPLAINED" not in text
    assert len(theirs["classes"]) > 5 and f"{len(theirs['classes'])}/{len(theirs['classes'])} classes" in text


def test_only_the_peers_asked_for_run_and_are_reported(tiny):
    # --peers coco: the pycocotools script alone runs (the test environment has its packages),
    # and the table names it alone
    pytest.importorskip("pycocotools")
    pytest.importorskip("shapely")
    chosen = tuple(p for key, p in zip(bench_detection.PEER_KEYS, bench_detection.PEER_LIST) if key == "coco")
    assert chosen == (COCO_PEER,)
    result = bench_detection.measure("tiny", tiny, sys.executable, 1, 120.0, lambda text="": None, chosen)
    assert [row.name for row in result.peers] == [COCO_PEER.name] and len(result.peers[0].runs) == 1
    assert result.disagreements == []
    header = next(line for line in bench_detection.render([result], {}, chosen) if line.startswith("| set |"))
    assert COCO_PEER.name in header and DEVKIT.name not in header and SUPERVISION.name not in header


def fake(ours_ap, theirs_ap):
    ours = {"class_names": {"0": "ship", "1": "plane"}, "dota_map50": sum(ours_ap) / 2,
            "class_stats": {str(k): {"dota_ap50": v} for k, v in enumerate(ours_ap)}}
    return ours, {"map": sum(theirs_ap) / 2, "ap": {"ship": theirs_ap[0], "plane": theirs_ap[1]}}


def test_a_difference_is_explained_only_by_non_convex_boxes_of_that_class():
    ours, theirs = fake([0.5, 0.7], [0.5, 0.7 + 1e-12])
    assert bench_detection.agreement(DEVKIT, ours, theirs, set()) == (
        "dota_map50 5.0e-13; 2/2 classes within 1e-09", True)
    ours, theirs = fake([0.5, 0.7], [0.5, 0.71])
    text, agrees = bench_detection.agreement(DEVKIT, ours, theirs, {"ship"})
    assert not agrees and "UNEXPLAINED: plane 1.0e-02" in text
    text, agrees = bench_detection.agreement(DEVKIT, ours, theirs, {"plane"})
    assert agrees and "1 differ only where boxes are not convex (plane)" in text


def test_an_approximate_peer_reports_its_difference_without_failing():
    ours = {"class_names": {"0": "ship"}, "map50": 0.5, "map50_95": 0.3,
            "class_stats": {"0": {"ap50": 0.5, "ap50_95": 0.3}}}
    theirs = {"map50": 0.5, "map50_95": 0.31, "classes": {"ship": {"ap50": 0.5, "ap50_95": 0.31}}}
    text, agrees = bench_detection.agreement(SUPERVISION, ours, theirs, set())
    assert agrees and "1 differ (approximate IoU): ship 1.0e-02" in text
    assert not bench_detection.agreement(COCO_PEER, ours, theirs, set())[1]


def test_non_convex_classes_finds_bow_ties_and_concave_quads(tmp_path):
    (tmp_path / "gt").mkdir()
    (tmp_path / "pred").mkdir()
    (tmp_path / "gt" / "P0.txt").write_text("imagesource:x\ngsd:0.3\n0 0 10 0 10 10 0 10 plane 0\n"
                                            "0 0 10 10 10 0 0 10 ship 1\n")  # a bow-tie
    (tmp_path / "pred" / "Task1_plane.txt").write_text("P0 0.9 0 0 10 0 10 10 0 10\n")
    (tmp_path / "pred" / "Task1_harbor.txt").write_text("P0 0.5 0 0 10 0 2 2 0 10\n")  # concave
    made = detection_sets.DetectionSet(tmp_path, 1, 2, 2)
    assert bench_detection.non_convex_classes(made) == {"ship", "harbor"}


def test_a_run_past_the_time_limit_is_stopped_and_says_so():
    done = bench_detection.run([sys.executable, "-c", "import time; time.sleep(30)"], limit=0.5)
    assert done.timed_out and done.seconds < 10
    done = bench_detection.run([sys.executable, "-c", "print('ok')"], limit=30)
    assert not done.timed_out and done.returncode == 0 and done.stdout == "ok\n"
