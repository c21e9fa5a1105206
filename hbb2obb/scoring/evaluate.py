"""The scoring core: evaluate frames, accumulate one match table, summarize to the metric dict.

Three steps, as in COCOeval: :func:`evaluate_frames` loads and matches frames (in chunks, so the
IoU of many frames' candidate pairs is computed in one vectorized call, optionally in several
processes), :class:`MatchTable` accumulates every ground-truth box and prediction with its
match, and :func:`~hbb2obb.scoring.metric_dict.summarize` (a module above this one) turns the
table into the metric dict. Analysis cuts are masks over the same table.
"""

from __future__ import annotations

import collections
import functools
import itertools
import os
from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np

from hbb2obb.boxes import Boxes
from hbb2obb.detection.evaluate import COCO_IOU_THRESHOLDS, DetectionParams, frame_pairs
from hbb2obb.errors import UsageError
from hbb2obb.frames.batches import read_frame_batches
from hbb2obb.frames.loading import FrameHealth, load_frames
from hbb2obb.frames.pairing import MISSING_PRED_POLICIES, FramePlan, plan_any
from hbb2obb.geometry import candidate_pairs, iou_pairs, orientation_errors
from hbb2obb.geometry.exact import settle_ties
from hbb2obb.geometry.matching import match_pairs
from hbb2obb.io import ImageSizes
from hbb2obb.scoring.metrics import IOU_LADDER, dense_classes
from hbb2obb.scoring.overlap_metrics import DEFAULT_SPATIAL_THRESHOLD
from hbb2obb.scoring.run_warnings import run_warnings

CHUNK_FRAMES = 4096  # at most this many frames are loaded and matched together (one IoU call)
CHUNK_BYTES = 4 << 20  # and at most about this much label text (fewer frames when they are dense)
# Fewer frames are not cut into runs for the workers: starting the workers would cost more than
# they save (34 frames of 290 boxes: 0.33 s with --jobs 2 against 0.25 s with one process).
WORKER_RUNS_FROM = 64


class Hbb2ObbWarning(UserWarning):
    """Issued by :func:`~hbb2obb.scoring.metric_dict.evaluate_obb` for what the command line prints on stderr."""


@dataclass(frozen=True)
class EvalSettings:
    """The matching settings, with the defaults of ``hbb2obb-eval``; validated on construction.

    The commands build one from their options (``-e``, ``-t``, ``-ca``, ``-exc``, ``-et``,
    ``--one_to_one``, ``--missing_pred``, ``--spatial_threshold``); a bad value is a
    :class:`~hbb2obb.errors.UsageError`.

    Attributes
    ----------
    excluded_classes : tuple of int
        Class ids left out on both sides (stored sorted, without repeats).
    iou_threshold : float
        A pair matches when its IoU is strictly greater; in ``[0, 1)``.
    class_agnostic : bool
        Match boxes whatever their class.
    exclude_edge_cases : bool
        Drop ground-truth boxes touching the frame border (needs the frame sizes).
    edge_tolerance : float
        Pixels from the border that count as touching it.
    one_to_one : bool
        Exclusive matching, highest IoU first (default: non-exclusive, as the reference tool).
    missing_pred : {"skip", "empty", "error"}
        A ground-truth frame without predictions: leave it out, score it as empty, or raise.
    spatial_threshold : float
        Spatial match: a ground-truth box passes when its best IoU is at least this; in ``(0, 1]``.
    """

    excluded_classes: tuple[int, ...] = ()
    iou_threshold: float = 0.1
    class_agnostic: bool = False
    exclude_edge_cases: bool = False
    edge_tolerance: float = 1.0
    one_to_one: bool = False
    missing_pred: str = "skip"
    spatial_threshold: float = DEFAULT_SPATIAL_THRESHOLD

    def __post_init__(self):
        object.__setattr__(self, "excluded_classes", tuple(sorted({int(c) for c in self.excluded_classes})))
        for class_id in self.excluded_classes:  # class ids are int64: a larger one would fail in numpy
            if not -2**63 <= class_id < 2**63:
                raise UsageError(f"excluded class id {class_id} is out of range (class ids are 64-bit integers)")
        if not 0.0 <= float(self.iou_threshold) < 1.0:
            raise UsageError(f"iou threshold must be in [0, 1), got {self.iou_threshold}")
        if not 0 <= float(self.edge_tolerance) < float("inf"):  # nan fails too
            raise UsageError(f"edge tolerance must be a non-negative finite number, got {self.edge_tolerance}")
        if self.missing_pred not in MISSING_PRED_POLICIES:
            raise UsageError(
                f"missing_pred must be one of {', '.join(MISSING_PRED_POLICIES)}, got {self.missing_pred!r}"
            )
        if not 0.0 < float(self.spatial_threshold) <= 1.0:
            raise UsageError(f"spatial threshold must be in (0, 1], got {self.spatial_threshold}")


