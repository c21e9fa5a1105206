"""The JSON formats' number rule (``json_numbers``) against a plain restatement of it."""

import math
import random

import numpy as np
import pytest

from hbb2obb.io.frame_labels import json_numbers
from hbb2obb.io.text import MAX_COORDINATE

ODD = [True, False, None, "1", [1], {"x": 1}, math.nan, math.inf, -math.inf, 10**400, -(10**400), 2**1023,
       MAX_COORDINATE, -MAX_COORDINATE, int(MAX_COORDINATE), int(MAX_COORDINATE) + 1,
       np.nextafter(MAX_COORDINATE, 2e12), 1e300, -0.0, 0, np.float64(2.5), np.int64(3)]


def _first_bad(values):
    """The 1-based position of the first value the rule refuses, or None: a JSON number (no bool),
    finite as a float, within MAX_COORDINATE either way."""
    for position, value in enumerate(values, start=1):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return position
        try:
            number = float(value)
        except OverflowError:
            return position
        if not (math.isfinite(number) and abs(number) <= MAX_COORDINATE):
            return position
    return None


@pytest.mark.parametrize("seed", range(300))
def test_lists_of_odd_values_are_taken_or_refused_as_the_rule_says(seed):
    rng = random.Random(seed)
    values = [rng.uniform(-1e4, 1e4) if rng.random() < 0.5 else rng.randint(-5000, 5000) for _ in range(8)]
    for _ in range(rng.choice([0, 0, 1, 2])):
        values[rng.randrange(8)] = rng.choice(ODD)
    numbers, reason = json_numbers(values, 8, "polygon")
    bad = _first_bad(values)
    if bad is None:
        assert reason is None and numbers == [float(v) for v in values]
        assert all(type(number) is float for number in numbers)
    else:
        assert numbers is None and reason.startswith(f"polygon value {bad} ")


def test_a_list_of_the_wrong_length_or_no_list_is_refused():
    assert json_numbers([1, 2, 3], 4)[1] == "expected 4 numbers, found 3 values"
    assert json_numbers((1, 2), 2)[1] == "expected 2 numbers, found tuple"
    assert json_numbers([], None) == ([], None)
