"""CI gates: ``--require avg_iou>=0.85`` parsed up front, checked against the metric dict."""

from __future__ import annotations

import operator
import re
from dataclasses import dataclass

from hbb2obb.errors import UsageError
from hbb2obb.scoring.metrics import LADDER_ALIASES, flat_metric
from hbb2obb.scoring.overlap_metrics import DISTANCE_KEYS

COMPARISONS = {
    ">=": operator.ge,
    "<=": operator.le,
    "==": operator.eq,
    "!=": operator.ne,
    ">": operator.gt,
    "<": operator.lt,
}

GATE_KEYS = frozenset(
    {
        "total_gt", "total_pred", "total_matches", "total_unmatched_gt", "total_unmatched_pred",
        "cross_class_matches", "total_edge_cases", "avg_iou", "std_iou", "sem_iou", "median_iou",
        "avg_angle_error", "std_angle_error", "median_angle_error", "p90_angle_error", "frames_scored",
        "missing_pred_files", "orphan_pred_files", "skipped_pred_lines", "reordered_boxes",
        "degenerate_boxes", "concave_boxes", "spatial_match",
    }
    | set(DISTANCE_KEYS)
    | set(LADDER_ALIASES)
)
"""Names a gate may test: the numeric keys of the metric dict and the ladder rungs."""

_GATE = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(>=|<=|==|!=|>|<)\s*([-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?)\s*$")


@dataclass(frozen=True)
class Gate:
    """One bound on one metric."""

    key: str
    op: str
    bound: float
    text: str

    def check(self, metrics: dict) -> tuple[bool, float]:
        """``(passed, value)`` for this metric dict."""
        value = flat_metric(metrics, self.key)
        return bool(COMPARISONS[self.op](value, self.bound)), value


def parse_gate(text: str, known: frozenset = GATE_KEYS) -> Gate:
    """Parse ``KEY OP NUMBER``; an unknown key or a malformed expression is a usage error.

    Examples
    --------
    >>> parse_gate("p90_angle_error<=5").bound, parse_gate("p90_angle_error<=5.").bound
    (5.0, 5.0)
    >>> parse_gate("iou_at_90 >= 0.5").key
    'iou_at_90'
    """
    match = _GATE.match(text)
    if not match:
        raise UsageError(f"--require {text!r}: expected KEY OP NUMBER, e.g. avg_iou>=0.85 (OP one of >= <= > < == !=)")
    key, op, bound = match.groups()
    if key not in known:
        raise UsageError(f"--require {text!r}: unknown metric {key!r}; known: {', '.join(sorted(known))}")
    return Gate(key, op, float(bound), text.strip())


def check_gates(gates, metrics: dict) -> list[tuple[Gate, float]]:
    """The gates that failed, each with the value it saw."""
    failed = []
    for gate in gates:
        passed, value = gate.check(metrics)
        if not passed:
            failed.append((gate, value))
    return failed
