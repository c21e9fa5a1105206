"""The label map: class id to class name, from a YAML file."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

from hbb2obb.errors import InputError
from hbb2obb.io.text_file import read_text_file
from hbb2obb.io.yaml_text import refuse_alias_bomb, too_deep

_INT64_LIMIT = 2**63  # class ids are stored as int64


def _strict_loader(yaml):
    """A safe YAML loader that refuses a mapping key given twice (PyYAML keeps the last silently)."""

    class StrictLoader(yaml.SafeLoader):
        pass

    def construct_mapping(loader, node, deep=False):
        seen = {}
        for key_node, _ in node.value:
            key = loader.construct_object(key_node, deep=deep)
            try:
                first = seen.setdefault(key, key_node.start_mark.line + 1)
            except TypeError:  # an unhashable key (a list): the general constructor says so
                continue
            if first != key_node.start_mark.line + 1:
                raise _DuplicateKey(key, key_node.start_mark.line + 1, first)
        return yaml.SafeLoader.construct_mapping(loader, node, deep=deep)

    StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, construct_mapping)
    return StrictLoader


class _DuplicateKey(Exception):
    def __init__(self, key, line: int, first: int):
        super().__init__(key, line, first)
        self.key, self.line, self.first = key, line, first


def _class_id(key, path: Path) -> int:
    """A class id key: an integer, written as one (``1.5``, ``true``, ``null`` are not)."""
    if isinstance(key, bool) or not isinstance(key, (int, str)):
        raise InputError(f"{path}: label map key {key!r} is not an integer class id")
    if isinstance(key, str):
        text = key.strip()
        digits = text[1:] if text[:1] in "+-" else text
        if not (digits.isascii() and digits.isdigit()):
            raise InputError(f"{path}: label map key {key!r} is not an integer class id")
        key = int(text) if len(digits) <= 19 else _INT64_LIMIT  # longer: beyond int64 (and int()'s digit limit)
    if not -_INT64_LIMIT <= key < _INT64_LIMIT:
        raise InputError(f"{path}: label map key {str(key)[:40]!r} is out of range (class ids are 64-bit integers)")
    return key


def load_label_map(path: Optional[str | Path]) -> dict[int, str]:
    """Read ``{id: name}`` from YAML; ``None`` gives an empty map.

    Accepts a plain mapping (``0: Car``) and the ``names:`` key of an Ultralytics dataset file,
    as a mapping or a list. A map that would name a box wrongly is an error naming the file (and
    the line where YAML knows it): an id or a name given twice (names compared case-insensitively,
    as DOTA names are matched), a key that is not an integer (``1.5``, ``true``), a missing or
    empty name, a folder or a file that is not UTF-8 text.

    Examples
    --------
    >>> load_label_map(None)
    {}
    """
    if path is None:
        return {}
    path = Path(path)
    data = load_yaml(path, "label map")
    if isinstance(data, dict) and "names" in data:
        data = data["names"]
    if isinstance(data, list):
        data = dict(enumerate(data))
    if not isinstance(data, dict):
        raise InputError(f"{path}: label map must be a mapping of class id to name")
    label_map: dict[int, str] = {}
    by_name: dict[str, int] = {}
    for key, name in data.items():
        class_id = _class_id(key, path)
        if class_id in label_map:
            raise InputError(f"{path}: class id {class_id} is given twice (as {key!r})")
        if name is None or isinstance(name, (dict, list)) or not str(name).strip():
            raise InputError(f"{path}: class id {class_id} has no name (found {name!r})")
        text_name = str(name).strip()
        other = by_name.setdefault(text_name.lower(), class_id)
        if other != class_id:
            raise InputError(f"{path}: class name {text_name!r} is given to ids {other} and {class_id} "
                             "(names are compared ignoring case)")
        label_map[class_id] = text_name
    return label_map


def load_yaml(path: Path, what: str):
    """The parsed YAML of a file the user gives, or :class:`InputError` naming ``file:line``.

    Safe loading; a mapping key given twice, aliases expanding beyond reason and nesting too
    deep are errors too (:mod:`hbb2obb.io.yaml_text`).
    """
    import yaml  # only when a YAML file is given: the import costs every command's start-up

    text = read_text_file(path, what)
    loader = _strict_loader(yaml)
    refuse_alias_bomb(text, loader, path, what)
    try:
        return yaml.load(text, Loader=loader)
    except RecursionError:
        raise too_deep(path, what) from None
    except _DuplicateKey as dup:
        raise InputError(f"{path}:{dup.line}: {what} key {dup.key!r} is given twice (first on line {dup.first})") \
            from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}" if mark is not None else ""
        raise InputError(f"{path}{where}: {what} is not valid YAML") from None


def class_name(label_map: dict[int, str], class_id: int) -> str:
    """The class's name, or its id as text when the map does not name it."""
    return label_map.get(int(class_id), str(int(class_id)))
