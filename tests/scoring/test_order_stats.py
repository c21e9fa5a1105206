"""hbb2obb.scoring.order_stats: the same floats as numpy's median and linear percentile."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from hbb2obb.scoring import order_stats
from hbb2obb.scoring.order_stats import distinct, median, median_and_percentile, percentile, positions_in

# Values with many ties (a few distinct ones) or spread over magnitudes, 1 to 60 of them.
values = st.one_of(
    arrays(np.float64, st.integers(1, 60), elements=st.sampled_from([0.0, 0.1, 0.3, 1.0, 89.999, 90.0])),
    arrays(np.float64, st.integers(1, 60), elements=st.floats(-1e6, 1e6, allow_nan=False)),
    arrays(np.float64, st.integers(1, 60), elements=st.floats(0, 1, allow_nan=False, allow_subnormal=True)),
)


@settings(max_examples=300, deadline=None)
@given(values, st.sampled_from([0.0, 10.0, 25.0, 50.0, 90.0, 99.0, 100.0]))
def test_same_floats_as_numpy(data, q):
    assert median(data) == float(np.median(data))
    assert percentile(data, q) == float(np.percentile(data, q))


def test_input_is_not_reordered_and_nan_propagates():
    data = np.array([3.0, 1.0, 2.0, 0.5])
    median(data), percentile(data, 90)
    assert data.tolist() == [3.0, 1.0, 2.0, 0.5]
    with_nan = np.array([1.0, np.nan, 2.0])
    assert math.isnan(median(with_nan)) and math.isnan(percentile(with_nan, 90))
    assert math.isnan(median(np.array([])))
    with pytest.raises(IndexError):
        percentile(np.array([]), 90)


@settings(max_examples=200, deadline=None)
@given(arrays(st.sampled_from([np.int64, np.int32, np.uint8, np.bool_]), st.integers(0, 40)))
def test_distinct_is_np_unique(data):
    got, want = distinct(data), np.unique(data)
    assert got.dtype == want.dtype and got.tolist() == want.tolist()


@pytest.mark.parametrize(
    "make",
    [
        lambda rng: rng.integers(0, 4, 50_000),  # class ids: the bincount path
        lambda rng: rng.integers(-3, 2, 1000),  # negative ids
        lambda rng: rng.integers(0, 4, 1000).astype(np.int32) + np.int32(2**31 - 10),  # near the top of a narrower type
        lambda rng: rng.integers(0, 3, 500).astype(np.uint64) + np.uint64(2**63 - 2),  # past int64: sorted
        lambda rng: np.repeat(np.array([-(2**63), -(2**63) + 5]), 100),  # the lowest int64
        lambda rng: rng.integers(0, 10**12, 200),  # a wide range: sorted
        lambda rng: np.full(65, 7, dtype=np.uint8),  # one value, just above the size the table needs
        lambda rng: rng.integers(0, 2, 300).astype(bool),
        lambda rng: np.zeros(0, dtype=np.int64),
    ],
)
def test_distinct_by_count_or_sort_is_np_unique(make):
    data = make(np.random.default_rng(3))
    got, want = distinct(data), np.unique(data)
    assert got.dtype == want.dtype and got.tolist() == want.tolist()


@pytest.mark.parametrize(
    "values, table",
    [
        (np.random.default_rng(1).integers(0, 4, 10_000), np.arange(4)),  # the lookup table
        (np.random.default_rng(2).choice([-5, 3, 900], 5_000), np.array([-5, 3, 900])),
        (np.array([7, 2, 7, 9]), np.array([2, 7, 9])),  # few values: the binary search
        (np.random.default_rng(4).choice([0, 10**12], 500), np.array([0, 10**12])),  # a wide span: binary search
        (np.zeros(0, dtype=np.int64), np.array([1, 2])),
        (np.full(100, 5), np.array([5])),
    ],
)
def test_positions_in_is_searchsorted(values, table):
    got, want = positions_in(values, table), np.searchsorted(table, values)
    assert got.dtype == want.dtype and got.tolist() == want.tolist()


def test_distinct_refuses_floats():
    with pytest.raises(TypeError):
        distinct(np.array([1.0, np.nan, np.nan]))


@pytest.mark.parametrize("n", [1, 2, 3, 10, 11, 1000, 1001])
@pytest.mark.parametrize("q", [0, 33.3, 50, 90, 100])
def test_median_and_percentile_from_one_partition_equal_numpy(n, q):
    rng = np.random.default_rng(n)
    for values in (rng.random(n), rng.integers(0, 4, n).astype(np.float64), rng.normal(0, 1e6, n)):
        got = median_and_percentile(values, q)
        assert repr(got) == repr((float(np.median(values)), float(np.percentile(values, q))))
    with_nan = rng.random(n)
    with_nan[n // 2] = np.nan
    assert all(np.isnan(median_and_percentile(with_nan, q)))


def _one_partition(values, q, median_too=True):
    """(median, percentile) or the percentile alone as one np.partition of their positions gives them
    (the code before the float32 narrowing: the same zero, whatever its sign)."""
    n, half = values.size, values.size // 2
    virtual = (n - 1) * (q / 100)
    if virtual >= n - 1 or virtual < 0:
        k = n - 1 if virtual >= n - 1 else 0
        end = float(np.partition(values, k)[k])
        return (float(np.median(values)), end) if median_too else end
    lower, t = math.floor(virtual), virtual - math.floor(virtual)
    middle_positions = {half - 1 if n % 2 == 0 else half, half} if median_too else set()
    part = np.partition(values, sorted(middle_positions | {lower, lower + 1}))
    a, b = part[lower], part[lower + 1]
    at_q = float(b - (b - a) * (1 - t)) if t >= 0.5 else float(a + (b - a) * t)
    if not median_too:
        return at_q
    return (float(part[half]) if n % 2 else float((part[half - 1] + part[half]) / 2.0)), at_q


def _large(kind: str, n: int) -> np.ndarray:
    rng = np.random.default_rng(n)
    if kind == "ious":
        return rng.beta(8, 2, n)
    if kind == "float32-ties":  # neighbours a few ulps apart: every one rounds to a float32 shared with others
        base = rng.random(n // 8).astype(np.float32).astype(np.float64)
        return np.repeat(base, 8) + rng.integers(-3, 4, base.size * 8) * np.spacing(base.repeat(8))
    if kind == "exact-ties":
        return rng.integers(0, 5, n) / 4.0
    if kind == "signed-zeros":  # the middle is a zero, of either sign: the full partition decides
        values = np.concatenate([np.full(n // 2, -0.0), np.zeros(n // 2 + 1), rng.random(7), -rng.random(7)])
        return rng.permutation(values)
    if kind == "beyond-float32":
        return rng.choice([-1.0, 1.0], n) * 10 ** rng.uniform(-320, 308, n)
    if kind == "one-value":
        return np.full(n, 0.3)
    raise ValueError(kind)


@pytest.mark.parametrize("kind", ["ious", "float32-ties", "exact-ties", "signed-zeros", "beyond-float32", "one-value"])
@pytest.mark.parametrize("extra", [0, 1])  # odd and even sizes
def test_large_arrays_narrowed_in_float32_give_numpys_floats(kind, extra):
    values = _large(kind, order_stats._NARROWED_SIZE + 2001 + extra)
    assert values.size >= order_stats._NARROWED_SIZE
    got_median = median(values)
    assert repr(got_median) == repr(float(np.median(values)))
    for q in (0, 10, 50, 90, 99.9, 100):
        assert repr(percentile(values, q)) == repr(_one_partition(values, q, median_too=False))
        assert repr(median_and_percentile(values, q)) == repr(_one_partition(values, q))
        if kind != "signed-zeros":  # there numpy's own partitions may pick the other zero than ours do
            assert repr(percentile(values, q)) == repr(float(np.percentile(values, q)))
            assert repr(median_and_percentile(values, q)) == repr((float(np.median(values)), float(np.percentile(values, q))))
    before = values.copy()
    median(values)
    assert np.array_equal(values, before, equal_nan=True) and np.array_equal(np.signbit(values), np.signbit(before))


def test_a_selected_zero_keeps_the_sign_the_full_partition_gives():
    values = _large("signed-zeros", order_stats._NARROWED_SIZE + 11)
    for positions in ((values.size // 2,), (0, values.size // 2, values.size - 1)):
        found = order_stats._order_values(values, positions)
        part = np.partition(values, sorted(positions))
        assert [repr(found[k]) for k in positions] == [repr(part[k]) for k in positions]


@pytest.mark.parametrize("seed", range(6))
def test_order_values_are_those_of_the_sorted_array(seed):
    """Positions chosen at random, adjacent ones among them (selected as the smallest above the one before)."""
    rng = np.random.default_rng(seed)
    values = rng.permutation(np.concatenate([rng.random(order_stats._NARROWED_SIZE), rng.integers(0, 9, 3000) / 8.0]))
    ordered = np.sort(values)
    for _ in range(10):
        first = rng.integers(0, values.size - 3, 3)
        positions = tuple({*first.tolist(), *(first + 1).tolist(), int(first[0]) + 2, values.size - 1, 0})
        found = order_stats._order_values(values, positions)
        assert sorted(found) == sorted(positions)
        assert all(repr(found[k]) == repr(ordered[k]) for k in positions), positions
