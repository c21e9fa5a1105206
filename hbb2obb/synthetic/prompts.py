"""HBB prompts of known kinds made from oriented ground truth: tight, corner-cutting, with a margin.

The converter meets three kinds of HBB prompt, and a set with known truth of each is what tells
whether it reads them right:

- ``tight``: the axis-aligned bounds of each OBB (DOTA-HBB, any set boxed from OBBs);
- ``corner``: a hand-drawn box around a vehicle with rounded corners, which cuts the corners of
  a diagonal vehicle's rectangle (``corner_radius`` times its breadth), a pixel or two of noise
  per side;
- ``margin``: the tight bounds grown on every side by a share of the box's size drawn per side
  from ``margin`` (a detector's or a quick annotator's box with room around the object).

:func:`make_prompts` writes any of them from a corner array, so that the real samples' ground
truth gives prompts of every kind too (``tools/converter_scores.py --prompts``).
"""

from __future__ import annotations

import numpy as np

from hbb2obb.errors import UsageError

#: The kinds of prompt :func:`make_prompts` writes.
PROMPT_KINDS = ("tight", "corner", "margin")


def make_prompts(corners, kind: str, rng: np.random.Generator, *, margin: tuple = (0.02, 0.10),
                 corner_radius: float = 0.4, noise_px: float = 1.0, size=None) -> np.ndarray:
    """``(n, 4)`` HBBs ``x1 y1 x2 y2`` of one kind (see the module docstring) around OBBs.

    Parameters
    ----------
    corners : array_like, shape (n, 4, 2)
        The objects' rectangles, image pixels.
    kind : {"tight", "corner", "margin"}
    rng : numpy.random.Generator
        Stream for the margins and the noise.
    margin : (float, float)
        ``margin`` prompts: each side grows by a share of the box's size along its axis drawn
        uniformly from this range, independently per side.
    corner_radius : float
        ``corner`` prompts: the rounding of the body's corners as a share of its breadth.
    noise_px : float
        Standard deviation (pixels) of the noise on every side (a quarter of it for ``tight``
        prompts: sub-pixel, as a tool that boxes polygons in floating point writes them).
    size : (width, height), optional
        The frame, to clip the boxes to.

    Returns
    -------
    ndarray, shape (n, 4)

    Examples
    --------
    >>> square = np.array([[[10, 0], [20, 10], [10, 20], [0, 10]]], float)
    >>> make_prompts(square, "tight", np.random.default_rng(0), noise_px=0).tolist()
    [[0.0, 0.0, 20.0, 20.0]]
    >>> box = make_prompts(square, "margin", np.random.default_rng(0), margin=(0.1, 0.1), noise_px=0)
    >>> box.round(6).tolist()
    [[-2.0, -2.0, 22.0, 22.0]]
    >>> bool((make_prompts(square, "corner", np.random.default_rng(0), noise_px=0) > [0, 0, 0, 0]).any())
    True
    """
    if kind not in PROMPT_KINDS:
        raise UsageError(f"prompt kind must be one of {', '.join(PROMPT_KINDS)}, got {kind!r}")
    corners = np.asarray(corners, dtype=np.float64).reshape(-1, 4, 2)
    lo, hi = corners.min(axis=1), corners.max(axis=1)
    boxes = np.concatenate([lo, hi], axis=1)
    extent = np.tile(hi - lo, 2)
    outward = np.array([-1.0, -1.0, 1.0, 1.0])
    if kind == "tight":
        boxes = boxes + outward * np.abs(rng.normal(0.0, 0.25 * noise_px, (len(boxes), 4)))
    elif kind == "margin":
        low, high = (float(v) for v in margin)
        if not 0 <= low <= high:
            raise UsageError(f"margin must be a range 0 <= low <= high, got {margin!r}")
        grow = rng.uniform(low, high, (len(boxes), 4)) * extent + rng.normal(0.0, noise_px, (len(boxes), 4))
        boxes = boxes + outward * grow
    elif kind == "corner":
        edge = corners[:, 1] - corners[:, 0]
        other = corners[:, 2] - corners[:, 1]
        breadth = np.minimum(np.hypot(*edge.T), np.hypot(*other.T))
        angle = np.arctan2(edge[:, 1], edge[:, 0])
        rounding = corner_radius * breadth * (np.abs(np.cos(angle)) + np.abs(np.sin(angle)) - 1.0)
        cut = rounding[:, None] - rng.normal(0.0, noise_px, (len(boxes), 4))
        cut = np.minimum(cut, 0.2 * extent)  # never more than a fifth of the box from one side
        boxes = boxes - outward * cut
    if size is not None:
        boxes = np.clip(boxes, 0.0, [size[0] - 1, size[1] - 1, size[0] - 1, size[1] - 1])
    return np.round(boxes, 1) + 0.0
