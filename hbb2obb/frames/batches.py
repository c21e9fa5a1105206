"""Frames' label files read a group at a time and cut into chunks.

Asking the file system for every file's size costs about what reading a small file costs, so
the chunks of :func:`~hbb2obb.scoring.evaluate.evaluate_frames` are sized by the bytes read
instead.
"""

from __future__ import annotations

import bisect
import itertools
import operator

from hbb2obb.frames.pairing import spec_column
from hbb2obb.io.text import read_blobs


def _file_bytes(paths: list) -> list:
    """The bytes of each file; ``b""`` where there is no file (``None``), ``None`` where it cannot be read."""
    if None not in paths:  # the usual case: no step per file here
        return read_blobs(paths)
    present = [path for path in paths if path is not None]
    found = iter(read_blobs(present))
    return [b"" if path is None else next(found) for path in paths]


def _read_group(chosen) -> tuple[list, list]:
    """The ground-truth and prediction bytes of a group of frames (``b""``: no file, or boxes read already)."""
    gt_boxes, pred_boxes = spec_column(chosen, "gt_boxes"), spec_column(chosen, "pred_boxes")
    gt_paths, pred_paths = spec_column(chosen, "gt_file"), spec_column(chosen, "pred_file")
    if gt_boxes.count(None) < len(chosen):  # a side read whole reads no file
        gt_paths = [None if boxes is not None else path for path, boxes in zip(gt_paths, gt_boxes)]
    if pred_boxes.count(None) < len(chosen):
        pred_paths = [None if boxes is not None else path for path, boxes in zip(pred_paths, pred_boxes)]
    return _file_bytes(gt_paths), _file_bytes(pred_paths)


_FIRST_GROUP = 16  # frames of the first group: a set of a few huge frames reads little before its sizes are known


def read_frame_batches(specs, max_frames: int, max_bytes: int):
    """Runs of consecutive frames with their label files read: yields ``(specs, (gt_bytes, pred_bytes))``.

    Each run holds at most ``max_frames`` frames and, unless one frame alone is larger, at
    most ``max_bytes`` of label text: memory follows the largest frame, never the number of
    frames. The sizes are learnt by reading, never asked for (a ``stat`` per file costs
    about what reading a small file costs): the files are read a group at a time, each group
    about a quarter of a run's bytes by the bytes per frame read so far, and the groups cut
    into runs. Runs are greedy: a run ends only where the next frame would break a budget. A
    file that cannot be read gives ``None``, and the careful reader of :func:`load_frames`
    says why; a frame's boxes read already (:attr:`FrameSpec.gt_boxes`, ``pred_boxes``) read
    no file.
    """
    specs = tuple(specs)
    run, gt_run, pred_run, run_bytes = [], [], [], 0
    start, group = 0, _FIRST_GROUP
    while start < len(specs):
        chosen = specs[start:start + group]
        gt_blobs, pred_blobs = _read_group(chosen)
        start += len(chosen)
        if None in gt_blobs or None in pred_blobs:  # an unreadable file: no bytes of its own
            sizes = [len(g or b"") + len(p or b"") for g, p in zip(gt_blobs, pred_blobs)]
        else:
            sizes = list(map(operator.add, map(len, gt_blobs), map(len, pred_blobs)))
        per_frame = max(sum(sizes) / len(chosen), 1.0)
        group = int(min(max(max_bytes / 4 / per_frame, 1), max_frames))
        taken = 0
        while taken < len(chosen):  # cut the group into runs: as many frames as fit, by slices
            room_frames = max_frames - len(run)
            fit = bisect.bisect_right(list(itertools.accumulate(sizes[taken:taken + room_frames])),
                                      max_bytes - run_bytes)
            if fit == 0 and not run:
                fit = 1  # a frame larger than the byte budget: a run of its own
            if fit:
                run += chosen[taken:taken + fit]
                gt_run += gt_blobs[taken:taken + fit]
                pred_run += pred_blobs[taken:taken + fit]
                run_bytes += sum(sizes[taken:taken + fit])
                taken += fit
            if taken < len(chosen) or len(run) >= max_frames:
                yield run, (gt_run, pred_run)
                run, gt_run, pred_run, run_bytes = [], [], [], 0
    if run:
        yield run, (gt_run, pred_run)
