"""Label files read a group at a time (by a helper process, ahead) and cut into chunks: budgets, bytes, no helper left."""

import pytest

import hbb2obb.io.reader_process as reader_process

from conftest import rect
from hbb2obb.errors import InputError
from hbb2obb.io import ImageSizes
from hbb2obb.frames.batches import read_frame_batches
from hbb2obb.frames.pairing import plan_frames
from hbb2obb.frames.loading import load_frames

FRAMES = {  # a broken prediction line, a bow-tie, a normalized frame, a missing and an orphan prediction
    "gt/a.txt": rect(0, 0, 10, 5) + "\n" + rect(50, 50, 20, 10, cls=1) + "\n",
    "pred/a.txt": rect(1, 0, 10, 5) + " 0.9\n0 1 2\n" + "0 0 0 10 5 10 0 0 5\n",
    "gt/b.txt": "0 0.1 0.1 0.2 0.1 0.2 0.2 0.1 0.2\n",
    "pred/b.txt": "0 0.1 0.1 0.2 0.1 0.2 0.2 0.1 0.2\n",
    "gt/c.txt": rect(0, 0, 5, 5, cls=2) + "\n" + rect(100, 100, 5, 5) + "\n",
    "gt/d.txt": "",
    "pred/d.txt": rect(3, 3, 4, 4) + "\n0 nan 0 1 0 1 1 0 1\n",
    "pred/e.txt": rect(0, 0, 1, 1) + "\n",
}


def _sizes_of(root, specs):
    return [(root / "gt" / f"{s.name}.txt").stat().st_size + ((root / "pred" / f"{s.name}.txt").stat().st_size
                                                              if s.pred_file else 0) for s in specs]


@pytest.mark.parametrize("read_ahead", [False, True], ids=["in-place", "read-ahead"])
@pytest.mark.parametrize("max_frames, max_bytes", [(3, 1 << 20), (1000, 200), (1000, 1), (2, 90)])
def test_frame_batches_keep_the_frame_and_byte_budgets_without_asking_sizes(write_labels, max_frames, max_bytes,
                                                                             read_ahead):
    files = {f"gt/{i:02d}.txt": (rect(i, i, 4, 4) + "\n") * (1 + i % 4) for i in range(23)}
    files.update({f"pred/{i:02d}.txt": (rect(i + 1, i, 4, 4) + "\n") * (i % 3) for i in range(23) if i % 5})
    files["gt/07.txt"] = (rect(7, 7, 4, 4) + "\n") * 40  # one frame larger than a small byte budget
    root = write_labels(files)
    specs = plan_frames(root / "gt", root / "pred", "empty").frames
    runs = list(read_frame_batches(specs, max_frames, max_bytes, read_ahead=read_ahead))
    assert [spec for run, _ in runs for spec in run] == list(specs)  # every frame once, in order
    for run, (gt_bytes, pred_bytes) in runs:
        sizes = _sizes_of(root, run)
        assert len(run) <= max_frames and (len(run) == 1 or sum(sizes) <= max_bytes)
        assert gt_bytes == [(root / "gt" / f"{s.name}.txt").read_bytes() for s in run]
        assert pred_bytes == [(root / "pred" / f"{s.name}.txt").read_bytes() if s.pred_file else b"" for s in run]
    # greedy: a run ends only where the next frame would break a budget, or (with the helper) where a
    # group ends; those groups start at most 64 frames long and at most quadruple
    group_ends = [0]
    for (run, _), (after, _) in zip(runs, runs[1:]):
        if not (len(run) == max_frames or sum(_sizes_of(root, run + [after[0]])) > max_bytes):
            assert read_ahead
            group_ends.append(specs.index(after[0]))
    first_group = group_ends[1] if len(group_ends) > 1 else 0
    assert first_group <= 64 and all(end - start <= 4 * (start - before) for before, start, end in
                                     zip(group_ends, group_ends[1:], group_ends[2:]))


def test_with_the_helper_the_first_runs_are_short_and_grow(write_labels, started_readers):
    root = write_labels({f"{side}/{i:03d}.txt": rect(i, i, 4, 4) + "\n" for i in range(400) for side in ("gt", "pred")})
    specs = plan_frames(root / "gt", root / "pred").frames
    runs = list(read_frame_batches(specs, 300, 1 << 20, read_ahead=True))
    assert [len(run) for run, _ in runs] == [64, 256, 80]  # greedy runs would wait for 300 frames to be read
    assert len(started_readers) == 1 and started_readers[0].returncode is not None
    assert [spec for run, _ in runs for spec in run] == list(specs)
    (_, in_place), = read_frame_batches(specs, 4096, 1 << 20)  # one run of all 400
    assert [[blob for _, blobs in runs for blob in blobs[side]] for side in (0, 1)] == list(in_place)


def _outcome(specs, **kwargs):
    try:
        loaded, health = load_frames(specs, sizes=ImageSizes(), label_map=None, **kwargs)
    except InputError as exc:
        return type(exc), str(exc)
    return ([getattr(loaded, side).corners.tolist() for side in ("gt", "pred")],
            [getattr(loaded, f"{side}_frame").tolist() for side in ("gt", "pred")], [str(p) for p in health.problems])


