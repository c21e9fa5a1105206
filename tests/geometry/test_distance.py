"""GIoU, DIoU and CIoU of oriented boxes: hand-computed cases and a shapely oracle."""

import math
import re

import numpy as np
import pytest
import shapely
from shapely import affinity
from shapely.geometry import Polygon

from hbb2obb.geometry import distance_ious, enclosing_extent, iou_pairs
from hbb2obb.geometry.distance import box_axes, box_centers

from conftest import rotated_rect


def corners_of(x1, y1, x2, y2):
    return [[x1, y1], [x2, y1], [x2, y2], [x1, y2]]


def aspect_term(w_gt, h_gt, w, h):
    return 4 / math.pi**2 * (math.atan(w_gt / h_gt) - math.atan(w / h)) ** 2


def ciou_of(diou, iou, v):
    return diou - (v / ((1 - iou) + v)) * v if v else diou


V_4x2_vs_2x2 = aspect_term(4, 2, 2, 2)
V_tall_vs_square = aspect_term(4, 2, 2, 2)

# (gt corners, pred corners, iou, giou, diou, ciou, centre offset), each value worked out by hand.
HAND_CASES = {
    "issue example": (
        corners_of(50, 50, 150, 150), corners_of(60, 60, 160, 160),
        8100 / 11900, 8100 / 11900 - 200 / 12100, 8100 / 11900 - 200 / 24200, 8100 / 11900 - 200 / 24200,
        math.sqrt(200),
    ),
    "identical": (corners_of(0, 0, 4, 2), corners_of(0, 0, 4, 2), 1.0, 1.0, 1.0, 1.0, 0.0),
    "disjoint side by side": (
        corners_of(0, 0, 10, 10), corners_of(20, 0, 30, 10), 0.0, -100 / 300, -400 / 1000, -400 / 1000, 20.0,
    ),
    "square inside a 4x2 box": (
        corners_of(0, 0, 4, 2), corners_of(0, 0, 2, 2), 0.5, 0.5, 0.5 - 1 / 20,
        ciou_of(0.5 - 1 / 20, 0.5, V_4x2_vs_2x2), 1.0,
    ),
    # The prediction's long side runs along the GT's short axis: same aspect, so v = 0 here.
    "crossed 4x2 boxes": (corners_of(0, 0, 4, 2), corners_of(1, -1, 3, 3), 1 / 3, 1 / 3 - 4 / 16, 1 / 3, 1 / 3, 0.0),
    # GT listed with its long edge first along y: its axes are the image axes, C is [0,3]x[0,4].
    "tall gt listed down first": (
        [[0, 0], [0, 4], [2, 4], [2, 0]], corners_of(1, 1, 3, 3), 0.2, 0.2 - 2 / 12, 0.2 - 1 / 25,
        ciou_of(0.2 - 1 / 25, 0.2, V_tall_vs_square), 1.0,
    ),
    # A diamond (square at 45 deg) inside the 2x2 square: C along the diamond's axes is 2*sqrt2 wide.
    "diamond gt in square": (
        [[0, -1], [1, 0], [0, 1], [-1, 0]], corners_of(-1, -1, 1, 1), 0.5, 0.0, 0.5, 0.5, 0.0,
    ),
    # The other way round the axis-aligned square is C itself.
    "square gt around diamond": (
        corners_of(-1, -1, 1, 1), [[0, -1], [1, 0], [0, 1], [-1, 0]], 0.5, 0.5, 0.5, 0.5, 0.0,
    ),
    "same segment twice (zero area)": (
        [[0, 0], [4, 0], [4, 0], [0, 0]], [[0, 0], [4, 0], [4, 0], [0, 0]], 0.0, 0.0, 0.0, 0.0, 0.0,
    ),
}


@pytest.mark.parametrize("case", HAND_CASES.values(), ids=HAND_CASES.keys())
def test_hand_computed_cases(case):
    gt, pred, *expected = case
    with np.errstate(all="raise"):
        terms = distance_ious([gt], [pred])
    assert [float(x[0]) for x in terms] == pytest.approx(expected, abs=1e-12, rel=0)


def test_issue_example_printed_values():
    terms = distance_ious([corners_of(50, 50, 150, 150)], [corners_of(60, 60, 160, 160)])
    assert [round(float(x[0]), 6) for x in terms[:4]] == [0.680672, 0.664143, 0.672408, 0.672408]


