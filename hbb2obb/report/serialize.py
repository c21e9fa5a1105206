"""The metric dict as JSON or YAML text and back: what json and PyYAML do, made fast for long lists."""

from __future__ import annotations

import functools
import json
import operator
import re
from pathlib import Path
from typing import Optional

import numpy as np
import orjson

from hbb2obb.errors import InputError
from hbb2obb.scoring.metrics import PerPairArray

_LONG_LIST = 64  # lists of numbers at least this long are rendered by the fast path
_PLACEHOLDER = re.compile(r'"\\u0000list (\d+)\\u0000"')  # as json.dumps escapes it


def metrics_json(metrics: dict) -> str:
    """``json.dumps(metrics, indent=2)``, character for character, made fast for long lists of numbers.

    The text of :func:`metrics_json_bytes`, decoded (it is ASCII).

    Examples
    --------
    >>> metrics = {"avg_iou": 0.5, "class_stats": {"0": {"ious": [0.25] * 70, "n": [1, 2]}}, "e": []}
    >>> metrics_json(metrics) == json.dumps(metrics, indent=2)
    True
    """
    return metrics_json_bytes(metrics).decode("ascii")


def metrics_json_bytes(metrics: dict, list_values: Optional[dict] = None) -> bytes:
    """``json.dumps(metrics, indent=2)`` encoded as ASCII, made fast for long lists of numbers.

    The pieces of :func:`metrics_json_pieces`, joined.

    Examples
    --------
    >>> metrics_json_bytes({"v": [0.5] * 70}) == json.dumps({"v": [0.5] * 70}, indent=2).encode()
    True
    """
    return b"".join(metrics_json_pieces(metrics, list_values))


def metrics_json_pieces(metrics: dict, list_values: Optional[dict] = None) -> list:
    """``json.dumps(metrics, indent=2)`` encoded as ASCII, as a list of bytes to write one after the other.

    A writer that takes the pieces as they are skips joining them: at Songdo scale a 21 MB
    copy, most of its cost the fresh pages. With an indent, :mod:`json` encodes in pure Python, one call per list item; the metric dict
    of a large dataset holds hundreds of thousands of IoUs and angle errors. Long lists of
    finite floats and ints are set aside, the rest is encoded by :mod:`json`, and each list is
    written by :func:`_number_bytes` and joined back in at its place with the same layout. A
    list whose items are the very objects of a list already set aside (the reference's
    ``iou_values`` copies ``ious``) is written once. Bytes, because the command writes them to
    stdout as they are: a 20 MB ``str`` through ``click.echo`` costs ten times more.

    ``list_values``: ``{id(list): (list, float64 array)}`` for lists made by ``array.tolist()``
    and not changed since (:func:`~hbb2obb.scoring.metric_dict.summarize` fills it): such a list
    is written from its array without reading its items back, and lists of one array once. A
    :class:`~hbb2obb.scoring.metrics.PerPairArray` (``summarize(..., per_pair_lists=False)``) is
    written as the list ``tolist()`` would give, from its array, and never made into that list
    when it is long and finite.

    Examples
    --------
    >>> b"".join(metrics_json_pieces({"v": [0.5] * 70})) == json.dumps({"v": [0.5] * 70}, indent=2).encode()
    True
    """
    lists: list = []  # (items, their float values or None for ints only, whether all are floats)
    same_as: dict = {}  # index of a list set aside -> index of an earlier list with the same items
    by_start: dict = {}  # (length, id of the first item) -> indices of the lists set aside with them
    by_array: dict = {}  # id of a list_values array -> index of the list set aside with it

    def from_array(items, array):
        """The placeholder of a list written from its float64 ``array`` (``items``: the list, or
        None for a PerPairArray, whose few items to spell come from the array), or None."""
        if id(array) in by_array:  # another list of the same array (iou_values of ious)
            same_as[len(lists)] = by_array[id(array)]
            lists.append(lists[by_array[id(array)]])
            return f"\x00list {len(lists) - 1}\x00"
        if array.dtype == np.float64 and np.isfinite(array).all():
            by_array[id(array)] = len(lists)
            if items is not None:
                by_start.setdefault((len(items), id(items[0])), []).append(len(lists))
            lists.append((items, array, True))
            return f"\x00list {len(lists) - 1}\x00"
        return None

    def set_aside(value):
        if isinstance(value, dict):
            return {key: set_aside(item) for key, item in value.items()}
        if isinstance(value, PerPairArray):
            placeholder = from_array(None, value.values) if len(value) >= _LONG_LIST else None
            if placeholder is not None:
                return placeholder
            value = value.tolist()  # short, or not finite: the list itself, as any other
        if isinstance(value, (list, tuple)):
            if len(value) >= _LONG_LIST:
                known = list_values.get(id(value)) if list_values else None
                if known is not None and known[0] is value and len(known[1]) == len(value):
                    placeholder = from_array(value, known[1])
                    if placeholder is not None:
                        return placeholder
                earlier = _copy_of(value, lists, by_start.setdefault((len(value), id(value[0])), []))
                if earlier is not None:
                    same_as[len(lists)] = earlier
                    lists.append(lists[earlier])
                    return f"\x00list {len(lists) - 1}\x00"
                plain, floats, floats_only = _plain_numbers(value)
                if plain:
                    by_start[len(value), id(value[0])].append(len(lists))
                    lists.append((value, floats, floats_only))
                    return f"\x00list {len(lists) - 1}\x00"
            return [set_aside(item) for item in value]
        return value

    text = json.dumps(set_aside(metrics), indent=2)
    if not lists:
        return [text.encode("ascii")]
    found = list(_PLACEHOLDER.finditer(text))
    if len(found) != len(lists):  # a string of the dict looks like one
        return [json.dumps(metrics, indent=2).encode("ascii")]
    pieces, position, written = [], 0, {}
    for match in found:
        line_start = text.rfind("\n", 0, match.start()) + 1
        indent = " " * (len(text[line_start:match.start()]) - len(text[line_start:match.start()].lstrip(" ")))
        index = int(match.group(1))
        key = (same_as.get(index, index), indent)  # the same items at the same indent: the same text
        if key not in written:  # the list's opening, its items and its closing: joined once, below
            items, floats, floats_only = lists[index]
            separator = (",\n" + indent + "  ").encode("ascii")
            written[key] = (b"[\n" + indent.encode("ascii") + b"  ",
                            _number_bytes(items, floats, separator, floats_only=floats_only),
                            b"\n" + indent.encode("ascii") + b"]")
        pieces.append(text[position:match.start()].encode("ascii"))
        pieces += written[key]
        position = match.end()
    pieces.append(text[position:].encode("ascii"))
    return pieces


