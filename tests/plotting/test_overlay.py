"""Tests of the per-frame overlays: colours by IoU, unmatched styles, scaling, writing, CLI flags."""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner
from matplotlib import colormaps
from matplotlib.colors import to_rgb
from PIL import Image
from shapely.geometry import Polygon

from hbb2obb.cli.eval import main as eval_main
from hbb2obb.errors import UsageError
from hbb2obb.io import ImageSizes
from hbb2obb.io.written import MANIFEST_NAME
from hbb2obb.plotting.overlay import (
    GROUND_TRUTH,
    IOU_CMAP,
    IOU_RANGE,
    UNMATCHED_GT,
    UNMATCHED_PRED,
    frame_boxes,
    overlay_frame,
    write_overlays,
)
from hbb2obb.scoring.evaluate import evaluate_frames

from conftest import rect

# Frame "a": two matched pairs with very different IoU, one ground-truth box nobody matches,
# one prediction nobody chose. Frame "b": one exact pair.
GT_A = [rect(100, 100, 200, 100), rect(500, 100, 200, 100), rect(100, 400, 100, 60)]
PRED_A = [rect(110, 100, 200, 100), rect(560, 100, 200, 100), rect(600, 400, 100, 60)]
LABELS = {
    "gt/a.txt": "\n".join(GT_A) + "\n",
    "pred/a.txt": "\n".join(PRED_A) + "\n",
    "gt/b.txt": rect(50, 50, 80, 40) + "\n",
    "pred/b.txt": rect(50, 50, 80, 40) + "\n",
}


def shapely_iou(a: str, b: str) -> float:
    pa, pb = (Polygon(np.array(line.split()[1:], float).reshape(4, 2)) for line in (a, b))
    return pa.intersection(pb).area / pa.union(pb).area


def expected_colour(iou: float) -> np.ndarray:
    low, high = IOU_RANGE
    return np.array(IOU_CMAP(np.clip((iou - low) / (high - low), 0, 1))[:3]) * 255


def nearest(pixels: np.ndarray, x0, y0, x1, y1, colour) -> float:
    """Smallest RGB distance to ``colour`` among the pixels of a rectangle (an edge, a corner)."""
    region = pixels[int(y0):int(y1) + 1, int(x0):int(x1) + 1].reshape(-1, 3).astype(float)
    return float(np.linalg.norm(region - np.asarray(colour, float), axis=1).min())


@pytest.fixture
def table(write_labels):
    root = write_labels(LABELS)
    return evaluate_frames(root / "gt", root / "pred").table


def black(width=900, height=600):
    return np.zeros((height, width, 3), np.uint8)


def test_frame_boxes_split_and_mean_iou(table):
    boxes = frame_boxes(table, table.frame_names.index("a"))
    ious = [shapely_iou(GT_A[0], PRED_A[0]), shapely_iou(GT_A[1], PRED_A[1])]
    assert boxes.n_pairs == 2
    assert boxes.mean_iou == pytest.approx(np.mean(ious), abs=1e-12)
    assert sorted(boxes.pred_iou.tolist()) == pytest.approx(sorted(ious), abs=1e-12)
    assert boxes.unmatched_gt[:, :, 0].min() == 100 and boxes.unmatched_gt[:, :, 1].min() == 400
    assert boxes.unmatched_pred[:, :, 0].min() == 600
    exact = frame_boxes(table, table.frame_names.index("b"))
    assert (exact.n_pairs, exact.mean_iou, len(exact.unmatched_gt), len(exact.unmatched_pred)) == (1, 1.0, 0, 0)


def test_prediction_best_match_of_two_ground_truths_takes_the_higher_iou(write_labels):
    gt = [rect(0, 0, 100, 50), rect(10, 0, 100, 50)]
    pred = rect(5, 0, 100, 50)
    root = write_labels({"gt/f.txt": "\n".join(gt) + "\n", "pred/f.txt": pred + "\n"})
    boxes = frame_boxes(evaluate_frames(root / "gt", root / "pred").table, 0)
    assert boxes.n_pairs == 2 and len(boxes.matched_pred) == 1
    assert boxes.pred_iou[0] == pytest.approx(max(shapely_iou(g, pred) for g in gt), abs=1e-12)