def test_all_cases_in_one_call_equal_one_by_one():
    gts = np.array([c[0] for c in HAND_CASES.values()], dtype=float)
    preds = np.array([c[1] for c in HAND_CASES.values()], dtype=float)
    together = distance_ious(gts, preds)
    for i in range(len(gts)):
        alone = distance_ious(gts[i:i + 1], preds[i:i + 1])
        for field_all, field_one in zip(together, alone):
            assert field_all[i] == field_one[0]


def test_empty_input_gives_empty_arrays():
    terms = distance_ious(np.zeros((0, 4, 2)), np.zeros((0, 4, 2)))
    assert all(x.shape == (0,) for x in terms)
    assert enclosing_extent([], []).shape == (0, 2)


def test_mismatched_shapes_and_iou_length_are_errors():
    with pytest.raises(ValueError, match="equal shapes"):
        distance_ious(np.zeros((2, 4, 2)), np.zeros((1, 4, 2)))
    with pytest.raises(ValueError, match="iou must have shape"):
        distance_ious([corners_of(0, 0, 1, 1)], [corners_of(0, 0, 1, 1)], iou=np.array([1.0, 1.0]))


def test_given_iou_is_used_as_is():
    gt, pred = [corners_of(50, 50, 150, 150)], [corners_of(60, 60, 160, 160)]
    computed = distance_ious(gt, pred)
    given = distance_ious(gt, pred, iou=iou_pairs(gt, pred))
    assert np.array_equal(np.array(computed), np.array(given))


def test_bow_tie_scores_as_the_rectangle_it_describes():
    gt = [corners_of(0, 0, 4, 2)]
    bow_tie = [[[1, 0], [5, 0], [1, 2], [5, 2]]]
    rectangle = [corners_of(1, 0, 5, 2)]
    assert np.allclose(np.array(distance_ious(gt, bow_tie)), np.array(distance_ious(gt, rectangle)), atol=1e-12)


def test_far_from_the_origin_keeps_precision():
    near = distance_ious([corners_of(50, 50, 150, 150)], [corners_of(60, 60, 160, 160)])
    shift = np.array([3790.25, 2110.5])
    far = distance_ious(
        np.array([corners_of(50, 50, 150, 150)]) + shift, np.array([corners_of(60, 60, 160, 160)]) + shift
    )
    assert np.allclose(np.array(near), np.array(far), atol=1e-12, rtol=0)


def test_box_axes_and_centres():
    assert box_axes([[[0, 0], [3, 4], [-1, 4.75], [-4, 0.75]], [[1, 1]] * 4]).tolist() == [[0.6, 0.8], [1.0, 0.0]]
    assert box_centers([[[0, 0], [3, 4], [-1, 4.75], [-4, 0.75]]]).tolist() == [[-0.5, 2.375]]


# --- rotated boxes against shapely ----------------------------------------------------------------


def oracle(gt, pred, centre="centroid"):
    """Independent per-pair computation with shapely: C from both polygons turned into the GT frame.

    The centre of a box is the mean of its corners; for the rectangles of the random pairs that is
    the shapely centroid (``centre="centroid"``). Label files rounded to a few decimals hold near
    rectangles whose centroid moves by ~1e-3 px, so those compare with ``centre="corners"``.
    """
    a, b = Polygon(gt), Polygon(pred)
    inter = a.intersection(b).area
    union = a.union(b).area
    iou = inter / union
    first, second = gt[1] - gt[0], gt[2] - gt[1]
    edge = second if np.dot(second, second) > np.dot(first, first) else first
    theta = math.atan2(edge[1], edge[0])
    turned = [affinity.rotate(p, -theta, origin=(0, 0), use_radians=True) for p in (a, b)]
    xmin, ymin, xmax, ymax = shapely.union_all(turned).bounds
    c_area = (xmax - xmin) * (ymax - ymin)
    giou = iou - (c_area - union) / c_area
    if centre == "centroid":
        d2 = a.centroid.distance(b.centroid) ** 2
    else:
        d2 = float(np.sum((np.mean(pred, axis=0) - np.mean(gt, axis=0)) ** 2))
    diou = iou - d2 / ((xmax - xmin) ** 2 + (ymax - ymin) ** 2)

    def long_short(poly):
        x, y = poly.exterior.coords.xy
        s1, s2 = math.dist((x[0], y[0]), (x[1], y[1])), math.dist((x[1], y[1]), (x[2], y[2]))
        return max(s1, s2), min(s1, s2)

    v = aspect_term(*long_short(a), *long_short(b))
    ciou = diou - (v / ((1 - iou) + v)) * v if v else diou
    return iou, giou, diou, ciou, math.sqrt(d2)


