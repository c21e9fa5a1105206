"""Pairing label files by name: which frames a run scores, their paths and order, one listing per folder."""

import os
from pathlib import Path

import pytest

from hbb2obb.errors import InputError
from hbb2obb.frames.pairing import FrameSpec, plan_any, plan_frames

from conftest import rect


def test_two_files_of_one_frame_are_named_in_name_order(write_labels):
    good = rect(1, 1, 4, 4) + "\n"
    root = write_labels({"gt/a.txt": good, "gt/a.TXT": good, "gt/a.Txt": good, "gt/b.txt": good, "gt/b.TXT": good,
                         "pred/a.txt": good})
    with pytest.raises(InputError, match=r"two label files for frame 'a': a.TXT and a.Txt"):
        plan_frames(root / "gt", root / "pred")


@pytest.mark.parametrize("policy", ["skip", "empty"])
def test_paired_frames_are_frame_specs_with_every_field(write_labels, policy):
    good = rect(1, 1, 4, 4) + "\n"
    root = write_labels({**{f"gt/{n}.txt": good for n in "abcd"}, **{f"pred/{n}.txt": good for n in "abd"}})
    specs = plan_frames(root / "gt", root / "pred", policy).frames
    names = ["a", "b", "c", "d"] if policy == "empty" else ["a", "b", "d"]
    expected = tuple(FrameSpec(n, str(root / "gt" / f"{n}.txt"), None if n == "c" else str(root / "pred" / f"{n}.txt"))
                     for n in names)
    assert specs == expected and all(type(s) is FrameSpec and len(s) == len(FrameSpec._fields) for s in specs)
    assert specs[0].gt_boxes is None and specs[0].recorded_size is None and specs[0].pred_path.name == "a.txt"


def test_planning_lists_each_folder_once_and_looks_up_no_label_file(write_labels, monkeypatch):
    root = write_labels({f"{side}/{i}.txt": rect(i, i, 4, 4) + "\n" for i in range(5) for side in ("gt", "pred")})
    listed, stats = [], []
    scandir, stat = os.scandir, os.stat
    monkeypatch.setattr(os, "scandir", lambda path: listed.append(os.fspath(path)) or scandir(path))
    monkeypatch.setattr(os, "stat", lambda path, *a, **k: stats.append(os.fspath(path)) or stat(path, *a, **k))
    plan = plan_any(root / "gt", root / "pred")
    assert [spec.name for spec in plan.frames] == ["0", "1", "2", "3", "4"] and plan.pred_source is None
    assert sorted(listed) == [str(root / "gt"), str(root / "pred")]
    assert not [path for path in stats if path.endswith(".txt")]


@pytest.mark.parametrize("spelling", ["absolute", "relative", "dot", "trailing slash"])
def test_planned_paths_and_orders_whatever_the_folder_spelling(write_labels, monkeypatch, spelling):
    good = rect(1, 1, 4, 4) + "\n"
    names = ["b-1", "b", "a_2", "a", "c.d", "Z", "é"]  # "-" and "." sort before the suffix's ".", "_" after
    files = {f"gt/{n}.txt": good for n in names if n != "c.d"}
    files.update({f"pred/{n}.{'TXT' if n == 'a' else 'txt'}": good for n in names if n != "b"})
    files.update({f"pred/orphan{n}.txt": good for n in ("9", "-1", "_x", "")})
    root = write_labels(files)
    monkeypatch.chdir(root / "gt" if spelling == "dot" else root)
    gt = {"absolute": root / "gt", "relative": Path("gt"), "dot": Path("."), "trailing slash": "gt/"}[spelling]
    pred = root / "pred" if spelling == "dot" else "pred"
    plan = plan_frames(gt, pred, "empty")
    gt_names = sorted(f"{n}.txt" for n in names if n != "c.d")
    assert [spec.name for spec in plan.frames] == [n[:-4] for n in gt_names]
    assert [spec.gt_file for spec in plan.frames] == [str(Path(gt) / n) for n in gt_names]
    assert [spec.pred_file for spec in plan.frames] == [
        None if n == "b.txt" else str(Path(pred) / ("a.TXT" if n == "a.txt" else n)) for n in gt_names]
    assert plan.missing_pred == (Path(gt) / "b.txt",)
    assert plan.orphan_pred == tuple(Path(pred) / n for n in sorted(["c.d.txt", "orphan9.txt", "orphan-1.txt",
                                                                    "orphan_x.txt", "orphan.txt"]))
