"""Exact intersection over union of oriented boxes, vectorized.

Pairs of integer corners (pixel labels) get their overlap from
:func:`~hbb2obb.geometry.green.green_overlap`, a Green's-theorem sum whose every decision is an
exact integer sign; every other pair, and any the Green form calls poorly conditioned, is
clipped. The two agree to rounding (within 1e-12) but not to the last bit, and the published
IoU values are the Green form's: it stays so that every output keeps its bytes, not for speed
(it saves too little of a whole run to be kept for that alone).

The overlap of two convex quadrilaterals is found by Sutherland-Hodgman clipping of one box
by the four edge half-planes of the other, on fixed-size vertex buffers: one row per vertex
slot, one column per pair, so every numpy operation runs over long contiguous rows. A clip
step keeps each slot in place: inside vertices stay, the run of outside vertices becomes the
exit point repeated and the entry point (repeated collinear points add nothing to the
shoelace sum and keep the polygon convex). Only a run of a single outside vertex needs two
points; that one extra slot per step is inserted for the pairs that need it, so four steps
grow the buffer from 4 to 8 slots, enough for any overlap of two quadrilaterals.

Pairs are computed in a local frame (the first corner of ``b`` as origin) so boxes at 4K
pixel coordinates keep full precision. Every step writes into work arrays kept per thread
(:class:`_Scratch`): fresh temporaries of this size cost more in page faults than in arithmetic.
Which pairs to clip at all comes from :func:`~hbb2obb.geometry.candidates.candidate_pairs`.
"""

from __future__ import annotations

import threading

import numpy as np

from hbb2obb.geometry._arrays import as_corners, as_single
from hbb2obb.geometry.candidates import pairs_of_bounds, planar_bounds
from hbb2obb.geometry.green import green_overlap
from hbb2obb.geometry.polygon import convex_positive, planar

_CHUNK = 8192  # pairs per clipping pass: keeps the work arrays in cache
_ROWS = 10  # rows of the largest vertex buffer: 8 slots (the most an overlap of two quadrilaterals has) + 2 wrap rows


class _Scratch:
    """Work arrays shared by every clip step of every chunk of one call, handed out as views.

    A fresh numpy temporary of a few hundred kB is mapped from the operating system and faulted
    in page by page (glibc hands large freed blocks back), which costs more than the arithmetic
    on it; so the steps write into these buffers with ``out=`` instead.
    """

    def __init__(self, capacity: int, columns: int | None = None, buffers: dict | None = None):
        self.capacity = capacity
        self.columns = capacity if columns is None else columns
        self._buffers = {} if buffers is None else buffers

    def narrowed(self, columns: int) -> _Scratch:
        """The same buffers, handed out ``columns`` wide (at most ``capacity``)."""
        return _Scratch(self.capacity, columns, self._buffers)

    def get(self, name: str, rows: int, dtype=np.float64) -> np.ndarray:
        """A contiguous ``(rows, columns)`` view of the buffer ``name`` (contents undefined)."""
        size = rows * self.columns
        buffer = self._buffers.get(name)
        if buffer is None or buffer.size < size:  # longer polygons than boxes give: grow
            buffer = self._buffers[name] = np.empty(max(_ROWS * self.capacity, size), dtype=dtype)
        return buffer[:size].reshape(rows, self.columns)


_kept = threading.local()  # one full-size _Scratch per thread, reused by every call


def _scratch_for(count: int) -> _Scratch:
    """Work arrays for clipping ``count`` pairs in chunks: the kept full-size set for large calls."""
    if count < _CHUNK // 4:
        return _Scratch(max(count, 1))
    kept = getattr(_kept, "scratch", None)
    if kept is None or kept.capacity != _CHUNK:
        kept = _kept.scratch = _Scratch(_CHUNK)
    return kept


