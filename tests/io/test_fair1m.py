"""FAIR1M XML reader (issue 37)."""

from __future__ import annotations

import numpy as np
import pytest
from exact_rectangles import NAMES, scores, write_yolo_rectangles

from hbb2obb.errors import InputError, LabelFormatError
from hbb2obb.io.fair1m import read
from hbb2obb.io.format_detection import sniff_format
from hbb2obb.io.label_sets import read_set


def _object(name: str, points, probability=None, coordinate="pixel") -> str:
    ring = "".join(f"<point>{x:.6f},{y:.6f}</point>" for x, y in [*points, points[0]])
    score = "" if probability is None else f"<probability>{probability}</probability>"
    return (f"    <object>\n      <coordinate>{coordinate}</coordinate><type>rectangle</type>\n"
            f"      <possibleresult><name>{name}</name>{score}</possibleresult>\n"
            f"      <points>{ring}</points>\n    </object>\n")


def _file(objects: str, filename: str = "0.tif") -> str:
    return (f"<?xml version='1.0' encoding='utf-8'?>\n<annotation>\n  <source><filename>{filename}</filename>"
            "<origin>GF2/GF3</origin></source>\n  <size><width>1000</width><height>1000</height><depth>3</depth>"
            f"</size>\n  <objects>\n{objects}  </objects>\n</annotation>\n")


def test_a_file_is_read_in_the_listed_order_without_the_closing_point(tmp_path):
    turned = [[120, 100], [108, 116], [148, 146], [160, 130]]  # counter-clockwise: kept as listed
    path = tmp_path / "0.xml"
    path.write_text(_file(_object("Boeing737", turned) + _object("Dry Cargo Ship", [[1, 2], [11, 2], [11, 7], [1, 7]])))
    assert sniff_format(path) == "fair1m"
    labels = read_set(tmp_path)
    frame = labels.frames[0]
    assert labels.format == "fair1m" and labels.names == {0: "Boeing737", 1: "Dry Cargo Ship"}
    assert frame.boxes.corners.tolist() == [turned, [[1, 2], [11, 2], [11, 7], [1, 7]]]
    assert frame.boxes.line.tolist() == [6, 11] and frame.boxes.score is None
    assert frame.size == (1000, 1000) and frame.image_name == "0.tif"


def test_probabilities_are_confidences_for_all_or_none(tmp_path):
    path = tmp_path / "0.xml"
    quad = [[1, 2], [11, 2], [11, 7], [1, 7]]
    path.write_text(_file(_object("A220", quad, 0.9) + _object("A220", quad, 0.25)))
    assert read(path, strict=False).boxes.score.tolist() == [0.9, 0.25]
    path.write_text(_file(_object("A220", quad, 0.9) + _object("A220", quad)))
    with pytest.raises(InputError, match=r"0.xml:11: no probability"):
        read(path, strict=False)


@pytest.mark.parametrize("broken, reason", [
    (_object("A220", [[1, 1], [5, 1], [5, 3]]), "3 distinct points"),
    (_object("A220", [[1, 1], [5, 1], [5, 3], [1, 3]]).replace("<point>1.000000,3.000000</point>",
                                                               "<point>1.000000;3.000000</point>"), "x,y"),
    (_object("A220", [[1, 1], [5, 1], [5, 3], [1, float("nan")]]), "point 4 y is not a finite number"),
    (_object("A220", [[1, 1], [5, 1], [5, 3], [1, 3e13]]), "point 4 y is out of range"),
    (_object("A220", [[1, 1], [5, 1], [5, 3], [1, 3]], coordinate="geodegree"), "not pixels"),
    (_object("A220", [[1, 1], [5, 1], [5, 3], [1, 3]], probability="high"), "probability is not a finite"),
    (_object("", [[1, 1], [5, 1], [5, 3], [1, 3]]), "no class name"),
])
def test_a_broken_object_is_an_error_in_ground_truth_and_a_counted_skip_in_predictions(tmp_path, broken, reason):
    good = _object("A220", [[1, 1], [5, 1], [5, 3], [1, 3]], None if "probability" not in broken else 0.5)
    path = tmp_path / "a.xml"
    path.write_text(_file(good + broken))
    with pytest.raises(LabelFormatError, match=rf"a.xml:11: .*{reason}"):
        read(path, strict=True)
    frame = read(path, strict=False)
    assert len(frame.boxes) == 1 and len(frame.problems) == 1


def test_entities_are_refused(tmp_path):
    path = tmp_path / "a.xml"
    path.write_text('<?xml version="1.0"?>\n<!DOCTYPE a [<!ENTITY x "xxxxxxxxxx">]>\n<annotation><objects><object>'
                    "<possibleresult><name>&x;</name></possibleresult></object></objects></annotation>")
    with pytest.raises(InputError, match="entities"):
        read(path, strict=True)


def test_scores_as_the_yolo_original(tmp_path):
    gt = write_yolo_rectangles(tmp_path)
    original = read_set(gt, "yolo", label_map=NAMES)
    (tmp_path / "fair1m").mkdir()
    for frame in original.frames:
        objects = "".join(_object(NAMES[int(c)], q.tolist()) for q, c in zip(frame.boxes.corners, frame.boxes.class_id))
        (tmp_path / "fair1m" / f"{frame.stem}.xml").write_text(_file(objects, f"{frame.stem}.tif"))
    back = read_set(tmp_path / "fair1m", label_map=NAMES)
    assert back.format == "fair1m"
    for a, b in zip(original.frames, back.frames, strict=True):
        assert a.boxes.class_id.tolist() == b.boxes.class_id.tolist()
        assert np.array_equal(a.boxes.corners, b.boxes.corners)
    ours, theirs = (scores(g, gt, tmp_path / "classes.yaml", f)
                    for g, f in ((tmp_path / "fair1m", "fair1m"), (gt, "yolo")))
    assert ours["total_matches"] == theirs["total_matches"] == 15
    for key in ("avg_iou", "median_iou", "avg_angle_error"):
        assert ours[key] == pytest.approx(theirs[key], abs=1e-12), key
