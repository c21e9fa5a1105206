"""The ``image`` converter's per-box stages: axes, supports, the self-check, tightness, confidence."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFilter

from hbb2obb.converters.image.box import (
    REASON_CLASS_LESS_SUPPORTED,
    REASON_LESS_SUPPORTED,
    REASON_NO_MASK,
    Candidate,
    candidate_axes,
    fit_box,
    hbb_corners,
    inscribed_box,
    outline_axis,
    refit_at_breadth,
    segment_box,
)
from hbb2obb.converters.image.converter import convert_boxes
from hbb2obb.converters.image.fit import Window, edge_axis, edge_support, long_axis, region_contrast, wrap_quarter
from hbb2obb.converters.image.params import ImageParams
from hbb2obb.errors import UsageError
from hbb2obb.geometry.hull import mask_outline_points, minimum_area_rectangle

from conftest import rotated_rect
from conftest import shapely_iou as iou

PARAMS = ImageParams()
TIGHT, LOOSE = replace(PARAMS, tightness="tight"), replace(PARAMS, tightness="loose")


def rectangle(centre, length, breadth, angle_deg) -> np.ndarray:
    """conftest's ``rotated_rect`` with the centre as one point, as these tests give it."""
    return rotated_rect(float(centre[0]), float(centre[1]), length, breadth, angle_deg)


def marina(angle_deg=45, n=5, size=(360, 240), length=44.0, breadth=14.0, gap=20.0):
    """Dark water with a row of sharp-cornered bright boats side by side, all at one angle."""
    image = Image.new("RGB", size, (30, 45, 50))
    draw = ImageDraw.Draw(image)
    t = math.radians(angle_deg)
    across = np.array([-math.sin(t), math.cos(t)])
    truths = []
    for k in range(n):
        centre = np.array([size[0] / 2, size[1] / 2]) + (k - (n - 1) / 2) * gap * across
        corners = rectangle(centre, length, breadth, angle_deg)
        draw.polygon([tuple(p) for p in corners], fill=(215, 215, 205))
        truths.append(corners)
    return image.filter(ImageFilter.BoxBlur(0.5)), truths


# ----------------------------------------------------------------------------- edge direction and supports

@pytest.mark.parametrize("seed", range(6))
def test_outline_axis_is_the_minimum_area_rectangles_axis(seed):
    """OpenCV's calipers against our own on rasterized rotated masks at 4K-frame coordinates."""
    rng = np.random.default_rng(seed)
    angle, length, breadth = rng.uniform(0, 180), rng.uniform(20, 60), rng.uniform(8, 20)
    image = Image.new("L", (80, 80), 0)
    ImageDraw.Draw(image).polygon([tuple(p) for p in rectangle((40, 40), length, breadth, angle)], fill=1)
    outline = mask_outline_points(np.asarray(image, dtype=bool)) + rng.uniform(0, 3800, 2)
    ours = long_axis(minimum_area_rectangle(outline))
    assert abs(math.degrees(wrap_quarter(outline_axis(outline) - ours))) < 0.01
    assert abs(math.degrees(wrap_quarter(ours - math.radians(angle)))) < 3.0  # and both follow the drawing


@pytest.mark.parametrize("angle", [20, 45, 135, 160])
def test_edge_axis_tells_the_two_diagonals_apart(angle):
    image, truths = marina(angle, n=1)
    pixels = np.asarray(image, dtype=float)
    found, coherence = edge_axis(pixels, np.ones(pixels.shape[:2]))
    difference = (math.degrees(found) - angle + 90) % 180 - 90  # a line direction: modulo 180
    assert abs(difference) < 3 and coherence > 0.2


def test_candidate_axes_needs_coherence_to_pick_a_diagonal():
    assert candidate_axes(30, 30, math.radians(45), math.radians(-45), 0.9, PARAMS) == [math.radians(135)]
    assert candidate_axes(30, 30, math.radians(45), math.radians(44), 0.9, PARAMS) == [math.radians(45)]
    assert len(candidate_axes(30, 30, 0.3, 0.3, 0.0, PARAMS)) == 2
    assert candidate_axes(60, 20, 0.1, 1.6, 1.0, PARAMS) == [0.1]  # an elongated HBB decides itself


