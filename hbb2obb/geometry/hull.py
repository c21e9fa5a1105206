"""Convex hull of a point set and its minimum-area enclosing rectangle (rotating calipers).

Both work on ``(n, 2)`` float arrays in image coordinates. The hull is Andrew's monotone chain
(one sort, then a short stack walk); the rectangle tests every hull edge direction at once
with numpy, since the minimum-area rectangle has a side on a hull edge (Freeman & Shapira 1975).
"""

from __future__ import annotations

import numpy as np


def _half_hull(points: np.ndarray) -> list[int]:
    """Indices of one monotone chain over ``points`` sorted by (x, y): clockwise turns removed."""
    chain: list[int] = []
    xs, ys = points[:, 0].tolist(), points[:, 1].tolist()
    for index in range(len(xs)):
        while len(chain) >= 2:
            a, b = chain[-2], chain[-1]
            cross = (xs[b] - xs[a]) * (ys[index] - ys[a]) - (ys[b] - ys[a]) * (xs[index] - xs[a])
            if cross > 0:
                break
            chain.pop()
        chain.append(index)
    return chain


#: Directions (counterclockwise) whose extreme points span the polygon of :func:`_inside_extremes`.
_DIRECTIONS = np.stack([np.cos(np.arange(16) * np.pi / 8), np.sin(np.arange(16) * np.pi / 8)])


def _inside_extremes(points: np.ndarray) -> np.ndarray:
    """Points strictly inside the polygon of the extreme points along 16 directions.

    Such points cannot be hull vertices (Akl-Toussaint; any closed polygon of input points
    works: a point strictly left of all its edges is strictly inside the hull); dropping them
    first leaves the monotone chain fewer candidates. Repeated extreme points are merged,
    since a zero-length edge would keep every point.
    """
    x, y = points[:, 0], points[:, 1]
    extremes = np.argmax(points @ _DIRECTIONS, axis=0)
    extremes = extremes[extremes != np.roll(extremes, -1)]
    if len(extremes) < 3:
        return np.zeros(len(points), dtype=bool)
    polygon = points[extremes]
    edges = np.roll(polygon, -1, axis=0) - polygon
    cross = edges[:, 0][None, :] * (y[:, None] - polygon[:, 1][None, :]) \
        - edges[:, 1][None, :] * (x[:, None] - polygon[:, 0][None, :])
    return (cross > 0).all(axis=1)


def _sorted_unique(points: np.ndarray) -> np.ndarray:
    """Distinct rows of an ``(n, 2)`` array sorted by x, then y (``np.unique(axis=0)``, faster)."""
    points = points[np.lexsort((points[:, 1], points[:, 0]))]
    if len(points) > 1:
        distinct = np.ones(len(points), dtype=bool)
        distinct[1:] = (points[1:] != points[:-1]).any(axis=1)
        points = points[distinct]
    return points


def convex_hull(points) -> np.ndarray:
    """Vertices of the convex hull, counterclockwise in the x-right/y-up sense, no repeats.

    Collinear points on hull edges are dropped. One or two distinct points give themselves; an
    empty input gives an empty ``(0, 2)`` array.

    Parameters
    ----------
    points : array_like, shape (n, 2)

    Returns
    -------
    ndarray, shape (k, 2)
        Hull vertices starting at the lowest-x (then lowest-y) point; the shoelace area of the
        result is non-negative.

    Examples
    --------
    >>> convex_hull([[0, 0], [2, 0], [1, 1], [2, 2], [0, 2], [1, 0]]).tolist()
    [[0.0, 0.0], [2.0, 0.0], [2.0, 2.0], [0.0, 2.0]]
    """
    points = np.asarray(points, dtype=np.float64).reshape(-1, 2)
    if len(points) > 32:
        points = points[~_inside_extremes(points)]
    points = _sorted_unique(points)
    if len(points) <= 2:
        return points
    lower = _half_hull(points)
    upper = _half_hull(points[::-1])
    order = lower[:-1] + [len(points) - 1 - i for i in upper[:-1]]
    return points[order]


def mask_outline_points(mask: np.ndarray) -> np.ndarray:
    """Corners of the pixels at the left and right end of every row of a boolean mask.

    The convex hull of these points is the hull of the union of the mask's pixel squares
    (pixel ``(row, col)`` covers ``[col, col + 1) x [row, row + 1)``), and there are at most
    four per row, so hulls of masks stay cheap.

    Examples
    --------
    >>> mask_outline_points(np.array([[0, 1, 1]], bool)).tolist()
    [[1.0, 0.0], [1.0, 1.0], [3.0, 0.0], [3.0, 1.0]]
    """
    mask = np.asarray(mask, dtype=bool)
    rows = np.flatnonzero(mask.any(axis=1))
    if rows.size == 0:
        return np.zeros((0, 2))
    sub = mask[rows]
    first = sub.argmax(axis=1).astype(np.float64)
    last = (sub.shape[1] - sub[:, ::-1].argmax(axis=1)).astype(np.float64)
    top, bottom = rows.astype(np.float64), rows + 1.0
    return np.concatenate([np.stack([first, top], 1), np.stack([first, bottom], 1),
                           np.stack([last, top], 1), np.stack([last, bottom], 1)])


def minimum_area_rectangle(points) -> np.ndarray:
    """Smallest-area rectangle enclosing the points, as four corners in cyclic order.

    Every hull edge direction is tried at once: the points are projected on the edge and on
    its normal, and the direction of least extent product wins (ties: the first hull edge).

    Parameters
    ----------
    points : array_like, shape (n, 2)
        Any points (they need not be a hull). ``n >= 1``.

    Returns
    -------
    ndarray, shape (4, 2)
        Corners; for fewer than three non-collinear points the rectangle is degenerate
        (zero width), for one point all four corners coincide.

    Examples
    --------
    >>> r = minimum_area_rectangle([[0, 0], [2, 2], [3, 1], [1, -1]])
    >>> side_a, side_b = np.linalg.norm(r[1] - r[0]), np.linalg.norm(r[3] - r[0])
    >>> round(float(side_a * side_b), 9)
    4.0
    """
    points = np.asarray(points, dtype=np.float64).reshape(-1, 2)
    if len(points) == 0:
        raise ValueError("minimum_area_rectangle needs at least one point")
    hull = convex_hull(points)
    if len(hull) == 1:
        return np.repeat(hull, 4, axis=0)
    edges = np.roll(hull, -1, axis=0) - hull
    lengths = np.hypot(edges[:, 0], edges[:, 1])
    keep = lengths > 0
    along = edges[keep] / lengths[keep, None]  # (m, 2) unit edge directions
    across = np.stack([-along[:, 1], along[:, 0]], axis=1)
    u = hull @ along.T  # (k, m) projections
    v = hull @ across.T
    u_lo, u_hi, v_lo, v_hi = u.min(0), u.max(0), v.min(0), v.max(0)
    best = int(np.argmin((u_hi - u_lo) * (v_hi - v_lo)))
    a, b = along[best], across[best]
    corners_uv = [(u_lo[best], v_lo[best]), (u_hi[best], v_lo[best]), (u_hi[best], v_hi[best]),
                  (u_lo[best], v_hi[best])]
    return np.array([s * a + t * b for s, t in corners_uv])
