"""The shared reader against label files as real pipelines write them (issue 13): line breaks,
bytes that are not UTF-8, numbers Python reads but labels never hold, huge values, label maps,
DOTA headers and the normalized-coordinates rule."""

from __future__ import annotations

import numpy as np
import pytest

from hbb2obb.errors import InputError, LabelFormatError
from hbb2obb.io import load_label_map, read_obb_labels, read_yolo_obb
from hbb2obb.io.text import MAX_COORDINATE, looks_normalized
from hbb2obb.io.yolo_obb import read_obb_batch

from conftest import rect

BOX = rect(10, 10, 40, 20)


@pytest.mark.parametrize(
    "separator", ["\x0c", "\x0b", "\u2028", "\x85", "\x1c"], ids=["ff", "vt", "u2028", "nel", "fs"]
)
def test_only_lf_crlf_and_cr_end_a_line(tmp_path, separator):
    path = tmp_path / "a.txt"
    path.write_text(BOX + separator + "\n0 1 2\n", encoding="utf-8")
    with pytest.raises(LabelFormatError) as info:
        read_yolo_obb(path, strict=True)
    assert info.value.line == 2  # splitlines() put it on line 3
    lenient = read_yolo_obb(path, strict=False)
    assert lenient.boxes.line.tolist() == [1] and [p.line for p in lenient.problems] == [2]


def test_cr_and_crlf_still_end_lines(tmp_path):
    path = tmp_path / "a.txt"
    path.write_bytes(f"{BOX}\r{BOX}\r\n\r\n{BOX} x\n".encode())
    label_file = read_yolo_obb(path, strict=False)
    assert label_file.boxes.line.tolist() == [1, 2] and [p.line for p in label_file.problems] == [4]


def test_bad_bytes_are_a_broken_line_not_a_broken_file(tmp_path):
    path = tmp_path / "a.txt"
    path.write_bytes(f"{BOX}\n".encode() + b"\xff\xfe 1 2\n" + f"{BOX}\n".encode())
    label_file = read_obb_labels(path, strict=False)
    assert label_file.boxes.line.tolist() == [1, 3]
    assert len(label_file.problems) == 1 and label_file.problems[0].line == 2
    assert "not UTF-8" in label_file.problems[0].reason
    with pytest.raises(LabelFormatError) as info:
        read_obb_labels(path, strict=True)
    assert info.value.line == 2 and "not UTF-8" in info.value.reason


@pytest.mark.parametrize("token, reason", [
    ("1_00", "not a number"),
    ("\u0661\u0662", "not a number"),  # Arabic-Indic digits: float() reads 12
    ("1e120", "out of range"),
    ("-1e300", "out of range"),
    ("inf", "not finite"),
    ("1e999", "not finite"),
])
def test_numbers_labels_never_hold_are_refused(tmp_path, token, reason):
    path = tmp_path / "a.txt"
    fields = BOX.split()
    fields[3] = token
    path.write_text(BOX + "\n" + " ".join(fields) + "\n", encoding="utf-8")
    with pytest.raises(LabelFormatError) as info:
        read_yolo_obb(path, strict=True)
    assert info.value.line == 2 and reason in info.value.reason and "field 4" in info.value.reason
    lenient = read_yolo_obb(path, strict=False)
    assert len(lenient.boxes) == 1 and len(lenient.problems) == 1


def test_coordinates_up_to_the_limit_are_read(tmp_path):
    path = tmp_path / "a.txt"
    big = f"0 0 0 {MAX_COORDINATE:.0f} 0 {MAX_COORDINATE:.0f} 5 0 5"
    path.write_text(big + "\n", encoding="utf-8")
    assert read_yolo_obb(path, strict=True).boxes.corners.max() == MAX_COORDINATE
    batch = read_obb_batch([path], strict=True)
    assert batch.counts.tolist() == [1]


@pytest.mark.parametrize("class_token", [str(2**70), str(-(2**63) - 1), "1_0"])
def test_class_ids_beyond_int64_or_oddly_spelled_are_broken_lines(tmp_path, class_token):
    path = tmp_path / "a.txt"
    path.write_text(BOX + "\n" + class_token + BOX[1:] + "\n", encoding="utf-8")
    with pytest.raises(LabelFormatError) as info:  # not OverflowError with a traceback
        read_yolo_obb(path, strict=True)
    assert info.value.line == 2 and "class id" in info.value.reason
    assert len(read_yolo_obb(path, strict=False).problems) == 1
    batch = read_obb_batch([path], strict=False)
    assert batch.counts.tolist() == [1] and len(batch.problems[0]) == 1


