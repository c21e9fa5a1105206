"""Tests of the contact sheets: crop windows, tile order and pixels, outlines, captions, prompts."""

from __future__ import annotations

import math

import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import to_rgb
from PIL import Image
from shapely.geometry import Polygon

from hbb2obb.analysis.cuts import worst_pairs
from hbb2obb.analysis.identity_baseline import match_identity_baseline
from hbb2obb.errors import UsageError
from hbb2obb.io import ImageSizes
from hbb2obb.io.written import MANIFEST_NAME
from hbb2obb.plotting.contact_sheet import (
    CAPTION,
    GAP,
    GT_STYLE,
    HBB_STYLE,
    HEADER,
    MIN_WIDTH,
    NO_IMAGE_GREY,
    PRED_STYLE,
    contact_sheet,
    crop_windows,
    tile_captions,
    write_contact_sheet,
)
from hbb2obb.plotting.pixels import FrameImages
from hbb2obb.scoring.evaluate import EvalSettings, evaluate_frames

from conftest import rect

TILE = 200
RED, GREEN, BLUE = (200, 30, 30), (30, 160, 30), (30, 30, 200)


def render(fig) -> np.ndarray:
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    return np.asarray(canvas.buffer_rgba())[..., :3].copy()


def rgb255(colour) -> np.ndarray:
    return np.array(to_rgb(colour)) * 255


def nearest(pixels, x0, y0, x1, y1, colour) -> float:
    region = pixels[int(y0):int(y1) + 1, int(x0):int(x1) + 1].reshape(-1, 3).astype(float)
    return float(np.linalg.norm(region - np.asarray(colour, float), axis=1).min())


