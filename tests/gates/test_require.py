"""--require expressions."""

import pytest

from hbb2obb.errors import UsageError
from hbb2obb.gates.require import check_gates, gate_outcomes, parse_gate

METRICS = {
    "avg_iou": 0.86, "p90_angle_error": 4.7, "total_unmatched_gt": 0, "iou_fractions": {"0.90": 0.5},
    "map50": 0.71, "class_agnostic": False,  # a key no list names, and a flag that is not a number
    "class_stats": {0: {"avg_iou": 0.91, "ap50": 0.8, "matches": 3, "iou_fractions": {"0.90": 0.75}, "ious": [0.9]},
                    3: {"avg_iou": 0.42, "matches": 1, "iou_fractions": {"0.90": 0.0}}},
}
LABELS = {0: "Car", 1: "Bus", 3: "small vehicle"}


@pytest.mark.parametrize(
    "text, passes",
    [
        ("avg_iou>=0.85", True),
        ("avg_iou >= 0.87", False),
        ("p90_angle_error<=5", True),
        ("p90_angle_error<4.7", False),
        ("total_unmatched_gt==0", True),
        ("total_unmatched_gt!=0", False),
        ("iou_at_90>=0.5", True),
        ("iou_at_90>0.5", False),
        ("avg_iou>8.5e-1", True),
        ("map50>=0.7", True),
        ("map50>0.71", False),
        ("Car:avg_iou>=0.9", True),
        ("car : avg_iou >= 0.92", False),
        ("0:ap50>=0.8", True),
        ("Car:iou_at_90>=0.75", True),
        ("small vehicle:avg_iou>=0.5", False),
        ("3:iou_at_90==0", True),
    ],
)
def test_gate_outcomes(text, passes):
    gate = parse_gate(text, LABELS)
    assert (check_gates([gate], METRICS) == []) == passes


@pytest.mark.parametrize("text", ["avg_iou", "avg_iou=>0.8", "avg_iou>=", ">=0.5", "avg_iou>=abc", "", "Car:>=0.5"])
def test_malformed_gates_are_usage_errors(text):
    with pytest.raises(UsageError, match=r"expected \[CLASS:\]KEY OP NUMBER"):
        parse_gate(text, LABELS)


def test_a_class_prefix_names_a_class_of_the_map_or_an_id():
    assert parse_gate("Bus:avg_iou>0", LABELS).class_id == 1
    assert parse_gate("7:avg_iou>0").class_id == 7
    with pytest.raises(UsageError, match="unknown class 'Lorry'.*Car \\(0\\)"):
        parse_gate("Lorry:avg_iou>0", LABELS)
    with pytest.raises(UsageError, match="unknown class 'Car'; classes: no label map given"):
        parse_gate("Car:avg_iou>0")
    with pytest.raises(UsageError, match="nothing before ':'"):
        parse_gate(" :avg_iou>0", LABELS)


@pytest.mark.parametrize("text, message", [
    ("mean_iou>=0.5", "unknown metric 'mean_iou'; known: .*avg_iou.*map50"),
    ("class_agnostic==0", "unknown metric 'class_agnostic'"),  # a flag, not a number
    ("class_stats>0", "unknown metric 'class_stats'"),
    ("Car:map50>0", "unknown per-class metric 'map50'; known: ap50, avg_iou, iou_at_90, matches"),
    ("Bus:avg_iou>0", "class 1 has no boxes on either side in this run \\(classes present: 0, 3\\)"),
])
def test_a_key_or_class_the_metric_dict_lacks_is_a_usage_error_naming_it(text, message):
    gate = parse_gate(text, LABELS)  # the key is known only once the run has its metric dict
    with pytest.raises(UsageError, match=message):
        check_gates([gate], METRICS)


def test_failed_gate_reports_its_value():
    [(gate, value)] = check_gates([parse_gate("avg_iou>=0.9")], METRICS)
    assert gate.key == "avg_iou" and value == 0.86


def test_every_gate_has_one_outcome_in_order():
    gates = [parse_gate("avg_iou>=0.9"), parse_gate("avg_iou>=0.5")]
    assert [(outcome.gate.text, outcome.passed, outcome.value, outcome.note)
            for outcome in gate_outcomes(gates, METRICS)] == [
        ("avg_iou>=0.9", False, 0.86, ""), ("avg_iou>=0.5", True, 0.86, "")]
    assert gate_outcomes([], METRICS) == []


@pytest.mark.parametrize("key", ["ious", "iou_values", "angle_errors"])
def test_a_per_pair_list_is_not_a_metric_a_gate_can_test(key):
    """A gate naming one of the per-pair lists is a usage error."""
    metrics = {"avg_iou": 0.5, "class_stats": {0: {"avg_iou": 0.5, key: [0.5, 0.7]}}}
    for text in (f"{key}>0", f"0:{key}>0"):
        with pytest.raises(UsageError, match=f"unknown (per-class )?metric '{key}'"):
            check_gates([parse_gate(text)], metrics)


NOTHING_MATCHED = {
    "total_matches": 0, "total_gt": 4, "avg_iou": 0.0, "p90_angle_error": 0.0, "avg_center_offset": 0.0,
    "iou_fractions": {"0.90": 0.0}, "spatial_match": 0.0,
    "class_stats": {0: {"matches": 0, "avg_iou": 0.0, "iou_fractions": {"0.90": 0.0}},
                    1: {"matches": 2, "avg_iou": 0.8, "iou_fractions": {"0.90": 0.5}}},
}


@pytest.mark.parametrize("text, passes", [
    ("p90_angle_error<=5", False),  # 0 by convention: it measures nothing
    ("avg_iou<=1", False),
    ("avg_center_offset<=3", False),
    ("iou_at_90>=0", False),
    ("Car:avg_iou<=1", False),
    ("Bus:avg_iou>=0.5", True),  # its own pairs
    ("Bus:iou_at_90>=0.5", True),
    ("total_matches==0", True),  # counts measure what they say
    ("total_gt>=4", True),
    ("spatial_match<=0", True),  # a share of the ground truth, not of the pairs
])
def test_a_statistic_of_no_matched_pair_fails_whatever_its_bound(text, passes):
    [outcome] = gate_outcomes([parse_gate(text, LABELS)], NOTHING_MATCHED)
    assert outcome.passed == passes
    assert ("no matched pair" in outcome.note) == (not passes)
