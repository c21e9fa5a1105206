"""Candidate pairs for IoU: boxes whose axis-aligned bounds overlap, found without an n x m matrix.

Each box of ``b`` gets one search key, ``group * span + xmin``; after one sort, each box of
``a`` finds the boxes that may reach it with two binary searches, and the ranges are expanded
and filtered exactly in small batches (small enough for numpy to reuse the work arrays).
"""

from __future__ import annotations

import functools
from typing import Optional

import numpy as np

from hbb2obb.geometry._arrays import as_corners

_EXPAND_BUDGET = 1 << 14  # candidates expanded at once: work arrays small enough to be reused, not remapped
_ONE_PASS_LIMIT = 16  # x-candidates per box beyond which candidate_pairs searches by width class
_BAND_LIMIT = 8  # x-candidates per box beyond which the x-sweep runs within y-bands
_SAMPLE = 4096  # boxes of a whose x-candidates are counted to choose between the searches
_BAND_COPIES = 3  # band entries per box at most, on average (bands are widened until so)


def candidate_pairs(a, b, a_group=None, b_group=None) -> tuple[np.ndarray, np.ndarray]:
    """Pairs of boxes whose axis-aligned bounds overlap with positive area.

    Only these pairs can have a positive IoU (bounds that merely touch give IoU 0 and are
    left out; so are boxes with a non-finite coordinate). No ``n x m`` matrix is built: the
    boxes of ``b`` are sorted once by one number per box, ``group * span + xmin``, each box of
    ``a`` finds its range of x-candidates with two binary searches, and the ranges are expanded
    and filtered exactly in bounded batches, so memory stays proportional to the number of
    candidates. When one pass would expand too many candidates, the boxes of ``b`` are searched
    per width class (powers of two) instead, so a few very wide boxes do not widen every search.

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
    """The pairs as keys ``ia * m + ib``, unordered (sorted once, by the caller): the x-sweep, by width class or
    in y-bands when crowded."""
    n, m = a_cols.shape[1], b_cols.shape[1]
    width = b_cols[2] - b_cols[0]
    # Search keys group * span + (x - origin): one sort and plain float searches instead of a
    # lexicographic (group, x) search. Rounding is monotone in x for a given group, so each
    # range still holds every same-group candidate; the filter below is exact.
    some_a = slice(None) if finite_a.all() else finite_a
    some_b = slice(None) if finite_b.all() else finite_b
    origin = min(a_cols[0, some_a].min(), b_cols[0, some_b].min()) - width[some_b].max() - 1.0
    span = max(a_cols[2, some_a].max(), b_cols[2, some_b].max()) - origin + 1.0
    a_base = a_set * span - origin if grouped else np.full(n, -origin)
    b_key = (b_set * span - origin if grouped else -origin) + b_cols[0]
    b_key[~finite_b] = np.inf  # sorted last, out of every range
    reach_width = np.where(finite_b, width, 0.0)  # a box left out reaches nothing (a NaN would poison the max)
    b_order = np.argsort(b_key)
    if banded:
        # Many boxes share x-columns (a dense frame)? Counted on a sample of a's boxes: it only
        # chooses the search, whose pairs are exact either way. Then an x-sweep within y-bands.
        sample = slice(None, None, max(1, n // _SAMPLE))
        x_candidates = _search_pass(b_order, b_key=b_key, width=reach_width, a_cols=a_cols[:, sample],
                                    a_base=a_base[sample], a_finite=finite_a[sample],
                                    a_set=a_set[sample] if grouped else None, b_set=b_set)[2]
        if x_candidates.sum() * (n / max(x_candidates.size, 1)) > _BAND_LIMIT * (n + m):
            key = _banded(a_cols, b_cols, a_set, b_set, finite_a, finite_b)
            if key is not None:
                return key
    # Boxes of a in key order: the binary searches then run several times faster (cache, branches).
    by_key = np.argsort(a_base + a_cols[0])
    a_cols, a_set, a_base, finite_a = _columns(a_cols, by_key), a_set[by_key], a_base[by_key], finite_a[by_key]
    search = functools.partial(_search_pass, b_key=b_key, width=reach_width, a_cols=a_cols, a_base=a_base,
                               a_finite=finite_a, a_set=a_set if grouped else None, b_set=b_set)
    passes = [search(b_order)]
    crowded = passes[0][2].sum()
    if crowded > _ONE_PASS_LIMIT * (n + m):
        group = np.frexp(width)[1]
        order = np.lexsort((b_key, group))
        cuts = np.flatnonzero(np.diff(group[order])) + 1
        passes = [search(members) for members in np.split(order, cuts)]  # a few at most
    keys = []
    for members, lo, counts in passes:
        b_part, b_part_set = _columns(b_cols, members), b_set[members]  # this pass's boxes in key order
        ends = np.cumsum(counts)
        row = 0
        while row < n:  # bounded batches of the expansion
            base = int(ends[row - 1]) if row else 0
            stop = max(int(np.searchsorted(ends, base + _EXPAND_BUDGET, side="right")), row + 1)
            rows, pos = _overlapping(*_expand(lo[row:stop], counts[row:stop], row), a_cols, b_part)
            if grouped:  # keys of far-apart groups may round into each other's range
                same = np.flatnonzero(np.take(a_set, rows) == np.take(b_part_set, pos))
                rows, pos = np.take(rows, same), np.take(pos, same)
            keys.append(np.take(by_key, rows) * m + np.take(members, pos))
            row = stop
    return np.concatenate(keys)


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


def _search_pass(members, *, b_key, width, a_cols, a_base, a_finite, a_set=None, b_set=None):
    """For boxes ``b[members]`` (sorted by key): the range of x-candidates of each box of ``a``.

    Returns ``members`` and per box of ``a`` the first position and the number of candidates:
    keys from ``xmin_a - reach`` (``xmin_b > xmin_a - width_b`` is needed to overlap) through
    ``xmax_a`` (both ends inclusive, so rounding cannot drop one; the filter is exact). The
    reach is the widest box of ``a``'s own group when groups are given (``a_set``): one wide
    box in one frame no longer widens the search of every frame.
    """
    sorted_keys = b_key[members]
    reach = _group_reach(members, width, a_set, b_set) if a_set is not None else width[members].max(initial=0.0)
    low = a_cols[0] - reach - 1e-9 * (np.abs(a_cols[0]) + reach)  # slack for the rounding of a_x0 - reach
    lo = np.searchsorted(sorted_keys, a_base + low, side="left")
    hi = np.searchsorted(sorted_keys, a_base + a_cols[2], side="right")
    counts = np.where(a_finite, np.maximum(hi - lo, 0), 0)
    return members, lo, counts


def _group_reach(members, width, a_set, b_set):
    """Per box of ``a``: the largest width among ``b[members]`` of its group (0 when none is).

    ``members`` are in key order, so each group's boxes are a run; should rounding ever split a
    group into several runs, the widest box of all is every box's reach, as without groups.
    """
    sets = b_set[members]
    if sets.size == 0:
        return np.zeros(a_set.size)
    starts = np.flatnonzero(np.concatenate(([True], sets[1:] != sets[:-1])))
    run_set = sets[starts]
    run_reach = np.maximum.reduceat(width[members], starts)
    if run_set.size > 1 and not (run_set[1:] > run_set[:-1]).all():
        return np.full(a_set.size, run_reach.max())
    at = np.minimum(np.searchsorted(run_set, a_set), run_set.size - 1)
    return np.where(run_set[at] == a_set, run_reach[at], 0.0)


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