def test_edge_support_and_region_contrast_prefer_the_true_outline():
    gray = np.zeros((60, 60))
    gray[20:40, 10:50] = 1.0
    window = Window(np.repeat(gray[..., None], 3, axis=2), 0.0, 0.0, 1.0, 1.0)
    truth = np.array([[10, 20], [50, 20], [50, 40], [10, 40]], float)
    shifted = truth + [0, 6]
    gradient = np.gradient(gray)
    assert edge_support(window, gradient, truth) > 2 * edge_support(window, gradient, shifted)
    assert region_contrast(window, gray, truth, 4.0) == pytest.approx(1.0)
    assert region_contrast(window, gray, shifted, 4.0) < 0.8
    outside = truth + 500  # no pixel of the window: nothing supports it
    assert edge_support(window, gradient, outside) == 0.0 and region_contrast(window, gray, outside, 4.0) == -math.inf


# ----------------------------------------------------------------------------- tightness

def tight_hbb(corners):
    return (*np.floor(corners.min(axis=0)), *np.ceil(corners.max(axis=0)))


def test_tight_reading_recovers_boats_in_a_row_that_loose_reading_swells():
    image, truths = marina(45)
    hbbs = [tight_hbb(t) for t in truths]
    tight = convert_boxes(image, hbbs, TIGHT)
    loose = convert_boxes(image, hbbs, replace(LOOSE, check=False))
    auto = convert_boxes(image, hbbs)  # whole-pixel HBBs: read as tight
    scores = {name: [iou(c, t) for c, t in zip(result.corners, truths)] for name, result in
              (("tight", tight), ("loose", loose))}
    assert auto.tightness == "tight" and loose.tightness == "loose"
    assert np.allclose(auto.corners, tight.corners)
    assert np.mean(scores["tight"]) > np.mean(scores["loose"]) + 0.1, scores
    # the boats at the row's ends too: their neighbour's corner in an empty corner of the HBB is
    # no part of them (they scored 0.494 when it was, the others 0.914-0.920)
    assert min(scores["tight"]) > 0.9 and (tight.confidence > 0).all(), scores
    angles = [math.degrees(math.atan2(*(c[1] - c[0])[::-1])) % 180 for c in tight.corners[~tight.fallback]]
    assert all(abs((a - 45 + 90) % 180 - 90) < 6 or abs((a - 135 + 90) % 180 - 90) < 6 for a in angles)


def test_fractional_hbbs_are_read_as_loose_and_bad_tightness_is_refused():
    image, truths = marina(45, n=1)
    hbb = [np.r_[truths[0].min(axis=0) - 0.25, truths[0].max(axis=0) + 0.25]]
    assert convert_boxes(image, hbb).tightness == "loose"
    with pytest.raises(UsageError, match="tightness"):
        convert_boxes(image, hbb, replace(PARAMS, tightness="snug"))


# ----------------------------------------------------------------------------- the self-check and confidence

def test_a_fit_less_supported_than_its_hbb_keeps_the_hbb():
    """An axis-aligned bright block filling its HBB, with a (wrong) diagonal mask forced in."""
    image = Image.new("RGB", (120, 120), (40, 40, 40))
    ImageDraw.Draw(image).rectangle([40, 40, 79, 79], fill=(220, 220, 220))
    hbb = (40.0, 40.0, 80.0, 80.0)
    segmentation = segment_box(image, hbb, LOOSE)
    assert segmentation.candidates and not segmentation.reason
    honest = fit_box(segmentation, replace(TIGHT, corner_radius=0.0))
    assert honest.corners is not None and iou(honest.corners, hbb_corners(hbb)) > 0.9
    # Force a thin diagonal mask: the rectangle it suggests crosses the block.
    window = segmentation.window
    rows, cols = np.mgrid[0:window.pixels.shape[0], 0:window.pixels.shape[1]]
    x, y = window.x0 + (cols + 0.5) / window.sx, window.y0 + (rows + 0.5) / window.sy
    diagonal = (np.abs((x - 60) - (y - 60)) < 5) & window.inside(hbb)
    wrong = Candidate(math.pi / 4, math.pi / 4, diagonal, window.to_image(mask_outline_points(diagonal)),
                      segmentation.candidates[0].evidence)
    segmentation.candidates = [wrong]
    sharp = replace(LOOSE, corner_radius=0.0)
    unchecked = fit_box(segmentation, replace(sharp, check=False))
    assert unchecked.corners is not None and iou(unchecked.corners, hbb_corners(hbb)) < 0.7
    checked = fit_box(segmentation, sharp)
    assert checked.corners is None and checked.reason == REASON_LESS_SUPPORTED and checked.confidence == 0.0
    assert checked.support < checked.hbb_support and checked.edges < checked.hbb_edges


