"""Ultralytics OBB predictions JSON: what ``model.val(save_json=True)`` writes (``predictions.json``).

A list of detections, each ``{"image_id", "file_name", "category_id", "score", "rbox", "poly"}``
(``OBBValidator.pred_to_json``, Ultralytics 8.1 and later; ``file_name`` since 8.3):

``rbox``
    ``[cx, cy, w, h, angle]`` in pixels of the original image, ``angle`` in radians; the corners
    are those of ``ultralytics.utils.ops.xywhr2xyxyxyxy``: the ``w x h`` rectangle around the
    centre turned by ``angle`` clockwise as shown on screen (image y down).
``poly``
    The same four corners as ``x1 y1 ... x4 y4`` (from ``xywhr2xyxyxyxy``), in pixels. Both are
    rounded to 3 decimals.
``category_id``
    The class id plus one (``OBBValidator`` numbers a dataset's classes ``1..nc``); a
    ``category_id`` below 1 is refused rather than shifted by guess. (A model validated on the
    COCO dataset itself writes COCO's 91 category ids instead: not read here.)
``score``
    The confidence.

The corners are read from ``poly`` when it is there, and checked against ``rbox``: a detection
whose two disagree by more than their rounding allows is a broken row. Frames are named by
``file_name`` without its suffix, else by ``image_id`` (which Ultralytics makes an integer for a
numeric file name: ``0001.jpg`` becomes ``1``, so such frames pair with ground truth only when
``file_name`` is there). Problems are named by JSON path (``predictions.json:[12].poly``).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Optional

import numpy as np

from hbb2obb.errors import InputError
from hbb2obb.io.coco import frame_stem, is_id, load_json
from hbb2obb.io.frame_labels import FrameLabels, json_numbers, make_boxes, shown_json, turned_rect
from hbb2obb.io.text import ProblemSink


def sniff(head: bytes) -> bool:
    """Whether a ``.json`` file's head opens a list of detections with ``image_id`` and ``rbox`` or ``poly``."""
    head = head.removeprefix(b"\xef\xbb\xbf").lstrip()
    return head.startswith(b"[") and b'"image_id"' in head and (b'"rbox"' in head or b'"poly"' in head)


def rbox_corners(cx: float, cy: float, w: float, h: float, angle: float) -> np.ndarray:
    """The corners ``xywhr2xyxyxyxy`` gives an ``rbox``, in its order (from the ``(+w/2, +h/2)`` corner).

    Examples
    --------
    >>> rbox_corners(10, 20, 4, 2, 0).tolist()
    [[12.0, 21.0], [12.0, 19.0], [8.0, 19.0], [8.0, 21.0]]
    """
    quad = np.array(turned_rect(cx, cy, w, h, angle))
    return quad[[2, 1, 0, 3]]


def _corners(item: dict) -> tuple[Optional[list], Optional[str], Optional[str]]:
    """A detection's corners, or the key at fault and why."""
    poly, rbox = item.get("poly"), item.get("rbox")
    box = None
    if rbox is not None:
        box, reason = json_numbers(rbox, 5, "rbox")
        if reason is not None:
            return None, "rbox", f"expected [cx, cy, w, h, angle]: {reason}"
        if box[2] < 0 or box[3] < 0:
            return None, "rbox", "w and h must not be negative"
    if poly is None:
        if box is None:
            return None, "poly", "a detection needs 'poly' or 'rbox'"
        return rbox_corners(*box).tolist(), None, None
    corners, reason = json_numbers(poly, 8, "poly")
    if reason is not None:
        return None, "poly", f"expected [x1, y1, ..., x4, y4]: {reason}"
    quad = np.reshape(corners, (4, 2))
    if box is not None:
        # both rounded to 3 decimals: a corner moves by the centre's and half sides' rounding, the
        # angle's (5e-4 rad) times the half diagonal, and its own
        allowed = 2e-3 + 6e-4 * math.hypot(box[2], box[3]) / 2
        apart = float(np.abs(quad - rbox_corners(*box)).max())
        if apart > allowed:
            return None, "poly", f"poly and rbox are different boxes (corners {apart:.3g} px apart)"
    return quad.tolist(), None, None


def read(path: str | Path, *, strict: bool, label_map: Optional[dict] = None) -> tuple[list, dict, tuple]:
    """Read an Ultralytics OBB ``predictions.json``: one :class:`FrameLabels` per image it names.

    Parameters
    ----------
    path : path-like
    strict : bool
        Raise at the first broken detection, or skip it and list it (predictions).
    label_map : dict of int to str, optional
        Only names the classes: a detection's class is its ``category_id`` minus one.

    Returns
    -------
    frames : list of FrameLabels
        In order of first appearance; ``boxes.line`` the 1-based position in the list.
    names : dict of int to str
    problems : tuple of LabelProblem
    """
    path = Path(path)
    items = load_json(path, "Ultralytics predictions file")
    if not isinstance(items, list):
        raise InputError(f"{path}: not an Ultralytics predictions file (expected a list of detections)")
    sink = ProblemSink(path, strict)
    per_frame: dict = {}
    for index, item in enumerate(items):
        where = f"[{index}]"
        if not isinstance(item, dict):
            sink.report(where, "not an object")
            continue
        stem = _frame(item)
        if stem is None:
            sink.report(where, f"names no image (file_name {shown_json(item.get('file_name'))}, "
                               f"image_id {shown_json(item.get('image_id'))})")
            continue
        rows = per_frame.setdefault(stem, ([], [], [], []))
        category = item.get("category_id")
        if not is_id(category) or category < 1:
            sink.report(f"{where}.category_id", f"must be an integer from 1 (class + 1), found {shown_json(category)}")
            continue
        score = item.get("score")
        if json_numbers([score])[1] is not None:
            sink.report(f"{where}.score", f"not a finite number: {shown_json(score)}")
            continue
        corners, key, reason = _corners(item)
        if corners is None:
            sink.report(f"{where}.{key}", reason)
            continue
        for column, value in zip(rows, (corners, category - 1, index + 1, float(score))):
            column.append(value)
    frames = [FrameLabels(stem, make_boxes(corners, classes, lines, scores=scores), None, path)
              for stem, (corners, classes, lines, scores) in per_frame.items()]
    return frames, dict(label_map or {}), tuple(sink.problems)


def _frame(item: dict) -> Optional[str]:
    """The frame a detection is of: ``file_name``'s stem, else ``image_id`` as text."""
    name = item.get("file_name")
    if isinstance(name, str):
        return frame_stem(name)
    image_id = item.get("image_id")
    if is_id(image_id):
        return str(image_id)
    return frame_stem(image_id) if isinstance(image_id, str) and "/" not in image_id else None
