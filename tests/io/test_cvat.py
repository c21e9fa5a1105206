"""CVAT for images / for video 1.1 XML: reader, writer, detection (issue 37)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from click.testing import CliRunner
from exact_rectangles import NAMES, scores, write_yolo_rectangles
from shapely import affinity
from shapely.geometry import Polygon, box

from hbb2obb.cli.formats import main as convert_main
from hbb2obb.errors import InputError, LabelFormatError
from hbb2obb.io.cvat import box_corners, fit_rectangle, read, write
from hbb2obb.io.format_detection import sniff_format
from hbb2obb.io.frame_labels import FrameLabels, make_boxes
from hbb2obb.io.label_sets import read_set

META = ("  <version>1.1</version>\n  <meta><task><size>{size}</size><mode>{mode}</mode>{extra}<labels>"
        "<label><name>bus</name></label><label><name>car</name></label></labels>"
        "<original_size><width>320</width><height>240</height></original_size></task></meta>\n")


def _file(body: str, size=2, mode="annotation", extra="") -> str:
    return ('<?xml version="1.0" encoding="utf-8"?>\n<annotations>\n' + META.format(size=size, mode=mode, extra=extra)
            + body + "</annotations>\n")


@pytest.mark.parametrize("rotation", [0.0, 15.0, 90.0, 137.5, 200.0, 359.0])
def test_box_corners_are_the_box_turned_clockwise_on_screen(rotation):
    """CVAT's rule (its own export to polygons): each corner turned about the centre; shapely as oracle."""
    xtl, ytl, xbr, ybr = 40.0, 30.0, 100.0, 50.0
    quad = np.array(box_corners(xtl, ytl, xbr, ybr, rotation))
    # shapely turns counter-clockwise with y up, which is clockwise on screen (y down)
    expected = affinity.rotate(box(xtl, ytl, xbr, ybr), rotation, origin=(70.0, 40.0))
    assert Polygon(quad).symmetric_difference(expected).area == pytest.approx(0.0, abs=1e-9)
    c, s = math.cos(math.radians(rotation)), math.sin(math.radians(rotation))
    assert quad[0] == pytest.approx((70 - 30 * c + 10 * s, 40 - 30 * s - 10 * c))  # (xtl, ytl) turned
    x, y = quad[:, 0], quad[:, 1]
    assert np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1)) > 0  # clockwise on screen
    (cx, cy, w, h, angle), distance = fit_rectangle(quad)
    assert (cx, cy, w, h) == pytest.approx((70, 40, 60, 20)) and distance < 1e-9
    assert math.degrees(angle) % 360 == pytest.approx(rotation % 360)


def test_a_quarter_turn_on_screen():
    """A wide box turned 90 degrees clockwise on screen stands upright, its top-left corner now at the top right."""
    quad = np.array(box_corners(0, 0, 20, 10, 90))
    assert np.round(quad, 9).tolist() == [[15, -5], [15, 15], [5, 15], [5, -5]]


def test_an_images_file(tmp_path):
    body = ('  <image id="1" name="train/b.png" width="200" height="100">\n'
            '    <box label="car" xtl="40" ytl="26" xbr="60" ybr="34" rotation="30" occluded="1" z_order="0">\n'
            '      <attribute name="color">red</attribute>\n    </box>\n'
            '    <polygon label="bus" points="1,2;11,2;11,7;1,7" occluded="0"/>\n'
            '    <tag label="car"/>\n  </image>\n'
            '  <image id="0" name="a.jpg" width="200" height="100"></image>\n')
    path = tmp_path / "annotations.xml"
    path.write_text(_file(body))
    assert sniff_format(path) == "cvat"
    labels = read_set(tmp_path)
    assert labels.format == "cvat" and labels.names == {0: "bus", 1: "car"}  # the meta's order
    assert [f.stem for f in labels.frames] == ["a", "b"] and len(labels.frames[0].boxes) == 0
    frame = labels.frames[1]
    assert frame.size == (200, 100) and frame.image_name == "b.png"
    assert frame.boxes.class_id.tolist() == [1, 0] and frame.boxes.line.tolist() == [6, 9]
    assert frame.boxes.corners[0] == pytest.approx(np.array(box_corners(40, 26, 60, 34, 30)))
    assert frame.boxes.corners[1].tolist() == [[1, 2], [11, 2], [11, 7], [1, 7]]
    mapped = read_set(path, "cvat", label_map={0: "car", 1: "bus"})
    assert mapped.frames[1].boxes.class_id.tolist() == [0, 1]


