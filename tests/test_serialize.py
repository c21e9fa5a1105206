"""The metric dict as text: the fast writers print exactly what json.dumps(indent=2) and yaml.safe_dump print."""

import json

import numpy as np
import pytest
import yaml

from hbb2obb.serialize import metrics_json, metrics_yaml, write_metrics

rng = np.random.default_rng(0)
CASES = {
    "empty": {},
    "flat": {"avg_iou": 0.5, "total_gt": 3, "class_agnostic": False, "excluded_classes": []},
    "long-floats": {"class_stats": {"0": {"ious": rng.random(500).tolist(), "angle_errors": rng.random(500).tolist()}}},
    "long-ints-and-extremes": {"v": [0, -1, 2**40, 1e-300, 1e300, 5e-324, -0.0, 0.1] * 10},
    "just-below-the-threshold": {"v": [0.1] * 63, "w": [0.1] * 64},
    "empty-and-nested-lists": {"v": [], "w": [[1.0, 2.0]] * 70, "x": {"y": {"z": [1.5] * 100}}},
    "bools-nan-strings": {"b": [True, False] * 40, "n": [float("nan")] * 70, "s": ["a"] * 70, "i": [float("inf")] * 70},
    "looks-like-a-placeholder": {"s": "\x00list 0\x00", "v": [1.0] * 80},
    "tuple": {"t": tuple(range(100))},
    # orjson spells |x| < 1e-4 and |x| >= 1e16 unlike repr: those items must be respelled
    "every-magnitude": {"v": (rng.choice([-1.0, 1.0], 4000) * 10 ** rng.uniform(-12, 20, 4000)).tolist()},
    "around-the-spelling-limits": {"v": [1e-4, 9.999999999999999e-05, 1e16, 9999999999999998.0, -1e-4, -1e16] * 12},
    "short-digits": {"v": np.round(rng.random(300), 3).tolist() + [0.0, -0.0, 1.0, 0.5] * 10},
    "ints-beyond-64-bits": {"v": [2**70, -(2**64), 2**63, 1] * 20},
}


@pytest.mark.parametrize("metrics", CASES.values(), ids=CASES.keys())
def test_metrics_json_equals_json_dumps(metrics):
    assert metrics_json(metrics) == json.dumps(metrics, indent=2)


YAML_CASES = {name: case for name, case in CASES.items() if name != "tuple"}  # safe_dump refuses tuples
YAML_CASES["int-keys-and-lists-in-lists"] = {"class_stats": {0: {"ious": [0.5] * 70}, 2: {"v": [[0.25] * 70]}}}
YAML_CASES["long-line-indent"] = {"a": {"b": {"c": {"d": rng.random(100).tolist(), "e": 1}}}, "f": [1.5] * 64}


@pytest.mark.parametrize("metrics", YAML_CASES.values(), ids=YAML_CASES.keys())
def test_metrics_yaml_equals_safe_dump(metrics):
    assert metrics_yaml(metrics) == yaml.safe_dump(metrics, sort_keys=False)


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
