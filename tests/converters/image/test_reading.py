"""Reading a frame's HBB prompts from its pixels: tight, corner-cutting or with a margin."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from hbb2obb.converters.image.converter import convert_boxes, hbb_xyxy, read_frame
from hbb2obb.converters.image.params import ImageParams
from hbb2obb.converters.image.reading import OFFSETS, edge_position, read_prompts, shrink_boxes
from hbb2obb.io import read_yolo_hbb

from conftest import shapely_iou as iou


@pytest.fixture(scope="module")
def sets(tmp_path_factory):
    """One set of generated roads per prompt kind: the same vehicles and images."""
    from hbb2obb.synthetic.dataset import generate_dataset

    root = tmp_path_factory.mktemp("reading")
    common = dict(n_frames=3, seed=41, boxes_per_frame=(20, 30))
    return {kind: generate_dataset(root / kind, prompts=kind, margin=(0.05, 0.12), **common)
            for kind in ("tight", "corner", "margin")}


def _frame(info, index):
    name = info.frame_names[index]
    image = read_frame(info.images_dir / f"{name}.jpg")
    return image, hbb_xyxy(read_yolo_hbb(info.hbb_dir / f"{name}.txt", strict=False), image.size)


def test_shrink_boxes_undoes_a_margin():
    objects = np.array([[10.0, 20.0, 50.0, 40.0], [0.0, 0.0, 8.0, 30.0]])
    size = np.tile(objects[:, 2:] - objects[:, :2], 2)
    grown = objects + np.array([-1, -1, 1, 1]) * 0.08 * size
    assert np.allclose(shrink_boxes(grown, 0.08), objects)
    assert np.allclose(shrink_boxes(objects, 0.0), objects)


def test_edge_position_finds_where_a_profile_falls():
    assert edge_position(np.where(OFFSETS < 0.0, 2.0, 1.0)) == pytest.approx(-0.005)
    assert np.isnan(edge_position(np.linspace(0.0, 1.0, len(OFFSETS))))  # rising: nothing ends


@pytest.mark.parametrize("index", [1, 2])  # frame 0 of the tight set reads loose (see docs/converter.md)
def test_each_kind_of_prompt_is_read_as_what_it_is(sets, index):
    tight = read_prompts(*_frame(sets["tight"], index), ImageParams())
    corner = read_prompts(*_frame(sets["corner"], index), ImageParams())
    margin = read_prompts(*_frame(sets["margin"], index), ImageParams())
    assert (tight.tightness, tight.margin) == ("tight", 0.0)
    assert (corner.tightness, corner.margin) == ("loose", 0.0)
    assert margin.tightness == "tight" and 0.04 <= margin.margin <= 0.15  # drawn from 5-12% per side
    assert margin.edges[0] < tight.edges[0] and margin.edges[0] < corner.edges[0]


@pytest.fixture(scope="module")
def thermal(tmp_path_factory):
    """Thermal roads (soft outlines) of the tuning seed, with small margins and tight prompts."""
    from hbb2obb.synthetic.dataset import generate_dataset

    root = tmp_path_factory.mktemp("thermal")
    common = dict(n_frames=2, seed=307, look="thermal")
    return {kind: generate_dataset(root / kind, prompts=kind, margin=(0.02, 0.06), **common)
            for kind in ("tight", "margin")}


@pytest.mark.parametrize("index", [0, 1])
def test_a_small_margin_shows_through_thermal_blur(thermal, index):
    """Margins of 2-6% per side (a median of 0.041 and 0.037 of the object on these frames):
    thermal blur moves the gradient's edge out as far as the margin moves it in (both frames
    read tight without a margin before the colour edge); the colour edge reads them, and reads
    the same vehicles' tight prompts without one."""
    margin = read_prompts(*_frame(thermal["margin"], index), ImageParams())
    tight = read_prompts(*_frame(thermal["tight"], index), ImageParams())
    assert margin.tightness == "tight" and 0.015 <= margin.margin <= 0.07, margin
    assert (tight.tightness, tight.margin) == ("tight", 0.0), tight
    assert margin.edges[2] < tight.edges[2] - 0.015  # the colour edges of the boxes along the axes


def test_a_frame_whose_objects_do_not_stand_out_reads_no_margin(sets):
    image, xyxy = _frame(sets["margin"], 0)
    flat = image.point(lambda value: 120)
    assert read_prompts(flat, xyxy, ImageParams()) == read_prompts(flat, xyxy, ImageParams()).__class__("loose")
    assert read_prompts(image, xyxy[:2], ImageParams()).tightness == "loose"  # too few boxes to say