def random_pairs(seed, n):
    rng = np.random.default_rng(seed)
    gts, preds = [], []
    for _ in range(n):
        cx, cy = rng.uniform(0, 3840), rng.uniform(0, 2160)
        w, h = rng.uniform(8, 120), rng.uniform(8, 60)
        angle = rng.choice([0.0, 90.0, rng.uniform(0, 180)])
        gt = rotated_rect(cx, cy, w, h, angle)
        # Overlapping, touching-free and disjoint predictions, in any corner order and winding.
        shift = rng.normal(0, rng.choice([3, 20, 80]), size=2)
        pred = rotated_rect(cx + shift[0], cy + shift[1], w * rng.uniform(0.5, 1.5), h * rng.uniform(0.5, 1.5),
                            angle + rng.normal(0, 20))
        pred = np.roll(pred, int(rng.integers(0, 4)), axis=0)
        if rng.random() < 0.5:
            pred = pred[::-1]
        gts.append(np.roll(gt, int(rng.integers(0, 4)), axis=0))
        preds.append(pred)
    return np.array(gts), np.array(preds)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_rotated_boxes_agree_with_shapely(seed):
    gts, preds = random_pairs(seed, 150)
    ours = np.array(distance_ious(gts, preds)).T
    theirs = np.array([oracle(g, p) for g, p in zip(gts, preds)])
    assert (theirs[:, 0] == 0).any() and (theirs[:, 0] > 0.5).any()  # both disjoint and overlapping pairs
    assert np.allclose(ours, theirs, atol=1e-9, rtol=0)


def test_non_overlapping_pairs_are_ordered_by_distance():
    gt = np.array([corners_of(0, 0, 10, 10)] * 3, dtype=float)
    pred = np.array([corners_of(x, 0, x + 10, 10) for x in (15, 40, 200)], dtype=float)
    terms = distance_ious(gt, pred)
    assert terms.iou.tolist() == [0.0, 0.0, 0.0]
    assert terms.giou[0] > terms.giou[1] > terms.giou[2]
    assert terms.diou[0] > terms.diou[1] > terms.diou[2]


def helper_formulas(gt, pred, iou):
    """The terms from the public (n, 4, 2) helpers and an (8, n) projection.

    The planar path must equal it bit for bit.
    """
    from hbb2obb.geometry import polygon_area, side_lengths

    union = (polygon_area(gt) + polygon_area(pred)) / (1.0 + iou)
    axis = box_axes(gt)
    points = np.concatenate([gt, pred], axis=1) - gt[:, :1]
    along = points[..., 0] * axis[:, None, 0] + points[..., 1] * axis[:, None, 1]
    across = points[..., 0] * -axis[:, None, 1] + points[..., 1] * axis[:, None, 0]
    width, height = along.max(axis=1) - along.min(axis=1), across.max(axis=1) - across.min(axis=1)
    area = width * height
    giou = iou - np.where(area > 0, (area - union) / np.where(area > 0, area, 1), 0)
    d2 = ((box_centers(pred) - box_centers(gt)) ** 2).sum(axis=1)
    c2 = width**2 + height**2
    diou = iou - np.where(c2 > 0, d2 / np.where(c2 > 0, c2, 1), 0)
    (gs, gl), (ps, pl) = side_lengths(gt), side_lengths(pred)
    v = 4.0 / np.pi**2 * (np.arctan2(gl, gs) - np.arctan2(pl, ps)) ** 2
    denominator = (1.0 - iou) + v
    ciou = diou - np.where(denominator > 0, v / np.where(denominator > 0, denominator, 1), 0) * v
    return iou, giou, diou, ciou, np.sqrt(d2)


def many_pairs(seed, n):
    """Vectorized random pairs: rectangles in any listing, some bow-ties, some degenerate, some shared corners."""
    rng = np.random.default_rng(seed)
    centre = rng.uniform(0, [3840, 2160], size=(n, 1, 2))
    angle = np.where(rng.random(n) < 0.3, 0.0, rng.uniform(0, np.pi, n))
    unit = np.array([[-1, -1], [1, -1], [1, 1], [-1, 1]], dtype=float)

    def boxes(size, turn):
        c, s = np.cos(turn)[:, None], np.sin(turn)[:, None]
        local = unit[None] * size[:, None, :] / 2
        return centre + np.stack([local[..., 0] * c - local[..., 1] * s, local[..., 0] * s + local[..., 1] * c], -1)

    gt = boxes(rng.uniform([8, 8], [120, 60], size=(n, 2)), angle)
    pred = boxes(rng.uniform([4, 4], [130, 70], size=(n, 2)), angle + rng.normal(0, 0.3, n))
    pred += rng.normal(0, 1, (n, 1, 1)) * rng.choice([2.0, 20.0, 100.0], size=(n, 1, 2))
    bow_tie = rng.random(n) < 0.1
    pred[bow_tie] = pred[bow_tie][:, [0, 1, 3, 2]]
    flat = rng.random(n) < 0.02
    gt[flat, 2:] = gt[flat, 1::-1]  # zero area: back along the first edge
    same = rng.random(n) < 0.05
    pred[same] = gt[same]
    return gt, pred


