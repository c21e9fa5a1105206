"""roLabelImg XML, the first format reached through the format registry (issue 37)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from click.testing import CliRunner
from exact_rectangles import scores, write_yolo_rectangles
from shapely import affinity
from shapely.geometry import Polygon, box

from hbb2obb.cli.formats import main as convert_main
from hbb2obb.errors import InputError, LabelFormatError
from hbb2obb.io.format_detection import sniff_format
from hbb2obb.io.label_sets import read_set
from hbb2obb.io.rolabelimg import box_parameters, read, rotated_corners

OBJECT = """  <object>
    <type>robndbox</type>
    <name>{name}</name>
    <difficult>{difficult}</difficult>
    <robndbox><cx>{cx}</cx><cy>{cy}</cy><w>{w}</w><h>{h}</h><angle>{angle}</angle></robndbox>
  </object>
"""


def _file(objects: str, width=200, height=100, filename="a") -> str:
    return (f'<annotation verified="no">\n  <folder>images</folder>\n  <filename>{filename}</filename>\n'
            f"  <size><width>{width}</width><height>{height}</height><depth>3</depth></size>\n{objects}</annotation>\n")


@pytest.mark.parametrize("angle", [0.0, 0.3, 1.2, math.pi / 2, 2.5, 3.1])
def test_corners_are_the_box_turned_clockwise_on_screen(angle):
    """The oracle: shapely's rotation by the angle (counter-clockwise with y up is clockwise on screen, y down)."""
    cx, cy, w, h = 60.0, 40.0, 30.0, 10.0
    quad = np.array(rotated_corners(cx, cy, w, h, angle))
    expected = affinity.rotate(box(cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2), angle, origin=(cx, cy),
                               use_radians=True)
    assert Polygon(quad).symmetric_difference(expected).area == pytest.approx(0.0, abs=1e-9)
    # roLabelImg's own rule: the (-w/2, -h/2) corner turned by the angle about the centre
    c, s = math.cos(angle), math.sin(angle)
    first = (cx - w / 2 * c + h / 2 * s, cy - w / 2 * s - h / 2 * c)
    assert quad[0] == pytest.approx(first)
    # clockwise on screen (y down): the shoelace sum is positive
    x, y = quad[:, 0], quad[:, 1]
    assert np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1)) > 0
    params = box_parameters(quad)
    assert params[:4] == pytest.approx((cx, cy, w, h)) and params[4] == pytest.approx(angle % math.pi)


def test_a_file_is_read_with_its_flags_size_and_image(tmp_path):
    objects = OBJECT.format(name="car", difficult=0, cx=50, cy=30, w=20, h=8, angle=0.5)
    objects += OBJECT.format(name="bus", difficult=1, cx=120, cy=60, w=40, h=12, angle=2.0)
    objects += "  <object><type>bndbox</type><name>car</name><bndbox><xmin>1</xmin><ymin>2</ymin>" \
               "<xmax>11</xmax><ymax>7</ymax></bndbox></object>\n"
    path = tmp_path / "a.xml"
    path.write_text(_file(objects))
    assert sniff_format(path) == "rolabelimg"
    discovered: dict = {}
    frame = read(path, strict=True, discovered=discovered)
    assert discovered == {0: "car", 1: "bus"}
    assert frame.boxes.class_id.tolist() == [0, 1, 0] and frame.boxes.difficult.tolist() == [False, True, False]
    assert frame.size == (200, 100)
    assert frame.boxes.corners[2].tolist() == [[1, 2], [11, 2], [11, 7], [1, 7]]
    assert frame.boxes.line.tolist() == [5, 11, 17]


