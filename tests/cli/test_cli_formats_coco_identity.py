"""``hbb2obb-convert --coco_from SRC.json`` and ``--coco_info``: a derived COCO file that still joins its source.

Ported from the reference tool's tests (1.12.0, ``tests/test_convert_cli.py``), plus what ours
carries beyond it: the source's category ids (the reference renumbers categories 1..N, which
breaks a join on ``category_id``), each category's own supercategory, and each image's other
keys (its ``license`` among them).
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from hbb2obb.cli.formats import main

SIZE = ("-iw", 100, "-ih", 200)
SOURCE = {
    "info": {"description": "the source record", "year": 2020},
    "licenses": [{"id": 1, "name": "CC BY 4.0", "url": "https://example.invalid/by"}],
    # ids neither contiguous nor in name order, as a real derivative's source has them
    "images": [{"id": 27, "file_name": "train/img2.jpg", "width": 100, "height": 200, "license": 1},
               {"id": 4, "file_name": "img1.jpg", "width": 100, "height": 200, "license": 1,
                "date_captured": "2020-01-01"}],
    "categories": [{"id": 3, "name": "Car", "supercategory": "vehicle"}],
    "annotations": [{"id": 900, "image_id": 4, "category_id": 3, "bbox": [10, 10, 40, 40]},
                    {"id": 1000001, "image_id": 4, "category_id": 3, "bbox": [50, 50, 10, 10]},
                    {"id": 7, "image_id": 27, "category_id": 3, "bbox": [10, 10, 40, 40]}],
}
ROTATED = "0 30 10 50 30 30 50 10 30\n"
SECOND = "0 70 50 80 60 70 70 60 60\n"


def _run(*args):
    return CliRunner().invoke(main, [str(a) for a in args] + ["-nb"])


@pytest.fixture
def derived(write_labels):
    """labels/ of two frames whose rows line up with SOURCE (img1 has two boxes), names.txt beside them."""
    root = write_labels({"labels/img1.txt": ROTATED + SECOND, "labels/img2.txt": ROTATED, "names.txt": "Car\n",
                         "source.json": json.dumps(SOURCE)})
    return root


def _written(root):
    return json.loads((root / "out" / "coco_annotations_obb.json").read_text())


def _to_coco(root, *extra):
    return _run(root / "labels", "--to", "coco", "-o", root / "out", *SIZE, *extra)


def test_image_and_annotation_ids_come_from_the_source(derived):
    result = _to_coco(derived, "--coco_from", derived / "source.json")
    assert result.exit_code == 0, result.output
    written = _written(derived)
    assert [image["id"] for image in written["images"]] == [4, 27]
    assert [(a["id"], a["image_id"]) for a in written["annotations"]] == [(900, 4), (1000001, 4), (7, 27)]
    assert f"Carrying ids, licenses and supercategory over from {derived / 'source.json'}" in result.output


def test_licenses_categories_and_image_keys_come_along_but_info_does_not(derived):
    assert _to_coco(derived, "--coco_from", derived / "source.json").exit_code == 0
    written = _written(derived)
    assert written["licenses"] == SOURCE["licenses"]
    assert written["categories"] == [{"id": 3, "name": "Car", "supercategory": "vehicle"}]
    assert {a["category_id"] for a in written["annotations"]} == {3}  # joins the source's category
    assert [image.get("license") for image in written["images"]] == [1, 1]
    assert written["images"][0]["date_captured"] == "2020-01-01"
    assert [image["file_name"] for image in written["images"]] == ["img1.jpg", "img2.jpg"]
    assert written["info"] == {}  # it describes the source record, not this one


def test_the_written_file_reads_back_to_the_same_classes_by_name(derived):
    assert _to_coco(derived, "--coco_from", derived / "source.json").exit_code == 0
    (derived / "map.yaml").write_text("0: Car\n")
    back = _run(derived / "out" / "coco_annotations_obb.json", "--to", "yolo", "-o", derived / "back",
                "-mp", derived / "map.yaml", *SIZE)
    assert back.exit_code == 0, back.output
    rows = [line.split() for line in (derived / "back" / "img1.txt").read_text().splitlines()]
    assert [row[0] for row in rows] == ["0", "0"]
    assert [float(v) for v in rows[0][1:]] == [30, 10, 50, 30, 30, 50, 10, 30]


def test_the_info_block_is_written_verbatim(derived):
    info = {"description": "the derived record", "version": "1.0", "contributor": "me"}
    (derived / "info.json").write_text(json.dumps(info))
    result = _to_coco(derived, "--coco_info", derived / "info.json")
    assert result.exit_code == 0, result.output
    assert _written(derived)["info"] == info


@pytest.mark.parametrize("content, message", [("[1, 2]", "expected a JSON object"), ("{oops", "not valid JSON")])
def test_an_info_file_that_is_not_a_json_object_is_refused(derived, content, message):
    (derived / "info.json").write_text(content)
    result = _to_coco(derived, "--coco_info", derived / "info.json")
    assert result.exit_code == 2 and message in result.output and "--coco_info" in result.output
    assert not (derived / "out").exists()


def test_a_frame_with_more_boxes_than_the_source_is_refused_with_nothing_written(derived):
    (derived / "labels" / "img2.txt").write_text(ROTATED + SECOND)
    result = _to_coco(derived, "--coco_from", derived / "source.json")
    assert result.exit_code == 2
    assert "img2: 2 box(es) here against 1 in the source" in result.output
    assert not (derived / "out").exists()


def test_a_frame_the_source_does_not_hold_is_refused(derived):
    (derived / "labels" / "img9.txt").write_text(ROTATED)
    result = _to_coco(derived, "--coco_from", derived / "source.json")
    assert result.exit_code == 2 and "not in the source file" in result.output and "img9" in result.output


def test_a_class_that_disagrees_with_the_source_row_is_refused(derived):
    (derived / "names.txt").write_text("Bus\n")  # same rows, another object
    result = _to_coco(derived, "--coco_from", derived / "source.json")
    assert result.exit_code == 2 and "'Bus' here against 'Car'" in result.output


def test_a_source_repeating_an_annotation_id_over_the_written_frames_is_refused(derived):
    source = json.loads(json.dumps(SOURCE))
    source["annotations"][2]["id"] = 900
    (derived / "source.json").write_text(json.dumps(source))
    result = _to_coco(derived, "--coco_from", derived / "source.json")
    assert result.exit_code == 2 and "repeats an annotation id" in result.output


@pytest.mark.parametrize("change, message", [
    (lambda s: s["annotations"][0].update(image_id=99), "annotations[0].image_id"),
    (lambda s: s["annotations"][1].update(category_id=8), "annotations[1].category_id"),
    (lambda s: s["annotations"][2].pop("id"), "annotations[2]"),
    (lambda s: s.pop("categories"), "not a COCO instance file"),
])
def test_a_broken_source_file_is_one_line_naming_where(derived, change, message):
    source = json.loads(json.dumps(SOURCE))
    change(source)
    (derived / "source.json").write_text(json.dumps(source))
    result = _to_coco(derived, "--coco_from", derived / "source.json")
    assert result.exit_code == 2 and message in result.output and "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) <= 2  # the Read line, then the error
    assert not (derived / "out").exists()


@pytest.mark.parametrize("flag", ["--coco_from", "--coco_info"])
def test_the_identity_flags_are_refused_when_no_coco_is_written(derived, flag):
    (derived / "info.json").write_text("{}")
    value = derived / ("source.json" if flag == "--coco_from" else "info.json")
    result = _run(derived / "labels", "--to", "dota", "-o", derived / "out", *SIZE, flag, value)
    assert result.exit_code == 2
    assert f"{flag} is read only when COCO is among the output formats" in result.output


def test_without_a_source_the_numbering_is_unchanged(derived):
    assert _to_coco(derived).exit_code == 0
    written = _written(derived)
    assert [image["id"] for image in written["images"]] == [1, 2]
    assert [(a["id"], a["image_id"], a["category_id"]) for a in written["annotations"]] == [
        (1, 1, 1), (2, 1, 1), (3, 2, 1)]
    assert written["info"] == {} and written["licenses"] == [] and written["categories"] == [{"id": 1, "name": "Car"}]


def test_a_class_the_source_lacks_gets_an_id_no_source_category_has(write_labels):
    source = json.loads(json.dumps(SOURCE))
    root = write_labels({"labels/img1.txt": ROTATED + SECOND, "labels/img2.txt": ROTATED,
                         "classes.yaml": "0: Car\n1: Bus\n2: Truck\n", "source.json": json.dumps(source)})
    result = _to_coco(root, "--coco_from", root / "source.json")
    assert result.exit_code == 0, result.output
    categories = _written(root)["categories"]
    assert categories[0] == {"id": 3, "name": "Car", "supercategory": "vehicle"}
    assert [(c["id"], c["name"]) for c in categories[1:]] == [(4, "Bus"), (5, "Truck")]
