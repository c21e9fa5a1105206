"""HRSC2016 XML reader (issue 37)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from exact_rectangles import NAMES, scores, write_yolo_rectangles
from shapely import affinity
from shapely.geometry import Polygon, box

from hbb2obb.errors import InputError, LabelFormatError
from hbb2obb.io.format_detection import sniff_format
from hbb2obb.io.hrsc import read
from hbb2obb.io.label_sets import read_set

OBJECT = """    <HRSC_Object>
      <Object_ID>1</Object_ID><Class_ID>{cls}</Class_ID><difficult>{difficult}</difficult>
      <mbox_cx>{cx}</mbox_cx><mbox_cy>{cy}</mbox_cy><mbox_w>{w}</mbox_w><mbox_h>{h}</mbox_h><mbox_ang>{angle}</mbox_ang>
    </HRSC_Object>
"""


def _file(objects: str, stem: str = "100000001") -> str:
    return (f"<HRSC_Image>\n  <Img_ID>{stem}</Img_ID>\n  <Img_FileName>{stem}</Img_FileName><Img_FileFmt>bmp"
            "</Img_FileFmt>\n  <Img_SizeWidth>1166</Img_SizeWidth><Img_SizeHeight>753</Img_SizeHeight>\n"
            f"  <HRSC_Objects>\n{objects}  </HRSC_Objects>\n</HRSC_Image>\n")


@pytest.mark.parametrize("angle", [-1.4, -0.3, 0.0, 0.7, math.pi / 2])
def test_corners_follow_the_datasets_rule(tmp_path, angle):
    """mmrotate's HRSC loader: centre -+ w/2 (cos, sin) -+ h/2 (-sin, cos); shapely's turn as the oracle."""
    path = tmp_path / "100000001.xml"
    path.write_text(_file(OBJECT.format(cls="100000013", difficult=0, cx=500, cy=300, w=200, h=40, angle=angle)))
    quad = read(path, strict=True).boxes.corners[0]
    expected = affinity.rotate(box(400, 280, 600, 320), angle, origin=(500, 300), use_radians=True)
    assert Polygon(quad).symmetric_difference(expected).area == pytest.approx(0.0, abs=1e-6)
    c, s = math.cos(angle), math.sin(angle)
    first = np.array([500, 300]) - 100 * np.array([c, s]) - 20 * np.array([-s, c])
    assert quad[0] == pytest.approx(first)


def test_a_positive_angle_turns_the_ship_clockwise_on_screen(tmp_path):
    """A long ship at +30 degrees: its right (bow) end is lower on screen (larger y) than its left end."""
    path = tmp_path / "a.xml"
    path.write_text(_file(OBJECT.format(cls="1", difficult=0, cx=100, cy=100, w=80, h=10, angle=math.pi / 6), "a"))
    quad = read(path, strict=True).boxes.corners[0]
    right, left = quad[quad[:, 0].argsort()[-2:]].mean(axis=0), quad[quad[:, 0].argsort()[:2]].mean(axis=0)
    assert right[1] - left[1] == pytest.approx(80 * math.sin(math.pi / 6), abs=1e-9)


def test_a_file_is_read_with_its_classes_flags_size_and_image(tmp_path):
    objects = (OBJECT.format(cls="100000013", difficult=0, cx=50, cy=30, w=20, h=8, angle=0.5)
               + OBJECT.format(cls="100000005", difficult=1, cx=120, cy=60, w=40, h=12, angle=-1.0))
    path = tmp_path / "100000001.xml"
    path.write_text(_file(objects))
    assert sniff_format(path) == "hrsc"
    labels = read_set(tmp_path)
    frame = labels.frames[0]
    assert labels.format == "hrsc" and labels.names == {0: "100000013", 1: "100000005"}
    assert frame.size == (1166, 753) and frame.image_name == "100000001.bmp"
    assert frame.boxes.difficult.tolist() == [False, True] and frame.boxes.line.tolist() == [6, 10]
    mapped = read(path, strict=True, label_map={0: "100000005", 1: "100000013"})
    assert mapped.boxes.class_id.tolist() == [1, 0]


@pytest.mark.parametrize("fields, reason", [
    ("<mbox_cx>nan</mbox_cx><mbox_cy>1</mbox_cy><mbox_w>2</mbox_w><mbox_h>2</mbox_h><mbox_ang>0</mbox_ang>",
     "mbox_cx is not a finite number"),
    ("<mbox_cx>1</mbox_cx><mbox_cy>1</mbox_cy><mbox_w>2</mbox_w><mbox_h>2</mbox_h>", "mbox_ang is missing"),
    ("<mbox_cx>1e13</mbox_cx><mbox_cy>1</mbox_cy><mbox_w>2</mbox_w><mbox_h>2</mbox_h><mbox_ang>0</mbox_ang>",
     "mbox_cx is out of range"),
    ("<mbox_cx>1</mbox_cx><mbox_cy>1</mbox_cy><mbox_w>-2</mbox_w><mbox_h>2</mbox_h><mbox_ang>0</mbox_ang>",
     "negative size"),
    ("<Class_ID>1</Class_ID><difficult>2</difficult><mbox_cx>1</mbox_cx><mbox_cy>1</mbox_cy><mbox_w>2</mbox_w>"
     "<mbox_h>2</mbox_h><mbox_ang>0</mbox_ang>", "difficult must be 0 or 1"),
])
def test_a_broken_object_is_an_error_in_ground_truth_and_a_counted_skip_in_predictions(tmp_path, fields, reason):
    good = OBJECT.format(cls="1", difficult=0, cx=50, cy=30, w=20, h=8, angle=0.5)
    cls = "" if "<Class_ID>" in fields else "<Class_ID>1</Class_ID>"
    path = tmp_path / "a.xml"
    path.write_text(_file(good + f"    <HRSC_Object>{cls}{fields}</HRSC_Object>\n", "a"))
    with pytest.raises(LabelFormatError, match=rf"a.xml:10: .*{reason}"):
        read(path, strict=True)
    frame = read(path, strict=False)
    assert len(frame.boxes) == 1 and len(frame.problems) == 1


def test_hostile_files(tmp_path):
    path = tmp_path / "a.xml"
    path.write_text('<?xml version="1.0"?>\n<!DOCTYPE a [<!ENTITY x "xxxxxxxxxx">]>\n' + _file("", "a"))
    with pytest.raises(InputError, match="entities"):
        read(path, strict=True)
    path.write_text("<HRSC_Image><HRSC_Objects><HRSC_Object>")
    with pytest.raises(InputError, match=r"a.xml:1: not valid XML"):
        read(path, strict=True)
    path.write_text(_file(OBJECT.format(cls="7", difficult=0, cx=5, cy=5, w=2, h=1, angle=0), "a"))
    with pytest.raises(LabelFormatError, match="not in the label map"):
        read(path, strict=True, label_map={0: "ship"})


def test_scores_as_the_yolo_original(tmp_path):
    """Files written by the published rule from exact rectangles read back to the same corners and scores."""
    gt = write_yolo_rectangles(tmp_path)
    original = read_set(gt, "yolo", label_map=NAMES)
    (tmp_path / "hrsc").mkdir()
    for frame in original.frames:
        objects = ""
        for quad, cls in zip(frame.boxes.corners, frame.boxes.class_id):
            side, other = quad[1] - quad[0], quad[3] - quad[0]
            cx, cy = (float(v) for v in quad.mean(axis=0))
            objects += OBJECT.format(cls=NAMES[int(cls)], difficult=0, cx=repr(cx), cy=repr(cy),
                                     w=repr(float(math.hypot(*side))), h=repr(float(math.hypot(*other))),
                                     angle=repr(float(math.atan2(side[1], side[0]))))
        (tmp_path / "hrsc" / f"{frame.stem}.xml").write_text(_file(objects, frame.stem))
    back = read_set(tmp_path / "hrsc", label_map=NAMES)
    assert back.format == "hrsc"
    for a, b in zip(original.frames, back.frames, strict=True):
        assert a.boxes.class_id.tolist() == b.boxes.class_id.tolist()
        assert np.abs(a.boxes.corners - b.boxes.corners).max() <= 1e-9
    ours, theirs = (scores(g, gt, tmp_path / "classes.yaml", f) for g, f in ((tmp_path / "hrsc", "hrsc"), (gt, "yolo")))
    assert ours["total_matches"] == theirs["total_matches"] == 15
    for key in ("avg_iou", "median_iou", "avg_angle_error"):
        assert ours[key] == pytest.approx(theirs[key], abs=1e-9), key
