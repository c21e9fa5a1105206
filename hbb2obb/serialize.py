"""Writing the metric dict to YAML or JSON files, as plain data."""

from __future__ import annotations

import json
import re
from pathlib import Path

from hbb2obb.errors import InputError

_LONG_LIST = 64  # lists of numbers at least this long are rendered by the fast path
_PLACEHOLDER = re.compile(r'"\\u0000list (\d+)\\u0000"')  # as json.dumps escapes it


def metrics_json(metrics: dict) -> str:
    """``json.dumps(metrics, indent=2)``, character for character, made fast for long lists of numbers.

    With an indent, :mod:`json` encodes in pure Python, one call per list item; the metric dict
    of a large dataset holds hundreds of thousands of IoUs and angle errors. Long lists of
    finite floats and ints are set aside, the rest is encoded by :mod:`json`, and each list is
    joined back in at its place with the same layout.

    Examples
    --------
    >>> metrics = {"avg_iou": 0.5, "class_stats": {"0": {"ious": [0.25] * 70, "n": [1, 2]}}, "e": []}
    >>> metrics_json(metrics) == json.dumps(metrics, indent=2)
    True
    """
    lists: list = []

    def set_aside(value):
        if isinstance(value, dict):
            return {key: set_aside(item) for key, item in value.items()}
        if isinstance(value, (list, tuple)):
            if len(value) >= _LONG_LIST and _plain_numbers(value):
                lists.append(value)
                return f"\x00list {len(lists) - 1}\x00"
            return [set_aside(item) for item in value]
        return value

    text = json.dumps(set_aside(metrics), indent=2)
    if not lists:
        return text
    if len(_PLACEHOLDER.findall(text)) != len(lists):  # a string of the dict looks like one
        return json.dumps(metrics, indent=2)

    def join_back(match: re.Match) -> str:
        line_start = text.rfind("\n", 0, match.start()) + 1
        indent = " " * (len(text[line_start:match.start()]) - len(text[line_start:match.start()].lstrip(" ")))
        items = lists[int(match.group(1))]
        return "[\n" + indent + "  " + (",\n" + indent + "  ").join(map(repr, items)) + "\n" + indent + "]"

    return _PLACEHOLDER.sub(join_back, text)


def _plain_numbers(values) -> bool:
    """Finite floats and ints (not bools): what ``repr`` writes exactly as :mod:`json` does."""
    kinds = set(map(type, values))
    if not kinds <= {float, int}:
        return False
    if float in kinds:
        import numpy as np  # already loaded by every command that prints a metric dict

        try:  # ints converted too: always finite, unless too large for a float (then: the slow path)
            return bool(np.isfinite(np.array(values, dtype=np.float64)).all())
        except OverflowError:
            return False
    return True


def write_metrics(metrics: dict, path: str | Path) -> None:
    """Write the metric dict; the format follows the suffix (``.json``, else YAML)."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.suffix.lower() == ".json":
            path.write_text(metrics_json(metrics) + "\n", encoding="utf-8")
        else:
            import yaml  # only here: the import costs every command's start-up

            path.write_text(yaml.safe_dump(metrics, sort_keys=False), encoding="utf-8")
    except OSError as exc:
        raise InputError(f"{path}: cannot write ({exc.strerror})") from None
