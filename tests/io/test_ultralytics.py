"""Ultralytics: a dataset YAML as ground truth, save_json predictions, save_txt(save_conf=True) folders (issue 37).

The oracle tests run Ultralytics' own code (the ``oracle-ultralytics`` extra, which brings
torch: CI installs it, a plain ``make test`` skips them); the others check the same rules
against its published definitions.
"""

from __future__ import annotations

import json
import math
import os
import tempfile

import numpy as np
import pytest
from click.testing import CliRunner
from PIL import Image

from hbb2obb.cli.eval import main as eval_main
from hbb2obb.errors import InputError, LabelFormatError
from hbb2obb.io.format_detection import sniff_format
from hbb2obb.io.label_sets import read_set
from hbb2obb.io.ultralytics_data import label_path, split_images
from hbb2obb.io.ultralytics_data import read as read_dataset
from hbb2obb.io.ultralytics_json import rbox_corners
from hbb2obb.io.ultralytics_json import read as read_predictions

SIZES = {"f0": (200, 160), "f1": (320, 100), "f2": (150, 150)}
NO_TORCH = "the Ultralytics oracle needs the oracle-ultralytics extra (torch): pip install -e '.[oracle-ultralytics]'"


def _ultralytics(module):
    # no look for the network, and its settings file in the run's temp folder rather than the home folder
    os.environ.setdefault("YOLO_OFFLINE", "1")
    os.environ.setdefault("YOLO_CONFIG_DIR", tempfile.gettempdir())
    # importing Ultralytics replaces PIL's Image.open for the whole process (its HEIF fallback, which
    # tries to install a package on an unreadable image): the tests after these must get Pillow's own
    pil_open = Image.open
    try:
        return pytest.importorskip(module, reason=NO_TORCH)
    except ImportError:  # torch present but broken: still a skip with the reason
        pytest.skip(NO_TORCH)
    finally:
        Image.open = pil_open


def _boxes(rng, size, count=4):
    """``count`` rotated rectangles well inside a frame: ``(class, cx, cy, w, h, angle)``."""
    width, height = size
    return [(int(rng.integers(0, 2)), rng.uniform(0.3, 0.7) * width, rng.uniform(0.3, 0.7) * height,
             rng.uniform(10, 40), rng.uniform(4, 20), rng.uniform(-math.pi, math.pi)) for _ in range(count)]


def _dataset(root, seed=0):
    """A dataset in Ultralytics' layout: images/val, labels/val (normalized OBB), and the pixel copy."""
    rng = np.random.default_rng(seed)
    truth = {}
    for split in ("val", "test"):
        (root / "images" / split).mkdir(parents=True)
        (root / "labels" / split).mkdir(parents=True)
    (root / "pixels").mkdir()
    for stem, size in SIZES.items():
        split = "test" if stem == "f2" else "val"
        Image.new("RGB", size).save(root / "images" / split / f"{stem}.png")
        boxes = _boxes(rng, size)
        truth[stem] = boxes
        normalized, pixels = [], []
        for c, *rbox in boxes:
            quad = rbox_corners(*rbox)
            normalized.append(f"{c} " + " ".join(f"{v:.10f}" for v in (quad / size).reshape(-1)))
            pixels.append(f"{c} " + " ".join(f"{v:.10f}" for v in quad.reshape(-1)))
        (root / "labels" / split / f"{stem}.txt").write_text("\n".join(normalized) + "\n")
        (root / "pixels" / f"{stem}.txt").write_text("\n".join(pixels) + "\n")
    (root / "test.txt").write_text("./images/test/f2.png\n")
    (root / "data.yaml").write_text("path: .\ntrain: images/val\nval: images/val\ntest: test.txt\n"
                                    "names:\n  0: car\n  1: bus\n")
    return truth