@pytest.mark.parametrize("n", [0, 1, 7, 16384 + 11])
def test_planar_path_equals_the_helper_formulas_bit_for_bit(n):
    from hbb2obb.geometry import repair_corners

    gt, pred = many_pairs(n, n)
    fixed_gt, fixed_pred = repair_corners(gt)[0], repair_corners(pred)[0]
    iou = iou_pairs(fixed_gt, fixed_pred)
    expected = helper_formulas(fixed_gt, fixed_pred, iou)
    raw = distance_ious(gt, pred)
    repaired = distance_ious(fixed_gt, fixed_pred, iou=iou, repaired=True)
    for name, want, got_raw, got_repaired in zip(raw._fields, expected, raw, repaired):
        assert got_raw.shape == (n,)
        assert np.array_equal(got_raw, want), name
        assert np.array_equal(got_repaired, want), name
    if n > 1000:  # the big case spans two blocks and holds every kind of pair
        assert (iou == 0).any() and (iou > 0.5).any() and (raw.giou < 0).any()
        assert repair_corners(pred)[1].any() and (raw.center_offset == 0).any()


def test_enclosing_extent_is_the_projection_of_all_eight_corners():
    gt, pred = many_pairs(5, 500)
    axis = box_axes(gt)
    points = np.concatenate([gt, pred], axis=1) - gt[:, :1]
    along = points @ axis[..., None]
    across = points @ np.stack([-axis[:, 1], axis[:, 0]], axis=1)[..., None]
    expected = np.concatenate([np.ptp(along, axis=1), np.ptp(across, axis=1)], axis=1)
    assert np.allclose(enclosing_extent(gt, pred), expected, atol=1e-9, rtol=0)


# --- in the metric dict, the report and the gates --------------------------------------------------


def write_frames(root, seed, n_frames=3):
    rng = np.random.default_rng(seed)
    for side in ("gt", "pred"):
        (root / side).mkdir()
    for f in range(n_frames):
        gt_lines, pred_lines = [], []
        for _ in range(rng.integers(5, 30)):
            cx, cy, w, h = rng.uniform(0, 900), rng.uniform(0, 500), rng.uniform(10, 80), rng.uniform(8, 40)
            angle, cls = rng.uniform(0, 180), int(rng.integers(0, 2))
            gt_lines.append(f"{cls} " + " ".join(f"{v:.2f}" for v in rotated_rect(cx, cy, w, h, angle).ravel()))
            if rng.random() < 0.9:
                pred = rotated_rect(cx + rng.normal(0, 3), cy + rng.normal(0, 3), w * rng.uniform(0.8, 1.2),
                                    h * rng.uniform(0.8, 1.2), angle + rng.normal(0, 8))
                pred_lines.append(f"{cls} " + " ".join(f"{v:.2f}" for v in pred.ravel()))
        (root / "gt" / f"f{f}.txt").write_text("\n".join(gt_lines) + "\n")
        (root / "pred" / f"f{f}.txt").write_text("\n".join(pred_lines) + "\n")
    return root / "gt", root / "pred"


def test_metric_dict_agrees_with_shapely_over_matched_pairs(tmp_path):
    from hbb2obb.scoring.evaluate import evaluate_frames
    from hbb2obb.scoring.metric_dict import summarize

    result = evaluate_frames(*write_frames(tmp_path, 11))
    table, metrics = result.table, summarize(result)
    rows = np.flatnonzero(table.matched)
    assert 20 < rows.size < len(table.gt)
    pairs = np.array([oracle(table.gt.corners[r], table.pred.corners[table.pred_index[r]], centre="corners")
                      for r in rows])
    for column, name in enumerate(("giou", "diou", "ciou"), start=1):
        assert metrics[f"avg_{name}"] == pytest.approx(pairs[:, column].mean(), abs=1e-9)
        assert metrics[f"median_{name}"] == pytest.approx(np.median(pairs[:, column]), abs=1e-9)
    assert metrics["avg_center_offset"] == pytest.approx(pairs[:, 4].mean(), abs=1e-9)
    classes = table.gt.class_id[rows]
    for cls, stats in metrics["class_stats"].items():
        assert stats["avg_giou"] == pytest.approx(pairs[classes == cls, 1].mean(), abs=1e-9)
        assert stats["avg_center_offset"] == pytest.approx(pairs[classes == cls, 4].mean(), abs=1e-9)


