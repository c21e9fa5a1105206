"""Loading the frames of a plan (:mod:`hbb2obb.frames.pairing`): boxes parsed, repaired, ready for matching."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import numpy as np

from hbb2obb.boxes import Boxes
from hbb2obb.errors import InputError
from hbb2obb.frames.pairing import FrameSpec, spec_column
from hbb2obb.geometry import repair_corners
from hbb2obb.io import ImageSizes
from hbb2obb.io.text import NORMALIZED_LIMIT
from hbb2obb.io.yolo_obb import LabelBatch, read_obb_batch


@dataclass
class FrameHealth:
    """Counts of what was repaired or skipped while loading, summed over frames."""

    skipped_pred_lines: int = 0
    reordered_boxes: int = 0
    degenerate_boxes: int = 0
    concave_boxes: int = 0
    total_edge_cases: int = 0
    problems: list = field(default_factory=list)
    normalized_sides: set = field(default_factory=set)
    scored_pred_files: int = 0  # prediction files with boxes, every one with a confidence
    unscored_pred_files: int = 0  # prediction files with boxes, some without
    scored_pred_lines: int = 0  # prediction lines with a confidence
    #: ``(path, line)`` of the first prediction line without a confidence, in frame order
    first_unscored_pred: Optional[tuple] = None
    #: ground-truth files with a confidence column (a sign the folders were swapped), and the first of them
    scored_gt_files: int = 0
    first_scored_gt: Optional[str] = None
    #: ``{side: (a normalized file, a pixel file)}``, first seen, for a side whose files disagree
    mixed_files: dict = field(default_factory=dict)
    #: boxes of files in pixels whose coordinates would pass for normalized ones, and ``(path, line)``
    #: of the first (a normalized line among pixel ones: read as a box of a pixel or two)
    unit_boxes: int = 0
    first_unit_box: Optional[tuple] = None

    def add(self, other: "FrameHealth") -> None:
        self.scored_pred_files += other.scored_pred_files
        self.unscored_pred_files += other.unscored_pred_files
        self.scored_pred_lines += other.scored_pred_lines
        self.first_unscored_pred = self.first_unscored_pred or other.first_unscored_pred
        self.scored_gt_files += other.scored_gt_files
        self.first_scored_gt = self.first_scored_gt or other.first_scored_gt
        self.skipped_pred_lines += other.skipped_pred_lines
        self.reordered_boxes += other.reordered_boxes
        self.degenerate_boxes += other.degenerate_boxes
        self.concave_boxes += other.concave_boxes
        self.total_edge_cases += other.total_edge_cases
        self.problems.extend(other.problems)
        self.normalized_sides |= other.normalized_sides
        for side, files in other.mixed_files.items():
            self.mixed_files.setdefault(side, files)
        self.unit_boxes += other.unit_boxes
        self.first_unit_box = self.first_unit_box or other.first_unit_box


@dataclass(frozen=True)
class LoadedFrame:
    """One frame's boxes after repair, scaling and exclusions."""

    name: str
    gt: Boxes
    pred: Boxes
    size: Optional[tuple[float, float]]


@dataclass(frozen=True)
class LoadedFrames:
    """Several frames' boxes after repair, scaling and exclusions, frame after frame.

    ``gt_frame`` and ``pred_frame`` give the frame (index into ``names``) of every box.
    ``edge_gt`` and ``edge_gt_frame`` hold the ground-truth boxes ``--exclude_edge_cases`` dropped
    (empty otherwise): not scored, but a prediction of one is not a spurious box.
    """

    names: tuple
    sizes: tuple
    gt: Boxes
    gt_frame: np.ndarray
    pred: Boxes
    pred_frame: np.ndarray
    edge_gt: Boxes = field(default_factory=Boxes.empty)
    edge_gt_frame: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))

    def frame(self, index: int) -> LoadedFrame:
        """One of the frames on its own."""
        return LoadedFrame(self.names[index], self.gt[self.gt_frame == index], self.pred[self.pred_frame == index],
                           self.sizes[index])


