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


def _declared_png(path, width, height):
    """A PNG whose header declares ``width x height`` pixels, with the data of a few rows only:
    what a decompression bomb looks like to a reader of headers."""
    import struct
    import zlib

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    rows = zlib.compress(b"\x00" * (1 + 3 * width) * 4)
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
                     + chunk(b"IDAT", rows) + chunk(b"IEND", b""))
    return path


def test_a_frame_declaring_billions_of_pixels_has_a_size_but_is_not_decoded(tmp_path):
    """Its header is all a size needs; decoding it is refused with one clear error (it was a
    traceback from Pillow's DecompressionBombError in hbb2obb and hbb2obb-view)."""
    from hbb2obb.errors import InputError

    path = _declared_png(tmp_path / "big.png", 60000, 60000)
    limit = Image.MAX_IMAGE_PIXELS
    assert image_size(path) == (60000, 60000) and image_size_of(path) == (60000, 60000)
    assert Image.MAX_IMAGE_PIXELS == limit  # the guard is back for every decoding after
    for decode in (decode_rgb, open_rgb):
        with pytest.raises(InputError, match=r"big.png: cannot read image \(more pixels than the image library "
                                             r"decodes safely: .*; split the frame into tiles\)"):
            decode(path)


def test_the_converter_skips_such_a_frame_and_says_why(tmp_path):
    from hbb2obb.cli.convert import main as convert_main

    images, hbb = tmp_path / "images", tmp_path / "labels_hbb"
    images.mkdir()
    hbb.mkdir()
    _declared_png(images / "big.png", 60000, 60000)
    (hbb / "big.txt").write_text("0 0.5 0.5 0.01 0.01\n")
    result = CliRunner().invoke(convert_main, [str(images), "-nb"])
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "big.png: cannot read image (more pixels than the image library decodes safely" in result.stderr
    assert "1 frame(s) could not be read" in result.stderr


def test_two_images_of_one_name_are_refused_not_one_taken(tmp_path):
    """``a.jpg`` 40 x 20 and ``a.png`` 400 x 200 beside normalized labels of frame ``a``: taking either
    scales the boxes by a size that may not be theirs, so the run names both and exits 2."""
    images = tmp_path / "images"
    images.mkdir()
    Image.new("RGB", (40, 20)).save(images / "a.jpg")
    Image.new("RGB", (400, 200)).save(images / "a.png")
    for folder in ("gt", "pred"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "a.txt").write_text("0 0.1 0.1 0.5 0.1 0.5 0.3 0.1 0.3\n")
    result = CliRunner().invoke(eval_main, [str(tmp_path / "gt"), str(tmp_path / "pred"), "-i", str(images), "-nb"])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert f"{images / 'a.jpg'} and {images / 'a.png'}: 2 images named 'a'; keep one of them" in result.stderr
    (images / "a.png").unlink()
    assert image_size(images / "a.jpg") == (40, 20)
    result = CliRunner().invoke(eval_main, [str(tmp_path / "gt"), str(tmp_path / "pred"), "-i", str(images), "-nb"])
    assert result.exit_code == 0, result.stderr