def _predictions(root, truth, seed=1):
    """The same frames' detections as predictions.json, a save_txt(save_conf=True) folder, and pixel files."""
    rng = np.random.default_rng(seed)
    items = []
    for folder in ("txt", "pixel_pred"):
        (root / folder).mkdir()
    for stem, boxes in truth.items():
        size = SIZES[stem]
        txt, pixel = [], []
        for c, cx, cy, w, h, a in boxes:
            rbox = [cx + rng.normal(0, 2), cy + rng.normal(0, 2), w * rng.uniform(0.8, 1.2), h, a + rng.normal(0, 0.1)]
            rbox = [round(v, 3) for v in rbox]
            score = round(float(rng.uniform(0.1, 1)), 5)
            quad = rbox_corners(*rbox)
            items.append({"image_id": stem, "file_name": f"{stem}.png", "category_id": c + 1, "score": score,
                          "rbox": rbox, "poly": [round(v, 3) for v in quad.reshape(-1)]})
            txt.append(("%g " * 10).rstrip() % (c, *(quad / size).reshape(-1), score))  # Results.save_txt
            pixel.append(f"{c} " + " ".join(f"{v:.3f}" for v in np.array(items[-1]["poly"])) + f" {score}")
        (root / "txt" / f"{stem}.txt").write_text("\n".join(txt) + "\n")
        (root / "pixel_pred" / f"{stem}.txt").write_text("\n".join(pixel) + "\n")
    (root / "predictions.json").write_text(json.dumps(items))


def _scores(*args):
    out = CliRunner().invoke(eval_main, [*map(str, args), "-nb", "--json"])
    assert out.exit_code == 0, out.stderr
    return json.loads(out.stdout)


KEYS = ("total_gt", "total_matches", "avg_iou", "median_iou", "avg_angle_error", "map50", "map50_95")


def test_rbox_corners_follow_the_published_xywhr2xyxyxyxy():
    """ultralytics.utils.ops.xywhr2xyxyxyxy as published: pt1 = ctr + vec1 + vec2, vec1 = w/2 (cos, sin),
    vec2 = h/2 (-sin, cos), then ctr + vec1 - vec2, ctr - vec1 - vec2, ctr - vec1 + vec2."""
    rng = np.random.default_rng(5)
    for cx, cy, w, h, a in rng.uniform([0, 0, 1, 1, -4], [500, 500, 90, 90, 4], (40, 5)):
        vec1 = np.array([w / 2 * math.cos(a), w / 2 * math.sin(a)])
        vec2 = np.array([-h / 2 * math.sin(a), h / 2 * math.cos(a)])
        ctr = np.array([cx, cy])
        expected = [ctr + vec1 + vec2, ctr + vec1 - vec2, ctr - vec1 - vec2, ctr - vec1 + vec2]
        assert np.allclose(rbox_corners(cx, cy, w, h, a), expected, atol=1e-9)
    # a positive angle turns clockwise on screen: the width's end goes down (y grows)
    assert rbox_corners(0, 0, 10, 0, math.pi / 2)[0] == pytest.approx([0, 5])


def test_rbox_corners_are_ultralytics_own():
    ops = _ultralytics("ultralytics.utils.ops")
    rng = np.random.default_rng(6)
    rboxes = rng.uniform([0, 0, 1, 1, -4], [500, 500, 90, 90, 4], (100, 5))
    theirs = ops.xywhr2xyxyxyxy(rboxes)
    ours = np.array([rbox_corners(*r) for r in rboxes])
    assert np.abs(ours - theirs).max() < 1e-9


