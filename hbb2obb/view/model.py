"""What the review page shows: the frames, each side's boxes, and each set's match with the ground truth.

With ground truth, every label set is scored by the scoring core (the
:class:`~hbb2obb.scoring.evaluate.MatchTable` that ``hbb2obb-eval`` builds: one matching code
path) and the page shows that table's pairs. Without it, the sets are read whole by the label
readers (:func:`~hbb2obb.io.label_sets.read_set`) and shown unmatched.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from hbb2obb.boxes import Boxes
from hbb2obb.errors import InputError


@dataclass(frozen=True)
class Layer:
    """The boxes of one side (ground truth, a label set, the HBB prompts), every frame's, in frame order.

    ``frame`` indexes :attr:`ViewData.frames`; ``files`` gives, per view frame, the file its boxes
    came from (``None``: the side has no file for that frame).
    """

    boxes: Boxes
    frame: np.ndarray
    files: tuple

    def bounds(self, n_frames: int) -> np.ndarray:
        """``starts`` such that frame ``i``'s rows are ``starts[i]:starts[i + 1]``."""
        return np.searchsorted(self.frame, np.arange(n_frames + 1), side="left")


@dataclass(frozen=True)
class Matching:
    """One label set's match with the ground truth, by row of :attr:`ViewData.gt` and of the set's layer.

    ``gt_pred`` is the matched prediction of each ground-truth box (-1: none), with ``gt_iou``
    and ``gt_angle`` (NaN: none). ``pred_gt`` is, for each prediction chosen by some ground-truth
    box, the one it overlaps most (several may choose it under non-exclusive matching), with
    ``pred_iou``; -1 and NaN for a prediction nobody chose.
    """

    gt_pred: np.ndarray
    gt_iou: np.ndarray
    gt_angle: np.ndarray
    pred_gt: np.ndarray
    pred_iou: np.ndarray


@dataclass(frozen=True)
class LabelSetView:
    """One label set of the page: its shown name, its boxes and (with ground truth) its matching."""

    name: str
    layer: Layer
    matching: Optional[Matching] = None


@dataclass(frozen=True)
class ViewData:
    """Everything the page shows, frame by frame.

    ``frame_sizes`` are the sizes the label coordinates refer to (NaN where unknown), as in
    :attr:`~hbb2obb.scoring.evaluate.MatchTable.frame_sizes`.
    """

    frames: tuple
    frame_sizes: np.ndarray
    sets: tuple
    gt: Optional[Layer] = None
    prompts: Optional[Layer] = None
    class_names: Optional[dict] = None


def _in_frame_order(boxes: Boxes, frame: np.ndarray) -> tuple[Boxes, np.ndarray]:
    """Rows sorted by frame (stable: file order kept within a frame); the page slices frames by bounds."""
    frame = np.asarray(frame, dtype=np.int64)
    if len(frame) and np.any(np.diff(frame) < 0):
        order = np.argsort(frame, kind="stable")
        return boxes[order], frame[order]
    return boxes, frame


def best_gt_of_pred(matched: np.ndarray, pred_index: np.ndarray, iou: np.ndarray, n_pred: int) -> tuple:
    """For each prediction, the ground-truth row that chose it with the highest IoU (-1: none), and that IoU.

    Examples
    --------
    >>> rows, ious = best_gt_of_pred(np.array([True, True, False]), np.array([1, 1, 0]),
    ...                              np.array([0.6, 0.8, np.nan]), 3)
    >>> rows.tolist(), ious.tolist()[1]
    ([-1, 1, -1], 0.8)
    """
    pred_gt = np.full(n_pred, -1, dtype=np.int64)
    pred_iou = np.full(n_pred, np.nan)
    hit = np.flatnonzero(matched)
    if hit.size:
        # ascending IoU, so the last write of each prediction is its best ground-truth box
        order = hit[np.lexsort((iou[hit], pred_index[hit]))]
        pred_gt[pred_index[order]] = order
        pred_iou[pred_index[order]] = iou[order]
    return pred_gt, pred_iou


