"""Overlap area of two convex quadrilaterals by Green's theorem, exact in its decisions.

The area of a polygon is half the line integral of ``x dy - y dx`` round its boundary, and the
boundary of ``P & Q`` is the part of each box's outline that lies inside the other. Along an
edge from ``p_i`` to ``p_i+1`` the integral over the piece between parameters ``t0`` and
``t1`` is ``(t1 - t0) * cross(p_i, p_i+1)``, so the area needs, per edge, only where the piece
starts and ends:

* the start is the corner itself if the corner lies inside the other box, else the point where
  the edge *enters* the other box (a proper crossing with one of its edges), or nothing;
* the end is the next corner if inside, else where the edge *leaves*, or nothing.

Every one of these decisions is a sign: of ``D[i, j] = cross(e_j, p_i - q_j)`` (corner ``i``
of ``P`` against edge line ``j`` of ``Q``) and of ``G[i, j] = cross(f_i, q_j - p_i)`` (corner
``j`` of ``Q`` against edge line ``i`` of ``P``). Edge ``i`` of ``P`` enters ``Q`` through edge
``j`` when ``p_i`` is outside line ``j``, ``p_i+1`` inside it, and edge ``j`` of ``Q`` runs from
inside line ``i`` to outside it (for two positively wound boxes, where ``P`` enters, ``Q``
leaves). The crossing's parameter is ``t = D[i, j] / (D[i, j] - D[i+1, j])`` along ``P``'s edge
and ``s = G[i, j] / (G[i, j] - G[i, j+1])`` along ``Q``'s.

Why only integer corners. With integer corners (pixel labels) of at most ``2**18`` in the local
frame (``b``'s first corner as origin, as the clipping uses), every ``D`` and ``G`` is an exact
integer (products stay below ``2**53``), so every decision is exact and consistent, and ``t``
and ``s`` are each one correctly rounded division: the crossing point is the same point on both
edges to the last bit, which is what keeps the sum well conditioned (two edges nearly parallel
make the crossing ill-conditioned *along* them; computed from rounded inputs, ``t`` and ``s``
would disagree by up to ``eps * size / angle``, and the area with them). An exactly zero sign
(a corner on the other's edge line: shared corners, coincident or collinear edges, identical
boxes) is settled by simulation of simplicity: ``P`` is taken as translated by ``(e, e**2)``
with ``e -> 0+``, a generic position whose overlap tends to the true one. Each zero sign is
then the sign of the first non-vanishing term, the same for every decision about one edge line,
so collinear edges are never counted twice (the old double count), and an edge of no length
constrains nothing. Reflex corners cannot reach here: with integer corners of such size any
negative turn is far beyond ``REL_TOL`` of the box, so :func:`~hbb2obb.geometry.polygon.convex_positive`
has reordered the box or flagged it concave.

Pairs outside that (non-integer or larger coordinates), and pairs poorly conditioned for any
float formula (the largest local coordinate squared more than ``_CONDITION`` times the larger
area: slivers, a small box far into a big one's frame), are reported as not covered; the caller
clips them. Where covered, the result differs from the exact overlap by rounding only: each of
the at most 24 terms is within ``2 * extent**2`` and carries two roundings, and the sum adds at
most 40 more, so even with every error of the same sign the overlap is off by at most
``1008 * eps * extent**2``, under ``2e-12`` of the union at ``_CONDITION = 16``; errors add like
a random walk in practice (the largest difference from clipping seen on the benchmark sets and
a stress set of coincident edges, shared corners and slivers: 1.8e-15).

Why it is kept beside clipping: the IoU values every output reports are this form's results.
Clipping alone gives the same overlaps to rounding but not to the last bit, so removing this
form would change output bytes. It is not kept for speed: it spares too small a part of a
whole run to earn its place on that alone.
"""

from __future__ import annotations

import numpy as np

#: Largest local coordinate (absolute) of a covered pair: every product of two differences is an
#: exact float64 integer (2**19 * 2**19 * 2 < 2**53), and ``REL_TOL * (2**19)**2 < 1``.
EXACT_COORDINATE = 2.0**18
#: Largest ``extent**2 / max(area_a, area_b)`` of a covered pair (extent: the largest absolute
#: local coordinate). Two overlapping boxes of any usual shape are far inside it (on the
#: Songdo-scale set 4 of 264,639 pairs are beyond it, and clipped).
_CONDITION = 16.0


