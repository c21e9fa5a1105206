"""Label sets in five formats: round trips on the real samples, readers on broken input."""

from __future__ import annotations

import json

import numpy as np
import pytest

from hbb2obb.errors import InputError, LabelFormatError
from hbb2obb.io.coco import read_coco
from hbb2obb.io.format_detection import detect_format, formats_present
from hbb2obb.io.frame_labels import is_axis_aligned
from hbb2obb.io.images import ImageSizes
from hbb2obb.io.label_sets import (
    canonical_set,
    copy_difficult,
    read_set,
    resolve_names,
    set_kind,
    write_set,
)
from hbb2obb.io.labelme import read_labelme
from hbb2obb.io.voc import read_voc

from conftest import SHARED

DATA = SHARED / "data"
SAMPLES = {  # sample, label folder, kind
    "songdo-obb": ("songdo-sample", "labels_obb_gt", "obb"),
    "songdo-hbb": ("songdo-sample", "labels_hbb", "hbb"),
    "dota-obb": ("dota-sample", "labels_obb_gt", "obb"),
    "dota-dota": ("dota-sample", "labels_dota", "obb"),
    "dota-hbb": ("dota-sample", "labels_hbb", "hbb"),
}


def _sample(key):
    sample, labels, kind = SAMPLES[key]
    root = DATA / sample
    if not (root / labels).is_dir():
        pytest.skip(f"real sample {root} not present")
    label_map = resolve_names(None, root / labels)
    return root, root / labels, kind, label_map


def _same_boxes(a, b, with_difficult=True):
    """Frame for frame, box for box: corners exactly, classes, and (optionally) difficult flags."""
    assert [f.stem for f in a.frames] == [f.stem for f in b.frames]
    for fa, fb in zip(a.frames, b.frames):
        assert len(fa.boxes) == len(fb.boxes), fa.stem
        np.testing.assert_array_equal(fa.boxes.corners, fb.boxes.corners, err_msg=fa.stem)
        np.testing.assert_array_equal(fa.boxes.class_id, fb.boxes.class_id)
        if with_difficult:
            np.testing.assert_array_equal(fa.boxes.difficult, fb.boxes.difficult)


@pytest.mark.parametrize("key", sorted(SAMPLES))
def test_every_format_and_back_gives_the_same_boxes(key, tmp_path):
    root, labels, kind, label_map = _sample(key)
    sizes = ImageSizes(root / "images")
    source = canonical_set(read_set(labels, label_map=label_map, sizes=sizes))
    assert set_kind(source) == kind
    # integer formats round the canonical corners: the exact round trip is of integer sets
    integers = all((f.boxes.corners == np.rint(f.boxes.corners)).all() for f in source.frames)
    formats = ("yolo", "dota", "coco", "labelme") if kind == "obb" else ("yolo", "voc", "coco", "labelme")
    for fmt in formats:
        out = tmp_path / fmt
        write_set(source, out, fmt, kind=kind, names=label_map)
        back = canonical_set(read_set(out, fmt, label_map=label_map, sizes=sizes))
        carries_difficult = fmt in ("dota", "voc")
        if integers or fmt in ("yolo", "labelme"):
            _same_boxes(source, back, with_difficult=carries_difficult)
        else:  # HBB centres at .05 px: the integer formats hold the rounded envelope
            for fa, fb in zip(source.frames, back.frames):
                np.testing.assert_array_equal(np.rint(fa.boxes.corners), fb.boxes.corners)
        if not carries_difficult and (root / "labels_dota").is_dir() and kind == "obb":
            restored, _ = copy_difficult(back, source)
            _same_boxes(source, restored)


def test_dota_difficult_flags_survive_dota_and_come_back_through_difficult_from(tmp_path):
    root, labels, _, label_map = _sample("dota-dota")
    source = canonical_set(read_set(labels, "dota", label_map=label_map))
    assert sum(int(f.boxes.difficult.sum()) for f in source.frames) == 3  # the sample's three flags
    write_set(source, tmp_path, "dota", kind="obb", names=label_map)
    _same_boxes(source, read_set(tmp_path, "dota", label_map=label_map))


