"""Frames' label files read a group at a time, ahead of the parsing, and cut into chunks.

Asking the file system for every file's size costs about what reading a small file costs, so
the chunks of :func:`~hbb2obb.scoring.evaluate.evaluate_frames` are sized by the bytes read
instead; with one process, a helper process reads the next group while the current chunk is
matched (:mod:`hbb2obb.io.reader_process`).
"""

from __future__ import annotations

import bisect
import itertools
import operator

from hbb2obb.io.text import read_blobs
from hbb2obb.frames.pairing import spec_column


def _file_bytes(paths: list) -> list:
    """The bytes of each file; ``b""`` where there is no file (``None``), ``None`` where it cannot be read."""
    if None not in paths:  # the usual case: no step per file here
        return read_blobs(paths)
    present = [path for path in paths if path is not None]
    found = iter(read_blobs(present))
    return [b"" if path is None else next(found) for path in paths]


def _group_paths(chosen) -> tuple[list, list]:
    """The ground-truth and prediction files a group of frames reads (``None``: no file, or boxes read already)."""
    gt_boxes, pred_boxes = spec_column(chosen, "gt_boxes"), spec_column(chosen, "pred_boxes")
    gt_paths, pred_paths = spec_column(chosen, "gt_file"), spec_column(chosen, "pred_file")
    if gt_boxes.count(None) < len(chosen):  # a side read whole reads no file
        gt_paths = [None if boxes is not None else path for path, boxes in zip(gt_paths, gt_boxes)]
    if pred_boxes.count(None) < len(chosen):
        pred_paths = [None if boxes is not None else path for path, boxes in zip(pred_paths, pred_boxes)]
    return gt_paths, pred_paths


def _read_group(chosen) -> tuple[list, list]:
    """The ground-truth and prediction bytes of a group of frames (see :func:`read_frame_batches`)."""
    gt_paths, pred_paths = _group_paths(chosen)
    return _file_bytes(gt_paths), _file_bytes(pred_paths)


class _AheadReader:
    """The next group of frames, read by the helper process while the caller works on the group before.

    :meth:`submit` hands a group's files to the helper, :meth:`result` returns their bytes.
    Should the helper fail in any way (it cannot start, it died), the group is read here, and
    so is every later one: the bytes never depend on who read them.
    """

    def __init__(self):
        self._helper, self._started, self.chosen, self._paths = None, False, None, None

    def submit(self, chosen) -> None:
        self.chosen, self._paths = chosen, _group_paths(chosen)
        present = self._paths[0] + self._paths[1]
        if None in present:
            present = [path for path in present if path is not None]
        if not present:
            return
        from hbb2obb.io.reader_process import ReaderGone, ReaderProcess

        try:
            if not self._started:
                self._started = True
                self._helper = ReaderProcess()
            if self._helper is not None:
                self._helper.submit(present)
                return
        except ReaderGone:
            self.close()  # from now on every group is read here
        self._paths = None  # read by result(), here

    def result(self) -> tuple[list, list]:
        chosen, paths, self.chosen, self._paths = self.chosen, self._paths, None, None
        if paths is None:
            return _read_group(chosen)
        from hbb2obb.io.reader_process import ReaderGone

        absent = paths[0].count(None) + paths[1].count(None)
        if absent == len(paths[0]) + len(paths[1]):
            return [b""] * len(paths[0]), [b""] * len(paths[1])  # nothing was submitted
        try:
            found = self._helper.collect()
        except ReaderGone:
            self._helper = None
            return _read_group(chosen)
        if not absent:  # the usual case: every frame has both files
            return found[:len(paths[0])], found[len(paths[0]):]
        found = iter(found)
        return tuple([b"" if path is None else next(found) for path in side] for side in paths)

    @property
    def waiting(self) -> bool:
        return self.chosen is not None

    def close(self) -> None:
        if self._helper is not None:
            self._helper.close()
            self._helper = None


