"""Shape of single quadrilaterals: area, bounds, sides, degeneracy and bow-tie repair.

Every function takes corners as an ``(n, 4, 2)`` float array in image coordinates and works
on all ``n`` boxes at once.

Winding. With image coordinates (y pointing down) a box listed top-left, top-right,
bottom-right, bottom-left has a *positive* shoelace sum; it runs clockwise on screen. That is
the direction :func:`repair_corners` gives the boxes it reorders.
"""

from __future__ import annotations

import numpy as np

from hbb2obb.geometry._arrays import REL_TOL, as_corners

# The two other ways to close 4 points into a polygon with corner 0 first (0-1-2-3 is the given one).
_OTHER_ORDERS = np.array([[0, 1, 3, 2], [0, 2, 1, 3]])
# The same polygon walked the other way round, corner 0 still first.
_REVERSED = np.array([0, 3, 2, 1])
# The three corners that remain when the corner of the row's index is left out.
_KEPT = np.array([[1, 2, 3], [0, 2, 3], [0, 1, 3], [0, 1, 2]])
_NEXT = np.array([1, 2, 3, 0])
_PREV = np.array([3, 0, 1, 2])

# Internally boxes are "planar": two (4, n) arrays x and y, one row per corner. Every operation
# then runs over long contiguous rows, which is several times faster in numpy than (n, 4, 2).