def bright_car(length, breadth, angle):
    """A bright car on a dark road in a loose HBB: its truth, the sharp-cornered loose settings,
    its segmentation and its fit."""
    image = Image.new("RGB", (160, 160), (60, 60, 65))
    truth = rectangle((80, 80), length, breadth, angle)
    ImageDraw.Draw(image).polygon([tuple(p) for p in truth], fill=(225, 225, 230))
    sharp = replace(LOOSE, corner_radius=0.0)
    segmentation = segment_box(image, (*truth.min(axis=0), *truth.max(axis=0)), sharp)
    return truth, sharp, segmentation, fit_box(segmentation, sharp)


@pytest.mark.parametrize("angle", [0, 30, 45])
def test_a_refit_at_a_given_breadth_is_judged_like_a_fit(angle):
    # a bright car on a dark road, loose HBB: refitted at its true breadth it stays a checked,
    # mask-fitted box of that breadth; refitted as a sliver inside the body it would lose to the
    # HBB, so nothing replaces the fit (None)
    truth, sharp, segmentation, fitted = bright_car(60.0, 26.0, angle)
    assert fitted.from_mask and fitted.candidate is segmentation.candidates[0]
    refitted = refit_at_breadth(segmentation, fitted, 26.0, sharp)
    breadth = min(np.hypot(*(refitted.corners[1] - refitted.corners[0])),
                  np.hypot(*(refitted.corners[2] - refitted.corners[1])))
    assert breadth == pytest.approx(26.0) and refitted.from_mask and 0 < refitted.confidence <= 1
    assert iou(refitted.corners, truth) > 0.9
    assert refit_at_breadth(segmentation, fitted, 3.0, sharp) is None
    assert refit_at_breadth(segmentation, fitted, 3.0, replace(sharp, check=False)).corners is not None


@pytest.mark.parametrize("angle", [30, 45, 60])
def test_a_refit_holds_the_breadth_across_the_fits_long_side(angle):
    # a near-square HBB can give a rectangle longer across its mask's axis than along it; the
    # refit must keep that rectangle's long side, not turn the box to the other diagonal by
    # holding the breadth across the mask's axis (the fit's candidate turned by 90 degrees here)
    from hbb2obb.converters.image.fit import long_axis, wrap_half

    truth, sharp, segmentation, fitted = bright_car(50.0, 30.0, angle)
    assert iou(fitted.corners, truth) > 0.85
    own = fitted.candidate
    across = replace(fitted, candidate=Candidate(own.axis + math.pi / 2, own.theta + math.pi / 2, own.mask,
                                                 own.outline, own.evidence))
    for result in (fitted, across):
        refitted = refit_at_breadth(segmentation, result, 30.0, sharp)
        assert refitted is not None and iou(refitted.corners, truth) > 0.85
        assert abs(math.degrees(wrap_half(long_axis(refitted.corners) - long_axis(fitted.corners)))) < 5


def test_in_a_loose_box_clear_evidence_wins_over_the_neighbours():
    # a near-square HBB with two diagonal candidates: the car's own (45 degrees) and the other
    # diagonal's (its mirror image's mask), both judged on the car's colour evidence; the
    # neighbours point at the other diagonal. Loose: the evidence is clear and decides. Tight,
    # or with the ratio out of reach: the neighbours decide, and the self-check sends that
    # wrong diagonal back to its HBB.
    def scene(angle):
        image = Image.new("RGB", (160, 160), (60, 60, 65))
        truth = rectangle((80, 80), 52.0, 30.0, angle)
        ImageDraw.Draw(image).polygon([tuple(p) for p in truth], fill=(225, 225, 230))
        return image, truth

    (image, truth), (mirror, _) = scene(45), scene(135)
    hbb = (*truth.min(axis=0), *truth.max(axis=0))
    results = {}
    for kind, ratio in (("loose", 1.5), ("loose", math.inf), ("tight", 1.5)):
        params = replace(PARAMS, tightness=kind, corner_radius=0.0, evidence_decides=ratio)
        segmentation = segment_box(image, hbb, params)
        own, theirs = segmentation.candidates[0], segment_box(mirror, hbb, params).candidates[0]
        other = Candidate(theirs.axis, theirs.theta, theirs.mask, theirs.outline, own.evidence)
        segmentation.candidates = [own, other]
        results[kind, ratio] = fit_box(segmentation, params, prefer_axis=other.theta)
    assert iou(results["loose", 1.5].corners, truth) > 0.9
    for key in (("loose", math.inf), ("tight", 1.5)):
        assert results[key].corners is None or iou(results[key].corners, truth) < 0.6, key


