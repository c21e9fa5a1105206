"""Every reader against hostile and unlucky content (issue 34): one clear error or a counted skip, never a
traceback, a hang, a silent pick or a changed class id."""

from __future__ import annotations

import json
import time
import warnings

import pytest

from hbb2obb.errors import InputError, LabelFormatError
from hbb2obb.gates.golden import load_golden
from hbb2obb.io.coco import read_coco
from hbb2obb.io.dota_task1 import read_task1
from hbb2obb.io.label_sets import read_set
from hbb2obb.io.labelmap import load_label_map
from hbb2obb.io.labelme import read_labelme
from hbb2obb.io.voc import read_voc

HUGE = 10**400  # an integer no float holds


def _bomb(levels: int = 10) -> str:
    """A YAML alias bomb: ten aliases per level, ``levels`` deep (10**levels leaves)."""
    lines = ['a: &a ["x","x","x","x","x","x","x","x","x","x"]']
    names = "abcdefghijklmnop"
    for previous, name in zip(names, names[1:levels]):
        lines.append(f"{name}: &{name} [" + ",".join([f"*{previous}"] * 10) + "]")
    return "\n".join(lines) + "\n"


def _coco(annotations, categories=None, images=None) -> dict:
    return {"images": images if images is not None else [{"id": 1, "file_name": "f1.jpg", "width": 100,
                                                          "height": 80}],
            "annotations": annotations,
            "categories": categories if categories is not None else [{"id": 1, "name": "car"}]}


def _ann(index=1, **fields):
    return {"id": index, "image_id": 1, "category_id": 1, "bbox": [1, 2, 10, 20], **fields}


def _write(path, data) -> None:
    path.write_text(json.dumps(data) if not isinstance(data, str) else data, encoding="utf-8")


# --- class 3: no traceback on hostile content ------------------------------------------------


@pytest.mark.parametrize("reader", ["label map", "golden", "sweep", "benchmark"])
def test_a_yaml_alias_bomb_is_refused_at_once(tmp_path, reader):
    from hbb2obb.sweeps.benchmark import load_benchmark
    from hbb2obb.sweeps.runner import read_yaml

    path = tmp_path / "bomb.yaml"
    path.write_text(_bomb() if reader != "label map" else "names:\n" + "".join(
        "  " + line + "\n" for line in _bomb().splitlines()))
    assert len(path.read_bytes()) < 500
    load = {"label map": load_label_map, "golden": load_golden, "sweep": read_yaml,
            "benchmark": load_benchmark}[reader]
    began = time.perf_counter()
    with pytest.raises(InputError, match="alias"):
        load(path)
    assert time.perf_counter() - began < 0.5


def test_a_self_referring_yaml_alias_is_refused(tmp_path):
    path = tmp_path / "golden.yaml"
    path.write_text("a: &a [*a]\n")
    with pytest.raises(InputError, match="alias"):
        load_golden(path)


def test_ordinary_anchors_still_load(tmp_path):
    path = tmp_path / "map.yaml"
    path.write_text("base: &b car\nnames:\n  0: *b\n  1: bus\n")
    assert load_label_map(path) == {0: "car", 1: "bus"}


@pytest.mark.parametrize("what", ["coco", "labelme", "golden"])
def test_json_nested_100000_deep_is_one_error(tmp_path, what):
    path = tmp_path / ("g.json" if what == "golden" else "x.json")
    path.write_text("[" * 100_000 + "]" * 100_000)
    load = {"coco": lambda p: read_coco(p, strict=True), "labelme": lambda p: read_labelme(p, strict=True),
            "golden": load_golden}[what]
    with pytest.raises(InputError, match="nested too deeply"):
        load(path)


def test_yaml_nested_deep_is_one_error(tmp_path):
    path = tmp_path / "map.yaml"
    path.write_text("[" * 20_000 + "]" * 20_000)
    with pytest.raises(InputError):
        load_label_map(path)