@pytest.mark.parametrize("bad, reason", [
    ("<cx>nan</cx><cy>1</cy><w>2</w><h>2</h><angle>0</angle>", "finite numbers"),
    ("<cx>1</cx><cy>1</cy><w>2</w><h>2</h>", "finite numbers"),
    ("<cx>1e400</cx><cy>1</cy><w>2</w><h>2</h><angle>0</angle>", "finite numbers"),
    ("<cx>1e13</cx><cy>1</cy><w>2</w><h>2</h><angle>0</angle>", "value 1"),
    ("<cx>1</cx><cy>1</cy><w>-2</w><h>2</h><angle>0</angle>", "negative size"),
])
def test_a_broken_box_is_an_error_in_ground_truth_and_a_counted_skip_in_predictions(tmp_path, bad, reason):
    good = OBJECT.format(name="car", difficult=0, cx=50, cy=30, w=20, h=8, angle=0.5)
    path = tmp_path / "a.xml"
    path.write_text(_file(good + f"  <object><name>car</name><robndbox>{bad}</robndbox></object>\n"))
    with pytest.raises(LabelFormatError, match=rf"a.xml:11: .*{reason}"):
        read(path, strict=True, label_map={0: "car"})
    frame = read(path, strict=False, label_map={0: "car"})
    assert len(frame.boxes) == 1 and len(frame.problems) == 1


def test_entities_are_refused(tmp_path):
    path = tmp_path / "a.xml"
    path.write_text('<?xml version="1.0"?>\n<!DOCTYPE a [<!ENTITY x "xxxxxxxxxx">]>\n'
                    + _file(OBJECT.format(name="&x;", difficult=0, cx=1, cy=1, w=1, h=1, angle=0)))
    with pytest.raises(InputError, match="entities"):
        read(path, strict=True)


def test_a_plain_voc_file_stays_voc(tmp_path):
    path = tmp_path / "a.xml"
    path.write_text(_file("  <object><name>car</name><bndbox><xmin>1</xmin><ymin>2</ymin><xmax>11</xmax>"
                          "<ymax>7</ymax></bndbox></object>\n"))
    assert sniff_format(path) == "voc"


def test_round_trip_and_scores_as_the_yolo_original(tmp_path):
    write_yolo_rectangles(tmp_path)
    args = ["-mp", str(tmp_path / "classes.yaml"), "-iw", "200", "-ih", "200", "-nb"]
    result = CliRunner().invoke(convert_main, [str(tmp_path / "gt"), "--to", "rolabelimg", "-o", str(tmp_path / "ro"),
                                               *args])
    assert result.exit_code == 0, result.output
    original = read_set(tmp_path / "gt", "yolo", label_map={0: "car", 1: "bus"})
    back = read_set(tmp_path / "ro", label_map={0: "car", 1: "bus"})
    assert back.format == "rolabelimg"
    for a, b in zip(original.frames, back.frames):
        assert a.stem == b.stem and a.boxes.class_id.tolist() == b.boxes.class_id.tolist()
        # the same corners, within the six decimals written
        assert np.abs(a.boxes.corners - b.boxes.corners).max() <= 2e-6
    verify = CliRunner().invoke(convert_main, [str(tmp_path / "ro"), "--verify", "-mp", str(tmp_path / "classes.yaml"),
                                               "-nb"])
    assert verify.exit_code == 2, verify.output  # one format alone: nothing to compare
    both = CliRunner().invoke(convert_main, [str(tmp_path / "ro"), "--to", "yolo", *args])
    assert both.exit_code == 0, both.output
    verify = CliRunner().invoke(convert_main, [str(tmp_path / "ro"), "--verify", "-mp", str(tmp_path / "classes.yaml"),
                                               "-nb"])
    assert verify.exit_code == 0 and "rolabelimg" in verify.output, verify.output

    classes = tmp_path / "classes.yaml"
    ours = scores(tmp_path / "ro", tmp_path / "gt", classes, "rolabelimg")
    theirs = scores(tmp_path / "gt", tmp_path / "gt", classes, "yolo")
    assert ours["total_matches"] == theirs["total_matches"] == 15
    for key in ("avg_iou", "median_iou", "avg_angle_error"):
        assert ours[key] == pytest.approx(theirs[key], abs=1e-6), key
