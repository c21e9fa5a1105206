"""Pairing label files by name and loading one frame's boxes, ready for matching."""

from __future__ import annotations

import contextlib
import functools
import gc
import itertools
import operator
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import NamedTuple, Optional

import numpy as np

from hbb2obb.boxes import Boxes
from hbb2obb.errors import InputError
from hbb2obb.geometry import repair_corners
from hbb2obb.io import ImageSizes
from hbb2obb.io.yolo_obb import LabelBatch, read_obb_batch

LABEL_SUFFIX = ".txt"
MISSING_PRED_POLICIES = ("skip", "empty", "error")


class FrameSpec(NamedTuple):
    """One frame to score: its name and the two label files (``pred_file`` may be absent).

    The files are kept as path strings, ``gt_path`` and ``pred_path`` give them as
    :class:`~pathlib.Path`: pairing thousands of frames builds no path objects, and a named
    tuple is built in a third of the time of a frozen dataclass. File sizes are not asked
    for (a ``stat`` per file cost as much as reading a small file): batches of frames are
    sized by the bytes read (:func:`~hbb2obb.scoring.frame_batches.read_frame_batches`).
    """

    name: str
    gt_file: str
    pred_file: Optional[str]
    gt_boxes: Optional[Boxes] = None  # read already (COCO, LabelMe, VOC, .dota sets): not read from gt_file
    pred_boxes: Optional[Boxes] = None
    recorded_size: Optional[tuple] = None  # (width, height) a COCO, VOC or LabelMe file gives the frame

    @property
    def gt_path(self) -> Path:
        return Path(self.gt_file)

    @property
    def pred_path(self) -> Optional[Path]:
        return None if self.pred_file is None else Path(self.pred_file)


# FrameSpec from a full tuple of its fields without the Python-level __new__ (a third of the
# time); the tuple must give every field (tests compare with FrameSpec built field by field)
_new_spec = functools.partial(tuple.__new__, FrameSpec)


def spec_column(specs, name: str) -> list:
    """One field of every FrameSpec, gathered without a Python step per frame."""
    return list(map(_FIELD_GETTERS[name], specs))


_FIELD_GETTERS = {name: operator.itemgetter(index) for index, name in enumerate(FrameSpec._fields)}


@dataclass(frozen=True)
class FramePlan:
    """Which frames are scored, and what could not be paired.

    When the predictions came from one DOTA Task1 submission (``pred_source``) rather than a
    file per frame, each frame carries its detections already read (:attr:`FrameSpec.pred_boxes`)
    and ``orphan_images`` are the submission's images without ground truth.
    ``broken_pred_links`` are prediction files that are symbolic links to nothing: named in a
    warning and treated as missing.
    """

    frames: tuple[FrameSpec, ...]
    missing_pred: tuple[Path, ...]
    orphan_pred: tuple[Path, ...]
    pred_problems: tuple = ()  # skipped lines of predictions read with the plan (sets read whole, Task1)
    orphan_images: tuple = ()
    pred_source: Optional[Path] = None
    broken_pred_links: tuple[Path, ...] = ()  # prediction links to nothing: warned, read as missing


def _label_files(folder: Path, role: str, ordered: bool = True) -> tuple[dict[str, str], list[str]]:
    """``{stem: path string}`` of the label files of a folder, sorted by name, and its broken links.

    A label file ends in ``.txt`` in any case (``.TXT`` too); a symbolic link whose target is
    gone is returned apart, by path, so the caller can name it instead of skipping it unseen.
    Directory entries know their type: only symbolic links are looked up (no ``stat`` per file).
    ``ordered=False``: the files in the folder's own order (the prediction side is only looked
    up by name: sorting 100,000 names cost more than building their paths).
    """
    if not folder.exists():
        raise InputError(f"{folder}: {role} folder not found")
    if not folder.is_dir():
        raise InputError(f"{folder}: {role} path is not a folder")
    suffix = len(LABEL_SUFFIX)
    prefix = "" if str(folder) == "." else os.path.join(str(folder), "")  # as str(folder / name) spells it
    with os.scandir(folder) as entries:  # directory entries know their type: no Path per file
        # the usual spelling first: the case-blind test only for the names it does not take
        labels = [e for e in entries if e.name.endswith(LABEL_SUFFIX) or e.name[-suffix:].lower() == LABEL_SUFFIX]
        found = [e.name for e in labels if e.is_file()]
        others = [e for e in labels if not e.is_file()] if len(found) < len(labels) else []
        broken = sorted(e.name for e in others if e.is_symlink() and not os.path.exists(e.path))
    if ordered:
        found.sort()
    # The paths are built here rather than taken from the entries (e.path): built one after the
    # other they lie together in memory, where the entries' were scattered among the freed
    # entries, and every later pass over them (the reading, the batch reader) was slower for it.
    files = dict(zip(map(operator.getitem, found, itertools.repeat(slice(None, -suffix))), map(prefix.__add__, found)))
    if len(files) < len(found):  # a.txt and a.TXT: two files of one frame; name the first pair in name order
        seen = {}
        for name in sorted(found):
            stem = name[:-suffix]
            if stem in seen:
                raise InputError(f"{folder}: two label files for frame {stem!r}: {seen[stem]} and {name}")
            seen[stem] = name
    return files, [prefix + name for name in broken]


