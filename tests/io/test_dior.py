"""DIOR-R XML reader (issue 37), and how every XML format is told apart."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
from exact_rectangles import NAMES, scores, write_yolo_rectangles

from hbb2obb.errors import InputError, LabelFormatError
from hbb2obb.io.dior import CORNERS, read
from hbb2obb.io.format_detection import sniff_format
from hbb2obb.io.format_names import REGISTERED
from hbb2obb.io.label_sets import read_set
from hbb2obb.io.text_file import file_head

OBJECT = """  <object>
    <type>robndbox</type>
    <name>{name}</name>
    <difficult>{difficult}</difficult>
    <robndbox>{corners}</robndbox>
    <angle>0</angle>
  </object>
"""


def _corners(quad) -> str:
    return "".join(f"<{key}>{value}</{key}>" for key, value in zip(CORNERS, np.reshape(quad, -1).tolist()))


def _file(objects: str, filename: str = "00001.jpg") -> str:
    return (f"<annotation>\n  <filename>{filename}</filename>\n  <source><database>DIOR</database></source>\n"
            f"  <size><width>800</width><height>800</height><depth>3</depth></size>\n{objects}</annotation>\n")


def test_a_file_is_read_corner_for_corner_in_the_listed_order(tmp_path):
    turned = [[120, 100], [160, 130], [148, 146], [108, 116]]  # left-top, right-top, right-bottom, left-bottom
    objects = (OBJECT.format(name="ship", difficult=0, corners=_corners(turned))
               + OBJECT.format(name="golffield", difficult=1, corners=_corners([[133, 237], [684, 237], [684, 672],
                                                                                 [133, 672]]))
               + "  <object><name>ship</name><bndbox><xmin>1</xmin><ymin>2</ymin><xmax>11</xmax><ymax>7</ymax>"
                 "</bndbox></object>\n")
    path = tmp_path / "00001.xml"
    path.write_text(_file(objects))
    assert sniff_format(path) == "dior"
    labels = read_set(tmp_path)
    frame = labels.frames[0]
    assert labels.format == "dior" and labels.names == {0: "ship", 1: "golffield"}
    assert frame.boxes.corners.tolist() == [turned, [[133, 237], [684, 237], [684, 672], [133, 672]],
                                            [[1, 2], [11, 2], [11, 7], [1, 7]]]
    assert frame.boxes.difficult.tolist() == [False, True, False] and frame.boxes.line.tolist() == [5, 12, 19]
    assert frame.size == (800, 800) and frame.image_name == "00001.jpg"


@pytest.mark.parametrize("inner, reason", [
    ("<robndbox><x_left_top>1</x_left_top></robndbox>", "y_left_top is missing"),
    ("<robndbox>" + _corners([[1, 1], [2, 1], [2, 2], ["inf", 2]]) + "</robndbox>", "x_left_bottom is not a finite"),
    ("<robndbox>" + _corners([[1, 1], [2e13, 1], [2, 2], [1, 2]]) + "</robndbox>", "x_right_top is out of range"),
    ("<bndbox><xmin>5</xmin><ymin>1</ymin><xmax>2</xmax><ymax>3</ymax></bndbox>", "xmax < xmin"),
    ("<pose>x</pose>", "without <robndbox> or <bndbox>"),
])
def test_a_broken_object_is_an_error_in_ground_truth_and_a_counted_skip_in_predictions(tmp_path, inner, reason):
    good = OBJECT.format(name="ship", difficult=0, corners=_corners([[1, 1], [5, 1], [5, 3], [1, 3]]))
    path = tmp_path / "a.xml"
    path.write_text(_file(good + f"  <object><name>ship</name>{inner}</object>\n"))
    with pytest.raises(LabelFormatError, match=rf"a.xml:12: .*{reason}"):
        read(path, strict=True)
    frame = read(path, strict=False)
    assert len(frame.boxes) == 1 and len(frame.problems) == 1


def test_entities_are_refused(tmp_path):
    path = tmp_path / "a.xml"
    path.write_text('<?xml version="1.0"?>\n<!DOCTYPE a [<!ENTITY x "xxxxxxxxxx">]>\n'
                    + _file(OBJECT.format(name="&x;", difficult=0, corners=_corners(np.zeros((4, 2))))))
    with pytest.raises(InputError, match="entities"):
        read(path, strict=True)


def test_scores_as_the_yolo_original(tmp_path):
    gt = write_yolo_rectangles(tmp_path)
    original = read_set(gt, "yolo", label_map=NAMES)
    (tmp_path / "dior").mkdir()
    for frame in original.frames:
        objects = "".join(OBJECT.format(name=NAMES[int(c)], difficult=0, corners=_corners(q))
                          for q, c in zip(frame.boxes.corners, frame.boxes.class_id))
        (tmp_path / "dior" / f"{frame.stem}.xml").write_text(_file(objects, f"{frame.stem}.jpg"))
    back = read_set(tmp_path / "dior", label_map=NAMES)
    assert back.format == "dior"
    for a, b in zip(original.frames, back.frames, strict=True):
        assert a.boxes.class_id.tolist() == b.boxes.class_id.tolist()
        assert np.array_equal(a.boxes.corners, b.boxes.corners)
    ours, theirs = (scores(g, gt, tmp_path / "classes.yaml", f) for g, f in ((tmp_path / "dior", "dior"), (gt, "yolo")))
    assert ours["total_matches"] == theirs["total_matches"] == 15
    for key in ("avg_iou", "median_iou", "avg_angle_error"):
        assert ours[key] == pytest.approx(theirs[key], abs=1e-12), key


SAMPLES = {
    "voc": "<annotation><filename>a.jpg</filename><object><name>car</name><bndbox><xmin>1</xmin><ymin>2</ymin>"
           "<xmax>11</xmax><ymax>7</ymax></bndbox></object></annotation>",
    "rolabelimg": "<annotation><object><type>robndbox</type><name>car</name><robndbox><cx>5</cx><cy>5</cy><w>2</w>"
                  "<h>1</h><angle>0.1</angle></robndbox></object></annotation>",
    "cvat": '<?xml version="1.0"?>\n<!-- exported --><annotations><version>1.1</version><image id="0" name="a.jpg">'
            "</image></annotations>",
    "hrsc": "<HRSC_Image><Img_ID>1</Img_ID><HRSC_Objects></HRSC_Objects></HRSC_Image>",
    "dior": "<annotation><object><type>robndbox</type><name>ship</name><robndbox>" + _corners(np.zeros((4, 2)))
            + "</robndbox></object></annotation>",
    "fair1m": "<annotation><source><filename>0.tif</filename></source><objects><object><coordinate>pixel</coordinate>"
              "<possibleresult><name>Boeing737</name></possibleresult><points><point>1,1</point></points></object>"
              "</objects></annotation>",
}


@pytest.mark.parametrize("fmt", sorted(SAMPLES))
def test_each_xml_format_is_told_apart(tmp_path, fmt):
    """Every registered ``.xml`` module's sniff knows its own files and no other; VOC is what none claims."""
    path = tmp_path / "a.xml"
    path.write_text(SAMPLES[fmt])
    claims = {name for name, spec in REGISTERED.items()
              if spec.suffix == ".xml" and importlib.import_module(spec.module).sniff(file_head(path))}
    assert claims == ({fmt} if fmt != "voc" else set())
    assert sniff_format(path) == fmt