def _mean_iou(conversion, info, index):
    name = info.frame_names[index]
    gt = np.loadtxt(info.gt_dir / f"{name}.txt", ndmin=2)[:, 1:].reshape(-1, 4, 2)
    return float(np.mean([iou(box, truth) for box, truth in zip(conversion.corners, gt)]))


def test_prompts_with_a_margin_come_back_near_the_objects(sets):
    """Frame 0's margin (5-12% per side) is underestimated by the colour edge of its boxes along
    the axes (read 0.026; 0.762 against 0.704 not shrunk); the three frames' mean is the claim."""
    image, xyxy = _frame(sets["margin"], 0)
    auto = convert_boxes(image, xyxy)
    off = convert_boxes(image, xyxy, replace(ImageParams(), margin=0.0))
    given = convert_boxes(image, xyxy, replace(ImageParams(), margin=0.085))
    assert auto.margin > 0 and auto.tightness == "tight" and off.margin == 0.0 and given.margin == 0.085
    scores = {name: _mean_iou(result, sets["margin"], 0) for name, result in
              (("auto", auto), ("off", off), ("given", given))}
    assert scores["auto"] > scores["off"] + 0.03 and scores["given"] > scores["off"] + 0.1
    autos, offs, tights = [], [], []
    for index in range(3):
        image, xyxy = _frame(sets["margin"], index)
        autos.append(_mean_iou(convert_boxes(image, xyxy), sets["margin"], index))
        offs.append(_mean_iou(convert_boxes(image, xyxy, replace(ImageParams(), margin=0.0)), sets["margin"], index))
        tight_image, tight_xyxy = _frame(sets["tight"], index)
        tights.append(_mean_iou(convert_boxes(tight_image, tight_xyxy), sets["tight"], index))
    assert np.mean(autos) > np.mean(offs) + 0.08 and np.mean(autos) > np.mean(tights) - 0.15
    fallback = np.flatnonzero(auto.fallback)
    if len(fallback):  # a fallback is the shrunk box, the object's estimated bounds
        assert np.allclose(auto.corners[fallback].min(axis=1), shrink_boxes(xyxy, auto.margin)[fallback, :2])


def test_a_given_tightness_reads_no_margin_from_the_pixels(sets):
    image, xyxy = _frame(sets["margin"], 0)
    assert convert_boxes(image, xyxy, ImageParams(tightness="loose")).margin == 0.0
    assert convert_boxes(image, xyxy, ImageParams(tightness="loose", margin=0.05)).tightness == "loose"


def _airport_corner_prompts(dota_sample_dir):
    """DOTA's airport frame P0168, its ground truth and corner-cutting prompts made from it (as
    ``tools/converter_scores.py --prompts corner`` makes them)."""
    import zlib

    from PIL import Image

    from hbb2obb.io import read_yolo_obb
    from hbb2obb.synthetic.prompts import make_prompts

    boxes = read_yolo_obb(dota_sample_dir / "labels_obb_gt" / "P0168.txt", strict=True).boxes
    prompts = make_prompts(boxes.corners, "corner", np.random.default_rng(zlib.crc32(b"P0168")))
    image = Image.open(next((dota_sample_dir / "images").glob("P0168.*"))).convert("RGB")
    return image, boxes, prompts


@pytest.mark.parametrize("tightness", ["auto", "loose"])
def test_no_class_of_the_airport_falls_below_its_corner_cutting_prompts(dota_sample_dir, tightness):
    """Planes and helicopters, from corner-cutting prompts: each class's mean IoU (shapely) at
    least that of the prompts as they are. Before: read as a margin, planes 0.555 and helicopters
    0.444 against 0.818 and 0.801; read loose, the planes' breadths pooled into one (58- to
    160-pixel planes) 0.804."""
    image, boxes, prompts = _airport_corner_prompts(dota_sample_dir)
    result = convert_boxes(image, prompts, ImageParams(tightness=tightness), class_ids=boxes.class_id)
    for class_id in np.unique(boxes.class_id):
        members = np.flatnonzero(boxes.class_id == class_id)
        converted = np.mean([iou(result.corners[k], boxes.corners[k]) for k in members])
        as_is = np.mean([iou(_hbb_corners(prompts[k]), boxes.corners[k]) for k in members])
        assert converted >= as_is, (class_id, converted, as_is)


def _hbb_corners(xyxy):
    x1, y1, x2, y2 = xyxy
    return np.array([[x1, y1], [x2, y1], [x2, y2], [x1, y2]])