def test_video_tracks(tmp_path):
    """Frames named frame_NNNNNN, every frame of the task kept, outside shapes no box, interpolated ones boxes."""
    body = ('  <track id="0" label="car" source="manual">\n'
            '    <box frame="2" keyframe="1" outside="0" occluded="0" xtl="10" ytl="10" xbr="30" ybr="20" '
            'rotation="45"/>\n'
            '    <box frame="4" keyframe="0" outside="0" occluded="0" xtl="12" ytl="10" xbr="32" ybr="20"/>\n'
            '    <box frame="6" keyframe="1" outside="1" occluded="0" xtl="14" ytl="10" xbr="34" ybr="20"/>\n'
            '  </track>\n  <track id="1" label="bus">\n'
            '    <polygon frame="4" keyframe="1" outside="0" points="50,50;60,50;60,55;50,55"/>\n  </track>\n')
    path = tmp_path / "video.xml"
    path.write_text(_file(body, size=4, mode="interpolation",
                          extra="<start_frame>2</start_frame><stop_frame>8</stop_frame><frame_filter>step=2"
                                "</frame_filter>"))
    frames, names, problems = read(path, strict=True)
    assert [f.stem for f in frames] == ["frame_000002", "frame_000004", "frame_000006", "frame_000008"]
    assert [len(f.boxes) for f in frames] == [1, 2, 0, 0] and not problems
    assert all(f.size == (320, 240) for f in frames) and names == {0: "bus", 1: "car"}
    assert frames[0].boxes.corners[0] == pytest.approx(np.array(box_corners(10, 10, 30, 20, 45)))
    assert frames[1].boxes.class_id.tolist() == [1, 0]


def test_track_frames_take_the_names_of_the_files_images(tmp_path):
    body = ('  <image id="0" name="x/first.jpg" width="64" height="48"/>\n  <image id="1" name="second.jpg" width="64" '
            'height="48"/>\n  <track id="0" label="car"><box frame="1" outside="0" xtl="1" ytl="1" xbr="5" ybr="5"/>'
            '<box frame="3" outside="0" xtl="1" ytl="1" xbr="5" ybr="5"/></track>\n')
    path = tmp_path / "a.xml"
    path.write_text(_file(body))
    frames, _, _ = read(path, strict=True)
    assert [(f.stem, len(f.boxes), f.size) for f in frames] == [("first", 0, (64, 48)), ("second", 1, (64, 48)),
                                                                 ("frame_000003", 1, (320, 240))]