@dataclass(frozen=True)
class MatchTable:
    """Every scored box of a run and its match: the accumulated table analysis cuts mask.

    Ground-truth rows and prediction rows are in frame order, then file order. ``frame`` arrays
    index ``frame_names``; ``pred_index`` indexes the prediction rows and is meaningful only
    where ``matched``; ``iou`` and ``angle_error`` are NaN where unmatched. ``pred_on_edge_case``
    marks the predictions whose best ground-truth overlap, above the matching threshold, is a box
    ``--exclude_edge_cases`` dropped (``None``: no box was dropped).
    """

    frame_names: tuple
    frame_sizes: np.ndarray
    gt: Boxes
    gt_frame: np.ndarray
    pred: Boxes
    pred_frame: np.ndarray
    matched: np.ndarray
    pred_index: np.ndarray
    best_iou: np.ndarray
    iou: np.ndarray
    angle_error: np.ndarray
    pred_matched: np.ndarray
    pred_on_edge_case: Optional[np.ndarray] = None

    @property
    def n_matches(self) -> int:
        return int(self.matched.sum())

    def pred_class_of_match(self) -> np.ndarray:
        """Class of the prediction matched to each ground-truth box (rows where matched)."""
        return self.pred.class_id[self.pred_index[self.matched]]


@dataclass
class EvaluationResult:
    """What one evaluation produced: the table, the input health and the warnings.

    ``warnings`` holds ``(kind, message)`` pairs in a fixed order, whatever ``jobs`` was. Its
    metric dict is :func:`~hbb2obb.scoring.metric_dict.summarize`'s.
    """

    table: MatchTable
    settings: EvalSettings
    plan: FramePlan
    health: FrameHealth
    warnings: list = field(default_factory=list)
    detection: Optional[DetectionParams] = None
    pairs: Optional[tuple] = None  # (gt, pred, iou) of every same-frame pair with positive IoU, with detection
    label_map: Optional[dict] = None
    unpaired: Optional[MatchTable] = None  # frames without a prediction file, for the detection metrics only

    @functools.cached_property
    def detection_summary(self):
        """The detection metrics (:class:`~hbb2obb.detection.summary.DetectionSummary`), or ``None``."""
        if self.detection is None:
            return None
        from hbb2obb.detection.summary import summarize_run

        return summarize_run(self.table, self.pairs, self.detection, unpaired=self.unpaired)