def test_colours_follow_iou_and_unmatched_styles(table):
    picture = np.asarray(overlay_frame(black(1600, 1000), table, "a", size=1600))
    assert picture.shape[1] == 1600 and picture.shape[0] > 1000  # not enlarged; a footer below the frame
    high, low = shapely_iou(GT_A[0], PRED_A[0]), shapely_iou(GT_A[1], PRED_A[1])
    assert high > 0.8 and low < 0.55
    # top edge of each prediction, away from the corners
    assert nearest(picture, 150, 97, 250, 103, expected_colour(high)) < 25
    assert nearest(picture, 600, 97, 700, 103, expected_colour(low)) < 25
    assert nearest(picture, 600, 97, 700, 103, expected_colour(high)) > 60
    assert nearest(picture, 100, 397, 200, 403, np.array(to_rgb(UNMATCHED_GT["color"])) * 255) < 25
    assert nearest(picture, 600, 397, 700, 403, np.array(to_rgb(UNMATCHED_PRED["color"])) * 255) < 25
    # inside the boxes the frame stays untouched
    assert picture[150, 200].tolist() == [0, 0, 0]


def test_frame_without_unmatched_boxes_has_no_unmatched_colour(table):
    picture = np.asarray(overlay_frame(black(1600, 1000), table, "b", size=1600))[:1000]
    for style in (UNMATCHED_GT, UNMATCHED_PRED):  # below the corner text, down to the footer
        assert nearest(picture, 0, 40, 1599, 999, np.array(to_rgb(style["color"])) * 255) > 45
    assert nearest(picture, 60, 47, 120, 53, expected_colour(1.0)) < 25


@pytest.mark.parametrize("image_size, size, expected", [
    ((3840, 2160), 800, 800),  # landscape 4K: width is the long side
    ((2160, 3840), 800, 800),  # portrait: height with the footer is the long side
    ((400, 300), 1600, 400),   # small frames are not enlarged
])
def test_long_side_is_the_overlay_size(table, image_size, size, expected):
    width, height = image_size
    picture = overlay_frame(np.zeros((height, width), np.uint8), table, 0, size=size)
    assert max(picture.size) == expected
    assert picture.mode == "RGB"


def test_downscaled_boxes_land_where_the_frame_shrank(write_labels):
    root = write_labels(
        {"gt/f.txt": rect(1000, 1000, 400, 200) + "\n", "pred/f.txt": rect(1000, 1000, 400, 200) + "\n"}
    )
    table = evaluate_frames(root / "gt", root / "pred").table
    picture = np.asarray(overlay_frame(black(3840, 2160), table, "f", size=800))
    scale = 800 / 3840
    y = 1000 * scale
    assert nearest(picture, 1100 * scale, y - 2, 1300 * scale, y + 2, expected_colour(1.0)) < 30
    assert nearest(picture, 0, 0, 150, 150, expected_colour(1.0)) > 100


def test_normalized_labels_are_drawn_in_pixels(write_labels):
    """Without known frame sizes the table keeps [0, 1] coordinates; the overlay scales them."""
    line = "0 0.25 0.5 0.75 0.5 0.75 0.75 0.25 0.75"
    root = write_labels({"gt/f.txt": line + "\n", "pred/f.txt": line + "\n"})
    table = evaluate_frames(root / "gt", root / "pred").table
    assert table.gt.corners.max() <= 1.0
    picture = np.asarray(overlay_frame(black(800, 400), table, "f", size=1600))
    assert nearest(picture, 300, 197, 500, 203, expected_colour(1.0)) < 25  # top edge at y = 0.5 * 400


def test_bad_frame_and_size(table):
    with pytest.raises(UsageError, match="not in the table"):
        overlay_frame(black(), table, "nope")
    with pytest.raises(UsageError, match="out of range"):
        overlay_frame(black(), table, 5)
    with pytest.raises(UsageError, match="at least 64"):
        overlay_frame(black(), table, 0, size=10)


def test_write_overlays_png_jpeg_missing_and_unreadable(table, tmp_path):
    images = tmp_path / "images"
    images.mkdir()
    Image.fromarray(black()).save(images / "a.png")
    out = tmp_path / "out"
    calls = []
    run = write_overlays(table, images, out, size=640, progress=calls.append)
    assert [p.name for p in run.written] == ["a.jpg"]
    assert list(run.skipped) == ["b"] and "no image" in run.skipped["b"]
    assert run.warnings() == [("overlay", f"frame b: {run.skipped['b']}: no overlay written")]
    assert calls == [1, 1]
    with Image.open(out / "a.jpg") as written:
        assert written.format == "JPEG" and max(written.size) == 640
    (images / "b.jpg").write_bytes(b"not a jpeg")
    run = write_overlays(table, images, out, size=640)
    assert [p.name for p in run.written] == ["a.jpg"] and "cannot read image" in run.skipped["b"]