@pytest.mark.parametrize("literal", ["1" + "0" * 400, "9" * 5000, "1e400"], ids=["10**400", "5000 digits", "1e400"])
@pytest.mark.parametrize("field", ["bbox", "segmentation", "score", "width", "category"])
def test_coco_numbers_beyond_float_range(tmp_path, literal, field):
    ann = _ann()
    images = None
    categories = None
    if field == "bbox":
        ann["bbox"] = ["@@", 2, 10, 20]
    elif field == "segmentation":
        ann["segmentation"] = [[0, 0, "@@", 0, 10, 10, 0, 10]]
    elif field == "score":
        ann["score"] = "@@"
    elif field == "width":
        images = [{"id": 1, "file_name": "f1.jpg", "width": "@@", "height": 80}]
    else:
        categories = [{"id": "@@", "name": "car"}]
        ann["category_id"] = "@@"
    path = tmp_path / "c.json"
    path.write_text(json.dumps(_coco([ann], categories, images)).replace('"@@"', literal))
    with pytest.raises(InputError) as caught:
        read_coco(path, strict=True)
    assert str(path) in str(caught.value)
    if field in ("bbox", "segmentation", "score"):
        frames, _, problems = read_coco(path, strict=False)
        assert len(problems) == 1 and "annotations[0]" in str(problems[0])
        assert sum(len(f.boxes) for f in frames) == 0


@pytest.mark.parametrize("field", ["bbox", "segmentation"])
def test_coco_coordinates_beyond_the_limit_follow_the_text_rule(tmp_path, field):
    ann = _ann(bbox=[1e13, 0, 5, 5]) if field == "bbox" else _ann(segmentation=[[0, 0, 2e12, 0, 10, 10, 0, 10]])
    path = tmp_path / "c.json"
    _write(path, _coco([ann, _ann(2)]))
    with pytest.raises(LabelFormatError, match=r"annotations\[0\].*out of range"):
        read_coco(path, strict=True)
    frames, _, problems = read_coco(path, strict=False)
    assert len(problems) == 1 and len(frames[0].boxes) == 1


def test_labelme_coordinates_and_sizes_beyond_range(tmp_path):
    path = tmp_path / "f.json"
    shapes = [{"label": "car", "points": [[0, 0], ["@@", 5]], "shape_type": "rectangle"},
              {"label": "car", "points": [[0, 0], [2e12, 5]], "shape_type": "rectangle"},
              {"label": "car", "points": [[0, 0], [4, 5]], "shape_type": "rectangle"}]
    path.write_text(json.dumps({"shapes": shapes, "imageWidth": 10, "imageHeight": 10}).replace('"@@"', str(HUGE)))
    with pytest.raises(LabelFormatError, match=r"shapes\[0\]"):
        read_labelme(path, strict=True)
    frame = read_labelme(path, strict=False)
    assert len(frame.problems) == 2 and len(frame.boxes) == 1
    path.write_text(json.dumps({"shapes": [], "imageWidth": "@@", "imageHeight": 10}).replace('"@@"', str(HUGE)))
    with pytest.raises(InputError, match="imageWidth"):
        read_labelme(path, strict=True)


def test_voc_coordinates_beyond_the_limit(tmp_path):
    path = tmp_path / "f.xml"
    objects = "".join(f"<object><name>car</name><bndbox><xmin>0</xmin><ymin>0</ymin><xmax>{x}</xmax>"
                      "<ymax>5</ymax></bndbox></object>\n" for x in ("2e12", "1e400", "7"))
    path.write_text(f"<annotation>\n{objects}</annotation>\n")
    with pytest.raises(LabelFormatError, match=r"f\.xml:2: .*out of range"):
        read_voc(path, strict=True, label_map={0: "car"})
    frame = read_voc(path, strict=False, label_map={0: "car"})
    assert len(frame.problems) == 2 and len(frame.boxes) == 1


def test_task1_coordinates_beyond_the_limit_are_counted(tmp_path):
    (tmp_path / "Task1_car.txt").write_text("P1 0.9 0 0 4 0 4 2 0 2\nP1 0.8 0 0 2e12 0 4 2 0 2\n")
    found = read_task1(tmp_path, {0: "car"})
    assert len(found.boxes["P1"]) == 1
    assert [p.line for p in found.problems] == [2] and "out of range" in found.problems[0].reason


