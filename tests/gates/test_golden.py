"""Golden-file checks: loading, field-by-field comparison, the report, and hbb2obb-eval --expect."""

import json
import math
import re

import numpy as np
import pytest
import yaml
from click.testing import CliRunner

from hbb2obb.cli.eval import main
from hbb2obb.errors import InputError, UsageError
from hbb2obb.gates.golden import compare_to_golden, first_difference, load_golden, render_comparison, stored_form

from conftest import rect

# --- loading ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, text, expected",
    [
        (
            "g.yaml",
            "total_gt: 3\navg_iou: 0.5\nclass_stats:\n  0: {gt_total: 3}\n",
            {"total_gt": 3, "avg_iou": 0.5, "class_stats": {0: {"gt_total": 3}}},
        ),
        ("g.yml", "\ufeffa: '30'\n", {"a": "30"}),
        (
            "g.json",
            '{"total_gt": 3, "class_stats": {"0": {"gt_total": 3}}}',
            {"total_gt": 3, "class_stats": {"0": {"gt_total": 3}}},
        ),
        ("g.yaml", "{}\n", {}),
    ],
)
def test_load_mappings(tmp_path, name, text, expected):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    assert load_golden(path) == expected


@pytest.mark.parametrize("name, text, message", [
    ("g.yaml", "- 1\n- 2\n", "got a list"),
    ("g.yaml", "0.85\n", "got a float"),
    ("g.yaml", "just words\n", "got a str"),
    ("g.yaml", "", "got an empty file"),
    ("g.json", "[1, 2]", "got a list"),
    ("g.yaml", "a: 1\nb: [\n", r":3: golden file is not valid YAML"),
    ("g.json", '{\n "a": 1,\n}', r":3: golden file is not valid JSON"),
])
def test_not_a_mapping_is_an_input_error_naming_the_file(tmp_path, name, text, message):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_golden(path)
    assert str(info.value).startswith(str(path))
    assert re.search(message, str(info.value))


def test_missing_and_binary_golden_files(tmp_path):
    with pytest.raises(InputError, match="golden file not found"):
        load_golden(tmp_path / "absent.yaml")
    (tmp_path / "bin.yaml").write_bytes(b"\x00\x81\xff")  # (b"\xff\xfe..." is UTF-16 with its mark: read)
    with pytest.raises(InputError, match="not UTF-8"):
        load_golden(tmp_path / "bin.yaml")
    with pytest.raises(InputError, match="golden file is a folder, not a file"):
        load_golden(tmp_path)


def test_stored_form_follows_the_golden_format():
    metrics = {"class_stats": {0: {"ious": (0.5,)}}, "excluded_classes": (1, 2), "flag": True}
    assert stored_form(metrics, "g.json") == {"class_stats": {"0": {"ious": [0.5]}}, "excluded_classes": [1, 2],
                                              "flag": True}
    assert stored_form(metrics, "g.yaml") == {"class_stats": {0: {"ious": [0.5]}}, "excluded_classes": [1, 2],
                                              "flag": True}


def test_stored_form_of_yaml_is_the_text_round_trip():
    metrics = {"total_gt": 3, "avg_iou": 0.1, "tiny": 1e-17, "huge": 1e300, "none": None, "nan": float("nan"),
               "iou_fractions": {"0.50": 1.0, 0.75: 0.5}, "class_stats": {0: {"ious": (0.25, 1 / 3), "names": ["car"]}},
               "flags": (True, False, 1, 0.0, -0.0), "text": "yes", "empty": {}, "empty_list": ()}
    import yaml

    # repr compares types too (True == 1 == 1.0) and treats NaN as equal to NaN
    assert repr(stored_form(metrics, "g.yml")) == repr(yaml.safe_load(yaml.safe_dump(metrics, sort_keys=False)))


def test_stored_form_of_json_is_the_text_round_trip():
    metrics = {"total_gt": 3, "avg_iou": 0.1, "tiny": 1e-17, "nan": float("nan"), "inf": -float("inf"),
               "keys": {0: 1, 0.5: 2, True: 3, None: 4, "s": 5, 2**70: 6, 1e-05: 7},
               "class_stats": {0: {"ious": (0.25, 1 / 3), "names": ["car"]}}, "flags": (True, 1, 0.0, -0.0),
               "none": None, "empty": {}, "empty_list": ()}
    # the round trip through the JSON the run writes: NaN and infinities are null there (issue 34)
    from hbb2obb.report.serialize import metrics_json_bytes

    assert repr(stored_form(metrics, "g.json")) == repr(json.loads(metrics_json_bytes(metrics)))
    assert stored_form(metrics, "g.json")["nan"] is None and stored_form(metrics, "g.json")["inf"] is None


