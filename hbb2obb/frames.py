"""Pairing label files by name and loading one frame's boxes, ready for matching."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import numpy as np

from hbb2obb.boxes import Boxes
from hbb2obb.errors import InputError
from hbb2obb.geometry import is_degenerate, repair_corners
from hbb2obb.io import ImageSizes, read_obb_labels, scale_to_pixels

LABEL_SUFFIX = ".txt"
MISSING_PRED_POLICIES = ("skip", "empty", "error")


@dataclass(frozen=True)
class FrameSpec:
    """One frame to score: its name and the two label files (``pred_path`` may be absent)."""

    name: str
    gt_path: Path
    pred_path: Optional[Path]


@dataclass(frozen=True)
class FramePlan:
    """Which frames are scored, and what could not be paired."""

    frames: tuple[FrameSpec, ...]
    missing_pred: tuple[Path, ...]
    orphan_pred: tuple[Path, ...]


def _label_files(folder: Path, role: str) -> dict[str, Path]:
    if not folder.exists():
        raise InputError(f"{folder}: {role} folder not found")
    if not folder.is_dir():
        raise InputError(f"{folder}: {role} path is not a folder")
    return {p.stem: p for p in sorted(folder.glob(f"*{LABEL_SUFFIX}")) if p.is_file()}


def plan_frames(gt_dir: str | Path, pred_dir: str | Path, missing_pred: str = "skip") -> FramePlan:
    """Pair ``gt_dir/NAME.txt`` with ``pred_dir/NAME.txt``, sorted by name.

    Parameters
    ----------
    missing_pred : {"skip", "empty", "error"}
        A ground-truth file with no prediction file: leave the frame out (the reference
        behaviour), score it as a frame with no predictions, or raise :class:`InputError`.
    """
    gt_files = _label_files(Path(gt_dir), "ground-truth")
    pred_files = _label_files(Path(pred_dir), "prediction")
    missing = tuple(gt_files[n] for n in gt_files if n not in pred_files)
    if missing and missing_pred == "error":
        raise InputError(
            f"{missing[0]}: no prediction file {Path(pred_dir) / missing[0].name}"
            + (f" (and {len(missing) - 1} more frames)" if len(missing) > 1 else "")
        )
    frames = tuple(
        FrameSpec(name, path, pred_files.get(name))
        for name, path in gt_files.items()
        if name in pred_files or missing_pred == "empty"
    )
    orphans = tuple(p for n, p in pred_files.items() if n not in gt_files)
    return FramePlan(frames, missing, orphans)


@dataclass
class FrameHealth:
    """Counts of what was repaired or skipped while loading, summed over frames."""

    skipped_pred_lines: int = 0
    reordered_boxes: int = 0
    degenerate_boxes: int = 0
    total_edge_cases: int = 0
    problems: list = field(default_factory=list)
    normalized_sides: set = field(default_factory=set)

    def add(self, other: "FrameHealth") -> None:
        self.skipped_pred_lines += other.skipped_pred_lines
        self.reordered_boxes += other.reordered_boxes
        self.degenerate_boxes += other.degenerate_boxes
        self.total_edge_cases += other.total_edge_cases
        self.problems.extend(other.problems)
        self.normalized_sides |= other.normalized_sides


@dataclass(frozen=True)
class LoadedFrame:
    """One frame's boxes after repair, scaling and exclusions."""

    name: str
    gt: Boxes
    pred: Boxes
    size: Optional[tuple[float, float]]


def _repair(boxes: Boxes, health: FrameHealth) -> Boxes:
    if len(boxes) == 0:
        return boxes
    corners, reordered = repair_corners(boxes.corners)
    health.reordered_boxes += int(reordered.sum())
    health.degenerate_boxes += int(is_degenerate(corners).sum())
    return boxes.with_corners(corners) if reordered.any() else boxes


def touches_edge(corners: np.ndarray, width: float, height: float, tolerance: float) -> np.ndarray:
    """Boxes with any corner within ``tolerance`` px of the frame border (``<=``, inclusive)."""
    x, y = corners[..., 0], corners[..., 1]
    near = (x <= tolerance) | (x >= width - tolerance) | (y <= tolerance) | (y >= height - tolerance)
    return near.any(axis=-1)


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
    health = FrameHealth()
    gt_file = read_obb_labels(spec.gt_path, strict=True, label_map=label_map)
    if spec.pred_path is not None:
        pred_file = read_obb_labels(spec.pred_path, strict=False, label_map=label_map)
    else:
        pred_file = None
    size = sizes(spec.name)
    for side, label_file in (("ground truth", gt_file), ("predictions", pred_file)):
        if label_file is not None and label_file.normalized:
            health.normalized_sides.add(side)
    if size is not None:
        gt_file = scale_to_pixels(gt_file, *size)
        pred_file = scale_to_pixels(pred_file, *size) if pred_file is not None else None
    elif gt_file.normalized is not None and pred_file is not None and pred_file.normalized is not None \
            and gt_file.normalized != pred_file.normalized:
        health.normalized_sides.add("mixed")
    gt = gt_file.boxes
    pred = pred_file.boxes if pred_file is not None else Boxes.empty()
    if pred_file is not None and pred_file.problems:
        health.skipped_pred_lines += len(pred_file.problems)
        health.problems.extend(pred_file.problems)
    gt, pred = _repair(gt, health), _repair(pred, health)
    if excluded_classes:
        excluded = np.array(sorted(excluded_classes), dtype=np.int64)
        gt = gt[~np.isin(gt.class_id, excluded)]
        pred = pred[~np.isin(pred.class_id, excluded)]
    if exclude_edge_cases:
        if size is None:
            raise InputError(f"{spec.gt_path}: frame size unknown, needed by --exclude_edge_cases (no image found)")
        edge = touches_edge(gt.corners, size[0], size[1], edge_tolerance)
        health.total_edge_cases += int(edge.sum())
        gt = gt[~edge]
    return LoadedFrame(spec.name, gt, pred, size), health
