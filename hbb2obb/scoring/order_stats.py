"""Median, linear percentile and distinct values, as numpy computes them, without importing ``numpy.ma``.

``np.median`` and ``np.percentile`` look up ``np.ma`` on every call (to check for masked
arrays), and the first lookup imports the whole masked-array package: 15-60 ms of a short
``hbb2obb-eval`` run, for arrays that are never masked. ``np.unique`` without ``return_index``,
``return_inverse`` or ``return_counts`` (and so ``np.union1d``) does the same since numpy 2.3.
The median and percentile select the same order statistics as ``np.partition`` (large arrays
narrowed in float32 first, exactly) and take the same arithmetic, so their results are the
same floats; :func:`distinct` is one sort or one count (all tested against numpy).
"""

from __future__ import annotations

import math

import numpy as np


def median(values) -> float:
    """The median of a 1-D array, as ``float(np.median(values))`` gives it.

    Even sizes take the mean of the two middle values, ``(a + b) / 2`` as ``np.mean`` sums
    two numbers; any NaN makes the result NaN; an empty array gives NaN (numpy also warns).

    Examples
    --------
    >>> median(np.array([3.0, 1.0, 2.0])), median(np.array([4.0, 1.0, 3.0, 2.0]))
    (2.0, 2.5)
    """
    values = np.asarray(values, dtype=np.float64).reshape(-1)
    n = values.size
    if n == 0 or np.isnan(values).any():
        return math.nan
    half = n // 2
    return _middle(_order_values(values, (half,) if n % 2 else (half - 1, half)), n)


def percentile(values, q: float) -> float:
    """The ``q``-th percentile (0-100) of a 1-D array, as ``float(np.percentile(values, q))`` gives it.

    numpy's default method 'linear': the virtual index ``(n - 1) * q / 100`` between the order
    statistics ``a`` and ``b`` with weight ``t``, interpolated as ``a + (b - a) * t``, or
    ``b - (b - a) * (1 - t)`` when ``t >= 0.5`` (numpy's own rule for a monotone result).
    Any NaN makes the result NaN; an empty array raises ``IndexError`` as numpy does.

    Examples
    --------
    >>> percentile(np.arange(11.0), 90), percentile(np.array([0.0, 1.0]), 90)
    (9.0, 0.9)
    """
    values = np.asarray(values, dtype=np.float64).reshape(-1)
    n = values.size
    if n == 0:
        raise IndexError("percentile of an empty array")
    if np.isnan(values).any():
        return math.nan
    virtual = (n - 1) * (q / 100)
    if virtual >= n - 1:
        return float(_order_values(values, (n - 1,))[n - 1])
    if virtual < 0:
        return float(_order_values(values, (0,))[0])
    lower = math.floor(virtual)
    return _linear(_order_values(values, (lower, lower + 1)), lower, virtual - lower)


def median_and_percentile(values, q: float) -> tuple[float, float]:
    """``(median(values), percentile(values, q))`` from one selection of order statistics (the same two floats).

    For a non-empty 1-D array; both order statistics are found by the same call.

    Examples
    --------
    >>> median_and_percentile(np.arange(11.0), 90)
    (5.0, 9.0)
    """
    values = np.asarray(values, dtype=np.float64).reshape(-1)
    n = values.size
    if n == 0 or np.isnan(values).any():
        return median(values), percentile(values, q)
    half = n // 2
    virtual = (n - 1) * (q / 100)
    if virtual >= n - 1 or virtual < 0:
        return median(values), percentile(values, q)
    lower = math.floor(virtual)
    found = _order_values(values, (half - 1 if n % 2 == 0 else half, half, lower, lower + 1))
    return _middle(found, n), _linear(found, lower, virtual - lower)


_NARROWED_SIZE = 1 << 14  # from this many values the float32 narrowing below is quicker than one partition