@pytest.mark.parametrize("shape, reason", [
    ('<box label="car" xtl="nan" ytl="1" xbr="5" ybr="5"/>', "xtl is not a finite number"),
    ('<box label="car" ytl="1" xbr="5" ybr="5"/>', "xtl is missing"),
    ('<box label="car" xtl="1e400" ytl="1" xbr="5" ybr="5"/>', "xtl is not a finite number"),
    ('<box label="car" xtl="1" ytl="1" xbr="1e13" ybr="5"/>', "xbr is out of range"),
    ('<box label="car" xtl="6" ytl="1" xbr="5" ybr="5"/>', "xbr < xtl"),
    ('<box label="car" xtl="1" ytl="1" xbr="5" ybr="5" rotation="x"/>', "rotation is not a finite number"),
    ('<box label="truck" xtl="1" ytl="1" xbr="5" ybr="5"/>', "not in the label map"),
    ('<box xtl="1" ytl="1" xbr="5" ybr="5"/>', "no class name"),
    ('<polygon label="car" points="1,1;5,1;5,5"/>', "3 points"),
    ('<polygon label="car" points="1,1;5,1;5;1,5"/>', "x,y pairs"),
    ('<polygon label="car" points="1,1;5,1;5,5;1,inf"/>', "point 4 y is not a finite number"),
    ('<mask label="car" rle="1, 2" left="0" top="0" width="1" height="3"/>', "<mask> is not an oriented box"),
    ('<polyline label="car" points="1,1;5,5"/>', "<polyline> is not an oriented box"),
])
def test_a_broken_shape_is_an_error_in_ground_truth_and_a_counted_skip_in_predictions(tmp_path, shape, reason):
    body = ('  <image id="0" name="a.jpg" width="64" height="48">\n'
            f'    <box label="car" xtl="1" ytl="1" xbr="5" ybr="5"/>\n    {shape}\n  </image>\n')
    path = tmp_path / "a.xml"
    path.write_text(_file(body))
    with pytest.raises(LabelFormatError, match=rf"a.xml:7: .*{reason}"):
        read(path, strict=True, label_map={0: "car", 1: "bus"})
    frames, _, problems = read(path, strict=False, label_map={0: "car", 1: "bus"})
    assert len(frames[0].boxes) == 1 and len(problems) == 1 and problems[0].line == 7


@pytest.mark.parametrize("body, message", [
    ('<image id="0" name="a.jpg"/><image id="0" name="b.jpg"/>', "appears twice"),
    ('<image id="0" name="a.jpg"/><image id="1" name="x/a.png"/>', "appears twice"),
    ('<image id="-1" name="a.jpg"/>', "integer id"),
    ('<image id="0" name=".jpg"/>', "integer id and a name"),
])
def test_a_broken_image_list_is_an_error_either_way(tmp_path, body, message):
    path = tmp_path / "a.xml"
    path.write_text(_file(body))
    for strict in (True, False):
        with pytest.raises(InputError, match=message):
            read(path, strict=strict)


def test_a_track_shape_without_a_frame_and_a_huge_task(tmp_path):
    path = tmp_path / "a.xml"
    path.write_text(_file('<track id="0" label="car"><box frame="x" outside="0" xtl="1" ytl="1" xbr="5" ybr="5"/>'
                          "</track>\n", mode="interpolation"))
    with pytest.raises(LabelFormatError, match="a.xml:5: .*frame number"):
        read(path, strict=True)
    path.write_text(_file("", size=10**12, mode="interpolation"))
    with pytest.raises(InputError, match="no usable frame range"):
        read(path, strict=True)


def test_entities_are_refused_and_other_roots_are_not_cvat(tmp_path):
    path = tmp_path / "a.xml"
    path.write_text('<?xml version="1.0"?>\n<!DOCTYPE a [<!ENTITY x "xxxxxxxxxx">]>\n'
                    + _file('<image id="0" name="a.jpg"><box label="&x;" xtl="1" ytl="1" xbr="2" ybr="2"/></image>'))
    with pytest.raises(InputError, match="entities"):
        read(path, strict=True)
    path.write_text("<annotation><object><name>car</name></object></annotation>\n")
    assert sniff_format(path) == "voc"
    with pytest.raises(InputError, match="not a CVAT XML file"):
        read(path, strict=True)


def test_voc_and_rolabelimg_keep_their_detection(tmp_path):
    voc = tmp_path / "voc.xml"
    voc.write_text("<annotation><!-- <annotations> --><object><name>car</name><bndbox><xmin>1</xmin><ymin>2</ymin>"
                   "<xmax>11</xmax><ymax>7</ymax></bndbox></object></annotation>\n")
    ro = tmp_path / "ro.xml"
    ro.write_text("<annotation><object><name>car</name><robndbox><cx>5</cx><cy>5</cy><w>2</w><h>1</h><angle>0.1"
                  "</angle></robndbox></object></annotation>\n")
    assert (sniff_format(voc), sniff_format(ro)) == ("voc", "rolabelimg")