def _repair(boxes: Boxes, health: FrameHealth) -> Boxes:
    if len(boxes) == 0:
        return boxes
    corners, reordered, degenerate, concave = repair_corners(boxes.corners, with_degenerate=True, with_concave=True,
                                                             copy=False)  # a copy only when a box is reordered
    health.reordered_boxes += int(reordered.sum())
    health.degenerate_boxes += int(degenerate.sum())
    health.concave_boxes += int(concave.sum())
    return boxes.with_corners(corners) if reordered.any() else boxes


def touches_edge(corners: np.ndarray, width: float, height: float, tolerance: float) -> np.ndarray:
    """Boxes with any corner within ``tolerance`` px of the frame border (``<=``, inclusive)."""
    x, y = corners[..., 0], corners[..., 1]
    near = (x <= tolerance) | (x >= width - tolerance) | (y <= tolerance) | (y >= height - tolerance)
    return near.any(axis=-1)


def _frame_sizes(specs, sizes: ImageSizes, exclude_edge_cases: bool):
    """Each frame's size, and the first frame whose size fails (with its error), if any."""
    if isinstance(sizes, ImageSizes) and not sizes.known:  # no image, no fixed size: only what files record
        found = spec_column(specs, "recorded_size")
        if not exclude_edge_cases or None not in found:
            return found, None
        found = found[:found.index(None) + 1]  # the loop below names the first frame without a size
        specs = specs[:len(found)]
    found = []
    for index, spec in enumerate(specs):
        try:
            size = sizes(spec.name)
        except InputError as exc:
            return found, (index, exc)
        if size is None:  # what the ground truth's (or predictions') file records, when no image says
            size = spec.recorded_size
        if size is None and exclude_edge_cases:
            return found, (index, InputError(
                f"{spec.gt_path}: frame size unknown, needed by --exclude_edge_cases (no image found)"))
        found.append(size)
    return found, None


def _read_frames(specs: list, label_map: Optional[dict], blobs: Optional[tuple] = None):
    """The label files of the frames, ground truth then predictions, read in frame order.

    Reading each side as one run keeps its boxes together; ``order`` keeps the first error
    the one that reading frame after frame (ground truth, then prediction) meets. ``blobs``
    are the files' bytes, ``(gt_bytes, pred_bytes)``, when read already
    (:func:`~hbb2obb.frames.batches.read_frame_batches`).
    """
    n = len(specs)
    paths = spec_column(specs, "gt_file") + spec_column(specs, "pred_file")
    strict = np.repeat([True, False], n)
    order = np.arange(2 * n).reshape(2, n).T.reshape(-1)  # 0, n, 1, n + 1, ...
    contents = None if blobs is None else list(blobs[0][:n]) + list(blobs[1][:n])
    given = spec_column(specs, "gt_boxes") + spec_column(specs, "pred_boxes")
    read = {} if given.count(None) == len(given) else {i: boxes for i, boxes in enumerate(given) if boxes is not None}
    if not read:
        return read_obb_batch(paths, strict=strict, label_map=label_map, order=order, blobs=contents)
    batch = read_obb_batch([None if i in read else p for i, p in enumerate(paths)], strict=strict,
                           label_map=label_map, order=order, blobs=contents)
    return _with_read_boxes(batch, read)


def _with_read_boxes(batch: LabelBatch, read: dict) -> LabelBatch:
    """The batch with the boxes of the files read already (``{file index: Boxes}``, pixels) in their places."""
    from hbb2obb.io.text import LabelFile
    from hbb2obb.io.yolo_obb import _merge

    files = {i: LabelFile(Path(batch.paths[i] or ""), boxes, (), False if len(boxes) else None)
             for i, boxes in read.items()}
    rows, _ = _merge(batch.rows, files)
    # _merge orders rows stably by file, the batch's first: the same order carries the batch's flags
    file = np.concatenate([batch.rows.file] + [np.full(len(b), i, dtype=np.int64) for i, b in read.items()])
    order = np.argsort(file, kind="stable")
    difficult = np.concatenate([batch.difficult] + [
        np.zeros(len(b), dtype=bool) if b.difficult is None else b.difficult for b in read.values()])[order]
    has_difficult = batch.has_difficult.copy()
    for i, boxes in read.items():
        has_difficult[i] = boxes.difficult is not None
    crowd = None
    if any(boxes.crowd is not None for boxes in read.values()):  # only COCO carries crowd regions
        own = np.zeros(len(batch.rows.file), dtype=bool) if batch.crowd is None else batch.crowd
        crowd = np.concatenate([own] + [
            np.zeros(len(b), dtype=bool) if b.crowd is None else b.crowd for b in read.values()])[order]
    return LabelBatch(batch.paths, rows, difficult, has_difficult, batch.problems, crowd)