def _clip(X, Y, ex, ey, new_x, new_y, scratch):
    """One Sutherland-Hodgman step on planar, wrapped vertex buffers.

    ``X`` and ``Y`` have shape ``(m + 2, k)``: row ``r`` holds vertex ``r - 1`` of each of the
    ``k`` convex polygons, cyclically (row 0 repeats the last vertex, row ``m + 1`` the first),
    in coordinates relative to the start of the clip edge. Each polygon is cut by the line
    through the origin with direction ``(ex, ey)``, keeping the side where ``cross(e, p) >= 0``.
    Writes into ``new_x`` and ``new_y``, of shape ``(m + 3, k)``, the convex clipped polygons
    relative to the end of the clip edge (the start of the next one), padded with repeated
    vertices. ``scratch`` (a :class:`_Scratch` of ``k`` columns) holds the work arrays.

    Selections are sums of 0/1 masks times values rather than ``np.where``: several times
    faster here, and exact, as every term but one is zero.
    """
    m = X.shape[0] - 2
    get = scratch.get
    d, tmp = get("d", m + 2), get("tmp", m + 2)
    np.subtract(np.multiply(ex, Y, out=d), np.multiply(ey, X, out=tmp), out=d)
    keep_bool = np.greater_equal(d, 0, out=get("keep", m + 2, bool))

    # Where the edge from row j to row j + 1 crosses the line (t in [0, 1] on crossing edges,
    # finite elsewhere: an exactly level edge divides by 1 instead of 0).
    t = np.subtract(d[:-1], d[1:], out=get("t", m + 1))
    np.add(t, np.equal(t, 0, out=get("level", m + 1, bool)), out=t)
    np.divide(d[:-1], t, out=t)
    hit_x, hit_y = get("hit_x", m + 1), get("hit_y", m + 1)
    for hit, coord in ((hit_x, X), (hit_y, Y)):
        np.add(coord[:-1], np.multiply(t, np.subtract(coord[1:], coord[:-1], out=hit), out=hit), out=hit)

    # Inside vertices stay. The outside vertices form one run: its last vertex becomes the
    # entry point, every other one the exit point (collinear repeats add no area and keep the
    # polygon convex). A run of one vertex ("lone") needs both points: the entry is inserted.
    out_bool = np.logical_not(keep_bool[1:-1], out=get("out", m, bool))
    exit_bool = np.logical_and(keep_bool[:-2], out_bool, out=get("exit", m, bool))
    enter_bool = np.logical_and(keep_bool[2:], out_bool, out=get("enter", m, bool))
    np.logical_and(enter_bool, np.logical_not(keep_bool[:-2], out=get("spare", m, bool)), out=enter_bool)
    rest_bool = np.logical_not(enter_bool, out=get("rest", m, bool))
    np.logical_and(out_bool, rest_bool, out=rest_bool)
    inside, exits, enters, rest = (
        _as_float(mask, get(name, m)) for mask, name in
        ((keep_bool[1:-1], "inside_f"), (exit_bool, "exit_f"), (enter_bool, "enter_f"), (rest_bool, "rest_f"))
    )
    part = get("tmp", m)
    for buffer, coord, hit, shift in ((new_x, X, hit_x, ex), (new_y, Y, hit_y, ey)):
        exit_point = np.einsum("ij,ij->j", exits, hit[:-1])
        body = buffer[1 : m + 1]
        np.multiply(inside, coord[1:-1], out=body)
        np.add(body, np.multiply(enters, hit[1:], out=part), out=body)
        np.add(body, np.multiply(rest, exit_point, out=part), out=body)
        np.subtract(body, shift, out=body)
        buffer[m + 1] = buffer[m]

    lone_bool = np.logical_and(exit_bool, keep_bool[2:], out=get("lone", m, bool))
    if np.count_nonzero(exit_bool) > np.count_nonzero(exit_bool.any(axis=0)):
        lone_bool = _several_runs(new_x, new_y, X, Y, d, keep_bool, hit_x, hit_y, ex, ey, lone_bool)
    cols = np.flatnonzero(lone_bool.any(axis=0))
    if cols.size:
        _insert_entry(new_x, new_y, lone_bool, cols, hit_x, hit_y, ex, ey)
    new_x[0], new_y[0] = new_x[m + 1], new_y[m + 1]
    new_x[m + 2], new_y[m + 2] = new_x[1], new_y[1]


def _as_float(mask, out):
    """A boolean mask as 0.0 / 1.0 in ``out``."""
    np.copyto(out, mask)
    return out