def tile_origin(slot: int, columns: int = 6) -> tuple[int, int]:
    """Top-left pixel of a tile in the rendered sheet (the header sits above the tiles)."""
    return GAP + (slot % columns) * (TILE + GAP), HEADER + CAPTION + (slot // columns) * (CAPTION + TILE + GAP)


def blocks_image() -> np.ndarray:
    """600 x 200: a red, a green and a blue block, so a tile's colour tells which box it shows."""
    image = np.zeros((200, 600, 3), np.uint8)
    for k, colour in enumerate((RED, GREEN, BLUE)):
        image[:, 200 * k:200 * (k + 1)] = colour
    return image


GT = [rect(80, 80, 40, 40), rect(280, 80, 40, 40), rect(480, 80, 40, 40)]
PRED = [rect(84, 80, 40, 40), rect(280, 90, 40, 30), rect(480, 80, 40, 40, cls=1)]


@pytest.fixture
def blocks(write_labels):
    root = write_labels({"gt/f.txt": "\n".join(GT) + "\n", "pred/f.txt": "\n".join(PRED) + "\n"})
    return root, evaluate_frames(root / "gt", root / "pred", EvalSettings(class_agnostic=True)).table


def corners_of(line: str) -> np.ndarray:
    return np.array(line.split()[1:], float).reshape(4, 2)


def shapely_iou(a: str, b: str) -> float:
    pa, pb = Polygon(corners_of(a)), Polygon(corners_of(b))
    return pa.intersection(pb).area / pa.union(pb).area


@pytest.mark.parametrize("sets, margin, min_side, expected", [
    ([[[[10, 10], [30, 10], [30, 20], [10, 20]]]], 0.5, 40, [[0, -5, 40]]),
    # the prediction widens the union to x 10..50: extent 40, side 40 * 1.5
    ([[[[10, 10], [30, 10], [30, 20], [10, 20]]], [[[30, 10], [50, 10], [50, 20], [30, 20]]]], 0.25, 0,
     [[0, -15, 60]]),
    # a NaN prediction (unmatched row) is ignored
    ([[[[10, 10], [30, 10], [30, 20], [10, 20]]], np.full((1, 4, 2), np.nan)], 0.5, 40, [[0, -5, 40]]),
    # a tiny box gets the smallest side, centred on it
    ([[[[100, 100], [102, 100], [102, 102], [100, 102]]]], 0.3, 40, [[81, 81, 40]]),
    # a zero-area box (a point) still gets a positive window
    ([[[[5, 5], [5, 5], [5, 5], [5, 5]]]], 0.3, 0, None),
    ([np.zeros((0, 4, 2))], 0.3, 40, np.zeros((0, 3))),
])
def test_crop_windows(sets, margin, min_side, expected):
    windows = crop_windows(*(np.asarray(s, float) for s in sets), margin=margin, min_side=min_side)
    if expected is None:
        assert windows.shape == (1, 3) and windows[0, 2] > 0 and np.isfinite(windows).all()
        assert windows[0, 0] + windows[0, 2] / 2 == pytest.approx(5)
    else:
        np.testing.assert_allclose(windows, np.asarray(expected, float).reshape(-1, 3))


def test_tiles_follow_rank_order_and_show_their_crop(blocks):
    _, table = blocks
    fig = contact_sheet(table, [2, 0, 1], {"f": blocks_image()}, title="order")
    pixels = render(fig)
    assert pixels.shape[:2] == (HEADER + CAPTION + TILE + GAP, MIN_WIDTH)
    for slot, colour in enumerate((BLUE, RED, GREEN)):
        x, y = tile_origin(slot)
        # the crop is centred on the pair, inside a box: the block's own colour, unresampled
        assert nearest(pixels, x + TILE // 2 - 3, y + TILE // 2 - 3, x + TILE // 2 + 3, y + TILE // 2 + 3,
                       colour) < 4
        # tile corners are still inside the same block (the window is ~70 px wide)
        assert nearest(pixels, x + 2, y + 2, x + 4, y + 4, colour) < 4


def test_outlines_are_drawn_where_the_boxes_are(blocks):
    root, table = blocks
    hbb = np.full((len(table.gt), 4, 2), np.nan)
    hbb[0] = corners_of(rect(70, 70, 60, 60))
    pixels = render(contact_sheet(table, [0], {"f": blocks_image()}, hbb=hbb))
    window = crop_windows(table.gt.corners[[0]], table.pred.corners[[0]], hbb[[0]])[0]
    x, y = tile_origin(0)

    def at(px, py):
        return x + (px - window[0]) * TILE / window[2], y + (py - window[1]) * TILE / window[2]

    gx, gy = at(80, 100)  # ground truth: left edge, halfway down
    assert nearest(pixels, gx - 2, gy - 2, gx + 2, gy + 2, rgb255(GT_STYLE["color"])) < 40
    px0, py0 = at(124, 85)  # prediction: right edge (x = 124), dash-dot, so look along it
    _, py1 = at(124, 115)
    assert nearest(pixels, px0 - 2, py0, px0 + 2, py1, rgb255(PRED_STYLE["color"])) < 40
    hx0, hy = at(75, 70)  # prompt: top edge at y = 70
    hx1, _ = at(125, 70)
    assert nearest(pixels, hx0, hy - 2, hx1, hy + 2, rgb255(HBB_STYLE["color"])) < 40
    without = render(contact_sheet(table, [0], {"f": blocks_image()}))
    assert nearest(without, x, y, x + TILE - 1, y + TILE - 1, rgb255(HBB_STYLE["color"])) > 80


def test_small_boxes_are_enlarged(write_labels):
    root = write_labels({"gt/f.txt": rect(50, 50, 8, 4) + "\n", "pred/f.txt": rect(51, 50, 8, 4) + "\n"})
    table = evaluate_frames(root / "gt", root / "pred").table
    window = crop_windows(table.gt.corners, table.pred.corners, min_side=40)[0]
    assert window[2] == 40  # the floor, not 9 * 1.6
    pixels = render(contact_sheet(table, [0], {"f": np.full((120, 120, 3), 90, np.uint8)}))
    x, y = tile_origin(0)
    # the 8 px box spans 8 * 200 / 40 = 40 tile pixels: its left and right edges are 40 px apart
    left = x + (50 - window[0]) * TILE / 40
    right = x + (58 - window[0]) * TILE / 40
    mid = y + TILE / 2
    assert right - left == pytest.approx(40)
    for edge in (left, right):
        assert nearest(pixels, edge - 2, mid - 2, edge + 2, mid + 2, rgb255(GT_STYLE["color"])) < 40


def test_captions_carry_frame_line_class_iou_and_angle(blocks):
    _, table = blocks
    captions = tile_captions(table, [0, 1, 2], {0: "Car", 1: "Truck"})
    for rank, row in enumerate(range(3)):
        head, numbers = captions[rank].split("\n")
        assert head == f"#{rank + 1} f:{row + 1}"
        assert f"IoU {shapely_iou(GT[row], PRED[row]):.3f}" in numbers
    assert "\u0394\u03b8 0.0\u00b0" in captions[0]
    assert captions[2].split("\n")[1].startswith("Car as Truck")  # class-agnostic cross-class pair


def test_caption_angle_error_is_the_orientation_difference(write_labels):
    def rotated(angle, cx=100.0, cy=100.0, w=60.0, h=20.0):
        t = math.radians(angle)
        u, v = np.array([math.cos(t), math.sin(t)]), np.array([-math.sin(t), math.cos(t)])
        pts = [np.array([cx, cy]) + sx * w / 2 * u + sy * h / 2 * v for sx, sy in ((-1, -1), (1, -1), (1, 1), (-1, 1))]
        return "0 " + " ".join(f"{c:.6f}" for p in pts for c in p)

    root = write_labels({"gt/f.txt": rotated(10) + "\n", "pred/f.txt": rotated(27.5) + "\n"})
    table = evaluate_frames(root / "gt", root / "pred").table
    assert "\u0394\u03b8 17.5\u00b0" in tile_captions(table, [0])[0]


def test_unmatched_rows_and_long_names(write_labels):
    name = "DJI_20240101_123456_0001_very_long_flight_name_frame_000123"
    root = write_labels({f"gt/{name}.txt": rect(0, 0, 10, 10) + "\n" + rect(100, 100, 10, 10) + "\n",
                         f"pred/{name}.txt": rect(3, 0, 10, 10) + "\n"})
    table = evaluate_frames(root / "gt", root / "pred", EvalSettings(iou_threshold=0.6)).table
    assert not table.matched.any()
    captions = tile_captions(table, [0, 1], limit=30)
    best = shapely_iou(rect(0, 0, 10, 10), rect(3, 0, 10, 10))
    assert captions[0].endswith(f"unmatched (best IoU {best:.2f})")
    assert captions[1].endswith("unmatched (best IoU 0.00)")
    head = captions[0].split("\n")[0]
    assert "\u2026" in head and len(head) <= 30 and head.endswith("000123:1") and head.startswith("#1 DJI_")


def test_missing_image_gives_grey_tiles_and_is_recorded(blocks, tmp_path):
    _, table = blocks
    images = FrameImages({})
    pixels = render(contact_sheet(table, [1], images))
    x, y = tile_origin(0)
    assert nearest(pixels, x + 2, y + 2, x + 4, y + 4, (NO_IMAGE_GREY,) * 3) == 0
    assert list(images.missing) == ["f"]
    missing = write_contact_sheet(tmp_path / "sheet.png", table, [1], tmp_path)
    assert list(missing) == ["f"] and "no image" in missing["f"]
    assert (tmp_path / "sheet.png").stat().st_size > 0


@pytest.mark.parametrize("suffix", ["png", "jpg"])
def test_png_and_jpeg_frames_from_a_folder(blocks, tmp_path, suffix):
    root, table = blocks
    (tmp_path / "img").mkdir()
    Image.fromarray(blocks_image()).save(tmp_path / "img" / f"f.{suffix}", quality=95)
    missing = write_contact_sheet(tmp_path / "sheet.png", table, [2], tmp_path / "img")
    assert missing == {}
    with Image.open(tmp_path / "sheet.png") as sheet:
        pixels = np.asarray(sheet.convert("RGB"))
    x, y = tile_origin(0)
    assert nearest(pixels, x + 2, y + 2, x + 4, y + 4, BLUE) < 10


def test_normalized_labels_without_sizes_are_scaled_to_the_image(write_labels):
    box = "0 0.8 0.4 0.9 0.4 0.9 0.6 0.8 0.6"  # right-hand blue block of the 600 x 200 image
    root = write_labels({"gt/f.txt": box + "\n", "pred/f.txt": box + "\n"})
    table = evaluate_frames(root / "gt", root / "pred").table
    assert table.gt.corners.max() <= 1
    pixels = render(contact_sheet(table, [0], {"f": blocks_image()}))
    x, y = tile_origin(0)
    assert nearest(pixels, x + 2, y + 2, x + 4, y + 4, BLUE) < 4


def test_empty_sheet_and_legend(blocks):
    _, table = blocks
    fig = contact_sheet(table, [], {"f": blocks_image()}, title="nothing")
    assert [round(v) for v in fig.get_size_inches() * fig.dpi] == [MIN_WIDTH, HEADER + CAPTION + TILE + GAP]
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["ground truth", "prediction"]
    assert "no pairs to show" in [t.get_text() for t in fig.axes[0].texts]
    with_prompts = contact_sheet(table, [0], {"f": blocks_image()}, hbb=np.full((3, 4, 2), np.nan))
    assert [t.get_text() for t in with_prompts.legends[0].get_texts()] == ["ground truth", "prediction", "HBB prompt"]


@pytest.mark.parametrize("rows", [[3], [-1]])
def test_rows_out_of_range(blocks, rows):
    _, table = blocks
    with pytest.raises(UsageError, match="index the 3 ground-truth boxes"):
        contact_sheet(table, rows)


def test_identity_baseline_prompt_corners_align_with_ground_truth(write_labels):
    root = write_labels({"gt/f.txt": rect(10, 10, 40, 20) + "\n" + rect(200, 200, 30, 30) + "\n",
                         "pred/f.txt": rect(10, 10, 40, 20) + "\n",
                         "hbb/f.txt": "0 31 20 44 24\n0 500 500 10 10\n"})
    table = evaluate_frames(root / "gt", root / "pred").table
    prompts = match_identity_baseline(table, root / "hbb").prompt_corners
    assert prompts.shape == (2, 4, 2)
    assert prompts[0].tolist() == [[9, 8], [53, 8], [53, 32], [9, 32]]
    assert np.isnan(prompts[1]).all()  # its only candidate prompt is far away


def test_sample_sheet_of_the_24_worst(sample_dir, tmp_path):
    sizes = ImageSizes(sample_dir / "images")
    table = evaluate_frames(sample_dir / "labels_obb_gt", sample_dir / "labels_obb_sam_b", sizes=sizes).table
    rows = worst_pairs(table, 24)
    missing = write_contact_sheet(tmp_path / "worst.png", table, rows, sample_dir / "images", title="worst")
    assert missing == {}
    with Image.open(tmp_path / "worst.png") as sheet:
        assert sheet.size == (GAP + 6 * (TILE + GAP), HEADER + 4 * (CAPTION + TILE + GAP))


@pytest.fixture(scope="module")
def small_dataset(tmp_path_factory):
    from hbb2obb.synthetic.dataset import generate_dataset

    return generate_dataset(tmp_path_factory.mktemp("sheets"), n_frames=3, width=640, height=360, seed=3,
                            boxes_per_frame=(8, 10))


def analyze_args(info, *extra):
    return [str(info.gt_dir), str(info.pred_dir), "-mp", str(info.map_path), "-nb", *extra]


def test_analyze_writes_worst_sheets_with_images_and_out_dir(small_dataset, tmp_path):
    from click.testing import CliRunner

    from hbb2obb.cli.analyze import main as analyze_main

    out = tmp_path / "out"
    result = CliRunner().invoke(analyze_main, analyze_args(small_dataset, "-i", str(small_dataset.images_dir),
                                                           "--worst", "5", "-o", str(out)))
    assert result.exit_code == 0, result.output
    for name in ("worst_iou.png", "worst_angle.png"):
        with Image.open(out / name) as sheet:
            assert sheet.size == (GAP + 5 * (TILE + GAP), HEADER + CAPTION + TILE + GAP)
    assert "contact sheet" not in result.stderr
    # without -i: the images folder beside the ground truth is taken, as --overlay takes it, and named
    assert small_dataset.images_dir == small_dataset.gt_dir.parent / "images"
    result = CliRunner().invoke(analyze_main, analyze_args(small_dataset, "--worst", "5", "-o", str(tmp_path / "no")))
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in (tmp_path / "no").glob("worst_*.png")) == ["worst_angle.png", "worst_iou.png"]
    assert str(small_dataset.images_dir) in result.stderr


