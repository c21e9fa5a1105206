"""DOTA Task1 submissions and DOTA rows with a score, read as predictions."""

import pytest

from hbb2obb.errors import InputError, UsageError
from hbb2obb.frames.pairing import plan_any
from hbb2obb.io.dota import read_dota
from hbb2obb.io.dota_task1 import read_task1

MAP = {0: "plane", 1: "small-vehicle"}


def test_task1_split_by_image_in_file_then_line_order(write_labels):
    root = write_labels({
        "sub/Task1_plane.txt": "P2 0.5 0 0 4 0 4 2 0 2\nP1 0.9 0 0 4 0 4 2 0 2\n",
        "sub/Task1_small-vehicle.txt": "P1 0.25 1 1 2 1 2 2 1 2\nP1 nan 1 1 2 1 2 2 1 2\n\nP1 0.3 1 1 2 1\n",
    })
    found = read_task1(root / "sub", MAP)
    assert sorted(found.boxes) == ["P1", "P2"]
    p1 = found.boxes["P1"]
    assert p1.class_id.tolist() == [0, 1] and p1.score.tolist() == [0.9, 0.25] and p1.line.tolist() == [2, 1]
    assert [(problem.path.name, problem.line) for problem in found.problems] == [
        ("Task1_small-vehicle.txt", 2), ("Task1_small-vehicle.txt", 4)]


def test_task1_needs_names_it_can_resolve(write_labels):
    root = write_labels({"sub/Task1_ship.txt": "P1 0.5 0 0 4 0 4 2 0 2\n"})
    with pytest.raises(InputError, match="Task1_ship.txt: class 'ship' is not in the label map"):
        read_task1(root / "sub", MAP)
    with pytest.raises(UsageError, match="label map"):
        read_task1(root / "sub", None)


def test_a_folder_of_per_frame_files_is_not_a_submission(write_labels):
    root = write_labels({"gt/P1.txt": "0 0 0 4 0 4 2 0 2\n", "pred/P1.txt": "0 0 0 4 0 4 2 0 2\n",
                         "pred/Task1_plane.txt": "P1 0.5 0 0 4 0 4 2 0 2\n"})
    plan = plan_any(root / "gt", root / "pred", "skip", MAP)
    assert plan.pred_source is None and [f.name for f in plan.frames] == ["P1"]
    assert all(frame.pred_boxes is None for frame in plan.frames)  # read from pred/P1.txt, not the submission


def test_dota_prediction_rows_with_scores(write_labels):
    root = write_labels({
        "ten.txt": "imagesource:x\n0 0 4 0 4 2 0 2 plane 0.75\n0 0 4 0 4 2 0 2 plane 1\n",
        "eleven.txt": "0 0 4 0 4 2 0 2 plane 1 0.5\n0 0 4 0 4 2 0 2 plane 0 x\n",
        "flags.txt": "0 0 4 0 4 2 0 2 plane 1\n0 0 4 0 4 2 0 2 plane 0\n",
    })
    ten = read_dota(root / "ten.txt", strict=False, label_map=MAP)
    assert ten.boxes.score.tolist() == [0.75, 1.0] and not ten.boxes.difficult.any()
    eleven = read_dota(root / "eleven.txt", strict=False, label_map=MAP)
    assert eleven.boxes.score.tolist() == [0.5] and eleven.boxes.difficult.tolist() == [True]
    assert [p.line for p in eleven.problems] == [2]
    flags = read_dota(root / "flags.txt", strict=False, label_map=MAP)
    assert flags.boxes.score is None and flags.boxes.difficult.tolist() == [True, False]
    with pytest.raises(InputError, match="ten.txt:2: difficult flag must be 0 or 1"):
        read_dota(root / "ten.txt", strict=True, label_map=MAP)  # ground truth carries no scores
