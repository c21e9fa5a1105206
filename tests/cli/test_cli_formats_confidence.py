"""``hbb2obb-convert --difficult_from confidence``: the difficult flag from per-box confidences.

Ported from the reference tool's tests (1.12.0, ``tests/test_convert_cli.py``): the scores come
from a side-car folder (``--confidence_dir``, one score per line, row-aligned with the labels) or
from the source's own confidence column; a side-car that does not line up, a source only partly
scored, and a side-car no option reads are refused before anything is written.
"""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from hbb2obb.cli.formats import main

# Two rotated boxes (an axis-aligned quad would be read back as an HBB); Car, then Bus.
TWO_BOXES = "0 30 10 50 30 30 50 10 30\n1 70 110 90 130 70 150 50 130\n"
SIZE = ("-iw", 100, "-ih", 200)


def _run(*args):
    return CliRunner().invoke(main, [str(a) for a in args] + ["-nb"])


@pytest.fixture
def scored(write_labels):
    """labels_obb/ with one two-box frame, the side-car hbb2obb --confidence_dir writes, a label map."""
    return write_labels({"labels_obb/img1.txt": TWO_BOXES, "labels_confidence/img1.txt": "0.9100\n0.0000\n",
                         "classes.yaml": "0: Car\n1: Bus\n"})


def _dota_flags(path):
    return [line.split()[-1] for line in path.read_text().splitlines() if ":" not in line]


def _convert(root, *extra):
    return _run(root / "labels_obb", "--from", "yolo", "-o", root / "out", *SIZE, "-mp", root / "classes.yaml",
                *extra)


def test_a_box_scoring_below_the_threshold_is_flagged_difficult(scored):
    result = _convert(scored, "--to", "dota", "--difficult_from", "confidence",
                      "--confidence_dir", scored / "labels_confidence", "--difficult_below", 0.5)
    assert result.exit_code == 0, result.output
    assert _dota_flags(scored / "out" / "img1.dota") == ["0", "1"]  # the fallback (0.0) is flagged
    assert "Flagged 1 box(es) difficult, scoring below 0.5" in result.output


def test_the_threshold_decides_and_voc_carries_the_flag_too(scored):
    result = _convert(scored, "--to", "dota", "--difficult_from", "confidence",
                      "--confidence_dir", scored / "labels_confidence", "--difficult_below", 0.95)
    assert result.exit_code == 0, result.output
    assert _dota_flags(scored / "out" / "img1.dota") == ["1", "1"]
    hbb = _convert(scored, "--to", "voc", "-k", "hbb", "--difficult_from", "confidence",
                   "--confidence_dir", scored / "labels_confidence")
    assert hbb.exit_code == 0, hbb.output
    text = (scored / "out" / "img1.xml").read_text()
    assert text.count("<difficult>1</difficult>") == 1 and text.count("<difficult>0</difficult>") == 1


def test_the_scores_of_a_side_car_stay_out_of_the_written_labels(scored):
    result = _convert(scored, "--to", "yolo", "--difficult_from", "confidence",
                      "--confidence_dir", scored / "labels_confidence")
    assert result.exit_code == 0, result.output
    lines = (scored / "out" / "img1.txt").read_text().splitlines()
    assert [len(line.split()) for line in lines] == [9, 9]  # the standard nine fields, no confidence
    assert "carries a difficult flag" in result.output  # yolo has nowhere to put the flags: said so


def test_the_source_confidence_column_is_used_when_every_box_has_one(write_labels):
    root = write_labels({"labels_obb/img1.txt": "0 30 10 50 30 30 50 10 30 0.2\n1 70 110 90 130 70 150 50 130 0.8\n",
                         "labels_obb/img2.txt": "", "classes.yaml": "0: Car\n1: Bus\n"})
    result = _convert(root, "--to", "dota", "--difficult_from", "confidence", "--difficult_below", 0.3)
    assert result.exit_code == 0, result.output
    assert _dota_flags(root / "out" / "img1.dota") == ["1", "0"]
    assert _dota_flags(root / "out" / "img2.dota") == []


def test_without_scores_it_asks_for_the_side_car(scored):
    result = _convert(scored, "--to", "dota", "--difficult_from", "confidence")
    assert result.exit_code == 2
    assert "not every box" in result.output and "--confidence_dir" in result.output
    assert not (scored / "out").exists()


def test_a_partly_scored_source_is_refused(write_labels):
    root = write_labels({"labels_obb/img1.txt": "0 30 10 50 30 30 50 10 30 0.91\n",
                         "labels_obb/img2.txt": "0 30 10 50 30 30 50 10 30\n", "classes.yaml": "0: Car\n"})
    result = _convert(root, "--to", "dota", "--difficult_from", "confidence")
    assert result.exit_code == 2 and "not every box" in result.output
    assert "img2" in result.output  # the first unscored frame is named
    assert not (root / "out").exists()


def test_a_side_car_that_feeds_nothing_is_refused(scored):
    result = _convert(scored, "--to", "coco", "--confidence_dir", scored / "labels_confidence")
    assert result.exit_code == 2 and "difficult_from confidence" in result.output
    assert not (scored / "out").exists()


@pytest.mark.parametrize("side_car, message", [
    ("0.9\n", "align confidences"),  # one score, two boxes
    ("0.9\n0.1\n0.5\n", "align confidences"),
    ("0.9\nhigh\n", "labels_confidence/img1.txt:2"),
    ("0.9\nnan\n", "labels_confidence/img1.txt:2"),
    ("0.9 0.1\n", "labels_confidence/img1.txt:1"),  # one score per line, as the converter writes them
])
def test_a_side_car_that_does_not_line_up_is_refused_with_nothing_written(scored, side_car, message):
    (scored / "labels_confidence" / "img1.txt").write_text(side_car)
    result = _convert(scored, "--to", "dota", "--difficult_from", "confidence",
                      "--confidence_dir", scored / "labels_confidence")
    assert result.exit_code == 2 and message in result.output, result.output
    assert "Traceback" not in result.output
    assert not (scored / "out").exists()


def test_a_frame_without_a_side_car_file_is_refused(scored):
    (scored / "labels_obb" / "img2.txt").write_text(TWO_BOXES)
    result = _convert(scored, "--to", "dota", "--difficult_from", "confidence",
                      "--confidence_dir", scored / "labels_confidence")
    assert result.exit_code == 2 and "img2" in result.output and "no confidence file" in result.output
    assert not (scored / "out").exists()


def test_a_missing_side_car_folder_is_refused(scored):
    result = _convert(scored, "--to", "dota", "--difficult_from", "confidence",
                      "--confidence_dir", scored / "nowhere")
    assert result.exit_code == 2 and "nowhere" in result.output


def test_a_threshold_without_difficult_from_confidence_is_warned_about(scored):
    result = _convert(scored, "--to", "dota", "--difficult_below", 0.7)
    assert result.exit_code == 0, result.output
    assert "--difficult_below is read only by --difficult_from confidence" in result.output
    assert _dota_flags(scored / "out" / "img1.dota") == ["0", "0"]


def test_a_threshold_that_is_not_a_number_is_refused(scored):
    result = _convert(scored, "--to", "dota", "--difficult_from", "confidence",
                      "--confidence_dir", scored / "labels_confidence", "--difficult_below", "nan")
    assert result.exit_code == 2 and "--difficult_below" in result.output