XML_BOMB = """<?xml version="1.0"?>
<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]>
<annotation><object><name>&lol3;</name></object></annotation>
"""


@pytest.mark.parametrize("text", [
    XML_BOMB,
    '<?xml version="1.0"?>\n<!DOCTYPE a [<!ENTITY e SYSTEM "file:///etc/hostname">]>\n'
    "<annotation><object><name>&e;</name></object></annotation>\n",
])
def test_voc_entity_tricks_are_refused(tmp_path, text):
    path = tmp_path / "f.xml"
    path.write_text(text)
    with pytest.raises(InputError, match="entit"):
        read_voc(path, strict=True, label_map={0: "car"})
    with pytest.raises(InputError, match="entit"):
        read_set(tmp_path, "voc", strict=True)


def _voc_text() -> str:
    return ("<annotation>\n<size><width>20</width><height>10</height></size>\n<object><name>café</name>"
            "<bndbox><xmin>1</xmin><ymin>2</ymin><xmax>5</xmax><ymax>6</ymax></bndbox></object>\n</annotation>\n")


@pytest.mark.parametrize("encoding", ["utf-16", "utf-8-sig", "utf-32"])
def test_byte_order_marked_files_are_read(tmp_path, encoding):
    voc = tmp_path / "f.xml"
    voc.write_bytes(('<?xml version="1.0"?>\n' + _voc_text()).encode(encoding) if encoding != "utf-32"
                    else ('<?xml version="1.0" encoding="UTF-32"?>\n' + _voc_text()).encode(encoding))
    if encoding != "utf-32":  # expat reads UTF-16 and UTF-8 only; UTF-32 is one clear error
        assert read_voc(voc, strict=True, label_map={0: "café"}).boxes.class_id.tolist() == [0]
    else:
        with pytest.raises(InputError):
            read_voc(voc, strict=True, label_map={0: "café"})
    coco = tmp_path / "c.json"
    coco.write_bytes(json.dumps(_coco([_ann()]), ensure_ascii=False).encode(encoding))
    assert len(read_coco(coco, strict=True)[0][0].boxes) == 1
    labelme = tmp_path / "f.json"
    labelme.write_bytes(json.dumps({"shapes": [{"label": "café", "points": [[0, 0], [2, 3]]}]},
                                   ensure_ascii=False).encode(encoding))
    assert read_labelme(labelme, strict=True).boxes.class_id.tolist() == [0]
    label_map = tmp_path / "map.yaml"
    label_map.write_bytes("0: café\n".encode(encoding))
    assert load_label_map(label_map) == {0: "café"}


def test_latin1_json_is_one_error_naming_the_file(tmp_path):
    path = tmp_path / "c.json"
    path.write_bytes(json.dumps(_coco([_ann()], [{"id": 1, "name": "café"}]), ensure_ascii=False).encode("latin-1"))
    with pytest.raises(InputError, match="not UTF-8"):
        read_coco(path, strict=True)


@pytest.mark.parametrize("name", ["", ".jpg", "sub/.hidden.jpg", "a\x00b.jpg", "..", "dir/"])
def test_odd_coco_file_names_are_refused(tmp_path, name):
    path = tmp_path / "c.json"
    _write(path, _coco([], images=[{"id": 1, "file_name": name, "width": 10, "height": 10}]))
    with pytest.raises(InputError, match=r"images\[0\]"):
        read_coco(path, strict=True)


@pytest.mark.parametrize("name, stem", [("../../etc/a.jpg", "a"), ("/abs/path/b.png", "b"),
                                        ("C:\\data\\c.jpg", "c"), ("train/d.jpg", "d")])
def test_coco_file_names_with_folders_name_the_frame_only(tmp_path, name, stem):
    path = tmp_path / "c.json"
    _write(path, _coco([], images=[{"id": 1, "file_name": name, "width": 10, "height": 10}]))
    assert read_coco(path, strict=True)[0][0].stem == stem


