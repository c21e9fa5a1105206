"""The identity converter: HBB prompts as axis-aligned OBBs, scaled side by side, clipped to the frame."""

from __future__ import annotations

import math

import numpy as np
import pytest
from PIL import Image

from hbb2obb.converters import available_converters, get_converter
from hbb2obb.converters.identity import IdentityConverter, scale_factor_pair, scale_hbbs
from hbb2obb.errors import UsageError
from hbb2obb.io import read_yolo_obb


def expected_box(xc, yc, w, h, short, long, frame=None):
    """The scaling rule written out for one box, the way the reference tool states it."""
    if w < h:
        fw, fh = short, long
    else:
        fw, fh = long, short
    x1, x2 = xc - w / 2 - w * fw, xc + w / 2 + w * fw
    y1, y2 = yc - h / 2 - h * fh, yc + h / 2 + h * fh
    if frame is not None:
        x1, x2 = min(max(x1, 0), frame[0]), min(max(x2, 0), frame[0])
        y1, y2 = min(max(y1, 0), frame[1]), min(max(y2, 0), frame[1])
    return [x1, y1, x2, y2]


@pytest.mark.parametrize(
    "value, expected",
    [
        (0.05, (0.05, 0.05)),
        (0, (0.0, 0.0)),
        (-0.49, (-0.49, -0.49)),
        ([0.0, 0.1], (0.0, 0.1)),
        ((0.1, -0.2), (0.1, -0.2)),
    ],
)
def test_scale_factor_pair_accepts_one_number_or_short_long(value, expected):
    assert scale_factor_pair(value) == expected


@pytest.mark.parametrize("value", ["0.1", [0.1], [0.1, 0.2, 0.3], -0.5, -1.0, math.nan, math.inf, True, [0.1, None]])
def test_scale_factor_pair_rejects_what_is_not_a_factor(value):
    with pytest.raises(UsageError, match="scale_factor"):
        scale_factor_pair(value)


BOXES = [  # xc, yc, w, h: wide, tall, square, degenerate
    (50.0, 40.0, 30.0, 10.0),
    (20.0, 60.0, 8.0, 24.0),
    (70.0, 70.0, 12.0, 12.0),
    (5.0, 5.0, 0.0, 0.0),
]


@pytest.mark.parametrize("short, long", [(0.0, 0.0), (0.05, 0.05), (0.1, -0.05), (-0.2, 0.3)])
@pytest.mark.parametrize("frame", [None, (64.0, 80.0)])
def test_scale_hbbs_moves_each_side_by_its_own_length(short, long, frame):
    xyxy = np.array([[xc - w / 2, yc - h / 2, xc + w / 2, yc + h / 2] for xc, yc, w, h in BOXES])
    got = scale_hbbs(xyxy, short, long, frame)
    want = np.array([expected_box(*box, short, long, frame) for box in BOXES])
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)


def test_scale_hbbs_of_no_boxes():
    assert scale_hbbs(np.zeros((0, 4)), 0.1, 0.1, (10, 10)).shape == (0, 4)


def test_square_box_width_takes_the_long_factor():
    got = scale_hbbs(np.array([[0.0, 0.0, 10.0, 10.0]]), 0.0, 0.5)
    assert got.tolist() == [[-5.0, 0.0, 15.0, 10.0]]


def test_registered_and_parameters():
    assert "identity" in available_converters()
    converter = get_converter("identity")
    assert converter.parameters == {"scale_factor": 0.0} and not converter.needs_images
    with pytest.raises(UsageError, match="no parameter 'imgsz'"):
        converter.check_parameters({"imgsz": 640})
    with pytest.raises(UsageError, match="greater than -0.5"):
        converter.check_parameters({"scale_factor": -0.6})
    with pytest.raises(UsageError, match="together"):
        IdentityConverter(img_width=100)


def _corners(path):
    boxes = read_yolo_obb(path, strict=True).boxes
    return boxes.class_id.tolist(), boxes.corners


def test_convert_writes_one_file_per_prompt_file(write_labels):
    root = write_labels({
        "hbb/a.txt": "0 50 40 30 10\n2 20 60 8 24\n",
        "hbb/empty.txt": "",
        "hbb/broken.txt": "1 10 10 4\n1 30 30 6 2\n",
        "hbb/notes.md": "not a label file",
    })
    report = get_converter("identity").convert(root / "hbb", root / "obb", {"scale_factor": [0.1, 0.2]})
    assert sorted(p.name for p in (root / "obb").iterdir()) == ["a.txt", "broken.txt", "empty.txt"]
    assert (report.files, report.boxes, report.ok, report.details["skipped_hbb_lines"]) == (3, 3, True, 1)
    classes, corners = _corners(root / "obb" / "a.txt")
    assert classes == [0, 2]
    for got, box in zip(corners, BOXES[:2]):
        x1, y1, x2, y2 = expected_box(*box, 0.1, 0.2)
        np.testing.assert_allclose(got, [[x1, y1], [x2, y1], [x2, y2], [x1, y2]], atol=1e-12)
    assert (root / "obb" / "empty.txt").read_text() == ""
    assert _corners(root / "obb" / "broken.txt")[0] == [1]


def test_convert_clips_to_frame_size_given_or_read_from_images(write_labels):
    root = write_labels({"hbb/f.txt": "0 4 50 20 10\n", "hbb/g.txt": "0 4 50 20 10\n"})
    (root / "images").mkdir()
    Image.new("RGB", (100, 60)).save(root / "images" / "f.png")  # g has no image: its size is unknown
    get_converter("identity").convert(root / "hbb", root / "a", {"scale_factor": 0.0}, img_source=root / "images")
    assert _corners(root / "a" / "f.txt")[1][0, :, 0].min() == 0.0
    assert _corners(root / "a" / "g.txt")[1][0, :, 0].min() == -6.0
    get_converter("identity", img_width=10, img_height=55).convert(root / "hbb", root / "b", {"scale_factor": 0.0})
    np.testing.assert_allclose(_corners(root / "b" / "g.txt")[1][0], [[0, 45], [10, 45], [10, 55], [0, 55]])


def test_normalized_prompts_are_scaled_when_the_size_is_known(write_labels):
    root = write_labels({"hbb/f.txt": "0 0.5 0.5 0.2 0.1\n"})
    get_converter("identity", img_width=200, img_height=100).convert(root / "hbb", root / "px", {"scale_factor": 0.0})
    np.testing.assert_allclose(_corners(root / "px" / "f.txt")[1][0], [[80, 45], [120, 45], [120, 55], [80, 55]])
    get_converter("identity").convert(root / "hbb", root / "norm", {"scale_factor": 0.0})
    np.testing.assert_allclose(_corners(root / "norm" / "f.txt")[1][0],
                               [[0.4, 0.45], [0.6, 0.45], [0.6, 0.55], [0.4, 0.55]])


def test_missing_hbb_folder_is_an_input_error(tmp_path):
    from hbb2obb.errors import InputError

    with pytest.raises(InputError, match="HBB folder not found"):
        get_converter("identity").convert(tmp_path / "nope", tmp_path / "out", {})
