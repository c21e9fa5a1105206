"""Frames as a viewer shows them: EXIF orientation in sizes, decoded pixels and pictures (issue 34 class 8).

The oracle is Pillow's own ``ImageOps.exif_transpose``; OpenCV's ``imread``, the reference tool
and Ultralytics read frames the same way, so labels are drawn on the turned frame.
"""

import json

import numpy as np
import pytest
from click.testing import CliRunner
from PIL import Image, ImageOps

from hbb2obb.cli.eval import main as eval_main
from hbb2obb.io.images import ImageSizes, decode_rgb, image_size
from hbb2obb.plotting.pixels import image_size_of, open_rgb


def _turned_jpeg(path, orientation, size=(40, 20)):
    """A JPEG stored ``size`` wide and high, with a gradient so a wrong turn shows in the pixels."""
    x, y = np.meshgrid(np.linspace(0, 255, size[0]), np.linspace(0, 255, size[1]))
    pixels = np.stack([x, y, np.full_like(x, 128)], axis=-1).astype(np.uint8)
    exif = Image.Exif()
    exif[0x0112] = orientation
    Image.fromarray(pixels).save(path, exif=exif, quality=95)
    with Image.open(path) as image:
        return ImageOps.exif_transpose(image).convert("RGB")


@pytest.mark.parametrize("orientation", [1, 2, 3, 4, 5, 6, 7, 8])
def test_sizes_and_pixels_are_the_frame_as_shown(tmp_path, orientation):
    path = tmp_path / "a.jpg"
    shown = _turned_jpeg(path, orientation)
    assert image_size(path) == shown.size == image_size_of(path)
    assert ImageSizes(tmp_path)("a") == tuple(float(v) for v in shown.size)
    assert np.array_equal(np.asarray(decode_rgb(path)), np.asarray(shown))
    picture, original = open_rgb(path)
    assert original == shown.size and np.array_equal(np.asarray(picture), np.asarray(shown))
    half = (shown.size[0] // 2, shown.size[1] // 2)
    small, original = open_rgb(path, half)  # the reduced decode of a JPEG, asked for the frame as shown
    assert small.size == half and original == shown.size


def test_eval_denormalizes_by_the_frame_as_shown(tmp_path):
    """A portrait phone frame stored landscape: normalized labels scale by the shown 20 x 40, not 40 x 20."""
    (tmp_path / "images").mkdir()
    _turned_jpeg(tmp_path / "images" / "a.jpg", 6)
    (tmp_path / "gt").mkdir()
    (tmp_path / "pred").mkdir()
    (tmp_path / "gt" / "a.txt").write_text("0 0.1 0.1 0.5 0.1 0.5 0.3 0.1 0.3\n")
    (tmp_path / "pred" / "a.txt").write_text("0 2 4 10 4 10 12 2 12\n")  # the same box, in shown pixels
    result = CliRunner().invoke(eval_main, [str(tmp_path / "gt"), str(tmp_path / "pred"), "-i",
                                            str(tmp_path / "images"), "-nb", "--json"])
    assert result.exit_code == 0, result.stderr
    metrics = json.loads(result.stdout)
    assert metrics["total_matches"] == 1 and metrics["avg_iou"] == pytest.approx(1.0)


def test_only_a_jpeg_is_turned_and_sizes_agree_with_pixels(tmp_path):
    """A PNG's EXIF orientation is not applied (OpenCV and the reference tool turn JPEGs only); its
    size, its decoded pixels and its picture agree."""
    path = tmp_path / "a.png"
    exif = Image.Exif()
    exif[0x0112] = 6
    Image.new("RGB", (40, 20)).save(path, exif=exif)
    assert image_size(path) == (40, 20) == decode_rgb(path).size == open_rgb(path)[0].size
