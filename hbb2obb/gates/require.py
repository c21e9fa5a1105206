"""CI gates: ``--require avg_iou>=0.85`` or ``--require 'Car:avg_iou>=0.85'``, checked against the metric dict.

A gate names any numeric key of the metric dict (top level) or of one class's entry in
``class_stats`` (``CLASS:key``, the class by its name in the label map or by its id), and the
ladder rungs ``iou_at_50`` ... ``iou_at_90`` at either level. Keys are looked up in the dict the
run produced, not in a list kept here, so a key a later version adds (``map50``, a per-class
``ap50``) can be gated the day it appears. The expression is parsed before the run, so a
malformed one or an unknown class name fails at once; a key the dict lacks fails after it,
naming the key and the keys that exist.

A statistic of the matched pairs (``avg_iou``, ``p90_angle_error``, ...) is 0 by convention
where there is no matched pair, overall or in the gated class; a gate on it then fails whatever
its bound, saying so: ``p90_angle_error<=5`` must not pass on a run that matched nothing.
"""

from __future__ import annotations

import operator
import re
from dataclasses import dataclass
from numbers import Real
from typing import NamedTuple, Optional

from hbb2obb.detection.summary import CLASS_DETECTION_KEYS, DETECTION_KEYS
from hbb2obb.errors import UsageError
from hbb2obb.io.labelmap import class_name
from hbb2obb.scoring.metrics import LADDER_ALIASES

COMPARISONS = {
    ">=": operator.ge,
    "<=": operator.le,
    "==": operator.eq,
    "!=": operator.ne,
    ">": operator.gt,
    "<": operator.lt,
}

_GATE = re.compile(
    r"^\s*(?:(?P<scope>[^:<>=!]*?)\s*:\s*)?"
    r"(?P<key>[A-Za-z_][A-Za-z0-9_]*)\s*(?P<op>>=|<=|==|!=|>|<)\s*"
    r"(?P<bound>[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?)\s*$")


@dataclass(frozen=True)
class Gate:
    """One bound on one metric, overall (``class_id`` None) or of one class."""

    key: str
    op: str
    bound: float
    text: str
    class_id: Optional[int] = None

    def check(self, metrics: dict) -> tuple[bool, float]:
        """``(passed, value)`` for this metric dict; a key the dict lacks is a :class:`UsageError`.

        A statistic of the matched pairs where there is none fails (:func:`undefined_reason`).
        """
        value = gate_value(metrics, self.key, self.class_id, self.text)
        passed = COMPARISONS[self.op](value, self.bound) and undefined_reason(self, metrics) is None
        return bool(passed), value


PAIR_STATISTICS = frozenset(("avg_iou", "std_iou", "sem_iou", "median_iou", "avg_angle_error", "std_angle_error",
                             "median_angle_error", "p90_angle_error", "avg_giou", "median_giou", "avg_diou",
                             "median_diou", "avg_ciou", "median_ciou", "avg_center_offset", *LADDER_ALIASES))
"""The metric dict's statistics of the matched pairs of their level, 0 where there is none (docs/metrics.md §3)."""


def undefined_reason(gate: Gate, metrics: dict) -> Optional[str]:
    """Why a gate's value measures nothing (a statistic of no matched pair), or ``None``.

    Examples
    --------
    >>> empty = {"total_matches": 0, "p90_angle_error": 0.0, "total_gt": 0}
    >>> undefined_reason(parse_gate("p90_angle_error<=5"), empty)
    'no matched pair, so p90_angle_error measures nothing (0 by convention)'
    >>> undefined_reason(parse_gate("total_gt<=5"), empty) is None
    True
    """
    if gate.key not in PAIR_STATISTICS:
        return None
    entry = metrics if gate.class_id is None else (metrics.get("class_stats") or {}).get(gate.class_id, {})
    count = entry.get("total_matches" if gate.class_id is None else "matches")
    if count != 0:
        return None
    scope = "" if gate.class_id is None else " of this class"
    return f"no matched pair{scope}, so {gate.key} measures nothing (0 by convention)"


class GateOutcome(NamedTuple):
    """One gate checked: whether it passed, the value it saw, and why it failed whatever its bound ("")."""

    gate: Gate
    passed: bool
    value: float
    note: str = ""


def _is_number(value) -> bool:
    return isinstance(value, Real) and not isinstance(value, bool)


def numeric_keys(entry: dict) -> list[str]:
    """The names a gate may test in one level of the metric dict: its numeric keys and, when it
    has an IoU ladder, the ladder aliases.

    Examples
    --------
    >>> numeric_keys({"avg_iou": 0.8, "class_agnostic": False, "ious": [0.8], "total_gt": 3})
    ['avg_iou', 'total_gt']
    >>> numeric_keys({"iou_fractions": {"0.90": 0.5}})[-1]
    'iou_at_90'
    """
    names = [key for key, value in entry.items() if _is_number(value)]
    if isinstance(entry.get("iou_fractions"), dict):
        names += [alias for alias, rung in LADDER_ALIASES.items() if rung in entry["iou_fractions"]]
    return sorted(names)


