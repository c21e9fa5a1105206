"""A deterministic synthetic dataset: hand-label-like OBBs, HBB prompts and a simulated conversion.

:func:`generate_dataset` writes a folder laid out like the real sample (``labels_obb_gt``,
``labels_hbb``, a prediction folder ``labels_obb_pred``, ``classes.yaml`` and optionally
``images``) so ``make demo``, the tests and the benchmarks have data with known errors in it.
Everything comes from ``numpy.random.default_rng`` streams derived from one seed: the same seed
gives byte-identical files, and frame ``i`` is the same whatever ``n_frames`` is.

Run ``python -m hbb2obb.synthetic OUT_DIR --frames 8 --seed 0`` to write one from the shell.
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Optional, Sequence, Union

import numpy as np

from hbb2obb.boxes import Boxes
from hbb2obb.errors import UsageError
from hbb2obb.synthetic.lots import place_lots
from hbb2obb.synthetic.prompts import PROMPT_KINDS, make_prompts
from hbb2obb.synthetic.roads import make_roads, propose_vehicle
from hbb2obb.synthetic.scene import CORNER_RADIUS, SyntheticFrame, overlaps, rectangle

CLASS_NAMES = {0: "Car", 1: "Bus", 2: "Truck", 3: "Motorcycle"}
#: Share of each class among the generated vehicles (cars dominate, as on real roads).
CLASS_WEIGHTS = {0: 0.86, 1: 0.03, 2: 0.07, 3: 0.04}
#: ``(length mean, length sd, breadth mean, breadth sd)`` in pixels of a 3840-pixel-wide frame.
VEHICLE_SIZE_4K = {0: (95.0, 7.0, 42.0, 2.5), 1: (220.0, 18.0, 48.0, 2.5),
                   2: (150.0, 20.0, 45.0, 2.5), 3: (40.0, 4.0, 19.0, 1.5)}
REFERENCE_WIDTH = 3840
#: Largest outward / inward shift of one HBB side against the GT OBB's bounds, at 4K scale.
HBB_MAX_LOOSEN_4K = 4.0
HBB_MAX_TIGHTEN_4K = 8.0
_GAP_4K = 4.0  # least clearance between two vehicles
_TRIES = 60
#: Where the vehicles are: on roads (drone footage) or parked in lots (satellite-like).
LAYOUTS = ("roads", "lots")
#: How the frames look: daylight colour, a thermal camera (one channel, warm bodies), night.
LOOKS = ("day", "thermal", "night")


@dataclass(frozen=True)
class ErrorRates:
    """How wrong the simulated converter is; every rate is a probability per box unless noted.

    Parameters
    ----------
    jitter_px : float
        Standard deviation of the independent corner jitter, in pixels (clipped at 3 sd); scaled
        down for frames narrower than 1920 pixels.
    angle_sd_deg : float
        Standard deviation of the small angle error.
    widen : float
        Share of boxes whose short side comes out 12-35 % too wide.
    turn : float
        Share of the *near-square* boxes (HBB aspect above 0.8) turned end-for-end by about 90 deg.
    drop : float
        Share of boxes with no prediction line at all.
    extras_per_frame : float
        Mean (Poisson) number of spurious boxes per frame, placed away from every vehicle.
    reorder : float
        Share of boxes written from another start corner (and a third of those counterclockwise).
    missing_frame : bool
        Leave out the prediction file of one frame when there are at least four frames.
    """

    jitter_px: float = 1.3
    angle_sd_deg: float = 1.2
    widen: float = 0.12
    turn: float = 0.3
    drop: float = 0.04
    extras_per_frame: float = 0.8
    reorder: float = 0.3
    missing_frame: bool = True

    @classmethod
    def none(cls) -> "ErrorRates":
        """A perfect converter: predictions equal the ground truth, every file present."""
        return cls(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, False)


@dataclass(frozen=True)
class DatasetInfo:
    """What :func:`generate_dataset` wrote, with counts of the simulated errors.

    The error counts cover only frames that have a prediction file. ``images_dir`` is ``None``
    when no images were rendered. ``frames`` keeps the in-memory truth of every frame.
    """

    root: Path
    gt_dir: Path
    hbb_dir: Path
    pred_dir: Path
    images_dir: Optional[Path]
    map_path: Path
    frame_names: tuple[str, ...]
    width: int
    height: int
    seed: int
    boxes: int
    boxes_per_frame: tuple[int, ...]
    axis_aligned: int
    edge_touching: int
    dropped: int
    extras: int
    turned: int
    widened: int
    missing_pred_frames: tuple[str, ...]
    frames: tuple[SyntheticFrame, ...] = field(default=(), repr=False, compare=False)


def _hbb_from_gt(rng, corners: np.ndarray, heading: np.ndarray, breadth: np.ndarray, class_id: np.ndarray,
                 width: int, height: int, scale: float):
    """Detector-like ``xc yc w h``: the bounds of the rounded body, each side moved by a few pixels.

    A body with corner radius ``r`` reaches ``r (|cos| + |sin| - 1)`` less far than its
    rectangle along each image axis; the detector noise is added on top.
    """
    lo, hi = corners.min(axis=1), corners.max(axis=1)
    extent = np.tile(hi - lo, 2)  # box size across each side: left, top, right, bottom
    turn = np.radians(heading)
    radius = np.array([CORNER_RADIUS.get(int(c), 0.0) for c in class_id]) * np.asarray(breadth, dtype=np.float64)
    rounding = (radius * (np.abs(np.cos(turn)) + np.abs(np.sin(turn)) - 1.0))[:, None]
    out = rng.normal(0.0, 1.2 * scale, (len(corners), 4)) - rounding
    out = np.clip(out, -np.minimum(HBB_MAX_TIGHTEN_4K * scale, 0.2 * extent), HBB_MAX_LOOSEN_4K * scale)
    frame = np.array([width - 1, height - 1])
    box_lo, box_hi = np.clip(lo - out[:, :2], 0, frame), np.clip(hi + out[:, 2:], 0, frame)
    return np.round(np.concatenate([(box_lo + box_hi) / 2, box_hi - box_lo], 1), 1) + 0.0


def _simulate_predictions(rng, frame_truth: dict, hbb: np.ndarray, aligned: np.ndarray, classes, weights,
                          rates: ErrorRates, width: int, height: int, scale: float):
    centre, length, breadth, heading = (frame_truth[k] for k in ("centre", "length", "breadth", "heading"))
    n = len(centre)
    near_square = np.minimum(hbb[:, 2], hbb[:, 3]) > 0.8 * np.maximum(hbb[:, 2], hbb[:, 3])
    dropped = rng.random(n) < rates.drop
    turned = near_square & (rng.random(n) < rates.turn) & ~dropped
    widened = (rng.random(n) < rates.widen) & ~dropped & ~turned
    keep_aligned = aligned & ~turned & (rng.random(n) < 0.5)  # converters often keep a straight box straight
    sigma = rates.jitter_px * min(1.0, 2.0 * scale)  # pixel-level below 1920 wide, so small boxes stay convex
    quads = []
    for i in range(n):
        angle = heading[i] + rng.normal(0.0, rates.angle_sd_deg)
        if turned[i]:
            angle += 90.0 + rng.normal(0.0, 3.0)
        long_side = length[i] * (1.0 + rng.normal(0.0, 0.015 if rates.jitter_px else 0.0))
        short_side = breadth[i] * (rng.uniform(1.12, 1.35) if widened[i] else 1.0)
        jitter = np.clip(rng.normal(0.0, sigma, (4, 2)), -3 * sigma, 3 * sigma)
        if keep_aligned[i]:
            quad = rectangle(centre[i], long_side, short_side, heading[i])  # exact: heading is k * 90
            low = quad == quad.min(axis=0)  # move whole edges, keeping the corner order
            quad = quad + np.where(low, jitter[0], jitter[1])
        else:
            quad = rectangle(centre[i], long_side, short_side, angle) + jitter
        if rng.random() < rates.reorder:
            quad = np.roll(quad, -int(rng.integers(1, 4)), axis=0)
            if rng.random() < 1 / 3:
                quad = quad[::-1]
        quads.append((quad, i))
    lines = [(quad, int(frame_truth["class_id"][i])) for quad, i in quads if not dropped[i]]
    truth = [rectangle(centre[i], length[i], breadth[i], heading[i]) for i in range(n)]
    extras = 0
    for _ in range(int(rng.poisson(rates.extras_per_frame)) if rates.extras_per_frame > 0 else 0):
        cls = int(rng.choice(classes, p=weights))
        size = VEHICLE_SIZE_4K[cls]
        for _ in range(_TRIES):
            quad = rectangle((rng.uniform(0, width - 1), rng.uniform(0, height - 1)), size[0] * scale,
                             size[2] * scale, rng.uniform(0.0, 360.0))
            if (quad >= 0).all() and (quad[:, 0] <= width - 1).all() and (quad[:, 1] <= height - 1).all() \
                    and not overlaps(quad, truth, _GAP_4K * scale):
                lines.insert(int(rng.integers(len(lines) + 1)), (quad, cls))
                truth.append(quad)
                extras += 1
                break
    return lines, dropped, turned, widened, extras


def tight_hbb(corners: np.ndarray) -> np.ndarray:
    """``xc yc w h`` of the axis-aligned bounds of each OBB, as a set boxed from OBBs has them.

    The GT corners are whole pixels, so every side lies on a whole pixel (as in DOTA-HBB).

    Examples
    --------
    >>> tight_hbb(np.array([[[2, 0], [6, 2], [5, 4], [1, 2]]], float)).tolist()
    [[3.5, 2.0, 5.0, 4.0]]
    """
    lo, hi = corners.min(axis=1), corners.max(axis=1)
    return np.concatenate([(lo + hi) / 2, hi - lo], 1) + 0.0


def simulate_frame(name: str, seed: int, index: int, *, width: int = 1920, height: int = 1080,
                   boxes_per_frame: tuple[int, int] = (20, 40), classes: Optional[Mapping[int, float]] = None,
                   aligned_fraction: float = 0.18, pred_decimals: int = 0,
                   errors: Optional[ErrorRates] = None, tight: bool = False,
                   layout: str = "roads", prompts: Optional[str] = None,
                   margin: tuple = (0.02, 0.10)) -> SyntheticFrame:
    """Simulate one frame in memory: vehicles on roads, their HBB prompts and a converter's output.

    Parameters
    ----------
    name : str
        Frame name (file stem).
    seed, index : int
        Dataset seed and frame index; the frame's random streams derive from both only.
    width, height, boxes_per_frame, aligned_fraction, pred_decimals, errors, tight, layout, prompts, margin
        As for :func:`generate_dataset` (``boxes_per_frame`` a range; a crowded frame holds fewer).
    classes : mapping of int to float, optional
        Class id to relative frequency; defaults to :data:`CLASS_WEIGHTS`.

    Returns
    -------
    SyntheticFrame
    """
    errors = ErrorRates() if errors is None else errors
    weights_map = dict(CLASS_WEIGHTS if classes is None else classes)
    ids = np.array(sorted(weights_map), dtype=np.int64)
    weights = np.array([weights_map[i] for i in ids], dtype=np.float64)
    weights /= weights.sum()
    label_rng, pred_rng = (np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(index, k))) for k in (0, 1))
    scale = width / REFERENCE_WIDTH
    if layout not in LAYOUTS:
        raise UsageError(f"layout must be one of {', '.join(LAYOUTS)}, got {layout!r}")
    roads = make_roads(label_rng, width, height, scale) if layout == "roads" else ()
    n_target = int(label_rng.integers(boxes_per_frame[0], boxes_per_frame[1] + 1))
    n_edge = min(n_target, int(label_rng.integers(1, 3)))
    placed, rows, lots = [], [], ()
    if layout == "lots":
        def taken(quad):  # records the rectangle when it is clear of the ones placed before
            if overlaps(quad, placed, 1.0):
                return True
            placed.append(quad)
            return False

        rows, lots = place_lots(label_rng, width, height, ids, weights, n_target, taken)
    for i in range(n_target if layout == "roads" else 0):
        cls = int(label_rng.choice(ids, p=weights))
        mean_l, sd_l, mean_b, sd_b = VEHICLE_SIZE_4K[cls]
        length = max(label_rng.normal(mean_l, sd_l), 0.75 * mean_l) * scale
        breadth = max(label_rng.normal(mean_b, sd_b), 0.8 * mean_b) * scale
        roll = label_rng.random()
        kind = "edge" if i < n_edge else "aligned" if roll < aligned_fraction else \
            "parked" if roll < aligned_fraction + 0.08 else "road"
        for _ in range(_TRIES):
            proposal = propose_vehicle(label_rng, kind, length, breadth, roads, width, height)
            if proposal is None:
                continue
            quad = rectangle(proposal[0], length, breadth, proposal[1])
            inside = (quad >= -1e-6).all() and (quad[:, 0] <= width - 1 + 1e-6).all() \
                and (quad[:, 1] <= height - 1 + 1e-6).all()
            if inside and not overlaps(quad, placed, _GAP_4K * scale):
                placed.append(quad)
                rows.append((cls, proposal[0][0], proposal[0][1], length, breadth, proposal[1] % 360.0))
                break
    rows = [rows[i] for i in label_rng.permutation(len(rows))]
    table = np.array(rows, dtype=np.float64).reshape(-1, 6)
    truth = {"class_id": table[:, 0].astype(np.int64), "centre": table[:, 1:3], "length": table[:, 3],
             "breadth": table[:, 4], "heading": table[:, 5]}
    corners = np.array([rectangle(r[1:3], r[3], r[4], r[5]) for r in table]).reshape(-1, 4, 2)
    corners = np.clip(np.round(corners), 0, [width - 1, height - 1]) + 0.0
    gt = Boxes(corners=corners, class_id=truth["class_id"])
    hbb = _hbb_from_gt(label_rng, corners, truth["heading"], truth["breadth"], truth["class_id"], width, height,
                       scale)  # drawn in either case, so that a tight set has the same vehicles and images
    if tight:
        hbb = tight_hbb(corners)
    lines, dropped, turned, widened, extras = _simulate_predictions(
        pred_rng, truth, hbb, truth["heading"] % 90.0 == 0.0, ids, weights, errors, width, height, scale)
    pred_corners = np.round(np.array([q for q, _ in lines]).reshape(-1, 4, 2), pred_decimals) + 0.0
    pred = Boxes(corners=pred_corners, class_id=np.array([c for _, c in lines], dtype=np.int64))
    if prompts is not None:  # a stream of its own: the vehicles, images and predictions stay the same
        prompt_rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(index, 3)))
        xyxy = make_prompts(corners, prompts, prompt_rng, margin=margin, noise_px=max(0.5, 1.2 * scale * 2),
                            size=(width, height))
        hbb = np.round(np.concatenate([(xyxy[:, :2] + xyxy[:, 2:]) / 2, xyxy[:, 2:] - xyxy[:, :2]], 1), 2) + 0.0
    return SyntheticFrame(name, width, height, roads, gt, truth["centre"], truth["length"], truth["breadth"],
                          truth["heading"], hbb, pred, dropped, turned, widened, extras, lots)


def is_axis_aligned(corners: np.ndarray) -> np.ndarray:
    """Per box, whether all four edges of the ``(n, 4, 2)`` corners are horizontal or vertical."""
    corners = np.asarray(corners, dtype=np.float64).reshape(-1, 4, 2)
    edges = np.roll(corners, -1, axis=1) - corners
    return ((edges[..., 0] == 0) | (edges[..., 1] == 0)).all(axis=1)


def touches_edge(corners: np.ndarray, width: int, height: int) -> np.ndarray:
    """Per box, whether a corner lies on the frame border ``x in {0, width-1}`` or ``y in {0, height-1}``."""
    corners = np.asarray(corners, dtype=np.float64).reshape(-1, 4, 2)
    x, y = corners[..., 0], corners[..., 1]
    return ((x <= 0) | (x >= width - 1) | (y <= 0) | (y >= height - 1)).any(axis=1)


def _number(value: float, decimals: int) -> str:
    return str(int(value)) if decimals == 0 else f"{value + 0.0:.{decimals}f}"


def _write_lines(path: Path, lines: list[str]) -> None:
    with open(path, "w", encoding="utf-8", newline="\n") as handle:
        handle.write("".join(line + "\n" for line in lines))


def _obb_lines(boxes: Boxes, decimals: int) -> list[str]:
    return [" ".join([str(int(c))] + [_number(v, decimals) for v in quad.reshape(-1)])
            for c, quad in zip(boxes.class_id, boxes.corners)]


def _clear_stale(folder: Path, suffixes: tuple[str, ...]) -> None:
    """Remove files a previous run of this generator left (``frame_NNNN.*`` only)."""
    for path in folder.glob("frame_*"):
        if path.suffix in suffixes and re.fullmatch(r"frame_\d{4,}", path.stem):
            path.unlink()


def _class_weights(classes) -> dict[int, float]:
    if classes is None:
        return dict(CLASS_WEIGHTS)
    weights = dict(classes) if isinstance(classes, Mapping) else {int(c): CLASS_WEIGHTS.get(int(c), 0.0)
                                                                     for c in classes}
    if not weights or any(c not in CLASS_NAMES for c in weights) or any(w < 0 for w in weights.values()) \
            or sum(weights.values()) <= 0:
        raise UsageError(f"classes must be ids from {sorted(CLASS_NAMES)} with positive total weight, got {classes!r}")
    return {int(c): float(w) for c, w in weights.items()}


def generate_dataset(out_dir: Union[str, Path], *, n_frames: int = 8,
                     boxes_per_frame: Union[int, tuple[int, int]] = (20, 40), width: int = 1920,
                     height: int = 1080, seed: int = 0, images: bool = True,
                     rims: bool = False,
                     classes: Union[None, Sequence[int], Mapping[int, float]] = None, image_format: str = "jpg",
                     pred_decimals: int = 0, aligned_fraction: float = 0.18,
                     errors: Optional[ErrorRates] = None, tight: bool = False,
                     layout: str = "roads", prompts: Optional[str] = None, margin: tuple = (0.02, 0.10),
                     look: str = "day") -> DatasetInfo:
    """Write a synthetic dataset with known converter errors to ``out_dir``.

    Parameters
    ----------
    out_dir : path-like
        Folder to write into (created). Files ``frame_NNNN.*`` from an earlier run in its
        sub-folders are removed first, so a frame meant to miss its prediction really does.
    n_frames : int
        Number of frames, named ``frame_0000`` on.
    boxes_per_frame : int or (int, int)
        Number of vehicles per frame, or an inclusive range to draw it from.
    width, height : int
        Frame size in pixels; vehicle sizes scale with ``width / 3840``.
    seed : int
        Non-negative seed; the same seed writes byte-identical files.
    images : bool
        Render ``images/<frame>.<image_format>``.
    rims : bool
        Render the vehicles with shaded rims (darker toward the outline, most on the side away
        from the frame's sun, as car bodies look from above) instead of flat colours; the labels
        and every other pixel are the same (:func:`hbb2obb.synthetic.render.render_frame`).
    classes : sequence of int or mapping of int to float, optional
        Class ids to generate (with their default frequencies) or ``{id: weight}``;
        defaults to all four classes of :data:`CLASS_NAMES` at :data:`CLASS_WEIGHTS`.
    image_format : {"jpg", "png"}
        JPEG (quality 90, like drone footage) or lossless PNG.
    pred_decimals : {0, 1}
        Decimals of the predicted corners.
    aligned_fraction : float
        Share of vehicles labelled with an exactly axis-aligned box.
    errors : ErrorRates, optional
        Simulated converter errors; ``ErrorRates.none()`` makes predictions equal to the truth.
    tight : bool
        Write tight HBBs, the exact bounds of each GT OBB on whole pixels (a DOTA-HBB-like set),
        instead of detector-like boxes around the rounded bodies; the vehicles and images are
        the same either way.
    layout : {"roads", "lots"}
        ``roads``: vehicles driving on roads at the drone scale (sizes scale with the width);
        ``lots``: parking lots seen from a satellite, vehicles parked side by side in rows at one
        ground sampling per frame, whatever the width (cars 8-20 px broad, buses and trucks
        1.4 times that; :mod:`hbb2obb.synthetic.lots`).
    prompts : {None, "tight", "corner", "margin"}
        Write HBB prompts of this kind instead (:func:`hbb2obb.synthetic.prompts.make_prompts`):
        the tight bounds, corner-cutting boxes around the rounded bodies, or boxes with a margin
        drawn per side from ``margin`` (shares of the box's size); ``None``: the detector-like
        boxes (or ``tight``'s). The vehicles, images and predictions are the same whatever the kind.
    look : {"day", "thermal", "night"}
        Render daylight colour, a thermal camera's single channel (warm bodies, some parked
        vehicles barely warmer than the ground) or a night frame (dark, low contrast, noisy)
        (:mod:`hbb2obb.synthetic.looks`).

    Returns
    -------
    DatasetInfo
        Paths, frame names and counts of what was simulated.

    Examples
    --------
    >>> import tempfile
    >>> info = generate_dataset(tempfile.mkdtemp(), n_frames=2, images=False)
    >>> info.frame_names, info.gt_dir.name
    (('frame_0000', 'frame_0001'), 'labels_obb_gt')
    """
    if isinstance(boxes_per_frame, (int, np.integer)):
        boxes_per_frame = (int(boxes_per_frame), int(boxes_per_frame))
    lo, hi = (int(v) for v in boxes_per_frame)
    if n_frames < 1 or lo < 0 or hi < lo or width < 64 or height < 64 or seed < 0:
        raise UsageError(f"bad arguments: n_frames={n_frames}, boxes_per_frame={boxes_per_frame}, "
                         f"size={width}x{height}, seed={seed}")
    if prompts is not None and prompts not in PROMPT_KINDS:
        raise UsageError(f"prompts must be one of {', '.join(PROMPT_KINDS)}, got {prompts!r}")
    if look not in LOOKS:
        raise UsageError(f"look must be one of {', '.join(LOOKS)}, got {look!r}")
    if image_format not in ("jpg", "png") or pred_decimals not in (0, 1):
        raise UsageError(f"image_format must be jpg or png and pred_decimals 0 or 1, got "
                         f"{image_format!r}, {pred_decimals!r}")
    weights = _class_weights(classes)
    errors = ErrorRates() if errors is None else errors
    root = Path(out_dir)
    gt_dir, hbb_dir, pred_dir = root / "labels_obb_gt", root / "labels_hbb", root / "labels_obb_pred"
    images_dir = root / "images" if images else None
    for folder in (gt_dir, hbb_dir, pred_dir) + ((images_dir,) if images_dir else ()):
        folder.mkdir(parents=True, exist_ok=True)
        _clear_stale(folder, (".txt", ".png", ".jpg"))
    names = tuple(f"frame_{i:04d}" for i in range(n_frames))
    missing = ()
    if errors.missing_frame and n_frames >= 4:
        missing = (names[int(np.random.default_rng(seed).integers(n_frames))],)
    frames = []
    for index, name in enumerate(names):
        frame = simulate_frame(name, seed, index, width=width, height=height, boxes_per_frame=(lo, hi),
                               classes=weights, aligned_fraction=aligned_fraction,
                               pred_decimals=pred_decimals, errors=errors, tight=tight, layout=layout,
                               prompts=prompts, margin=margin)
        frames.append(frame)
        _write_lines(gt_dir / f"{name}.txt", _obb_lines(frame.gt, 0))
        _write_lines(hbb_dir / f"{name}.txt", [f"{c} " + " ".join(f"{v:.1f}" for v in row)
                                                for c, row in zip(frame.gt.class_id, frame.hbb)])
        if name not in missing:
            _write_lines(pred_dir / f"{name}.txt", _obb_lines(frame.pred, pred_decimals))
        if images_dir is not None:
            from hbb2obb.synthetic.render import render_frame

            rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(index, 2)))
            if look == "day":
                image = render_frame(frame, rng, rims=rims)
            else:
                from hbb2obb.synthetic.looks import render_look

                image = render_look(frame, rng, look)
            options = {"quality": 90} if image_format == "jpg" else {"compress_level": 1}
            image.save(images_dir / f"{name}.{image_format}", **options)
    _write_lines(root / "classes.yaml", [f"{i}: {n}" for i, n in CLASS_NAMES.items()])
    scored = [f for f in frames if f.name not in missing]
    return DatasetInfo(
        root=root, gt_dir=gt_dir, hbb_dir=hbb_dir, pred_dir=pred_dir, images_dir=images_dir,
        map_path=root / "classes.yaml", frame_names=names, width=width, height=height, seed=seed,
        boxes=sum(len(f.gt) for f in frames), boxes_per_frame=tuple(len(f.gt) for f in frames),
        axis_aligned=int(sum(is_axis_aligned(f.gt.corners).sum() for f in frames)),
        edge_touching=int(sum(touches_edge(f.gt.corners, width, height).sum() for f in frames)),
        dropped=int(sum(f.dropped_mask.sum() for f in scored)), extras=sum(f.extras for f in scored),
        turned=int(sum(f.turned_mask.sum() for f in scored)),
        widened=int(sum(f.widened_mask.sum() for f in scored)),
        missing_pred_frames=missing, frames=tuple(frames))


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Command line: ``python -m hbb2obb.synthetic OUT_DIR [--frames N] [--seed S] [--no-images] ...``."""
    parser = argparse.ArgumentParser(prog="python -m hbb2obb.synthetic", description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", help="folder to write the dataset into")
    for flag, default, what in (("--frames", 8, "number of frames"), ("--seed", 0, "random seed"),
                                ("--width", 1920, "frame width in pixels"), ("--height", 1080, "frame height")):
        parser.add_argument(flag, type=int, default=default, help=f"{what} (default {default})")
    parser.add_argument("--boxes", type=int, nargs=2, default=(20, 40), metavar=("MIN", "MAX"),
                        help="vehicles per frame, inclusive range (default 20 40)")
    parser.add_argument("--no-images", dest="images", action="store_false", help="write labels only")
    parser.add_argument("--image-format", choices=("jpg", "png"), default="jpg")
    parser.add_argument("--pred-decimals", type=int, choices=(0, 1), default=0)
    parser.add_argument("--tight", action="store_true",
                        help="tight HBBs: the bounds of each GT OBB on whole pixels, as DOTA-HBB has them")
    parser.add_argument("--prompts", choices=PROMPT_KINDS, default=None,
                        help="HBB prompts of one kind instead of the detector-like ones: tight (bounds of each OBB), "
                             "corner (hand-drawn, cutting rounded corners), margin (room on every side, see --margin)")
    parser.add_argument("--margin", type=float, nargs=2, default=(0.02, 0.10), metavar=("LOW", "HIGH"),
                        help="--prompts margin: each side grows by a share of the box's size drawn from this range "
                             "(default 0.02 0.10)")
    parser.add_argument("--look", choices=LOOKS, default="day",
                        help="day (colour, default), thermal (one channel, warm bodies) or night (dark, low contrast)")
    parser.add_argument("--layout", choices=LAYOUTS, default="roads",
                        help="roads (drone footage of streets, default) or lots (satellite-like parking lots: "
                             "small vehicles in rows)")
    args = parser.parse_args(argv)
    try:
        info = generate_dataset(args.out_dir, n_frames=args.frames, boxes_per_frame=tuple(args.boxes),
                                width=args.width, height=args.height, seed=args.seed, images=args.images,
                                image_format=args.image_format, pred_decimals=args.pred_decimals, tight=args.tight,
                                layout=args.layout, prompts=args.prompts, margin=tuple(args.margin),
                                look=args.look)
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code
    print(f"wrote {len(info.frame_names)} frames, {info.boxes} boxes to {info.root} "
          f"(dropped {info.dropped}, extras {info.extras}, turned {info.turned}, widened {info.widened}, "
          f"missing prediction files: {', '.join(info.missing_pred_frames) or 'none'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
