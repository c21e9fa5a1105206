"""Label Studio JSON export: reader and writer (issue 37)."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest
from click.testing import CliRunner

from hbb2obb.cli.eval import main as eval_main
from hbb2obb.cli.formats import main as convert_main
from hbb2obb.errors import InputError, LabelFormatError
from hbb2obb.io.format_detection import sniff_format
from hbb2obb.io.label_sets import read_set
from hbb2obb.io.label_studio import box_corners, read, region_value, task_frame

LABEL_CONFIG = """<View>
  <Image name="image" value="$image"/>
  <RectangleLabels name="label" toName="image"><Label value="car"/><Label value="bus"/></RectangleLabels>
</View>"""


def _region(x, y, w, h, rotation, label="car", width=200, height=100, **extra):
    return {"type": "rectanglelabels", "from_name": "label", "to_name": "image", "original_width": width,
            "original_height": height, "image_rotation": 0,
            "value": {"x": x, "y": y, "width": w, "height": h, "rotation": rotation, "rectanglelabels": [label]},
            **extra}


def _task(image, regions, key="annotations", **extra):
    return {"data": {"image": image}, key: [{"result": regions, **extra}]}


def exact_obb_set(root, frames=3, boxes=5, scores=False):
    """Rotated rectangles with integer corners (sides along Pythagorean directions), as YOLO-OBB files."""
    rng = np.random.default_rng(3)
    directions = [(4, 3), (3, 4), (12, 5), (5, 12), (15, 8), (-4, 3), (-12, 5), (1, 0), (0, 1)]
    root.mkdir(parents=True, exist_ok=True)
    for frame in range(frames):
        lines = []
        for _ in range(boxes):
            a, b = directions[int(rng.integers(len(directions)))]
            k = int(rng.integers(2, 4))  # never a square: a square's heading is undefined
            x, y = (int(v) for v in rng.integers(60, 140, 2))
            side, other = np.array([a, b]) * k, np.array([-b, a])
            quad = np.array([[x, y], [x, y] + side, [x, y] + side + other, [x, y] + other])
            score = f" {rng.uniform(0.05, 1):.4f}" if scores else ""
            lines.append(f"{int(rng.integers(0, 2))} " + " ".join(str(int(v)) for v in quad.reshape(-1)) + score)
        (root / f"f{frame}.txt").write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize("seed", range(4))
def test_corners_are_label_studio_converters(seed):
    """The oracle: label-studio-converter's own YOLO-OBB export of a region, corner for corner."""
    utils = pytest.importorskip("label_studio_converter.utils")
    rng = np.random.default_rng(seed)
    for _ in range(50):
        width, height = (int(v) for v in rng.integers(50, 4000, 2))  # never square: percent is per axis
        value = {"x": rng.uniform(-5, 90), "y": rng.uniform(-5, 90), "width": rng.uniform(0.1, 50),
                 "height": rng.uniform(0.1, 50), "rotation": rng.uniform(0, 360)}
        theirs = utils.convert_annotation_to_yolo_obb({**value, "original_width": width, "original_height": height})
        ours, reason = box_corners(value, width, height)
        assert reason is None
        assert np.allclose(np.array(ours) / [width, height], theirs, atol=1e-12)
        back = region_value(np.array(ours), width, height)
        assert back["rotation"] == pytest.approx(value["rotation"] % 360, abs=1e-9)
        for key in ("x", "y", "width", "height"):
            assert back[key] == pytest.approx(value[key], abs=1e-9), key


def test_the_rotation_turns_clockwise_on_screen_about_the_top_left_corner():
    """Label Studio's rule, by hand: 90 degrees sends the width down the screen from (x, y)."""
    quad, _ = box_corners({"x": 10, "y": 20, "width": 30, "height": 10, "rotation": 90}, 200, 100)
    assert np.allclose(quad, [[20, 20], [20, 80], [10, 80], [10, 20]])