def car_with_mirrors(angle):
    """A bright rounded car body 60 x 26 px with side mirrors 3 px out near its front, on a grey
    road; the truth, and a loose HBB hugging the body."""
    import shapely

    image = Image.new("RGB", (200, 160), (120, 120, 125))
    draw = ImageDraw.Draw(image)
    t = math.radians(angle)
    along, across = np.array([math.cos(t), math.sin(t)]), np.array([-math.sin(t), math.cos(t)])
    centre = np.array([100.0, 80.0])
    core = shapely.Polygon(rectangle(centre, 60.0 - 2 * 7.8, 26.0 - 2 * 7.8, angle))
    body = np.asarray(core.buffer(7.8, 16).exterior.coords)[:-1]
    draw.polygon([tuple(p) for p in body], fill=(225, 225, 230))
    for side in (-1, 1):
        mirror = rectangle(centre + 12 * along + side * 14.5 * across, 4.0, 3.0, angle)
        draw.polygon([tuple(p) for p in mirror], fill=(225, 225, 230))
    return image.filter(ImageFilter.GaussianBlur(0.7)), rectangle(centre, 60.0, 26.0, angle), \
        (*body.min(axis=0), *body.max(axis=0))


def test_a_loose_boxs_angle_moves_half_way_to_its_masks_principal_axis():
    # the mirrors tilt the outline's minimum-area rectangle; every mask pixel votes in the moments
    from hbb2obb.geometry.angles import orientation_errors

    assert PARAMS.loose_moment_share == 0.5
    errors = {}
    for share in (0.5, 0.0):
        errors[share] = []
        for angle in (5, 12, 20, 28, 35, 63, 110, 150):
            image, truth, hbb = car_with_mirrors(angle)
            result = convert_boxes(image, [hbb], replace(PARAMS, loose_moment_share=share))
            assert result.tightness == "loose" and not result.fallback.any()
            errors[share].append(float(orientation_errors(result.corners, truth[None])[0]))
    assert np.mean(errors[0.5]) < np.mean(errors[0.0]) - 0.5, errors  # measured 1.36 against 2.63 deg
    assert max(errors[0.5]) < 4.0


def test_confidence_is_in_the_unit_interval_and_zero_for_fallbacks():
    image, truths = marina(30, n=3)
    hbbs = [tight_hbb(t) for t in truths] + [(300.0, 10.0, 330.0, 40.0)]  # the last: open water
    result = convert_boxes(image, hbbs, class_ids=[0, 0, 0, 1])
    assert result.confidence.shape == (4,) and ((result.confidence >= 0) & (result.confidence <= 1)).all()
    assert result.fallback[3] and result.confidence[3] == 0.0 and result.reasons[3] == REASON_NO_MASK
    assert (result.confidence[:3] > 0).all() and not result.fallback[:3].any()
    assert [bool(r) for r in result.reasons] == result.fallback.tolist()


def _synthetic_ranking(tmp_path, tight: bool):
    """Confidence and shapely IoU (against the row-aligned ground truth) of every converted box
    of a small synthetic set, frame by frame as the command converts it."""
    from hbb2obb.converters.image.converter import hbb_xyxy
    from hbb2obb.io import read_yolo_hbb, read_yolo_obb
    from hbb2obb.synthetic.dataset import generate_dataset

    dataset = generate_dataset(tmp_path / "syn", n_frames=2, seed=17, width=960, height=540, tight=tight)
    confidence, ious = [], []
    for hbb_path in sorted(dataset.hbb_dir.glob("*.txt")):
        frame = Image.open(dataset.images_dir / f"{hbb_path.stem}.jpg")
        xyxy = hbb_xyxy(read_yolo_hbb(hbb_path, strict=True), frame.size)
        truth = read_yolo_obb(dataset.gt_dir / hbb_path.name, strict=True).boxes.corners
        result = convert_boxes(frame, xyxy, TIGHT if tight else LOOSE)
        assert len(truth) == len(xyxy) == len(result.confidence)
        kept = ~result.fallback
        confidence += result.confidence[kept].tolist()
        ious += [iou(c, t) for c, t in zip(result.corners[kept], truth[kept])]
    return np.array(confidence), np.array(ious)