def _frame(stem, quads, classes, size=(200, 150)):
    return FrameLabels(stem, make_boxes(quads, classes, list(range(1, len(classes) + 1))), size, None)


def test_the_writer_keeps_rectangles_as_turned_boxes_and_other_quads_as_polygons(tmp_path):
    rectangle = box_corners(40, 26, 60, 34, 123.25)
    kite = [[10, 10], [30, 12], [28, 30], [8, 20]]
    path = tmp_path / "out.xml"
    write(path, [_frame("b", [rectangle, kite], [1, 0]), _frame("a", [], [])], NAMES, obb=True,
          image_names={"b": "b.png"})
    text = path.read_text()
    assert text.count("<box ") == 1 and text.count("<polygon ") == 1 and 'rotation="123.25"' in text
    frames, names, _ = read(path, strict=True)
    assert names == NAMES and [f.stem for f in frames] == ["a", "b"] and frames[1].image_name == "b.png"
    assert np.abs(frames[1].boxes.corners - np.array([rectangle, kite])).max() <= 2e-6
    assert frames[1].boxes.class_id.tolist() == [1, 0]
    write(path, [_frame("b", [rectangle], [1])], NAMES, obb=False)
    flat = read(path, strict=True)[0][0].boxes.corners[0]
    expected = np.array(rectangle)
    assert flat.min(axis=0) == pytest.approx(expected.min(axis=0), abs=1e-6) and "rotation" not in path.read_text()
    assert flat.max(axis=0) == pytest.approx(expected.max(axis=0), abs=1e-6)


def test_a_counter_clockwise_rectangle_is_written_as_a_box_from_the_same_first_corner(tmp_path):
    quad = np.array(box_corners(40, 26, 60, 34, 70))[[0, 3, 2, 1]]
    path = tmp_path / "out.xml"
    write(path, [_frame("a", [quad], [0])], NAMES, obb=True)
    assert "<box " in path.read_text()
    back = read(path, strict=True)[0][0].boxes.corners[0]
    assert np.abs(back - quad[[0, 3, 2, 1]]).max() <= 2e-6


def test_round_trip_and_scores_as_the_yolo_original(tmp_path):
    gt = write_yolo_rectangles(tmp_path)
    args = ["-mp", str(tmp_path / "classes.yaml"), "-iw", "200", "-ih", "200", "-nb"]
    result = CliRunner().invoke(convert_main, [str(gt), "--to", "cvat", "-o", str(tmp_path / "cv"), *args])
    assert result.exit_code == 0, result.output
    written = tmp_path / "cv" / "cvat_annotations_obb.xml"
    assert sniff_format(written) == "cvat" and written.read_text().count("<box ") == 15
    original, back = read_set(gt, "yolo", label_map=NAMES), read_set(tmp_path / "cv", label_map=NAMES)
    assert back.format == "cvat"
    for a, b in zip(original.frames, back.frames, strict=True):
        assert a.stem == b.stem and a.boxes.class_id.tolist() == b.boxes.class_id.tolist()
        assert np.abs(a.boxes.corners - b.boxes.corners).max() <= 2e-6
    both = CliRunner().invoke(convert_main, [str(written), "--to", "yolo", "-o", str(tmp_path / "cv"), *args])
    assert both.exit_code == 0, both.output
    verify = CliRunner().invoke(convert_main, [str(tmp_path / "cv"), "--verify", "-mp", str(tmp_path / "classes.yaml"),
                                               "-nb"])
    assert verify.exit_code == 0 and "cvat" in verify.output, verify.output
    ours, theirs = (scores(g, gt, tmp_path / "classes.yaml", f) for g, f in ((written, "cvat"), (gt, "yolo")))
    assert ours["total_matches"] == theirs["total_matches"] == 15
    for key in ("avg_iou", "median_iou", "avg_angle_error"):
        assert ours[key] == pytest.approx(theirs[key], abs=1e-9), key


