"""Every label writer replaces a file in one step: a writer that fails mid-way leaves the old file."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from hbb2obb.boxes import Boxes
from hbb2obb.io.dota import write_dota
from hbb2obb.io.frame_labels import FrameLabels
from hbb2obb.io.labelme import write_labelme
from hbb2obb.io.yolo_hbb import write_yolo

QUAD = np.array([[[1.0, 1.0], [5.0, 1.0], [5.0, 3.0], [1.0, 3.0]]])
LONE_SURROGATE = "\ud800"  # cannot be encoded as UTF-8: the write fails after the file was opened


def _boxes():
    return Boxes(corners=QUAD, class_id=np.array([0]), line=np.array([1]), difficult=np.array([False]))


def test_a_writer_failing_mid_way_leaves_the_previous_file_and_no_temporary_file(tmp_path):
    path = tmp_path / "a.dota"
    path.write_text("the previous file\n")
    with pytest.raises(UnicodeEncodeError):
        write_dota(path, _boxes(), {0: "car" + LONE_SURROGATE})
    assert path.read_text() == "the previous file\n"
    assert [p.name for p in tmp_path.iterdir()] == ["a.dota"]


@pytest.mark.parametrize("writer", ["yolo", "labelme"])
def test_a_run_killed_before_the_rename_leaves_the_previous_file(tmp_path, monkeypatch, writer):
    import hbb2obb.io.atomic as atomic

    path = tmp_path / ("a.txt" if writer == "yolo" else "a.json")
    path.write_text("the previous file\n")

    def killed(*args):
        raise KeyboardInterrupt

    monkeypatch.setattr(atomic.os, "replace", killed)
    with pytest.raises(KeyboardInterrupt):
        if writer == "yolo":
            write_yolo(path, _boxes(), (10, 10), obb=True, normalize=False, precision=2)
        else:
            write_labelme(path, FrameLabels("a", _boxes(), (10, 10), path), {0: "car"}, obb=True)
    assert path.read_text() == "the previous file\n"
    assert [p.name for p in tmp_path.iterdir()] == [path.name]


def test_written_files_have_ordinary_permissions(tmp_path):
    import os

    from hbb2obb.io.atomic import write_text_atomic

    umask = os.umask(0o022)
    os.umask(umask)
    write_text_atomic(tmp_path / "a.txt", "x\n")
    assert (tmp_path / "a.txt").stat().st_mode & 0o777 == 0o666 & ~umask


def test_a_file_written_through_atomic_path_is_an_ordinary_file(tmp_path):
    # metric files and figures go through atomic_path: a CI job's other users must be able to read them
    import os
    import stat

    from hbb2obb.io.atomic import _UMASK, atomic_path

    with atomic_path(tmp_path / "m.json") as temporary:
        assert temporary.suffix == ".json"  # a writer that picks its format from the name picks JSON
        temporary.write_text("{}")
    assert stat.S_IMODE(os.stat(tmp_path / "m.json").st_mode) == 0o666 & ~_UMASK
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.json"]


@pytest.mark.parametrize("suffix", [".txt", ".json", ".xml", ".dota"])
def test_a_temporary_file_left_by_a_killed_write_is_never_listed_as_a_label_file(tmp_path, monkeypatch, suffix):
    """SIGKILL runs no clean-up: the temporary file stays; it must not end like the label files beside it,
    or the next run over the folder would read it as one more frame (a half-written one)."""
    import subprocess
    import sys

    import hbb2obb.io.atomic as atomic

    pred = tmp_path / "pred"
    pred.mkdir()
    (pred / f"frame{suffix}").write_text("0 0 0 4 0 4 2 0 2\n")  # the file as an earlier run left it
    left = []
    monkeypatch.setattr(atomic.os, "replace", lambda source, target: left.append(source))  # the kill: no rename
    atomic.write_text_atomic(pred / f"frame{suffix}", "0 0 0 4 0 4 2 0 2\n")
    assert len(left) == 1 and not str(left[0]).endswith(suffix) and Path(left[0]).exists()
    if suffix == ".txt":  # the folder, with the leftover, still scores as the one frame it holds
        (tmp_path / "gt").mkdir()
        (tmp_path / "gt" / "frame.txt").write_text("0 0 0 4 0 4 2 0 2\n")
        done = subprocess.run([sys.executable, "-m", "hbb2obb.cli.eval", str(tmp_path / "gt"), str(pred), "-nb",
                               "--json"], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        assert '"frames_scored": 1' in done.stdout and "orphan" not in done.stderr