def _insert_entry(new_x, new_y, lone, cols, hit_x, hit_y, ex, ey):
    """Insert the entry point after the lone vertex of the polygons ``cols`` (later rows shift)."""
    m = lone.shape[0]
    k = new_x.shape[1]
    slot = np.take(lone, cols, axis=1).argmax(axis=0)
    row = np.arange(1, m + 2)[:, None]
    source = (row - (row > slot + 1)) * k + cols  # flat index of the value landing in each row
    target = row * k + cols
    entry = (slot + 1) * k + cols  # hit row s + 1: where the edge leaving slot s crosses
    for buffer, hit, shift in ((new_x, hit_x, ex), (new_y, hit_y, ey)):
        flat = buffer.reshape(-1)
        moved = flat[source]
        moved[slot + 1, np.arange(cols.size)] = hit.reshape(-1)[entry] - shift[cols]
        flat[target] = moved


def _several_runs(new_x, new_y, X, Y, d, keep, hit_x, hit_y, ex, ey, lone):
    """Redo the polygons whose outside vertices form more than one run.

    A convex polygon has one outside run; several only happen when rounding puts vertices a
    hair either side of the line. Each run is clipped on its own; of several lone vertices
    only the deepest gets its extra slot, the others are projected onto the line, which
    moves the boundary by that hair.
    """
    m = X.shape[0] - 2
    exit_bool = keep[:-2] & ~keep[1:-1]
    cols = np.flatnonzero(exit_bool.sum(axis=0) > 1)
    kept = keep[:, cols]
    inside, before, after = kept[1:-1], kept[:-2], kept[2:]
    exits = ~inside & before
    enters = ~inside & after & ~before
    middle = ~inside & ~before & ~after
    sub_lone = exits & after
    depth = d[1:-1, cols]
    deepest = np.argmin(np.where(sub_lone, depth, np.inf), axis=0)
    extra = sub_lone & (np.arange(m)[:, None] != deepest)
    sub_ex, sub_ey = ex[cols], ey[cols]
    length2 = sub_ex**2 + sub_ey**2
    scale = depth / np.where(length2 > 0, length2, 1.0)
    for buffer, coord, hit, onto_line, frame_shift in (
        (new_x, X[1:-1, cols], hit_x[:, cols], scale * sub_ey, sub_ex),
        (new_y, Y[1:-1, cols], hit_y[:, cols], -scale * sub_ex, sub_ey),
    ):
        value = np.where(exits, hit[:-1], np.where(enters, hit[1:], coord))
        value = np.where(extra, coord + onto_line, value)
        for r in range(2 * m):  # a middle vertex repeats the point before it (runs may wrap)
            i = r % m
            value[i] = np.where(middle[i], value[i - 1], value[i])
        buffer[1 : m + 1, cols] = value - frame_shift
        buffer[m + 1, cols] = buffer[m, cols]
    lone = lone.copy()
    lone[:, cols] = sub_lone & ~extra
    return lone


def _iou_planar(ax, ay, a_bad, bx, by, b_bad, scratch):
    """IoU of aligned, positively wound convex boxes in planar ``(4, k)`` layout (one chunk).

    Pairs of integer corners go through :func:`~hbb2obb.geometry.green.green_overlap` (exact
    decisions; its roundings are the published values); the rest, and the poorly conditioned
    ones, through clipping.
    ``scratch`` is a :class:`_Scratch` of at least ``k`` columns.
    """
    k = ax.shape[1]
    if scratch.columns != k:
        scratch = scratch.narrowed(k)
    with np.errstate(
        invalid="ignore", divide="ignore", over="ignore"
    ):  # as clipping: pairs it does not cover may hold anything
        twice_overlap, twice_a, twice_b, covered = green_overlap(ax, ay, bx, by, scratch.get)
    if not covered.any():  # no pair of integer corners (float labels): clipping alone, not both
        return _iou_clipped(ax, ay, a_bad, bx, by, b_bad, scratch)
    iou = _ratio(0.5 * twice_overlap, 0.5 * twice_a, 0.5 * twice_b, a_bad, b_bad)
    redo = np.flatnonzero(~(covered | a_bad | b_bad))
    if redo.size:
        iou[redo] = _iou_clipped(*(np.take(v, redo, axis=-1) for v in (ax, ay, a_bad, bx, by, b_bad)), scratch)
    return iou