def _no_labels_error(folder: Path) -> InputError:
    """Nothing to score is an error: say what the folder holds instead, so the mistake is visible."""
    with os.scandir(folder) as entries:
        suffixes = sorted({os.path.splitext(e.name)[1].lower() or "(no suffix)" for e in entries})
    held = f"; it holds {', '.join(suffixes[:6])} files" if suffixes else "; it is empty"
    return InputError(f"no label files in {folder} (the ground-truth folder needs NAME.txt files{held})")


NATIVE_FORMATS = ("yolo", "dota")  # read from NAME.txt files by the batch reader (the fast path)


def _side(path: Path, fmt: Optional[str], role: str, strict: bool, label_map, sizes) -> tuple[dict, tuple, bool, list]:
    """One side's label files: ``({stem: entry}, skipped lines, whether it is the batch reader's, broken links)``.

    A folder holding ``.txt`` files is listed for the batch reader as it always was (YOLO-OBB or
    DOTA by content, in one scan of the folder: no look inside a file); so is a folder with no
    label files at all. A file, or a folder of ``.xml``, ``.json`` or ``.dota`` files, is
    detected (:func:`~hbb2obb.io.label_sets.detect_format`) and read whole: its entries are
    ``FrameLabels`` instead of path strings.
    """
    if fmt in (None, *NATIVE_FORMATS) and path.is_dir():  # the usual case: the listing is all it needs
        files, broken = _label_files(path, role, ordered=strict)  # ground truth (strict) in name order
        if files or broken:
            return files, (), True, broken
    from hbb2obb.io.label_sets import ALL_FORMATS, detect_format, formats_present, read_set

    if fmt is not None and fmt not in ALL_FORMATS:
        raise InputError(f"unknown {role} format {fmt!r}; one of {', '.join(ALL_FORMATS)}")
    if path.is_dir() and fmt in (None, *NATIVE_FORMATS):
        files, broken = {}, []
        if fmt is None:
            present = formats_present(path)
            if not present:
                return files, (), True, broken  # no labels at all: every frame missing (an error for GT)
            fmt = present[0]
    elif not path.exists():
        raise InputError(f"{path}: {role} folder not found")
    elif fmt is None:
        fmt = detect_format(path)
    label_set = read_set(path, fmt, label_map=label_map, sizes=sizes, strict=strict)
    return {frame.stem: frame for frame in label_set.frames}, label_set.problems, False, []


def plan_frames(gt_dir: str | Path, pred_dir: str | Path, missing_pred: str = "skip", *,
                gt_format: Optional[str] = None, pred_format: Optional[str] = None,
                label_map: Optional[dict] = None, sizes: Optional[ImageSizes] = None) -> FramePlan:
    """Pair ``gt_dir/NAME.txt`` with ``pred_dir/NAME.txt``, sorted by name.

    Either side may instead be in another format (a COCO ``.json``, a folder of LabelMe,
    VOC or ``.dota`` files): such a side is read whole here, with the bad-input rule (ground
    truth raises, prediction problems go to ``pred_problems``), and paired by frame name.

    Parameters
    ----------
    missing_pred : {"skip", "empty", "error"}
        A ground-truth file with no prediction file: leave the frame out (the reference
        behaviour), score it as a frame with no predictions, or raise :class:`InputError`.
    gt_format, pred_format : str, optional
        One of ``yolo dota voc coco labelme``; detected when omitted.
    label_map, sizes
        Class names and frame sizes for the sides read whole.

    Raises
    ------
    InputError
        A missing folder, a ground-truth folder without label files of any format, a
        ground-truth label file that is a broken symbolic link, two files of one frame
        (``a.txt`` and ``a.TXT``).
    """
    with _collector_paused():
        return _plan_frames(Path(gt_dir), Path(pred_dir), missing_pred, gt_format, pred_format, label_map, sizes)


