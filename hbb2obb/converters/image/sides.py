"""Loose boxes: move a fitted side out to the dark band just beyond it.

In a drone frame a car's sides curve down into a dark band (the lower panels and tyres that a
slightly oblique view shows, and the shadow right under the body). Colour clusters give that
band to the background, because it looks like the road's shadows, so a mask ends where the
bright body ends; labelled rectangles end in the band's darkest part. On Songdo 00164 the
fitted bottom sides of the bright cars near the image axes stopped a median 0.049 breadths
short of the truth while their top sides lay on it (CHANGELOG.md, converter history).

The rule, per side of a fitted rectangle: average the grey level along the side's middle 60%
at offsets from inside the side to 0.3 breadths past it; when within ``band_reach`` breadths
past the side there is a minimum that is darker than the strip just inside the side by
``band_depth``, darker than the ground further out by ``band_ground_margin``, and that the
profile rises from again by ``band_rise`` within 0.05-0.12 breadths beyond it (a band, not the
edge of a wide shadow), the side moves out to that minimum (the numbers are fields of
:class:`~hbb2obb.converters.image.params.ImageParams`). Boxes narrower than ``band_min_breadth``
image pixels are left alone: there such a band is under a pixel wide, and on the synthetic 720p
roads and satellite-like lots (breadths 9-17 px) the rule cost 0.004-0.024 of mean IoU.
"""

from __future__ import annotations

import numpy as np

from hbb2obb.converters.image.box import judged_box
from hbb2obb.converters.image.params import ImageParams

#: Where the profile is sampled: offsets from the side in breadths (outward positive), and the
#: points along the side's middle 60% that each offset's grey level is averaged over.
OFFSETS = np.linspace(-0.08, 0.30, 39)
ALONG = np.linspace(-0.3, 0.3, 13)


def band_offsets(profiles: np.ndarray, offsets: np.ndarray, params: ImageParams) -> np.ndarray:
    """How far (in the units of ``offsets``, breadths) each side moves out to its dark band; 0 for none.

    Parameters
    ----------
    profiles : ndarray, shape (..., n)
        Mean grey level at each offset from a side, one row per side.
    offsets : ndarray, shape (n,)
        Increasing offsets from the side in breadths: negative inside the box, positive outside.
    params : ImageParams
        ``band_reach``, ``band_depth``, ``band_ground_margin`` and ``band_rise`` (module docstring).

    Returns
    -------
    ndarray, shape (...)
        Per row, the offset of the band's darkest point, or 0.0 when no band passes the tests (a
        flat, rising or monotonically falling profile, a band too shallow, a row that is not
        finite); all zeros when ``offsets`` has no sample inside, on the ground or within reach,
        or its length is not the rows'.

    Examples
    --------
    >>> offsets = np.linspace(-0.08, 0.30, 39)
    >>> body, band, road = 200.0, 60.0, 110.0
    >>> profile = np.where(offsets < 0.0, body, np.where(offsets < 0.06, band, road))
    >>> profile[np.argmin(np.abs(offsets - 0.05))] = band - 5  # the band's darkest point
    >>> flat = np.full(39, 120.0)                                # nothing but road
    >>> shadow = np.where(offsets < 0.0, body, band)            # a wide shadow: no rise beyond
    >>> band_offsets(np.stack([profile, flat, shadow]), offsets, ImageParams()).round(2).tolist()
    [0.05, 0.0, 0.0]
    >>> band_offsets(np.empty((0, 39)), offsets, ImageParams()).shape
    (0,)
    """
    profiles = np.asarray(profiles, dtype=np.float64)
    offsets = np.asarray(offsets, dtype=np.float64)
    none = np.zeros(profiles.shape[:-1])
    inside = offsets < 0.0
    ground = offsets >= 0.18
    searched = (offsets >= 0.0) & (offsets <= params.band_reach)
    if profiles.shape[-1:] != offsets.shape or not (inside.any() and ground.any() and searched.any()):
        return none
    k = np.argmin(np.where(searched, profiles, np.inf), axis=-1)
    darkest = np.take_along_axis(profiles, k[..., None], axis=-1)[..., 0]
    start = offsets[k]
    beyond = (offsets > start[..., None] + 0.05) & (offsets <= start[..., None] + 0.12)
    count = beyond.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        beyond_mean = np.where(beyond, profiles, 0.0).sum(axis=-1) / count
    moves = ((count > 0) & np.isfinite(profiles).all(axis=-1)
             & (darkest < profiles[..., inside].mean(axis=-1) - params.band_depth)
             & (darkest < profiles[..., ground].mean(axis=-1) - params.band_ground_margin)
             & (beyond_mean - darkest >= params.band_rise))
    return np.where(moves, start, 0.0)


