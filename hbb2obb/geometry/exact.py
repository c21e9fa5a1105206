"""Exact IoU in rational arithmetic, for the few pairs whose float IoU sits on a decision bound.

A float IoU carries a rounding error of a few units in the last place, whichever exact
algorithm computes it (clipping here, GEOS overlay in shapely). That is harmless except where a
decision is taken on the value: ``IoU > --iou_threshold`` for a match, ``IoU >= 0.5`` for a
ladder rung. Boxes with integer or short decimal corners often have an IoU of exactly 1/2 or
1/10, and the float then lands on either side of the bound by chance (shapely gives
0.10000000000000715 for an IoU of exactly 1/10, so it matches at ``-t 0.1``; exactly, it does
not). :func:`settle_ties` recomputes such pairs in integer arithmetic (every float is a
rational number with a power-of-two denominator, so the corners are taken exactly, and the
clipped points are kept as homogeneous integers) and replaces each by the float nearest to its
exact value, which falls on the right side of any bound it is not exactly equal to.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Iterable, Optional

import numpy as np

from hbb2obb.geometry.polygon import convex_positive, planar

if TYPE_CHECKING:
    from fractions import Fraction  # exact_iou imports it when called; settle_ties needs no rational type

TIE_WINDOW = 1e-9
"""Pairs whose float IoU is within this of a bound are settled exactly (far above float error)."""


def _integer_corners(a: np.ndarray, b: np.ndarray) -> tuple[list, list]:
    """The corners of both boxes as integer points, all scaled by one power of two (IoU is scale-free).

    Every finite float is ``n / 2**k`` exactly, so the scaled corners are the same points.
    """
    ratios = [float(value).as_integer_ratio() for value in (*a.ravel().tolist(), *b.ravel().tolist())]
    scale = max(denominator for _, denominator in ratios)  # a power of two, a multiple of every other
    scaled = [numerator * (scale // denominator) for numerator, denominator in ratios]
    points = list(zip(scaled[0::2], scaled[1::2]))
    return points[:4], points[4:]


def _area2_integer(points: list) -> int:
    """Twice the signed shoelace area of a polygon of integer points (0 for none)."""
    total = 0
    for (x0, y0), (x1, y1) in zip(points, points[1:] + points[:1]):
        total += x0 * y1 - x1 * y0
    return total


def _clip(subject: list, a, b) -> list:
    """Sutherland-Hodgman: the part of ``subject`` left of (or on) the directed line a->b.

    ``subject`` holds homogeneous integer points ``(X, Y, W)``, ``W > 0``, standing for
    ``(X / W, Y / W)``; ``a`` and ``b`` are integer points. A point's side of the line is the sign
    of ``s = ex (Y - ay W) - ey (X - ax W)`` (its true side value is ``s / W``), and the crossing of
    the edge p->q is ``s_p q - s_q p`` in homogeneous terms, negated when ``s_p < 0`` so that its
    ``W`` stays positive: no division, so nothing is rounded.
    """
    (ax, ay), (bx, by) = a, b
    ex, ey = bx - ax, by - ay

    def side(point):
        x, y, w = point
        return ex * (y - ay * w) - ey * (x - ax * w)

    out = []
    for p, q in zip(subject, subject[1:] + subject[:1]):
        sp, sq = side(p), side(q)
        if sp >= 0:
            out.append(p)
        if (sp > 0 and sq < 0) or (sp < 0 and sq > 0):
            x, y, w = (sp * qc - sq * pc for pc, qc in zip(p, q))
            if w < 0:
                x, y, w = -x, -y, -w
            common = math.gcd(math.gcd(x, y), w)  # keeps the integers from growing clip after clip
            out.append((x // common, y // common, w // common))
    return out


def _area2_homogeneous(points: list) -> tuple[int, int]:
    """Twice the signed area of a polygon of homogeneous points, as ``(numerator, denominator > 0)``."""
    numerator, denominator = 0, 1
    for (x0, y0, w0), (x1, y1, w1) in zip(points, points[1:] + points[:1]):
        term, weight = x0 * y1 - x1 * y0, w0 * w1  # (x0/w0)(y1/w1) - (x1/w1)(y0/w0)
        numerator, denominator = numerator * weight + term * denominator, denominator * weight
        common = math.gcd(numerator, denominator)
        numerator, denominator = numerator // common, denominator // common
    return numerator, denominator


def exact_iou_ratio(a: np.ndarray, b: np.ndarray) -> Optional[tuple[int, int]]:
    """The IoU of two convex quadrilaterals (``(4, 2)``, either winding) as integers ``(p, q)``, ``p / q``.

    In lowest terms, ``q > 0``; ``None`` when the union has no area. Python's ``p / q`` of two
    ints is the correctly rounded float, so this needs no rational type (``fractions`` costs more
    to import than a run spends settling its ties).

    Examples
    --------
    >>> square = np.array([[0.0, 0.0], [2.0, 0.0], [2.0, 2.0], [0.0, 2.0]])
    >>> exact_iou_ratio(square, square + [1.0, 0.0])
    (1, 3)
    """
    pa, pb = _integer_corners(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64))
    pa, pb = (p if _area2_integer(p) >= 0 else p[::-1] for p in (pa, pb))  # clipping keeps the left side
    inter = [(x, y, 1) for x, y in pa]
    for a_point, b_point in zip(pb, pb[1:] + pb[:1]):
        if not inter:
            break
        if a_point != b_point:  # a repeated corner (a hull of three points) cuts nothing
            inter = _clip(inter, a_point, b_point)
    area_a, area_b = abs(_area2_integer(pa)), abs(_area2_integer(pb))
    inter_numerator, inter_denominator = _area2_homogeneous(inter) if len(inter) >= 3 else (0, 1)
    inter_numerator = abs(inter_numerator)
    # IoU = i / (A + B - i) with i = n / d: n / (d (A + B) - n)
    union = inter_denominator * (area_a + area_b) - inter_numerator
    if union <= 0:
        return None
    common = math.gcd(inter_numerator, union)
    return inter_numerator // common, union // common


def exact_iou(a: np.ndarray, b: np.ndarray) -> Optional[Fraction]:
    """The IoU of two convex quadrilaterals (``(4, 2)``, either winding) as an exact fraction.

    ``None`` when the union has no area. :func:`exact_iou_ratio` as a :class:`fractions.Fraction`.

    Examples
    --------
    >>> square = np.array([[0.0, 0.0], [2.0, 0.0], [2.0, 2.0], [0.0, 2.0]])
    >>> exact_iou(square, square + [1.0, 0.0])
    Fraction(1, 3)
    """
    from fractions import Fraction

    ratio = exact_iou_ratio(a, b)
    return None if ratio is None else Fraction(*ratio)


def settle_ties(iou: np.ndarray, a, b, bounds: Iterable[float], a_rows=None, b_rows=None) -> np.ndarray:
    """``iou`` with every pair near one of ``bounds`` replaced by the float nearest its exact IoU.

    Parameters
    ----------
    iou : (k,) float
        Float IoU of the aligned pairs ``a[i]``, ``b[i]``.
    a, b : (k, 4, 2) float
        The pairs' corners (bow-ties already repaired or not: they are taken as their hull).
        With ``a_rows`` (``b_rows``): every box, of which pair ``i`` has ``a[a_rows[i]]``; only
        the few pairs near a bound are then gathered, not all ``k``.
    bounds : iterable of float
        The values decisions are taken against (match threshold, ladder rungs).
    a_rows, b_rows : (k,) int, optional
        The pairs' rows of ``a`` and ``b``.

    Returns
    -------
    (k,) float
        A new array when any pair was settled, else ``iou`` itself. Pairs with a concave or
        degenerate box keep their float value.

    Examples
    --------
    >>> a = np.array([[[0.0, 0.0], [10.0, 0.0], [10.0, 1.0], [0.0, 1.0]]])
    >>> b = np.array([[[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]]])
    >>> settle_ties(np.array([0.10000000000000715]), a, b, [0.1]).tolist()
    [0.1]
    """
    iou = np.asarray(iou, dtype=np.float64)
    rows = np.flatnonzero(near_bounds(iou, bounds))
    if rows.size == 0:
        return iou
    a_at = rows if a_rows is None else np.asarray(a_rows)[rows]
    b_at = rows if b_rows is None else np.asarray(b_rows)[rows]
    ax, ay, a_bad, a_concave = convex_positive(*planar(np.asarray(a, dtype=np.float64)[a_at]))
    bx, by, b_bad, b_concave = convex_positive(*planar(np.asarray(b, dtype=np.float64)[b_at]))
    settled = iou.copy()
    for k, row in enumerate(rows.tolist()):
        if a_bad[k] or b_bad[k] or a_concave[k] or b_concave[k]:
            continue
        ratio = exact_iou_ratio(np.stack([ax[:, k], ay[:, k]], axis=1), np.stack([bx[:, k], by[:, k]], axis=1))
        if ratio is not None:
            settled[row] = ratio[0] / ratio[1]  # int / int rounds correctly
    return settled


def near_bounds(values: np.ndarray, bounds: Iterable[float]) -> np.ndarray:
    """Whether each value is within :data:`TIE_WINDOW` of one of ``bounds`` (False for NaN).

    The same mask as testing every bound in turn, in two passes over the values: the nearest
    bound of a value is the one just below or just above it (a float subtraction keeps the
    order of the exact differences, so no farther bound can come out nearer).

    Examples
    --------
    >>> near_bounds(np.array([0.1, 0.5 + 1e-12, 0.3, np.nan]), [0.5, 0.1]).tolist()
    [True, True, False, False]
    """
    values = np.asarray(values, dtype=np.float64)
    ordered = np.sort(np.asarray([float(bound) for bound in bounds], dtype=np.float64))
    if ordered.size == 0 or values.size == 0:
        return np.zeros(values.shape, dtype=bool)
    above = np.searchsorted(ordered, values)  # ordered[above - 1] < value <= ordered[above]
    below = np.maximum(above - 1, 0)
    np.minimum(above, ordered.size - 1, out=above)
    near = np.abs(values - ordered[above]) <= TIE_WINDOW
    near |= np.abs(values - ordered[below]) <= TIE_WINDOW
    return near
