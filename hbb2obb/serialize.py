"""Writing the metric dict to YAML or JSON files, as plain data."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from hbb2obb.errors import InputError


def write_metrics(metrics: dict, path: str | Path) -> None:
    """Write the metric dict; the format follows the suffix (``.json``, else YAML)."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.suffix.lower() == ".json":
            path.write_text(json.dumps(metrics, indent=2) + "\n", encoding="utf-8")
        else:
            path.write_text(yaml.safe_dump(metrics, sort_keys=False), encoding="utf-8")
    except OSError as exc:
        raise InputError(f"{path}: cannot write ({exc.strerror})") from None