def _sample_grey(image, points: np.ndarray) -> np.ndarray:
    """Grey levels (Pillow's ``L``) of a PIL image at image points ``(..., 2)``, bilinear.

    Image coordinates put pixel ``i`` over ``[i, i + 1)``, so its centre is at ``i + 0.5``;
    points outside the frame take the nearest edge pixel's value.
    """
    import cv2

    flat = points.reshape(-1, 2)
    x0 = max(int(np.floor(flat[:, 0].min())) - 2, 0)
    y0 = max(int(np.floor(flat[:, 1].min())) - 2, 0)
    x1 = min(int(np.ceil(flat[:, 0].max())) + 2, image.width)
    y1 = min(int(np.ceil(flat[:, 1].max())) + 2, image.height)
    if x1 <= x0 or y1 <= y0:  # wholly outside the frame: the nearest corner region
        x0, y0 = min(max(x0, 0), image.width - 1), min(max(y0, 0), image.height - 1)
        x1, y1 = x0 + 1, y0 + 1
    grey = np.asarray(image.crop((x0, y0, x1, y1)).convert("L"), dtype=np.float32)
    map_x = (flat[:, 0] - 0.5 - x0).astype(np.float32).reshape(-1, 1)
    map_y = (flat[:, 1] - 0.5 - y0).astype(np.float32).reshape(-1, 1)
    values = cv2.remap(grey, map_x, map_y, interpolation=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    return values.reshape(points.shape[:-1]).astype(np.float64)


def extended_to_bands(image, corners: np.ndarray, params: ImageParams) -> np.ndarray:
    """``corners`` (4 x 2, image pixels) with each side moved out to its dark band, if any.

    Parameters
    ----------
    image : PIL.Image.Image
        The frame (any mode Pillow converts to ``L``).
    corners : ndarray, shape (4, 2)
        A rectangle's corners in order around it.
    params : ImageParams
        ``band_min_breadth`` and the band's tests (:func:`band_offsets`).

    Returns
    -------
    ndarray, shape (4, 2)
        The same rectangle when it is narrower than ``band_min_breadth`` pixels, degenerate, or no
        side has a band; else the rectangle with those sides moved, corners in the same order
        of sides as the input.

    Examples
    --------
    >>> from PIL import Image
    >>> frame = np.full((120, 160), 110, np.uint8)   # road
    >>> frame[40:80, 30:130] = 200                    # a bright car body, 40 px across
    >>> frame[80:83, 30:130] = 50                     # its dark lower panel, 3 px (a flat band
    >>> # is entered as far as its first darkest sample)
    >>> box = np.array([[30, 40], [130, 40], [130, 80], [30, 80]], float)
    >>> extended_to_bands(Image.fromarray(frame), box, ImageParams())[2:, 1].round(1).tolist()  # into the band's
    [80.8, 80.8]
    """
    corners = np.asarray(corners, dtype=np.float64).reshape(4, 2)
    if not np.isfinite(corners).all():
        return corners
    centre = corners.mean(axis=0)
    edge_a, edge_b = corners[1] - corners[0], corners[2] - corners[1]
    length_a, length_b = float(np.hypot(*edge_a)), float(np.hypot(*edge_b))
    breadth = min(length_a, length_b)
    if not breadth >= params.band_min_breadth:
        return corners
    axis_a, axis_b = edge_a / length_a, edge_b / length_b
    # the four sides (+b, -b, +a, -a): outward normal, half-extent along it, direction along the
    # side, side length; then every sample point at once, shape (4 sides, offsets, along, 2)
    normals = np.stack([axis_b, -axis_b, axis_a, -axis_a])
    halves = np.array([length_b, length_b, length_a, length_a]) / 2
    alongs = np.stack([axis_a, axis_a, axis_b, axis_b])
    side_lengths = np.array([length_a, length_a, length_b, length_b])
    points = (centre + (halves[:, None, None, None] + OFFSETS[None, :, None, None] * breadth) * normals[:, None, None]
              + (ALONG[None, None, :, None] * side_lengths[:, None, None, None]) * alongs[:, None, None])
    profiles = _sample_grey(image, points).mean(axis=2)
    moves = band_offsets(profiles, OFFSETS, params) * breadth
    if not moves.any():
        return corners
    # each corner moves out along the normals of its two sides: corners[0] sits on the -a and -b
    # sides, then (+a, -b), (+a, +b), (-a, +b)
    along_a = np.array([-moves[3], moves[2], moves[2], -moves[3]])
    along_b = np.array([-moves[1], -moves[1], moves[0], moves[0]])
    return corners + along_a[:, None] * axis_a + along_b[:, None] * axis_b


def banded_result(image, segmentation, result, params: ImageParams, *, keep_masks: bool = False):
    """A loose box's :class:`~hbb2obb.converters.image.box.BoxResult` with its sides moved out to
    their dark bands (:func:`extended_to_bands`), judged by the self-check as a fit is
    (``params`` are a loose frame's).

    ``result`` itself when it is a fallback or not fitted to a mask of its own, when no side
    moves, or when the self-check would send the moved box back to its HBB (so the move adds no
    fallback). The moved box keeps ``result``'s confidence, which judged the fit before the move.
    """
    if result.corners is None or not result.from_mask or result.candidate is None:
        return result
    moved = extended_to_bands(image, result.corners, params)
    if np.array_equal(moved, result.corners):
        return result
    judged = judged_box(segmentation, result.candidate, moved, params, keep_masks=keep_masks, hbb=result)
    if judged.corners is None:
        return result
    judged.confidence = result.confidence
    return judged
