"""Frames over executors: the files and outcomes do not depend on the order results arrive in,
and the run's record of frames makes a stopped run resumable (hbb2obb.converters.distribute)."""

from __future__ import annotations

import json
import os

import pytest

from hbb2obb.converters.distribute import Frame, plan_frames, remove_temporaries, run_frames
from hbb2obb.converters.frame_record import RECORD_NAME, read_record
from hbb2obb.converters.frame_tasks import FrameJob
from hbb2obb.converters.image.converter import DEFAULT_PARAMETERS
from hbb2obb.converters.image.outputs import OutputSettings
from hbb2obb.errors import UsageError
from hbb2obb.io.written import OutputGuard
from hbb2obb.sweeps.executors import serial_executor

DRAWING = {"show_hbb": True, "show_masks": True, "show_segments": True, "show_obb": True, "show_labels": True,
           "show_confidence": True}


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    from hbb2obb.synthetic.dataset import generate_dataset

    return generate_dataset(tmp_path_factory.mktemp("distribute"), n_frames=4, boxes_per_frame=(6, 10), seed=11,
                            width=480, height=270)


def job(**changes) -> FrameJob:
    values = dict(params=dict(DEFAULT_PARAMETERS), settings=OutputSettings(), polygons=True, side_car=True,
                  drawing=DRAWING, label_map={0: "Car"})
    values.update(changes)
    return FrameJob(**values)


def frames(dataset, out) -> list:
    found = []
    for name in dataset.frame_names:
        targets = {"obb": out / "obb" / f"{name}.txt", "confidence": out / "conf" / f"{name}.txt",
                   "polygon": out / "poly" / f"{name}.txt", "picture": out / "pics" / f"{name}.jpg"}
        found.append(Frame(dataset.images_dir / f"{name}.jpg", dataset.hbb_dir / f"{name}.txt", targets))
    return found


def convert(dataset, out, executor=serial_executor, resume=False, the_job=None):
    for sub in ("obb", "conf", "poly", "pics"):
        (out / sub).mkdir(parents=True, exist_ok=True)
    guard = OutputGuard()
    plan = plan_frames(frames(dataset, out), the_job or job(), out / "obb", guard, resume=resume)
    outcomes = run_frames(plan, executor, guard)
    guard.save()
    return plan, outcomes


def reversed_executor(function, calls):
    """Results in the opposite order of the calls, as a pool may return them."""
    for index in reversed(range(len(calls))):
        yield index, function(*calls[index])


def tree(folder) -> dict:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and not p.name.startswith(".")}


def test_results_in_any_order_give_the_same_files_and_outcomes(dataset, tmp_path):
    _, serial = convert(dataset, tmp_path / "a")
    _, shuffled = convert(dataset, tmp_path / "b", reversed_executor)
    assert tree(tmp_path / "a") == tree(tmp_path / "b")
    assert len(tree(tmp_path / "a")) == 4 * len(dataset.frame_names)
    assert [o.to_dict() for o in serial] == [o.to_dict() for o in shuffled]
    assert sum(o.boxes for o in serial) == dataset.boxes


def stop_after(count):
    """An executor interrupted (as by Ctrl-C) after ``count`` results."""
    def executor(function, calls):
        for index, args in enumerate(calls):
            if index == count:
                raise KeyboardInterrupt
            yield index, function(*args)
    return executor


def test_a_resumed_run_keeps_complete_frames_and_replays_their_outcomes(dataset, tmp_path):
    out = tmp_path / "run"
    with pytest.raises(KeyboardInterrupt):
        convert(dataset, out, stop_after(2))
    record = read_record(out / "obb" / RECORD_NAME)
    assert sorted(record.entries) == [f"{n}.jpg" for n in dataset.frame_names[:2]]
    calls = []

    def counting(function, call_list):
        calls.extend(call_list)
        yield from serial_executor(function, call_list)

    plan, outcomes = convert(dataset, out, counting, resume=True)
    assert sorted(plan.done) == [0, 1] and [c[3] for c in calls] == [str(f.image) for f in plan.frames[2:]]
    _, whole = convert(dataset, tmp_path / "whole")
    assert tree(out) == tree(tmp_path / "whole")
    assert [o.to_dict() for o in outcomes] == [o.to_dict() for o in whole]


