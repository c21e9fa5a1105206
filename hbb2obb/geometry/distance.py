"""Distance-aware overlap of oriented boxes: GIoU, DIoU and CIoU of aligned pairs, vectorized.

IoU is flat at zero for boxes that do not overlap and blind to the direction a box is off. The
generalized variants add a penalty taken from the smallest box ``C`` enclosing both boxes
(GIoU: Rezatofighi et al. 2019; DIoU and CIoU: Zheng et al. 2020)::

    GIoU = IoU - |C minus (A union B)| / |C|
    DIoU = IoU - d**2 / c**2          d: distance of the two centres, c: diagonal of C
    CIoU = DIoU - alpha * v           v = 4 / pi**2 * (atan(w_gt / h_gt) - atan(w / h))**2
                                      alpha = v / ((1 - IoU) + v)

For oriented boxes, ``C`` is the smallest rectangle aligned with the *ground-truth box's own
axes* (its orientation, and the perpendicular) that encloses both boxes; ``w`` and ``h`` are
each box's long and short side. On an axis-aligned ground truth ``C`` is the usual axis-aligned
enclosing box, so GIoU and DIoU are the standard ones; CIoU is too unless the prediction's long
side runs along the ground truth's short axis (the standard form would then see a different
aspect ratio, this one does not: the orientation error reports that turn).

The argument order matters: the first box of each pair is the ground truth, whose axes
define ``C``.
"""

from __future__ import annotations

from typing import NamedTuple, Optional

import numpy as np

from hbb2obb.geometry._arrays import as_corners
from hbb2obb.geometry.iou import iou_pairs
from hbb2obb.geometry.polygon import polygon_area, repair_corners, side_lengths

_ASPECT_SCALE = 4.0 / np.pi**2
_BLOCK = 16384  # pairs per pass of distance_ious


class DistanceIoU(NamedTuple):
    """Overlap terms of aligned pairs, one array of shape ``(n,)`` per field."""

    iou: np.ndarray
    giou: np.ndarray
    diou: np.ndarray
    ciou: np.ndarray
    center_offset: np.ndarray
    """Distance between the two box centres, in the corners' units (pixels)."""


def box_centers(corners) -> np.ndarray:
    """Centre of each box: the mean of its four corners.

    Parameters
    ----------
    corners : array_like, shape (n, 4, 2)
        Corner coordinates.

    Returns
    -------
    ndarray, shape (n, 2)

    Examples
    --------
    >>> box_centers([[[0, 0], [4, 0], [4, 2], [0, 2]]]).tolist()
    [[2.0, 1.0]]
    """
    corners = as_corners(corners)
    # The sum in mean()'s order, without its reduction over a short axis: the same values.
    return (((corners[:, 0] + corners[:, 1]) + corners[:, 2]) + corners[:, 3]) / 4.0


def box_axes(corners) -> np.ndarray:
    """Unit vector along each box's orientation: its longer edge of p1->p2 and p2->p3.

    The edge is chosen as :func:`~hbb2obb.geometry.orientation` chooses it (the first on a
    tie). A box with no extent gets the image x axis.

    Parameters
    ----------
    corners : array_like, shape (n, 4, 2)
        Corner coordinates.

    Returns
    -------
    ndarray, shape (n, 2)

    Examples
    --------
    >>> box_axes([[[0, 0], [0, 4], [2, 4], [2, 0]]]).tolist()
    [[0.0, 1.0]]
    """
    corners = as_corners(corners)
    first = corners[:, 1] - corners[:, 0]
    second = corners[:, 2] - corners[:, 1]
    longer = (second**2).sum(axis=1) > (first**2).sum(axis=1)
    edge = np.where(longer[:, None], second, first)
    length = np.hypot(edge[:, 0], edge[:, 1])
    flat = length == 0
    edge = np.where(flat[:, None], [1.0, 0.0], edge)
    return edge / np.where(flat, 1.0, length)[:, None]


def enclosing_extent(gt, pred) -> np.ndarray:
    """Width and height of ``C``: the smallest rectangle along each ground truth's own axes
    that encloses both boxes of the pair.

    Parameters
    ----------
    gt, pred : array_like, shape (n, 4, 2)
        Corner coordinates of aligned pairs; ``gt`` supplies the axes.

    Returns
    -------
    ndarray, shape (n, 2)
        Extent of ``C`` along the ground truth's orientation, then across it.

    Examples
    --------
    >>> gt = [[[50, 50], [150, 50], [150, 150], [50, 150]]]
    >>> enclosing_extent(gt, [[[60, 60], [160, 60], [160, 160], [60, 160]]]).tolist()
    [[110.0, 110.0]]
    """
    gt, pred = _aligned(gt, pred)
    # Planar (8, n) layout, so every step runs row against row over the pairs.
    x = np.concatenate([gt[..., 0].T, pred[..., 0].T])
    y = np.concatenate([gt[..., 1].T, pred[..., 1].T])
    ux, uy = _axes_planar(x[:4], y[:4])
    # Measured from the ground truth's first corner, so 4K coordinates keep their precision.
    x -= x[0].copy()
    y -= y[0].copy()
    along = x * ux + y * uy
    across = x * -uy + y * ux
    return np.stack([along.max(axis=0) - along.min(axis=0), across.max(axis=0) - across.min(axis=0)], axis=1)


