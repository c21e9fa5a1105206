"""A source COCO file's ids carried into a written one: read, checked row for row, joined by pycocotools."""

from __future__ import annotations

import json

import numpy as np
import pytest

from hbb2obb.boxes import Boxes
from hbb2obb.errors import InputError
from hbb2obb.io.coco import write_coco
from hbb2obb.io.coco_identity import check_coco_identity, identity_problems, read_coco_identity, read_coco_info
from hbb2obb.io.frame_labels import FrameLabels, axis_rect

SOURCE = {
    "info": {"description": "source"},
    "licenses": [{"id": 2, "name": "CC0"}],
    "images": [{"id": 10, "file_name": "a.jpg", "width": 50, "height": 40, "license": 2},
               {"id": 20, "file_name": "b.png", "width": 50, "height": 40}],
    "categories": [{"id": 7, "name": "car", "supercategory": "vehicle"},
                   {"id": 9, "name": "person", "supercategory": "human"}],
    "annotations": [{"id": 5, "image_id": 20, "category_id": 9, "bbox": [1, 1, 2, 2]},
                    {"id": 3, "image_id": 10, "category_id": 7, "bbox": [1, 1, 2, 2]},
                    {"id": 4, "image_id": 10, "category_id": 9, "bbox": [5, 5, 2, 2]}],
}
NAMES = {0: "car", 1: "person"}


def _frame(stem, classes):
    corners = [axis_rect(1 + 4 * i, 1, 3 + 4 * i, 3) for i in range(len(classes))]
    boxes = Boxes(corners=np.array(corners, dtype=float).reshape(-1, 4, 2), class_id=classes)
    return FrameLabels(stem, boxes, (50, 40), None)


@pytest.fixture
def source(tmp_path):
    path = tmp_path / "source.json"
    path.write_text(json.dumps(SOURCE))
    return path


def test_annotations_are_grouped_by_frame_in_file_order(source):
    identity = read_coco_identity(source)
    assert identity.annotation_ids == {"a": [3, 4], "b": [5]}
    assert identity.annotation_names == {"a": ["car", "person"], "b": ["person"]}
    assert identity.images["a"]["license"] == 2 and identity.licenses == SOURCE["licenses"]


def test_matching_frames_have_no_problems_and_each_mismatch_is_named(source):
    identity = read_coco_identity(source)
    assert identity_problems(identity, [_frame("a", [0, 1]), _frame("b", [1])], NAMES) == []
    problems = identity_problems(identity, [_frame("a", [1, 0]), _frame("b", [1, 1]), _frame("z", [])], NAMES)
    assert problems == ["1 frame(s) are not in the source file, e.g. z",
                        "a row 0: class 'person' here against 'car'", "a row 1: class 'car' here against 'person'",
                        "b: 2 box(es) here against 1 in the source"]
    with pytest.raises(InputError, match="row for row: 1 frame.*; and 1 more$"):
        check_coco_identity(identity, [_frame("a", [1, 0]), _frame("b", [1, 1]), _frame("z", [])], NAMES)


def test_the_written_file_joins_the_source_in_pycocotools(source, tmp_path):
    coco = pytest.importorskip("pycocotools.coco")
    identity = read_coco_identity(source)
    out = tmp_path / "out.json"
    write_coco(out, [_frame("b", [1]), _frame("a", [0, 1])], NAMES, obb=False, identity=identity,
               info={"description": "derived"})
    ours, theirs = coco.COCO(str(out)), coco.COCO(str(source))
    for image_id in (10, 20):
        assert sorted(ours.getAnnIds(imgIds=image_id)) == sorted(theirs.getAnnIds(imgIds=image_id))
        for annotation in ours.loadAnns(ours.getAnnIds(imgIds=image_id)):
            assert annotation["category_id"] == theirs.loadAnns(annotation["id"])[0]["category_id"]
    assert ours.loadCats(9) == [{"id": 9, "name": "person", "supercategory": "human"}]
    assert ours.dataset["info"] == {"description": "derived"}


@pytest.mark.parametrize("content, message", [
    ({**SOURCE, "images": SOURCE["images"] + [{"id": 10, "file_name": "c.jpg"}]}, "appears twice"),
    ({**SOURCE, "categories": SOURCE["categories"] + [{"id": 1, "name": "Car"}]}, "given twice"),
    ({**SOURCE, "annotations": [{"id": "x", "image_id": 10, "category_id": 7}]}, r"annotations\[0\]: needs"),
    ({**SOURCE, "licenses": {"id": 1}}, "licenses: must be a list"),
    # carried into the written file as they are: Python's json wrote NaN and Infinity, which no JSON reader takes
    ({**SOURCE, "licenses": [{"id": 2, "url": float("inf")}]}, r"licenses\[0\]: holds NaN or an infinity"),
    ({**SOURCE, "images": [dict(SOURCE["images"][0], extra=float("nan"))]}, r"images\[0\]: holds NaN"),
    ({**SOURCE, "categories": [dict(SOURCE["categories"][0], supercategory=float("nan")), SOURCE["categories"][1]]},
     r"categories\[0\]: holds NaN"),
])
def test_a_broken_source_is_an_input_error_naming_where(tmp_path, content, message):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(content))
    with pytest.raises(InputError, match=message):
        read_coco_identity(path)


def test_the_info_file_must_hold_an_object(tmp_path):
    path = tmp_path / "info.json"
    path.write_text('"just a string"')
    with pytest.raises(InputError, match="expected a JSON object, got str"):
        read_coco_info(path)
    with pytest.raises(InputError, match="--coco_info"):
        read_coco_info(tmp_path / "absent.json")
    path.write_text('{"version": NaN, "year": 1e400}')
    with pytest.raises(InputError, match=r"--coco_info .*info\.json: holds NaN or an infinity"):
        read_coco_info(path)