def _copy_of(value, lists: list, candidates: list):
    """The index, among ``candidates``, of a list set aside whose items are the same objects as ``value``'s.

    None when there is none. Identity, not equality: ``1 == 1.0`` and ``0.0 == -0.0``, but they
    are written differently.
    """
    for index in candidates:
        items = lists[index][0]
        if items is value or all(map(operator.is_, items, value)):
            return index
    return None


def metrics_yaml(metrics: dict) -> str:
    """``yaml.safe_dump(metrics, sort_keys=False)``, character for character, made fast for long lists.

    PyYAML represents every list item with a Python call (about 50 µs each in pure Python,
    20 µs with libyaml): minutes for the per-pair lists of a large dataset. Long lists of
    finite numbers held by a mapping are set aside, the rest is dumped by PyYAML (with libyaml
    when it is there), and each list is written back as the block sequence PyYAML writes.

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
                plain, floats, floats_only = (_plain_numbers(item) if type(item) is list and len(item) >= _LONG_LIST
                                              else (False, None, False))
                if plain:
                    lists.append((item, floats, floats_only))
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
    if not lists:
        return text
    placeholder = re.compile(r'^( *)(.*): "\\0list (\d+)\\0"$', re.MULTILINE)  # as YAML escapes it
    if len(placeholder.findall(text)) != len(lists):  # a string of the dict looks like one
        return yaml.dump(metrics, Dumper=dumper, sort_keys=False)

    def join_back(match: re.Match) -> str:
        indent, key = match.group(1), match.group(2)
        items, floats, floats_only = lists[int(match.group(3))]
        return f"{indent}{key}:\n{indent}- " + _number_list(items, floats, f"\n{indent}- ", _yaml_number, floats_only)

    return placeholder.sub(join_back, text)


class _SharedContainer(Exception):
    """A list or dict appears twice in the metric dict."""


def _yaml_number(value) -> str:
    """A finite float or an int as PyYAML's SafeRepresenter writes it (``1.0e-05``, not ``1e-05``)."""
    text = repr(value).lower()
    if isinstance(value, float) and "." not in text and "e" in text:
        text = text.replace("e", ".0e", 1)
    return text


