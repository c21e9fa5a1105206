"""COCO files whose bbox is a rotated box of five numbers [cx, cy, w, h, angle] (issue 37)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from click.testing import CliRunner
from shapely.geometry import Polygon

from hbb2obb.cli.eval import main as eval_main
from hbb2obb.cli.formats import main as convert_main
from hbb2obb.errors import InputError, LabelFormatError
from hbb2obb.io.coco import read_coco
from hbb2obb.io.ultralytics_json import rbox_corners


def _coco(boxes, size=(200, 100), score=None):
    annotations = [{"id": i + 1, "image_id": 1, "category_id": 1, "bbox": list(box), "area": 1, "iscrowd": 0,
                    **({"score": score} if score is not None else {})} for i, box in enumerate(boxes)]
    return {"images": [{"id": 1, "file_name": "a.jpg", "width": size[0], "height": size[1]}],
            "annotations": annotations, "categories": [{"id": 1, "name": "car"}]}


def _read(tmp_path, boxes, angle, strict=True):
    path = tmp_path / "rotated.json"
    path.write_text(json.dumps(_coco(boxes)))
    return read_coco(path, strict=strict, label_map=None, angle=angle)


def _detectron2_corners(cx, cy, w, h, degrees):
    """Detectron2's RotatedBoxes definition (structures/rotated_boxes.py): with image y pointing down,
    xr = cos(a) (x - xc) + sin(a) (y - yc) + xc, yr = -sin(a) (x - xc) + cos(a) (y - yc) + yc,
    a positive angle turning the box counter-clockwise as shown on screen."""
    a = math.radians(degrees)
    corners = [(cx - w / 2, cy - h / 2), (cx + w / 2, cy - h / 2), (cx + w / 2, cy + h / 2), (cx - w / 2, cy + h / 2)]
    c, s = math.cos(a), math.sin(a)
    return [(c * (x - cx) + s * (y - cy) + cx, -s * (x - cx) + c * (y - cy) + cy) for x, y in corners]


@pytest.mark.parametrize("degrees", [0, 30, 90, -45, 170])
def test_deg_ccw_is_detectron2s_rotated_box(tmp_path, degrees):
    frames, _, _ = _read(tmp_path, [(60, 40, 30, 10, degrees)], "deg_ccw")
    expected = Polygon(_detectron2_corners(60, 40, 30, 10, degrees))
    assert Polygon(frames[0].boxes.corners[0]).symmetric_difference(expected).area == pytest.approx(0, abs=1e-9)


def test_a_positive_ccw_angle_lifts_the_right_end_on_screen(tmp_path):
    """The sign by hand: counter-clockwise on screen, the right end of the width goes up (y shrinks)."""
    quad = _read(tmp_path, [(0, 0, 10, 0, 90)], "deg_ccw")[0][0].boxes.corners[0]
    assert quad[:, 1].min() == pytest.approx(-5) and np.abs(quad[:, 0]).max() == pytest.approx(0, abs=1e-9)


@pytest.mark.parametrize("angle", [0.3, -1.2, 2.8])
def test_rad_cw_is_ultralytics_xywhr_and_the_other_units_agree(tmp_path, angle):
    box = (60, 40, 30, 10)
    ours = {rule: _read(tmp_path, [(*box, value)], rule)[0][0].boxes.corners[0]
            for rule, value in (("rad_cw", angle), ("deg_cw", math.degrees(angle)), ("rad_ccw", -angle),
                                ("deg_ccw", -math.degrees(angle)))}
    expected = Polygon(rbox_corners(*box, angle))
    for rule, quad in ours.items():
        assert Polygon(quad).symmetric_difference(expected).area == pytest.approx(0, abs=1e-9), rule


def test_without_the_angle_rule_the_file_is_refused(tmp_path):
    with pytest.raises(InputError, match=r"annotations\[0\]\.bbox: five numbers .* give --coco_angle"):
        _read(tmp_path, [(60, 40, 30, 10, 30)], None, strict=False)
    # a four-number bbox needs no rule
    assert len(_read(tmp_path, [(60, 40, 30, 10)], None)[0][0].boxes) == 1


@pytest.mark.parametrize("bad, reason", [
    ((1, 2, 3, 4, float("nan")), "not a finite number"),
    ((1e13, 2, 3, 4, 0), "out of range"),
    ((1, 2, -3, 4, 0), "negative"),
    ((1, 2, 3, 4, "30"), "not a number"),
])
def test_a_broken_rotated_bbox_is_an_error_in_ground_truth_and_a_counted_skip_in_predictions(tmp_path, bad, reason):
    boxes = [(60, 40, 30, 10, 30), bad]
    with pytest.raises(LabelFormatError, match=rf"annotations\[1\]\.bbox: .*{reason}"):
        _read(tmp_path, boxes, "deg_ccw")
    frames, _, problems = _read(tmp_path, boxes, "deg_ccw", strict=False)
    assert len(frames[0].boxes) == 1 and len(problems) == 1


def test_scores_as_the_yolo_original_and_the_commands_take_the_option(tmp_path):
    rng = np.random.default_rng(2)
    boxes = [tuple(rng.uniform([40, 30, 10, 4, -180], [160, 70, 40, 12, 180])) for _ in range(6)]
    (tmp_path / "gt").mkdir()
    lines = ["0 " + " ".join(f"{v:.10f}" for v in np.array(_detectron2_corners(*b)).reshape(-1)) for b in boxes]
    (tmp_path / "gt" / "a.txt").write_text("\n".join(lines) + "\n")
    path = tmp_path / "rotated.json"
    path.write_text(json.dumps(_coco(boxes, score=0.5)))

    def scores(*args):
        out = CliRunner().invoke(eval_main, [*map(str, args), "-nb", "--json"])
        assert out.exit_code == 0, out.stderr
        return json.loads(out.stdout)

    ours = scores(tmp_path / "gt", path, "--coco_angle", "deg_ccw")
    assert ours["total_matches"] == 6 and ours["avg_iou"] == pytest.approx(1.0, abs=1e-9)
    assert ours["avg_angle_error"] == pytest.approx(0.0, abs=1e-6)
    mirrored = scores(tmp_path / "gt", path, "--coco_angle", "deg_cw")
    assert mirrored["avg_iou"] < 0.9  # the other direction is another box: the option matters
    refused = CliRunner().invoke(eval_main, [str(path), str(tmp_path / "gt"), "-nb"])
    assert refused.exit_code == 2 and "--coco_angle" in refused.stderr and "Traceback" not in refused.output
    converted = CliRunner().invoke(convert_main, [str(path), "--to", "yolo", "-o", str(tmp_path / "yolo"),
                                                  "--coco_angle", "deg_ccw", "-nb"])
    assert converted.exit_code == 0, converted.output
    back = np.loadtxt(tmp_path / "yolo" / "a.txt", ndmin=2)[:, 1:9].reshape(-1, 4, 2)
    for quad, box in zip(back, boxes):  # the same corners, each to the 2 decimals written
        assert np.abs(quad - np.array(_detectron2_corners(*box))).max() <= 0.005 + 1e-9