@pytest.mark.parametrize("tight", [True, False], ids=["tight", "loose"])
def test_the_lowest_confidence_boxes_are_poor_ones(tmp_path, tight):
    """The boxes a user would check first (lowest confidence) are worse than the rest, and the
    five lowest are below the median on average (the old edge-and-colour margins failed both on
    the tight set; scipy is in the test extra). The single lowest tight box was below the median
    until a tight fit's confidence took in how its bounds keep to its HBB: it is now a box of
    0.917 against a median of 0.916, and the ranking on this small set fell from 0.23 to 0.17
    (on the larger sets of docs/converter.md it rose)."""
    from scipy.stats import spearmanr

    confidence, ious = _synthetic_ranking(tmp_path, tight)
    assert len(ious) > 40 and ((confidence >= 0) & (confidence <= 1)).all()
    flagged = np.argsort(confidence, kind="stable")[: len(ious) // 5]
    rest = np.setdiff1d(np.arange(len(ious)), flagged)
    # measured: tight 0.896 against 0.908, loose 0.838 against 0.901 (the old score: 0.899 against 0.907)
    assert ious[flagged].mean() < ious[rest].mean() - 0.01, (ious[flagged].mean(), ious[rest].mean())
    assert ious[np.argsort(confidence, kind="stable")[:5]].mean() < np.median(ious)  # 0.896 and 0.916 (tight)
    assert spearmanr(confidence, ious).statistic > 0.1, spearmanr(confidence, ious).statistic  # measured 0.17 and 0.30


@pytest.mark.parametrize("tightness", ["tight", "loose"])
def test_confidence_is_in_the_unit_interval_for_degenerate_and_odd_boxes(tightness):
    image = Image.new("RGB", (160, 100), (90, 90, 90))
    ImageDraw.Draw(image).rectangle([40, 30, 89, 49], fill=(230, 230, 230))
    hbbs = [(40, 30, 40, 50),          # zero width
            (60, 40, 61, 41),          # one pixel
            (40, 30, 90, 32),          # a 2 px sliver along the block's edge
            (140, 80, 190, 130),       # half outside the frame
            (300, 300, 340, 330),      # wholly outside
            (0, 0, 160, 100),          # the whole frame
            (100, 60, 140, 90),        # featureless background
            (40, 30, 90, 50)]          # the block itself
    result = convert_boxes(image, hbbs, replace(PARAMS, tightness=tightness))
    assert result.confidence.shape == (len(hbbs),) and np.isfinite(result.confidence).all()
    assert ((result.confidence >= 0) & (result.confidence <= 1)).all(), result.confidence
    assert (result.confidence[result.fallback] == 0).all() and result.fallback[[0, 4]].all()
    assert not result.fallback[-1] and result.confidence[-1] > 0.9  # a clean block: its rectangle holds its mask


def test_neighbours_decide_a_box_whose_pixels_leave_the_diagonal_open():
    image, truths = marina(45, n=5)
    hbbs = [tight_hbb(t) for t in truths]
    with_scene = convert_boxes(image, hbbs, TIGHT)
    without = convert_boxes(image, hbbs, replace(TIGHT, scene=False))
    score = [np.mean([iou(c, t) for c, t in zip(r.corners, truths)]) for r in (with_scene, without)]
    assert score[0] >= score[1] - 1e-9  # neighbours never make a clean row worse


def test_the_rectangle_inscribed_in_a_tight_hbb_is_fixed_by_its_angle():
    truth = rectangle((60.0, 40.0), 50.0, 20.0, 17.0)
    frame = Image.new("RGB", (120, 80), (90, 90, 90))
    ImageDraw.Draw(frame).polygon([tuple(p) for p in truth], fill=(220, 220, 220))
    xyxy = np.r_[truth.min(0), truth.max(0)]
    segmentation = segment_box(frame, xyxy, LOOSE)
    result = inscribed_box(segmentation, math.radians(17.0), "why", PARAMS)
    assert result.corners is not None and iou(result.corners, truth) > 0.97
    assert iou(hbb_corners(xyxy), truth) < 0.7
    # no mask of its own: it scores its edge support against the HBB's, capped at 1
    assert result.edges > result.hbb_edges and result.confidence == 1.0 and not result.from_mask
    # the mirror-image angle inscribes a rectangle across the object's edges: refused with the reason given
    mirrored = inscribed_box(segmentation, math.radians(-17.0), "why", PARAMS, min_edge_ratio=1.0)
    assert mirrored.corners is None and mirrored.reason == "why"
    unchecked = inscribed_box(segmentation, math.radians(-17.0), "why", replace(PARAMS, check=False))
    assert unchecked.corners is not None


def test_small_boxes_are_not_resampled_finer_than_the_image_down_to_a_least_window():
    from hbb2obb.converters.image.fit import crop_window

    least = PARAMS.min_window
    assert PARAMS.imgsz == 96 and PARAMS.max_upsampling == 1.0
    frame = Image.new("RGB", (200, 200), (90, 90, 90))
    middle = crop_window(frame, (40.0, 40.0, 100.0, 70.0), 2.0, PARAMS)  # 64 x 34 px: kept at the image's pixels
    assert middle.sx == pytest.approx(1.0) and middle.pixels.shape[:2] == (34, 64)
    small = crop_window(frame, (100.0, 100.0, 120.0, 110.0), 2.0, PARAMS)  # 24 x 14 px: up to the least window
    assert small.pixels.shape[1] == least and small.sx == pytest.approx(least / 24)
    large = crop_window(frame, (20.0, 20.0, 180.0, 100.0), 2.0, PARAMS)  # downsampled: the long side is imgsz
    assert large.pixels.shape[1] == 96 and large.sx < 1
    capped = crop_window(frame, (100.0, 100.0, 120.0, 110.0), 2.0, replace(PARAMS, imgsz=32))
    assert capped.pixels.shape[1] == 32  # imgsz caps it all


def test_a_refused_fit_in_a_row_takes_the_rows_axis_and_a_box_without_mask_does_not():
    from hbb2obb.converters.image.box import REASON_CLASS_LESS_SUPPORTED, BoxResult
    from hbb2obb.converters.image.converter import _rescue_by_rows

    image, truths = marina(15, n=5, gap=24.0)
    hbbs = [tight_hbb(t) for t in truths] + [(300.0, 10.0, 340.0, 40.0)]  # the last: open water
    segmentations = [segment_box(image, box, TIGHT) for box in hbbs]
    results = [fit_box(s, TIGHT) for s in segmentations]
    assert all(r.corners is not None for r in results[:5]) and results[5].reason == REASON_NO_MASK
    # as if the class check had refused the middle boat's fit (a helicopter among planes)
    results[2] = BoxResult(None, reason=REASON_CLASS_LESS_SUPPORTED)
    rescued = _rescue_by_rows(hbbs, segmentations, results, TIGHT)
    assert rescued[2].corners is not None and iou(rescued[2].corners, truths[2]) > 0.85
    assert iou(hbb_corners(hbbs[2]), truths[2]) < 0.6  # far better than the HBB it would have kept
    assert rescued[5].corners is None and rescued[5].reason == REASON_NO_MASK  # not rescued by the rows
    assert [r is s for r, s in zip(rescued, results)] == [True, True, False, True, True, True]


def test_rows_of_nearly_axis_aligned_cars_are_not_sent_back_as_a_class():
    # a parking lot seen from above: three rows of eight cars about 3 degrees off the axes, tight
    # HBBs; most fits follow the same edges as their HBBs, a few differ: no class-level verdict
    rng = np.random.default_rng(1)
    image = Image.new("RGB", (400, 300), (95, 95, 100))
    draw = ImageDraw.Draw(image)
    t = math.radians(3.0)
    along, across = np.array([math.cos(t), math.sin(t)]), np.array([-math.sin(t), math.cos(t)])
    colours = [(230, 230, 230), (40, 40, 45), (180, 30, 30), (200, 200, 210), (60, 80, 140)]
    truths = []
    for row in range(3):
        for k in range(8):
            centre = np.array([200.0, 150.0]) + (k - 3.5) * 17.0 * across + (row - 1) * 38.0 * along
            corners = rectangle(centre, 30.0, 14.0, 3.0 + rng.normal(0.0, 1.5))
            draw.polygon([tuple(p) for p in corners + 2.0], fill=(50, 50, 55))  # shadow
            draw.polygon([tuple(p) for p in corners], fill=colours[int(rng.integers(len(colours)))])
            truths.append(np.round(corners))
    image = image.filter(ImageFilter.GaussianBlur(0.7))
    hbbs = [(*t.min(axis=0), *t.max(axis=0)) for t in truths]
    result = convert_boxes(image, hbbs, class_ids=[0] * len(hbbs))
    assert result.tightness == "tight" and not result.fallback.any()
    converted = np.mean([iou(c, t) for c, t in zip(result.corners, truths)])
    as_is = np.mean([iou(hbb_corners(h), t) for h, t in zip(hbbs, truths)])
    assert converted > as_is + 0.01  # measured 0.909 against 0.886 (the whole class fell back before)


def test_a_synthetic_parking_lot_of_near_axis_cars_keeps_its_fits(tmp_path):
    # satellite-like: a lot of 32 cars 12-20 px broad, rows within 5 degrees of the axes, tight
    # HBBs; without the hugging rule the class check sent all of them back (0.864, as HBBs)
    from hbb2obb.synthetic.dataset import generate_dataset

    info = generate_dataset(tmp_path, n_frames=1, width=480, height=360, seed=3, classes={0: 1}, tight=True,
                            layout="lots", boxes_per_frame=(30, 50))
    frame = info.frames[0]
    xyxy = np.concatenate([frame.gt.corners.min(1), frame.gt.corners.max(1)], 1)
    result = convert_boxes(Image.open(info.images_dir / "frame_0000.jpg"), xyxy, class_ids=frame.gt.class_id)
    assert result.tightness == "tight" and REASON_CLASS_LESS_SUPPORTED not in result.reasons
    converted = np.mean([iou(c, t) for c, t in zip(result.corners, frame.gt.corners)])
    as_is = np.mean([iou(hbb_corners(h), t) for h, t in zip(xyxy, frame.gt.corners)])
    assert converted > as_is + 0.04  # measured 0.931 against 0.864


def test_boats_side_by_side_at_45_degrees_do_not_swell_onto_each_other():
    # near 45 degrees a tight HBB fixes length plus breadth only; masks of look-alike neighbours
    # 4 px apart swell across the gaps, and the neighbours' distance caps the breadth
    image, truths = marina(45, n=6, gap=18.0)
    hbbs = [tight_hbb(t) for t in truths]
    capped = convert_boxes(image, hbbs, PARAMS)
    swollen = convert_boxes(image, hbbs, replace(PARAMS, side_by_side=False))
    scores = [np.mean([iou(c, t) for c, t in zip(r.corners, truths)]) for r in (capped, swollen)]
    assert scores[0] > scores[1] + 0.03, scores  # measured 0.825 against 0.786
    breadths = [min(np.hypot(*(c[1] - c[0])), np.hypot(*(c[2] - c[1]))) for c in capped.corners]
    assert max(breadths) < 18.5  # no broader than the distance between neighbours (the HBB fit may add a little)


def test_is_weak_asks_every_condition():
    from hbb2obb.converters.image.box import BoxResult, is_weak

    corners = np.array([[0.0, 0.0], [10.0, 0.0], [10.0, 20.0], [0.0, 20.0]])
    weak = dict(confidence=0.5, support=0.6, hbb_edges=0.9, from_mask=True)
    box = [0.0, 0.0, 10.0, 20.0]
    assert is_weak(BoxResult(corners, **weak), box, PARAMS)
    # any one condition not met keeps the fit: a box wide enough, an outline with edges, colour
    # that stands out, a fit that holds its mask
    assert not is_weak(BoxResult(corners, **weak), [0.0, 0.0, 15.0, 20.0], PARAMS)
    assert not is_weak(BoxResult(corners, **{**weak, "hbb_edges": 1.5}), box, PARAMS)
    assert not is_weak(BoxResult(corners, **{**weak, "support": 1.4}), box, PARAMS)
    assert not is_weak(BoxResult(corners, **{**weak, "confidence": 0.8}), box, PARAMS)
    # a fallback, and a box not fitted to its own mask (inscribed at its neighbours' axis)
    assert not is_weak(BoxResult(None, **weak), box, PARAMS)
    assert not is_weak(BoxResult(corners, **{**weak, "from_mask": False}), box, PARAMS)
    assert not is_weak(BoxResult(corners, **{**weak, "support": math.nan}), box, PARAMS)