def _ratio(inter, area_a, area_b, a_bad, b_bad):
    """IoU from the overlap and the two areas: 0 for a degenerate box or a union without area."""
    inter = np.clip(inter, 0.0, np.minimum(area_a, area_b))
    union = area_a + area_b - inter
    good = ~(a_bad | b_bad) & (union > 0)
    return np.where(good, inter / np.where(good, union, 1.0), 0.0)


def _iou_clipped(ax, ay, a_bad, bx, by, b_bad, scratch):
    """:func:`_iou_planar` by Sutherland-Hodgman clipping alone (any convex pair)."""
    k = ax.shape[1]
    if scratch.columns != k:
        scratch = scratch.narrowed(k)
    buffers = [
        (scratch.get("x0", _ROWS), scratch.get("y0", _ROWS)),
        (scratch.get("x1", _ROWS), scratch.get("y1", _ROWS)),
    ]
    x, y = (buffer[:6] for buffer in buffers[0])
    bx_local, by_local = scratch.get("bx", 4), scratch.get("by", 4)
    # local origin per pair (the first corner of b): keeps full precision at 4K coordinates
    for wrapped, local, corners, other, origin in ((x, bx_local, ax, bx, bx[0]), (y, by_local, ay, by, by[0])):
        np.subtract(other, origin, out=local)
        np.subtract(corners, origin, out=wrapped[1:5])
        wrapped[0], wrapped[5] = wrapped[4], wrapped[1]
    area_a = _shoelace(x[1:5], y[1:5], scratch)
    area_b = _shoelace(bx_local, by_local, scratch)
    bx, by = bx_local, by_local
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        for j in range(4):
            nxt = (j + 1) % 4
            rows = x.shape[0] + 1
            new_x, new_y = (buffer[:rows] for buffer in buffers[(j + 1) % 2])
            _clip(x, y, bx[nxt] - bx[j], by[nxt] - by[j], new_x, new_y, scratch)
            x, y = new_x, new_y
    m = x.shape[0] - 2
    cross, part = scratch.get("d", m), scratch.get("tmp", m)
    np.subtract(np.multiply(x[1:-1], y[2:], out=cross), np.multiply(x[2:], y[1:-1], out=part), out=cross)
    return _ratio(0.5 * cross.sum(axis=0), area_a, area_b, a_bad, b_bad)


def _shoelace(x, y, scratch):
    """``polygon.shoelace`` of planar ``(4, k)`` boxes, its work arrays in ``scratch`` (same values)."""
    total = x[-1] * y[0] - x[0] * y[-1]
    terms, part = scratch.get("d", 3), scratch.get("tmp", 3)
    np.subtract(np.multiply(x[:-1], y[1:], out=terms), np.multiply(x[1:], y[:-1], out=part), out=terms)
    return 0.5 * (total + terms.sum(axis=0))


def _iou_gathered(prepared_a, prepared_b, ia, ib) -> np.ndarray:
    """IoU of the pairs ``(ia[i], ib[i])`` of boxes passed once through ``convex_positive``.

    ``prepared_a`` and ``prepared_b`` are its ``(x, y, bad)`` of each side. The pairs' corners are
    gathered chunk by chunk into work arrays rather than all at once: the full gathered copy of a
    dense set's pairs is tens of MB of fresh memory, faulted in page by page, to be read once.
    """
    count = ia.size
    out = np.empty(count)
    scratch = _scratch_for(count)
    for start in range(0, count, _CHUNK):
        at_a, at_b = ia[start : start + _CHUNK], ib[start : start + _CHUNK]
        part = scratch if scratch.columns == at_a.size else scratch.narrowed(at_a.size)
        ax, ay, bx, by = (np.take(rows, at, axis=1, out=part.get(name, 4)) for rows, at, name in (
            (prepared_a[0], at_a, "pair_ax"), (prepared_a[1], at_a, "pair_ay"),
            (prepared_b[0], at_b, "pair_bx"), (prepared_b[1], at_b, "pair_by")))
        out[start : start + at_a.size] = _iou_planar(ax, ay, prepared_a[2][at_a], bx, by, prepared_b[2][at_b], part)
    return out