def test_a_frame_whose_file_or_input_changed_is_converted_again(dataset, tmp_path):
    out = tmp_path / "run"
    convert(dataset, out)
    name = dataset.frame_names[1]
    (out / "poly" / f"{name}.txt").write_text("edited\n")
    plan = plan_frames(frames(dataset, out), job(), out / "obb", OutputGuard(), resume=True)
    assert sorted(plan.done) == [0, 2, 3]
    image = dataset.images_dir / f"{dataset.frame_names[3]}.jpg"
    stat = image.stat()
    os.utime(image, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    try:
        plan = plan_frames(frames(dataset, out), job(), out / "obb", OutputGuard(), resume=True)
    finally:
        os.utime(image, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert sorted(plan.done) == [0, 2]


def test_resume_with_other_settings_is_refused_and_without_resume_nothing_is_kept(dataset, tmp_path):
    out = tmp_path / "run"
    convert(dataset, out)
    other = job(params={**DEFAULT_PARAMETERS, "imgsz": 64})
    with pytest.raises(UsageError, match=r"other settings \(job differ\)"):
        plan_frames(frames(dataset, out), other, out / "obb", OutputGuard(), resume=True)
    assert plan_frames(frames(dataset, out), job(), out / "obb", OutputGuard()).done == {}


def test_a_torn_last_line_is_read_as_absent(dataset, tmp_path):
    out = tmp_path / "run"
    convert(dataset, out)
    path = out / "obb" / RECORD_NAME
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:-1]) + lines[-1][: len(lines[-1]) // 2])
    record = read_record(path)
    assert len(record.entries) == len(dataset.frame_names) - 1
    assert json.loads(lines[-1])["frame"] not in record.entries


def test_files_an_earlier_run_left_unrecorded_are_its_own(dataset, tmp_path):
    """Killed before its record of written files was saved: the record of frames vouches for them."""
    out = tmp_path / "run"
    convert(dataset, out)
    for manifest in out.rglob(".hbb2obb-written.json"):
        manifest.unlink()
    targets = [p for f in frames(dataset, out) for p in f.targets.values()]
    assert len(OutputGuard().foreign(targets)) == len(targets)
    guard = OutputGuard()
    plan_frames(frames(dataset, out), job(), out / "obb", guard)  # without --resume too
    assert guard.foreign(targets) == []
    (out / "obb" / f"{dataset.frame_names[0]}.txt").write_text("somebody's edit\n")
    guard = OutputGuard()
    plan_frames(frames(dataset, out), job(), out / "obb", guard)
    assert guard.foreign(targets) == [out / "obb" / f"{dataset.frame_names[0]}.txt"]


def test_only_our_temporary_files_are_removed(dataset, tmp_path):
    out = tmp_path / "run"
    (out / "obb").mkdir(parents=True)
    name = dataset.frame_names[0]
    ours = out / "obb" / f".{name}.txt.ab12_xyz.tmp.txt"
    theirs = [out / "obb" / ".notes.txt.ab12_xyz.tmp.txt", out / "obb" / f".{name}.txt.backup"]
    for path in [ours, *theirs]:
        path.write_text("x")
    plan = plan_frames(frames(dataset, out), job(), out / "obb", OutputGuard())
    assert remove_temporaries(plan) == 1
    assert not ours.exists() and all(p.exists() for p in theirs)


def test_an_unreadable_frame_is_an_outcome_not_a_file(dataset, tmp_path):
    import shutil

    images = tmp_path / "images"
    shutil.copytree(dataset.images_dir, images)
    name = dataset.frame_names[2]
    (images / f"{name}.jpg").write_bytes(b"not an image")
    out = tmp_path / "run"
    for sub in ("obb", "conf", "poly", "pics"):
        (out / sub).mkdir(parents=True)
    listed = [Frame(images / f.image.name, f.hbb, f.targets) for f in frames(dataset, out)]
    guard = OutputGuard()
    outcomes = run_frames(plan_frames(listed, job(), out / "obb", guard), reversed_executor, guard)
    assert outcomes[2].error.startswith(f"{images / name}.jpg: cannot read image")
    assert outcomes[2].error.endswith("; frame skipped")
    assert not (out / "obb" / f"{name}.txt").exists() and (out / "obb" / f"{dataset.frame_names[3]}.txt").exists()
    assert f"{name}.jpg" not in read_record(out / "obb" / RECORD_NAME).entries
