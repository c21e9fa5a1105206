"""What a record must say to be trusted: fingerprints, sound values, usable converter output."""

from __future__ import annotations

import pytest

from hbb2obb.sweeps.records import output_problems, record_problem, setting_changes


@pytest.mark.parametrize("record, problem", [
    ({"scale_factor": 0.0, "avg_iou": 0.8, "status": "ok"}, None),
    ({"scale_factor": 0.0, "status": "failed", "error": "x"}, None),
    ({"scale_factor": 0.0, "avg_iou": "high"}, "avg_iou is 'high', not a number"),
    ({"scale_factor": 0.0, "avg_iou": True}, "avg_iou is True, not a number"),
    ({"scale_factor": 0.0, "avg_iou": 0.8, "total_gt": "201"}, "total_gt is '201', not a number"),
    ({"scale_factor": 0.0, "avg_iou": 0.8, "iou_fractions": {"0.90": "half"}}, "iou_fractions is"),
    ({"scale_factor": 0.0, "status": "ok"}, "an ok record without avg_iou"),
    ({"scale_factor": 0.0, "avg_iou": 0.8, "status": "done"}, "status is 'done'"),
    ([1, 2], "not a mapping (list)"),
])
def test_record_problem(record, problem):
    found = record_problem(record)
    assert found == problem if problem is None else found.startswith(problem)


def test_setting_changes_name_the_nested_key_and_changed_folders():
    earlier = {"converter": "identity", "evaluation": {"iou_threshold": 0.1, "class_agnostic": False},
               "input_digest": {"gt_dir": "a", "hbb_dir": "b"}}
    now = {"converter": "image", "evaluation": {"iou_threshold": 0.7, "class_agnostic": False},
           "input_digest": {"gt_dir": "a", "hbb_dir": "c"}}
    assert setting_changes(earlier, now) == ["converter 'identity' -> 'image'", "evaluation.iou_threshold 0.1 -> 0.7",
                                             "the files in hbb_dir"]
    assert setting_changes(now, now) == []


def test_output_problems(tmp_path):
    hbb, out = tmp_path / "hbb", tmp_path / "out"
    hbb.mkdir()
    out.mkdir()
    for name in ("a", "b", "c"):
        (hbb / f"{name}.txt").write_text("0 1 1 2 2\n")
    assert output_problems(hbb, out) == {"missing_output_files": 3, "first_missing": "a.txt"}
    for name in ("a", "b", "c"):
        (out / f"{name}.txt").write_text("")
    assert output_problems(hbb, out) == {}
    (out / "b.txt").write_bytes(b"0 caf\xe9\n")
    problems = output_problems(hbb, out)
    assert problems["unreadable_output_files"] == 1 and problems["first_unreadable"].startswith("b.txt: not UTF-8")
