"""The metric dict as JSON or YAML text and back: what json and PyYAML do, made fast for long lists.

The per-pair lists of a large dataset hold hundreds of thousands of numbers. With an indent,
:mod:`json` encodes in pure Python, one call per item, and PyYAML represents every item with a
Python call: at Songdo scale about 0.65 s and 3.3 s where these writers take 0.05 s. So long
lists of numbers are set aside, the rest of the dict is written by json or PyYAML, and each
list is written by orjson and put back in its place with the layout json or PyYAML gives it.
"""

from __future__ import annotations

import functools
import json
import math
import re
from pathlib import Path
from typing import Callable, Optional

import orjson

from hbb2obb.errors import InputError
from hbb2obb.io.atomic import atomic_path

_LONG_LIST = 64  # lists of numbers at least this long are written by orjson
_JSON_PLACEHOLDER = re.compile(r'"\\u0000list (\d+)\\u0000"')  # as json.dumps escapes it


def _number_items(items, spell: Callable[[float], str]) -> Optional[bytes]:
    """The items of a list of finite numbers, comma-separated, each spelled as json or PyYAML spells it.

    ``None`` when the items are anything else (strings, containers, bools, None, NaN or
    infinities, which orjson writes as ``null``, numpy scalars, ints beyond 64 bits): such a
    list is left to json or PyYAML. orjson writes the shortest digits that read back as the
    same float, as ``repr`` does, but spells ``|x| < 1e-4`` (``0.00001`` for ``1e-05``) and
    exponents (``1.5e-7`` for ``1.5e-07``) otherwise: the items holding an ``e`` or ``0.0000``
    are read back and spelled by ``spell`` (one that needed no change is spelled the same).
    """
    try:
        body = orjson.dumps(items)[1:-1]
    except (orjson.JSONEncodeError, TypeError):
        return None
    if any(mark in body for mark in (b'"', b"[", b"{", b"n", b"t", b"f")):  # b"n": null
        return None
    starts = set()
    for mark in (b"e", b"0.0000"):
        at = body.find(mark)
        while at >= 0:
            starts.add(body.rfind(b",", 0, at) + 1)
            end = body.find(b",", at)
            at = body.find(mark, end) if end >= 0 else -1
    if not starts:
        return body
    pieces, position = [], 0
    for start in sorted(starts):
        end = body.find(b",", start)
        end = len(body) if end < 0 else end
        pieces += [body[position:start], spell(float(body[start:end])).encode("ascii")]
        position = end
    pieces.append(body[position:])
    return b"".join(pieces)