@contextlib.contextmanager
def _collector_paused():
    """The cyclic garbage collector off while a plan is built (and back as it was after).

    Pairing 100,000 frames makes 100,000 small tuples that hold no cycles, and each few
    hundred of them set off a collection that walks every object the process holds: a
    quarter of the pairing's time, for nothing.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _plan_frames(gt_dir: Path, pred_dir: Path, missing_pred: str, gt_format, pred_format, label_map, sizes, *,
                 task1: bool = False) -> FramePlan:
    """:func:`plan_frames`; with ``task1``, a prediction folder that is a DOTA Task1 submission is read as one.

    Each folder is listed once: the submission is told from the listing of per-frame files.
    """
    gt_files, _, gt_listed, gt_broken = _side(gt_dir, gt_format, "ground-truth", True, label_map, sizes)
    if gt_broken:
        raise InputError(f"{gt_broken[0]}: broken symbolic link (its target does not exist)")
    if not gt_files:
        raise _no_labels_error(gt_dir)
    pred_files, pred_problems, pred_listed, pred_broken = _side(pred_dir, pred_format, "prediction", False,
                                                                label_map, sizes)
    if task1 and gt_listed and pred_listed and _is_submission(gt_files, pred_files):
        return _task1_plan(gt_files, pred_dir, label_map)
    # a listed prediction folder comes in the folder's order: its orphans are sorted when named
    if gt_listed and pred_listed:
        plan = _pair(gt_files, pred_files, pred_dir, missing_pred, pred_ordered=False)
    else:
        plan = _pair_read(gt_files, pred_files, pred_dir, missing_pred, pred_problems, pred_ordered=not pred_listed)
    return replace(plan, broken_pred_links=tuple(Path(p) for p in pred_broken))


def _pair_read(gt_files: dict, pred_files: dict, pred_dir: Path, missing_pred: str, pred_problems,
               pred_ordered: bool) -> FramePlan:
    """Pairing when a side was read whole: its entries are ``FrameLabels`` instead of path strings."""
    def split(item):
        if isinstance(item, str):
            return item, None
        # a frame of a COCO file is named within it: the file alone would name every frame
        where = str(item.source) if item.source.stem == item.stem else f"{item.source}:{item.stem}"
        return where, item.boxes

    def recorded(name):
        for side in (gt_files, pred_files):
            item = side.get(name)
            if item is not None and not isinstance(item, str) and item.size is not None:
                return tuple(float(v) for v in item.size)
        return None

    plain_gt = {name: split(item) for name, item in gt_files.items()}
    plain_pred = {name: split(item) for name, item in pred_files.items()}
    plan = _pair({n: p for n, (p, _) in plain_gt.items()}, {n: p for n, (p, _) in plain_pred.items()},
                 pred_dir, missing_pred, pred_ordered)
    frames = tuple(FrameSpec(spec.name, spec.gt_file, spec.pred_file, plain_gt[spec.name][1],
                             plain_pred[spec.name][1] if spec.name in plain_pred else None, recorded(spec.name))
                   for spec in plan.frames)
    return FramePlan(frames, plan.missing_pred, plan.orphan_pred, tuple(pred_problems))


def _pair(gt_files: dict, pred_files: dict, pred_dir: Path, missing_pred: str, pred_ordered: bool = True) -> FramePlan:
    """Frames of the names both sides have (and, by the policy, those only ground truth has).

    ``gt_files`` and ``pred_files`` are ``{name: path string}``, ground truth in name order, the
    predictions too unless not ``pred_ordered`` (its orphans are then sorted by path, which for
    a listed folder is name order). The names one side lacks are found by set difference, so a
    complete set costs no Python step per frame beyond building its specs.
    """
    same = gt_files.keys() == pred_files.keys()  # the usual case: every frame has both files
    lacking = set() if same else gt_files.keys() - pred_files.keys()
    missing = tuple(Path(path) for name, path in gt_files.items() if name in lacking) if lacking else ()
    if missing and missing_pred == "error":
        raise InputError(
            f"{missing[0]}: no prediction file {Path(pred_dir) / missing[0].name}"
            + (f" (and {len(missing) - 1} more frames)" if len(missing) > 1 else "")
        )
    if missing and missing_pred != "empty":
        names = [name for name in gt_files if name not in lacking]
        gt_paths = [gt_files[name] for name in names]
    else:
        names, gt_paths = list(gt_files), list(gt_files.values())
    pred_paths = map(pred_files.get, names)  # None: no prediction file (scored as empty)
    nothing = itertools.repeat(None)  # no boxes read already, no recorded size
    frames = tuple(map(_new_spec, zip(names, gt_paths, pred_paths, nothing, nothing, nothing)))
    extra = set() if same else pred_files.keys() - gt_files.keys()
    if not extra:
        orphans = ()
    elif pred_ordered:
        orphans = tuple(Path(path) for name, path in pred_files.items() if name in extra)
    else:
        orphans = tuple(map(Path, sorted(pred_files[name] for name in extra)))
    return FramePlan(frames, missing, orphans)


def plan_any(gt_dir: str | Path, pred_dir: str | Path, missing_pred: str = "skip",
             label_map: Optional[dict] = None, *, gt_format: Optional[str] = None,
             pred_format: Optional[str] = None, sizes: Optional[ImageSizes] = None) -> FramePlan:
    """:func:`plan_frames`, or, when ``pred_dir`` is a DOTA Task1 submission, its detections by frame.

    A folder is a submission when it holds ``Task1_<class>.txt`` files and no file named like a
    ground-truth file. Every ground-truth frame is then scored (a submission lists only images
    with detections, so a frame it lacks has none).
    """
    gt_dir, pred_dir = Path(gt_dir), Path(pred_dir)
    task1 = pred_format is None and gt_format in (None, "yolo", "dota") and pred_dir.is_dir()
    with _collector_paused():
        return _plan_frames(gt_dir, pred_dir, missing_pred, gt_format, pred_format, label_map, sizes, task1=task1)


def _is_submission(gt_files: dict, pred_files: dict) -> bool:
    """Listed prediction files that are a DOTA Task1 submission: ``Task1_<class>.txt`` files, none named like ground truth."""
    from hbb2obb.io.dota_task1 import TASK1_FILE

    # a name both sides have rules it out at once (the usual case): no look at every name then
    return pred_files.keys().isdisjoint(gt_files.keys()) and any(
        TASK1_FILE.match(os.path.basename(path)) for name, path in pred_files.items() if name.startswith("Task1_"))


def _task1_plan(gt_files: dict, pred_dir: Path, label_map: Optional[dict]) -> FramePlan:
    """Every ground-truth frame with its detections from the submission in ``pred_dir``."""
    from hbb2obb.io.dota_task1 import read_task1

    submission = read_task1(pred_dir, label_map)
    none = Boxes(np.zeros((0, 4, 2)), np.zeros(0, dtype=np.int64), score=np.zeros(0), line=np.zeros(0, dtype=np.int64))
    # every frame is scored: an image the submission does not list had no detections
    frames = tuple(FrameSpec(name, path, f"{pred_dir}:{name}", pred_boxes=submission.boxes.get(name, none))
                   for name, path in gt_files.items())
    orphans = tuple(sorted(name for name in submission.boxes if name not in gt_files))
    return FramePlan(frames, (), (), pred_problems=submission.problems, orphan_images=orphans,
                     pred_source=Path(pred_dir))


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
    #: ``{side: (a normalized file, a pixel file)}``, first seen, for a side whose files disagree
    mixed_files: dict = field(default_factory=dict)

    def add(self, other: "FrameHealth") -> None:
        self.scored_pred_files += other.scored_pred_files
        self.unscored_pred_files += other.unscored_pred_files
        self.skipped_pred_lines += other.skipped_pred_lines
        self.reordered_boxes += other.reordered_boxes
        self.degenerate_boxes += other.degenerate_boxes
        self.concave_boxes += other.concave_boxes
        self.total_edge_cases += other.total_edge_cases
        self.problems.extend(other.problems)
        self.normalized_sides |= other.normalized_sides
        for side, files in other.mixed_files.items():
            self.mixed_files.setdefault(side, files)


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
        found = [spec.recorded_size for spec in specs]
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
    (:func:`~hbb2obb.scoring.frame_batches.read_frame_batches`).
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
    return LabelBatch(batch.paths, rows, difficult, has_difficult, batch.problems)


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
        (:func:`~hbb2obb.scoring.frame_batches.read_frame_batches`); by default the files are read here.

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
    size_array = np.ones((n, 2)) if unknown else np.array(
        [(1.0, 1.0) if size is None else size for size in frame_sizes], dtype=np.float64).reshape(-1, 2)
    scale = np.ones((2 * n, 2))
    scaled = (codes == 1) & np.tile(known, 2)
    scale[scaled] = np.tile(size_array, (2, 1))[scaled]
    with_boxes = codes[n:] >= 0
    health.scored_pred_files += int(np.count_nonzero(batch.rows.has_score[n:] & with_boxes))
    health.unscored_pred_files += int(np.count_nonzero(~batch.rows.has_score[n:] & with_boxes))
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