def test_corner_cutting_prompts_of_planes_are_not_read_as_a_margin(dota_sample_dir):
    """Planes and helicopters reach their boxes' sides at a few points only; read as boxes with a
    margin, they are shrunk below their HBBs as they are (planes 0.555 against 0.818)."""
    image, _, prompts = _airport_corner_prompts(dota_sample_dir)
    assert read_prompts(image, prompts, ImageParams()).margin == 0.0


@pytest.mark.parametrize("index", [1, 2])
def test_diagonal_boxes_ending_well_inside_are_tight_whatever_the_slope(sets, index):
    """With no slope steep enough (``tight_slope`` out of reach), a frame of tight prompts is
    still read tight from its diagonal boxes, whose outlines end well inside their sides; the
    corner-cutting prompts of the same vehicles, whose diagonal boxes end near their sides, are
    not; and without that rule the tight frame reads loose."""
    shallow = replace(ImageParams(), tight_slope=1.0)
    tight = read_prompts(*_frame(sets["tight"], index), shallow)
    corner = read_prompts(*_frame(sets["corner"], index), shallow)
    assert tight.edges[1] < -shallow.tight_diagonal_inside < corner.edges[1], (tight.edges, corner.edges)
    assert (tight.tightness, tight.margin) == ("tight", 0.0)
    assert (corner.tightness, corner.margin) == ("loose", 0.0)
    without = read_prompts(*_frame(sets["tight"], index), replace(shallow, tight_diagonal_inside=1.0))
    assert (without.tightness, without.margin) == ("loose", 0.0)


def test_a_box_shrunk_by_a_margin_constrains_its_fit_less_than_a_tight_one(sets):
    """One margin for the frame leaves each box's sides off by its own spread (5-12% drawn per
    side here): fitting with the tight HBB's weight on the shrunk box holds the fits to those
    errors; weighed less, the mask's extents correct part of them (``margin_hbb_weight``)."""
    defaults, as_tight = [], []
    for index in range(3):
        image, xyxy = _frame(sets["margin"], index)
        defaults.append(_mean_iou(convert_boxes(image, xyxy), sets["margin"], index))
        held = replace(ImageParams(), margin_hbb_weight=ImageParams().tight_hbb_weight)
        as_tight.append(_mean_iou(convert_boxes(image, xyxy, held), sets["margin"], index))
    # measured: 0.771 / 0.856 / 0.829 against 0.762 / 0.841 / 0.804
    assert np.mean(defaults) > np.mean(as_tight) + 0.01 and min(np.subtract(defaults, as_tight)) > 0


def _confidence_ranking(info, params: ImageParams) -> tuple[float, list]:
    """Spearman between the confidence and the IoU of a set's converted boxes, and each frame's margin."""
    from scipy.stats import spearmanr

    confidence, ious, margins = [], [], []
    for index, name in enumerate(info.frame_names):
        image, xyxy = _frame(info, index)
        result = convert_boxes(image, xyxy, params)
        gt = np.loadtxt(info.gt_dir / f"{name}.txt", ndmin=2)[:, 1:].reshape(-1, 4, 2)
        margins.append(result.margin)
        for k in np.flatnonzero(~result.fallback):
            confidence.append(result.confidence[k])
            ious.append(iou(result.corners[k], gt[k]))
    return spearmanr(confidence, ious).statistic, margins


def test_the_confidence_of_a_margin_fit_counts_its_colour_contrast(thermal):
    """A fit to a box shrunk by a margin follows its mask, so the mask's agreement with the fit
    hardly ranks the fits by their IoU on thermal frames; its mean with the fit's colour contrast
    does better (Spearman 0.08 against 0.00 on these two frames; docs/converter.md has the sets)."""
    default, margins = _confidence_ranking(thermal["margin"], ImageParams())
    agreement, _ = _confidence_ranking(thermal["margin"], replace(ImageParams(), margin_contrast=1e12))
    assert min(margins) > 0 and default > agreement + 0.05, (default, agreement)


def test_the_confidence_of_a_tight_fit_counts_how_its_bounds_keep_to_its_hbb(thermal):
    """A tight HBB is its object's bounding box, so a fit whose bounds the mask pulled off the
    HBB's sides is more often wrong: half of a tight fit's confidence is how closely its bounds
    keep to them (Spearman 0.24 against 0.14 for the mask's agreement alone on these frames)."""
    tight = ImageParams(tightness="tight")
    default, _ = _confidence_ranking(thermal["tight"], tight)
    agreement, _ = _confidence_ranking(thermal["tight"], replace(tight, tight_bounds=1e12))
    assert default > agreement + 0.05, (default, agreement)
