"""The ``image`` converter: rectangle fit, orientation hint, per-box conversion, folder conversion."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
import shapely
from PIL import Image, ImageDraw, ImageFilter

from hbb2obb.converters import get_converter
from hbb2obb.converters.image.converter import (
    ImageConverter,
    convert_boxes,
    convert_frame,
    hbb_xyxy,
    image_params,
    validate_parameters,
)
from hbb2obb.converters.image.fit import dominant_axis, fit_rectangle, rough_sides
from hbb2obb.converters.image.params import PUBLIC_PARAMETERS, ImageParams
from hbb2obb.errors import InputError, UsageError
from hbb2obb.scoring.metric_dict import evaluate_obb

from conftest import rotated_rect
from conftest import shapely_iou as iou


def rectangle(centre, length, breadth, angle_deg) -> np.ndarray:
    """conftest's ``rotated_rect`` with the centre as one point, as these tests give it."""
    return rotated_rect(float(centre[0]), float(centre[1]), length, breadth, angle_deg)


def bounds(corners) -> tuple:
    corners = np.asarray(corners)
    return (*corners.min(axis=0), *corners.max(axis=0))


def rounded(centre, length, breadth, angle_deg, radius_share=0.3) -> np.ndarray:
    """Outline of a vehicle body: the rectangle with corners rounded by ``radius_share`` of its breadth."""
    radius = radius_share * breadth
    core = shapely.Polygon(rectangle(centre, length - 2 * radius, breadth - 2 * radius, angle_deg))
    return np.asarray(core.buffer(radius, 16).exterior.coords)[:-1]


# ----------------------------------------------------------------------------- fit_rectangle

@pytest.mark.parametrize("angle", [0, 7, 30, 44, 45, 46, 60, 90, 100, 135, 170, -20])
def test_fit_rectangle_recovers_a_rectangle_that_mask_and_hbb_agree_on(angle):
    corners = rectangle((50, 40), 30, 12, angle)
    fitted = fit_rectangle(corners, math.radians(angle), (50, 40), bounds(corners), 0.0, 0.0)
    assert iou(fitted, corners) == pytest.approx(1.0, abs=1e-9)


@pytest.mark.parametrize("angle", [10, 25, 40, 55, 80])
def test_fit_rectangle_undoes_rounded_corners(angle):
    """An HBB hugging a rounded vehicle sits inside the sharp rectangle's bounds; the model knows."""
    sharp = rectangle((0, 0), 40, 18, angle)
    radius = 0.3 * 18
    rounded = shapely.Polygon(rectangle((0, 0), 40 - 2 * radius, 18 - 2 * radius, angle)).buffer(radius, 64)
    hugging_hbb = rounded.bounds  # tighter than the sharp rectangle's bounds
    assert hugging_hbb[2] < bounds(sharp)[2] - 0.5
    outline = np.asarray(rounded.exterior.coords)
    with_model = fit_rectangle(outline, math.radians(angle), (0, 0), hugging_hbb, 0.3, 0.0)
    without = fit_rectangle(outline, math.radians(angle), (0, 0), hugging_hbb, 0.0, 0.0)
    assert iou(with_model, sharp) > 0.995
    assert iou(with_model, sharp) > iou(without, sharp)


def test_fit_rectangle_weighs_mask_against_hbb():
    truth = rectangle((0, 0), 40, 16, 0)
    too_short_mask = rectangle((0, 0), 30, 16, 0)  # the mask misses the vehicle's ends
    hbb = bounds(truth)
    only_mask = fit_rectangle(too_short_mask, 0.0, (0, 0), hbb, 0.0, 0.0, hbb_weight=0.0)
    balanced = fit_rectangle(too_short_mask, 0.0, (0, 0), hbb, 0.0, 0.0, hbb_weight=1.0)
    hbb_heavy = fit_rectangle(too_short_mask, 0.0, (0, 0), hbb, 0.0, 0.0, hbb_weight=100.0)
    lengths = [np.ptp(r[:, 0]) for r in (only_mask, balanced, hbb_heavy)]
    assert lengths[0] == pytest.approx(30) and lengths[1] == pytest.approx(35)
    assert lengths[2] == pytest.approx(40, abs=0.1)