def test_null_in_a_golden_file_matches_an_undefined_value():
    assert first_difference({"ap50": None}, {"ap50": float("nan")}) is None
    assert first_difference({"ap50": float("nan")}, {"ap50": None}) is None
    assert first_difference({"ap50": None}, {"ap50": 0.0}) is not None


@pytest.mark.parametrize(
    "text",
    [
        '{"a": NaN, "b": [Infinity, -Infinity]}',
        '{"big": 1180591620717411303424}',
        '{"a": [0.1, 1e-05, 5e-324], "b": {"c": null}}',
        '{"small": [0.00012345678901234567, -0.00098765432109876543], "n": -123456789012345678901}',
        '{"f": [12345678901234567890.5, 1234567890123456789012e-3, 1.5E+25]}',
    ],
)
def test_json_golden_files_read_as_json_reads_them(tmp_path, text):
    path = tmp_path / "g.json"
    path.write_text(text)
    assert repr(load_golden(path)) == repr(json.loads(text))


# --- comparing values ------------------------------------------------------------------------------

VALUE_CASES = [
    # golden, this run, tolerance, match?
    (30, 30, 0.0, True),
    (30, 30.0, 0.0, True),          # numbers compare as numbers
    (30, "30", 0.0, False),         # an int is not a string
    ("30", 30, 1.0, False),
    (True, 1, 0.0, False),          # booleans are not numbers
    (False, False, 0.0, True),
    (None, 0, 0.0, False),
    (None, None, 0.0, True),
    ("Car", "Car", 0.0, True),
    ("Car", "car", 0.0, False),
    (0.5, 0.75, 0.25, True),        # tolerance is absolute and inclusive
    (0.5, 0.75, 0.2499, False),
    (0.5, 0.5 + 1e-12, 0.0, False),  # default: exact
    (math.nan, math.nan, 0.0, True),
    (math.inf, math.inf, 0.0, True),
    (math.inf, 1e308, 1.0, False),
    ([1, 2], [1, 2], 0.0, True),
    ([1, 2], [1, 2, 3], 0.0, False),
    ([0.5, 1.0], [0.5, 1.01], 0.02, True),
    ({"0.50": 1.0, "0.90": 0.5}, {"0.50": 1.0, "0.90": 0.5}, 0.0, True),
    ({"0.50": 1.0}, {"0.50": 1.0, "0.90": 0.5}, 1.0, False),  # deep: same keys needed
    ({0: {"avg_iou": 0.9}}, {0: {"avg_iou": 0.9001}}, 0.001, True),
    ({0: {"avg_iou": 0.9}}, {0: {"avg_iou": 0.9001}}, 0.0, False),
    ({0: {"n": 1}}, {"0": {"n": 1}}, 0.0, False),  # int key is not a text key
    ({}, [], 0.0, False),
]


@pytest.mark.parametrize("golden, run, tolerance, match", VALUE_CASES)
def test_value_rules(golden, run, tolerance, match):
    assert (first_difference(golden, run, tolerance) is None) is match
    comparison = compare_to_golden({"field": run}, {"field": golden}, tolerance)
    assert comparison.passed is match
    assert comparison.score == (1.0 if match else 0.0)


def test_first_difference_locates_nested_values():
    golden = {0: {"avg_iou": 0.9, "ious": [0.8, 1.0]}}
    run = {0: {"avg_iou": 0.9, "ious": [0.8, 0.99]}}
    assert first_difference(golden, run) == ("[0]['ious'][1]", 1.0, 0.99)
    assert first_difference({"a": 1}, {}) == ("['a']", 1, "(absent)")
    assert first_difference({}, {"b": 2}) == ("['b']", "(absent)", 2)


INF, NAN = float("inf"), float("nan")
LONG_LIST_EDITS = [  # (index, golden value, run value) placed into otherwise equal lists of 100 floats
    (None, None, None),
    (0, 0.5, 0.6), (57, 0.5, 0.5 + 1e-12), (99, 0.25, 0.75),
    (10, NAN, NAN), (10, NAN, 0.5), (10, 0.5, NAN),
    (20, INF, INF), (20, INF, -INF), (20, -0.0, 0.0), (20, 1e308, -1e308),
]