def test_converter_exports_our_written_file_as_our_original(tmp_path):
    """The oracle end to end: label-studio-converter turns the file we write into the YOLO-OBB we started from."""
    converter_module = pytest.importorskip("label_studio_converter.converter")
    exact_obb_set(tmp_path / "gt")
    (tmp_path / "classes.yaml").write_text("0: car\n1: bus\n")
    result = CliRunner().invoke(convert_main, [str(tmp_path / "gt"), "--to", "labelstudio", "-o",
                                               str(tmp_path / "ls"), "-mp", str(tmp_path / "classes.yaml"),
                                               "-iw", "200", "-ih", "160", "-nb"])
    assert result.exit_code == 0, result.output
    written = tmp_path / "ls" / "labelstudio_annotations_obb.json"
    converter = converter_module.Converter(LABEL_CONFIG, str(tmp_path), download_resources=False)
    converter.convert_to_yolo(str(written), str(tmp_path / "yolo"), is_dir=False, is_obb=True)
    names = (tmp_path / "yolo" / "classes.txt").read_text().split()
    original = read_set(tmp_path / "gt", "yolo", label_map={0: "car", 1: "bus"})
    for frame in original.frames:
        rows = np.loadtxt(tmp_path / "yolo" / "labels" / f"{frame.stem}.txt", ndmin=2)
        assert [names[int(c)] for c in rows[:, 0]] == [["car", "bus"][c] for c in frame.boxes.class_id]
        assert np.abs(rows[:, 1:].reshape(-1, 4, 2) * [200, 160] - frame.boxes.corners).max() <= 2e-6


@pytest.mark.parametrize("image, frame", [
    ("/data/upload/1/3f2a9c1b-frame_01.jpg", "frame_01"),
    ("/data/upload/12/deadbeef-a-b.png", "a-b"),
    ("/data/local-files/?d=dataset/images/x%201.png", "x 1"),
    ("https://host/bucket/img%20a.jpg?token=abc", "img a"),
    ("images/3f2a9c1b-kept.jpg", "3f2a9c1b-kept"),  # the prefix is dropped only under /data/upload/
    ("C:\\data\\b.jpg", "b"),
])
def test_frames_are_named_by_the_image_with_the_upload_prefix_dropped(tmp_path, image, frame):
    assert task_frame(image)[0] == frame
    path = tmp_path / "ls.json"
    path.write_text(json.dumps([_task(image, [_region(10, 20, 30, 10, 0)])]))
    frames, names, _ = read(path, strict=True)
    assert [f.stem for f in frames] == [frame] and names == {0: "car"}


def test_a_file_is_read_with_sizes_classes_and_scores(tmp_path):
    path = tmp_path / "ls.json"
    tasks = [_task("a.jpg", [_region(10, 20, 30, 10, 30, "car", score=0.5), _region(50, 50, 10, 10, 0, "bus"),
                             {"type": "choices", "value": {"choices": ["sunny"]}}], key="predictions", score=0.9),
             _task("b.jpg", [], key="predictions")]
    path.write_text(json.dumps(tasks))
    assert sniff_format(path) == "labelstudio"
    frames, names, problems = read(path, strict=True)
    assert names == {0: "bus", 1: "car"} and problems == ()  # sorted: both sides of a run agree without -mp
    a, b = frames
    assert a.size == (200, 100) and b.size is None and len(b.boxes) == 0
    assert a.boxes.class_id.tolist() == [1, 0] and a.boxes.score.tolist() == [0.5, 0.9]
    assert a.boxes.line.tolist() == [1, 2] and a.image_name == "a.jpg"
    assert np.allclose(a.boxes.corners[1], [[100, 50], [120, 50], [120, 60], [100, 60]])


def test_annotations_are_read_before_predictions_and_cancelled_ones_are_not(tmp_path):
    path = tmp_path / "ls.json"
    task = _task("a.jpg", [_region(10, 20, 30, 10, 0, "car")])
    task["annotations"].insert(0, {"was_cancelled": True, "result": [_region(1, 1, 1, 1, 0, "bus")]})
    task["predictions"] = [{"result": [_region(50, 50, 10, 10, 0, "bus")]}]
    path.write_text(json.dumps([task]))
    frames, names, _ = read(path, strict=True)
    assert names == {0: "car"} and len(frames[0].boxes) == 1 and frames[0].boxes.score is None