def test_fit_rectangle_rejects_an_inverted_solution():
    outline = rectangle((0, 0), 10, 4, 0)
    assert fit_rectangle(outline, 0.0, (0, 0), (3, 3, -3, -3), 0.0, 0.0, hbb_weight=100.0) is None


@pytest.mark.parametrize(
    "width, height, angle_deg, expected",
    [
        (10.0, 4.0, 0.0, (10.0, 4.0)),
        (4.0, 10.0, 90.0, (10.0, 4.0)),
        # a 30-degree 20 x 8 rectangle has bounds 21.32 x 16.93
        (20 * math.cos(math.pi / 6) + 8 * 0.5, 20 * 0.5 + 8 * math.cos(math.pi / 6), 30.0, (20.0, 8.0)),
        (10.0, 10.0, 45.0, (0.81 * math.hypot(10, 10), 0.36 * math.hypot(10, 10))),  # undetermined
    ],
)
def test_rough_sides_table(width, height, angle_deg, expected):
    assert rough_sides(width, height, math.radians(angle_deg)) == pytest.approx(expected)


# ----------------------------------------------------------------------------- the orientation hint

@pytest.mark.parametrize("angle", [0, 12, 29, 44, 61, 90, 133, 170])
def test_dominant_axis_of_a_drawn_rectangle(angle):
    image = Image.new("L", (120, 120), 60)
    ImageDraw.Draw(image).polygon([tuple(p) for p in rectangle((60, 60), 70, 30, angle)], fill=200)
    gray = np.asarray(image.filter(ImageFilter.GaussianBlur(1)), dtype=float)
    found = math.degrees(dominant_axis(gray, np.ones_like(gray)))
    difference = (found - angle + 45) % 90 - 45  # the hint is an axis modulo 90 degrees
    assert -45 <= found <= 45 and abs(difference) < 1.5


# ----------------------------------------------------------------------------- per-box conversion

