"""The warnings of an evaluation run: what was missing, broken, repaired or ambiguous in its inputs.

:func:`~hbb2obb.scoring.evaluate.evaluate_frames` collects them on its result; the command
prints them on stderr (``program: warning: ...``), the Python API raises them as
:class:`~hbb2obb.scoring.evaluate.Hbb2ObbWarning`. Nothing the user gave is dropped without one.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from hbb2obb.frames.loading import FrameHealth
from hbb2obb.frames.pairing import FramePlan
from hbb2obb.io import ImageSizes
from hbb2obb.io.text import NORMALIZED_LIMIT


def run_warnings(plan: FramePlan, health: FrameHealth, sizes: ImageSizes, missing_pred: str,
                 detection: bool, counted_missing: bool = False) -> list[tuple[str, str]]:
    """What the user must hear about a run's inputs: ``(kind, message)`` pairs in a fixed order.

    From the run's pairing, the health of the frames it read, the frame sizes it was given, its
    ``missing_pred`` policy, whether it computed detection metrics and whether those counted the
    skipped frames as frames with no detections. The kind lets a printer
    summarize repeats. Missing and orphan files, broken symbolic links,
    broken prediction lines (once per file: its first broken line and how many), mixed or
    normalized coordinates, predictions with and without confidences, ground truth with
    confidences, and repaired, degenerate
    or concave boxes, in that order. An empty list for a clean run.
    """
    policy = "scored with no predictions" if missing_pred == "empty" else "skipped"
    if counted_missing:
        policy += " (the detection metrics count its ground truth as missed)"
    out = [("missing prediction file", f"no prediction file for {p.name}: frame {policy}")
           for p in plan.missing_pred]
    out += [("orphan prediction file", f"prediction file {p.name} has no ground-truth file: not scored")
            for p in plan.orphan_pred]
    out += [("orphan prediction file", f"{plan.pred_source}: detections of image {name} have no "
             "ground-truth file: not scored") for name in plan.orphan_images]
    out += [("broken link", f"prediction file {p} is a broken symbolic link: read as missing")
            for p in plan.broken_pred_links]
    per_file = Counter(problem.path for problem in health.problems)
    first_of_file: dict = {}  # once per file, in the order files were met: its first broken line
    for problem in health.problems:  # (lines come in the order their checks found them)
        if problem.path not in first_of_file or problem.line < first_of_file[problem.path].line:
            first_of_file[problem.path] = problem
    for path, problem in first_of_file.items():
        count = per_file[path]
        more = f" ({count} broken lines in this file, all skipped)" if count > 1 else " (line skipped)"
        out.append(("broken prediction file", f"{problem}{more}"))
    sides = health.normalized_sides
    if "mixed" in sides:
        out.append(("coordinates", "one side's coordinates are normalized to [0, 1] and the other's are absolute "
                    "pixels: give --img_source or --img_width/--img_height to scale them, or the scores mean nothing"))
    elif sides and not sizes.known and not all(spec.recorded_size is not None for spec in plan.frames):
        out.append(("coordinates", "labels are normalized and the frame size is unknown: IoU is unaffected but "
                    "angles are measured in normalized coordinates; give --img_source or --img_width/--img_height"))
    # Lines, not files: one file scored on some lines only is the same silent loss of AP.
    if detection and health.scored_pred_lines and health.first_unscored_pred is not None:
        out.append(("confidence", f"{health.unscored_pred_files} prediction file(s) have boxes without a "
                    f"confidence and {health.scored_pred_files} have one on every box: AP needs a score "
                    f"on every prediction, so it is not computed (first line without one: {_where(health)})"))
    if health.scored_gt_files:
        others = f" and {health.scored_gt_files - 1} other file(s)" if health.scored_gt_files > 1 else ""
        out.append(("confidence", f"ground truth {health.first_scored_gt}{others} carries a confidence column, "
                    "as predictions do: are the ground-truth and prediction folders swapped?"))
    for side, (normalized, pixels) in sorted(health.mixed_files.items()):
        scaled = "normalized files are scaled to pixels" if sizes.known else \
            "give --img_source or --img_width/--img_height to scale the normalized ones"
        out.append(("coordinates", f"the {side} mix normalized and pixel files (normalized: {Path(normalized).name}, "
                    f"pixels: {Path(pixels).name}): {scaled}; check the data set"))
    if health.unit_boxes:
        path, line = health.first_unit_box
        out.append(("coordinates", f"{health.unit_boxes} box(es) in files of pixel coordinates look normalized "
                    f"(no coordinate beyond {NORMALIZED_LIMIT:g}; first: {path}:{line}): read as pixels, each is a "
                    "box of a pixel or two at the frame's corner that matches nothing; check the data set"))
    if health.reordered_boxes:
        out.append(("geometry", f"{health.reordered_boxes} box(es) had corners out of cyclic order "
                    "(bow-tie): reordered"))
    if health.degenerate_boxes:
        out.append(("geometry", f"{health.degenerate_boxes} box(es) have zero area: they score IoU 0"))
    if health.concave_boxes:
        out.append(("geometry", f"{health.concave_boxes} box(es) are concave quadrilaterals: scored exactly "
                    "as the polygons they are"))
    return out


def _where(health: FrameHealth) -> str:
    """``path:line`` of the first unscored prediction line."""
    path, line = health.first_unscored_pred
    return f"{path}:{line}"
