"""Pairing label files by name and loading one frame's boxes, ready for matching."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import numpy as np

from hbb2obb.boxes import Boxes
from hbb2obb.errors import InputError
from hbb2obb.geometry import repair_corners
from hbb2obb.io import ImageSizes
from hbb2obb.io.yolo_obb import read_obb_batch

LABEL_SUFFIX = ".txt"
MISSING_PRED_POLICIES = ("skip", "empty", "error")


@dataclass(frozen=True)
class FrameSpec:
    """One frame to score: its name and the two label files (``pred_file`` may be absent).

    The files are kept as path strings, ``gt_path`` and ``pred_path`` give them as
    :class:`~pathlib.Path`: pairing thousands of frames builds no path objects. ``label_bytes``
    is the size of the two files together, for sizing batches of frames.
    """

    name: str
    gt_file: str
    pred_file: Optional[str]
    label_bytes: int = 0

    @property
    def gt_path(self) -> Path:
        return Path(self.gt_file)

    @property
    def pred_path(self) -> Optional[Path]:
        return None if self.pred_file is None else Path(self.pred_file)


@dataclass(frozen=True)
class FramePlan:
    """Which frames are scored, and what could not be paired.

    ``broken_pred_links`` are prediction files that are symbolic links to nothing: named in a
    warning and treated as missing.
    """

    frames: tuple[FrameSpec, ...]
    missing_pred: tuple[Path, ...]
    orphan_pred: tuple[Path, ...]
    broken_pred_links: tuple[Path, ...] = ()


def _label_files(folder: Path, role: str) -> tuple[dict[str, tuple[str, int]], list[str]]:
    """``{stem: (path string, bytes)}`` of the label files of a folder, sorted by name, and its broken links.

    A label file ends in ``.txt`` in any case (``.TXT`` too); a symbolic link whose target is
    gone is returned apart, by path, so the caller can name it instead of skipping it unseen.
    """
    if not folder.exists():
        raise InputError(f"{folder}: {role} folder not found")
    if not folder.is_dir():
        raise InputError(f"{folder}: {role} path is not a folder")
    suffix = len(LABEL_SUFFIX)
    with os.scandir(folder) as entries:  # directory entries know their type: no Path per file
        labels = [e for e in entries if e.name[-suffix:].lower() == LABEL_SUFFIX]
        found = sorted((e.name, e.stat().st_size) for e in labels if e.is_file())
        broken = sorted(e.name for e in labels if e.is_symlink() and not os.path.exists(e.path))
    prefix = "" if str(folder) == "." else os.path.join(str(folder), "")  # as str(folder / name) spells it
    files = {}
    for name, size in found:
        stem = name[:-suffix]
        if stem in files:
            raise InputError(f"{folder}: two label files for frame {stem!r}: {Path(files[stem][0]).name} and {name}")
        files[stem] = (prefix + name, size)
    return files, [prefix + name for name in broken]


def _no_labels_error(folder: Path) -> InputError:
    """Nothing to score is an error: say what the folder holds instead, so the mistake is visible."""
    with os.scandir(folder) as entries:
        suffixes = sorted({os.path.splitext(e.name)[1].lower() or "(no suffix)" for e in entries})
    held = f"; it holds {', '.join(suffixes[:6])} files" if suffixes else "; it is empty"
    return InputError(f"no label files in {folder} (the ground-truth folder needs NAME.txt files{held})")


def plan_frames(gt_dir: str | Path, pred_dir: str | Path, missing_pred: str = "skip") -> FramePlan:
    """Pair ``gt_dir/NAME.txt`` with ``pred_dir/NAME.txt``, sorted by name.

    Parameters
    ----------
    missing_pred : {"skip", "empty", "error"}
        A ground-truth file with no prediction file: leave the frame out (the reference
        behaviour), score it as a frame with no predictions, or raise :class:`InputError`.

    Raises
    ------
    InputError
        A missing folder, a ground-truth folder without label files, a ground-truth label
        file that is a broken symbolic link, two files of one frame (``a.txt`` and ``a.TXT``).
    """
    gt_files, gt_broken = _label_files(Path(gt_dir), "ground-truth")
    if gt_broken:
        raise InputError(f"{gt_broken[0]}: broken symbolic link (its target does not exist)")
    if not gt_files:
        raise _no_labels_error(Path(gt_dir))
    pred_files, pred_broken = _label_files(Path(pred_dir), "prediction")
    missing = tuple(Path(gt_files[n][0]) for n in gt_files if n not in pred_files)
    if missing and missing_pred == "error":
        raise InputError(
            f"{missing[0]}: no prediction file {Path(pred_dir) / missing[0].name}"
            + (f" (and {len(missing) - 1} more frames)" if len(missing) > 1 else "")
        )
    absent = (None, 0)
    frames = tuple(
        FrameSpec(name, path, pred_files.get(name, absent)[0], size + pred_files.get(name, absent)[1])
        for name, (path, size) in gt_files.items()
        if name in pred_files or missing_pred == "empty"
    )
    orphans = tuple(Path(p) for n, (p, _) in pred_files.items() if n not in gt_files)
    return FramePlan(frames, missing, orphans, tuple(Path(p) for p in pred_broken))


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
    #: ``{side: (a normalized file, a pixel file)}``, first seen, for a side whose files disagree
    mixed_files: dict = field(default_factory=dict)

    def add(self, other: "FrameHealth") -> None:
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
    """

    names: tuple
    sizes: tuple
    gt: Boxes
    gt_frame: np.ndarray
    pred: Boxes
    pred_frame: np.ndarray

    def frame(self, index: int) -> LoadedFrame:
        """One of the frames on its own."""
        return LoadedFrame(self.names[index], self.gt[self.gt_frame == index], self.pred[self.pred_frame == index],
                           self.sizes[index])


