"""hbb2obb.scoring.order_stats: the same floats as numpy's median and linear percentile."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

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
