"""The label map: class id to class name, from a YAML file."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

from hbb2obb.errors import InputError


def load_label_map(path: Optional[str | Path]) -> dict[int, str]:
    """Read ``{id: name}`` from YAML; ``None`` gives an empty map.

    Accepts a plain mapping (``0: Car``) and the ``names:`` key of an Ultralytics dataset file,
    as a mapping or a list.

    Examples
    --------
    >>> load_label_map(None)
    {}
    """
    if path is None:
        return {}
    import yaml  # only when a map is given: the import costs every command's start-up

    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8-sig"))
    except FileNotFoundError:
        raise InputError(f"{path}: label map not found") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}" if mark is not None else ""
        raise InputError(f"{path}{where}: label map is not valid YAML") from None
    if isinstance(data, dict) and "names" in data:
        data = data["names"]
    if isinstance(data, list):
        data = dict(enumerate(data))
    if not isinstance(data, dict):
        raise InputError(f"{path}: label map must be a mapping of class id to name")
    label_map = {}
    for key, name in data.items():
        try:
            class_id = int(key)
        except (TypeError, ValueError):
            raise InputError(f"{path}: label map key {key!r} is not an integer class id") from None
        label_map[class_id] = str(name).strip()
    return label_map


def class_name(label_map: dict[int, str], class_id: int) -> str:
    """The class's name, or its id as text when the map does not name it."""
    return label_map.get(int(class_id), str(int(class_id)))