def _match_chunk(specs, settings: EvalSettings, sizes: ImageSizes, label_map, with_pairs: bool = False,
                 blobs: Optional[tuple] = None) -> tuple:
    """Load and match a run of frames; returns the chunk's columns and its health.

    ``with_pairs``: also keep every same-frame pair with positive IoU, any classes (detection
    metrics). ``blobs``: the frames' label bytes, read already (:func:`read_frame_batches`).
    """
    frames, health = load_frames(
        specs,
        sizes=sizes,
        label_map=label_map,
        excluded_classes=settings.excluded_classes,
        exclude_edge_cases=settings.exclude_edge_cases,
        edge_tolerance=settings.edge_tolerance,
        blobs=blobs,
    )
    gt, pred = frames.gt, frames.pred
    # An IoU exactly on a bound (1/10, 1/2: common with integer corners) is decided exactly, not
    # by the last bit of its float; the few such pairs are recomputed in rational arithmetic.
    bounds = (settings.iou_threshold, settings.spatial_threshold, *IOU_LADDER)
    detection_pairs = None
    if with_pairs:
        # Detection metrics pair boxes across classes too (confusion matrix): one class-agnostic
        # search, of which the class-specific matching takes its own pairs (the same pairs, same IoUs).
        d_gt, d_pred, d_iou = frame_pairs(gt, frames.gt_frame, pred, frames.pred_frame)
        d_iou = settle_ties(
            d_iou, gt.corners, pred.corners, bounds + tuple(COCO_IOU_THRESHOLDS), d_gt, d_pred
        )  # AP's too
        detection_pairs = d_gt, d_pred, d_iou
        pair_gt, pair_pred, pair_iou = detection_pairs
        if not settings.class_agnostic:
            same = gt.class_id[pair_gt] == pred.class_id[pair_pred]
            pair_gt, pair_pred, pair_iou = pair_gt[same], pair_pred[same], pair_iou[same]
    else:
        # Pairs never cross frames (nor classes, unless class-agnostic): one search for the chunk.
        gt_group, pred_group = frames.gt_frame, frames.pred_frame
        if not settings.class_agnostic:
            classes, gt_class, pred_class = dense_classes(gt.class_id, pred.class_id)
            span = max(len(classes), 1)
            gt_group = gt_group * span + gt_class
            pred_group = pred_group * span + pred_class
        pair_gt, pair_pred = candidate_pairs(gt.corners, pred.corners, a_group=gt_group, b_group=pred_group)
        pair_iou = iou_pairs(gt.corners[pair_gt], pred.corners[pair_pred])
        pair_iou = settle_ties(pair_iou, gt.corners, pred.corners, bounds, pair_gt, pair_pred)
    matches = match_pairs(pair_gt, pair_pred, pair_iou, len(gt), len(pred), settings.iou_threshold, settings.one_to_one)
    angle_error = np.full(len(gt), np.nan)
    rows = np.flatnonzero(matches.matched)
    angle_error[rows] = orientation_errors(np.take(gt.corners, rows, axis=0),  # np.take: quicker than [rows]
                                           np.take(pred.corners, np.take(matches.pred_index, rows), axis=0))
    on_edge = _best_on_dropped_edge(frames, pair_pred, pair_iou, settings) if settings.exclude_edge_cases else None
    sizes_arr = np.full((len(frames.sizes), 2), np.nan) if not any(frames.sizes) else np.array(
        [size if size is not None else (np.nan, np.nan) for size in frames.sizes], dtype=np.float64)
    columns = dict(
        names=list(frames.names),
        sizes=sizes_arr.reshape(-1, 2),
        gt=gt,
        gt_frame=frames.gt_frame,
        pred=pred,
        pred_frame=frames.pred_frame,
        matched=matches.matched,
        pred_index=matches.pred_index,
        best_iou=matches.best_iou,
        iou=matches.iou,
        angle_error=angle_error,
        pred_matched=matches.pred_matched,
        pred_on_edge_case=np.zeros(len(pred), dtype=bool) if on_edge is None else on_edge,
    )
    if detection_pairs is not None:
        columns.update(pair_gt=detection_pairs[0], pair_pred=detection_pairs[1], pair_iou=detection_pairs[2])
    return columns, health


def _best_on_dropped_edge(frames, pair_pred: np.ndarray, pair_iou: np.ndarray, settings: EvalSettings) -> np.ndarray:
    """Per prediction: does a dropped edge box overlap it above the threshold, and at least as much as
    any scored ground-truth box? Those are the edge boxes' own predictions (COCO's "ignore" regions).

    Pairs are searched as the matching searches them: within a frame, and within a class unless
    class-agnostic.
    """
    edge, pred = frames.edge_gt, frames.pred
    out = np.zeros(len(pred), dtype=bool)
    if not len(edge) or not len(pred):
        return out
    edge_group, pred_group = frames.edge_gt_frame, frames.pred_frame
    if not settings.class_agnostic:
        classes, edge_class, pred_class = dense_classes(edge.class_id, pred.class_id)
        span = max(len(classes), 1)
        edge_group, pred_group = edge_group * span + edge_class, pred_group * span + pred_class
    pair_edge, pair_edge_pred = candidate_pairs(edge.corners, pred.corners, a_group=edge_group, b_group=pred_group)
    edge_iou = iou_pairs(edge.corners[pair_edge], pred.corners[pair_edge_pred])
    best_edge = np.zeros(len(pred))
    np.maximum.at(best_edge, pair_edge_pred, edge_iou)
    best_scored = np.zeros(len(pred))
    np.maximum.at(best_scored, pair_pred, pair_iou)
    return (best_edge > settings.iou_threshold) & (best_edge >= best_scored)


def _chunk_job(args):
    return _match_chunk(*args)


def _join_pairs(chunks: list) -> Optional[tuple]:
    """The chunks' detection pairs ``(gt, pred, iou)`` with run-wide row indices, or ``None``."""
    if not chunks or "pair_gt" not in chunks[0]:
        return None
    gt_base = np.cumsum([0] + [len(c["gt"]) for c in chunks])[:-1]
    pred_base = np.cumsum([0] + [len(c["pred"]) for c in chunks])[:-1]
    gt_rows = np.concatenate([c.pop("pair_gt") + base for c, base in zip(chunks, gt_base)])
    pred_rows = np.concatenate([c.pop("pair_pred") + base for c, base in zip(chunks, pred_base)])
    return gt_rows, pred_rows, np.concatenate([c.pop("pair_iou") for c in chunks])