def test_datumaro_reads_our_files_and_we_read_its_files_corner_for_corner(tmp_path):
    """The oracle: datumaro's CVAT importer and exporter (rotated boxes, polygons, tracks)."""
    dm = pytest.importorskip("datumaro", reason="datumaro pins opencv<5, pillow 12 and pyarrow 25, which the toolkit's "
                                               "environment does not have: install it in a separate environment")
    # datumaro keeps a box as float32 centre, size and rotation rounded to 2 decimals: values it holds exactly
    rectangle = box_corners(40.5, 26, 60, 34.2, 30.5)
    kite = [[10, 10], [30, 12], [28, 30], [8, 20]]
    ours = tmp_path / "ours" / "a.xml"
    ours.parent.mkdir()
    (ours.parent / "images").mkdir()
    (ours.parent / "images" / "f.jpg").write_bytes(b"")
    write(ours, [_frame("f", [rectangle, kite], [0, 1])], NAMES, obb=True)
    item = next(iter(dm.Dataset.import_from(str(ours), "cvat")))
    theirs = [np.reshape(a.as_polygon() if hasattr(a, "as_polygon") else a.points, (-1, 2)) for a in item.annotations]
    assert item.id == "f" and len(theirs) == 2
    assert np.abs(np.array(theirs) - np.array([rectangle, kite])).max() <= 1e-5  # float32

    from datumaro.components.annotation import Polygon as DmPolygon
    from datumaro.components.annotation import RotatedBbox
    from datumaro.components.media import Image

    # its exporter writes two decimals: a box whose corners xtl..ybr and rotation have no more
    source = dm.Dataset.from_iterable(
        [dm.DatasetItem(id="g", media=Image.from_numpy(np.zeros((48, 64, 3), dtype=np.uint8)), annotations=[
            RotatedBbox(30.25, 20.5, 16.5, 6.5, 47.75, label=0),
            DmPolygon([1, 2, 11, 2, 11, 7, 1, 7], label=1)])],
        categories=["car", "bus"])
    source.export(str(tmp_path / "theirs"), "cvat")
    exported = next((tmp_path / "theirs").glob("*.xml"))
    frames, names, _ = read(exported, strict=True)
    assert names == NAMES and [f.stem for f in frames] == ["g"]
    expected = [RotatedBbox(30.25, 20.5, 16.5, 6.5, 47.75).as_polygon(), [[1, 2], [11, 2], [11, 7], [1, 7]]]
    assert np.abs(frames[0].boxes.corners - np.array(expected, dtype=np.float64)).max() <= 1e-5  # float32


def test_datumaro_reads_video_tracks_as_we_do(tmp_path):
    """The oracle for tracks: datumaro names frames frame_NNNNNN too; an outside shape is no box."""
    dm = pytest.importorskip("datumaro", reason="datumaro pins opencv<5, pillow 12 and pyarrow 25, which the toolkit's "
                                               "environment does not have: install it in a separate environment")
    body = ('  <track id="0" label="car">\n    <box frame="2" keyframe="1" outside="0" occluded="0" xtl="10" ytl="10" '
            'xbr="30" ybr="20" rotation="45"/>\n    <box frame="3" keyframe="1" outside="1" occluded="0" xtl="10" '
            'ytl="10" xbr="30" ybr="20"/>\n  </track>\n')
    path = tmp_path / "v.xml"
    path.write_text(_file(body, size=4, mode="interpolation"))
    frames, _, _ = read(path, strict=True)
    ours = {f.stem: f.boxes.corners for f in frames if len(f.boxes)}
    theirs = {}
    for item in dm.Dataset.import_from(str(path), "cvat"):
        kept = [a.as_polygon() for a in item.annotations if not a.attributes.get("outside")]
        if kept:
            theirs[item.id] = np.array(kept, dtype=np.float64)
    assert ours.keys() == theirs.keys() == {"frame_000002"}
    assert np.abs(ours["frame_000002"] - theirs["frame_000002"]).max() <= 1e-5  # datumaro's float32
