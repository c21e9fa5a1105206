"""Label files read a group at a time and cut into chunks: budgets, bytes, boxes read already."""

import pytest

from hbb2obb.errors import InputError
from hbb2obb.frames.batches import read_frame_batches
from hbb2obb.frames.loading import load_frames
from hbb2obb.frames.pairing import plan_frames
from hbb2obb.io import ImageSizes

from conftest import rect

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


@pytest.mark.parametrize("max_frames, max_bytes", [(3, 1 << 20), (1000, 200), (1000, 1), (2, 90)])
def test_frame_batches_keep_the_frame_and_byte_budgets_without_asking_sizes(write_labels, max_frames, max_bytes):
    files = {f"gt/{i:02d}.txt": (rect(i, i, 4, 4) + "\n") * (1 + i % 4) for i in range(23)}
    files.update({f"pred/{i:02d}.txt": (rect(i + 1, i, 4, 4) + "\n") * (i % 3) for i in range(23) if i % 5})
    files["gt/07.txt"] = (rect(7, 7, 4, 4) + "\n") * 40  # one frame larger than a small byte budget
    root = write_labels(files)
    specs = plan_frames(root / "gt", root / "pred", "empty").frames
    runs = list(read_frame_batches(specs, max_frames, max_bytes))
    assert [spec for run, _ in runs for spec in run] == list(specs)  # every frame once, in order
    for run, (gt_bytes, pred_bytes) in runs:
        sizes = _sizes_of(root, run)
        assert len(run) <= max_frames and (len(run) == 1 or sum(sizes) <= max_bytes)
        assert gt_bytes == [(root / "gt" / f"{s.name}.txt").read_bytes() for s in run]
        assert pred_bytes == [(root / "pred" / f"{s.name}.txt").read_bytes() if s.pred_file else b"" for s in run]
    # greedy: a run ends only where the next frame would break a budget
    for (run, _), (after, _) in zip(runs, runs[1:]):
        assert len(run) == max_frames or sum(_sizes_of(root, run + [after[0]])) > max_bytes


def _outcome(specs, **kwargs):
    try:
        loaded, health = load_frames(specs, sizes=ImageSizes(), label_map=None, **kwargs)
    except InputError as exc:
        return type(exc), str(exc)
    return ([getattr(loaded, side).corners.tolist() for side in ("gt", "pred")],
            [getattr(loaded, f"{side}_frame").tolist() for side in ("gt", "pred")], [str(p) for p in health.problems])


@pytest.mark.parametrize("gone", [None, "pred/d.txt", "gt/b.txt"])
def test_frames_read_in_batches_load_as_frames_read_one_by_one(write_labels, gone):
    root = write_labels(FRAMES)
    specs = plan_frames(root / "gt", root / "pred", "empty").frames
    if gone:
        (root / gone).unlink()  # gone after pairing: unreadable, and the careful reader says why
    (run, blobs), = read_frame_batches(specs, 100, 1 << 20)
    assert blobs[1][2] == b"" and (blobs[1][3] is None) == (gone == "pred/d.txt")  # c has no prediction file
    assert (blobs[0][1] is None) == (gone == "gt/b.txt")
    assert _outcome(run, blobs=blobs) == _outcome(specs)


def _all_runs(specs):
    return [(list(run), blobs) for run, blobs in read_frame_batches(specs, 5, 1 << 20)]


def test_frames_with_boxes_read_already_read_no_file(write_labels):
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
    assert [blob for _, (gt, _) in expected for blob in gt] == [
        b"" if s.gt_boxes is not None else (root / "gt" / f"{s.name}.txt").read_bytes() for s in specs]
    assert [blob for _, (_, pred) in expected for blob in pred] == [
        b"" if s.pred_boxes is not None else (root / "pred" / f"{s.name}.txt").read_bytes() for s in specs]
    nothing = [s._replace(gt_boxes=read, pred_boxes=read) for s in specs]  # every side read whole
    assert all(blob == b"" for _, sides in _all_runs(nothing) for side in sides for blob in side)
