"""Candidate pairs for IoU: boxes whose axis-aligned bounds overlap, found without an n x m matrix.

Every box gets one search key, ``group * span + xmin``; after one sort of each side, each box
finds the other side's boxes that start inside its x-range with two binary searches (two boxes
overlap in x exactly when one starts inside the other), and the ranges are expanded and
filtered exactly in small batches (small enough for numpy to reuse the work arrays).
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from hbb2obb.geometry._arrays import as_corners

_EXPAND_BUDGET = 1 << 14  # candidates expanded at once: work arrays small enough to be reused, not remapped
_BAND_LIMIT = 32  # x-candidates per box beyond which the x-sweep runs within y-bands
_SAMPLE = 2048  # boxes of each side whose x-candidates are counted to choose between the searches
_BAND_COPIES = 3  # band entries per box at most, on average (bands are widened until so)


def candidate_pairs(a, b, a_group=None, b_group=None) -> tuple[np.ndarray, np.ndarray]:
    """Pairs of boxes whose axis-aligned bounds overlap with positive area.

    Only these pairs can have a positive IoU (bounds that merely touch give IoU 0 and are
    left out; so are boxes with a non-finite coordinate). No ``n x m`` matrix is built: the
    boxes of each side are sorted once by one number per box, ``group * span + xmin``, each box
    finds the boxes of the other side that start inside its x-range with two binary searches, and
    the ranges are expanded and filtered exactly in bounded batches, so memory stays proportional
    to the number of candidates. A range holds boxes that overlap in x only, however wide some
    boxes are; when many boxes share x-columns (a dense frame), the search runs within y-bands.

    Parameters
    ----------
    a : array_like, shape (n, 4, 2)
        Corner coordinates.
    b : array_like, shape (m, 4, 2)
        Corner coordinates.
    a_group, b_group : array_like, shape (n,) and (m,), optional
        A group label per box (its frame, say; integers are fastest): only boxes of the same
        group pair up, so the pairs of many frames come from one call. Give both or neither.

    Returns
    -------
    ia, ib : ndarray of int64, shape (k,)
        Indices into ``a`` and ``b``, ordered by ``ia`` then ``ib``.

    Examples
    --------
    >>> a = [[[0, 0], [2, 0], [2, 2], [0, 2]], [[10, 10], [12, 10], [12, 12], [10, 12]]]
    >>> b = [[[11, 11], [13, 11], [13, 13], [11, 13]], [[2, 0], [4, 0], [4, 2], [2, 2]],
    ...      [[1, 1], [3, 1], [3, 3], [1, 3]]]
    >>> ia, ib = candidate_pairs(a, b)
    >>> ia.tolist(), ib.tolist()
    ([0, 1], [2, 0])
    >>> ia, ib = candidate_pairs(a, b, a_group=[0, 1], b_group=[1, 1, 1])
    >>> ia.tolist(), ib.tolist()
    ([1], [0])
    """
    return pairs_of_bounds(_bound_columns(a), _bound_columns(b), a_group, b_group)


def pairs_of_bounds(
    a_cols: np.ndarray, b_cols: np.ndarray, a_group=None, b_group=None
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`candidate_pairs` of boxes given by their bounds: ``(4, n)`` rows ``xmin, ymin, xmax, ymax``.

    For callers that hold the boxes' planar corners already (:func:`planar_bounds`).

    Examples
    --------
    >>> a = np.array([[0.0], [0.0], [2.0], [2.0]])
    >>> b = np.array([[1.0, 2.0], [1.0, 0.0], [3.0, 4.0], [3.0, 2.0]])
    >>> ia, ib = pairs_of_bounds(a, b)
    >>> ia.tolist(), ib.tolist()
    ([0], [0])
    """
    n, m = a_cols.shape[1], b_cols.shape[1]
    a_set, b_set = _group_labels(a_group, b_group, n, m)
    finite_a, finite_b = np.isfinite(a_cols).all(axis=0), np.isfinite(b_cols).all(axis=0)
    if n == 0 or m == 0 or not (finite_a.any() and finite_b.any()):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    key = np.sort(_sweep(a_cols, b_cols, a_set, b_set, a_group is not None, finite_a, finite_b, banded=True))
    return key // m, key % m