def test_predictions_json_written_by_ultralytics_is_read_corner_for_corner(tmp_path):
    """The oracle: OBBValidator.pred_to_json itself writes the file (its fields, rounding and id offset)."""
    torch = _ultralytics("torch")
    val = _ultralytics("ultralytics.models.yolo.obb.val")
    validator = val.OBBValidator.__new__(val.OBBValidator)
    validator.class_map, validator.jdict = list(range(1, 3)), []  # as init_metrics sets it for a dataset of 2 classes
    rng = np.random.default_rng(7)
    rboxes = rng.uniform([50, 50, 5, 5, -1.5], [900, 900, 400, 60, 1.5], (30, 5))
    classes = rng.integers(0, 2, 30)
    for name in ("0007.jpg", "a.jpg"):
        validator.pred_to_json({"bboxes": torch.tensor(rboxes), "conf": torch.tensor(rng.uniform(0, 1, 30)),
                                "cls": torch.tensor(classes, dtype=torch.float64)}, {"im_file": f"x/images/{name}"})
    path = tmp_path / "predictions.json"
    path.write_text(json.dumps(validator.jdict))
    assert sniff_format(path) == "ultralytics_json"
    frames, _, problems = read_predictions(path, strict=True)
    assert problems == () and [f.stem for f in frames] == ["0007", "a"]  # file_name keeps the zeros
    for frame in frames:
        assert frame.boxes.class_id.tolist() == classes.tolist()
        assert np.abs(frame.boxes.corners - np.array(rbox_corners_all(rboxes))).max() < 2e-3  # 3 decimals


def rbox_corners_all(rboxes):
    return [rbox_corners(*r) for r in rboxes]


def test_dataset_images_and_labels_are_ultralytics_own(tmp_path, monkeypatch):
    """The oracle: check_det_dataset resolves the splits, BaseDataset.get_img_files lists them, img2label_paths."""
    data_utils = _ultralytics("ultralytics.data.utils")
    base = _ultralytics("ultralytics.data.base")
    _dataset(tmp_path / "ds")
    (tmp_path / "ds" / "images" / "val" / "sub").mkdir()
    Image.new("RGB", (40, 30)).save(tmp_path / "ds" / "images" / "val" / "sub" / "g.JPG")
    (tmp_path / "ds" / "images" / "val" / "notes.md").write_text("not an image")
    monkeypatch.chdir(tmp_path)
    yaml_path = tmp_path / "ds" / "data.yaml"
    yaml_path.write_text("path: ds\ntrain: images/val\nval: [images/val]\ntest: test.txt\nnames: [car, bus]\n")
    data = data_utils.check_det_dataset(str(yaml_path), autodownload=False)

    class Stub:
        prefix, fraction = "", 1.0

    for split in ("val", "test"):
        theirs = base.BaseDataset.get_img_files(Stub(), data[split])
        import yaml

        ours = split_images(yaml.safe_load(yaml_path.read_text()), yaml_path, split)
        assert [str(p) for p in ours] == theirs
        assert [str(label_path(p)) for p in ours] == data_utils.img2label_paths(theirs)
    frames, names, _ = read_dataset(yaml_path, strict=True)
    assert names == data["names"] == {0: "car", 1: "bus"}


def test_a_dataset_yaml_scores_as_its_pixel_labels(tmp_path):
    truth = _dataset(tmp_path)
    _predictions(tmp_path, truth)
    yaml_path = tmp_path / "data.yaml"
    assert sniff_format(yaml_path) == "ultralytics"
    frames, names, _ = read_dataset(yaml_path, strict=True)
    assert [f.stem for f in frames] == ["f0", "f1"] and names == {0: "car", 1: "bus"}
    pixels = read_set(tmp_path / "pixels", "yolo")
    for frame in frames:
        assert frame.size == SIZES[frame.stem] and frame.image_name == f"{frame.stem}.png"
        expected = next(f for f in pixels.frames if f.stem == frame.stem)
        assert np.abs(frame.boxes.corners - expected.boxes.corners).max() < 1e-6
    ours = _scores(yaml_path, tmp_path / "pixel_pred")
    theirs = _scores(tmp_path / "pixels", tmp_path / "pixel_pred", "--missing_pred", "error")
    assert ours["total_gt"] == 8  # the val split only
    test_split = _scores(yaml_path, tmp_path / "pixel_pred", "--split", "test")
    assert test_split["total_gt"] == 4
    theirs = _scores(tmp_path / "pixels", tmp_path / "pixel_pred")
    assert theirs["total_gt"] == 12
    both = {k: ours[k] + test_split[k] for k in ("total_gt", "total_matches")}
    assert both == {k: theirs[k] for k in ("total_gt", "total_matches")}


