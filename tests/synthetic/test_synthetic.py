"""Tests of the synthetic dataset generator (labels, simulated errors, rendered images)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml
from PIL import Image

from hbb2obb.errors import UsageError
from hbb2obb.synthetic.dataset import (
    CLASS_NAMES,
    HBB_MAX_LOOSEN_4K,
    HBB_MAX_TIGHTEN_4K,
    REFERENCE_WIDTH,
    ErrorRates,
    generate_dataset,
    is_axis_aligned,
    main,
)


def _rows(path: Path) -> list[list[float]]:
    return [[float(v) for v in line.split()] for line in path.read_text(encoding="utf-8").splitlines()]


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    """The default dataset (8 frames at 1920x1080), labels only."""
    return generate_dataset(tmp_path_factory.mktemp("synthetic"), images=False)


def test_same_seed_gives_byte_identical_files(tmp_path):
    kwargs = dict(n_frames=4, width=480, height=270, seed=7, images=True)
    generate_dataset(tmp_path / "a", **kwargs)
    generate_dataset(tmp_path / "b", **kwargs)
    first, second = _files(tmp_path / "a"), _files(tmp_path / "b")
    assert len(first) == 1 + 3 * 4 + 3  # map, gt/hbb/images per frame, three prediction files
    assert first == second


def test_different_seed_differs(tmp_path):
    a = generate_dataset(tmp_path / "a", n_frames=2, seed=1, images=False)
    b = generate_dataset(tmp_path / "b", n_frames=2, seed=2, images=False)
    assert (a.gt_dir / "frame_0000.txt").read_bytes() != (b.gt_dir / "frame_0000.txt").read_bytes()
    assert (a.pred_dir / "frame_0001.txt").read_bytes() != (b.pred_dir / "frame_0001.txt").read_bytes()


def test_frame_content_does_not_depend_on_frame_count(tmp_path):
    a = generate_dataset(tmp_path / "a", n_frames=2, images=False)
    b = generate_dataset(tmp_path / "b", n_frames=5, images=False)
    for name in a.frame_names:
        assert (a.gt_dir / f"{name}.txt").read_bytes() == (b.gt_dir / f"{name}.txt").read_bytes()
        assert (a.hbb_dir / f"{name}.txt").read_bytes() == (b.hbb_dir / f"{name}.txt").read_bytes()


def test_counts_agree_with_files(dataset):
    assert dataset.frame_names == tuple(f"frame_{i:04d}" for i in range(8))
    assert len(dataset.missing_pred_frames) == 1
    assert dataset.boxes == sum(dataset.boxes_per_frame)
    expected_pred_lines = 0
    for name, count in zip(dataset.frame_names, dataset.boxes_per_frame):
        assert 0 < count <= 40
        assert len(_rows(dataset.gt_dir / f"{name}.txt")) == count
        assert len(_rows(dataset.hbb_dir / f"{name}.txt")) == count
        pred_path = dataset.pred_dir / f"{name}.txt"
        assert pred_path.exists() == (name not in dataset.missing_pred_frames)
        if pred_path.exists():
            expected_pred_lines += count
    written = sum(len(_rows(p)) for p in dataset.pred_dir.glob("*.txt"))
    assert written == expected_pred_lines - dataset.dropped + dataset.extras
    # the dataset exists to exercise every kind of error
    assert min(dataset.dropped, dataset.extras, dataset.turned, dataset.widened, dataset.edge_touching) > 0


def test_label_line_formats(dataset):
    gt_line = (dataset.gt_dir / "frame_0000.txt").read_text().splitlines()[0].split()
    assert len(gt_line) == 9 and all(token.lstrip("-").isdigit() for token in gt_line)
    hbb_line = (dataset.hbb_dir / "frame_0000.txt").read_text().splitlines()[0].split()
    assert len(hbb_line) == 5 and all(len(token.split(".")[1]) == 1 for token in hbb_line[1:])
    for path in dataset.pred_dir.glob("*.txt"):
        assert all(len(row) == 9 for row in _rows(path))


def test_gt_corners_on_or_inside_frame_and_realistic_mix(dataset):
    corners = []
    for name in dataset.frame_names:
        rows = np.array(_rows(dataset.gt_dir / f"{name}.txt"))
        corners.append(rows[:, 1:].reshape(-1, 4, 2))
    corners = np.concatenate(corners)
    assert (corners >= 0).all()
    assert (corners[..., 0] <= dataset.width - 1).all() and (corners[..., 1] <= dataset.height - 1).all()
    assert (corners == np.round(corners)).all()
    aligned = is_axis_aligned(corners)
    assert aligned.sum() == dataset.axis_aligned
    assert 0.08 <= aligned.mean() <= 0.3
    edges = corners[~aligned][:, 1] - corners[~aligned][:, 0]
    angles = np.degrees(np.arctan2(edges[:, 1], edges[:, 0])) % 180
    assert np.histogram(angles, bins=6, range=(0, 180))[0].min() > 0  # rotated at all angles
    # every polygon is a cyclic (convex, clockwise in image coordinates) quadrilateral
    a, b = np.roll(corners, -1, 1) - corners, np.roll(corners, -2, 1) - np.roll(corners, -1, 1)
    turn = a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]
    assert (turn > 0).all()


def test_predictions_are_cyclic_quadrilaterals(dataset):
    for path in dataset.pred_dir.glob("*.txt"):
        corners = np.array(_rows(path))[:, 1:].reshape(-1, 4, 2)
        a, b = np.roll(corners, -1, 1) - corners, np.roll(corners, -2, 1) - np.roll(corners, -1, 1)
        turn = a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]
        assert ((turn > 0).all(axis=1) | (turn < 0).all(axis=1)).all()  # some are counterclockwise


def test_gt_boxes_do_not_overlap(dataset):
    shapely = pytest.importorskip("shapely")
    for name in dataset.frame_names:
        polygons = [shapely.Polygon(row[1:].reshape(4, 2)) for row in np.array(_rows(dataset.gt_dir / f"{name}.txt"))]
        tree = shapely.STRtree(polygons)
        for i, polygon in enumerate(polygons):
            hits = [j for j in tree.query(polygon) if j != i]
            assert all(polygon.intersection(polygons[j]).area == 0 for j in hits)


def test_hbb_bounds_gt_within_loosening(dataset):
    scale = dataset.width / REFERENCE_WIDTH
    loosen, tighten = HBB_MAX_LOOSEN_4K * scale + 0.1, HBB_MAX_TIGHTEN_4K * scale + 0.1
    for name in dataset.frame_names:
        gt = np.array(_rows(dataset.gt_dir / f"{name}.txt"))
        hbb = np.array(_rows(dataset.hbb_dir / f"{name}.txt"))
        assert (gt[:, 0] == hbb[:, 0]).all()
        corners = gt[:, 1:].reshape(-1, 4, 2)
        lo, hi = corners.min(1), corners.max(1)
        box_lo, box_hi = hbb[:, 1:3] - hbb[:, 3:5] / 2, hbb[:, 1:3] + hbb[:, 3:5] / 2
        assert (box_lo >= lo - loosen).all() and (box_lo <= lo + tighten).all()
        assert (box_hi <= hi + loosen).all() and (box_hi >= hi - tighten).all()
        assert (hbb[:, 3:5] > 0).all()


def test_classes_in_label_map(dataset):
    label_map = yaml.safe_load(dataset.map_path.read_text())
    assert label_map == CLASS_NAMES == {0: "Car", 1: "Bus", 2: "Truck", 3: "Motorcycle"}
    seen = set()
    for folder in (dataset.gt_dir, dataset.hbb_dir, dataset.pred_dir):
        for path in folder.glob("*.txt"):
            seen |= {int(row[0]) for row in _rows(path)}
    assert seen <= set(label_map) and 0 in seen


def test_class_subset(tmp_path):
    info = generate_dataset(tmp_path, n_frames=2, images=False, classes=[1, 3])
    ids = {int(row[0]) for name in info.frame_names for row in _rows(info.gt_dir / f"{name}.txt")}
    assert ids <= {1, 3}


def test_images_have_frame_size(tmp_path):
    info = generate_dataset(tmp_path, n_frames=2, width=640, height=360, image_format="png")
    assert info.images_dir is not None
    for name in info.frame_names:
        with Image.open(info.images_dir / f"{name}.png") as image:
            assert image.size == (640, 360) and image.mode == "RGB"
    assert generate_dataset(tmp_path / "none", n_frames=1, images=False).images_dir is None


def test_shaded_rims_darken_bodies_toward_their_outline_and_nothing_else():
    from hbb2obb.synthetic.dataset import simulate_frame
    from hbb2obb.synthetic.render import RIM_BODY_BREADTH, _rounded_inside_distance, render_frame
    from hbb2obb.synthetic.scene import CORNER_RADIUS

    frame = simulate_frame("f", 7, 0, width=1920, height=1080)
    default, flat, shaded = (np.asarray(render_frame(frame, np.random.default_rng(1), **kw), dtype=np.float64)
                             for kw in ({}, {"rims": False}, {"rims": True}))
    assert np.array_equal(default, flat)  # flat bodies by default, as the converter's tests pin them
    near_any, rim_ratios, core_ratios = np.zeros((1080, 1920), bool), [], []
    for cls, centre, length, breadth, heading in zip(frame.gt.class_id, frame.centre, frame.length,
                                                     frame.breadth, frame.heading):
        x0, y0 = (max(int(v - length) - 6, 0) for v in centre)  # a square around the vehicle
        ys, xs = np.mgrid[y0:min(y0 + int(2 * length) + 12, 1080), x0:min(x0 + int(2 * length) + 12, 1920)] + 0.5
        a = np.radians(heading)
        t = (xs - centre[0]) * np.cos(a) + (ys - centre[1]) * np.sin(a)
        s = -(xs - centre[0]) * np.sin(a) + (ys - centre[1]) * np.cos(a)
        body = RIM_BODY_BREADTH.get(int(cls), 1.0) * breadth
        inside = _rounded_inside_distance(t, s, length / 2, body / 2, CORNER_RADIUS[int(cls)] * breadth)[0]
        window = (slice(y0, y0 + inside.shape[0]), slice(x0, x0 + inside.shape[1]))
        near_any[window] |= inside > -4.0  # the rim, the outline's rasterization and the final blur
        if int(cls) in RIM_BODY_BREADTH and body >= 12:
            rim, core = (inside > 0.5) & (inside < 1.5), inside > 0.3 * body
            rim_ratios.append(shaded[window][rim].sum() / flat[window][rim].sum())
            core_ratios.append(shaded[window][core].sum() / flat[window][core].sum())
    assert rim_ratios and np.array_equal(flat[~near_any], shaded[~near_any])
    assert max(rim_ratios) < 0.85 and min(core_ratios) > 0.97, (rim_ratios, core_ratios)


def test_perfect_converter_reproduces_truth(tmp_path):
    info = generate_dataset(tmp_path, n_frames=4, images=False, errors=ErrorRates.none())
    assert info.missing_pred_frames == () and info.dropped == info.extras == info.turned == 0
    for name in info.frame_names:
        assert (info.pred_dir / f"{name}.txt").read_bytes() == (info.gt_dir / f"{name}.txt").read_bytes()


def test_rerun_removes_stale_prediction_file(tmp_path):
    first = generate_dataset(tmp_path, n_frames=4, images=False, errors=ErrorRates.none())
    assert len(list(first.pred_dir.glob("*.txt"))) == 4
    second = generate_dataset(tmp_path, n_frames=4, images=False)
    (missing,) = second.missing_pred_frames
    assert not (second.pred_dir / f"{missing}.txt").exists()


def test_one_decimal_predictions(tmp_path):
    info = generate_dataset(tmp_path, n_frames=1, images=False, pred_decimals=1)
    tokens = (info.pred_dir / "frame_0000.txt").read_text().split()
    assert any("." in token for token in tokens)


def test_bad_arguments_raise(tmp_path):
    from hbb2obb.errors import UsageError

    with pytest.raises(UsageError):
        generate_dataset(tmp_path, n_frames=0)
    with pytest.raises(UsageError):
        generate_dataset(tmp_path, classes=[9])


def test_cli_writes_dataset(tmp_path, capsys):
    out = tmp_path / "demo"
    assert main([str(out), "--frames", "2", "--seed", "3", "--no-images", "--width", "800", "--height", "600"]) == 0
    assert sorted(p.name for p in (out / "labels_obb_gt").iterdir()) == ["frame_0000.txt", "frame_0001.txt"]
    assert not (out / "images").exists()
    assert "wrote 2 frames" in capsys.readouterr().out


def test_tight_hbbs_are_the_whole_pixel_bounds_of_the_same_vehicles(tmp_path):
    loose = generate_dataset(tmp_path / "loose", n_frames=2, seed=5, images=False)
    tight = generate_dataset(tmp_path / "tight", n_frames=2, seed=5, images=False, tight=True)
    for name in tight.frame_names:
        gt = (tight.gt_dir / f"{name}.txt").read_bytes()
        assert gt == (loose.gt_dir / f"{name}.txt").read_bytes()  # same vehicles, only the prompts differ
        corners = np.array([row[1:] for row in _rows(tight.gt_dir / f"{name}.txt")]).reshape(-1, 4, 2)
        hbb = np.array([row[1:] for row in _rows(tight.hbb_dir / f"{name}.txt")])
        lo, hi = hbb[:, :2] - hbb[:, 2:] / 2, hbb[:, :2] + hbb[:, 2:] / 2
        np.testing.assert_allclose(lo, corners.min(axis=1), atol=1e-9)
        np.testing.assert_allclose(hi, corners.max(axis=1), atol=1e-9)
        assert np.all(lo == np.round(lo)) and np.all(hi == np.round(hi))  # what `tightness auto` reads as tight
    assert (tight.hbb_dir / "frame_0000.txt").read_bytes() != (loose.hbb_dir / "frame_0000.txt").read_bytes()
    assert main([str(tmp_path / "cli"), "--frames", "1", "--seed", "5", "--no-images", "--tight"]) == 0
    assert (tmp_path / "cli" / "labels_hbb" / "frame_0000.txt").read_bytes() == \
        (tight.hbb_dir / "frame_0000.txt").read_bytes()


def test_lots_layout_parks_small_vehicles_in_rows(tmp_path):
    kwargs = dict(n_frames=2, boxes_per_frame=(30, 60), width=640, height=480, seed=11, classes={0: 1, 1: 1, 2: 1},
                  tight=True, layout="lots")
    info = generate_dataset(tmp_path / "a", **kwargs)
    assert _files(tmp_path / "a") == _files(generate_dataset(tmp_path / "b", **kwargs).root)
    for frame in info.frames:
        assert frame.lots and not frame.roads and len(frame.gt) >= 20
        cars = frame.gt.class_id == 0
        # one ground sampling per frame whatever the width: cars 8-20 px broad, buses and trucks 1.4 times
        assert ((frame.breadth[cars] >= 0.93 * 8) & (frame.breadth[cars] <= 1.07 * 20)).all()
        if (~cars).any() and cars.any():
            assert np.median(frame.breadth[~cars]) / np.median(frame.breadth[cars]) == pytest.approx(1.4, rel=0.1)
        # parked side by side: the nearest neighbour of most cars is about one stall away, heading alike
        centres = frame.centre
        gaps = np.hypot(*(centres[:, None] - centres[None]).transpose(2, 0, 1)) + np.eye(len(centres)) * 1e9
        nearest = gaps.argmin(1)
        stall = gaps.min(1) / frame.breadth
        alike = np.abs((frame.heading - frame.heading[nearest] + 90) % 180 - 90) < 6
        assert np.mean((stall > 1.1) & (stall < 2.2) & alike) > 0.7
        hbb = np.array([row[1:] for row in _rows(info.hbb_dir / f"{frame.name}.txt")])
        corners = frame.gt.corners
        assert np.allclose(hbb[:, 2:], corners.max(1) - corners.min(1))  # tight HBBs
    image = Image.open(info.images_dir / "frame_0000.jpg")
    assert image.size == (640, 480)
    assert generate_dataset(tmp_path / "roads", n_frames=1, images=False, layout="roads").frames[0].roads
    with pytest.raises(UsageError, match="layout"):
        generate_dataset(tmp_path / "bad", n_frames=1, images=False, layout="fields")
    assert main([str(tmp_path / "cli"), "--frames", "1", "--no-images", "--layout", "lots", "--tight"]) == 0
