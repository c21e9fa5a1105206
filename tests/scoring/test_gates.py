"""--require expressions."""

import pytest

from hbb2obb.errors import UsageError
from hbb2obb.scoring.gates import check_gates, parse_gate

METRICS = {"avg_iou": 0.86, "p90_angle_error": 4.7, "total_unmatched_gt": 0, "iou_fractions": {"0.90": 0.5}}


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
    ],
)
def test_gate_outcomes(text, passes):
    gate = parse_gate(text)
    assert (check_gates([gate], METRICS) == []) == passes


@pytest.mark.parametrize("text", ["avg_iou", "avg_iou=>0.8", "avg_iou>=", ">=0.5", "avg_iou>=abc", ""])
def test_malformed_gates_are_usage_errors(text):
    with pytest.raises(UsageError, match="expected KEY OP NUMBER"):
        parse_gate(text)


def test_unknown_key_is_a_usage_error():
    with pytest.raises(UsageError, match="unknown metric 'mean_iou'"):
        parse_gate("mean_iou>=0.5")


def test_failed_gate_reports_its_value():
    [(gate, value)] = check_gates([parse_gate("avg_iou>=0.9")], METRICS)
    assert gate.key == "avg_iou" and value == 0.86