def test_label_map_class_ids_beyond_int64_are_refused(tmp_path):
    path = tmp_path / "map.yaml"
    for key in (str(HUGE), "9" * 5000, str(2**63)):
        path.write_text(f"{key}: car\n")
        with pytest.raises(InputError, match="out of range|not valid YAML"):
            load_label_map(path)


def test_golden_json_with_huge_integers_is_read_or_refused_cleanly(tmp_path):
    path = tmp_path / "g.json"
    path.write_text('{"total_gt": %d}' % HUGE)
    assert load_golden(path)["total_gt"] == HUGE
    path.write_text('{"total_gt": %s}' % ("9" * 5000))
    with pytest.raises(InputError, match="not valid JSON"):
        load_golden(path)


# --- class 4: one numeric rule, no numpy warning ----------------------------------------------


def test_hostile_json_reads_raise_no_numpy_warning(tmp_path):
    path = tmp_path / "c.json"
    anns = [_ann(1, bbox=[1e300, 1e300, 1e300, 1e300]), _ann(2, bbox=[0, 0, 1e308, 1e308]),
            _ann(3, segmentation=[[0, 0, 1e308, 0, 1e308, 1e308, 0, 1e308]]), _ann(4)]
    _write(path, _coco(anns))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        frames, _, problems = read_coco(path, strict=False)
    assert len(problems) == 3 and len(frames[0].boxes) == 1


# --- class 5: class identity --------------------------------------------------------------------


def test_coco_category_ids_are_class_ids_plus_one(tmp_path):
    path = tmp_path / "c.json"
    _write(path, _coco([_ann(1, category_id=1), _ann(2, category_id=4)],
                       [{"id": 1, "name": "class_0"}, {"id": 4, "name": "class_3"}]))
    frames, names, _ = read_coco(path, strict=True)
    assert frames[0].boxes.class_id.tolist() == [0, 3]
    assert names == {0: "class_0", 3: "class_3"}


def test_yolo_to_coco_to_yolo_keeps_class_ids(tmp_path):
    from hbb2obb.io.label_sets import canonical_set, complete_names, write_set

    source = tmp_path / "yolo"
    source.mkdir()
    (source / "f1.txt").write_text("0 10 10 20 10 20 20 10 20\n3 30 30 40 30 40 40 30 40\n7 1 1 5 1 5 5 1 5\n")
    first = canonical_set(read_set(source, "yolo"))
    out = tmp_path / "coco"
    out.mkdir()
    from hbb2obb.io.frame_labels import FrameLabels

    first = type(first)(first.format, tuple(FrameLabels(f.stem, f.boxes, (100, 100), f.source) for f in first.frames),
                        first.names)
    write_set(first, out, "coco", kind="obb", names=complete_names({}, first))
    back = read_set(out, "coco")
    assert back.frames[0].boxes.class_id.tolist() == [0, 3, 7]


@pytest.mark.parametrize("categories, match", [
    ([{"id": 1, "name": "car"}, {"id": 1, "name": "bus"}], "id 1"),
    ([{"id": 1, "name": "car"}, {"id": 2, "name": "Car"}], "(?i)name 'car'"),
    ([{"id": True, "name": "car"}], "integer"),
])
def test_coco_categories_given_twice_are_refused(tmp_path, categories, match):
    path = tmp_path / "c.json"
    _write(path, _coco([_ann()], categories))
    for strict in (True, False):
        with pytest.raises(InputError, match=match):
            read_coco(path, strict=strict)


def _labelme(path, *labels, shape_type="rectangle", points=None):
    shapes = [{"label": label, "points": points or [[0, 0], [4, 5]], "shape_type": shape_type} for label in labels]
    _write(path, {"shapes": shapes, "imageWidth": 10, "imageHeight": 10})


def test_a_labelme_label_that_is_a_number_is_that_class_id(tmp_path):
    _labelme(tmp_path / "a.json", "3", "0")
    _labelme(tmp_path / "b.json", "12")
    label_set = read_set(tmp_path, "labelme")
    assert [f.boxes.class_id.tolist() for f in label_set.frames] == [[3, 0], [12]]