def test_analyze_sheets_warn_about_frames_without_images_and_write_overlays(small_dataset, tmp_path):
    from click.testing import CliRunner

    from hbb2obb.cli.analyze import main as analyze_main

    images = tmp_path / "images"
    images.mkdir()
    first = sorted(small_dataset.images_dir.iterdir())[0]
    (images / first.name).write_bytes(first.read_bytes())
    result = CliRunner().invoke(analyze_main, analyze_args(small_dataset, "-i", str(images), "--worst", "40",
                                                           "-o", str(tmp_path / "out"), "--overlay",
                                                           str(tmp_path / "ov"), "--overlay_size", "300"))
    assert result.exit_code == 0, result.output
    assert (tmp_path / "out" / "worst_iou.png").is_file()
    assert "tiles show the boxes without pixels" in result.stderr
    assert sorted(p.name for p in (tmp_path / "ov").iterdir()) == [MANIFEST_NAME, first.stem + ".jpg"]
    assert "wrote 1 overlays" in result.stderr
    # no -i: the frames beside the ground truth (GT_DIR/../images), said on stderr
    result = CliRunner().invoke(analyze_main, analyze_args(small_dataset, "--overlay", str(tmp_path / "x")))
    assert result.exit_code == 0, result.output
    assert f"frames from {small_dataset.images_dir.resolve()}" in result.stderr
    assert len(list((tmp_path / "x").glob("*.jpg"))) == 3


def test_zero_area_ground_truth_gets_a_tile(write_labels):
    root = write_labels({"gt/f.txt": rect(50, 50, 0, 0) + "\n", "pred/f.txt": rect(50, 50, 10, 10) + "\n"})
    table = evaluate_frames(root / "gt", root / "pred", EvalSettings(iou_threshold=0.0)).table
    assert not table.matched[0]  # IoU 0 is not strictly above a threshold of 0
    pixels = render(contact_sheet(table, [0], {"f": np.full((120, 120, 3), 90, np.uint8)}))
    x, y = tile_origin(0)
    assert nearest(pixels, x + 2, y + 2, x + 4, y + 4, (90, 90, 90)) < 4  # a 40 px window inside the frame
    assert tile_captions(table, [0])[0].endswith("unmatched (best IoU 0.00)")