@pytest.mark.parametrize("region, where, reason", [
    (_region(float("nan"), 20, 30, 10, 0), "result[1].value", "not a finite number"),
    (_region(1e13, 20, 30, 10, 0), "result[1].value", "out of range"),
    (_region(10, 20, -30, 10, 0), "result[1].value", "negative"),
    (_region(10, 20, 30, 10, "9"), "result[1].value", "not a number"),
    ({**_region(10, 20, 30, 10, 0), "original_width": None, "original_height": None}, "result[1]", "original_width"),
    ({**_region(10, 20, 30, 10, 0), "original_width": 0}, "result[1]", "positive"),
    ({**_region(10, 20, 30, 10, 0), "image_rotation": 90}, "result[1]", "image_rotation"),
    ({**_region(10, 20, 30, 10, 0), "score": "high"}, "result[1].score", "finite"),
    ({**_region(10, 20, 30, 10, 0, width=300)}, "result[1]", "differs"),
    ({"type": "polygonlabels", "value": {"points": [[1, 2]], "polygonlabels": ["car"]}}, "result[1]", "not a box"),
    ({"type": "rectanglelabels", "value": {"x": 1, "rectanglelabels": ["car", "bus"]}}, "result[1]", "one class"),
    (_region(10, 20, 30, 10, 0, "tram"), "result[1]", "not in the label map"),
])
def test_a_broken_region_is_an_error_in_ground_truth_and_a_counted_skip_in_predictions(tmp_path, region, where,
                                                                                       reason):
    path = tmp_path / "ls.json"
    path.write_text(json.dumps([_task("a.jpg", [_region(10, 20, 30, 10, 0), region])]))
    pattern = re.escape(f"ls.json:[0].annotations[0].{where}: ") + f".*{reason}"
    with pytest.raises(LabelFormatError, match=pattern):
        read(path, strict=True, label_map={0: "car", 1: "bus"})
    frames, _, problems = read(path, strict=False, label_map={0: "car", 1: "bus"})
    assert len(frames[0].boxes) == 1 and len(problems) == 1


@pytest.mark.parametrize("content, reason", [
    ({"data": {}}, "not a Label Studio JSON export"),
    ([{"data": {}, "annotations": []}], r"\[0\]\.data\.image: every task"),
    ([{"data": {"image": "/x/"}, "annotations": []}], "names no image file"),
    ([_task("a.jpg", []), _task("x/a.png", [])], r"\[1\]\.data\.image: frame 'a' is also task \[0\]"),
])
def test_a_broken_file_is_an_input_error(tmp_path, content, reason):
    path = tmp_path / "ls.json"
    path.write_text(json.dumps(content))
    with pytest.raises(InputError, match=reason):
        read(path, strict=False)


def test_two_annotations_of_one_image_are_refused(tmp_path):
    path = tmp_path / "ls.json"
    task = _task("a.jpg", [_region(10, 20, 30, 10, 0)])
    task["annotations"].append({"result": [_region(11, 20, 30, 10, 0)]})
    path.write_text(json.dumps([task]))
    with pytest.raises(LabelFormatError, match=r"\[0\]\.annotations: 2 annotations of one image"):
        read(path, strict=True)


def test_deep_nesting_and_huge_numbers_are_refused(tmp_path):
    path = tmp_path / "ls.json"
    path.write_text("[" * 100000 + "]" * 100000)
    with pytest.raises(InputError, match="nested too deeply"):
        read(path, strict=True)
    huge = json.dumps([_task("a.jpg", [_region(10, 20, 30, 10, 0)])]).replace('"x": 10', '"x": 1' + "0" * 5000)
    path.write_text(huge)
    with pytest.raises(LabelFormatError, match="not a finite number"):
        read(path, strict=True)


