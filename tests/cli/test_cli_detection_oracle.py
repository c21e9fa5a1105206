"""hbb2obb-eval's detection metrics against pycocotools on axis-aligned boxes (issue 34, classes 13 and 14).

Axis-aligned rectangles make COCOeval's own ``bbox`` IoU (crowd rule included: intersection over
the detection's area for ``iscrowd: 1``) the exact oracle of our rotated IoU, so the whole
command is checked, pairing of frames without a prediction file and difficult boxes included.
"""

import contextlib
import io
import json

import numpy as np
import pytest
from click.testing import CliRunner

from hbb2obb.cli.eval import main

pytest.importorskip("pycocotools")
from pycocotools.coco import COCO  # noqa: E402
from pycocotools.cocoeval import COCOeval  # noqa: E402

CLASSES = ("car", "bus")


def scene(seed: int, frames: int = 12, lacking=(1, 4, 7, 9)):
    """GT (x, y, w, h, class, difficult) and detections (x, y, w, h, class, score) per frame; the
    ``lacking`` frames have ground truth and no prediction file."""
    rng = np.random.default_rng(seed)
    gt, dt = {}, {}
    for frame in range(frames):
        gt[frame], dt[frame] = [], []
        for _ in range(int(rng.integers(1, 7))):
            x, y = (int(v) for v in rng.integers(0, 400, 2))
            w, h = (int(v) for v in rng.integers(10, 120, 2))
            cls = int(rng.integers(0, 2))
            gt[frame].append((x, y, w, h, cls, int(rng.random() < 0.25)))
            if frame in lacking:
                continue
            for _ in range(int(rng.integers(0, 3))):
                dx, dy = (int(v) for v in rng.integers(-6, 7, 2))
                dt[frame].append((x + dx, y + dy, w + int(rng.integers(-5, 6)), h + int(rng.integers(-5, 6)),
                                  cls if rng.random() > 0.1 else 1 - cls, round(float(rng.uniform(0.05, 1)), 3)))
        if frame not in lacking:
            for _ in range(int(rng.integers(0, 3))):
                x, y = (int(v) for v in rng.integers(0, 400, 2))
                dt[frame].append((x, y, 30, 20, int(rng.integers(0, 2)), round(float(rng.uniform(0.05, 1)), 3)))
    return gt, dt, set(lacking)


def corners(x, y, w, h):
    return f"{x} {y} {x + w} {y} {x + w} {y + h} {x} {y + h}"


def write_scene(root, gt, dt, lacking):
    (root / "gt").mkdir()
    (root / "pred").mkdir()
    (root / "classes.yaml").write_text("".join(f"{i}: {name}\n" for i, name in enumerate(CLASSES)))
    for frame, boxes in gt.items():
        (root / "gt" / f"f{frame:02d}.txt").write_text(
            "".join(f"{corners(x, y, w, h)} {CLASSES[c]} {d}\n" for x, y, w, h, c, d in boxes))
        if frame not in lacking:
            (root / "pred" / f"f{frame:02d}.txt").write_text(
                "".join(f"{c} {corners(x, y, w, h)} {s}\n" for x, y, w, h, c, s in dt[frame]))


def cocoeval(gt, dt, frames, crowd: bool):
    """pycocotools' stats on every frame in ``frames``; difficult boxes as iscrowd when ``crowd``."""
    images = [{"id": f} for f in sorted(frames)]
    categories = [{"id": i} for i in range(len(CLASSES))]
    gts, dts = [], []
    for f in frames:
        for x, y, w, h, c, d in gt[f]:
            gts.append({"id": len(gts) + 1, "image_id": f, "category_id": c, "bbox": [x, y, w, h], "area": w * h,
                        "iscrowd": int(crowd and d)})
        for x, y, w, h, c, s in dt[f]:
            dts.append({"id": len(dts) + 1, "image_id": f, "category_id": c, "bbox": [x, y, w, h], "area": w * h,
                        "score": s})
    with contextlib.redirect_stdout(io.StringIO()):
        coco_gt, coco_dt = COCO(), COCO()
        coco_gt.dataset = {"images": images, "categories": categories, "annotations": gts}
        coco_dt.dataset = {"images": images, "categories": categories, "annotations": dts}
        coco_gt.createIndex()
        coco_dt.createIndex()
        evaluator = COCOeval(coco_gt, coco_dt, "bbox")
        evaluator.evaluate()
        evaluator.accumulate()
        evaluator.summarize()
    return evaluator.stats  # AP, AP50, AP75, APs, APm, APl, AR1, AR10, AR100, ...