def _note_unit_boxes(batch: LabelBatch, codes: np.ndarray, health: FrameHealth) -> None:
    """Count the boxes of files in pixels that would pass for normalized ones (every coordinate
    within :data:`~hbb2obb.io.text.NORMALIZED_LIMIT`, the rule that reads a file as normalized):
    a file is normalized only when all its lines are, so one normalized line among pixel lines
    (a tool that wrote some boxes one way and some the other) is read as a box of a pixel or two
    at the frame's corner, which matches nothing."""
    rows = batch.rows
    pixel_rows = codes[rows.file] == 0
    if not pixel_rows.any():
        return
    # the first coordinate alone rules out nearly every box: only the few left are checked whole
    maybe = np.flatnonzero(pixel_rows & (np.abs(rows.corners[:, 0, 0]) <= NORMALIZED_LIMIT))
    unit = maybe[np.abs(rows.corners[maybe].reshape(-1, 8)).max(axis=1, initial=0.0) <= NORMALIZED_LIMIT]
    if unit.size:
        first = int(unit[0])
        health.unit_boxes += int(unit.size)
        health.first_unit_box = (str(batch.paths[rows.file[first]]), int(rows.line[first]))


def _note_confidences(batch: LabelBatch, n: int, health: FrameHealth) -> None:
    """Which lines carry a confidence: the first prediction line without one (when others have
    one, AP is not computed and the user must find it) and ground-truth files with one."""
    rows = batch.rows
    pred = rows.rows_of(slice(n, 2 * n))
    scored = ~np.isnan(rows.score[pred])
    health.scored_pred_lines += int(np.count_nonzero(scored))
    if not scored.all():  # rows are in file order, each file's in line order: the first is the first met
        first = int(np.argmax(~scored))
        health.first_unscored_pred = (str(batch.paths[rows.file[pred][first]]), int(rows.line[pred][first]))
    gt = rows.rows_of(slice(0, n))
    with_score = np.unique(rows.file[gt][~np.isnan(rows.score[gt])])
    if len(with_score):
        health.scored_gt_files += len(with_score)
        health.first_scored_gt = str(batch.paths[with_score[0]])