def _join(chunks: list) -> MatchTable:
    """One table from the chunks' columns; each chunk's part of a column is released once copied."""
    names = tuple(name for c in chunks for name in c["names"])
    frame_base = np.cumsum([0] + [len(c["names"]) for c in chunks])[:-1]
    pred_base = np.cumsum([0] + [len(c["pred"]) for c in chunks])[:-1]

    def take(key, dtype, base=None):
        parts = [c.pop(key) for c in chunks]
        if not parts:
            return np.zeros(0, dtype)
        if len(parts) == 1:  # a run of one chunk: its column, whose indices are the run's already (no copy)
            return parts[0]
        joined = np.concatenate(parts)
        if base is not None:  # chunk-local indices to run-wide ones
            joined += np.repeat(base, [len(part) for part in parts])
        return joined

    return MatchTable(
        frame_names=names,
        frame_sizes=np.concatenate([c.pop("sizes") for c in chunks]) if chunks else np.zeros((0, 2)),
        gt=Boxes.concatenate([c.pop("gt") for c in chunks]),
        gt_frame=take("gt_frame", np.int64, frame_base),
        pred=Boxes.concatenate([c.pop("pred") for c in chunks]),
        pred_frame=take("pred_frame", np.int64, frame_base),
        matched=take("matched", bool),
        pred_index=take("pred_index", np.int64, pred_base),
        best_iou=take("best_iou", np.float64),
        iou=take("iou", np.float64),
        angle_error=take("angle_error", np.float64),
        pred_matched=take("pred_matched", bool),
        pred_on_edge_case=take("pred_on_edge_case", bool),
    )