def metrics_of(root, *args):
    result = CliRunner().invoke(main, [str(root / "gt"), str(root / "pred"), "-mp", str(root / "classes.yaml"),
                                       "-nb", "--json", *args])
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout), result.stderr


def assert_coco(metrics, stats):
    for key, value in zip(("map50_95", "map50", "map75"), stats[:3]):
        assert metrics[key] == pytest.approx(value, abs=1e-9), key
    assert metrics["mar_100"] == pytest.approx(stats[8], abs=1e-9)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_frames_without_a_prediction_file_count_as_frames_without_detections(tmp_path, seed):
    gt, dt, lacking = scene(seed)
    write_scene(tmp_path, gt, dt, lacking)
    metrics, err = metrics_of(tmp_path)
    assert_coco(metrics, cocoeval(gt, dt, gt.keys(), crowd=True))  # every frame, the lacking ones empty
    assert metrics["detection_frames_without_predictions"] == len(lacking) == metrics["missing_pred_files"]
    assert "the detection metrics count its ground truth as missed" in err
    # the reference tool's keys still skip them, as it does
    assert metrics["total_gt"] == sum(len(gt[f]) for f in gt if f not in lacking)
    # skipping them, now only when asked, lifts the score: it is what a run on the paired frames gives
    skipped, _ = metrics_of(tmp_path, "--missing_pred", "skip")
    assert_coco(skipped, cocoeval(gt, dt, gt.keys() - lacking, crowd=True))
    assert skipped["map50"] > metrics["map50"]
    empty, _ = metrics_of(tmp_path, "--missing_pred", "empty")
    assert empty["map50"] == metrics["map50"] and empty["map50_95"] == metrics["map50_95"]


@pytest.mark.parametrize("seed", [3, 4])
@pytest.mark.parametrize("rule", ["ignore", "count"])
def test_difficult_boxes_by_the_chosen_coco_rule(tmp_path, seed, rule):
    gt, dt, _ = scene(seed, lacking=())
    assert any(d for boxes in gt.values() for *_, d in boxes)
    write_scene(tmp_path, gt, dt, set())
    metrics, _ = metrics_of(tmp_path, "--difficult", rule)
    assert_coco(metrics, cocoeval(gt, dt, gt.keys(), crowd=rule == "ignore"))
    assert metrics["difficult"] == rule


def test_difficult_default_is_ignore(tmp_path):
    gt, dt, _ = scene(5, lacking=())
    write_scene(tmp_path, gt, dt, set())
    assert metrics_of(tmp_path)[0]["map50_95"] == metrics_of(tmp_path, "--difficult", "ignore")[0]["map50_95"]


def write_coco_scene(root, gt, dt):
    """The scene's ground truth as one COCO file (difficult boxes as ``iscrowd: 1``), detections as text."""
    (root / "gt").mkdir()
    (root / "pred").mkdir()
    images = [{"id": f + 1, "file_name": f"f{f:02d}.jpg", "width": 600, "height": 600} for f in gt]
    annotations = []
    for f, boxes in gt.items():
        for x, y, w, h, c, d in boxes:
            annotations.append({"id": len(annotations) + 1, "image_id": f + 1, "category_id": c + 1,
                                "bbox": [x, y, w, h], "area": w * h, "iscrowd": d})
    categories = [{"id": i + 1, "name": name} for i, name in enumerate(CLASSES)]
    (root / "gt" / "instances.json").write_text(
        json.dumps({"images": images, "annotations": annotations, "categories": categories}))
    (root / "classes.yaml").write_text("".join(f"{i}: {name}\n" for i, name in enumerate(CLASSES)))
    for frame in gt:
        (root / "pred" / f"f{frame:02d}.txt").write_text(
            "".join(f"{c} {corners(x, y, w, h)} {s}\n" for x, y, w, h, c, s in dt[frame]))


@pytest.mark.parametrize("rule", ["ignore", "count"])
def test_coco_crowd_regions_stay_crowd_regions_under_either_difficult_rule(tmp_path, rule):
    """``--difficult`` chooses for difficult boxes; a COCO crowd region is a crowd region either way."""
    gt, dt, _ = scene(6, lacking=())
    assert any(d for boxes in gt.values() for *_, d in boxes)
    write_coco_scene(tmp_path, gt, dt)
    metrics, _ = metrics_of(tmp_path, "--difficult", rule)
    assert_coco(metrics, cocoeval(gt, dt, gt.keys(), crowd=True))