def gate_value(metrics: dict, key: str, class_id: Optional[int] = None, text: str = "") -> float:
    """The number a gate compares: ``metrics[key]``, or ``metrics["class_stats"][class_id][key]``.

    Raises
    ------
    UsageError
        The class is not in the run, or the key is not a numeric key at that level; the message
        names what is there.

    Examples
    --------
    >>> m = {"avg_iou": 0.8, "class_stats": {0: {"avg_iou": 0.9, "iou_fractions": {"0.90": 0.25}}}}
    >>> gate_value(m, "avg_iou"), gate_value(m, "iou_at_90", 0)
    (0.8, 0.25)
    """
    where = f"--require {text!r}: " if text else ""
    entry = metrics
    if class_id is not None:
        classes = metrics.get("class_stats") or {}
        if class_id not in classes:
            present = ", ".join(str(c) for c in sorted(classes)) or "none"
            raise UsageError(f"{where}class {class_id} has no boxes on either side in this run "
                             f"(classes present: {present})")
        entry = classes[class_id]
    if key in LADDER_ALIASES and isinstance(entry.get("iou_fractions"), dict) \
            and LADDER_ALIASES[key] in entry["iou_fractions"]:
        return entry["iou_fractions"][LADDER_ALIASES[key]]
    value = entry.get(key)
    if not _is_number(value):
        level = "metric" if class_id is None else "per-class metric"
        # AP keys exist only when the predictions carry scores: say so rather than "unknown"
        scored_keys = DETECTION_KEYS if class_id is None else CLASS_DETECTION_KEYS
        needs_scores = key in scored_keys or (class_id is None and key.startswith("mar_"))
        hint = " (AP keys need a confidence column in the predictions)" if needs_scores else ""
        raise UsageError(f"{where}unknown {level} {key!r}{hint}; known: {', '.join(numeric_keys(entry))}")
    return value


def _class_of(scope: str, label_map: Optional[dict], text: str) -> int:
    """The class id a gate's ``CLASS:`` prefix names: an integer id, or a name of the label map."""
    label_map = label_map or {}
    by_name = {name: class_id for class_id, name in label_map.items()}
    if scope in by_name:
        return by_name[scope]
    folded = {name.casefold(): class_id for name, class_id in by_name.items()}
    if scope.casefold() in folded:
        return folded[scope.casefold()]
    try:
        return int(scope)
    except ValueError:
        pass
    names = ", ".join(f"{class_name(label_map, c)} ({c})" for c in sorted(label_map)) or "no label map given (-mp)"
    raise UsageError(f"--require {text!r}: unknown class {scope!r}; classes: {names}")


def parse_gate(text: str, label_map: Optional[dict] = None) -> Gate:
    """Parse ``[CLASS:]KEY OP NUMBER``; a malformed expression or an unknown class is a usage error.

    The key itself is checked against the metric dict when the gate is checked (:meth:`Gate.check`).

    Examples
    --------
    >>> parse_gate("p90_angle_error<=5").bound, parse_gate("p90_angle_error<=5.").bound
    (5.0, 5.0)
    >>> parse_gate("iou_at_90 >= 0.5").key
    'iou_at_90'
    >>> parse_gate("Car:avg_iou>=0.85", {0: "Car"}).class_id
    0
    >>> parse_gate("3:map50>0.1").class_id
    3
    """
    match = _GATE.match(text)
    if not match:
        raise UsageError(f"--require {text!r}: expected [CLASS:]KEY OP NUMBER, e.g. avg_iou>=0.85 or "
                         "Car:avg_iou>=0.85 (OP one of >= <= > < == !=)")
    scope = match.group("scope")
    if scope is not None and not scope.strip():
        raise UsageError(f"--require {text!r}: nothing before ':'; give a class name or id, e.g. Car:avg_iou>=0.85")
    class_id = None if scope is None else _class_of(scope.strip(), label_map, text)
    return Gate(match.group("key"), match.group("op"), float(match.group("bound")), text.strip(), class_id)


def gate_outcomes(gates, metrics: dict) -> list[GateOutcome]:
    """A :class:`GateOutcome` for every gate, in the order given.

    Every gate's key is resolved before this returns, so a gate naming a key the dict lacks
    raises :class:`UsageError` before any outcome is reported.
    """
    return [GateOutcome(gate, *gate.check(metrics), undefined_reason(gate, metrics) or "") for gate in gates]


def check_gates(gates, metrics: dict) -> list[tuple[Gate, float]]:
    """The gates that failed, each with the value it saw (:func:`gate_outcomes`, failures only)."""
    return [(outcome.gate, outcome.value) for outcome in gate_outcomes(gates, metrics) if not outcome.passed]


def outcome_line(outcome: GateOutcome) -> str:
    """How a command prints a gate: ``pass  avg_iou>=0.8  (value 0.91)``."""
    note = f"; {outcome.note}" if outcome.note else ""
    return f"{'pass' if outcome.passed else 'FAIL'}  {outcome.gate.text}  (value {outcome.value:.6g}{note})"
