"""The side-car and COCO identity flags against the reference tool itself, byte for byte, where both agree by design.

Runs the reference's ``hbb2obb-convert`` (1.12.0) when an environment holding it is found:
``$HBB2OBB_REFERENCE_PYTHON``, else ``.bench/refvenv`` in this checkout, else ``/work/refvenv``.
Skipped otherwise. Ours writes the same files on inputs where the two do not differ on purpose
(docs/inputs.md lists where they do: category ids and image keys carried from ``--coco_from``).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner
from reference_tool import CONVERT_DRIVER as DRIVER
from reference_tool import REFERENCE_PYTHON

from hbb2obb.cli.formats import main

SOURCE = {
    "licenses": [{"id": 1, "name": "CC BY 4.0"}],
    "images": [{"id": 27, "file_name": "img2.jpg", "width": 100, "height": 200},
               {"id": 4, "file_name": "img1.jpg", "width": 100, "height": 200}],
    "categories": [{"id": 1, "name": "Car", "supercategory": "vehicle"},
                   {"id": 2, "name": "Bus", "supercategory": "vehicle"}],
    "annotations": [{"id": 900, "image_id": 4, "category_id": 1, "bbox": [10, 10, 40, 40]},
                    {"id": 1000001, "image_id": 4, "category_id": 2, "bbox": [50, 50, 10, 10]},
                    {"id": 7, "image_id": 27, "category_id": 1, "bbox": [10, 10, 40, 40]}],
}

pytestmark = pytest.mark.skipif(REFERENCE_PYTHON is None, reason="the reference tool's environment is not present")


def _both(root: Path, args: list) -> tuple[Path, Path]:
    """Run ours into root/ours and the reference into root/ref with the same arguments."""
    ours = CliRunner().invoke(main, [str(a) for a in args] + ["-o", str(root / "ours"), "-nb"])
    assert ours.exit_code == 0, ours.output
    theirs = subprocess.run([str(REFERENCE_PYTHON), "-c", DRIVER, *map(str, args), "-o", str(root / "ref"), "-nb"],
                            capture_output=True, text=True, cwd=root, timeout=120,
                            env={**os.environ, "HBB2OBB_DISABLE_UPDATE_CHECK": "1"})
    assert theirs.returncode == 0, theirs.stderr
    return root / "ours", root / "ref"


@pytest.fixture
def labelled(write_labels):
    return write_labels({
        "labels/img1.txt": "0 30 10 50 30 30 50 10 30 0.81\n1 70 50 80 60 70 70 60 60 0.12\n",
        "labels/img2.txt": "0 30 10 50 30 30 50 10 30 0.5\n",
        "labels_confidence/img1.txt": "0.9100\n0.0000\n", "labels_confidence/img2.txt": "0.4999\n",
        "classes.yaml": "0: Car\n1: Bus\n", "source.json": json.dumps(SOURCE), "info.json": '{"version": "2"}',
    })


@pytest.mark.parametrize("extra", [
    ["--confidence_dir", "labels_confidence"],
    ["--difficult_below", "0.5"],  # the labels' own confidence column
    ["--confidence_dir", "labels_confidence", "--difficult_below", "0.95"],
])
def test_difficult_from_confidence_writes_the_references_dota_and_voc(labelled, extra, monkeypatch):
    monkeypatch.chdir(labelled)
    ours, ref = _both(labelled, ["labels", "--from", "yolo", "--to", "dota", "-mp", "classes.yaml", "-iw", 100,
                                 "-ih", 200, "--difficult_from", "confidence", *extra])
    for name in ("img1.dota", "img2.dota"):
        assert (ours / name).read_bytes() == (ref / name).read_bytes(), name
    ours, ref = _both(labelled, ["labels", "--from", "yolo", "--to", "voc", "-k", "hbb", "-mp", "classes.yaml",
                                 "-iw", 100, "-ih", 200, "--difficult_from", "confidence", *extra])
    for name in ("img1.xml", "img2.xml"):
        assert (ours / name).read_bytes() == (ref / name).read_bytes(), name


def test_coco_from_and_coco_info_write_the_references_coco_file(labelled, monkeypatch):
    monkeypatch.chdir(labelled)
    ours, ref = _both(labelled, ["labels", "--to", "coco", "-mp", "classes.yaml", "-iw", 100, "-ih", 200,
                                 "--coco_from", "source.json", "--coco_info", "info.json"])
    name = "coco_annotations_obb.json"
    assert json.loads((ours / name).read_text())["images"][0]["id"] == 4
    assert (ours / name).read_bytes() == (ref / name).read_bytes()