def from_results(results, names) -> ViewData:
    """The page's data from the evaluations of each label set against one ground truth.

    Parameters
    ----------
    results : sequence of EvaluationResult
        ``evaluate_frames(GT, set)`` of each set, with the same settings and ``missing_pred="empty"``,
        so every one holds the same ground-truth frames and rows.
    names : sequence of str
        The sets' shown names.

    Raises
    ------
    InputError
        The evaluations disagree on the ground truth (they were not run on one folder).
    """
    first = results[0].table
    frames = tuple(first.frame_names)
    gt_files = {spec.name: spec.gt_file for spec in results[0].plan.frames}
    gt = Layer(first.gt, np.asarray(first.gt_frame, dtype=np.int64), tuple(gt_files.get(n) for n in frames))
    sets = []
    for result, name in zip(results, names):
        table = result.table
        if tuple(table.frame_names) != frames or len(table.gt) != len(first.gt):
            raise InputError(f"{name}: scored against other ground-truth frames than {names[0]}")
        pred_files = {spec.name: spec.pred_file for spec in result.plan.frames}
        gt_pred = np.where(table.matched, table.pred_index, -1).astype(np.int64)
        pred_gt, pred_iou = best_gt_of_pred(table.matched, table.pred_index, table.iou, len(table.pred))
        layer = Layer(table.pred, np.asarray(table.pred_frame, dtype=np.int64),
                      tuple(pred_files.get(n) for n in frames))
        matching = Matching(gt_pred, np.asarray(table.iou, dtype=np.float64),
                            np.asarray(table.angle_error, dtype=np.float64), pred_gt, pred_iou)
        sets.append(LabelSetView(name, layer, matching))
    return ViewData(frames, np.asarray(first.frame_sizes, dtype=np.float64).reshape(-1, 2), tuple(sets), gt)


def layer_of_set(label_set, frames: tuple) -> Layer:
    """A :class:`~hbb2obb.io.label_sets.LabelSet` as a layer over ``frames`` (frames it lacks: no boxes)."""
    position = {name: i for i, name in enumerate(frames)}
    parts, frame_of, files = [], [], [None] * len(frames)
    for labels in label_set.frames:
        index = position.get(labels.stem)
        if index is None:
            continue
        where = str(labels.source) if labels.source.stem == labels.stem else f"{labels.source}:{labels.stem}"
        files[index] = where
        boxes = labels.boxes
        # readers that cannot carry a confidence give none; a set mixes per-frame readers never
        parts.append(Boxes(boxes.corners, boxes.class_id, score=boxes.score, line=boxes.line))
        frame_of.append(np.full(len(boxes), index, dtype=np.int64))
    scored = [p for p in parts if len(p)]
    if scored and any(p.score is None for p in scored):  # some frames without confidences: show none
        parts = [Boxes(p.corners, p.class_id, line=p.line) for p in parts]
    boxes = Boxes.concatenate(parts) if parts else Boxes.empty()
    frame = np.concatenate(frame_of) if frame_of else np.zeros(0, dtype=np.int64)
    boxes, frame = _in_frame_order(boxes, frame)
    return Layer(boxes, frame, tuple(files))


def from_label_sets(label_sets, names) -> ViewData:
    """The page's data from label sets shown without ground truth: every frame any set has, by name."""
    frames = tuple(sorted({labels.stem for label_set in label_sets for labels in label_set.frames}))
    sizes = np.full((len(frames), 2), np.nan)
    position = {name: i for i, name in enumerate(frames)}
    for label_set in label_sets:
        for labels in label_set.frames:
            if labels.size is not None:
                sizes[position[labels.stem]] = labels.size
    sets = tuple(LabelSetView(name, layer_of_set(label_set, frames)) for label_set, name in zip(label_sets, names))
    return ViewData(frames, sizes, sets)