@pytest.mark.parametrize("tolerance", [0.0, 1e-9, 0.3])
@pytest.mark.parametrize("index, golden_value, run_value", LONG_LIST_EDITS)
def test_long_float_lists_follow_the_item_rules(index, golden_value, run_value, tolerance):
    values = np.random.default_rng(3).random(100).tolist()
    golden, run = list(values), list(values)
    if index is not None:
        golden[index], run[index] = golden_value, run_value
    # the item rules, one pair at a time, as for short lists
    expected = next(((f"[{i}]", g, r) for i, (g, r) in enumerate(zip(golden, run))
                     if first_difference(g, r, tolerance) is not None), None)
    found = first_difference(golden, run, tolerance)
    assert repr(found) == repr(expected)  # repr: NaN equals NaN


# --- score and report ------------------------------------------------------------------------------

GOLDEN = {"total_gt": 122, "avg_iou": 0.88853, "iou_threshold": 0.1, "old_key": "x", "mode": "strict"}
RUN = {"total_gt": 122, "avg_iou": 0.88800, "iou_threshold": 0.1, "mode": "strict", "spatial_match": 1.0,
       "avg_giou": 0.8}


@pytest.mark.parametrize("tolerance, ignore_extra, matching, counted", [
    (0.0, False, 3, 7),     # union of 7 fields: 3 match, 1 missing, 1 different, 2 unexpected
    (0.001, False, 4, 7),   # the tolerance rescues avg_iou
    (0.0, True, 3, 5),      # unexpected fields stop counting
    (0.001, True, 4, 5),
])
def test_score_counts_each_kind_of_non_match_once(tolerance, ignore_extra, matching, counted):
    c = compare_to_golden(RUN, GOLDEN, tolerance, ignore_extra)
    assert (len(c.matching), c.counted) == (matching, counted)
    assert c.score == pytest.approx(matching / counted)
    assert [m[0] for m in c.missing] == ["old_key"]
    assert [u[0] for u in c.unexpected] == ["spatial_match", "avg_giou"]
    assert not c.passed


def test_ignore_extra_never_excuses_missing_fields():
    c = compare_to_golden({"a": 1, "extra": 2}, {"a": 1, "b": 2}, ignore_extra=True)
    assert (c.passed, c.score) == (False, 0.5)
    passes = compare_to_golden({"a": 1, "extra": 2}, {"a": 1}, ignore_extra=True)
    assert (passes.passed, passes.score) == (True, 1.0)


def test_empty_dicts_agree():
    c = compare_to_golden({}, {})
    assert (c.passed, c.score, c.counted) == (True, 1.0, 0)


def test_negative_tolerance_is_a_usage_error():
    with pytest.raises(UsageError, match="non-negative"):
        compare_to_golden({}, {}, tolerance=-1e-9)


def test_report_names_every_non_match():
    text = render_comparison(compare_to_golden(RUN, GOLDEN, source="golden.yaml"))
    lines = text.splitlines()
    assert lines[0] == "FAIL  expect golden.yaml: 3/7 fields match (score 0.429)"
    assert "  missing     old_key (golden 'x')" in lines
    assert "  different   avg_iou: golden 0.88853, this run 0.888" in lines
    assert "  unexpected  spatial_match (this run 1.0)" in lines
    assert "  unexpected  avg_giou (this run 0.8)" in lines
    assert len(lines) == 5
    ignored = render_comparison(compare_to_golden(RUN, GOLDEN, 0.001, True, source="g.yaml"))
    assert ignored.splitlines()[0] == "FAIL  expect g.yaml: 4/5 fields match (score 0.800, tolerance 0.001)"
    assert "  unexpected  avg_giou (this run 0.8, not counted)" in ignored.splitlines()


def test_report_summarizes_long_values():
    text = render_comparison(compare_to_golden({"ious": [0.5] * 40, "cs": {0: 1}}, {"ious": [0.5] * 39}))
    assert "different   ious (length): golden 39, this run 40" in text
    assert "unexpected  cs (this run {mapping of 1})" in text


# --- hbb2obb-eval --expect -------------------------------------------------------------------------


