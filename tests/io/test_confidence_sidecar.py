"""Per-box confidences from a side-car folder or the labels, turned into the difficult flag."""

from __future__ import annotations

import numpy as np
import pytest

from hbb2obb.boxes import Boxes
from hbb2obb.errors import InputError, LabelFormatError
from hbb2obb.io.confidence_sidecar import flag_below, read_side_car_file, side_car_scores, source_scores
from hbb2obb.io.frame_labels import FrameLabels, axis_rect


def _frame(stem, n, scores=None, difficult=None):
    corners = np.array([axis_rect(i, 0, i + 1, 1) for i in range(n)], dtype=float).reshape(-1, 4, 2)
    boxes = Boxes(corners=corners, class_id=[0] * n, score=scores, difficult=difficult)
    return FrameLabels(stem, boxes, None, f"labels/{stem}.txt")


def test_a_side_car_file_is_one_score_per_line_blank_lines_aside(tmp_path):
    path = tmp_path / "a.txt"
    path.write_text("0.5\n\n1\r\n0.0000\n")
    assert read_side_car_file(path).tolist() == [0.5, 1.0, 0.0]
    path.write_text("0.5\n1e999\n")
    with pytest.raises(LabelFormatError, match=r"a\.txt:2: expected one confidence per line"):
        read_side_car_file(path)


def test_side_car_scores_line_up_with_every_frame(tmp_path):
    (tmp_path / "a.txt").write_text("0.1\n0.9\n")
    (tmp_path / "b.txt").write_text("")
    scores = side_car_scores(tmp_path, [_frame("a", 2), _frame("b", 0)])
    assert {stem: row.tolist() for stem, row in scores.items()} == {"a": [0.1, 0.9], "b": []}
    with pytest.raises(InputError, match="cannot align confidences with labels/a.txt: 2 score"):
        side_car_scores(tmp_path, [_frame("a", 3)])
    with pytest.raises(InputError, match="no confidence file for frame c"):
        side_car_scores(tmp_path, [_frame("c", 0)])


def test_source_scores_need_every_box_scored():
    assert source_scores([_frame("a", 2, scores=[0.3, 0.6]), _frame("b", 0)])["a"].tolist() == [0.3, 0.6]
    with pytest.raises(InputError, match="first without: labels/b.txt"):
        source_scores([_frame("a", 1, scores=[0.3]), _frame("b", 1)])
    with pytest.raises(InputError, match="not every box"):
        source_scores([_frame("a", 0)])  # no box at all: no score either


def test_the_flag_is_replaced_by_the_threshold_comparison():
    frames, count = flag_below([_frame("a", 3, difficult=[True, True, False])], {"a": [0.0, 0.7, 0.49]}, 0.5)
    assert frames[0].boxes.difficult.tolist() == [True, False, True] and count == 2
    assert frames[0].boxes.corners.tolist() == _frame("a", 3).boxes.corners.tolist()
