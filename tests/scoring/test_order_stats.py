"""hbb2obb.scoring.order_stats: the same floats as numpy's median and linear percentile."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from hbb2obb.scoring.order_stats import distinct, median, median_and_percentile, percentile

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
