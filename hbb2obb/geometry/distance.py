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
from hbb2obb.geometry.polygon import planar, repair_corners, shoelace

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
    gx, gy = planar(gt)
    px, py = planar(pred)
    first, second = np.hypot(gx[1] - gx[0], gy[1] - gy[0]), np.hypot(gx[2] - gx[1], gy[2] - gy[1])
    return np.stack(_enclosing_planar(gx, gy, px, py, first, second), axis=1)


def distance_ious(gt, pred, iou: Optional[np.ndarray] = None, *, repaired: bool = False) -> DistanceIoU:
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
    repaired : bool
        The corners already went through :func:`repair_corners` (as the boxes of a match
        table did when loaded): skip repairing them again. Repair is idempotent, so this only
        saves time; with bow-ties in the input and ``repaired=True`` the result is undefined.

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
    return _distance_rows(gt, None, pred, None, iou, repaired)


def indexed_distance_ious(gt, gt_rows, pred, pred_rows, iou: Optional[np.ndarray] = None, *,
                          repaired: bool = False) -> DistanceIoU:
    """:func:`distance_ious` of the pairs ``(gt[gt_rows[i]], pred[pred_rows[i]])`` (private helper).

    The same values as gathering the pairs first, without the two pair-sized copies of the
    corners (and their fresh pages): each block of pairs is gathered as it is scored.

    Examples
    --------
    >>> boxes = np.array([[[50, 50], [150, 50], [150, 150], [50, 150]], [[60, 60], [160, 60], [160, 160], [60, 160]]])
    >>> terms = indexed_distance_ious(boxes, [0], boxes, [1])
    >>> round(float(terms.giou[0]), 6), round(float(terms.center_offset[0]), 6)
    (0.664143, 14.142136)
    """
    gt, pred = as_corners(gt), as_corners(pred)
    gt_rows, pred_rows = np.asarray(gt_rows, dtype=np.intp), np.asarray(pred_rows, dtype=np.intp)
    if gt_rows.shape != pred_rows.shape or gt_rows.ndim != 1:
        raise ValueError(f"aligned rows need equal 1-d shapes, got {gt_rows.shape} and {pred_rows.shape}")
    return _distance_rows(gt, gt_rows, pred, pred_rows, iou, repaired)


def _distance_rows(gt, gt_rows, pred, pred_rows, iou, repaired: bool) -> DistanceIoU:
    """The terms of aligned pairs, block by block; ``*_rows`` (or ``None``: every row in order) select them."""
    count = len(gt) if gt_rows is None else len(gt_rows)
    if iou is not None:
        iou = np.asarray(iou, dtype=np.float64)
        if iou.shape != (count,):
            raise ValueError(f"iou must have shape ({count},), got {iou.shape}")
    # Pair by pair, so blocks give the same values with bounded work arrays that stay in cache;
    # each block's terms go straight to their place in the results (no parts to join), and a
    # given IoU is passed through as it is.
    if count <= _BLOCK:
        return _distance_of_block(gt, gt_rows, pred, pred_rows, iou, repaired, slice(0, count))
    results = DistanceIoU(*(iou if iou is not None and field == 0 else np.empty(count) for field in range(5)))
    for start in range(0, count, _BLOCK):
        block = slice(start, start + _BLOCK)
        terms = _distance_of_block(gt, gt_rows, pred, pred_rows, iou, repaired, block)
        for field, values in enumerate(terms):
            if iou is None or field:
                results[field][block] = values
    return results


def _distance_of_block(gt, gt_rows, pred, pred_rows, iou, repaired: bool, block: slice) -> DistanceIoU:
    """The terms of the pairs of one block of :func:`_distance_rows`."""
    if gt_rows is None:
        gt_block, pred_block = gt[block], pred[block]
    else:  # np.take gathers whole rows about twice as fast as fancy indexing
        gt_block, pred_block = np.take(gt, gt_rows[block], axis=0), np.take(pred, pred_rows[block], axis=0)
    if not repaired:
        gt_block, pred_block = repair_corners(gt_block, copy=False)[0], repair_corners(pred_block, copy=False)[0]
    block_iou = iou_pairs(gt_block, pred_block) if iou is None else iou[block]
    return _distance_block(*planar(gt_block), *planar(pred_block), block_iou)