def test_predictions_json_and_save_txt_score_as_pixel_predictions(tmp_path):
    truth = _dataset(tmp_path)
    _predictions(tmp_path, truth)
    theirs = _scores(tmp_path / "pixels", tmp_path / "pixel_pred")
    from_json = _scores(tmp_path / "pixels", tmp_path / "predictions.json")
    images = tmp_path / "all_images"
    images.mkdir()
    for path in (tmp_path / "images").rglob("*.png"):
        os.link(path, images / path.name)
    from_txt = _scores(tmp_path / "pixels", tmp_path / "txt", "-i", images)
    for key in KEYS:
        assert from_json[key] == pytest.approx(theirs[key], abs=1e-9), key
        # save_txt's %g keeps 6 significant digits of a normalized corner: a few hundredths of a pixel
        assert from_txt[key] == pytest.approx(theirs[key], abs=2e-3), key
    assert from_txt["total_matches"] == theirs["total_matches"]


@pytest.mark.parametrize("item, where, reason", [
    ({"category_id": 0}, "[1].category_id", "from 1"),
    ({"score": None}, "[1].score", "finite"),
    ({"poly": [1, 2, 3]}, "[1].poly", "8 numbers"),
    ({"poly": [0, 0, 1e13, 0, 1, 1, 0, 1]}, "[1].poly", "out of range"),
    ({"rbox": [1, 2, 3, 4, float("nan")]}, "[1].rbox", "finite"),
    ({"rbox": [10, 10, 4, 2, 0.5]}, "[1].poly", "different boxes"),
    ({"rbox": None, "poly": None}, "[1].poly", "needs 'poly' or 'rbox'"),
    ({"file_name": "", "image_id": None}, "[1]", "names no image"),
])
def test_a_broken_detection_is_skipped_and_counted(tmp_path, item, where, reason):
    good = {"image_id": 1, "file_name": "f0.png", "category_id": 1, "score": 0.5, "rbox": [50, 40, 30, 10, 0.3],
            "poly": rbox_corners(50, 40, 30, 10, 0.3).reshape(-1).round(3).tolist()}
    path = tmp_path / "predictions.json"
    path.write_text(json.dumps([good, {**good, **item}]).replace("NaN", "1e400"))
    frames, _, problems = read_predictions(path, strict=False)
    assert sum(len(f.boxes) for f in frames) == 1 and len(problems) == 1
    assert f"predictions.json:{where}: " in str(problems[0]) and reason in str(problems[0])
    with pytest.raises(LabelFormatError):
        read_predictions(path, strict=True)


def test_a_poly_alone_and_an_rbox_alone_are_read(tmp_path):
    quad = rbox_corners(50, 40, 30, 10, 0.3)
    path = tmp_path / "predictions.json"
    path.write_text(json.dumps([{"image_id": 7, "category_id": 2, "score": 0.5, "rbox": [50, 40, 30, 10, 0.3]},
                                {"image_id": "b", "category_id": 1, "score": 0.25, "poly": quad.reshape(-1).tolist()}]))
    frames, _, _ = read_predictions(path, strict=True)
    assert [f.stem for f in frames] == ["7", "b"]
    assert frames[0].boxes.class_id.tolist() == [1] and np.allclose(frames[0].boxes.corners[0], quad)
    assert np.allclose(frames[1].boxes.corners[0], quad) and frames[1].boxes.score.tolist() == [0.25]


def test_broken_predictions_are_warned_and_counted_by_eval(tmp_path):
    truth = _dataset(tmp_path)
    _predictions(tmp_path, truth)
    items = json.loads((tmp_path / "predictions.json").read_text())
    items[0]["category_id"] = 0
    (tmp_path / "predictions.json").write_text(json.dumps(items))
    out = CliRunner().invoke(eval_main, [str(tmp_path / "pixels"), str(tmp_path / "predictions.json"), "-nb",
                                         "--json"])
    assert out.exit_code == 0
    assert "predictions.json:[0].category_id" in out.stderr
    assert json.loads(out.stdout)["skipped_pred_lines"] == 1