def test_broken_ground_truth_exits_2_naming_the_region(tmp_path):
    exact_obb_set(tmp_path / "pred")
    path = tmp_path / "gt.json"
    path.write_text(json.dumps([_task("f0.jpg", [_region(10, 20, 30, 10, 0), _region(10, 20, -1, 10, 0)])]))
    out = CliRunner().invoke(eval_main, [str(path), str(tmp_path / "pred"), "-nb", "--gt_format", "labelstudio"])
    assert out.exit_code == 2
    assert "gt.json:[0].annotations[0].result[1].value: width and height must not be negative" in out.stderr
    assert "Traceback" not in out.output


def test_round_trip_and_scores_as_the_yolo_original(tmp_path):
    exact_obb_set(tmp_path / "gt")
    exact_obb_set(tmp_path / "pred", scores=True)
    (tmp_path / "classes.yaml").write_text("0: car\n1: bus\n")
    args = ["-mp", str(tmp_path / "classes.yaml"), "-iw", "200", "-ih", "160", "-nb"]
    for side in ("gt", "pred"):
        result = CliRunner().invoke(convert_main, [str(tmp_path / side), "--to", "labelstudio", "-o",
                                                   str(tmp_path / f"ls_{side}"), *args])
        assert result.exit_code == 0, result.output
    gt_file = tmp_path / "ls_gt" / "labelstudio_annotations_obb.json"
    pred_file = tmp_path / "ls_pred" / "labelstudio_annotations_obb.json"
    assert "annotations" in json.loads(gt_file.read_text())[0]
    assert "predictions" in json.loads(pred_file.read_text())[0]
    label_map = {0: "car", 1: "bus"}
    for side, path in (("gt", gt_file), ("pred", pred_file)):
        original = read_set(tmp_path / side, "yolo", label_map=label_map)
        back = read_set(path, label_map=label_map)
        assert back.format == "labelstudio"
        for a, b in zip(original.frames, back.frames):
            assert a.stem == b.stem and a.boxes.class_id.tolist() == b.boxes.class_id.tolist()
            assert np.abs(a.boxes.corners - b.boxes.corners).max() <= 2e-6
            assert (a.boxes.score is None) == (b.boxes.score is None)
            if a.boxes.score is not None:
                assert a.boxes.score.tolist() == b.boxes.score.tolist()

    def scores(gt, pred, *formats):
        out = CliRunner().invoke(eval_main, [str(gt), str(pred), "-mp", str(tmp_path / "classes.yaml"), "-nb",
                                             "--json", *formats])
        assert out.exit_code == 0, out.stderr
        return json.loads(out.stdout)

    ours = scores(gt_file, pred_file)
    theirs = scores(tmp_path / "gt", tmp_path / "pred")
    assert ours["total_matches"] == theirs["total_matches"] > 0
    for key in ("avg_iou", "median_iou", "avg_angle_error", "map50", "map50_95", "dota_map50"):
        assert ours[key] == pytest.approx(theirs[key], abs=1e-6), key


def test_a_set_mixing_scored_and_unscored_frames_is_refused(tmp_path):
    exact_obb_set(tmp_path / "pred", frames=2, scores=True)
    (tmp_path / "pred" / "f1.txt").write_text("0 10 10 20 10 20 15 10 15\n")
    out = CliRunner().invoke(convert_main, [str(tmp_path / "pred"), "--to", "labelstudio", "-o", str(tmp_path / "o"),
                                            "-iw", "200", "-ih", "160", "-nb"])
    assert out.exit_code == 2 and "no confidences, while other frames have" in out.output
    assert not (tmp_path / "o" / "labelstudio_annotations_obb.json").exists()


def test_angles_survive_every_quarter(tmp_path):
    """Rotations near 0, 90, 180, 270 and 360 degrees come back as written (no turn lost to atan2's range)."""
    for rotation in (0, 1e-9, 89.5, 90, 180, 269.9, 359.999999):
        value = {"x": 40, "y": 30, "width": 20, "height": 5, "rotation": rotation}
        quad, _ = box_corners(value, 300, 200)
        back = region_value(np.array(quad), 300, 200)
        assert math.isclose(back["rotation"], rotation % 360, abs_tol=1e-7) or math.isclose(
            abs(back["rotation"] - rotation), 360, abs_tol=1e-7)
