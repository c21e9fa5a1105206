"""The metric dict as text: the fast writers print exactly what json.dumps(indent=2) and yaml.safe_dump print."""

import json

import numpy as np
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from hbb2obb.report.serialize import metrics_json_bytes, metrics_yaml, read_metrics_yaml, write_metrics

rng = np.random.default_rng(0)
FLOATS_100 = np.random.default_rng(1).random(100).tolist()
CASES = {
    "empty": {},
    "flat": {"avg_iou": 0.5, "total_gt": 3, "class_agnostic": False, "excluded_classes": []},
    "long-floats": {"class_stats": {"0": {"ious": rng.random(500).tolist(), "angle_errors": rng.random(500).tolist()}}},
    "long-ints-and-extremes": {"v": [0, -1, 2**40, 1e-300, 1e300, 5e-324, -0.0, 0.1] * 10},
    "just-below-the-threshold": {"v": [0.1] * 63, "w": [0.1] * 64},
    "empty-and-nested-lists": {"v": [], "w": [[1.0, 2.0]] * 70, "x": {"y": {"z": [1.5] * 100}}},
    "one-nan-among-floats": {"v": [0.5] * 40 + [float("nan")] + [0.25] * 40, "w": [1e-05] * 30 + [-float("inf")] * 40},
    "bools-nan-strings": {"b": [True, False] * 40, "n": [float("nan")] * 70, "s": ["a"] * 70, "i": [float("inf")] * 70},
    "looks-like-a-placeholder": {"s": "\x00list 0\x00", "v": [1.0] * 80},
    "tuple": {"t": tuple(range(100))},
    # orjson spells |x| < 1e-4 and |x| >= 1e16 unlike repr: those items must be respelled
    "every-magnitude": {"v": (rng.choice([-1.0, 1.0], 4000) * 10 ** rng.uniform(-12, 20, 4000)).tolist()},
    # zeros inside an item's digits are no small number to respell
    "zeros-inside-digits": {"v": [10.00001, 100.000025, -20.00001, 1.00001e-05, 1e-7, 3e17, -2.5e-05] * 10},
    "around-the-spelling-limits": {"v": [1e-4, 9.999999999999999e-05, 1e16, 9999999999999998.0, -1e-4, -1e16] * 12},
    "short-digits": {"v": np.round(rng.random(300), 3).tolist() + [0.0, -0.0, 1.0, 0.5] * 10},
    "ints-beyond-64-bits": {"v": [2**70, -(2**64), 2**63, 1] * 20},
    # copies of a list, and equal lists of other items (1 == 1.0, 0.0 == -0.0), each spelled as its items
    "copies-at-other-indents": {"a": {"ious": FLOATS_100, "iou_values": list(FLOATS_100)}, "b": list(FLOATS_100),
                                "t": tuple(FLOATS_100)},
    "equal-but-spelled-otherwise": {"f": [1.0] * 70, "i": [1] * 70, "z": [0.0] * 70, "m": [-0.0] * 70,
                                    "mixed": [1, 1.0] * 35, "mixed2": [1.0, 1] * 35},
}


def nulls_for_non_finite(value):
    """The test's own restatement of RFC 8259's limit: NaN and infinities become null."""
    if isinstance(value, dict):
        return {key: nulls_for_non_finite(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [nulls_for_non_finite(item) for item in value]
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return None
    return value


def _refuse(name):
    raise ValueError(name)


@pytest.mark.parametrize("metrics", CASES.values(), ids=CASES.keys())
def test_metrics_json_equals_json_dumps(metrics):
    # as json.dumps writes it, with null where json.dumps would write NaN or Infinity (issue 34)
    text = metrics_json_bytes(metrics)
    assert text == json.dumps(nulls_for_non_finite(metrics), indent=2, allow_nan=False).encode("ascii")
    json.loads(text, parse_constant=_refuse)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.floats(allow_nan=False, allow_infinity=False), st.integers(-2**53, 2**53)),
                min_size=64, max_size=200))