@pytest.mark.parametrize("first, second", [(("car",), ("Car",)), (("car",), ("0",)), (("1", "car"), ("bus", "1"))])
def test_labelme_names_that_collide_are_refused(tmp_path, first, second):
    _labelme(tmp_path / "a.json", *first)
    _labelme(tmp_path / "b.json", *second)
    if first == ("1", "car"):  # "car" takes id 0 (1 is the label "1"); "bus" then 2: no collision
        assert [f.boxes.class_id.tolist() for f in read_set(tmp_path, "labelme").frames] == [[1, 0], [2, 1]]
        return
    with pytest.raises(InputError, match="class"):
        read_set(tmp_path, "labelme")


def test_a_labelme_number_label_with_a_map(tmp_path):
    _labelme(tmp_path / "a.json", "1", "car")
    frame = read_labelme(tmp_path / "a.json", strict=True, label_map={0: "car", 1: "bus"})
    assert frame.boxes.class_id.tolist() == [1, 0]


# --- class 6: COCO means what COCO means ---------------------------------------------------------


def test_iscrowd_is_carried_as_an_ignore_flag(tmp_path):
    path = tmp_path / "c.json"
    _write(path, _coco([_ann(1, iscrowd=1), _ann(2, iscrowd=0), _ann(3)]))
    frames, _, _ = read_coco(path, strict=True)
    assert frames[0].boxes.difficult.tolist() == [True, False, False]
    _write(path, _coco([_ann(1, iscrowd=2)]))
    with pytest.raises(LabelFormatError, match="iscrowd"):
        read_coco(path, strict=True)


def test_iscrowd_survives_a_coco_round_trip_and_only_coco_marks_crowd(tmp_path):
    from hbb2obb.io.coco import write_coco

    path = tmp_path / "c.json"
    _write(path, _coco([_ann(1, iscrowd=1), _ann(2, iscrowd=0), _ann(3, iscrowd=1)]))
    frames, names, _ = read_coco(path, strict=True)
    assert frames[0].boxes.crowd.tolist() == [True, False, True]
    write_coco(tmp_path / "out.json", frames, names, obb=False)
    written = json.loads((tmp_path / "out.json").read_text())["annotations"]
    assert [a["iscrowd"] for a in written] == [1, 0, 1]
    (tmp_path / "txt").mkdir()
    (tmp_path / "txt" / "f.txt").write_text("0 0 0 4 0 4 5 0 5\n")
    assert read_set(tmp_path / "txt", "yolo", strict=True).frames[0].boxes.crowd is None


@pytest.mark.parametrize("segmentation", [
    [[0, 0, 10, 0, 10, 10]],
    [[0, 0, 10, 0, 10, 10, 0, 10, 5, 5]],
    [[0, 0, 10, 0, 10, 10, 0, 10], [20, 20, 30, 20, 30, 30, 20, 30]],
    {"counts": [0, 10, 90], "size": [10, 10]},
    [0, 0, 10, 0, 10, 10, 0, 10],
    "polygon",
])
def test_a_segmentation_that_is_not_one_quad_is_never_the_bbox(tmp_path, segmentation):
    path = tmp_path / "c.json"
    _write(path, _coco([_ann(1, segmentation=segmentation), _ann(2, segmentation=[[0, 0, 4, 0, 4, 4, 0, 4]])]))
    with pytest.raises(LabelFormatError, match=r"annotations\[0\]\.segmentation"):
        read_coco(path, strict=True)
    frames, _, problems = read_coco(path, strict=False)
    assert len(problems) == 1 and frames[0].boxes.line.tolist() == [2]


def test_an_empty_segmentation_is_a_horizontal_box(tmp_path):
    path = tmp_path / "c.json"
    _write(path, _coco([_ann(1, segmentation=[]), _ann(2)]))
    frames, _, _ = read_coco(path, strict=True)
    assert frames[0].boxes.corners[0].tolist() == [[1, 2], [11, 2], [11, 22], [1, 22]]