def json_safe(value):
    """``value`` with every NaN and infinity replaced by ``None``, tuples as lists: what RFC 8259 JSON can hold.

    An undefined value (the AP of a class without ground truth, the mean of nothing) is
    ``null`` in JSON: ``NaN`` and ``Infinity`` are no JSON, and strict parsers refuse them.

    Examples
    --------
    >>> json_safe({"ap": float("nan"), "x": [1.5, float("inf")], "n": 3})
    {'ap': None, 'x': [1.5, None], 'n': 3}
    """
    if isinstance(value, dict):
        return {key: json_safe(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(item) for item in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def metrics_json_bytes(metrics: dict) -> bytes:
    """``json.dumps(metrics, indent=2)`` encoded as ASCII, made fast for long lists of numbers.

    NaN and infinities are written as ``null`` (:func:`json_safe`), so the text is RFC 8259 JSON.

    Examples
    --------
    >>> metrics = {"avg_iou": 0.5, "class_stats": {"0": {"ious": [0.25] * 70, "n": [1, 2]}}, "e": []}
    >>> metrics_json_bytes(metrics) == json.dumps(metrics, indent=2).encode()
    True
    """
    lists: list = []

    def set_aside(value):
        if isinstance(value, dict):
            return {key: set_aside(item) for key, item in value.items()}
        if isinstance(value, (list, tuple)):
            body = _number_items(value, repr) if len(value) >= _LONG_LIST else None
            if body is not None:
                lists.append(body)
                return f"\x00list {len(lists) - 1}\x00"
            return [set_aside(item) for item in value]
        if isinstance(value, float) and not math.isfinite(value):
            return None
        return value

    text = json.dumps(set_aside(metrics), indent=2, allow_nan=False)
    found = list(_JSON_PLACEHOLDER.finditer(text))
    if len(found) != len(lists):  # a string of the dict looks like a placeholder
        return json.dumps(json_safe(metrics), indent=2, allow_nan=False).encode("ascii")
    pieces, position = [], 0
    for match in found:
        line = text[text.rfind("\n", 0, match.start()) + 1:match.start()]  # the key's line, up to the list
        indent = " " * (len(line) - len(line.lstrip(" ")))
        body = lists[int(match.group(1))].replace(b",", f",\n{indent}  ".encode("ascii"))
        pieces += [text[position:match.start()].encode("ascii"), f"[\n{indent}  ".encode("ascii"), body,
                   f"\n{indent}]".encode("ascii")]
        position = match.end()
    pieces.append(text[position:].encode("ascii"))
    return b"".join(pieces)


def metrics_yaml(metrics: dict) -> str:
    """``yaml.safe_dump(metrics, sort_keys=False)``, character for character, made fast for long lists.

    Long lists of numbers held by a mapping are set aside, the rest is dumped by PyYAML (with
    libyaml when it is there), and each list is written back as the block sequence PyYAML writes.

    Examples
    --------
    >>> import yaml
    >>> metrics = {"avg_iou": 0.5, "class_stats": {0: {"ious": [0.25, 1e-05] * 40}}}
    >>> metrics_yaml(metrics) == yaml.safe_dump(metrics, sort_keys=False)
    True
    """
    import yaml  # only here: the import costs every command's start-up

    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    lists: list = []
    seen: set = set()  # PyYAML writes a container met twice as an alias, which copies would lose

    def set_aside(value):
        if isinstance(value, (dict, list)):
            if id(value) in seen:
                raise _SharedContainer
            seen.add(id(value))
        if isinstance(value, dict):
            aside = {}
            for key, item in value.items():
                body = _number_items(item, _yaml_float) if type(item) is list and len(item) >= _LONG_LIST else None
                if body is not None:
                    lists.append(body.decode("ascii"))
                    aside[key] = f"\x00list {len(lists) - 1}\x00"
                else:
                    aside[key] = set_aside(item)
            return aside
        if isinstance(value, list):
            return [set_aside(item) for item in value]
        return value

    try:
        text = yaml.dump(set_aside(metrics), Dumper=dumper, sort_keys=False)
    except _SharedContainer:
        return yaml.dump(metrics, Dumper=dumper, sort_keys=False)
    placeholder = re.compile(r'^( *)(.*): "\\0list (\d+)\\0"$', re.MULTILINE)  # as YAML escapes it
    if len(placeholder.findall(text)) != len(lists):  # a string of the dict looks like one
        return yaml.dump(metrics, Dumper=dumper, sort_keys=False)

    def join_back(match: re.Match) -> str:
        indent, key = match.group(1), match.group(2)
        return f"{indent}{key}:\n{indent}- " + lists[int(match.group(3))].replace(",", f"\n{indent}- ")

    return placeholder.sub(join_back, text)


class _SharedContainer(Exception):
    """A list or dict appears twice in the metric dict."""


def _yaml_float(value: float) -> str:
    """A finite float as PyYAML's SafeRepresenter writes it (``1.0e-05``, not ``1e-05``)."""
    text = repr(value).lower()
    if "." not in text and "e" in text:
        text = text.replace("e", ".0e", 1)
    return text


@functools.cache  # compiled on first use: only reading a YAML metric file needs them
def _yaml_number_patterns() -> tuple[re.Pattern, re.Pattern]:
    """The patterns :func:`read_metrics_yaml` finds long number lists with: ``(number block, not a plain number)``."""
    # A mapping key whose value is a block sequence of at least _LONG_LIST numbers, each on its own
    # line at the key's indent, as metrics_yaml (and PyYAML) writes the per-pair lists.
    number_block = re.compile(
        r"^(?P<indent> *)(?P<key>[^\n]*):\n(?P<items>(?:(?P=indent)- [-+.0-9e]+\n){%d,})(?!(?P=indent)- )"
        % _LONG_LIST, re.MULTILINE)
    # Item lines PyYAML reads as an int (no leading zeros: YAML 1.1 reads 017 as octal) or a float
    # (a dot is needed: it reads 1e-05 as a string).
    not_a_plain_number = re.compile(r"^ *- (?!-?(?:0|[1-9][0-9]*)$|-?[0-9]+\.[0-9]*(?:e[-+][0-9]+)?$)", re.MULTILINE)
    return number_block, not_a_plain_number


def read_metrics_yaml(text: str):
    """``yaml.safe_load(text)``, made fast for the long number lists :func:`metrics_yaml` writes.

    Every block sequence of plain ints and floats held by a mapping key is read with
    ``int``/``float`` (what PyYAML's constructors do for those spellings) and the rest by
    PyYAML, with libyaml when it is there. Text with block scalars (``|``, ``>``), where a
    line could look like such a list without being one, is read by PyYAML alone.

    Examples
    --------
    >>> text = "avg_iou: 0.5\\nious:\\n" + "- 0.25\\n- 1\\n" * 40
    >>> read_metrics_yaml(text)["ious"][:3]
    [0.25, 1, 0.25]
    """
    import yaml  # only here: the import costs every command's start-up

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    if "|" in text or ">" in text:
        return yaml.load(text, Loader=loader)
    lists: list = []
    number_block, not_a_plain_number = _yaml_number_patterns()

    def set_aside(match: re.Match) -> str:
        items = match.group("items")
        if not_a_plain_number.search(items):
            return match.group(0)
        numbers = items.split()[1::2]  # "-", number, "-", number, ...
        if items.count(".") == len(numbers):  # a dot on every line: all floats
            lists.append(list(map(float, numbers)))
        else:
            lists.append([float(n) if "." in n else int(n) for n in numbers])
        return f'{match.group("indent")}{match.group("key")}: "\\0list {len(lists) - 1}\\0"\n'

    data = yaml.load(number_block.sub(set_aside, text), Loader=loader)
    if not lists:
        return data
    placed = [0]

    def put_back(value):
        if isinstance(value, dict):
            return {key: put_back(item) for key, item in value.items()}
        if isinstance(value, list):
            return [put_back(item) for item in value]
        if isinstance(value, str) and value.startswith("\x00list ") and value.endswith("\x00"):
            placed[0] += 1
            return lists[int(value[6:-1])]
        return value

    try:
        restored = put_back(data)
    except (ValueError, IndexError):  # the file held a string like a placeholder
        restored = None
    if restored is None or placed[0] != len(lists):  # a list did not land where it was taken from
        return yaml.load(text, Loader=loader)
    return restored


def write_metrics(metrics: dict, path: str | Path) -> None:
    """Write the metric dict; the format follows the suffix (``.json``, else YAML)."""
    path = Path(path)
    data = metrics_json_bytes(metrics) + b"\n" if path.suffix.lower() == ".json" else \
        metrics_yaml(metrics).encode("utf-8")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(path) as temporary:
            temporary.write_bytes(data)
    except OSError as exc:
        raise InputError(f"{path}: cannot write ({exc.strerror})") from None
