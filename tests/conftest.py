"""Shared fixtures: label folders written on the fly, and the real sample when it is present."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
SAMPLE = SHARED / "data" / "songdo-sample"
REFERENCE = SHARED / "reference"


@pytest.fixture
def sample_dir() -> Path:
    """The two-frame Songdo sample; tests using it skip where ../shared is absent."""
    if not (SAMPLE / "labels_obb_gt").is_dir():
        pytest.skip("real sample ../shared/data/songdo-sample not present")
    return SAMPLE


@pytest.fixture
def reference_dir() -> Path:
    if not REFERENCE.is_dir():
        pytest.skip("reference outputs ../shared/reference not present")
    return REFERENCE


@pytest.fixture
def write_labels(tmp_path):
    """``write_labels({"gt/a.txt": "0 0 0 ...", ...})`` writes files under tmp_path, returns tmp_path."""

    def write(files: dict, binary: bool = False) -> Path:
        for relative, content in files.items():
            path = tmp_path / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                path.write_bytes(content)
            else:
                path.write_text(content, encoding="utf-8")
        return tmp_path

    return write


def rect(x, y, w, h, cls=0):
    """A YOLO-OBB line for an axis-aligned rectangle with top-left (x, y)."""
    return f"{cls} {x} {y} {x + w} {y} {x + w} {y + h} {x} {y + h}"
