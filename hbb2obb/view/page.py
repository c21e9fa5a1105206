"""Write the review page: ``index.html``, its scripts, ``data/index.js`` and one data file per frame.

The data files are JavaScript, not JSON: a page opened from disk (``file://``) may not
``fetch`` files (Chromium refuses), but it may load scripts. ``data/index.js`` calls
``hbb2obbIndex({...})`` with the frame list and its statistics; ``data/frames/N.js`` calls
``hbb2obbFrame(N, {...})`` with frame ``N``'s boxes, and is loaded only when the frame is shown.
The values are JSON literals (orjson), which are JavaScript literals too; the page shows every
name from the data as text, never as markup.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Callable, Optional
from urllib.parse import quote

import numpy as np
import orjson

from hbb2obb.errors import UsageError
from hbb2obb.io.atomic import atomic_path, write_text_atomic
from hbb2obb.io.folder_lock import blocking_file
from hbb2obb.plotting.pixels import to_image_pixels
from hbb2obb.view.images import FramePicture
from hbb2obb.view.model import Layer, ViewData

MARKER = "hbb2obb-view.json"  # the page folder's own record: a folder without it is not ours to write into
ASSETS = ("index.html", "view.css", "view.js", "canvas.js")
WORST = 200  # matched pairs of lowest IoU per set in the jump list
_NUMPY = orjson.OPT_SERIALIZE_NUMPY


def check_output(out_dir: Path, overwrite: bool) -> None:
    """Refuse a page folder that exists, is not empty and was not written by ``hbb2obb-view`` (unless ``overwrite``)."""
    blocking = blocking_file(out_dir)
    if blocking is not None:
        raise UsageError(f"-o {out_dir}: {blocking} exists and is not a folder")
    if out_dir.is_dir() and not overwrite and not (out_dir / MARKER).is_file() and any(out_dir.iterdir()):
        raise UsageError(f"-o {out_dir}: the folder holds files hbb2obb-view did not write: refusing to write "
                         "into it (choose a new folder, or --overwrite)")


@dataclass
class PageRun:
    """What :func:`write_page` wrote."""

    frames: int = 0
    boxes: int = 0
    without_image: list = field(default_factory=list)


def _frame_stats(data: ViewData) -> list:
    """Per set: per-frame pairs, mean IoU, unmatched ground truth and predictions, box count, confidence range."""
    n = len(data.frames)
    n_gt = np.bincount(data.gt.frame, minlength=n) if data.gt is not None else np.zeros(n, dtype=np.int64)
    stats = []
    for view_set in data.sets:
        layer, matching = view_set.layer, view_set.matching
        n_pred = np.bincount(layer.frame, minlength=n)
        entry = {"n": n_pred}
        if matching is not None:
            hit = matching.gt_pred >= 0
            pairs = np.bincount(data.gt.frame[hit], minlength=n)
            total = np.bincount(data.gt.frame[hit], weights=matching.gt_iou[hit], minlength=n)
            chosen = np.bincount(layer.frame[matching.pred_gt >= 0], minlength=n)
            with np.errstate(invalid="ignore", divide="ignore"):
                entry.update(pairs=pairs, mean=np.where(pairs > 0, total / np.maximum(pairs, 1), np.nan),
                             ugt=n_gt - pairs, upred=n_pred - chosen)
        score = layer.boxes.score
        if score is not None:
            low, high = np.full(n, np.inf), np.full(n, -np.inf)
            np.minimum.at(low, layer.frame, score)
            np.maximum.at(high, layer.frame, score)
            entry.update(cmin=np.where(np.isfinite(low), low, np.nan), cmax=np.where(np.isfinite(high), high, np.nan))
        stats.append({key: np.round(value, 4) if value.dtype.kind == "f" else value for key, value in entry.items()})
    return stats


def _frame_classes(data: ViewData) -> list:
    """The class ids present in each frame, on any side."""
    layers = [layer for layer in (data.gt, data.prompts) if layer is not None] + [s.layer for s in data.sets]
    frame = np.concatenate([layer.frame for layer in layers])
    classes = np.concatenate([layer.boxes.class_id for layer in layers])
    pairs = np.unique(np.stack([frame, classes]), axis=1) if len(frame) else np.zeros((2, 0), dtype=np.int64)
    starts = np.searchsorted(pairs[0], np.arange(len(data.frames) + 1))
    ids = pairs[1].tolist()
    return [ids[starts[i]:starts[i + 1]] for i in range(len(data.frames))]


def _worst(data: ViewData, starts: list, count: int) -> list:
    """The ``count`` matched pairs of lowest IoU of each set.

    Each is ``[set, frame, ground-truth row within the frame, IoU, angle error]``.
    """
    if data.gt is None:
        return []
    gt_starts = starts[0]
    rows = []
    for index, view_set in enumerate(data.sets):
        matching = view_set.matching
        hit = np.flatnonzero(matching.gt_pred >= 0)
        order = hit[np.argsort(matching.gt_iou[hit], kind="stable")[:count]]
        frame = data.gt.frame[order]
        rows += [[index, int(f), int(g - gt_starts[f]), round(float(i), 4),
                  None if np.isnan(a) else round(float(a), 2)]
                 for f, g, i, a in zip(frame, order, matching.gt_iou[order], matching.gt_angle[order])]
    return rows


def _layer_payload(layer: Layer, start: int, stop: int, index: int, convert) -> dict:
    boxes = layer.boxes
    corners = convert(boxes.corners[start:stop])
    payload = {"c": np.round(corners.reshape(-1), 1), "k": boxes.class_id[start:stop], "f": layer.files[index],
               "l": None if boxes.line is None else boxes.line[start:stop],
               "s": None if boxes.score is None else np.round(boxes.score[start:stop], 4)}
    return payload


def frame_payload(data: ViewData, index: int, starts: list, picture: Optional[FramePicture]) -> dict:
    """Frame ``index``'s boxes in its image's pixels, and each set's pairs as indices within the frame."""
    size = data.frame_sizes[index]

    def convert(corners):
        if picture is None:
            return corners
        return to_image_pixels(corners, size, (picture.width, picture.height))

    out = {"sets": []}
    gt_start = gt_stop = 0
    if data.gt is not None:
        gt_start, gt_stop = int(starts[0][index]), int(starts[0][index + 1])
        out["gt"] = _layer_payload(data.gt, gt_start, gt_stop, index, convert)
    if data.prompts is not None:
        out["hbb"] = _layer_payload(data.prompts, int(starts[1][index]), int(starts[1][index + 1]), index, convert)
    for offset, view_set in enumerate(data.sets):
        bounds = starts[2 + offset]
        start, stop = int(bounds[index]), int(bounds[index + 1])
        payload = _layer_payload(view_set.layer, start, stop, index, convert)
        matching = view_set.matching
        if matching is not None:
            gt_pred = matching.gt_pred[gt_start:gt_stop]
            pred_gt = matching.pred_gt[start:stop]
            payload.update(m=np.where(gt_pred >= 0, gt_pred - start, -1),
                           iou=np.round(matching.gt_iou[gt_start:gt_stop], 4),
                           ang=np.round(matching.gt_angle[gt_start:gt_stop], 2),
                           pg=np.where(pred_gt >= 0, pred_gt - gt_start, -1),
                           piou=np.round(matching.pred_iou[start:stop], 4))
        out["sets"].append(payload)
    return out


