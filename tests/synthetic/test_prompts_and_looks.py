"""HBB prompts of known kinds from oriented truth, and thermal and night frames of the generator."""

from __future__ import annotations

import numpy as np
import pytest
import shapely
from PIL import Image, ImageDraw

from hbb2obb.errors import UsageError
from hbb2obb.synthetic.dataset import generate_dataset
from hbb2obb.synthetic.prompts import make_prompts

from conftest import rotated_rect


def _cars(angles, length=60.0, breadth=26.0):
    return np.array([rotated_rect(100.0 + 150 * k, 100.0, length, breadth, a) for k, a in enumerate(angles)])


def test_tight_prompts_are_the_bounds_of_each_rectangle():
    cars = _cars([0.0, 20.0, 45.0, 70.0])
    boxes = make_prompts(cars, "tight", np.random.default_rng(1), noise_px=0.0)
    expected = [shapely.Polygon(c).bounds for c in cars]  # shapely as the oracle
    assert np.allclose(boxes, np.round(expected, 1))


def test_corner_prompts_are_the_bounds_of_the_rounded_body():
    cars = _cars([0.0, 30.0, 45.0])
    radius = 0.4 * 26.0
    boxes = make_prompts(cars, "corner", np.random.default_rng(1), corner_radius=0.4, noise_px=0.0)
    for box, car in zip(boxes, cars):
        # a rounded rectangle: the rectangle shrunk by the radius, grown back with round joins
        body = shapely.Polygon(car).buffer(-radius, join_style="mitre").buffer(radius, quad_segs=64)
        assert np.allclose(box, body.bounds, atol=0.1)
    assert np.allclose(boxes[0], shapely.Polygon(cars[0]).bounds, atol=0.1)  # along the axes: no cut


def test_margin_prompts_grow_every_side_within_the_range():
    cars = _cars([0.0, 30.0, 60.0, 45.0] * 25)
    tight = make_prompts(cars, "tight", np.random.default_rng(1), noise_px=0.0)
    grown = make_prompts(cars, "margin", np.random.default_rng(2), margin=(0.02, 0.15), noise_px=0.0)
    size = np.tile(tight[:, 2:] - tight[:, :2], 2)
    share = (grown - tight) * np.array([-1, -1, 1, 1]) / size
    assert share.min() >= 0.02 - 0.01 and share.max() <= 0.15 + 0.01  # 0.1 px rounding
    assert share.max() - share.min() > 0.1  # drawn per side, not one value
    with pytest.raises(UsageError):
        make_prompts(cars, "margin", np.random.default_rng(2), margin=(0.2, 0.1))
    with pytest.raises(UsageError):
        make_prompts(cars, "snug", np.random.default_rng(2))


def test_prompt_kinds_change_only_the_hbb_files(tmp_path):
    common = dict(n_frames=1, seed=9, width=480, height=270)
    day = generate_dataset(tmp_path / "day", **common)
    margin = generate_dataset(tmp_path / "margin", prompts="margin", margin=(0.05, 0.1), **common)
    name = day.frame_names[0]
    for folder in ("labels_obb_gt", "labels_obb_pred"):
        assert (day.root / folder / f"{name}.txt").read_bytes() == (margin.root / folder / f"{name}.txt").read_bytes()
    assert (day.images_dir / f"{name}.jpg").read_bytes() == (margin.images_dir / f"{name}.jpg").read_bytes()
    hbb = np.loadtxt(margin.hbb_dir / f"{name}.txt", ndmin=2)
    gt = np.loadtxt(day.gt_dir / f"{name}.txt", ndmin=2)[:, 1:].reshape(-1, 4, 2)
    extent = gt.max(axis=1) - gt.min(axis=1)
    growth = np.median(hbb[:, 3:5] / extent - 1.0)
    assert 0.1 - 0.03 < growth < 0.2 + 0.03  # two sides of 5-10% each, a little noise
    with pytest.raises(UsageError):
        generate_dataset(tmp_path / "bad", prompts="wide", **common)
    with pytest.raises(UsageError):
        generate_dataset(tmp_path / "bad", look="dusk", **common)


def _fill(image, polygon, value):
    if not polygon.is_empty and polygon.geom_type == "Polygon":  # a small body shrunk away draws nothing
        ImageDraw.Draw(image).polygon(list(polygon.exterior.coords), fill=value)


def _inside_and_ring(info, name):
    """Masks of the pixels inside the frame's GT rectangles and of a ring 6-12 px around them."""
    gt = np.loadtxt(info.gt_dir / f"{name}.txt", ndmin=2)[:, 1:].reshape(-1, 4, 2)
    inside = Image.new("L", (info.width, info.height), 0)
    ring = Image.new("L", (info.width, info.height), 0)
    for corners in gt:
        _fill(ring, shapely.Polygon(corners).buffer(12), 1)
    for corners in gt:  # cleared last: a neighbour's ring never covers a body
        _fill(inside, shapely.Polygon(corners).buffer(-3), 1)
        _fill(ring, shapely.Polygon(corners).buffer(6), 0)
    return np.asarray(inside, bool), np.asarray(ring, bool)


def test_thermal_frames_are_one_channel_with_warm_bodies_and_the_same_labels(tmp_path):
    common = dict(n_frames=1, seed=11, width=960, height=540, boxes_per_frame=(8, 8))
    day = generate_dataset(tmp_path / "day", **common)
    thermal = generate_dataset(tmp_path / "thermal", look="thermal", **common)
    name = day.frame_names[0]
    assert (day.gt_dir / f"{name}.txt").read_bytes() == (thermal.gt_dir / f"{name}.txt").read_bytes()
    image = Image.open(thermal.images_dir / f"{name}.jpg")
    assert image.mode == "L"
    pixels = np.asarray(image, dtype=np.float64)
    inside, ring = _inside_and_ring(thermal, name)
    assert pixels[inside].mean() > pixels[ring].mean() + 8  # warmer bodies
    assert pixels[ring].std() < 25  # a low-contrast ground


def test_night_frames_are_dark_and_low_contrast(tmp_path):
    common = dict(n_frames=1, seed=11, width=960, height=540, boxes_per_frame=(8, 8))
    day = generate_dataset(tmp_path / "day", **common)
    night = generate_dataset(tmp_path / "night", look="night", **common)
    name = day.frame_names[0]
    day_pixels = np.asarray(Image.open(day.images_dir / f"{name}.jpg"), dtype=np.float64)
    night_pixels = np.asarray(Image.open(night.images_dir / f"{name}.jpg"), dtype=np.float64)
    assert night_pixels.shape == day_pixels.shape
    assert night_pixels.mean() < 0.4 * day_pixels.mean() and night_pixels.std() < 0.4 * day_pixels.std()