def test_overlay_folder_must_not_be_the_image_folder(table, tmp_path):
    with pytest.raises(UsageError, match="must not be the image folder"):
        write_overlays(table, tmp_path, tmp_path)


def test_eval_cli_writes_overlays_and_warns_per_missing_image(write_labels, tmp_path):
    root = write_labels(LABELS)
    (root / "images").mkdir()
    Image.fromarray(black()).save(root / "images" / "a.jpg")
    result = CliRunner().invoke(eval_main, [str(root / "gt"), str(root / "pred"), "-i", str(root / "images"),
                                            "--overlay", str(root / "ov"), "--overlay_size", "700", "-nb"])
    assert result.exit_code == 0, result.output
    with Image.open(root / "ov" / "a.jpg") as written:
        assert written.size[0] == 700
    assert not (root / "ov" / "b.jpg").exists()
    assert "frame b: no image" in result.stderr
    assert "wrote 1 overlays" in result.stderr and "1 frames without a readable image skipped" in result.stderr
    assert "Average IoU" in result.stdout or "IoU" in result.stdout


def test_eval_cli_overlay_needs_images(write_labels):
    root = write_labels(LABELS)
    result = CliRunner().invoke(eval_main, [str(root / "gt"), str(root / "pred"), "--overlay", str(root / "ov")])
    assert result.exit_code == 2
    assert "--overlay needs the frames" in result.stderr and str(root.resolve() / "images") in result.stderr
    assert not (root / "ov").exists()


def test_eval_cli_overlay_takes_the_images_beside_the_ground_truth(write_labels):
    root = write_labels(LABELS)
    (root / "images").mkdir()
    Image.fromarray(black()).save(root / "images" / "a.jpg")
    args = [str(root / "gt"), str(root / "pred"), "--overlay", str(root / "ov"), "-nb"]
    result = CliRunner().invoke(eval_main, args)
    assert result.exit_code == 0, result.output
    assert f"frames from {(root / 'images').resolve()}" in result.stderr
    assert sorted(p.name for p in (root / "ov").iterdir()) == [MANIFEST_NAME, "a.jpg"]  # the record of what it wrote
    explicit = CliRunner().invoke(eval_main, args + ["-i", str(root / "images")])
    assert explicit.exit_code == 0 and "frames from" not in explicit.stderr
    assert explicit.stdout == result.stdout


def test_eval_cli_overlay_size_too_small(write_labels):
    root = write_labels(LABELS)
    result = CliRunner().invoke(eval_main, [str(root / "gt"), str(root / "pred"), "-i", str(root),
                                            "--overlay", str(root / "ov"), "--overlay_size", "10"])
    assert result.exit_code == 2


def test_sample_overlays(sample_dir, tmp_path):
    sizes = ImageSizes(sample_dir / "images")
    table = evaluate_frames(sample_dir / "labels_obb_gt", sample_dir / "labels_obb_sam_b", sizes=sizes).table
    run = write_overlays(table, sample_dir / "images", tmp_path, size=1600)
    assert sorted(p.name for p in run.written) == ["00164.jpg", "04433.jpg"] and not run.skipped
    for path in run.written:
        with Image.open(path) as written:
            assert max(written.size) == 1600 and written.mode == "RGB"


@pytest.mark.parametrize("gt, pred, pairs", [
    ("", "", 0),                                   # an empty frame
    (rect(10, 10, 0, 0) + "\n", "", 0),            # a zero-area ground-truth box, nothing predicted
    ("", rect(10, 10, 30, 20) + "\n", 0),          # a prediction with no ground truth
])
def test_empty_and_degenerate_frames(write_labels, gt, pred, pairs):
    root = write_labels({"gt/f.txt": gt, "pred/f.txt": pred})
    table = evaluate_frames(root / "gt", root / "pred").table
    assert frame_boxes(table, 0).n_pairs == pairs and np.isnan(frame_boxes(table, 0).mean_iou)
    picture = np.asarray(overlay_frame(black(400, 300), table, "f", size=400))
    assert picture.shape[1] == 400
    # nothing matched: no colour of the IoU scale on the frame itself
    for iou in (0.5, 0.75, 1.0):
        assert nearest(picture[:300], 0, 40, 399, 299, expected_colour(iou)) > 45