def _order_values(values: np.ndarray, positions) -> dict:
    """``{k: sorted(values)[k]}`` for each position, for a float64 array without NaN.

    The values ``np.partition(values, positions)`` puts at those positions. A large array is
    first narrowed in float32: rounding to float32 never reverses an order (``a <= b`` gives
    ``f(a) <= f(b)``), so the ``k``-th of the rounded values is ``f`` of the ``k``-th value, the
    values rounding below it all come before it, and it is found exactly among the few that
    round to the same float32. numpy selects one position of a float32 array about twice as
    fast as it partitions float64 (several positions at once it does not speed up), so the
    rounded values are selected one position at a time, from the lowest up, each among the
    values above the one before; a position just above one selected is the smallest of them.
    Equal floats have the same bits except the two zeros: when a zero is selected, the full
    partition picks as before.
    """
    positions = sorted(set(positions))
    if values.size >= _NARROWED_SIZE:
        with np.errstate(over="ignore"):  # beyond the float32 range: infinities, still in order
            rounded = values.astype(np.float32)
        at, above, start = {}, rounded, 0  # above: the rounded values from position start on, in any order
        for k in positions:
            if k == start and start:  # just above the one selected: the smallest of what is above it,
                smallest = int(above.argmin())  # put first (above is a partition's copy, ours to reorder)
                above[0], above[smallest] = above[smallest], above[0]
            else:
                above = np.partition(above, k - start)
            at[k] = above[k - start]
            above, start = above[k - start + 1:], k + 1
        found = {}
        for k in positions:
            below = int(np.count_nonzero(rounded < at[k]))
            tied = values[rounded == at[k]]
            found[k] = np.partition(tied, k - below)[k - below]
        if all(value != 0 for value in found.values()):
            return found
    part = np.partition(values, positions)
    return {k: part[k] for k in positions}


def _middle(found: dict, n: int) -> float:
    """The median of ``n`` values from their middle order statistics (both middle positions when ``n`` is even)."""
    half = n // 2
    return float(found[half]) if n % 2 else float((found[half - 1] + found[half]) / 2.0)


def _linear(found: dict, lower: int, t: float) -> float:
    """numpy's 'linear' interpolation between the order statistics at ``lower`` and ``lower + 1``."""
    a, b = found[lower], found[lower + 1]
    diff = b - a
    return float(b - diff * (1 - t)) if t >= 0.5 else float(a + diff * t)


def distinct(values) -> np.ndarray:
    """The sorted distinct values of an integer array, as ``np.unique(values)`` gives them.

    For integer and boolean arrays (class ids, row indices): floats are refused, since
    ``np.unique`` folds NaNs together and this sort-and-compare would not. An empty input gives
    an empty array of its dtype. Integers spanning a short range (class ids: a handful of
    values over hundreds of thousands of boxes) are counted by one ``bincount`` instead of
    sorted: at Songdo scale the sort of both sides' 540,000 class ids took 10-15 ms.

    Examples
    --------
    >>> distinct(np.array([7, 2, 7, 0])).tolist(), distinct(np.zeros(0, dtype=np.int64)).dtype
    ([0, 2, 7], dtype('int64'))
    """
    values = np.asarray(values).reshape(-1)
    if values.dtype.kind not in "biu":
        raise TypeError(f"distinct() takes integer arrays, got dtype {values.dtype}")
    if values.dtype.kind != "b" and values.size > 64:
        low, high = int(values.min()), int(values.max())
        if high - low <= 4 * values.size + 1024 and high < 2**63:  # offsets fit int64 and the count is short
            offsets = values.astype(np.int64, copy=False) - low if low else values.astype(np.int64, copy=False)
            present = np.flatnonzero(np.bincount(offsets, minlength=high - low + 1))
            return (present + low).astype(values.dtype)
    values = np.sort(values)
    if values.size < 2:
        return values
    first = np.empty(values.size, dtype=bool)
    first[0] = True
    np.not_equal(values[1:], values[:-1], out=first[1:])
    return values[first]


def positions_in(values, table_values: np.ndarray) -> np.ndarray:
    """Each value's index in ``table_values``, sorted distinct integers holding every one of them.

    ``np.searchsorted(table_values, values)`` (intp), by a lookup table when the table spans a
    short range of integers (class ids), instead of a binary search per value. A value missing
    from ``table_values`` is not allowed.

    Examples
    --------
    >>> positions_in(np.array([7, 2, 7, 9]), np.array([2, 7, 9])).tolist()
    [1, 0, 1, 2]
    """
    values = np.asarray(values).reshape(-1)
    if table_values.size and values.size > 64 and values.dtype.kind == "i" and table_values.dtype.kind == "i":
        low, high = int(table_values[0]), int(table_values[-1])
        if high - low <= 4 * values.size + 1024:
            lookup = np.zeros(high - low + 1, dtype=np.intp)
            lookup[table_values - low] = np.arange(table_values.size)
            return np.take(lookup, values - low if low else values)
    return np.searchsorted(table_values, values)