def load_frames(
    specs,
    *,
    sizes: ImageSizes,
    label_map: Optional[dict],
    excluded_classes: tuple = (),
    exclude_edge_cases: bool = False,
    edge_tolerance: float = 1.0,
    blobs: Optional[tuple] = None,
) -> tuple[LoadedFrames, FrameHealth]:
    """Read, repair, scale and filter several frames at once. Broken ground truth raises; predictions skip.

    The label files of all the frames are read in one batch (:func:`read_obb_batch`) and every
    later step works on the boxes of all frames together. Counts, warnings and the first error
    are those of loading the frames one by one, in order.

    Parameters
    ----------
    specs : sequence of FrameSpec
    sizes : ImageSizes
    label_map : dict, optional
    excluded_classes : tuple of int
        Classes dropped on both sides.
    exclude_edge_cases : bool
        Drop ground-truth boxes touching the frame border (needs every frame's size).
    edge_tolerance : float
    blobs : (list, list), optional
        The bytes of the frames' ground-truth and prediction files, read already
        (:func:`~hbb2obb.frames.batches.read_frame_batches`); by default the files are read here.

    Returns
    -------
    LoadedFrames, FrameHealth
    """
    health = FrameHealth()
    specs = list(specs)
    frame_sizes, failure = _frame_sizes(specs, sizes, exclude_edge_cases)
    if failure is not None:
        _read_frames(specs[: failure[0] + 1], label_map, blobs)  # the frame's own label files are read before its size
        raise failure[1]
    batch = _read_frames(specs, label_map, blobs)
    n = len(specs)
    codes = batch.rows.normalized  # per file: 1 normalized, 0 absolute, -1 no boxes; ground truth first
    unknown = not any(frame_sizes)  # the usual case of pixel labels: no frame size at all
    known = np.zeros(n, dtype=bool) if unknown else np.array([size is not None for size in frame_sizes], dtype=bool)
    if (codes[:n] == 1).any():
        health.normalized_sides.add("ground truth")
    if (codes[n:] == 1).any():
        health.normalized_sides.add("predictions")
    if (~known & (codes[:n] >= 0) & (codes[n:] >= 0) & (codes[:n] != codes[n:])).any():
        health.normalized_sides.add("mixed")
    for side, files in (("ground truth", slice(0, n)), ("predictions", slice(n, 2 * n))):
        side_codes = codes[files]
        if (side_codes == 1).any() and (side_codes == 0).any():  # a mixed data set: name one file of each
            paths = batch.paths[files]
            health.mixed_files[side] = (paths[int(np.argmax(side_codes == 1))], paths[int(np.argmax(side_codes == 0))])
    _note_unit_boxes(batch, codes, health)
    size_array = np.ones((n, 2)) if unknown else np.array(
        [(1.0, 1.0) if size is None else size for size in frame_sizes], dtype=np.float64).reshape(-1, 2)
    scale = np.ones((2 * n, 2))
    scaled = (codes == 1) & np.tile(known, 2)
    scale[scaled] = np.tile(size_array, (2, 1))[scaled]
    with_boxes = codes[n:] >= 0
    health.scored_pred_files += int(np.count_nonzero(batch.rows.has_score[n:] & with_boxes))
    health.unscored_pred_files += int(np.count_nonzero(~batch.rows.has_score[n:] & with_boxes))
    _note_confidences(batch, n, health)
    for problems in filter(None, batch.problems[n:]):  # the files with skipped lines only (few, if any)
        health.skipped_pred_lines += len(problems)
        health.problems.extend(problems)
    sides = []
    for files in (slice(0, n), slice(n, 2 * n)):  # each side's files are a run: its boxes need no gather
        boxes, file = batch.boxes(files), batch.rows.file[batch.rows.rows_of(files)]
        if len(boxes) and (scale[files] != 1.0).any():
            boxes = boxes.with_corners(boxes.corners * scale[file][:, None, :])
        sides.append([_repair(boxes, health), file - files.start])
    if excluded_classes:
        excluded = np.array(sorted(excluded_classes), dtype=np.int64)
        for side in sides:
            keep = ~np.isin(side[0].class_id, excluded)
            side[0], side[1] = side[0][keep], side[1][keep]
    if exclude_edge_cases:
        (gt, gt_frame), size_array = sides[0], np.array(frame_sizes, dtype=np.float64).reshape(-1, 2)
        edge = touches_edge(gt.corners, size_array[gt_frame, 0:1], size_array[gt_frame, 1:2], edge_tolerance)
        health.total_edge_cases += int(edge.sum())
        sides[0] = [gt[~edge], gt_frame[~edge]]
        sides.append([gt[edge], gt_frame[edge]])
    names = tuple(spec_column(specs, "name"))
    loaded = LoadedFrames(names, tuple(frame_sizes), sides[0][0], sides[0][1], sides[1][0], sides[1][1],
                          *(sides[2] if len(sides) > 2 else ()))
    return loaded, health


def load_frame(
    spec: FrameSpec,
    *,
    sizes: ImageSizes,
    label_map: Optional[dict],
    excluded_classes: tuple = (),
    exclude_edge_cases: bool = False,
    edge_tolerance: float = 1.0,
) -> tuple[LoadedFrame, FrameHealth]:
    """Read, repair, scale and filter one frame. Broken ground truth raises; predictions skip."""
    loaded, health = load_frames([spec], sizes=sizes, label_map=label_map, excluded_classes=excluded_classes,
                                 exclude_edge_cases=exclude_edge_cases, edge_tolerance=edge_tolerance)
    return loaded.frame(0), health