def _luminance(rgb) -> np.ndarray:
    """WCAG relative luminance of sRGB colours in [0, 1]."""
    c = np.asarray(rgb, float)[..., :3]
    c = np.where(c <= 0.03928, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    return c @ [0.2126, 0.7152, 0.0722]


def _contrast(a, b) -> np.ndarray:
    la, lb = _luminance(a), _luminance(b)
    return (np.maximum(la, lb) + 0.05) / (np.minimum(la, lb) + 0.05)


def test_iou_colours_stand_out_on_dark_asphalt_and_against_their_halo():
    colours = IOU_CMAP(np.linspace(0, 1, 51))
    asphalt = np.array([60, 60, 60]) / 255
    assert _contrast(colours, asphalt).min() > 2.4  # viridis's low end: 1.07 against it
    assert _contrast(colours, np.zeros(3)).min() > 4.5  # the dark halo edges them on light ground
    assert _contrast(colormaps["viridis"](np.linspace(0, 1, 51)), asphalt).min() < 1.2
    assert np.all(np.diff(_luminance(colours)) > 0)  # lighter means a better IoU, in grey too


def test_ground_truth_is_drawn_thin_under_the_predictions(table):
    picture = np.asarray(overlay_frame(black(1600, 1000), table, "a", size=1600))
    white = np.array(to_rgb(GROUND_TRUTH["color"])) * 255
    # the matched box at x 500..700 is predicted 60 px to the right: its left edge is ground truth alone
    assert nearest(picture, 497, 130, 503, 170, white) < 40
    assert nearest(picture, 497, 130, 503, 170, expected_colour(0.5)) > 60
    # far from every box the frame stays black
    assert nearest(picture, 1200, 600, 1500, 900, white) > 300


def test_eval_cli_overlay_never_replaces_a_picture_it_did_not_write(write_labels):
    root = write_labels(LABELS)
    (root / "images").mkdir()
    Image.fromarray(black()).save(root / "images" / "a.jpg")
    (root / "ov").mkdir()
    (root / "ov" / "a.jpg").write_bytes(b"somebody's picture")
    args = [str(root / "gt"), str(root / "pred"), "--overlay", str(root / "ov"), "-nb", "-o", str(root / "m.yaml")]
    result = CliRunner().invoke(eval_main, args)
    assert result.exit_code == 2 and str(root / "ov" / "a.jpg") in result.stderr and "--overwrite" in result.stderr
    assert (root / "ov" / "a.jpg").read_bytes() == b"somebody's picture"
    assert not (root / "m.yaml").exists()  # checked before the first output was written
    assert CliRunner().invoke(eval_main, args + ["--overwrite"]).exit_code == 0
    assert Image.open(root / "ov" / "a.jpg").format == "JPEG"
    assert CliRunner().invoke(eval_main, args).exit_code == 0  # its own overlay now: replaced freely


@pytest.mark.parametrize("command", ["eval", "analyze"])
@pytest.mark.parametrize("where, overwrite", [("notes.txt/ov", []), ("ov", ["--overwrite"])])
def test_cli_overlay_folder_that_cannot_be_written_is_refused_before_the_first_write(write_labels, command, where,
                                                                                      overwrite):
    """--overlay under a file, or an overlay JPEG's name taken by a folder: exit 2 with one line naming
    --overlay, and the other outputs not written (was: a traceback and exit 1, after -o/--pairs)."""
    from hbb2obb.cli.analyze import main as analyze_main

    root = write_labels({**LABELS, "notes.txt": "mine\n"})
    (root / "images").mkdir()
    Image.fromarray(black()).save(root / "images" / "a.jpg")
    (root / "ov" / "a.jpg").mkdir(parents=True)
    before = sorted(p.relative_to(root).as_posix() for p in root.rglob("*"))
    main, other = (eval_main, "-o") if command == "eval" else (analyze_main, "--pairs")
    result = CliRunner().invoke(main, [str(root / "gt"), str(root / "pred"), "-i", str(root / "images"), "-nb",
                                       other, str(root / ("m.yaml" if other == "-o" else "p.csv")),
                                       "--overlay", str(root / where), *overwrite])
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)  # no traceback
    errors = result.stderr.splitlines()
    assert len(errors) == 1 and errors[0].startswith(f"hbb2obb-{command}: error: --overlay ")
    assert sorted(p.relative_to(root).as_posix() for p in root.rglob("*")) == before  # nothing written