# --- class 7: no silent pick -------------------------------------------------------------------


def test_several_coco_files_in_a_folder_are_refused(tmp_path):
    _write(tmp_path / "a.json", _coco([_ann()]))
    _write(tmp_path / "b.json", _coco([]))
    with pytest.raises(InputError, match=r"a\.json.*b\.json"):
        read_set(tmp_path, "coco")


def test_a_dota_file_of_headers_only_is_a_frame_without_objects(tmp_path):
    (tmp_path / "a.txt").write_text("imagesource:GoogleEarth\ngsd:0.1\n0 0 4 0 4 4 0 4 car 0\n")
    (tmp_path / "b.txt").write_text("imagesource:GoogleEarth\ngsd:0.1\n")
    label_set = read_set(tmp_path, label_map={0: "car"})
    assert label_set.format == "dota"
    assert [(f.stem, len(f.boxes)) for f in label_set.frames] == [("a", 1), ("b", 0)]


@pytest.mark.parametrize("shape_type, points", [("circle", [[5, 5], [8, 5]]), ("line", [[0, 0], [4, 5]]),
                                                ("point", [[3, 3]]), ("linestrip", [[0, 0], [1, 1], [2, 0], [3, 3]]),
                                                ("points", [[0, 0], [1, 1]])])
def test_a_labelme_circle_line_or_point_is_never_a_box(tmp_path, shape_type, points):
    path = tmp_path / "a.json"
    shapes = [{"label": "car", "points": points, "shape_type": shape_type},
              {"label": "car", "points": [[0, 0], [4, 5]], "shape_type": "rectangle"}]
    _write(path, {"shapes": shapes})
    with pytest.raises(LabelFormatError, match=r"shapes\[0\].*" + shape_type):
        read_labelme(path, strict=True)
    frame = read_labelme(path, strict=False)
    assert len(frame.problems) == 1 and frame.boxes.line.tolist() == [2]


def test_a_ground_truth_folder_of_several_formats_is_refused(tmp_path):
    from hbb2obb.frames.pairing import plan_frames

    gt, pred = tmp_path / "gt", tmp_path / "pred"
    gt.mkdir()
    pred.mkdir()
    _labelme(gt / "a.json", "car")
    (gt / "a.xml").write_text(_voc_text())
    (pred / "a.txt").write_text("0 0 0 4 0 4 5 0 5 0.9\n")
    with pytest.raises(InputError, match="voc.*labelme|labelme.*voc"):
        plan_frames(gt, pred, label_map={0: "car", 1: "café"})
    assert plan_frames(gt, pred, gt_format="labelme", label_map={0: "car", 1: "café"}).frames