def test_metrics_json_of_any_finite_numbers(values):
    floats_only = [float(v) for v in values]
    metrics = {"v": values, "f": floats_only, "copy": list(floats_only)}
    assert metrics_json_bytes(metrics) == json.dumps(metrics, indent=2).encode("ascii")


YAML_CASES = {
    name: case for name, case in CASES.items() if name not in ("tuple", "copies-at-other-indents")
}  # safe_dump refuses tuples
YAML_CASES["int-keys-and-lists-in-lists"] = {"class_stats": {0: {"ious": [0.5] * 70}, 2: {"v": [[0.25] * 70]}}}
YAML_CASES["long-line-indent"] = {"a": {"b": {"c": {"d": rng.random(100).tolist(), "e": 1}}}, "f": [1.5] * 64}


@pytest.mark.parametrize("metrics", YAML_CASES.values(), ids=YAML_CASES.keys())
def test_metrics_yaml_equals_safe_dump(metrics):
    assert metrics_yaml(metrics) == yaml.safe_dump(metrics, sort_keys=False)


@pytest.mark.parametrize("metrics", YAML_CASES.values(), ids=YAML_CASES.keys())
def test_read_metrics_yaml_reads_what_metrics_yaml_writes(metrics):
    text = metrics_yaml(metrics)
    assert repr(read_metrics_yaml(text)) == repr(yaml.safe_load(text))  # repr: types too, NaN equal


def _items(values, indent=""):
    return "".join(f"{indent}- {v}\n" for v in values)


FLOATS = [f"{v!r}" for v in np.random.default_rng(5).random(70)]
YAML_TEXTS = {  # hand-written or edited golden files: each must read exactly as PyYAML reads it
    "floats-and-ints": "a:\n" + _items(FLOATS + ["3", "-0", "0"]),
    "yaml-1.1-strings-and-octal": "a:\n" + _items(FLOATS + ["1e-05", "017", "-.5", ".5", "1.5e5"]),
    "special-floats": "a:\n" + _items(FLOATS + [".nan", ".inf", "-.inf"]),
    "plus-sign": "a:\n" + _items(FLOATS + ["+1.5", "+3"]),
    "list-goes-on-with-text": "a:\n" + _items(FLOATS + ["car"] + FLOATS),
    "comment-inside": "a:\n" + _items(FLOATS) + "# note\n" + _items(FLOATS),
    "indented-sequence": "a:\n" + _items(FLOATS, "  ") + "b: 1\n",
    "in-a-sequence-item": "- ious:\n" + _items(FLOATS, "  ") + "  n: 2\n",
    "quoted-key-with-colon": "'a: b':\n" + _items(FLOATS) + "c:\n  d:\n" + _items(FLOATS, "  "),
    "block-scalar-look-alike": "note: |\n  x:\n" + _items(FLOATS, "  ") + "a:\n" + _items(FLOATS),
    "short-list": "a:\n" + _items(FLOATS[:10]),
    "top-level-sequence": _items(FLOATS),
    "placeholder-look-alike": "s: \"\\0list 0\\0\"\na:\n" + _items(FLOATS),
    "placeholder-beyond-the-lists": "s: \"\\0list 7\\0\"\na:\n" + _items(FLOATS),
    "placeholder-not-a-number": "s: \"\\0list x\\0\"\na:\n" + _items(FLOATS),
    "empty": "",
}


@pytest.mark.parametrize("text", YAML_TEXTS.values(), ids=YAML_TEXTS.keys())
def test_read_metrics_yaml_equals_safe_load(text):
    assert repr(read_metrics_yaml(text)) == repr(yaml.safe_load(text))


@pytest.mark.parametrize("suffix", [".json", ".yaml"])
def test_write_metrics_round_trips(tmp_path, suffix):
    metrics = {"avg_iou": 0.25, "class_stats": {0: {"ious": [0.25] * 80}}}
    path = tmp_path / "out" / f"metrics{suffix}"
    write_metrics(metrics, path)
    text = path.read_text()
    if suffix == ".json":
        assert text == json.dumps(metrics, indent=2) + "\n"
        assert json.loads(text)["class_stats"]["0"]["ious"] == [0.25] * 80
    else:
        assert yaml.safe_load(text) == metrics