def _repair(boxes: Boxes, health: FrameHealth) -> Boxes:
    if len(boxes) == 0:
        return boxes
    corners, reordered, degenerate, concave = repair_corners(boxes.corners, with_degenerate=True, with_concave=True)
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
    found = []
    for index, spec in enumerate(specs):
        try:
            size = sizes(spec.name)
        except InputError as exc:
            return found, (index, exc)
        if size is None and exclude_edge_cases:
            return found, (index, InputError(
                f"{spec.gt_path}: frame size unknown, needed by --exclude_edge_cases (no image found)"))
        found.append(size)
    return found, None


def _read_frames(specs: list, label_map: Optional[dict]):
    """The label files of the frames, ground truth then predictions, read in frame order.

    Reading each side as one run keeps its boxes together; ``order`` keeps the first error
    the one that reading frame after frame (ground truth, then prediction) meets.
    """
    n = len(specs)
    paths = [spec.gt_file for spec in specs] + [spec.pred_file for spec in specs]
    strict = np.repeat([True, False], n)
    order = np.arange(2 * n).reshape(2, n).T.reshape(-1)  # 0, n, 1, n + 1, ...
    return read_obb_batch(paths, strict=strict, label_map=label_map, order=order)


def load_frames(
    specs,
    *,
    sizes: ImageSizes,
    label_map: Optional[dict],
    excluded_classes: tuple = (),
    exclude_edge_cases: bool = False,
    edge_tolerance: float = 1.0,
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

    Returns
    -------
    LoadedFrames, FrameHealth
    """
    health = FrameHealth()
    specs = list(specs)
    frame_sizes, failure = _frame_sizes(specs, sizes, exclude_edge_cases)
    if failure is not None:
        _read_frames(specs[: failure[0] + 1], label_map)  # the frame's own label files are read before its size
        raise failure[1]
    batch = _read_frames(specs, label_map)
    n = len(specs)
    codes = batch.rows.normalized  # per file: 1 normalized, 0 absolute, -1 no boxes; ground truth first
    known = np.array([size is not None for size in frame_sizes], dtype=bool)
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
    size_array = np.array([(1.0, 1.0) if size is None else size for size in frame_sizes], dtype=np.float64).reshape(-1, 2)
    scale = np.ones((2 * n, 2))
    scaled = (codes == 1) & np.tile(known, 2)
    scale[scaled] = np.tile(size_array, (2, 1))[scaled]
    for problems in batch.problems[n:]:
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
    names = tuple(spec.name for spec in specs)
    loaded = LoadedFrames(names, tuple(frame_sizes), sides[0][0], sides[0][1], sides[1][0], sides[1][1])
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