def _number_list(items, floats, separator: str, spell=repr, floats_only: bool = False) -> str:
    """``separator.join(map(spell, items))`` for finite floats and ints, about 20 times faster.

    The text of :func:`_number_bytes`; ``separator`` must be ASCII.
    """
    return _number_bytes(items, floats, separator.encode("ascii"), spell, floats_only).decode("ascii")


def _number_bytes(items, floats, separator: bytes, spell=repr, floats_only: bool = False) -> bytes:
    """``separator.join(map(spell, items))`` as ASCII bytes, for finite floats and ints.

    orjson writes the shortest digits that read back as the same float, as ``repr`` does, but
    spells floats outside ``1e-4 <= |x| < 1e16`` differently (``0.00001`` for ``1e-05``): those
    few items are spliced in as ``spell`` writes them (``spell`` must agree with ``repr`` on
    every other number). ``floats`` holds the items as float64, or is None when they are all
    ints (which both spell alike). ``floats_only`` (every item is a float): orjson writes the
    float64 array itself, the same digits as from the list and twice as fast; ``items`` may
    then be None (a :class:`~hbb2obb.scoring.metrics.PerPairArray`: no list was made), and the
    few items to spell are taken from ``floats``.
    """
    try:
        if floats_only:  # no int among the items, which the float64 array would spell as a float
            raw = orjson.dumps(floats, option=orjson.OPT_SERIALIZE_NUMPY)  # b"[a,b,...]": no commas in numbers
        else:
            raw = orjson.dumps(items)
    except orjson.JSONEncodeError:  # an int beyond 64 bits
        return separator.join(spell(item).encode("ascii") for item in items)
    body = raw[1:-1]
    if floats is not None:
        size = np.abs(floats)
        respelled = np.flatnonzero((size != 0) & ((size < 1e-4) | (size >= 1e16)))
        if respelled.size:
            commas = np.flatnonzero(np.frombuffer(raw, dtype=np.uint8) == ord(","))
            starts = np.concatenate(([1], commas + 1))[respelled].tolist()
            ends = np.append(commas, len(raw) - 1)[respelled].tolist()
            pieces, position = [], 1
            for index, start, end in zip(respelled.tolist(), starts, ends):
                item = items[index] if items is not None else float(floats[index])  # the same float
                pieces += [raw[position:start], spell(item).encode("ascii")]
                position = end
            pieces.append(raw[position:-1])
            body = b"".join(pieces)
    return body.replace(b",", separator)


def _plain_numbers(values) -> tuple[bool, np.ndarray | None, bool]:
    """Whether the items are finite floats and ints (not bools), their float64 values, and whether all are floats.

    Those are what ``repr`` writes exactly as :mod:`json` does. The values are None when the
    items are all ints (always finite).
    """
    kinds = set(map(type, values))
    if not kinds <= {float, int}:
        return False, None, False
    if float not in kinds:
        return True, None, False
    if len(kinds) == 1:  # floats only (the per-pair lists): fromiter copies them with no type discovery per item
        floats = np.fromiter(values, dtype=np.float64, count=len(values))
        return bool(np.isfinite(floats).all()), floats, True
    try:  # ints converted too: finite, unless too large for a float (then: the slow path)
        floats = np.array(values, dtype=np.float64)
    except OverflowError:
        return False, None, False
    return bool(np.isfinite(floats).all()), floats, int not in kinds


@functools.cache  # compiled on first use: only reading a YAML metric file needs them (1.5 million instructions)
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
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.suffix.lower() == ".json":
            path.write_bytes(metrics_json_bytes(metrics) + b"\n")
        else:
            path.write_text(metrics_yaml(metrics), encoding="utf-8")
    except OSError as exc:
        raise InputError(f"{path}: cannot write ({exc.strerror})") from None