def _exact_concave(ax, ay, bx, by) -> np.ndarray:
    """IoU of aligned planar boxes by shapely 2's vectorized polygon overlay (the rare concave pairs).

    Clipping is exact only for convex boxes; a simple concave quad needs a general polygon
    intersection. Coordinates are taken relative to the first corner of ``b``, as clipping
    does. Union is ``area_a + area_b - intersection``, as in clipping and in the reference.
    """
    import shapely  # only when a concave box is scored: the import costs start-up time

    origin_x, origin_y = bx[0], by[0]
    rings = [np.stack([x - origin_x, y - origin_y], axis=-1).transpose(1, 0, 2) for x, y in ((ax, ay), (bx, by))]
    poly_a, poly_b = shapely.polygons(rings[0]), shapely.polygons(rings[1])
    area_a, area_b = shapely.area(poly_a), shapely.area(poly_b)
    inter = shapely.area(shapely.intersection(poly_a, poly_b))
    union = area_a + area_b - inter
    good = union > 0
    return np.where(good, inter / np.where(good, union, 1.0), 0.0)


def _score_concave(out, ax, ay, a_bad, a_concave, bx, by, b_bad, b_concave) -> None:
    """Overwrite in ``out`` the IoU of the pairs with a concave box by the exact overlay."""
    rows = np.flatnonzero((a_concave | b_concave) & ~(a_bad | b_bad))
    if rows.size:
        out[rows] = _exact_concave(ax[:, rows], ay[:, rows], bx[:, rows], by[:, rows])


def _aligned(a, b):
    a, b = as_corners(a), as_corners(b)
    if a.shape != b.shape:
        raise ValueError(f"aligned pairs need equal shapes, got {a.shape} and {b.shape}")
    return a, b


def iou_pairs(a, b) -> np.ndarray:
    """Exact IoU of aligned pairs of boxes ``a[i]`` and ``b[i]``.

    Each box is taken as a polygon in either winding. A bow-tie (self-intersecting) box is
    scored as its convex hull, as :func:`repair_corners` would reorder it. A simple concave quad
    (:func:`is_concave`) is scored exactly as it is, by shapely's polygon intersection; every
    convex pair by the vectorized clipping. Degenerate boxes (:func:`is_degenerate`) score 0,
    and so does a pair whose union has no area.

    Parameters
    ----------
    a, b : array_like, shape (k, 4, 2)
        Corner coordinates of the two sides, aligned.

    Returns
    -------
    ndarray, shape (k,)
        Intersection area over union area, in [0, 1].

    Examples
    --------
    >>> square = [[0, 0], [2, 0], [2, 2], [0, 2]]
    >>> iou_pairs([square, square], [[[1, 0], [3, 0], [3, 2], [1, 2]], square[::-1]]).round(6).tolist()
    [0.333333, 1.0]
    >>> arrowhead = [[0, 0], [2, 1], [4, 0], [2, 4]]
    >>> iou_pairs([arrowhead], [[[0, 0], [4, 0], [4, 4], [0, 4]]]).round(6).tolist()
    [0.375]
    >>> iou_pairs([], []).shape
    (0,)
    """
    a, b = _aligned(a, b)
    out = np.empty(a.shape[0])
    scratch = _scratch_for(a.shape[0])
    for start in range(0, a.shape[0], _CHUNK):
        part = slice(start, start + _CHUNK)
        ax, ay, a_bad, a_concave = convex_positive(*planar(a[part]))
        bx, by, b_bad, b_concave = convex_positive(*planar(b[part]))
        out[part] = _iou_planar(ax, ay, a_bad, bx, by, b_bad, scratch)
        if a_concave.any() or b_concave.any():
            _score_concave(out[part], ax, ay, a_bad, a_concave, bx, by, b_bad, b_concave)
    return out


