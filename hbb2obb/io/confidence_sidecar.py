"""``--difficult_from confidence``: each box's difficult flag from its confidence, and the side-car it comes from.

``hbb2obb --confidence_dir`` writes a per-box confidence beside the OBB labels: one ``STEM.txt``
per frame, one score per line, row-aligned with the boxes of the label file of the same name, so
the labels stay strictly standard. ``hbb2obb-convert --difficult_from confidence`` turns those
scores (or the source's own confidence column) into the difficult flag of the formats that carry
one (DOTA and Pascal VOC): a box scoring below the threshold is flagged. The scores themselves
are not written anywhere. A side-car that does not line up with the labels is refused: a score
applied to the wrong row flags the wrong box, silently.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from hbb2obb.errors import InputError
from hbb2obb.io.text import ProblemSink, parse_number, split_lines

SIDECAR_SUFFIX = ".txt"


def read_side_car_file(path: Path) -> np.ndarray:
    """The scores of one side-car file, one finite number per non-blank line.

    Raises
    ------
    LabelFormatError
        At ``file:line`` for a line that is not exactly one finite number.
    """
    sink = ProblemSink(path, strict=True)
    scores = []
    for number, fields in split_lines(path, sink):
        value = parse_number(fields[0]) if len(fields) == 1 else None
        if value is None:
            sink.report(number, f"expected one confidence per line, found {' '.join(fields)[:60]!r}")
        scores.append(value)
    return np.array(scores, dtype=np.float64)


def side_car_scores(folder: Path, frames) -> dict:
    """``{frame name: scores}`` from a side-car folder, every frame's file read and checked against its boxes.

    Raises
    ------
    InputError
        The folder does not exist, a frame has no file there, or a file's score count differs
        from its frame's box count (a frame without boxes needs an empty file, as the converter
        writes one).
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise InputError(f"{folder}: confidence folder (--confidence_dir) not found")
    scores = {}
    for frame in frames:
        path = folder / f"{frame.stem}{SIDECAR_SUFFIX}"
        if not path.is_file():
            raise InputError(f"{path}: no confidence file for frame {frame.stem} ({frame.source})")
        row = read_side_car_file(path)
        if len(row) != len(frame.boxes):
            raise InputError(f"{path}: cannot align confidences with {frame.source}: "
                             f"{len(row)} score(s), {len(frame.boxes)} box(es)")
        scores[frame.stem] = row
    return scores


def unmatched_side_car_files(folder: Path, frames) -> list[Path]:
    """The side-car files that no frame is named after (left unread)."""
    stems = {frame.stem for frame in frames}
    return sorted(p for p in Path(folder).glob(f"*{SIDECAR_SUFFIX}") if p.stem not in stems)


def source_scores(frames) -> dict:
    """``{frame name: scores}`` from the labels' own confidence column, when every box has one.

    Raises
    ------
    InputError
        No box carries a confidence, or some do and others do not (a score guessed for the
        unscored boxes would flag or spare them silently); the first unscored frame is named.
    """
    unscored = next((frame for frame in frames if len(frame.boxes) and frame.boxes.score is None), None)
    if unscored is not None or not any(len(frame.boxes) for frame in frames):
        where = f" (first without: {unscored.source})" if unscored is not None else ""
        raise InputError("--difficult_from confidence found no scores: not every box in the source labels carries "
                         f"a confidence column{where}, so pass --confidence_dir with the side-car folder")
    return {frame.stem: (frame.boxes.score if len(frame.boxes) else np.zeros(0)) for frame in frames}


def flag_below(frames, scores: dict, threshold: float) -> tuple[list, int]:
    """The frames with ``difficult`` set where the score is below ``threshold`` (and cleared elsewhere).

    The flag is replaced, not combined, as ``--difficult_from dota`` replaces it: the scores are
    the source of the flag. A fallback box scores 0.0 and is flagged at any positive threshold.

    Returns
    -------
    frames : list of FrameLabels
    flagged : int
        How many boxes are flagged.
    """
    out, flagged = [], 0
    for frame in frames:
        boxes = frame.boxes
        difficult = np.asarray(scores[frame.stem], dtype=np.float64) < threshold
        flagged += int(difficult.sum())
        out.append(frame.with_boxes(type(boxes)(corners=boxes.corners, class_id=boxes.class_id, score=boxes.score,
                                                line=boxes.line, difficult=difficult)))
    return out, flagged