def run(*args):
    result = CliRunner().invoke(main, [str(a) for a in args])
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def labels(write_labels):
    root = write_labels({"gt/a.txt": rect(10, 10, 40, 20) + "\n" + rect(100, 100, 30, 30, cls=1) + "\n",
                         "pred/a.txt": rect(12, 10, 40, 20) + "\n" + rect(100, 100, 30, 30, cls=1) + "\n"})
    return root


@pytest.fixture(params=[".yaml", ".json"])
def golden(request, labels):
    path = labels / f"golden{request.param}"
    code, _, err = run(labels / "gt", labels / "pred", "-o", path, "-nb")
    assert code == 0, err
    return path


def fields_in(path):
    text = path.read_text()
    return json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)


def test_same_run_passes(labels, golden):
    code, out, err = run(labels / "gt", labels / "pred", "--expect", golden, "-nb")
    n = len(fields_in(golden))
    assert code == 0, err
    assert f"pass  expect {golden}: {n}/{n} fields match (score 1.000)" in out


def test_changed_run_fails_naming_fields(labels, golden):
    code, out, _ = run(labels / "gt", labels / "pred", "--expect", golden, "-t", "0.2", "--spatial_threshold", "0.9",
                       "-nb")
    n = len(fields_in(golden))
    assert code == 1
    assert f"FAIL  expect {golden}: {n - 2}/{n} fields match" in out
    assert "  different   iou_threshold: golden 0.1, this run 0.2" in out
    assert "  different   spatial_threshold: golden 0.5, this run 0.9" in out


def test_edited_golden_type_and_extra_fields(labels, golden):
    stored = fields_in(golden)
    stored["total_gt"] = str(stored["total_gt"])
    del stored["avg_giou"]
    golden.write_text(json.dumps(stored) if golden.suffix == ".json" else yaml.safe_dump(stored))
    code, out, _ = run(labels / "gt", labels / "pred", "--expect", golden, "-nb")
    assert code == 1
    assert "  different   total_gt: golden '2', this run 2" in out
    assert re.search(r"^  unexpected  avg_giou \(this run 0\.\d+\)$", out, re.M)
    code, out, _ = run(labels / "gt", labels / "pred", "--expect", golden, "--expect_ignore_extra", "-nb")
    assert code == 1
    n = len(stored)
    assert f"{n - 1}/{n} fields match" in out


def test_tolerance_flag(labels, golden):
    stored = fields_in(golden)
    stored["avg_iou"] += 0.004
    golden.write_text(json.dumps(stored) if golden.suffix == ".json" else yaml.safe_dump(stored))
    assert run(labels / "gt", labels / "pred", "--expect", golden, "-nb")[0] == 1
    code, out, _ = run(labels / "gt", labels / "pred", "--expect", golden, "--expect_tolerance", "0.005", "-nb")
    assert code == 0
    assert "(score 1.000, tolerance 0.005)" in out


def test_json_mode_keeps_stdout_json(labels, golden):
    code, out, err = run(labels / "gt", labels / "pred", "--expect", golden, "--json", "-nb")
    assert code == 0
    assert json.loads(out)["total_matches"] == 2
    assert "pass  expect" in err


def test_gate_and_golden_both_reported(labels, golden):
    code, out, _ = run(labels / "gt", labels / "pred", "--expect", golden, "--require", "avg_iou>=0.99", "-nb")
    assert code == 1
    assert "FAIL  avg_iou>=0.99" in out and "pass  expect" in out


@pytest.mark.parametrize("content", ["- 1\n", "", "oops: [\n"])
def test_bad_golden_exits_2_naming_it(labels, content):
    path = labels / "bad.yaml"
    path.write_text(content)
    code, out, err = run(labels / "gt", labels / "pred", "--expect", path, "-nb")
    assert code == 2
    assert out == ""
    assert err.startswith(f"hbb2obb-eval: error: {path}")
    assert "Traceback" not in err


@pytest.mark.parametrize("args, message", [
    (["--expect_tolerance", "0.1"], "need --expect"),
    (["--expect_ignore_extra"], "need --expect"),
    (["--expect", "{golden}", "--expect_tolerance", "-0.1"], "non-negative"),
])
def test_flag_misuse_exits_2(labels, golden, args, message):
    code, _, err = run(labels / "gt", labels / "pred", *[a.format(golden=golden) for a in args])
    assert code == 2
    assert message in err