def sparse_pairwise_iou(a, b, a_group=None, b_group=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """IoU of every pair of boxes whose bounds overlap (:func:`candidate_pairs`).

    Each box is prepared once (hull, winding), then the pairs are clipped.

    Parameters
    ----------
    a : array_like, shape (n, 4, 2)
        Corner coordinates.
    b : array_like, shape (m, 4, 2)
        Corner coordinates.
    a_group, b_group : array_like, shape (n,) and (m,), optional
        A group label per box (its frame, say): only boxes of the same group pair up, as in
        :func:`candidate_pairs`. Give both or neither.

    Returns
    -------
    ia, ib : ndarray of int64, shape (k,)
        Every candidate pair, ordered by ``ia`` then ``ib``.
    iou : ndarray, shape (k,)
        Their IoU; some may be 0 (bounds overlap, polygons do not).

    Examples
    --------
    >>> a = [[[0, 0], [2, 0], [2, 2], [0, 2]]]
    >>> b = [[[1, 0], [3, 0], [3, 2], [1, 2]], [[5, 5], [6, 5], [6, 6], [5, 6]]]
    >>> ia, ib, iou = sparse_pairwise_iou(a, b)
    >>> ia.tolist(), ib.tolist(), iou.round(6).tolist()
    ([0], [0], [0.333333])
    """
    a, b = as_corners(a), as_corners(b)
    a_planar, b_planar = planar(a), planar(b)  # once per box: for the bounds and for the clipping
    ia, ib = pairs_of_bounds(planar_bounds(*a_planar), planar_bounds(*b_planar), a_group, b_group)
    if ia.size == 0:
        return ia, ib, np.zeros(0)
    ax, ay, bad_a, concave_a = convex_positive(*a_planar)
    bx, by, bad_b, concave_b = convex_positive(*b_planar)
    # Each box is prepared once, and its planar columns gathered per pair. Preparing is column by
    # column, so the values are those of iou_pairs on the gathered corners.
    iou = _iou_gathered((ax, ay, bad_a), (bx, by, bad_b), ia, ib)
    if concave_a.any() or concave_b.any():
        rows = np.flatnonzero(concave_a[ia] | concave_b[ib])
        at_a, at_b = ia[rows], ib[rows]
        scored = iou[rows]
        _score_concave(scored, ax[:, at_a], ay[:, at_a], bad_a[at_a], concave_a[at_a],
                       bx[:, at_b], by[:, at_b], bad_b[at_b], concave_b[at_b])
        iou[rows] = scored
    return ia, ib, iou


def pairwise_iou(a, b) -> np.ndarray:
    """Dense IoU matrix of two sets of boxes, for small sets.

    Memory is ``n x m``; use :func:`sparse_pairwise_iou` for dense frames.

    Parameters
    ----------
    a : array_like, shape (n, 4, 2)
        Corner coordinates.
    b : array_like, shape (m, 4, 2)
        Corner coordinates.

    Returns
    -------
    ndarray, shape (n, m)
        ``iou[i, j]`` of ``a[i]`` and ``b[j]``; 0 where the bounds do not overlap.

    Examples
    --------
    >>> square = [[0, 0], [2, 0], [2, 2], [0, 2]]
    >>> pairwise_iou([square], [square, [[1, 0], [3, 0], [3, 2], [1, 2]]]).round(6).tolist()
    [[1.0, 0.333333]]
    """
    a, b = as_corners(a), as_corners(b)
    matrix = np.zeros((a.shape[0], b.shape[0]))
    ia, ib, iou = sparse_pairwise_iou(a, b)
    matrix[ia, ib] = iou
    return matrix


def calculate_obb_iou(a, b) -> float:
    """IoU of two oriented boxes.

    Parameters
    ----------
    a, b : array_like
        One box each: corners as shape (4, 2), or 8 numbers ``x1 y1 ... x4 y4``.

    Returns
    -------
    float
        Exact intersection over union of the two quadrilaterals, in [0, 1].

    Examples
    --------
    >>> round(calculate_obb_iou([[0, 0], [2, 0], [2, 2], [0, 2]], [1, 0, 3, 0, 3, 2, 1, 2]), 6)
    0.333333
    """
    return float(iou_pairs(as_single(a), as_single(b))[0])