def test_no_matched_pair_gives_zeros(write_labels):
    from hbb2obb.scoring.evaluate import evaluate_frames
    from hbb2obb.scoring.metric_dict import summarize
    from hbb2obb.scoring.overlap_metrics import DISTANCE_KEYS

    root = write_labels({"gt/a.txt": "0 0 0 10 0 10 10 0 10\n", "pred/a.txt": "0 50 50 60 50 60 60 50 60\n"})
    metrics = summarize(evaluate_frames(root / "gt", root / "pred"))
    assert {key: metrics[key] for key in DISTANCE_KEYS} == dict.fromkeys(DISTANCE_KEYS, 0.0)
    assert {key: metrics["class_stats"][0][key] for key in DISTANCE_KEYS} == dict.fromkeys(DISTANCE_KEYS, 0.0)


def eval_cli(*args):
    from click.testing import CliRunner

    from hbb2obb.cli.eval import main

    result = CliRunner().invoke(main, [str(a) for a in args])
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def issue_example(write_labels):
    root = write_labels(
        {"gt/a.txt": "0 50 50 150 50 150 150 50 150\n", "pred/a.txt": "0 60 60 160 60 160 160 60 160\n"}
    )
    return root / "gt", root / "pred"


def test_report_prints_the_issue_example(issue_example):
    code, out, err = eval_cli(*issue_example, "-nb")
    assert code == 0, err
    assert "Distance-Aware IoU: GIoU 0.66414, DIoU 0.67241, CIoU 0.67241 (medians 0.66414, 0.67241, 0.67241)" in out
    assert "Centre Offset: mean 14.14 px" in out
    block = out.split("=== Spatial Match and Distance-Aware Overlap by Class ===")[1]
    assert re.search(r"^\s+0\s+1\s+1\s+100\.0%\s+0\.6641\s+0\.6724\s+0\.6724\s+14\.14$", block, re.M)


def test_no_match_prints_no_distance_line(write_labels):
    root = write_labels({"gt/a.txt": "0 0 0 10 0 10 10 0 10\n", "pred/a.txt": "0 50 50 60 50 60 60 50 60\n"})
    code, out, _ = eval_cli(root / "gt", root / "pred", "-nb")
    assert code == 0
    assert "Distance-Aware IoU" not in out and "Centre Offset" not in out
    assert "Spatial Match (best IoU>=0.50): 0.0% of 1 GT boxes" in out


@pytest.mark.parametrize("gate, code, value", [
    ("avg_giou>=0.66", 0, "0.664143"),
    ("median_diou>0.7", 1, "0.672408"),
    ("avg_ciou<0.6", 1, "0.672408"),
    ("avg_center_offset<=15", 0, "14.1421"),
])
def test_gates_accept_the_new_keys(issue_example, gate, code, value):
    exit_code, out, err = eval_cli(*issue_example, "--require", gate, "-nb")
    assert exit_code == code, err
    assert f"{'pass' if code == 0 else 'FAIL'}  {gate}  (value {value})" in out


@pytest.mark.parametrize("with_iou", [False, True])
def test_blocks_give_the_values_of_one_pass(monkeypatch, with_iou):
    """Pairs scored block by block, written into their place, are the bits of one block of all pairs."""
    from hbb2obb.geometry import distance
    from hbb2obb.geometry.distance import indexed_distance_ious

    rng = np.random.default_rng(4)
    boxes = np.array([rotated_rect(*rng.uniform(0, 200, 2), *rng.uniform(2, 40, 2), rng.uniform(0, 180))
                      for _ in range(60)])
    gt_rows, pred_rows = rng.integers(0, 60, 45), rng.integers(0, 60, 45)
    iou = iou_pairs(boxes[gt_rows], boxes[pred_rows]) if with_iou else None
    whole = indexed_distance_ious(boxes, gt_rows, boxes, pred_rows, iou=iou)
    monkeypatch.setattr(distance, "_BLOCK", 8)  # 6 blocks, the last one short
    blocked = indexed_distance_ious(boxes, gt_rows, boxes, pred_rows, iou=iou)
    aligned = distance_ious(boxes[gt_rows], boxes[pred_rows], iou=iou)
    for name in whole._fields:
        np.testing.assert_array_equal(getattr(blocked, name), getattr(whole, name))
        np.testing.assert_array_equal(getattr(aligned, name), getattr(whole, name))