def _batches(specs, jobs: int = 1):
    """Runs of consecutive frames, read: at most ``CHUNK_FRAMES`` frames and ``CHUNK_BYTES`` of labels each.

    A frame larger than the byte budget forms a batch of its own: memory follows the largest
    frame, never the number of frames. With ``jobs`` workers and at least
    :data:`WORKER_RUNS_FROM` frames, a run also holds at most a ``2 * jobs``-th of the frames, so
    that every worker has work: the byte budget alone can leave one run with most of the frames
    and the other workers idle. Yields ``(specs, blobs)`` (:func:`read_frame_batches`).
    """
    specs = tuple(specs)
    frames = CHUNK_FRAMES
    if jobs > 1 and len(specs) >= WORKER_RUNS_FROM:
        frames = min(CHUNK_FRAMES, -(-len(specs) // (2 * jobs)))
    return read_frame_batches(specs, frames, CHUNK_BYTES)


def _in_order(pool, function, items, ahead: int):
    """``pool.map(function, items)``, with at most ``ahead`` items submitted and not yet returned.

    ``Executor.map`` submits every item at once, which would read every label file before the
    first chunk is matched; here the reading keeps pace with the workers.
    """
    pending = collections.deque()
    for item in items:
        pending.append(pool.submit(function, item))
        if len(pending) >= ahead:
            yield pending.popleft().result()
    while pending:
        yield pending.popleft().result()


def resolve_jobs(jobs: int) -> int:
    """``0`` means every core; negative is a usage error."""
    if jobs < 0:
        raise UsageError(f"--jobs must be 0 (all cores) or positive, got {jobs}")
    return jobs or (os.cpu_count() or 1)


def evaluate_frames(
    gt_dir,
    pred_dir,
    settings: EvalSettings = EvalSettings(),
    *,
    sizes: Optional[ImageSizes] = None,
    label_map: Optional[dict] = None,
    jobs: int = 1,
    progress: Optional[Callable[[int], None]] = None,
    plan: Optional[FramePlan] = None,
    detection: Optional[DetectionParams] = None,
    gt_format: Optional[str] = None,
    pred_format: Optional[str] = None,
    read_options: Optional[dict] = None,
) -> EvaluationResult:
    """Pair, load and match every frame; the accumulated result of a whole run.

    Parameters
    ----------
    gt_dir, pred_dir : path-like
        Folders of label files, paired by file name.
    settings : EvalSettings
    sizes : ImageSizes, optional
        Frame sizes, for normalized labels and edge exclusion.
    label_map : dict, optional
        Class names, needed to read DOTA files.
    jobs : int
        Processes to spread frames over (``0``: every core). Results are identical for any value.
    progress : callable, optional
        Called with the number of frames finished since the last call.
    plan : FramePlan, optional
        A pairing already made by :func:`~hbb2obb.frames.pairing.plan_any` (or :func:`plan_frames`).
    detection : DetectionParams, optional
        Also compute the detection metrics (precision, recall, AP): the result keeps every
        same-frame pair with positive IoU for them.
    gt_format, pred_format : str, optional
        Label format of each side (``yolo dota voc coco labelme``); detected when omitted. A
        COCO side is its ``.json`` file; a DOTA Task1 submission folder is detected as such.
    read_options : dict, optional
        Reading options of the formats that take them (:data:`~hbb2obb.io.format_names.READ_OPTIONS`).
    """
    sizes = sizes or ImageSizes()
    plan = plan or plan_any(gt_dir, pred_dir, settings.missing_pred, label_map, gt_format=gt_format,
                            pred_format=pred_format, sizes=sizes, read_options=read_options)
    recorded = bool(plan.frames) and all(spec.recorded_size is not None for spec in plan.frames)
    if settings.exclude_edge_cases and not sizes.known and not recorded:
        raise UsageError(
            "--exclude_edge_cases needs the frame size: give --img_width and --img_height, or --img_source"
        )
    jobs = resolve_jobs(jobs)
    batches = _batches(plan.frames, jobs)
    try:
        chunks, health = _run_chunks(batches, jobs, settings, sizes, label_map, detection is not None, progress)
    finally:
        batches.close()  # an error stopped the run early: the reading ends with it
    # broken rows of predictions read whole when planning (a Task1 submission, a COCO file, ...)
    health.skipped_pred_lines += len(plan.pred_problems)
    health.problems.extend(plan.pred_problems)
    pairs = _join_pairs(chunks)
    unpaired = None
    if detection is not None and detection.count_missing and settings.missing_pred == "skip" and plan.missing_pred:
        unpaired = _unpaired_frames(gt_dir, pred_dir, settings, sizes, label_map, gt_format, pred_format,
                                    plan.missing_specs, read_options)
    result = EvaluationResult(_join(chunks), settings, plan, health, detection=detection, pairs=pairs,
                              label_map=label_map or None, unpaired=unpaired)
    result.warnings.extend(run_warnings(plan, health, sizes, settings.missing_pred, detection is not None,
                                        counted_missing=unpaired is not None))
    return result


def _unpaired_frames(gt_dir, pred_dir, settings: EvalSettings, sizes: ImageSizes, label_map, gt_format,
                     pred_format, specs: tuple = (), read_options=None) -> MatchTable:
    """The ground truth of the frames without a prediction file, read and filtered as the scored frames are.

    The detection metrics count these boxes as misses (:attr:`DetectionParams.count_missing`)
    where the matching keys skip the frames, as the reference tool does. ``specs``: those frames
    as the plan gave them (frames in memory); by default the folders are paired again.
    """
    if specs:
        frames = list(specs)
    else:
        plan = plan_any(gt_dir, pred_dir, "empty", label_map, gt_format=gt_format, pred_format=pred_format,
                        sizes=sizes, read_options=read_options)
        frames = [spec for spec in plan.frames if spec.pred_file is None and spec.pred_boxes is None]
    batches = _batches(frames)
    try:
        chunks, _ = _run_chunks(batches, 1, settings, sizes, label_map, False, None)
    finally:
        batches.close()
    return _join(chunks)


def _run_chunks(batches, jobs: int, settings: EvalSettings, sizes: ImageSizes, label_map, with_pairs: bool,
                progress) -> tuple[list, FrameHealth]:
    """Match the batches, in this process or in ``jobs`` workers; the chunks' columns in order and their health."""
    chunks, health = [], FrameHealth()
    first = []
    if jobs > 1:  # are there two chunks, worth workers? (one process starts on the first chunk at once)
        first = [batch for batch in itertools.islice(batches, 2)]
    work = ((batch, settings, sizes, label_map, with_pairs, blobs)
            for batch, blobs in itertools.chain(first, batches))
    if jobs > 1 and len(first) > 1:
        from hbb2obb.processes import worker_pool  # only with workers: costs start-up

        with worker_pool(jobs) as pool:
            for columns, chunk_health in _in_order(pool, _chunk_job, work, 2 * jobs):
                chunks.append(columns)
                health.add(chunk_health)
                if progress:
                    progress(len(columns["names"]))
    else:
        for item in work:
            columns, chunk_health = _chunk_job(item)
            chunks.append(columns)
            health.add(chunk_health)
            if progress:
                progress(len(item[0]))
    return chunks, health