def _script(call: str, *args) -> bytes:
    return call.encode() + b"(" + b",".join(orjson.dumps(a, option=_NUMPY) for a in args) + b");\n"


def _write_bytes(path: Path, content: bytes) -> None:
    with atomic_path(path) as temporary:
        temporary.write_bytes(content)


def _frame_size(data: ViewData, index: int, picture: Optional[FramePicture], payload: dict) -> tuple:
    """The size frame ``index`` is drawn at: its image's, else its labels' size, else the boxes' extent."""
    if picture is not None:
        return picture.width, picture.height
    size = data.frame_sizes[index]
    if np.all(np.isfinite(size)) and np.all(size > 0):
        return float(size[0]), float(size[1])
    corners = [np.asarray(layer["c"]) for layer in [payload.get("gt"), payload.get("hbb"), *payload["sets"]]
               if layer is not None and len(layer["c"])]
    if not corners:
        return 100.0, 100.0
    extent = np.concatenate(corners).reshape(-1, 2).max(axis=0)
    return float(max(extent[0], 1.0) * 1.05), float(max(extent[1], 1.0) * 1.05)


def write_page(data: ViewData, out_dir: Path, pictures: dict, *, title: str = "hbb2obb-view",
               progress: Optional[Callable[[int], None]] = None) -> PageRun:
    """Write the page of ``data`` into ``out_dir`` (checked with :func:`check_output` already).

    Parameters
    ----------
    data : ViewData
    out_dir : Path
    pictures : dict
        ``{frame name: FramePicture}`` (:func:`~hbb2obb.view.images.write_pictures`); frames without
        one are drawn on a plain background.
    title : str
        The page's heading (shown as text).
    progress : callable, optional
        Called with 1 after each frame's data file.
    """
    run = PageRun(frames=len(data.frames))
    out_dir.mkdir(parents=True, exist_ok=True)
    frame_dir = out_dir / "data" / "frames"
    frame_dir.mkdir(parents=True, exist_ok=True)
    n = len(data.frames)
    layers = [data.gt, data.prompts] + [s.layer for s in data.sets]
    starts = [None if layer is None else layer.bounds(n) for layer in layers]
    run.boxes = sum(len(layer.boxes) for layer in layers if layer is not None)
    widths, heights, small, full = [], [], [], []
    for index, name in enumerate(data.frames):
        picture = pictures.get(name)
        payload = frame_payload(data, index, starts, picture)
        _write_bytes(frame_dir / f"{index}.js", _script("hbb2obbFrame", index, payload))
        width, height = _frame_size(data, index, picture, payload)
        widths.append(width)
        heights.append(height)
        small.append(None if picture is None else quote(picture.small))
        full.append(None if picture is None or picture.full is None else quote(picture.full))
        if picture is None:
            run.without_image.append(name)
        if progress:
            progress(1)
    _remove_stale_frames(frame_dir, n)
    scores = [s.layer.boxes.score for s in data.sets if s.layer.boxes.score is not None and len(s.layer.boxes)]
    index_data = {
        "title": title, "hasGt": data.gt is not None, "hasHbb": data.prompts is not None,
        "sets": [s.name for s in data.sets],
        "classes": {str(k): str(v) for k, v in sorted((data.class_names or {}).items())},
        "confRange": [float(min(s.min() for s in scores)), float(max(s.max() for s in scores))] if scores else None,
        "frames": {"name": list(data.frames), "w": widths, "h": heights, "img": small, "full": full,
                   "cls": _frame_classes(data), "nGt": None if data.gt is None else np.bincount(data.gt.frame,
                                                                                                minlength=n)},
        "stats": _frame_stats(data),
        "worst": _worst(data, [starts[0]], WORST),
    }
    _write_bytes(out_dir / "data" / "index.js", _script("hbb2obbIndex", index_data))
    assets = resources.files("hbb2obb.view") / "assets"
    for asset in ASSETS:
        _write_bytes(out_dir / asset, (assets / asset).read_bytes())
    write_text_atomic(out_dir / MARKER, json.dumps({"written_by": "hbb2obb-view", "frames": n}) + "\n")
    return run


def _remove_stale_frames(frame_dir: Path, n: int) -> None:
    """Data files of frames an earlier, larger run of this page wrote (``N.js`` with ``N >= n``)."""
    for path in frame_dir.glob("*.js"):
        if path.stem.isdigit() and int(path.stem) >= n:
            path.unlink()