def _axes_planar(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`box_axes` of planar ``(4, n)`` corners, as two ``(n,)`` arrays (same values)."""
    fx, fy = x[1] - x[0], y[1] - y[0]
    sx, sy = x[2] - x[1], y[2] - y[1]
    longer = sx**2 + sy**2 > fx**2 + fy**2
    ex, ey = np.where(longer, sx, fx), np.where(longer, sy, fy)
    length = np.hypot(ex, ey)
    flat = length == 0
    length = np.where(flat, 1.0, length)
    return np.where(flat, 1.0, ex) / length, np.where(flat, 0.0, ey) / length


def distance_ious(gt, pred, iou: Optional[np.ndarray] = None) -> DistanceIoU:
    """GIoU, DIoU, CIoU and the centre offset of aligned pairs ``(gt[i], pred[i])``.

    Bow-tie boxes are scored as the rectangle their corners describe, as :func:`iou_pairs`
    does. Where a ratio has a zero denominator (degenerate boxes) its penalty is 0.

    Parameters
    ----------
    gt, pred : array_like, shape (n, 4, 2)
        Corner coordinates of aligned pairs; the first is the ground truth, whose axes define
        the enclosing rectangle.
    iou : ndarray, shape (n,), optional
        The pairs' IoU when already known (the match table has it); computed otherwise.

    Returns
    -------
    DistanceIoU
        ``iou, giou, diou, ciou, center_offset``, each of shape ``(n,)``. GIoU and DIoU
        are in [-1, 1]; CIoU is at most DIoU and at least DIoU - 0.25.

    Examples
    --------
    >>> a = [[[50, 50], [150, 50], [150, 150], [50, 150]]]
    >>> b = [[[60, 60], [160, 60], [160, 160], [60, 160]]]
    >>> terms = distance_ious(a, b)
    >>> [round(float(x[0]), 6) for x in terms]
    [0.680672, 0.664143, 0.672408, 0.672408, 14.142136]
    """
    gt, pred = _aligned(gt, pred)
    if iou is not None:
        iou = np.asarray(iou, dtype=np.float64)
        if iou.shape != (len(gt),):
            raise ValueError(f"iou must have shape ({len(gt)},), got {iou.shape}")
    if len(gt) > _BLOCK:  # pair by pair, so blocks give the same values with bounded work arrays
        parts = [_distance_block(gt[s:s + _BLOCK], pred[s:s + _BLOCK], None if iou is None else iou[s:s + _BLOCK])
                 for s in range(0, len(gt), _BLOCK)]
        return DistanceIoU(*(np.concatenate(column) for column in zip(*parts)))
    return _distance_block(gt, pred, iou)


def _distance_block(gt: np.ndarray, pred: np.ndarray, iou: Optional[np.ndarray]) -> DistanceIoU:
    gt, pred = repair_corners(gt)[0], repair_corners(pred)[0]
    iou = iou_pairs(gt, pred) if iou is None else iou
    # intersection = iou * union and union = |A| + |B| - intersection
    union = (polygon_area(gt) + polygon_area(pred)) / (1.0 + iou)
    extent = enclosing_extent(gt, pred)
    enclosing_area = extent[:, 0] * extent[:, 1]
    giou = iou - _ratio(enclosing_area - union, enclosing_area)

    offset = box_centers(pred) - box_centers(gt)
    center_distance2 = (offset**2).sum(axis=1)
    diou = iou - _ratio(center_distance2, (extent**2).sum(axis=1))

    short_gt, long_gt = side_lengths(gt)
    short_pred, long_pred = side_lengths(pred)
    v = _ASPECT_SCALE * (np.arctan2(long_gt, short_gt) - np.arctan2(long_pred, short_pred)) ** 2
    alpha = _ratio(v, (1.0 - iou) + v)
    ciou = diou - alpha * v
    return DistanceIoU(iou, giou, diou, ciou, np.sqrt(center_distance2))


def _ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """``numerator / denominator``, 0 where the denominator is 0."""
    safe = denominator > 0
    return np.where(safe, numerator / np.where(safe, denominator, 1.0), 0.0)


def _aligned(a, b):
    a, b = as_corners(a), as_corners(b)
    if a.shape != b.shape:
        raise ValueError(f"aligned pairs need equal shapes, got {a.shape} and {b.shape}")
    return a, b