def _sweep(a_cols, b_cols, a_set, b_set, grouped: bool, finite_a, finite_b, *, banded: bool) -> np.ndarray:
    """The pairs as keys ``ia * m + ib``, unordered (sorted once, by the caller): the two-sided x-sweep, in
    y-bands when crowded.

    Two boxes overlap in x exactly when one starts inside the other's x-range: ``b`` starts in
    ``[xmin_a, xmax_a)``, or ``a`` starts in ``(xmin_b, xmax_b)`` (disjoint cases). With both
    sides sorted by start, each box finds the boxes starting inside it with two binary searches,
    so every range holds x-overlapping boxes only, whatever the widths.
    """
    n, m = a_cols.shape[1], b_cols.shape[1]
    # Search keys group * span + (x - origin): one sort and plain float searches instead of a
    # lexicographic (group, x) search. Rounding is monotone in x for a given group, so each
    # range still holds every same-group candidate; the filter is exact.
    some_a = slice(None) if finite_a.all() else finite_a
    some_b = slice(None) if finite_b.all() else finite_b
    origin = min(a_cols[0, some_a].min(), b_cols[0, some_b].min()) - 1.0
    span = max(a_cols[2, some_a].max(), b_cols[2, some_b].max()) - origin + 1.0
    a_base = a_set * span - origin if grouped else np.full(n, -origin)
    b_base = b_set * span - origin if grouped else np.full(m, -origin)
    if banded:
        # Many boxes share x-columns (a dense frame)? Estimated on samples of both sides: it only
        # chooses the search, whose pairs are exact either way. Then an x-sweep within y-bands.
        a_some, b_some = slice(None, None, max(1, n // _SAMPLE)), slice(None, None, max(1, m // _SAMPLE))
        a_sample = _Side(a_cols[:, a_some], a_base[a_some], finite_a[a_some], a_set[a_some])
        b_sample = _Side(b_cols[:, b_some], b_base[b_some], finite_b[b_some], b_set[b_some])
        sampled = a_sample.ranges(b_sample)[1].sum() + b_sample.ranges(a_sample)[1].sum()
        if sampled * (n / a_sample.key.size) * (m / b_sample.key.size) > _BAND_LIMIT * (n + m):
            key = _banded(a_cols, b_cols, a_set, b_set, finite_a, finite_b)
            if key is not None:
                return key
    a_side, b_side = _Side(a_cols, a_base, finite_a, a_set), _Side(b_cols, b_base, finite_b, b_set)
    b_in_a, a_in_b = a_side.ranges(b_side), b_side.ranges(a_side)
    rows_a, rows_b = a_side.starting_inside(b_side, *b_in_a, grouped, strict=False)
    rows_b2, rows_a2 = b_side.starting_inside(a_side, *a_in_b, grouped, strict=True)
    return np.concatenate([rows_a, rows_a2]) * m + np.concatenate([rows_b, rows_b2])


class _Side:
    """One side's boxes sorted by search key (group, then xmin), with what the searches read."""

    def __init__(self, cols: np.ndarray, base: np.ndarray, finite: np.ndarray, sets: np.ndarray):
        key = base + cols[0]
        key[~finite] = np.inf  # sorted last, out of every range
        self.order = np.argsort(key)  # in key order, the binary searches also run faster (cache, branches)
        self.cols = _columns(cols, self.order)
        self.key = key[self.order]
        self.end = np.take(base, self.order) + self.cols[2]
        self.finite = finite[self.order]
        self.sets = sets[self.order]

    def ranges(self, other: "_Side") -> tuple[np.ndarray, np.ndarray]:
        """Per box of this side: the first position and the number of ``other``'s boxes whose key
        falls in its key range (both ends inclusive, so rounding cannot drop one)."""
        lo = np.searchsorted(other.key, self.key, side="left")
        hi = np.searchsorted(other.key, self.end, side="right")
        return lo, np.where(self.finite, np.maximum(hi - lo, 0), 0)

    def starting_inside(self, other: "_Side", lo, counts, grouped: bool, strict: bool):
        """The pairs (original indices, this side's then ``other``'s) of boxes of ``other`` that start
        inside a box of this side (after its start when ``strict``) and overlap it with area."""
        ends = np.cumsum(counts)
        rows_out, pos_out = [], []
        row, n = 0, counts.size
        while row < n:  # bounded batches of the expansion
            base = int(ends[row - 1]) if row else 0
            stop = max(int(np.searchsorted(ends, base + _EXPAND_BUDGET, side="right")), row + 1)
            rows, pos = _overlapping(*_expand(lo[row:stop], counts[row:stop], row), self.cols, other.cols)
            starts, own_starts = np.take(other.cols[0], pos), np.take(self.cols[0], rows)
            inside = starts > own_starts if strict else starts >= own_starts
            if grouped:  # keys of far-apart groups may round into each other's range
                inside &= np.take(self.sets, rows) == np.take(other.sets, pos)
            inside = np.flatnonzero(inside)
            rows_out.append(np.take(self.order, np.take(rows, inside)))
            pos_out.append(np.take(other.order, np.take(pos, inside)))
            row = stop
        if not rows_out:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        return np.concatenate(rows_out), np.concatenate(pos_out)


def _banded(a_cols, b_cols, a_set, b_set, finite_a, finite_b) -> Optional[np.ndarray]:
    """The pair keys ``ia * m + ib`` found band by band, unordered, or ``None`` when bands cannot help.

    y is cut into bands of equal height; every (finite) box is entered in each band its bounds
    reach, and the x-sweep runs once over all bands, a band being one more group. A pair whose
    bounds overlap shares every band from ``max(first band of a, first band of b)`` (the band
    of the bottom of their overlap) to the last band of either; it is kept in that first shared
    band only, so each pair comes out exactly once. Band indices are ``floor((y - y0) / h)``,
    monotone in ``y`` whatever the rounding, which is all the rule needs.
    """
    m = b_cols.shape[1]
    rows_a, rows_b = np.flatnonzero(finite_a), np.flatnonzero(finite_b)
    y_low = np.concatenate([a_cols[1, rows_a], b_cols[1, rows_b]])
    y_high = np.concatenate([a_cols[3, rows_a], b_cols[3, rows_b]])
    y0, extent = float(y_low.min()), float(y_high.max() - y_low.min())
    heights = y_high - y_low
    height = float(np.partition(heights, heights.size // 2)[heights.size // 2])  # the median: fewest candidates
    if not (extent > 0 and np.isfinite(extent)):
        return None  # every box on one line: one band, no gain
    height = min(max(height, extent / (1 << 20)), extent)  # flat boxes: bands still of some height
    while True:  # widen the bands until each box is in few of them (a few tall boxes cost little)
        first = np.floor((y_low - y0) / height).astype(np.int64)
        count = np.floor((y_high - y0) / height).astype(np.int64) - first + 1
        if count.sum() <= _BAND_COPIES * heights.size or height >= extent:
            break
        height *= 2.0
    bands = int((first + count).max())
    copies = np.repeat(np.arange(count.size), count)
    band = np.repeat(first - (np.cumsum(count) - count), count) + np.arange(copies.size)
    first_band = first[copies]
    sets = np.concatenate([a_set[rows_a], b_set[rows_b]])[copies]
    sets = sets - sets.min()
    if int(sets.max()) < (2**52) // bands:
        label = sets * bands + band
    else:  # labels times bands too large for exact keys: renumbered
        label = np.unique(np.stack([sets, band]), axis=1, return_inverse=True)[1].reshape(-1).astype(np.int64)
    is_a = copies < rows_a.size
    source = np.concatenate([rows_a, rows_b])[copies]
    copy_a, copy_b = np.flatnonzero(is_a), np.flatnonzero(~is_a)
    everything = np.ones(max(copy_a.size, copy_b.size), dtype=bool)
    key = _sweep(_columns(a_cols, source[copy_a]), _columns(b_cols, source[copy_b]), label[copy_a], label[copy_b], True,
                 everything[: copy_a.size], everything[: copy_b.size], banded=False)
    ca, cb = copy_a[key // copy_b.size], copy_b[key % copy_b.size]
    first_shared = np.maximum(first_band[ca], first_band[cb])
    keep = np.flatnonzero(band[ca] == first_shared)
    return source[ca[keep]] * m + source[cb[keep]]


def _bound_columns(corners) -> np.ndarray:
    """:func:`bounds` as four contiguous rows ``xmin, ymin, xmax, ymax`` (same values)."""
    flat = as_corners(corners).reshape(-1, 8)
    columns = np.empty((4, flat.shape[0]))
    for row, (reduce, start) in enumerate(((np.minimum, 0), (np.minimum, 1), (np.maximum, 0), (np.maximum, 1))):
        reduce(
            reduce(flat[:, start], flat[:, start + 2]), reduce(flat[:, start + 4], flat[:, start + 6]), out=columns[row]
        )
    return columns


def planar_bounds(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The ``(4, n)`` bound rows ``xmin, ymin, xmax, ymax`` of boxes given as planar ``(4, n)`` x and y
    (the values of :func:`_bound_columns`, without its strided reads).

    Examples
    --------
    >>> planar_bounds(np.array([[1.0], [4.0], [7.0], [4.0]]), np.array([[5.0], [2.0], [5.0], [8.0]])).ravel().tolist()
    [1.0, 2.0, 7.0, 8.0]
    """
    columns = np.empty((4, x.shape[1]))
    for row, (reduce, coord) in enumerate(((np.minimum, x), (np.minimum, y), (np.maximum, x), (np.maximum, y))):
        reduce(reduce(coord[0], coord[1], out=columns[row]), reduce(coord[2], coord[3]), out=columns[row])
    return columns


def _columns(cols: np.ndarray, index: np.ndarray) -> np.ndarray:
    """``cols[:, index]`` with contiguous rows (numpy's fancy indexing gives strided ones: slower takes)."""
    return np.take(cols, index, axis=1)


def _overlapping(rows, pos, a_cols, b_cols):
    """The pairs ``(rows, pos)`` whose bounds (columns xmin, ymin, xmax, ymax) overlap with area.

    The y test goes first (it leaves the fewest); selections by index, not by boolean mask
    (several times faster on scattered masks).
    """
    for low, high in ((1, 3), (0, 2)):
        near = (np.take(b_cols[low], pos) < np.take(a_cols[high], rows))
        near &= np.take(b_cols[high], pos) > np.take(a_cols[low], rows)
        near = np.flatnonzero(near)
        rows, pos = np.take(rows, near), np.take(pos, near)
    return rows, pos


def _group_labels(a_group, b_group, n: int, m: int) -> tuple[np.ndarray, np.ndarray]:
    """Integer labels of each box's group, exact as float64 (all 0 when no groups are given)."""
    if (a_group is None) != (b_group is None):
        raise ValueError("give a_group and b_group together")
    if a_group is None:
        return np.zeros(n, dtype=np.int64), np.zeros(m, dtype=np.int64)
    a_group, b_group = np.asarray(a_group).reshape(-1), np.asarray(b_group).reshape(-1)
    if a_group.shape != (n,) or b_group.shape != (m,):
        raise ValueError(f"one group per box needed: got {a_group.shape} for {n} and {b_group.shape} for {m} boxes")
    both = np.concatenate([a_group, b_group])
    if both.dtype.kind in "iub" and (both.size == 0 or -(2**52) < both.min() <= both.max() < 2**52):
        labels = both.astype(np.int64)  # the usual case: small integers, used as they are
    else:  # other labels (huge integers, strings...): renumbered 0, 1, ...
        labels = np.unique(both, return_inverse=True)[1].reshape(-1).astype(np.int64)
    return labels[:n], labels[n:]


def _expand(lo: np.ndarray, counts: np.ndarray, row_offset: int):
    """Rows ``row_offset + r`` repeated ``counts[r]`` times, with positions ``lo[r] ...``."""
    total = int(counts.sum())
    rows = np.repeat(np.arange(row_offset, row_offset + len(counts), dtype=np.int64), counts)
    shift = np.repeat(lo.astype(np.int64) - (np.cumsum(counts) - counts), counts)
    return rows, shift + np.arange(total, dtype=np.int64)