def road_scene(vehicles, size=(480, 320), seed=0):
    """Grey asphalt with grain and a lane mark; each vehicle a light body, dark glass, a soft shadow."""
    rng = np.random.default_rng(seed)
    base = np.clip(rng.normal(95, 6, (size[1], size[0], 3)), 0, 255).astype(np.uint8)
    image = Image.fromarray(base)
    draw = ImageDraw.Draw(image)
    draw.line([(0, size[1] * 0.8), (size[0], size[1] * 0.75)], fill=(215, 215, 210), width=3)
    shadow = Image.new("L", size, 0)
    for centre, length, breadth, angle, _colour in vehicles:
        ImageDraw.Draw(shadow).polygon([tuple(p + [6, 5]) for p in rounded(centre, length, breadth, angle)], fill=120)
    shadow = shadow.filter(ImageFilter.GaussianBlur(3))
    image = Image.composite(image.point(lambda v: v // 2), image, shadow)
    draw = ImageDraw.Draw(image)
    for centre, length, breadth, angle, colour in vehicles:
        draw.polygon([tuple(p) for p in rounded(centre, length, breadth, angle)], fill=colour)
        draw.polygon([tuple(p) for p in rectangle(np.add(centre, rectangle((0, 0), 0.25 * length, 0, angle)[1]),
                                                    0.15 * length, 0.75 * breadth, angle)], fill=(35, 40, 50))
    return image.filter(ImageFilter.BoxBlur(0.6))


SCENE = [((80, 70), 60, 26, 0, (230, 230, 228)), ((220, 80), 60, 26, 17, (180, 30, 30)),
         ((360, 90), 60, 26, 33, (235, 235, 235)), ((80, 200), 60, 26, 45, (40, 70, 150)),
         ((200, 210), 60, 26, 62, (225, 225, 220)), ((320, 200), 60, 26, 90, (200, 200, 205)),
         ((420, 230), 60, 26, 151, (230, 230, 230))]


def test_convert_boxes_finds_drawn_vehicles_at_every_angle():
    image = road_scene(SCENE)
    truths = [rectangle(c, length, breadth, a) for c, length, breadth, a, _ in SCENE]
    hbbs = [bounds(rounded(c, length, breadth, a)) for c, length, breadth, a, _ in SCENE]  # hugging the body
    result = convert_boxes(image, hbbs)
    scores = [iou(found, truth) for found, truth in zip(result.corners, truths)]
    assert not result.fallback.any()
    assert min(scores) > 0.8 and np.mean(scores) > 0.88, scores


def cars_with_shadows(angles, length=60.0, breadth=26.0):
    """Rounded cars of one size on a grey road, each with its shadow beside one long side; near 45
    degrees the cars are as dark as their shadows, so their masks take the shadows in. Returns the
    frame, the truths and the loose (hand-drawn-like) HBBs: the bounds of the rounded bodies."""
    image = Image.new("RGB", (600, 400), (150, 150, 150))
    draw = ImageDraw.Draw(image)
    truths, hbbs = [], []
    for k, angle in enumerate(angles):
        centre = (60.0 + (k % 5) * 120.0, 100.0 + (k // 5) * 200.0)
        body = rounded(centre, length, breadth, angle)
        diagonal = abs(math.cos(2 * math.radians(angle))) < 0.5
        across = np.array([-math.sin(math.radians(angle)), math.cos(math.radians(angle))])
        shadow, colour = ((40, 40, 45), (40, 40, 45)) if diagonal else ((90, 90, 95), (230, 230, 235))
        draw.polygon([tuple(p) for p in body + 6.0 * across], fill=shadow)
        draw.polygon([tuple(p) for p in body], fill=colour)
        truths.append(rectangle(centre, length, breadth, angle))
        hbbs.append((*body.min(axis=0), *body.max(axis=0)))
    return image.filter(ImageFilter.GaussianBlur(0.8)), truths, hbbs


def test_loose_boxes_are_refitted_at_their_classs_pooled_breadth():
    # six cars near the image axes, whose loose HBBs give their breadth, and four near 45 degrees
    # whose masks swell across their shadows: the pool brings the four back to the cars' breadth
    image, truths, hbbs = cars_with_shadows([0, 3, 90, 87, 2, 178, 45, 42, 135, 48])
    params = ImageParams()
    pooled = convert_boxes(image, hbbs, params)
    apart = convert_boxes(image, hbbs, params, class_ids=[0, 1, 2, 3, 0, 1, 2, 3, 0, 1])  # four classes of 2-3 boxes
    alone = convert_boxes(image, hbbs, replace(params, pool_breadths=False))
    assert pooled.tightness == "loose" and not pooled.fallback.any() and not alone.fallback.any()
    scores = [np.mean([iou(c, t) for c, t in zip(r.corners, truths)]) for r in (pooled, alone)]
    assert scores[0] > scores[1] + 0.03, scores  # measured 0.951 against 0.906
    breadths = [
        [min(np.hypot(*(c[1] - c[0])), np.hypot(*(c[2] - c[1]))) for c in r.corners[6:]] for r in (pooled, alone)
    ]
    assert max(breadths[0]) < 28.0 < min(breadths[1])  # measured 26.7-26.8 against 31.9-32.5 (truth 26)
    # classes are pooled apart, and a class of fewer than four boxes keeps its own fits
    assert np.array_equal(apart.corners, alone.corners)



def test_a_loose_boxs_confidence_says_how_far_its_breadth_was_from_its_classs():
    # the four cars near 45 degrees take their shadows into their masks: pooled, the refit mends
    # their breadth but their confidence says the pool had to (their own breadth 23% off it);
    # in classes too small to pool, their HBBs leave their breadth open and they score lowest
    image, truths, hbbs = cars_with_shadows([0, 3, 90, 87, 2, 178, 45, 42, 135, 48])
    for class_ids in (None, [0, 1, 2, 3, 0, 1, 2, 3, 0, 1]):
        result = convert_boxes(image, hbbs, class_ids=class_ids)
        assert not result.fallback.any() and ((result.confidence >= 0) & (result.confidence <= 1)).all()
        near_axes, diagonal = result.confidence[:6], result.confidence[6:]
        # measured: pooled 0.957-1 against 0.688-0.698 (0.861-0.869 by the held share alone);
        # apart 0.985-1 against 0.476-0.486 (0.951-0.957)
        assert diagonal.max() < 0.8 < 0.95 < near_axes.min(), result.confidence

def test_convert_boxes_keeps_masks_in_the_window():
    image = road_scene(SCENE[:2])
    truth = rectangle(*SCENE[1][:4])
    result = convert_boxes(image, [bounds(rounded(*SCENE[1][:4]))], keep_masks=True)
    box = result.boxes[0]
    assert box.mask.shape == box.window.pixels.shape[:2] and box.mask.any()
    hull = shapely.Polygon(box.hull)
    assert hull.is_valid and iou(np.asarray(hull.exterior.coords)[:-1], truth) > 0.75
    assert convert_boxes(image, [bounds(truth)]).boxes == []  # nothing kept unless asked


@pytest.mark.parametrize(
    "box",
    [
        (100.0, 100.0, 100.0, 140.0),  # zero width
        (100.0, 100.0, 140.0, 100.5),  # thinner than a pixel
        (600.0, 50.0, 650.0, 80.0),  # outside the frame
        (-80.0, -60.0, -10.0, -5.0),
    ],
)
def test_degenerate_or_outside_boxes_fall_back_to_the_hbb(box):
    result = convert_boxes(road_scene(SCENE), [box])
    assert result.fallback.tolist() == [True]
    x1, y1, x2, y2 = box
    np.testing.assert_array_equal(result.corners[0], [[x1, y1], [x2, y1], [x2, y2], [x1, y2]])


@pytest.mark.parametrize("fill", ["flat", "noise"])
def test_a_window_without_an_object_falls_back(fill):
    rng = np.random.default_rng(1)
    pixels = np.full((200, 200, 3), 110, np.uint8) if fill == "flat" else \
        np.clip(rng.normal(110, 20, (200, 200, 3)), 0, 255).astype(np.uint8)
    result = convert_boxes(pixels, [[60, 80, 140, 120], [80, 60, 120, 140]])
    assert result.fallback.tolist() == [True, True]


def test_a_vehicle_cut_by_the_frame_border():
    truth = rectangle((20, 120), 60, 26, 20)  # reaches past x = 0
    image = road_scene([((20, 120), 60, 26, 20, (230, 230, 230))])
    x1, y1, x2, y2 = bounds(truth)
    result = convert_boxes(image, [[max(0.0, x1), y1, x2, y2]])
    assert not result.fallback[0]
    visible = shapely.Polygon(truth).intersection(shapely.box(0, 0, 480, 320))
    assert shapely.Polygon(result.corners[0]).intersection(visible).area / visible.area > 0.85


def test_convert_boxes_with_no_boxes():
    result = convert_boxes(road_scene([]), np.zeros((0, 4)))
    assert result.corners.shape == (0, 4, 2) and result.fallback.shape == (0,)


# ----------------------------------------------------------------------------- the converter

def test_registered_with_its_parameters():
    converter = get_converter("image")
    assert isinstance(converter, ImageConverter) and converter.needs_images
    assert set(converter.parameters) >= {"scale_factor", "opening_kernel_percentage", "imgsz"}


@pytest.mark.parametrize(
    "params, message",
    [
        ({"scale_factor": [0.1, 0.2, 0.3]}, "scale_factor"),
        ({"scale_factor": -0.6}, "scale_factor"),
        ({"opening_kernel_percentage": 1.5}, "opening_kernel_percentage"),
        ({"opening_kernel_percentage": "big"}, "opening_kernel_percentage"),
        ({"imgsz": 8}, "imgsz"),
        ({"imgsz": 64.5}, "imgsz"),
        ({"corner_radius": 0.7}, "corner_radius"),
        ({"tightness": "snug"}, "tightness"),
        ({"tightness": None}, "tightness"),
        ({"kernel": 3}, "no parameter 'kernel'"),
    ],
)
def test_bad_parameters_are_usage_errors(params, message):
    with pytest.raises(UsageError, match=message):
        ImageConverter().check_parameters(params)


def test_tightness_is_a_converter_parameter_a_sweep_can_set(tmp_path):
    write_dataset(tmp_path, SCENE[:3])
    assert ImageConverter.parameters["tightness"] == "auto"
    reports = {value: ImageConverter().convert(tmp_path / "hbb", tmp_path / value, {"tightness": value},
                                               img_source=tmp_path / "images") for value in ("tight", "loose")}
    assert {v: r.details["tightness_per_file"] for v, r in reports.items()} == {
        "tight": {"f0001.txt": "tight"}, "loose": {"f0001.txt": "loose"}}
    assert (tmp_path / "tight" / "f0001.txt").read_text() != (tmp_path / "loose" / "f0001.txt").read_text()


def test_parameters_accept_a_scale_factor_pair_and_whole_float_imgsz():
    full = validate_parameters({**ImageConverter.parameters, "scale_factor": [0.0, 0.05], "imgsz": 96.0})
    assert full["imgsz"] == 96 and isinstance(full["imgsz"], int)


def test_the_registrys_parameters_are_the_public_fields_of_image_params():
    assert ImageConverter.parameters == {name: getattr(ImageParams(), name) for name in PUBLIC_PARAMETERS}
    params = image_params({"scale_factor": [0.0, 0.05], "imgsz": 64.0})
    assert params == replace(ImageParams(), scale_factor=(0.0, 0.05), imgsz=64) and isinstance(params.imgsz, int)
    with pytest.raises(UsageError, match="imgsz"):
        image_params({"imgsz": 8})


def write_dataset(root, vehicles, hbb_lines=None, name="f0001", normalized=False):
    (root / "images").mkdir(parents=True, exist_ok=True)
    (root / "hbb").mkdir(exist_ok=True)
    image = road_scene(vehicles)
    image.save(root / "images" / f"{name}.png")
    if hbb_lines is None:
        hbb_lines = []
        for centre, length, breadth, angle, _ in vehicles:
            x1, y1, x2, y2 = bounds(rounded(centre, length, breadth, angle))
            xc, yc, w, h = (x1 + x2) / 2, (y1 + y2) / 2, x2 - x1, y2 - y1
            if normalized:
                xc, yc, w, h = xc / image.width, yc / image.height, w / image.width, h / image.height
            hbb_lines.append(f"0 {xc:.6f} {yc:.6f} {w:.6f} {h:.6f}")
    (root / "hbb" / f"{name}.txt").write_text("".join(line + "\n" for line in hbb_lines))
    return root


@pytest.mark.parametrize("normalized", [False, True])
def test_convert_folder_writes_absolute_pixel_obbs(tmp_path, normalized):
    write_dataset(tmp_path, SCENE[:4], normalized=normalized)
    report = ImageConverter().convert(tmp_path / "hbb", tmp_path / "obb", {}, img_source=tmp_path / "images")
    assert (report.files, report.boxes, report.fallbacks, report.ok) == (1, 4, 0, True)
    rows = [line.split() for line in (tmp_path / "obb" / "f0001.txt").read_text().splitlines()]
    assert len(rows) == 4 and all(len(r) == 9 and r[0] == "0" for r in rows)
    assert all(len(token.split(".")[1]) == 1 for r in rows for token in r[1:])  # one decimal
    corners = np.array([[float(v) for v in r[1:]] for r in rows]).reshape(-1, 4, 2)
    truths = [rectangle(c, length, breadth, a) for c, length, breadth, a, _ in SCENE[:4]]
    assert np.mean([iou(found, truth) for found, truth in zip(corners, truths)]) > 0.85


def test_convert_folder_counts_fallbacks_and_skipped_lines(tmp_path):
    good = SCENE[0]
    x1, y1, x2, y2 = bounds(rounded(*good[:4]))
    lines = [f"3 {(x1 + x2) / 2} {(y1 + y2) / 2} {x2 - x1} {y2 - y1}", "1 200 200 0 30", "0 nan 1 2 3", "2 50 50 20"]
    write_dataset(tmp_path, [good], lines)
    (tmp_path / "hbb" / "empty.txt").write_text("")
    Image.new("RGB", (32, 32)).save(tmp_path / "images" / "empty.jpg")
    ticks = []
    report = ImageConverter().convert(tmp_path / "hbb", tmp_path / "obb", {}, img_source=tmp_path / "images",
                                      progress=ticks.append)
    assert (report.files, report.boxes, report.fallbacks) == (2, 2, 1)
    assert report.details == {"skipped_hbb_lines": 2, "fallbacks_per_file": {"f0001.txt": 1},
                              "fallback_reasons": {"degenerate box": 1},
                              "tightness_per_file": {"empty.txt": "loose", "f0001.txt": "tight"}}  # whole pixels
    assert ticks == [1, 1]
    rows = (tmp_path / "obb" / "f0001.txt").read_text().splitlines()
    assert [r.split()[0] for r in rows] == ["3", "1"]  # classes kept, in file order
    assert rows[1] == "1 200.0 185.0 200.0 185.0 200.0 215.0 200.0 215.0"  # the zero-width box as is
    assert (tmp_path / "obb" / "empty.txt").read_text() == ""


def test_convert_folder_input_errors(tmp_path):
    write_dataset(tmp_path, SCENE[:1])
    converter = ImageConverter()
    with pytest.raises(UsageError, match="needs the frames"):
        converter.convert(tmp_path / "hbb", tmp_path / "obb", {})
    with pytest.raises(InputError, match="image folder not found"):
        converter.convert(tmp_path / "hbb", tmp_path / "obb", {}, img_source=tmp_path / "nowhere")
    with pytest.raises(InputError, match="HBB folder not found"):
        converter.convert(tmp_path / "none", tmp_path / "obb", {}, img_source=tmp_path / "images")
    (tmp_path / "hbb" / "f0002.txt").write_text("0 10 10 4 4\n")
    with pytest.raises(InputError, match=r"f0002\.txt: no image named f0002"):
        converter.convert(tmp_path / "hbb", tmp_path / "obb", {}, img_source=tmp_path / "images")
    (tmp_path / "images" / "f0002.png").write_bytes(b"not an image")
    with pytest.raises(InputError, match="cannot read image"):
        converter.convert(tmp_path / "hbb", tmp_path / "obb", {}, img_source=tmp_path / "images")


def test_convert_frame_without_writing(tmp_path):
    write_dataset(tmp_path, SCENE[:2])
    frame = convert_frame(tmp_path / "images" / "f0001.png", tmp_path / "hbb" / "f0001.txt", None, {})
    assert frame.conversion.corners.shape == (2, 4, 2) and frame.image.size == (480, 320)
    assert not (tmp_path / "obb").exists()


def test_on_the_synthetic_dataset(tmp_path):
    from hbb2obb.synthetic.dataset import generate_dataset

    info = generate_dataset(tmp_path / "data", n_frames=2, seed=3, width=1280, height=720)
    # detector-like boxes around rounded bodies, said so: the pixels read the first frame as tight
    # (docs/converter.md measures the reading)
    report = ImageConverter().convert(info.hbb_dir, tmp_path / "obb", {"tightness": "loose"},
                                      img_source=info.images_dir)
    metrics = evaluate_obb(info.gt_dir, tmp_path / "obb")
    assert report.fallbacks == 0 and metrics["total_matches"] == info.boxes
    assert metrics["avg_iou"] > 0.85 and metrics["p90_angle_error"] < 6.0


def test_on_the_real_sample(sample_dir, tmp_path):
    """Issue 15's targets on the two 4K Songdo frames, default settings: mean IoU >= 0.875, angle
    p90 <= 5 deg, no fallback (measured 0.882 and 3.1 deg; docs/converter.md has the numbers)."""
    report = ImageConverter().convert(sample_dir / "labels_hbb", tmp_path, {}, img_source=sample_dir / "images")
    metrics = evaluate_obb(sample_dir / "labels_obb_gt", tmp_path)
    assert (report.files, report.boxes, report.fallbacks) == (2, 122, 0)
    assert metrics["total_matches"] == 122
    assert metrics["avg_iou"] >= 0.875 and metrics["p90_angle_error"] <= 5.0


def test_on_the_real_dota_sample_every_class_beats_its_hbb_and_meets_its_target(dota_sample_dir, tmp_path):
    """Issue 15's per-class targets on the three DOTA frames (tight HBBs), default settings, each
    class also at least its HBB emitted as is (measured: ships 0.860, planes 0.876, helicopters
    0.860, vehicles 0.922; docs/converter.md has the table)."""
    import yaml

    names = yaml.safe_load((dota_sample_dir / "classes.yaml").read_text(encoding="utf-8"))
    names = names if isinstance(names, dict) else dict(enumerate(names))
    ImageConverter().convert(
        dota_sample_dir / "labels_hbb", tmp_path / "obb", {}, img_source=dota_sample_dir / "images"
    )
    get_converter("identity").convert(dota_sample_dir / "labels_hbb", tmp_path / "as_is", {})
    converted = evaluate_obb(dota_sample_dir / "labels_obb_gt", tmp_path / "obb")["class_stats"]
    as_is = evaluate_obb(dota_sample_dir / "labels_obb_gt", tmp_path / "as_is")["class_stats"]
    by_name = {names[int(class_id)]: class_id for class_id in converted}
    for class_id, stats in converted.items():
        assert stats["avg_iou"] >= as_is[class_id]["avg_iou"], names[int(class_id)]

    def mean(*classes):
        return np.mean(sum((converted[by_name[c]]["ious"] for c in classes), []))

    assert mean("ship") >= 0.60 and mean("helicopter") >= 0.75 and mean("plane") >= 0.86
    assert mean("large-vehicle", "small-vehicle") >= 0.92


def test_a_thin_motorcycle_turned_out_of_its_corner_cutting_box_keeps_its_box(tmp_path):
    """Generated night roads (seed 305) with corner-cutting prompts: frame 7's motorcycle (a 20 x 8
    box around a 23 x 8 body 2.5 degrees off the axis) was fitted 22 degrees off, a rectangle that
    would need a box 21 x 14: IoU 0.432 against 0.777 as its HBB. It now falls back, and no fit
    of the frame reaches out of its HBB by more than ``max_overshoot``."""
    from hbb2obb.converters.image.box import REASON_OVERSHOOTS
    from hbb2obb.converters.image.scene import hbb_overshoot
    from hbb2obb.io import read_yolo_hbb, read_yolo_obb
    from hbb2obb.synthetic.dataset import generate_dataset

    info = generate_dataset(tmp_path / "night", n_frames=8, seed=305, prompts="corner", look="night")
    name = info.frame_names[7]
    image = Image.open(info.images_dir / f"{name}.jpg")
    labels = read_yolo_hbb(info.hbb_dir / f"{name}.txt", strict=True)
    xyxy = hbb_xyxy(labels, image.size)
    truth = read_yolo_obb(info.gt_dir / f"{name}.txt", strict=True).boxes.corners * image.size
    result = convert_boxes(image, xyxy, ImageParams(), class_ids=labels.boxes.class_id)
    assert result.tightness == "loose"
    thin = [k for k in np.flatnonzero(labels.boxes.class_id == 3) if (xyxy[k, 3] - xyxy[k, 1]) < 10]
    assert len(thin) == 1
    x1, y1, x2, y2 = xyxy[thin[0]]
    box = np.array([[x1, y1], [x2, y1], [x2, y2], [x1, y2]])
    own = max(truth, key=lambda t: iou(box, t))
    assert iou(result.corners[thin[0]], own) >= iou(box, own)
    assert result.reasons[thin[0]] == REASON_OVERSHOOTS
    converted = np.flatnonzero(~result.fallback)
    assert all(hbb_overshoot(result.corners[k], xyxy[k], ImageParams()) <= 0.2 for k in converted)


def test_moored_ships_without_a_mask_take_their_neighbours_orientation(dota_sample_dir):
    """DOTA's harbour frame at the defaults (tight HBBs): ships side by side whose own pixels give
    no usable mask are inscribed at the orientation their neighbours agree on, even where their
    HBB's sides cross more edges (the neighbours' hulls); before, 5 of them fell back at 0.34-0.38
    IoU and the ships scored 0.860 (shapely IoU, each box against the ground truth its HBB
    overlaps most; the issue's target 0.87)."""
    from hbb2obb.io import read_yolo_hbb, read_yolo_obb

    image = Image.open(next((dota_sample_dir / "images").glob("P0706_left.*"))).convert("RGB")
    labels = read_yolo_hbb(dota_sample_dir / "labels_hbb" / "P0706_left.txt", strict=True)
    xyxy = hbb_xyxy(labels, image.size)
    truth = read_yolo_obb(dota_sample_dir / "labels_obb_gt" / "P0706_left.txt", strict=True).boxes.corners
    result = convert_boxes(image, xyxy, ImageParams(), class_ids=labels.boxes.class_id)
    ships = np.flatnonzero(labels.boxes.class_id == 1)
    scores = []
    for k in ships:
        x1, y1, x2, y2 = xyxy[k]
        box = np.array([[x1, y1], [x2, y1], [x2, y2], [x1, y2]])
        own = max(truth, key=lambda t: iou(box, t))
        scores.append(iou(result.corners[k], own))
    assert len(ships) == 229 and np.mean(scores) >= 0.87
    assert sum(result.reasons[k] == "no usable mask" for k in ships) <= 1


def test_a_tight_fit_that_collapses_to_a_sliver_keeps_its_hbb():
    # thin tight HBBs holding nothing but a bright streak along their diagonal (an unlit
    # motorcycle at night shows its lamp): the tight fit follows the streak and, inscribed in the
    # HBB at that angle, is 47 x 0.5 pixels; the check sends it back to the HBB
    from hbb2obb.converters.image.box import REASON_SLIVER
    from hbb2obb.converters.image.fit import long_edge

    image = Image.new("RGB", (200, 120), (30, 30, 35))
    draw = ImageDraw.Draw(image)
    boxes = []
    for k in range(3):
        x0 = 20 + 60 * k
        draw.line([(x0, 40), (x0 + 44, 60)], fill=(230, 230, 200), width=3)
        boxes.append([x0, 40, x0 + 44, 60])
    tight = replace(ImageParams(), tightness="tight")
    unchecked = convert_boxes(image, boxes, replace(tight, sliver_breadth=0.0))
    assert not unchecked.fallback.any()
    assert all(math.hypot(*long_edge(c)[1]) < 0.3 * 20 for c in unchecked.corners)
    checked = convert_boxes(image, boxes, tight)
    assert checked.fallback.all() and checked.reasons == [REASON_SLIVER] * 3
    assert np.allclose(checked.corners, [[[x1, y1], [x2, y1], [x2, y2], [x1, y2]] for x1, y1, x2, y2 in boxes])


def _dark_small_boxes(body: int, seed: int = 1):
    """Four tight 11 x 21 px boxes on a dark, grainy ground (grey 24, noise 2): bodies of grey
    ``body`` whose only bright part is a lamp's short streak across them, as unlit motorcycles
    at night look."""
    rng = np.random.default_rng(seed)
    ground = np.full((80, 200, 3), 24.0) + rng.normal(0.0, 2.0, (80, 200, 1))
    image = Image.fromarray(np.clip(ground, 0, 255).astype(np.uint8))
    draw = ImageDraw.Draw(image)
    boxes = []
    for k in range(4):
        x0 = 20 + 45 * k
        draw.rectangle([x0 + 1, 31, x0 + 9, 49], fill=(body,) * 3)
        draw.line([(x0 + 2, 35), (x0 + 8, 40)], fill=(70,) * 3, width=2)
        boxes.append([x0, 30, x0 + 11, 51])
    return image, boxes


def test_a_small_faint_box_whose_fit_holds_its_mask_poorly_keeps_its_hbb():
    # a dark body barely darker than the ground: the mask is mostly the lamp's streak, and the
    # fit follows it; such fits go back to their HBBs, as fallbacks scoring 0
    from hbb2obb.converters.image.box import REASON_WEAK, is_weak

    image, boxes = _dark_small_boxes(body=22)
    tight = replace(ImageParams(), tightness="tight", margin=0.0)
    unchecked = convert_boxes(image, boxes, replace(tight, weak_side=0.0), keep_masks=True)
    weak = [k for k, result in enumerate(unchecked.boxes) if is_weak(result, boxes[k], tight)]
    assert len(weak) >= 2 and not unchecked.fallback[weak].any()
    hbbs = np.array([[[x1, y1], [x2, y1], [x2, y2], [x1, y2]] for x1, y1, x2, y2 in boxes], float)
    assert all(not np.allclose(unchecked.corners[k], hbbs[k], atol=0.5) for k in weak)
    checked = convert_boxes(image, boxes, tight)
    assert [k for k, reason in enumerate(checked.reasons) if reason == REASON_WEAK] == weak
    assert checked.fallback[weak].all() and np.allclose(checked.corners[weak], hbbs[weak])
    assert (checked.confidence[weak] == 0).all()
    # the same boxes holding bright bodies stand out: their fits are kept
    image, boxes = _dark_small_boxes(body=120)
    bright = convert_boxes(image, boxes, tight)
    assert REASON_WEAK not in bright.reasons and not bright.fallback.any()
