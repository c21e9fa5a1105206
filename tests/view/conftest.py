"""A small review-page dataset whose every box, pair and IoU is known, and a reader of the page's data files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image

from conftest import rect

EVIL = "<img src=x onerror=alert(1)>"  # a class name that must show as text
GREY = (90, 90, 90)

# Frame "a" (an 800 x 500 image): g0/p0 IoU 19000/21000, g1/p1 IoU 14000/26000 (class 1, the evil
# name), g2 missed by both sets, p2 chosen by nobody. Set B matches g0 and g1 exactly.
# Frame "b": one exact pair in A; B has no file. Frame "c": no image.
GT = {"a": [rect(100, 100, 200, 100), rect(500, 100, 200, 100, cls=1), rect(100, 350, 100, 60)],
      "b": [rect(50, 50, 80, 40)], "c": [rect(10, 10, 50, 50, cls=1)]}
SET_A = {"a": [rect(110, 100, 200, 100) + " 0.9", rect(560, 100, 200, 100, cls=1) + " 0.6",
               rect(600, 350, 100, 60) + " 0.3"],
         "b": [rect(50, 50, 80, 40) + " 0.8"], "c": [rect(12, 10, 50, 50, cls=1) + " 0.7"]}
SET_B = {"a": [rect(100, 100, 200, 100), rect(500, 100, 200, 100, cls=1)], "c": [rect(10, 10, 50, 50, cls=1)]}
IOU_G0, IOU_G1 = 19000 / 21000, 14000 / 26000


def write_view_dataset(root: Path) -> Path:
    """Write images/, gt/, set_a/, set_b/ and classes.yaml under ``root``."""
    for folder, frames in (("gt", GT), ("set_a", SET_A), ("set_b", SET_B)):
        (root / folder).mkdir(parents=True)
        for name, lines in frames.items():
            (root / folder / f"{name}.txt").write_text("\n".join(lines) + "\n")
    (root / "images").mkdir()
    Image.new("RGB", (800, 500), GREY).save(root / "images" / "a.png")
    Image.new("RGB", (200, 120), GREY).save(root / "images" / "b.jpg")
    (root / "classes.yaml").write_text(json.dumps({0: "Car", 1: EVIL}))
    return root


@pytest.fixture
def view_dataset(tmp_path) -> Path:
    return write_view_dataset(tmp_path / "dataset")


def read_script(path: Path) -> tuple:
    """The arguments of the one call a page data file makes: ``name(a, b, ...);`` -> (name, [a, b, ...])."""
    text = path.read_text(encoding="utf-8")
    name, _, rest = text.partition("(")
    assert rest.endswith(");\n")
    return name, json.loads("[" + rest[:-3] + "]")