def test_normalized_yolo_round_trip_is_exact_at_ten_decimals(tmp_path):
    root, labels, _, label_map = _sample("songdo-obb")
    sizes = ImageSizes(root / "images")
    source = canonical_set(read_set(labels, label_map=label_map, sizes=sizes))
    write_set(source, tmp_path, "yolo", kind="obb", names=label_map, normalize=True)
    assert float(next(tmp_path.glob("*.txt")).read_text().split()[1]) < 1
    _same_boxes(source, canonical_set(read_set(tmp_path, "yolo", sizes=sizes)))
    with pytest.raises(InputError, match="frame size"):
        read_set(tmp_path, "yolo")


def test_detection_prefers_yolo_and_tells_dota_txt_from_yolo(write_labels):
    root = write_labels({
        "set/a.txt": "0 1 1 5 1 5 3 1 3\n",
        "set/a.dota": "imagesource:x\ngsd:null\n1 1 5 1 5 3 1 3 car 0\n",
        "set/README.txt": "not labels\n",
        "dota/b.txt": "1 1 5 1 5 3 1 3 car 1\n",
    })
    assert formats_present(root / "set") == ["yolo", "dota"]
    assert detect_format(root / "set") == "yolo"
    assert detect_format(root / "dota") == "dota"
    with pytest.raises(InputError, match="no label files"):
        detect_format(write_labels({"empty/notes.md": "x"}) / "empty")


def test_coco_reader_agrees_with_pycocotools_style_fields_and_names_json_paths(write_labels):
    data = {"images": [{"id": 7, "file_name": "f.jpg", "width": 10, "height": 8}],
            "annotations": [{"id": 1, "image_id": 7, "category_id": 3, "bbox": [1, 2, 3, 4]},
                            {"id": 2, "image_id": 7, "category_id": 3, "segmentation": [[0, 0, 4, 0, 4, 2, 0, 2]],
                             "bbox": [0, 0, 4, 2], "score": 0.5},
                            {"id": 3, "image_id": 9, "category_id": 3, "bbox": [1, 2, 3, 4]},
                            {"id": 4, "image_id": 7, "category_id": 3, "bbox": [1, 2, -3, 4]}],
            "categories": [{"id": 3, "name": "car"}]}
    path = write_labels({"c.json": json.dumps(data)}) / "c.json"
    frames, names, problems = read_coco(path, strict=False)
    assert names == {2: "car"} and frames[0].size == (10, 8)  # class id = category id - 1 (issue 34)
    assert frames[0].boxes.corners[0].tolist() == [[1, 2], [4, 2], [4, 6], [1, 6]]
    assert frames[0].boxes.corners[1].tolist() == [[0, 0], [4, 0], [4, 2], [0, 2]]
    assert frames[0].boxes.line.tolist() == [1, 2]
    assert [str(p).split(":", 1)[1] for p in problems] == [
        "annotations[2].image_id: no image with id 9", "annotations[3].bbox: width and height must not be negative"]
    with pytest.raises(LabelFormatError, match=r"c\.json:annotations\[2\]\.image_id"):
        read_coco(path, strict=True)
    with pytest.raises(InputError, match="not in the label map"):
        read_coco(path, strict=True, label_map={0: "bus"})


