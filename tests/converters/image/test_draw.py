"""The --save_img pictures: class names beside the OBBs and a colour key under the frame."""

import numpy as np
import pytest
from PIL import Image, ImageDraw

from hbb2obb.converters.image import draw as image_draw
from hbb2obb.converters.image.converter import convert_boxes
from hbb2obb.converters.image.draw import draw_conversion


@pytest.fixture
def scene():
    frame = Image.new("RGB", (160, 120), (80, 80, 80))
    frame.paste((230, 230, 230), (20, 18, 60, 34))
    frame.paste((230, 230, 230), (90, 60, 110, 100))
    hbbs = [[20, 18, 60, 34], [90, 60, 110, 100]]
    return frame, hbbs, convert_boxes(frame, hbbs, keep_masks=True)


@pytest.fixture
def written(monkeypatch):
    texts = []
    original = ImageDraw.ImageDraw.text

    def record(self, xy, text, *args, **kwargs):
        texts.append(text)
        return original(self, xy, text, *args, **kwargs)

    monkeypatch.setattr(ImageDraw.ImageDraw, "text", record)
    return texts


def test_obbs_carry_class_names_from_the_label_map(scene, written):
    frame, hbbs, conversion = scene
    draw_conversion(frame, hbbs, conversion, [0, 2], label_map={0: "Car", 2: "Truck"}, legend=False)
    assert written == ["Car", "Truck"]
    written.clear()
    draw_conversion(frame, hbbs, conversion, [0, 2], label_map={0: "Car"}, legend=False)
    assert written == ["Car", "2"]  # a class the map does not name keeps its id


def test_colour_key_below_the_frame_names_what_is_drawn(scene, written):
    frame, hbbs, conversion = scene
    picture = draw_conversion(frame, hbbs, conversion, [0, 2], label_map={0: "Car", 2: "Truck"})
    assert picture.width == frame.width and picture.height > frame.height
    assert np.array_equal(np.asarray(picture)[:5, :5], np.asarray(frame)[:5, :5])
    assert written[2:] == ["HBB prompt", "mask", "mask contour (convex)", "OBB"]
    footer = np.asarray(picture)[frame.height:].reshape(-1, 3)
    for colour in (image_draw.HBB_COLOUR, image_draw.OBB_COLOUR, image_draw.CONTOUR_COLOUR):
        assert np.abs(footer.astype(int) - colour).sum(axis=1).min() < 30
    written.clear()
    bare = draw_conversion(frame, hbbs, conversion, [0, 2], show_masks=False, show_contours=False, show_labels=False)
    assert written == ["HBB prompt", "OBB"]
    assert frame.height < bare.height < picture.height  # a narrow frame: the key wraps, fewer entries fewer rows
