"""Every output checked before the first file (:mod:`hbb2obb.io.write_plan`), and EXIF frame sizes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageOps

from hbb2obb.boxes import Boxes
from hbb2obb.errors import InputError, UsageError
from hbb2obb.io.frame_labels import FrameLabels
from hbb2obb.io.images import ImageSizes, image_size
from hbb2obb.io.label_sets import LabelSet
from hbb2obb.io.write_plan import plan_outputs

QUAD = np.array([[[1.0, 1.0], [5.0, 1.0], [5.0, 3.0], [1.0, 3.0]]])


def _set(stem="a", size=(10, 10), source=Path("/in/a.txt")):
    boxes = Boxes(corners=QUAD, class_id=np.array([0]), line=np.array([1]), difficult=np.array([False]))
    return LabelSet("yolo", (FrameLabels(stem, boxes, size, source),), {})


def test_a_plan_names_every_file_of_every_format(tmp_path):
    plan = plan_outputs(_set(), tmp_path, ["coco", "labelme", "coco"], kind="hbb", normalize=False)
    assert plan == {"coco": [tmp_path / "coco_annotations_hbb.json"], "labelme": [tmp_path / "a.json"]}


@pytest.mark.parametrize("stem", ["", ".hidden", "..", "a/b", "a\\b", "a\0b"])
def test_a_frame_name_that_leaves_the_folder_or_hides_is_refused(tmp_path, stem):
    with pytest.raises(InputError, match="cannot name an output file"):
        plan_outputs(_set(stem), tmp_path, ["yolo"], kind="hbb", normalize=False)


@pytest.mark.parametrize("dota_ext", ["", "dota", ".", "./x", "/x.dota", ".a/b", ".."])
def test_a_dota_ext_must_be_a_plain_suffix(tmp_path, dota_ext):
    with pytest.raises(UsageError, match="--dota_ext"):
        plan_outputs(_set(), tmp_path, ["dota"], kind="obb", normalize=False, dota_ext=dota_ext)


def test_a_missing_size_is_found_for_the_formats_that_need_it_only(tmp_path):
    unsized = _set(size=None)
    assert plan_outputs(unsized, tmp_path, ["yolo", "dota"], kind="obb", normalize=False)
    for fmt, normalize in (("coco", False), ("labelme", False), ("yolo", True)):
        with pytest.raises(InputError, match="frame size unknown"):
            plan_outputs(unsized, tmp_path, [fmt], kind="obb", normalize=normalize)


def test_an_input_file_is_never_an_output(tmp_path):
    source = tmp_path / "a.txt"
    with pytest.raises(InputError, match="would overwrite the labels being converted"):
        plan_outputs(_set(source=source), tmp_path, ["yolo"], kind="hbb", normalize=False)


@pytest.mark.parametrize("orientation", [1, 3, 5, 6, 7, 8])
def test_exif_sizes_are_the_frame_as_shown(tmp_path, orientation):
    path = tmp_path / "a.jpg"
    exif = Image.Exif()
    exif[0x0112] = orientation
    Image.new("RGB", (40, 20)).save(path, exif=exif)
    with Image.open(path) as image:
        shown = ImageOps.exif_transpose(image).size  # the oracle: Pillow's own transpose
    assert image_size(path) == shown
    assert ImageSizes(tmp_path)("a") == tuple(float(v) for v in shown)
