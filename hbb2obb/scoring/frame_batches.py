"""Frames' label files read a group at a time, ahead of the parsing, and cut into chunks.

Asking the file system for every file's size costs about what reading a small file costs, so
the chunks of :func:`~hbb2obb.scoring.evaluate.evaluate_frames` are sized by the bytes read
instead; with one process, a thread reads the next group while the current chunk is matched.
"""

from __future__ import annotations

import bisect
import itertools
import operator
import threading

from hbb2obb.io.text import read_blobs
from hbb2obb.scoring.frames import spec_column


def _file_bytes(paths: list) -> list:
    """The bytes of each file; ``b""`` where there is no file (``None``), ``None`` where it cannot be read."""
    present = [path for path in paths if path is not None]
    if len(present) == len(paths):
        return read_blobs(paths)
    found = iter(read_blobs(present))
    return [b"" if path is None else next(found) for path in paths]


def _read_group(chosen) -> tuple[list, list]:
    """The ground-truth and prediction bytes of a group of frames (see :func:`read_frame_batches`)."""
    gt_boxes, pred_boxes = spec_column(chosen, "gt_boxes"), spec_column(chosen, "pred_boxes")
    gt_paths, pred_paths = spec_column(chosen, "gt_file"), spec_column(chosen, "pred_file")
    if gt_boxes.count(None) < len(chosen):  # a side read whole reads no file
        gt_paths = [None if boxes is not None else path for path, boxes in zip(gt_paths, gt_boxes)]
    if pred_boxes.count(None) < len(chosen):
        pred_paths = [None if boxes is not None else path for path, boxes in zip(pred_paths, pred_boxes)]
    return _file_bytes(gt_paths), _file_bytes(pred_paths)


class _GroupReader:
    """One group of label files read by a thread of its own, while the caller parses the group before.

    ``os.open``, ``os.read`` and ``os.close`` release the GIL, so the kernel's share of reading
    (most of it, for small files) runs beside the parsing. The thread reads one group and ends;
    :meth:`result` waits for it, so no thread outlives the reading.
    """

    def __init__(self, chosen):
        self.chosen, self._found, self._error = chosen, None, None
        self._thread = threading.Thread(target=self._read, name="hbb2obb-read-ahead", daemon=True)
        self._thread.start()

    def _read(self):
        try:
            self._found = _read_group(self.chosen)
        except BaseException as exc:  # re-raised in the caller's thread by result()
            self._error = exc

    def result(self) -> tuple[list, list]:
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._found


def read_frame_batches(specs, max_frames: int, max_bytes: int, *, read_ahead: bool = False):
    """Runs of consecutive frames with their label files read: yields ``(specs, (gt_bytes, pred_bytes))``.

    Each run holds at most ``max_frames`` frames and, unless one frame alone is larger, at
    most ``max_bytes`` of label text: memory follows the largest frame, never the number of
    frames. The sizes are learnt by reading, never asked for (a ``stat`` per file costs
    about what reading a small file costs): the files are read a group at a time, each group
    sized from the bytes per frame read so far, and the groups cut into runs. A file that
    cannot be read gives ``None``, and the careful reader of :func:`load_frames` says why; a
    frame's boxes read already (:attr:`FrameSpec.gt_boxes`, ``pred_boxes``) read no file.

    ``read_ahead``: the next group is read by a thread while the caller works on this one's
    runs (:class:`_GroupReader`). Never while another process may be forked from this one.
    """
    specs = tuple(specs)
    run, gt_run, pred_run, run_bytes = [], [], [], 0
    start, group = 0, 16  # a small first group: a set of a few huge frames reads little ahead
    pending = None
    try:
        while start < len(specs):
            if pending is not None:
                chosen, (gt_blobs, pred_blobs) = pending.chosen, pending.result()
                pending = None
            else:
                chosen = specs[start:start + group]
                gt_blobs, pred_blobs = _read_group(chosen)
            start += len(chosen)
            if None in gt_blobs or None in pred_blobs:  # an unreadable file: no bytes of its own
                sizes = [len(g or b"") + len(p or b"") for g, p in zip(gt_blobs, pred_blobs)]
            else:
                sizes = list(map(operator.add, map(len, gt_blobs), map(len, pred_blobs)))
            group_bytes = sum(sizes)
            per_frame = max(group_bytes / len(chosen), 1.0)  # the next group: about a quarter of a run's bytes
            group = int(min(max(max_bytes / 4 / per_frame, 1), max_frames))
            if read_ahead and start < len(specs):
                pending = _GroupReader(specs[start:start + group])
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
    finally:
        if pending is not None:  # the caller stopped early (an error): no thread is left running
            pending._thread.join()