def test_a_huge_token_is_not_echoed_whole(tmp_path):
    path = tmp_path / "a.txt"
    path.write_text("0 " + "9" * 2_000_000 + "x 1 2 3 4 5 6 7\n", encoding="utf-8")
    with pytest.raises(LabelFormatError) as info:
        read_yolo_obb(path, strict=True)
    assert len(str(info.value)) < len(str(path)) + 200 and "2000001 characters" in str(info.value)


def test_normalized_is_every_coordinate_within_two(tmp_path):
    # a fitted OBB at the frame border reaches a little past [0, 1]: still normalized
    assert looks_normalized(np.array([-0.0001, 0.5, 1.0004])) is True
    assert looks_normalized(np.array([0.0, 2.0])) is True and looks_normalized(np.array([0.0, 2.5])) is False
    edge = "0 0.9 0.5 1.0004 0.5 1.0004 0.6 0.9 0.6"
    under = "0 -0.0001 0.1 0.1 0.1 0.1 0.2 -0.0001 0.2"
    pixels = rect(10, 10, 40, 20)
    for name, text in (("edge", edge), ("under", under), ("pixels", pixels)):
        (tmp_path / f"{name}.txt").write_text(text + "\n", encoding="utf-8")
    (tmp_path / "edge.dota").write_text(edge[2:] + " car 0\n", encoding="utf-8")  # careful reader
    paths = [tmp_path / f"{n}.txt" for n in ("edge", "under", "pixels")] + [tmp_path / "edge.dota"]
    batch = read_obb_batch(paths, strict=True, label_map={0: "car"})
    assert batch.normalized == [True, True, False, True]
    assert [read_obb_labels(p, strict=True, label_map={0: "car"}).normalized for p in paths] == batch.normalized


@pytest.mark.parametrize("header", ["imagesource: Google Earth", "imagesource:GoogleEarth", "gsd: 0.146", "gsd:null"])
def test_dota_headers_take_any_value(tmp_path, header):
    path = tmp_path / "a.dota"
    path.write_text(f"{header}\n10 10 50 10 50 30 10 30 car 0\n", encoding="utf-8")
    label_file = read_obb_labels(path, strict=True, label_map={0: "car"})
    assert label_file.boxes.line.tolist() == [2]


@pytest.mark.parametrize("text, problem", [
    ("0: car\n1: bus\n0: truck\n", ":3: label map key 0 is given twice (first on line 1)"),
    ("0: car\n1: Car\n", "class name 'Car' is given to ids 0 and 1"),
    ("0: car\n'0': bus\n", "class id 0 is given twice"),
    ("1.5: car\n", "label map key 1.5 is not an integer class id"),
    ("true: car\n", "label map key True is not an integer class id"),
    ("0: car\n1:\n", "class id 1 has no name"),
    ("0: car\n1: '  '\n", "class id 1 has no name"),
    ("names:\n  0: car\n  0: bus\n", "label map key 0 is given twice"),
])
def test_label_maps_that_would_name_a_box_wrongly_are_refused(tmp_path, text, problem):
    path = tmp_path / "classes.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_label_map(path)
    assert str(info.value).startswith(str(path)) and problem in str(info.value)


def test_label_map_that_is_a_folder_or_binary_is_refused(tmp_path):
    with pytest.raises(InputError, match="is a folder"):
        load_label_map(tmp_path)
    binary = tmp_path / "classes.yaml"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\x00\xff")
    with pytest.raises(InputError, match="not UTF-8"):
        load_label_map(binary)


def test_good_label_maps_still_load(tmp_path):
    path = tmp_path / "classes.yaml"
    path.write_text("0: Car # including vans\n1: Bus\n", encoding="utf-8")
    assert load_label_map(path) == {0: "Car", 1: "Bus"}
    path.write_text("names: [car, bus]\n", encoding="utf-8")
    assert load_label_map(path) == {0: "car", 1: "bus"}


def test_hbb_prompts_follow_the_same_number_rules(tmp_path):
    from hbb2obb.io import read_yolo_hbb

    path = tmp_path / "h.txt"
    path.write_text("0 10 20 4 2\n0 1e120 20 4 2\n0 1_0 20 4 2\n" + f"{2**70} 10 20 4 2\n", encoding="utf-8")
    label_file = read_yolo_hbb(path, strict=False)
    assert label_file.boxes.line.tolist() == [1]
    assert [p.line for p in label_file.problems] == [2, 3, 4]
    assert "out of range" in label_file.problems[0].reason and "class id" in label_file.problems[2].reason