@pytest.mark.parametrize("yaml_text, reason", [
    ("val: images/val\nnames: [car]\nvalidation: x\n", None),
    ("train: images/val\nnames: [car]\n", "no 'val' split"),
    ("val: nowhere\nnames: [car]\n", "does not exist"),
    ("val: images/val\n", "needs 'names'"),
    ("val: images/val\nnames: [car, car]\n", "given to ids 0 and 1"),
    ("val: images/val\nval: images/test\nnames: [car]\n", "given twice"),
    ("path: 3\nval: images/val\nnames: [car]\n", "'path' must be a folder"),
    ("- a\n- b\n", "not an Ultralytics dataset YAML"),
])
def test_a_broken_dataset_yaml_is_an_input_error(tmp_path, yaml_text, reason):
    _dataset(tmp_path)
    path = tmp_path / "data.yaml"
    path.write_text(yaml_text)
    if reason is None:
        assert len(read_dataset(path, strict=True)[0]) == 2
        return
    with pytest.raises(InputError, match=reason):
        read_dataset(path, strict=True)


def test_missing_labels_duplicate_names_and_ambiguous_roots_are_refused(tmp_path, monkeypatch):
    _dataset(tmp_path / "ds")
    path = tmp_path / "ds" / "data.yaml"
    Image.new("RGB", (10, 10)).save(tmp_path / "ds" / "images" / "val" / "extra.png")  # no label file: background
    frames, _, _ = read_dataset(path, strict=True)
    assert [(f.stem, len(f.boxes)) for f in frames][0] == ("extra", 0)  # sorted by path
    (tmp_path / "ds" / "images" / "val" / "sub").mkdir()
    Image.new("RGB", (10, 10)).save(tmp_path / "ds" / "images" / "val" / "sub" / "f0.png")
    with pytest.raises(InputError, match="two images of frame 'f0'"):
        read_dataset(path, strict=True)
    path.write_text("val: images/test\nnames: [car]\n")
    (tmp_path / "ds" / "labels" / "test" / "f2.txt").unlink()
    with pytest.raises(InputError, match="no label file for any of the 1 images"):
        read_dataset(path, strict=True)
    (tmp_path / "ds" / "ds" / "images" / "test").mkdir(parents=True)
    (tmp_path / "ds" / "labels" / "test" / "f2.txt").write_text("")
    path.write_text("path: ds\nval: images/test\nnames: [car]\n")
    monkeypatch.chdir(tmp_path)  # ./ds/images/test and ds/ds/images/test both exist
    with pytest.raises(InputError, match="both here"):
        read_dataset(path, strict=True)


def test_a_broken_label_line_exits_2_naming_it(tmp_path):
    truth = _dataset(tmp_path)
    _predictions(tmp_path, truth)
    with open(tmp_path / "labels" / "val" / "f1.txt", "a") as handle:
        handle.write("0 0.1 0.1 nan 0.1 0.2 0.2 0.1 0.2\n")
    out = CliRunner().invoke(eval_main, [str(tmp_path / "data.yaml"), str(tmp_path / "pixel_pred"), "-nb"])
    assert out.exit_code == 2 and f"{os.path.join('labels', 'val', 'f1.txt')}:5:" in out.stderr
    assert "Traceback" not in out.output
    (tmp_path / "labels" / "val" / "f1.txt").write_text("0 10 10 20 10 20 15 10 15\n")
    out = CliRunner().invoke(eval_main, [str(tmp_path / "data.yaml"), str(tmp_path / "pixel_pred"), "-nb"])
    assert out.exit_code == 2 and "Ultralytics labels are normalized" in out.stderr