def _distance_block(gx, gy, px, py, iou: np.ndarray) -> DistanceIoU:
    """The terms of repaired pairs given as planar ``(4, n)`` corners.

    Each step is the one the public helpers take (:func:`polygon_area`, :func:`side_lengths`,
    :func:`box_centers`, :func:`enclosing_extent`), written on planar rows so that the values
    are the same bits, without their layout changes and with the shared differences taken once:
    the corners relative to each box's first corner (the shoelace's input, whose rows 1 are the
    first edges and, for the ground truth, the offsets the enclosing box measures) and the
    second edges.
    """
    g_rel_x, g_rel_y, p_rel_x, p_rel_y = gx - gx[0], gy - gy[0], px - px[0], py - py[0]
    g_second_x, g_second_y = gx[2] - gx[1], gy[2] - gy[1]
    # intersection = iou * union and union = |A| + |B| - intersection
    union = (np.abs(shoelace(g_rel_x, g_rel_y)) + np.abs(shoelace(p_rel_x, p_rel_y))) / (1.0 + iou)
    gt_first, gt_second = np.hypot(g_rel_x[1], g_rel_y[1]), np.hypot(g_second_x, g_second_y)
    extent_along, extent_across = _enclosing_planar(gx, gy, px, py, gt_first, gt_second,
                                                    (g_rel_x, g_rel_y, g_second_x, g_second_y))
    enclosing_area = extent_along * extent_across
    giou = iou - _ratio(enclosing_area - union, enclosing_area)

    offset_x = _centre_planar(px) - _centre_planar(gx)
    offset_y = _centre_planar(py) - _centre_planar(gy)
    center_distance2 = offset_x**2 + offset_y**2
    diou = iou - _ratio(center_distance2, extent_along**2 + extent_across**2)

    pred_first, pred_second = np.hypot(p_rel_x[1], p_rel_y[1]), np.hypot(px[2] - px[1], py[2] - py[1])
    aspect_gt = np.arctan2(np.maximum(gt_first, gt_second), np.minimum(gt_first, gt_second))
    aspect_pred = np.arctan2(np.maximum(pred_first, pred_second), np.minimum(pred_first, pred_second))
    v = _ASPECT_SCALE * (aspect_gt - aspect_pred) ** 2
    alpha = _ratio(v, (1.0 - iou) + v)
    ciou = diou - alpha * v
    return DistanceIoU(iou, giou, diou, ciou, np.sqrt(center_distance2))


def _centre_planar(x: np.ndarray) -> np.ndarray:
    """One coordinate of :func:`box_centers` from a planar ``(4, n)`` row set."""
    return (((x[0] + x[1]) + x[2]) + x[3]) / 4.0


def _enclosing_planar(gx, gy, px, py, first, second, gt_differences=None) -> tuple[np.ndarray, np.ndarray]:
    """:func:`enclosing_extent` of planar pairs, given the lengths of the ground truth's edges
    p1->p2 and p2->p3; returns the extent along and across.

    ``gt_differences``: ``(gx - gx[0], gy - gy[0], gx[2] - gx[1], gy[2] - gy[1])`` when the
    caller has them (the same values are computed otherwise).
    """
    if gt_differences is None:
        gt_differences = (gx - gx[0], gy - gy[0], gx[2] - gx[1], gy[2] - gy[1])
    rel_x, rel_y, sx, sy = gt_differences
    # The axis as _axes_planar picks it; its length is the hypot already taken of that edge.
    fx, fy = rel_x[1], rel_y[1]  # gx[1] - gx[0], gy[1] - gy[0]
    longer = sx**2 + sy**2 > fx**2 + fy**2
    length = np.where(longer, second, first)
    flat = length == 0
    length[flat] = 1.0
    ux = np.where(flat, 1.0, np.where(longer, sx, fx)) / length
    uy = np.where(flat, 0.0, np.where(longer, sy, fy)) / length
    minus_uy = -uy
    # Measured from the ground truth's first corner (which projects to 0), so 4K coordinates
    # keep their precision; max and min are exact, so accumulating them point by point gives
    # the extent of the full (8, n) reduction.
    high_along = np.zeros_like(ux)
    low_along = np.zeros_like(ux)
    high_across = np.zeros_like(ux)
    low_across = np.zeros_like(ux)
    along, across, part = np.empty_like(ux), np.empty_like(ux), np.empty_like(ux)
    for gt_side in (True, False):
        for row in range(1 if gt_side else 0, 4):
            if gt_side:  # the offsets from the first corner: gx[row] - gx[0], as taken above
                dx, dy = rel_x[row], rel_y[row]
            else:
                dx, dy = px[row] - gx[0], py[row] - gy[0]
            np.add(np.multiply(dx, ux, out=along), np.multiply(dy, uy, out=part), out=along)
            np.add(np.multiply(dx, minus_uy, out=across), np.multiply(dy, ux, out=part), out=across)
            np.maximum(high_along, along, out=high_along)
            np.minimum(low_along, along, out=low_along)
            np.maximum(high_across, across, out=high_across)
            np.minimum(low_across, across, out=low_across)
    return high_along - low_along, high_across - low_across


def _ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """``numerator / denominator``, 0 where the denominator is 0."""
    safe = denominator > 0
    return np.where(safe, numerator / np.where(safe, denominator, 1.0), 0.0)


def _aligned(a, b):
    a, b = as_corners(a), as_corners(b)
    if a.shape != b.shape:
        raise ValueError(f"aligned pairs need equal shapes, got {a.shape} and {b.shape}")
    return a, b
