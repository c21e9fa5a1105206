"""Golden-file checks: compare a run's metric dict with a stored one, top-level field by field.

A pipeline's regression test keeps an earlier ``hbb2obb-eval -o`` output as its *golden* file
and runs ``hbb2obb-eval ... --expect GOLDEN.yaml``. Each top-level field of the union of both
dicts is one check:

* it matches when present on both sides with an equal value: numbers within the tolerance
  (absolute; ints and floats compare as numbers, booleans are not numbers), strings and
  booleans exactly, ``None`` only with ``None`` or NaN (an undefined value: JSON files hold
  ``null`` where the run has NaN, and older files may hold ``NaN``), an int never with a string (``"30"`` is not
  ``30``); dicts need the same keys and lists the same length, their items compared by the
  same rules, recursively;
* a field of the golden file the run lacks is *missing*, a field both have with unequal values
  is *different*, a field only the run has is *unexpected*. Each counts as one non-match, and
  ``ignore_extra`` drops the unexpected ones from the count.

Score = matching fields / fields counted. The run's dict is compared as it would be stored: it
goes through the same YAML or JSON round trip as the golden file's format, so integer class
keys and tuples look as they do on disk. Nothing else is coerced.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hbb2obb.errors import InputError, UsageError
from hbb2obb.io.text_file import read_text_file
from hbb2obb.io.yaml_text import refuse_alias_bomb, too_deep
from hbb2obb.report.serialize import read_metrics_yaml

_SHOWN_CHARS = 60  # longest value printed in full in a report line
_LONG_LIST = 64  # lists of floats at least this long are compared as arrays


def _is_json(path: Path) -> bool:
    return path.suffix.lower() == ".json"


def load_golden(path) -> dict:
    """Read a golden file: a YAML or JSON mapping (``.json`` is parsed as JSON, anything else as YAML).

    Raises
    ------
    InputError
        The file is missing, unreadable, not valid YAML/JSON, or does not hold a mapping.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "golden.yaml"
    >>> _ = path.write_text("total_gt: 3\\navg_iou: 0.5\\n")
    >>> load_golden(path)
    {'total_gt': 3, 'avg_iou': 0.5}
    """
    path = Path(path)
    text = read_text_file(path, "golden file")
    if _is_json(path):
        try:
            data = _json_loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(f"{path}:{exc.lineno}: golden file is not valid JSON ({exc.msg})") from None
        except RecursionError:
            raise too_deep(path, "golden file") from None
        except ValueError as exc:  # an integer of more digits than Python converts
            raise InputError(f"{path}: golden file is not valid JSON ({exc})") from None
    else:
        import yaml  # only for YAML golden files: the import costs every hbb2obb-eval start-up

        refuse_alias_bomb(text, getattr(yaml, "CSafeLoader", yaml.SafeLoader), path, "golden file")
        try:
            data = read_metrics_yaml(text)
        except RecursionError:
            raise too_deep(path, "golden file") from None
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
            problem = getattr(exc, "problem", None) or "parse error"
            raise InputError(f"{where}: golden file is not valid YAML ({problem})") from None
    if not isinstance(data, dict):
        kind = "an empty file" if data is None else f"a {type(data).__name__}"
        raise InputError(f"{path}: golden file must hold a mapping of metric names to values "
                         f"(an hbb2obb-eval -o output), got {kind}")
    return data


def stored_form(metrics: dict, like_path) -> dict:
    """``metrics`` after the round trip a file named like ``like_path`` gives it (JSON or YAML).

    Examples
    --------
    >>> stored_form({"class_stats": {0: {"gt_total": 2}}, "excluded_classes": ()}, "g.json")
    {'class_stats': {'0': {'gt_total': 2}}, 'excluded_classes': []}
    >>> stored_form({"class_stats": {0: {"gt_total": 2}}}, "g.yaml")
    {'class_stats': {0: {'gt_total': 2}}}
    """
    if _is_json(Path(like_path)):
        return _as_json_reads_it(metrics)
    return _as_yaml_reads_it(metrics)


def _json_loads(text: str):
    """``json.loads``, three times faster on large files through orjson when it can read them.

    orjson refuses what :mod:`json` writes for NaN and infinity, and reads integers beyond 64
    bits as floats: files with NaN, with a float that large (it may have been such an
    integer), and broken ones (for json's line-numbered error) are read by :mod:`json`.
    """
    import orjson

    try:
        data = orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)
    return json.loads(text) if _holds_huge_float(data) else data


_HUGE = 2.0**63  # orjson reads integers up to 64 bits exactly; anything larger becomes a float


def _holds_huge_float(value) -> bool:
    if isinstance(value, float):
        return not abs(value) < _HUGE
    if isinstance(value, dict):
        return any(_holds_huge_float(item) for item in value.values())
    if isinstance(value, list):
        if len(value) >= _LONG_LIST and _all_floats(value):
            import numpy as np  # already loaded by every command that compares a run

            return not bool((np.abs(np.array(value)) < _HUGE).all())
        return any(_holds_huge_float(item) for item in value)
    return False


def _as_json_reads_it(value):
    """``json.loads`` of the JSON the run writes, without the text: tuples become lists, keys strings.

    Keys are spelled as :mod:`json` spells them (``1``, ``0.5``, ``true``, ``null``); numbers
    are written exactly, so they come back unchanged; NaN and infinity are written as ``null``
    and come back as ``None``.
    """
    if isinstance(value, dict):
        return {_json_key(key): _as_json_reads_it(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_as_json_reads_it(item) for item in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _json_key(key) -> str:
    if isinstance(key, str):
        return key
    return json.dumps(key)  # bool, None, int and float keys, as the encoder spells them


def _as_yaml_reads_it(value):
    """The YAML round trip of plain data without the text: tuples come back as lists.

    Keys, numbers (written exactly), strings, booleans and None come back as they were; the
    text round trip takes seconds on the per-pair lists of a large dataset.
    """
    if isinstance(value, dict):
        return {key: _as_yaml_reads_it(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_as_yaml_reads_it(item) for item in value]
    return value


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def first_difference(expected, actual, tolerance: float = 0.0, where: str = ""):
    """Where two values first differ under the golden rules, or ``None`` when they match.

    Returns ``(where, expected_part, actual_part)``: a path like ``["0"]["avg_iou"]`` into
    nested values (empty at the top) and the two parts that differ there.

    Examples
    --------
    >>> first_difference(30, "30") is None
    False
    >>> first_difference({"a": [1, 2.0]}, {"a": [1, 2.05]}, tolerance=0.1) is None
    True
    >>> first_difference({"a": {"b": 1}}, {"a": {"b": True}})
    ("['a']['b']", 1, True)
    >>> first_difference(None, float("nan")) is None
    True
    """
    if _is_undefined(expected) and _is_undefined(actual):
        return None
    if _is_number(expected) and _is_number(actual):
        if expected == actual or abs(expected - actual) <= tolerance:
            return None
        if isinstance(expected, float) and isinstance(actual, float) and math.isnan(expected) and math.isnan(actual):
            return None
        return where, expected, actual
    if isinstance(expected, dict) and isinstance(actual, dict):
        for key in expected:
            if key not in actual:
                return f"{where}[{key!r}]", expected[key], "(absent)"
            found = first_difference(expected[key], actual[key], tolerance, f"{where}[{key!r}]")
            if found is not None:
                return found
        for key in actual:
            if key not in expected:
                return f"{where}[{key!r}]", "(absent)", actual[key]
        return None
    if isinstance(expected, list) and isinstance(actual, list):
        if len(expected) != len(actual):
            return f"{where} (length)", len(expected), len(actual)
        if len(expected) >= _LONG_LIST and _all_floats(expected) and _all_floats(actual):
            return _first_float_difference(expected, actual, tolerance, where)
        for i, (e, a) in enumerate(zip(expected, actual)):
            found = first_difference(e, a, tolerance, f"{where}[{i}]")
            if found is not None:
                return found
        return None
    if type(expected) is type(actual) and expected == actual:
        return None
    return where, expected, actual


def _is_undefined(value) -> bool:
    """``None`` or a float NaN: how JSON and YAML files spell an undefined value."""
    return value is None or (isinstance(value, float) and math.isnan(value))


def _all_floats(values: list) -> bool:
    return set(map(type, values)) == {float}


def _first_float_difference(expected: list, actual: list, tolerance: float, where: str):
    """:func:`first_difference` of two equally long lists of floats, compared as arrays.

    The per-pair lists of a large run hold hundreds of thousands of numbers: one Python call
    each would cost seconds. Same rules: equal, within the tolerance, or both NaN.
    """
    import numpy as np  # already loaded by every command that compares a run

    e, a = np.array(expected), np.array(actual)
    with np.errstate(invalid="ignore", over="ignore"):  # inf - inf: not within any tolerance, but inf == inf
        same = (e == a) | (np.abs(e - a) <= tolerance) | (np.isnan(e) & np.isnan(a))
    if same.all():
        return None
    i = int(np.argmin(same))
    return f"{where}[{i}]", expected[i], actual[i]


@dataclass(frozen=True)
class GoldenComparison:
    """The outcome of comparing a run with a golden file, field by field.

    ``missing`` holds ``(field, golden value)``, ``different`` holds ``(field, where, golden
    part, run part)`` (``where`` locates the first difference inside a nested value),
    ``unexpected`` holds ``(field, run value)``.
    """

    source: str
    matching: tuple
    missing: tuple
    different: tuple
    unexpected: tuple
    ignore_extra: bool = False
    tolerance: float = 0.0

    @property
    def counted(self) -> int:
        """Fields that count: the union of both dicts, less unexpected ones when ignored."""
        extra = 0 if self.ignore_extra else len(self.unexpected)
        return len(self.matching) + len(self.missing) + len(self.different) + extra

    @property
    def score(self) -> float:
        """Matching fields over counted fields (1.0 when nothing is counted)."""
        return len(self.matching) / self.counted if self.counted else 1.0

    @property
    def passed(self) -> bool:
        return len(self.matching) == self.counted


def compare_to_golden(metrics: dict, golden: dict, tolerance: float = 0.0, ignore_extra: bool = False,
                      source: str = "golden") -> GoldenComparison:
    """Compare a metric dict (in its stored form, see :func:`stored_form`) with a golden one.

    Parameters
    ----------
    metrics : dict
        This run's metric dict.
    golden : dict
        The stored one.
    tolerance : float
        Largest absolute difference at which two numbers still match (0: exact).
    ignore_extra : bool
        Fields only this run has are listed but do not count.
    source : str
        Name of the golden file, for the report.

    Examples
    --------
    >>> c = compare_to_golden({"a": 1, "b": "x", "new": 2}, {"a": 1.0, "b": "y", "gone": 3})
    >>> c.matching, [m[0] for m in c.missing], [d[0] for d in c.different], c.score
    (('a',), ['gone'], ['b'], 0.25)
    """
    if not tolerance >= 0:
        raise UsageError(f"--expect_tolerance must be a non-negative number, got {tolerance}")
    matching, missing, different = [], [], []
    for key, expected in golden.items():
        if key not in metrics:
            missing.append((key, expected))
            continue
        found = first_difference(expected, metrics[key], tolerance)
        if found is None:
            matching.append(key)
        else:
            different.append((key, *found))
    unexpected = [(key, value) for key, value in metrics.items() if key not in golden]
    return GoldenComparison(source, tuple(matching), tuple(missing), tuple(different), tuple(unexpected),
                            ignore_extra, float(tolerance))


def _shown(value: Any) -> str:
    if isinstance(value, dict):
        return f"{{mapping of {len(value)}}}"
    if isinstance(value, list) and len(repr(value)) > _SHOWN_CHARS:
        return f"[list of {len(value)}]"
    text = repr(value)
    return text if len(text) <= _SHOWN_CHARS else text[:_SHOWN_CHARS - 3] + "..."


def render_comparison(comparison: GoldenComparison) -> str:
    """One ``pass``/``FAIL`` line with the score, then one line per field that does not match.

    Examples
    --------
    >>> print(render_comparison(compare_to_golden({"a": 1, "b": "30"}, {"a": 1, "b": 30}, source="g.yaml")))
    FAIL  expect g.yaml: 1/2 fields match (score 0.500)
      different   b: golden 30, this run '30'
    """
    c = comparison
    tolerance = f", tolerance {c.tolerance:g}" if c.tolerance else ""
    lines = [f"{'pass' if c.passed else 'FAIL'}  expect {c.source}: {len(c.matching)}/{c.counted} fields match "
             f"(score {c.score:.3f}{tolerance})"]
    for key, expected in c.missing:
        lines.append(f"  missing     {key} (golden {_shown(expected)})")
    for key, where, expected, actual in c.different:
        lines.append(f"  different   {key}{where}: golden {_shown(expected)}, this run {_shown(actual)}")
    for key, actual in c.unexpected:
        ignored = ", not counted" if c.ignore_extra else ""
        lines.append(f"  unexpected  {key} (this run {_shown(actual)}{ignored})")
    return "\n".join(lines)