def planar(corners: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(n, 4, 2)`` corners as contiguous ``(4, n)`` arrays ``x``, ``y`` (private helper).

    One copy of the whole transposed block: several times faster than copying the x and the
    y columns one after the other (each of those passes reads the whole block).
    """
    xy = np.ascontiguousarray(corners.transpose(2, 1, 0))
    return xy[0], xy[1]


def shoelace(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Signed shoelace area of polygons given as planar ``(m, n)`` arrays (private helper).

    Repeated consecutive vertices add nothing, so fixed-size vertex buffers padded with copies
    are fine.
    """
    total = x[-1] * y[0] - x[0] * y[-1]
    return 0.5 * (total + (x[:-1] * y[1:] - x[1:] * y[:-1]).sum(axis=0))


def _turns(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Turn at each corner and the zero tolerance of each box (planar input).

    ``turn[i]`` is the cross product of the edges meeting at corner ``i``, that is twice the
    signed area of the triangle of corners ``i-1, i, i+1``. The four triangles are the four
    triples of the corners, so ``sum(|turn|) / 4`` is the area of the convex hull and
    ``sum(turn) / 4`` the signed shoelace area of the polygon as given. Coordinates are taken
    relative to the first corner so products stay small at 4K pixel positions.
    """
    # Row by row into a few work arrays: the values of the gathered form (ex[i] = x[i+1] - x[i],
    # turn[i] = ex[i-1] * ey[i] - ey[i-1] * ex[i], max and min over the 4 rows), bit for bit, at
    # half the passes and without its fresh temporaries.
    x = np.subtract(x, x[0])
    y = np.subtract(y, y[0])
    ex, ey = np.empty_like(x), np.empty_like(y)
    for edge, coord in ((ex, x), (ey, y)):
        np.subtract(coord[1:], coord[:-1], out=edge[:-1])
        np.subtract(coord[0], coord[-1], out=edge[-1])
    turn, part = np.empty_like(x), np.empty_like(x)
    np.multiply(ex[:-1], ey[1:], out=turn[1:])
    np.multiply(ex[-1], ey[0], out=turn[0])
    np.multiply(ey[:-1], ex[1:], out=part[1:])
    np.multiply(ey[-1], ex[0], out=part[0])
    np.subtract(turn, part, out=turn)
    extent = np.maximum(_spread(x, part[0], part[1]), _spread(y, part[2], part[3]))
    return turn, REL_TOL * extent * extent


def _spread(v: np.ndarray, high: np.ndarray, low: np.ndarray) -> np.ndarray:
    """``v.max(axis=0) - v.min(axis=0)`` of a ``(4, n)`` array (the same values), ``high`` and ``low`` as work rows."""
    np.maximum(np.maximum(v[0], v[1], out=high), np.maximum(v[2], v[3], out=low), out=high)
    np.minimum(np.minimum(v[0], v[1], out=low), np.minimum(v[2], v[3]), out=low)
    return np.subtract(high, low, out=high)


def _mixed(turn: np.ndarray, tol: np.ndarray) -> np.ndarray:
    """Boxes that turn both ways by more than the tolerance: not convex as listed."""
    return (turn > tol).any(axis=0) & (turn < -tol).any(axis=0)


_BLOCK = 8192  # boxes per block of _classify


def _turn_block(x: np.ndarray, y: np.ndarray):
    """Turns, tolerance, and the degenerate and mixed (not convex as listed, not degenerate) masks."""
    turn, tol = _turns(x, y)
    degenerate = np.abs(turn).sum(axis=0) / 4.0 <= tol
    return turn, tol, degenerate, _mixed(turn, tol) & ~degenerate


def _classify(x: np.ndarray, y: np.ndarray):
    """Turns, tolerance, and the degenerate, needs-reordering and concave masks of each box (planar).

    A quadrilateral not convex as listed is either self-intersecting (a bow-tie: two opposite
    edges cross, which takes two turns of each sign) or a simple concave quad (an arrowhead:
    one reflex corner, three turns one way and one the other). Only the bow-tie is reordered;
    the concave quad is a valid polygon and is kept as it is. A quad with a turn within the
    tolerance of zero and mixed other turns is treated as a bow-tie (reordered to its hull):
    it is a self-touching outline, not a polygon with an inside.
    """
    n = x.shape[1]
    if n <= _BLOCK:
        turn, tol, degenerate, mixed = _turn_block(x, y)
    else:  # column blocks: the same values, with work arrays that stay small instead of growing the heap
        turn, tol = np.empty((4, n)), np.empty(n)
        degenerate, mixed = np.empty(n, dtype=bool), np.empty(n, dtype=bool)
        for start in range(0, n, _BLOCK):
            part = slice(start, start + _BLOCK)
            turn[:, part], tol[part], degenerate[part], mixed[part] = _turn_block(x[:, part], y[:, part])
    if not mixed.any():  # the usual case: every box convex
        return turn, tol, degenerate, mixed, mixed.copy()
    positive, negative = (turn > tol).sum(axis=0), (turn < -tol).sum(axis=0)
    concave = mixed & (positive + negative == 4) & (np.minimum(positive, negative) == 1)
    return turn, tol, degenerate, mixed & ~concave, concave


def _hull_order(x: np.ndarray, y: np.ndarray, turn: np.ndarray, tol: np.ndarray) -> np.ndarray:
    """Corner order ``(4, r)`` of the convex hull, positively wound, of boxes not convex as listed.

    Four points in convex position close into a convex polygon in exactly one of the three
    orders that start at corner 0; it is tried first. Otherwise one point lies inside the
    triangle of the other three: that triangle is the largest of the four corner triangles.
    """
    count = x.shape[1]
    order = np.zeros((4, count), dtype=np.int64)
    done = np.zeros(count, dtype=bool)
    for candidate in _OTHER_ORDERS:
        cand_turn, _ = _turns(x[candidate], y[candidate])
        fits = ~done & ~_mixed(cand_turn, tol)
        wound = np.where(cand_turn.sum(axis=0) < 0, candidate[_REVERSED][:, None], candidate[:, None])
        order[:, fits] = wound[:, fits]
        done |= fits
    inner = ~done
    if inner.any():
        left_out = (np.argmax(np.abs(turn[:, inner]), axis=0) + 2) % 4  # turn i spans corners i-1..i+1
        kept = _KEPT[left_out].T  # (3, r)
        px = np.take_along_axis(x[:, inner], kept, axis=0)
        py = np.take_along_axis(y[:, inner], kept, axis=0)
        negative = (px[1] - px[0]) * (py[2] - py[0]) - (py[1] - py[0]) * (px[2] - px[0]) < 0
        kept = np.where(negative, kept[[0, 2, 1]], kept)
        order[:, inner] = np.concatenate([kept, kept[2:]], axis=0)
    return order


def _reordered(corners: np.ndarray, order: np.ndarray) -> np.ndarray:
    """Rows of ``(r, 4, 2)`` corners put in the planar ``(4, r)`` corner ``order``."""
    return np.take_along_axis(corners, order.T[..., None], axis=1)


def convex_positive(x: np.ndarray, y: np.ndarray):
    """Every box wound positively, bow-ties as their convex hull, plus the degenerate and concave masks.

    Planar in, planar out (private helper). Convex boxes keep their corners (reversed when
    wound negatively); bow-ties are reordered as :func:`repair_corners` does; simple concave
    quads keep their corners too, and are flagged: clipping is exact only for convex boxes, so
    their pairs are scored another way (see :func:`hbb2obb.geometry.iou.iou_pairs`).
    """
    turn, tol, degenerate, reorder, concave = _classify(x, y)
    flip = turn.sum(axis=0) < 0
    out_x = np.where(flip, x[::-1], x)
    out_y = np.where(flip, y[::-1], y)
    if reorder.any():
        order = _hull_order(x[:, reorder], y[:, reorder], turn[:, reorder], tol[reorder])
        out_x[:, reorder] = np.take_along_axis(x[:, reorder], order, axis=0)
        out_y[:, reorder] = np.take_along_axis(y[:, reorder], order, axis=0)
    return out_x, out_y, degenerate, concave


def polygon_area(corners) -> np.ndarray:
    """Absolute shoelace area of each quadrilateral, its corners taken in the given order.

    A bow-tie (self-intersecting) box gets the difference of its two lobes, as the shoelace
    formula does; run :func:`repair_corners` first to score the rectangle it describes.

    Parameters
    ----------
    corners : array_like, shape (n, 4, 2)
        Corner coordinates.

    Returns
    -------
    ndarray, shape (n,)
        Areas, float64.

    Examples
    --------
    >>> polygon_area([[[0, 0], [4, 0], [4, 2], [0, 2]], [[0, 0], [0, 2], [4, 2], [4, 0]]]).tolist()
    [8.0, 8.0]
    >>> polygon_area([]).shape
    (0,)
    """
    corners = as_corners(corners)
    if len(corners) <= _AREA_BLOCK:
        x, y = planar(corners)
        return np.abs(shoelace(x - x[0], y - y[0]))
    # In blocks: the transposed copy of a block stays in the cache, where the copy of a million
    # boxes (64 MB) is a strided walk through memory that took longer than the arithmetic.
    return np.concatenate([polygon_area(corners[start:start + _AREA_BLOCK])
                           for start in range(0, len(corners), _AREA_BLOCK)])


_AREA_BLOCK = 1 << 15  # boxes per block of polygon_area (2 MB of corners)


def is_degenerate(corners) -> np.ndarray:
    """Boxes of zero area: all four corners on one line (or on one point).

    A box counts as degenerate when the area of its convex hull is at most ``1e-12`` times
    the square of the larger side of its axis-aligned bounds, so rounding noise in the corner
    coordinates does not matter. The corner order does not matter either: a bow-tie whose two
    lobes cancel is not degenerate.

    Parameters
    ----------
    corners : array_like, shape (n, 4, 2)
        Corner coordinates.

    Returns
    -------
    ndarray of bool, shape (n,)

    Examples
    --------
    >>> is_degenerate([[[0, 0], [4, 0], [4, 2], [0, 2]], [[0, 0], [1, 1], [2, 2], [3, 3]]]).tolist()
    [False, True]
    """
    return _classify(*planar(as_corners(corners)))[2]


def is_concave(corners) -> np.ndarray:
    """Simple concave quadrilaterals: one reflex corner, no crossing edges (an arrowhead).

    Such a box is a valid polygon, scored exactly as it is; :func:`repair_corners` leaves it
    alone. Convex boxes, bow-ties and degenerate boxes are not concave.

    Parameters
    ----------
    corners : array_like, shape (n, 4, 2)
        Corner coordinates.

    Returns
    -------
    ndarray of bool, shape (n,)

    Examples
    --------
    >>> is_concave([[[0, 0], [2, 1], [4, 0], [2, 4]], [[0, 0], [4, 0], [0, 2], [4, 2]]]).tolist()
    [True, False]
    """
    return _classify(*planar(as_corners(corners)))[4]


def repair_corners(corners, with_degenerate: bool = False, with_concave: bool = False, copy: bool = True) -> tuple:
    """Put the corners of bow-tie boxes into convex cyclic order.

    A box whose corners, taken in the given order, turn both ways is not a convex polygon:
    either a bow-tie (two opposite edges cross) or a simple concave quad (one reflex corner).
    The concave quad is a valid polygon and is left as it is (see :func:`is_concave`); a
    bow-tie is replaced by its convex hull:

    * four points in convex position are reordered into the one cyclic order that makes a
      convex quadrilateral, corner 1 kept first;
    * otherwise (a self-touching outline: a corner within the tolerance of the line through
      two others, with the other turns mixed) the hull is the triangle of the three outer
      points, listed in their original order (so corner 1 stays first unless it is the inner
      point), and its last corner is repeated as the fourth.

    Direction rule: a reordered box is wound with a positive shoelace sum, the way
    :meth:`Boxes.from_xywh` lists corners (top-left, top-right, bottom-right, bottom-left:
    clockwise on screen, y pointing down).

    Boxes already convex, in either winding, and degenerate boxes (see :func:`is_degenerate`)
    are returned unchanged and not flagged. Collinear corners within the ``1e-12`` relative
    tolerance count as convex.

    Parameters
    ----------
    corners : array_like, shape (n, 4, 2)
        Corner coordinates.
    with_degenerate : bool
        Also return :func:`is_degenerate` of the boxes (the corner order does not change it),
        from the same pass.
    with_concave : bool
        Also return :func:`is_concave` of the boxes (unchanged rows), from the same pass.
    copy : bool
        ``False``: when no box needs reordering, ``repaired`` is the input array itself (as
        :func:`as_corners` gives it), not a copy; for callers that only read it.

    Returns
    -------
    repaired : ndarray, shape (n, 4, 2)
        A new array (or the input, with ``copy=False`` and nothing reordered); rows not
        flagged are copies of the input.
    reordered : ndarray of bool, shape (n,)
        The rows that were changed.
    degenerate : ndarray of bool, shape (n,)
        Only with ``with_degenerate``.
    concave : ndarray of bool, shape (n,)
        Only with ``with_concave``, last.

    Examples
    --------
    >>> fixed, flag = repair_corners([[[0, 0], [4, 0], [0, 2], [4, 2]]])
    >>> fixed[0].tolist(), flag.tolist()
    ([[0.0, 0.0], [4.0, 0.0], [4.0, 2.0], [0.0, 2.0]], [True])
    >>> repair_corners([[[0, 0], [0, 2], [4, 2], [4, 0]]])[1].tolist()
    [False]
    """
    corners = as_corners(corners)
    x, y = planar(corners)
    turn, tol, degenerate, reorder, concave = _classify(x, y)
    any_reordered = bool(reorder.any())
    repaired = corners.copy() if copy or any_reordered else corners
    if any_reordered:
        order = _hull_order(x[:, reorder], y[:, reorder], turn[:, reorder], tol[reorder])
        repaired[reorder] = _reordered(corners[reorder], order)
        if with_degenerate:  # the hull's corner 1 may differ: measure it as is_degenerate would
            degenerate[reorder] = _classify(*planar(repaired[reorder]))[2]
    out = (repaired, reorder) + ((degenerate,) if with_degenerate else ())
    return out + ((concave,) if with_concave else ())


def bounds(corners) -> np.ndarray:
    """Axis-aligned bounds of each box.

    Parameters
    ----------
    corners : array_like, shape (n, 4, 2)
        Corner coordinates.

    Returns
    -------
    ndarray, shape (n, 4)
        Columns ``xmin, ymin, xmax, ymax``.

    Examples
    --------
    >>> bounds([[[1, 5], [4, 2], [7, 5], [4, 8]]]).tolist()
    [[1.0, 2.0, 7.0, 8.0]]
    """
    flat = as_corners(corners).reshape(-1, 8)
    x0, y0, x1, y1, x2, y2, x3, y3 = (flat[:, i] for i in range(8))
    # Pairwise minimum and maximum of whole columns: several times faster than a reduction
    # over the short corner axis.
    return np.stack([
        np.minimum(np.minimum(x0, x1), np.minimum(x2, x3)),
        np.minimum(np.minimum(y0, y1), np.minimum(y2, y3)),
        np.maximum(np.maximum(x0, x1), np.maximum(x2, x3)),
        np.maximum(np.maximum(y0, y1), np.maximum(y2, y3)),
    ], axis=1)


def side_lengths(corners) -> tuple[np.ndarray, np.ndarray]:
    """Short and long side of each box, from its edges p1->p2 and p2->p3.

    Parameters
    ----------
    corners : array_like, shape (n, 4, 2)
        Corner coordinates, in cyclic order.

    Returns
    -------
    short, long : ndarray, shape (n,)
        The shorter and the longer of the two edge lengths.

    Examples
    --------
    >>> short, long = side_lengths([[[0, 0], [0, 3], [4, 3], [4, 0]]])
    >>> short.tolist(), long.tolist()
    ([3.0], [4.0])
    """
    flat = as_corners(corners).reshape(-1, 8)  # whole columns: long inner loops
    first = np.hypot(flat[:, 2] - flat[:, 0], flat[:, 3] - flat[:, 1])
    second = np.hypot(flat[:, 4] - flat[:, 2], flat[:, 5] - flat[:, 3])
    return np.minimum(first, second), np.maximum(first, second)