def test_labelme_and_voc_readers_name_the_broken_shape(write_labels):
    shapes = [{"label": "car", "points": [[1, 2], [5, 4]]}, {"label": "car", "points": [[1, 2]]},
              {"label": "bus", "points": [[0, 0], [4, 0], [4, 2], [0, 2]]}]
    root = write_labels({"f.json": json.dumps({"shapes": shapes, "imageWidth": 9, "imageHeight": 9}),
                         "v.xml": "<annotation>\n<object>\n<name>car</name><difficult>1</difficult>\n"
                                  "<bndbox><xmin>1</xmin><ymin>2</ymin><xmax>5</xmax><ymax>4</ymax></bndbox>\n"
                                  "</object>\n<object>\n<name>car</name>\n<bndbox><xmin>5</xmin><ymin>2</ymin>"
                                  "<xmax>1</xmax><ymax>4</ymax></bndbox>\n</object>\n</annotation>\n",
                         "bad.xml": "<annotation>\n<object>\n</annotation>\n"})
    frame = read_labelme(root / "f.json", strict=False, label_map={0: "car", 1: "bus"})
    assert frame.boxes.class_id.tolist() == [0, 1] and frame.size == (9, 9)
    assert frame.boxes.corners[0].tolist() == [[1, 2], [5, 2], [5, 4], [1, 4]]
    assert str(frame.problems[0]).endswith("f.json:shapes[1].points: expected 2 points (a rectangle) "
                                           "or 4 (an oriented box) of [x, y]")
    voc = read_voc(root / "v.xml", strict=False, label_map={0: "car"})
    assert voc.boxes.difficult.tolist() == [True] and voc.boxes.line.tolist() == [2]
    assert str(voc.problems[0]).startswith(f"{root / 'v.xml'}:6: <bndbox> has xmax < xmin")
    with pytest.raises(InputError, match=r"bad\.xml:3: not valid XML"):
        read_voc(root / "bad.xml", strict=True, label_map={0: "car"})


def test_axis_aligned_test_matches_the_reference_rule():
    square = np.array([[[0, 0], [2, 0], [2, 2], [0, 2]], [[0, 0], [2, 1], [1, 3], [-1, 2]]], dtype=float)
    assert is_axis_aligned(square).tolist() == [True, False]


def test_docstring_examples():
    import doctest

    import hbb2obb.io.frame_labels as module

    result = doctest.testmod(module, verbose=False)
    assert result.attempted >= 4 and result.failed == 0


def test_a_confidence_on_some_lines_only_is_an_error_not_a_silent_drop(write_labels):
    root = write_labels({"obb/a.txt": "0 1 1 5 1 5 3 1 3 0.9\n0 1 1 5 1 5 3 1 3\n",
                         "hbb/a.txt": "0 5 5 2 2\n0 5 5 2 2 0.4\n",
                         "ok/a.txt": "0 1 1 5 1 5 3 1 3 0.9\n0 2 1 5 1 5 3 1 3 0.25\n"})
    with pytest.raises(InputError, match=r"a\.txt:2: no confidence column, while line 1 has one"):
        read_set(root / "obb", "yolo")
    with pytest.raises(InputError, match=r"a\.txt:1: no confidence column, while line 2 has one"):
        read_set(root / "hbb", "yolo")
    assert read_set(root / "ok", "yolo").frames[0].boxes.score.tolist() == [0.9, 0.25]


@pytest.mark.parametrize("first_line", [
    "0 1 1 5 1 5 3 1 nan",      # a YOLO-OBB line whose last corner is not finite (once taken for DOTA's class)
    "0 1 1 5 1 5 3 1 1e400",    # ... or overflows
    "0 1 1 5",                  # a line cut short
    "0 nan 1 5 2",              # a YOLO-HBB line with a NaN
])
def test_a_label_file_broken_on_its_first_line_is_read_and_its_line_named(write_labels, first_line):
    # the first line decides a .txt file's format: a broken one must not make the frame's other
    # boxes vanish from the set as if the file were a README
    root = write_labels({"gt/a.txt": "0 1 1 5 1 5 3 1 3\n", "gt/b.txt": f"{first_line}\n0 1 1 5 1 5 3 1 3\n"})
    assert formats_present(root / "gt") == ["yolo"]
    with pytest.raises(InputError, match=r"b\.txt:1: "):
        read_set(root / "gt", "yolo", sizes=ImageSizes(None, 10, 10), strict=True)
    relaxed = read_set(root / "gt", "yolo", sizes=ImageSizes(None, 10, 10), strict=False)
    assert [f.stem for f in relaxed.frames] == ["a", "b"] and relaxed.ignored == ()
    assert (relaxed.problems[0].path.name, relaxed.problems[0].line) == ("b.txt", 1)