_FIRST_GROUP = 16  # frames of the first group: a set of a few huge frames reads little before its sizes are known
_GROWTH = 4  # with the helper, each group (and run) at most this many times the one before
_EARLY_GROUP = 64  # frames of the first group then, read here while the helper starts


def read_frame_batches(specs, max_frames: int, max_bytes: int, *, read_ahead: bool = False):
    """Runs of consecutive frames with their label files read: yields ``(specs, (gt_bytes, pred_bytes))``.

    Each run holds at most ``max_frames`` frames and, unless one frame alone is larger, at
    most ``max_bytes`` of label text: memory follows the largest frame, never the number of
    frames. The sizes are learnt by reading, never asked for (a ``stat`` per file costs
    about what reading a small file costs): the files are read a group at a time, each group
    sized from the bytes per frame read so far, and the groups cut into runs. A file that
    cannot be read gives ``None``, and the careful reader of :func:`load_frames` says why; a
    frame's boxes read already (:attr:`FrameSpec.gt_boxes`, ``pred_boxes``) read no file.

    ``read_ahead``: when the frames are more than one run's worth, the next group is read by a
    helper process while the caller works on this one's runs (:class:`_AheadReader`); the
    helper ends with the batches, however they end. Then a run never spans two groups, and the
    groups start small and grow (64 frames, read in this process while the helper starts, then
    at most four times the group before, and about one run's bytes): the caller parses the
    first frames at once instead of waiting for a whole run to be read, and works on each run
    while the helper reads the next. Without the helper, runs are greedy: a run ends only
    where the next frame would break a budget.
    """
    specs = tuple(specs)
    run, gt_run, pred_run, run_bytes = [], [], [], 0
    start, group = 0, _FIRST_GROUP
    ahead = None
    if read_ahead and len(specs) > max_frames:  # more than one run, whatever the sizes:
        ahead = _AheadReader()  # the helper starts, and reads the second group, while the first is read here
        group = min(_EARLY_GROUP, max_frames)  # and worked on: about as long as the helper takes to start
        ahead.submit(specs[group:group + min(_GROWTH * group, max_frames)])
    try:
        while start < len(specs):
            if ahead is not None and ahead.waiting and start > 0:
                chosen, (gt_blobs, pred_blobs) = ahead.chosen, ahead.result()
            else:
                chosen = specs[start:start + group]
                gt_blobs, pred_blobs = _read_group(chosen)
            start += len(chosen)
            if None in gt_blobs or None in pred_blobs:  # an unreadable file: no bytes of its own
                sizes = [len(g or b"") + len(p or b"") for g, p in zip(gt_blobs, pred_blobs)]
            else:
                sizes = list(map(operator.add, map(len, gt_blobs), map(len, pred_blobs)))
            group_bytes = sum(sizes)
            per_frame = max(group_bytes / len(chosen), 1.0)
            if read_ahead and ahead is None and start < len(specs) and per_frame * len(specs) > max_bytes:
                ahead = _AheadReader()  # more than one run by the bytes: reading beside the work pays for the helper's start
            if ahead is None:  # the next group: about a quarter of a run's bytes
                group = int(min(max(max_bytes / 4 / per_frame, 1), max_frames))
            else:  # about one run's bytes (a little less: an estimate a little high would cut off a short run)
                group = int(min(max(max_bytes * 0.9 / per_frame, 1), max_frames, _GROWTH * len(chosen)))
                if start < len(specs) and not ahead.waiting:
                    ahead.submit(specs[start:start + group])
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
                if taken < len(chosen) or len(run) >= max_frames or (ahead is not None and run):
                    yield run, (gt_run, pred_run)  # with the helper, the group's last run too: the next is being read
                    run, gt_run, pred_run, run_bytes = [], [], [], 0
        if run:
            yield run, (gt_run, pred_run)
    finally:
        if ahead is not None:  # however the batches end (an error in the caller too): the helper ends
            ahead.close()
