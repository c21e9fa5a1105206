"""The identity baseline: the HBB prompt emitted unchanged as an OBB (docs/metrics.md §5, "against doing nothing").

A horizontal box is already a valid oriented box, so scoring the prompts themselves against the
ground truth tells what the conversion added. The prompts are matched to the ground-truth rows of
the conversion's :class:`~hbb2obb.scoring.evaluate.MatchTable` with the same matcher and settings, then
compared with the conversion on the ground-truth boxes both matched.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import numpy as np

from hbb2obb.analysis.cuts import Cut
from hbb2obb.boxes import Boxes
from hbb2obb.errors import InputError
from hbb2obb.scoring.evaluate import EvalSettings, MatchTable
from hbb2obb.geometry import candidate_pairs, iou_pairs, orientation_errors
from hbb2obb.io import read_yolo_hbb, scale_to_pixels
from hbb2obb.io.text import looks_normalized
from hbb2obb.detection.matching import match_pairs


@dataclass(frozen=True)
class IdentityMatch:
    """The prompts' match of every ground-truth row of a table (aligned with ``table.gt``)."""

    matched: np.ndarray
    iou: np.ndarray
    angle_error: np.ndarray
    prompt_boxes: int
    warnings: list = field(default_factory=list)
    prompt_corners: Optional[np.ndarray] = None  # (n_gt, 4, 2) the matched prompt, NaN where none


def _frame_prompts(path: Path, size, gt_corners: np.ndarray, excluded: np.ndarray, warnings: list) -> Boxes:
    """One frame's prompts in the ground truth's units, or no boxes when the file is absent."""
    if not path.is_file():
        warnings.append(("missing prompt file", f"no HBB prompt file {path}: its boxes have no identity baseline"))
        return Boxes.empty()
    prompts = read_yolo_hbb(path, strict=False)
    if prompts.problems:
        more = f" ({len(prompts.problems)} broken lines, all skipped)" if len(prompts.problems) > 1 else " (line skipped)"
        warnings.append(("broken prompt file", f"{prompts.problems[0]}{more}"))
    if size is not None:
        prompts = scale_to_pixels(prompts, *size)
    else:
        gt_normalized = looks_normalized(gt_corners)
        if None not in (prompts.normalized, gt_normalized) and prompts.normalized != gt_normalized:
            which = "normalized while the ground truth is in pixels" if prompts.normalized else \
                "in pixels while the ground truth is normalized"
            raise InputError(f"{path}: HBB prompts are {which} and the frame size is unknown: "
                             "give -i/--img_source or --img_width/--img_height")
    boxes = prompts.boxes
    return boxes[~np.isin(boxes.class_id, excluded)] if excluded.size else boxes


def match_identity_baseline(table: MatchTable, hbb_dir, settings: EvalSettings = EvalSettings()) -> IdentityMatch:
    """Match the HBB prompts of ``hbb_dir`` (``NAME.txt`` per frame) to the table's ground truth.

    Normalized prompts are scaled with the table's frame sizes. Excluded classes are dropped as
    for predictions; a missing prompt file or a broken prompt line is a warning.

    Raises
    ------
    InputError
        ``hbb_dir`` is not a folder, or prompts and ground truth disagree on normalization in a
        frame of unknown size (the IoU would be meaningless).
    """
    hbb_dir = Path(hbb_dir)
    if not hbb_dir.is_dir():
        raise InputError(f"{hbb_dir}: HBB prompt folder not found")
    warnings: list = []
    excluded = np.asarray(settings.excluded_classes, dtype=np.int64)
    prompt_parts, pair_gt, pair_prompt = [], [], []
    offset = 0
    for frame, name in enumerate(table.frame_names):
        gt_rows = np.flatnonzero(table.gt_frame == frame)
        size = table.frame_sizes[frame]
        size = tuple(size) if np.isfinite(size).all() else None
        prompts = _frame_prompts(hbb_dir / f"{name}.txt", size, table.gt.corners[gt_rows], excluded, warnings)
        if len(gt_rows) and len(prompts):
            ia, ib = candidate_pairs(table.gt.corners[gt_rows], prompts.corners)
            pair_gt.append(gt_rows[ia])
            pair_prompt.append(ib + offset)
        prompt_parts.append(prompts)
        offset += len(prompts)
    prompts = Boxes.concatenate(prompt_parts)
    pair_gt = np.concatenate(pair_gt) if pair_gt else np.zeros(0, np.int64)
    pair_prompt = np.concatenate(pair_prompt) if pair_prompt else np.zeros(0, np.int64)
    if not settings.class_agnostic:
        same = table.gt.class_id[pair_gt] == prompts.class_id[pair_prompt]
        pair_gt, pair_prompt = pair_gt[same], pair_prompt[same]
    pair_iou = iou_pairs(table.gt.corners[pair_gt], prompts.corners[pair_prompt])
    matches = match_pairs(pair_gt, pair_prompt, pair_iou, len(table.gt), len(prompts), settings.iou_threshold,
                          settings.one_to_one)
    angle_error = np.full(len(table.gt), np.nan)
    rows = np.flatnonzero(matches.matched)
    angle_error[rows] = orientation_errors(table.gt.corners[rows], prompts.corners[matches.pred_index[rows]])
    prompt_corners = np.full((len(table.gt), 4, 2), np.nan)
    prompt_corners[rows] = prompts.corners[matches.pred_index[rows]]
    return IdentityMatch(matches.matched, matches.iou, angle_error, len(prompts), warnings, prompt_corners)


def _row(label: str, table: MatchTable, identity: IdentityMatch, mask: np.ndarray) -> dict:
    rows = mask & table.matched & identity.matched
    n = int(rows.sum())
    if not n:
        return dict(label=label, boxes=0, iou_as_is=0.0, iou_converted=0.0, gain=0.0,
                    p90_angle_as_is=0.0, p90_angle_converted=0.0, sem_as_is=0.0, sem_converted=0.0)
    as_is, converted = identity.iou[rows], table.iou[rows]
    return dict(
        label=label,
        boxes=n,
        iou_as_is=float(as_is.mean()),
        iou_converted=float(converted.mean()),
        gain=float(converted.mean() - as_is.mean()),
        p90_angle_as_is=float(np.percentile(identity.angle_error[rows], 90)),
        p90_angle_converted=float(np.percentile(table.angle_error[rows], 90)),
        sem_as_is=float(as_is.std() / np.sqrt(n)),
        sem_converted=float(converted.std() / np.sqrt(n)),
    )


def identity_summary(table: MatchTable, identity: IdentityMatch, orientation: Cut, partition: Cut,
                     hbb_dir=None) -> dict:
    """Prompt as-is against the conversion, on the ground-truth boxes both matched, as plain data.

    ``rows``: all boxes, then the groups of ``orientation``; ``partition``: the groups of
    ``partition`` (for the figure). Each row: ``boxes``, ``iou_as_is``, ``iou_converted``,
    ``gain`` (converted minus as-is), the two angle p90s and the two SEMs.
    """
    everything = np.ones(len(table.gt), dtype=bool)
    rows = [_row("all", table, identity, everything)]
    rows += [_row(label, table, identity, mask) for label, mask in zip(orientation.labels, orientation.masks)]
    return {
        "hbb_dir": None if hbb_dir is None else str(hbb_dir),
        "prompt_boxes": identity.prompt_boxes,
        "matched_by_prompts": int(identity.matched.sum()),
        "matched_by_both": int((identity.matched & table.matched).sum()),
        "rows": rows,
        "partition": [_row(label, table, identity, mask) for label, mask in zip(partition.labels, partition.masks)],
    }