def test_a_crowd_annotation_is_no_miss_as_in_pycocotools(tmp_path, capsys):
    """Read through the COCO reader, scored by the COCO rule: the same AP and recall as COCOeval.

    One car is hit; one crowd region has a detection exactly on it (neither hit nor false alarm)
    and another has none (no miss); a plain false alarm ranks last. Were crowd regions ordinary
    boxes, recall would be 1/3.
    """
    pytest.importorskip("pycocotools")
    from pycocotools.coco import COCO
    from pycocotools.cocoeval import COCOeval

    from hbb2obb.boxes import Boxes
    from hbb2obb.detection.accumulate import accumulate, summarize_detections
    from hbb2obb.detection.evaluate import evaluate_detections

    gt_path = tmp_path / "gt.json"
    boxes = [[10, 10, 40, 30], [100, 100, 50, 50], [200, 20, 30, 60]]
    anns = [{"id": i + 1, "image_id": 1, "category_id": 1, "bbox": b, "area": b[2] * b[3], "iscrowd": int(i > 0)}
            for i, b in enumerate(boxes)]
    gt_data = _coco(anns, images=[{"id": 1, "file_name": "f1.jpg", "width": 400, "height": 300}])
    _write(gt_path, gt_data)
    detections = [{"image_id": 1, "category_id": 1, "bbox": [10, 10, 40, 30], "score": 0.9},
                  {"image_id": 1, "category_id": 1, "bbox": [100, 100, 50, 50], "score": 0.8},
                  {"image_id": 1, "category_id": 1, "bbox": [300, 200, 20, 20], "score": 0.1}]
    coco_gt = COCO(str(gt_path))
    evaluator = COCOeval(coco_gt, coco_gt.loadRes(detections), "bbox")
    evaluator.evaluate()
    evaluator.accumulate()
    evaluator.summarize()
    capsys.readouterr()

    frames, _, _ = read_coco(gt_path, strict=True)
    gt = frames[0].boxes
    assert gt.difficult.tolist() == [False, True, True]
    dt = Boxes([[[x, y], [x + w, y], [x + w, y + h], [x, y + h]] for x, y, w, h in (d["bbox"] for d in detections)],
               [0, 0, 0], score=[d["score"] for d in detections])
    overall, _ = summarize_detections(accumulate(evaluate_detections(gt, [0, 0, 0], dt, [0, 0, 0])))
    assert evaluator.stats[8] == pytest.approx(1.0)  # COCOeval's recall at 100 detections: the crowd is no miss
    assert overall["mar_100"] == pytest.approx(evaluator.stats[8], abs=1e-9)
    assert overall["map50"] == pytest.approx(evaluator.stats[1], abs=1e-9)
    assert overall["map50_95"] == pytest.approx(evaluator.stats[0], abs=1e-9)


@pytest.mark.parametrize("role", ["ground-truth", "prediction"])
def test_a_text_label_folder_that_also_holds_coco_or_voc_files_is_refused(tmp_path, role):
    """``NAME.txt`` labels beside a COCO file or VOC files: which set to score is the user's choice."""
    from click.testing import CliRunner

    from hbb2obb.cli.eval import main

    gt, pred = tmp_path / "gt", tmp_path / "pred"
    gt.mkdir()
    pred.mkdir()
    (gt / "a.txt").write_text("0 0 0 4 0 4 5 0 5\n")
    (pred / "a.txt").write_text("0 0 0 4 0 4 5 0 5 0.9\n")
    mixed = gt if role == "ground-truth" else pred
    (mixed / "notes.json").write_text('{"author": "me"}')  # not labels: no reason to refuse
    (mixed / "metadata.xml").write_text("<meta/>")
    args = [str(gt), str(pred), "-nb", "--json"]
    assert CliRunner().invoke(main, args).exit_code == 0
    _write(mixed / "instances.json", _coco([_ann(1)]))
    (mixed / "b.xml").write_text(_voc_text())
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, result.output
    assert f"{mixed}: the {role} folder holds NAME.txt labels and voc, coco label files" in result.stderr
    assert "Traceback" not in result.output and len(result.stderr.strip().splitlines()) == 1
    flag = "--gt_format" if role == "ground-truth" else "--pred_format"
    chosen = CliRunner().invoke(main, [*args, flag, "yolo"])
    assert chosen.exit_code == 0, chosen.stderr


def test_a_coco_annotation_id_given_twice_is_broken_ground_truth_and_a_skipped_prediction(tmp_path):
    # pycocotools indexes annotations by id: of two with one id it keeps the last and reads it twice
    path = tmp_path / "labels.json"
    _write(path, _coco([_ann(5), _ann(6, bbox=[40, 40, 10, 10]), _ann(5, bbox=[60, 50, 10, 10])]))
    with pytest.raises(LabelFormatError, match=r"labels\.json:annotations\[2\]\.id: annotation id 5 is also "
                                               r"annotations\[0\]'s: ids must be unique"):
        read_coco(path, strict=True)
    frames, _, problems = read_coco(path, strict=False)
    assert frames[0].boxes.corners[:, 0].tolist() == [[1, 2], [40, 40]] and len(problems) == 1
    _write(path, _coco([{k: v for k, v in _ann(bbox=[x, 0, 5, 5]).items() if k != "id"} for x in (0, 20)]))
    assert len(read_coco(path, strict=True)[0][0].boxes) == 2  # results files carry no ids: none to repeat