@pytest.mark.parametrize("gone", [None, "pred/d.txt", "gt/b.txt"])
def test_frames_read_ahead_load_as_frames_read_in_place(write_labels, gone):
    root = write_labels(FRAMES)
    specs = plan_frames(root / "gt", root / "pred", "empty").frames
    if gone:
        (root / gone).unlink()  # gone after pairing: unreadable, and the careful reader says why
    (run, blobs), = read_frame_batches(specs, 100, 1 << 20)
    assert blobs[1][2] == b"" and (blobs[1][3] is None) == (gone == "pred/d.txt")  # c has no prediction file
    assert (blobs[0][1] is None) == (gone == "gt/b.txt")
    assert _outcome(run, blobs=blobs) == _outcome(specs)


def test_no_helper_outlives_the_batches(write_labels, started_readers):
    root = write_labels({f"{side}/{i:03d}.txt": rect(i, i, 4, 4) + "\n" for i in range(300) for side in ("gt", "pred")})
    specs = plan_frames(root / "gt", root / "pred").frames
    batches = read_frame_batches(specs, 8, 1 << 20, read_ahead=True)
    first = next(batches)
    assert len(first[0]) == 8 and len(started_readers) == 1 and started_readers[0].poll() is None  # reading ahead
    batches.close()  # stopped early, as an error in the caller stops it: the helper is ended and waited for
    assert started_readers[0].returncode is not None
    assert sum(len(run) for run, _ in read_frame_batches(specs, 8, 1 << 20, read_ahead=True)) == 300
    assert len(started_readers) == 2 and started_readers[1].returncode is not None


def test_one_run_of_frames_starts_no_helper(write_labels, started_readers):
    root = write_labels({f"{side}/{i:03d}.txt": rect(i, i, 4, 4) + "\n" for i in range(40) for side in ("gt", "pred")})
    specs = plan_frames(root / "gt", root / "pred").frames
    assert len(list(read_frame_batches(specs, 100, 1 << 20, read_ahead=True))) == 1
    assert started_readers == []  # 40 small frames: its start would cost more than the reading


def _all_runs(specs, **kwargs):
    return [(list(run), blobs) for run, blobs in read_frame_batches(specs, 5, 1 << 20, **kwargs)]


@pytest.mark.parametrize("failure", ["cannot start", "dies", "refuses a path"])
def test_a_failing_helper_changes_nothing(write_labels, monkeypatch, started_readers, failure):
    files = {f"gt/{i:02d}.txt": (rect(i, i, 4, 4) + "\n") * (i % 3) for i in range(30)}
    files.update({f"pred/{i:02d}.txt": rect(i + 1, i, 4, 4) + "\n" for i in range(30) if i % 4})
    root = write_labels(files)
    specs = plan_frames(root / "gt", root / "pred", "empty").frames
    (root / "gt" / "17.txt").unlink()  # gone after pairing: unreadable
    expected = _all_runs(specs)
    assert expected[3][1][0][2] is None
    if failure == "cannot start":
        def refuse(self):
            raise reader_process.ReaderGone("no interpreter")
        monkeypatch.setattr(reader_process.ReaderProcess, "__init__", refuse)
    elif failure == "dies":
        collect = reader_process.ReaderProcess.collect

        def dying(self):
            self._process.kill()
            self._process.wait()
            return collect(self)
        monkeypatch.setattr(reader_process.ReaderProcess, "collect", dying)
    else:
        def refusing(self, paths):
            raise reader_process.ReaderGone("a NUL in a path")
        monkeypatch.setattr(reader_process.ReaderProcess, "submit", refusing)
    assert _all_runs(specs, read_ahead=True) == expected
    assert len(started_readers) == (failure != "cannot start") and all(p.returncode is not None for p in started_readers)


def test_frames_with_boxes_read_already_read_the_same_ahead(write_labels, started_readers):
    from hbb2obb.boxes import Boxes
    from hbb2obb.frames.pairing import FrameSpec

    root = write_labels({f"{side}/{i:02d}.txt": rect(i, i, 4, 4) + "\n" for i in range(20) for side in ("gt", "pred")})
    read = Boxes.empty()
    specs = [FrameSpec(s.name, s.gt_file, s.pred_file, gt_boxes=read if i % 2 else None,
                       pred_boxes=read if i % 3 == 0 else None)  # a side read whole (a COCO file) reads no file
             for i, s in enumerate(plan_frames(root / "gt", root / "pred").frames)]
    specs[4] = specs[4]._replace(gt_boxes=read, pred_boxes=read)  # a frame that reads nothing
    expected = _all_runs(specs)
    assert expected[0][1][0][:2] == [(root / "gt" / "00.txt").read_bytes(), b""]
    assert _all_runs(specs, read_ahead=True) == expected and len(started_readers) == 1
    assert all(process.returncode is not None for process in started_readers)
    nothing = [s._replace(gt_boxes=read, pred_boxes=read) for s in specs]  # every side read whole
    assert _all_runs(nothing, read_ahead=True) == _all_runs(nothing) and len(started_readers) == 1  # no helper for nothing