def green_overlap(ax, ay, bx, by, get):
    """Twice the overlap area and twice each area of aligned convex boxes, where exact (one chunk).

    Parameters
    ----------
    ax, ay, bx, by : ndarray, shape (4, k)
        Planar corners of positively wound convex boxes (as ``convex_positive`` gives them).
    get : callable
        ``get(name, rows, dtype=float64)`` gives a contiguous ``(rows, k)`` work array (contents
        undefined); ``_Scratch.get`` of :mod:`hbb2obb.geometry.iou`.

    Returns
    -------
    twice_overlap, twice_area_a, twice_area_b : ndarray, shape (k,)
        Valid where ``covered``; views of work arrays (copy before the next call). When no pair
        has integer corners (float labels), the function returns as soon as it has found that,
        with these three left undefined: such a chunk costs the test, not the sum.
    covered : ndarray of bool, shape (k,)
        The pairs this formula decides exactly (integer corners, well conditioned).

    Examples
    --------
    >>> import numpy as np
    >>> work = {}
    >>> def get(name, rows, dtype=np.float64):
    ...     return work.setdefault((name, rows), np.empty((rows, 1), dtype))
    >>> a = np.array([[0.0, 2, 2, 0], [0, 0, 2, 2]])  # a 2 x 2 square, x row then y row
    >>> b = np.array([[1.0, 3, 3, 1], [0, 0, 2, 2]])  # the same moved right by 1: edges coincide
    >>> overlap, area_a, area_b, covered = green_overlap(a[:1].T, a[1:].T, b[:1].T, b[1:].T, get)
    >>> overlap.tolist(), area_a.tolist(), covered.tolist()
    ([4.0], [8.0], [True])
    """
    k = ax.shape[1]
    # local[c, r]: c = px, py, qx, qy; r = corner, row 4 repeating corner 0
    local = get("g_local", 20).reshape(4, 5, k)
    for row, corners, origin in ((0, ax, bx[0]), (1, ay, by[0]), (2, bx, bx[0]), (3, by, by[0])):
        np.subtract(corners, origin, out=local[row, :4])
    local[:, 4] = local[:, 0]
    corners = local[:, :4]
    work = get("g_work", 16).reshape(4, 4, k)
    flags = get("g_flags", 16, bool).reshape(4, 4, k)
    covered = get("g_covered", 1, bool)[0]
    np.logical_and.reduce(np.equal(np.rint(corners, out=work), corners, out=flags), axis=(0, 1), out=covered)
    extent = np.max(np.abs(corners, out=work), axis=(0, 1), out=get("g_extent", 1)[0])
    covered &= extent <= EXACT_COORDINATE
    if not covered.any():
        return work[0, 0], work[0, 1], work[0, 2], covered

    # edges[c, i]: fx, fy (P), ex, ey (Q); twice_areas[0, i] = cross(p_i, p_i+1), [1, j] for Q
    edges = get("g_edges", 16).reshape(4, 4, k)
    np.subtract(local[:, 1:], local[:, :4], out=edges)
    fx, fy, ex, ey = edges
    cross_terms = get("g_cross", 8).reshape(2, 4, k)
    part = get("g_part", 8).reshape(2, 4, k)
    np.multiply(local[0::2, :4], local[1::2, 1:], out=cross_terms)
    np.subtract(cross_terms, np.multiply(local[1::2, :4], local[0::2, 1:], out=part), out=cross_terms)
    c_p, c_q = cross_terms
    twice_areas = np.add.reduce(cross_terms, axis=1, out=get("g_areas", 2))
    np.square(extent, out=extent)
    covered &= extent <= _CONDITION * 0.5 * np.maximum(twice_areas[0], twice_areas[1])

    px, py, qx, qy = local
    # D[i, j] = cross(e_j, p_i - q_j) = ex_j py_i - ey_j px_i + cross(q_j, q_j+1); row i = 4 repeats 0
    d = get("g_d", 20).reshape(5, 4, k)
    np.multiply(ex, py[:4, None], out=d[:4])
    np.subtract(d[:4], np.multiply(ey, px[:4, None], out=work), out=d[:4])
    np.add(d[:4], c_q, out=d[:4])
    d[4] = d[0]
    # G[i, j] = cross(f_i, q_j - p_i) = fx_i qy_j - fy_i qx_j + cross(p_i, p_i+1); column j = 4 repeats 0
    g = get("g_g", 20).reshape(4, 5, k)
    spare = get("g_spare", 20).reshape(4, 5, k)
    np.multiply(fx[:, None], qy, out=g)
    np.subtract(g, np.multiply(fy[:, None], qx, out=spare), out=g)
    np.add(g, c_p[:, None], out=g)

    # Inside (strictly positive), a zero settled by P moved by (e, e**2): D gains ex e**2 - ey e,
    # G gains fy e - fx e**2. An edge of no length is no constraint: inside.
    zero_in_q = get("g_zero_q", 4, bool)
    np.less(ey, 0, out=zero_in_q)
    zero_in_q |= (ey == 0) & (ex >= 0)
    zero_in_p = get("g_zero_p", 4, bool)
    np.greater(fy, 0, out=zero_in_p)
    zero_in_p |= (fy == 0) & (fx <= 0)
    inside_d = _signs(d, zero_in_q, get("g_in_d", 20, bool).reshape(5, 4, k), get("g_tie_d", 20, bool).reshape(5, 4, k))
    inside_g = _signs(
        g, zero_in_p[:, None], get("g_in_g", 20, bool).reshape(4, 5, k), get("g_tie_g", 20, bool).reshape(4, 5, k)
    )
    corner_in_q = np.logical_and.reduce(inside_d, axis=1, out=get("g_p_in", 5, bool))
    corner_in_p = np.logical_and.reduce(inside_g, axis=0, out=get("g_q_in", 5, bool))
    # Edge i of P and edge j of Q cross where each runs from one side of the other's line to the other.
    crossing = np.not_equal(inside_d[:4], inside_d[1:], out=flags)
    crossing &= np.not_equal(inside_g[:, :4], inside_g[:, 1:], out=get("g_cross_g", 16, bool).reshape(4, 4, k))
    # The mask as 0.0 / 1.0 by a plain copy: numpy's bool-to-float copy is as fast as a multiply,
    # its casts inside arithmetic and its masked copies several times slower.
    weight = get("g_weight", 16).reshape(4, 4, k)
    np.copyto(weight, crossing)

    # Along P's edge i a piece from parameter t0 to t1 adds cross(p_i, p_i+1) * (t1 - t0): t1 is 1
    # if p_i+1 is inside Q, else t where the edge leaves; t0 is t where it enters (0 for an inside
    # corner adds nothing). Along Q's edges the same with s. Where P enters Q, Q leaves P and the
    # other way round, and each crossing adds +t where P leaves and -t where it enters: that is
    # D[i, j] / |D[i, j] - D[i+1, j]| either way (its sign is D's), and likewise for s. So
    #   twice the overlap = sum_i c_p[i] in_q[i+1] + sum_j c_q[j] in_p[j+1]
    #                       + sum over crossings (c_p[i] D / |D - D'| + c_q[j] G / |G - G'|).
    along_p = _part_of_edge(d[:4], d[1:], weight, work)
    along_p *= c_p[:, None]
    along_q = _part_of_edge(g[:, :4], g[:, 1:], weight, spare[:, :4])
    along_q *= c_q
    along_p += along_q
    total = np.add.reduce(along_p, axis=(0, 1), out=get("g_total", 1)[0])
    for twice_area, corner_in, spare_row in ((c_p, corner_in_q, part[0]), (c_q, corner_in_p, part[1])):
        np.copyto(spare_row, corner_in[1:])
        spare_row *= twice_area
        total += np.add.reduce(spare_row, axis=0)
    return total, twice_areas[0], twice_areas[1], covered


def _signs(values, zero_inside, inside, tie):
    """``values > 0``, and where a value is exactly 0 the perturbed sign ``zero_inside``."""
    np.greater(values, 0, out=inside)
    np.equal(values, 0, out=tie)
    tie &= zero_inside
    inside |= tie
    return inside


def _part_of_edge(here, there, weight, out):
    """``here / |here - there|`` where ``weight`` is 1 (the edges cross), 0 where it is 0.

    The values are exact integers, and at a crossing of opposite signs, so the divisor is at
    least 1 there; raising it to 1 elsewhere keeps every quotient finite without a mask.
    """
    np.subtract(here, there, out=out)
    np.abs(out, out=out)
    np.maximum(out, 1.0, out=out)
    np.divide(here, out, out=out)
    out *= weight
    return out
