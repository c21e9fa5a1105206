"""Analysis cuts over the match table, the identity baseline, side ratios and worst pairs."""

import math

import numpy as np
import pytest
from shapely.geometry import Polygon

from hbb2obb.analysis.cuts import (
    GroundTruthProperties,
    analyze,
    class_cut,
    difficult_flags,
    edge_cut,
    ground_truth_properties,
    group_statistics,
    orientation_cut,
    orientation_partition,
    short_side_cut,
    side_ratio_table,
    standard_cuts,
    summarize_cut,
    unmatched_gt_rows,
    worst_pairs,
)
from hbb2obb.analysis.identity_baseline import identity_summary, match_identity_baseline
from hbb2obb.errors import InputError, LabelFormatError
from hbb2obb.io import ImageSizes
from hbb2obb.scoring.evaluate import EvalSettings, evaluate_frames

from conftest import obb_line, rect, rotated_rect, shapely_iou


def props_of(off_axis=(), short=(), long=None, edge=None, edge_known=None, difficult=None, class_id=None):
    """GroundTruthProperties built directly, for cut membership tests."""
    off_axis = np.asarray(off_axis, dtype=float)
    n = off_axis.size
    short = np.asarray(short if len(short) else np.full(n, 40.0), dtype=float)
    long = np.asarray(long if long is not None else short * 2, dtype=float)
    return GroundTruthProperties(
        off_axis=off_axis, short_side=short, long_side=long, area=short * long,
        edge=np.zeros(n, bool) if edge is None else np.asarray(edge, bool),
        edge_known=np.ones(n, bool) if edge_known is None else np.asarray(edge_known, bool),
        difficult=np.zeros(n, bool) if difficult is None else np.asarray(difficult, bool),
        class_id=np.zeros(n, np.int64) if class_id is None else np.asarray(class_id, np.int64),
    )


# --------------------------------------------------------------------------- properties


@pytest.mark.parametrize(
    "angle, w, h, expected_off_axis",
    [
        (0.0, 60, 30, 0.0),
        (90.0, 60, 30, 0.0),
        (10.0, 60, 30, 10.0),
        (80.0, 60, 30, 10.0),
        (30.0, 60, 30, 30.0),
        (135.0, 60, 30, 45.0),
        (170.0, 60, 30, 10.0),
        (20.0, 30, 60, 20.0),  # long side second: the orientation follows it, off-axis is the same
    ],
)
def test_off_axis_and_sides_of_constructed_boxes(write_labels, angle, w, h, expected_off_axis):
    corners = rotated_rect(500, 400, w, h, angle)
    root = write_labels({"gt/a.txt": obb_line(0, corners) + "\n", "pred/a.txt": obb_line(0, corners) + "\n"})
    table = evaluate_frames(root / "gt", root / "pred").table
    props = ground_truth_properties(table)
    assert props.off_axis[0] == pytest.approx(expected_off_axis, abs=1e-9)
    assert props.short_side[0] == pytest.approx(min(w, h), abs=1e-9)
    assert props.long_side[0] == pytest.approx(max(w, h), abs=1e-9)
    assert props.area[0] == pytest.approx(Polygon(corners).area, rel=1e-12)
    assert not props.edge_known.any()  # no frame size given


@pytest.mark.parametrize(
    "x, y, tolerance, expected",
    [
        (50, 50, 1.0, False),
        (1, 50, 1.0, True),  # a corner at x = 1: within 1 px, inclusive
        (1.5, 50, 1.0, False),
        (50, 160 - 20 - 1, 1.0, True),  # bottom corner at y = H - 1
        (5, 50, 5.0, True),  # the tolerance follows -et
    ],
)
def test_edge_flag_uses_frame_size(write_labels, x, y, tolerance, expected):
    root = write_labels({"gt/a.txt": rect(x, y, 30, 20) + "\n", "pred/a.txt": rect(x, y, 30, 20) + "\n"})
    table = evaluate_frames(root / "gt", root / "pred", sizes=ImageSizes(width=200, height=160)).table
    props = ground_truth_properties(table, edge_tolerance=tolerance)
    assert props.edge_known.all()
    assert bool(props.edge[0]) is expected
    assert bool(props.controlled[0]) is (not expected)


# --------------------------------------------------------------------------- cuts


def test_orientation_cut_bands_and_boundaries():
    off = [0.0, 0.004, 0.005, 4.999, 5.0, 14.99, 15.0, 30.0, 45.0]
    cut = orientation_cut(props_of(off))
    members = {label: np.flatnonzero(mask).tolist() for label, mask in zip(cut.labels, cut.masks)}
    assert members == {
        "axis-aligned (<0.005 deg)": [0, 1],
        "rotated": [2, 3, 4, 5, 6, 7, 8],
        "off-axis 0 to 5 deg": [0, 1, 2, 3],
        "off-axis 5 to 15 deg": [4, 5],
        "off-axis 15 to 30 deg": [6],
        "off-axis 30 to 45 deg": [7, 8],
    }


def test_orientation_partition_puts_every_box_in_one_group():
    off = np.array([0.0, 0.004, 0.005, 4.999, 5.0, 14.99, 15.0, 30.0, 45.0, 22.0])
    cut = orientation_partition(props_of(off))
    stacked = np.stack(cut.masks)
    assert (stacked.sum(axis=0) == 1).all()
    assert cut.labels == ("axis-aligned", "0.005 to 5 deg", "5 to 15 deg", "15 to 30 deg", "30 to 45 deg")
    assert np.flatnonzero(cut.masks[1]).tolist() == [2, 3]


def test_controlled_subset_cut_only_counts_interior_not_difficult():
    props = props_of([0, 10, 20, 40], edge=[True, False, False, False], difficult=[False, True, False, False])
    cut = orientation_cut(props, props.controlled)
    assert props.controlled.tolist() == [False, False, True, True]
    assert [int(m.sum()) for m in cut.masks] == [0, 2, 0, 0, 1, 1]


@pytest.mark.parametrize(
    "short, expected",
    [
        ([], [0, 0, 0, 0, 0]),
        ([0.0, 24.9, 25.0, 34.9, 35.0, 45.0, 59.9, 60.0, 300.0], [2, 2, 1, 2, 2]),
    ],
)
def test_short_side_bands(short, expected):
    cut = short_side_cut(props_of(np.zeros(len(short)), short=short))
    assert cut.labels == ("0 to 25 px", "25 to 35 px", "35 to 45 px", "45 to 60 px", "60 px and up")
    assert [int(m.sum()) for m in cut.masks] == expected


def test_edge_cut_adds_unknown_group_only_when_needed():
    known = edge_cut(props_of([0, 0], edge=[True, False]))
    assert known.labels == ("touches an edge", "interior")
    partly = edge_cut(props_of([0, 0, 0], edge=[True, False, False], edge_known=[True, True, False]))
    assert partly.labels == ("touches an edge", "interior", "frame size unknown")
    assert [m.tolist() for m in partly.masks] == [[True, False, False], [False, True, False], [False, False, True]]


def test_class_cut_uses_label_map_order_then_unknown_ids():
    cut = class_cut(props_of([0] * 4, class_id=[3, 0, 7, 0]), {0: "Car", 1: "Bus", 3: "Motorcycle"})
    assert cut.labels == ("Car", "Motorcycle", "7")
    assert [int(m.sum()) for m in cut.masks] == [2, 1, 1]


def test_no_frame_size_means_controlled_is_not_difficult_and_no_edge_cut():
    props = props_of([0, 20], edge_known=[False, False], difficult=[True, False])
    assert props.controlled.tolist() == [False, True]
    keys = [cut.key for cut in standard_cuts(props)]
    assert keys == ["orientation", "orientation_controlled", "short_side", "difficult", "class"]


# --------------------------------------------------------------------------- statistics


@pytest.mark.parametrize(
    "ious, angles",
    [
        ([0.9], [3.0]),
        ([0.5, 0.74999, 0.75, 0.9, 0.95], [0.0, 1.0, 2.0, 3.0, 40.0]),
        (list(np.linspace(0.2, 1.0, 17)), list(np.linspace(0, 30, 17) ** 1.3)),
    ],
)
def test_group_statistics_against_numpy(ious, angles):
    s = group_statistics(ious, angles)
    values = np.array(ious)
    assert s["boxes"] == len(ious)
    assert s["avg_iou"] == pytest.approx(sum(ious) / len(ious))
    assert s["std_iou"] == pytest.approx(math.sqrt(sum((v - s["avg_iou"]) ** 2 for v in ious) / len(ious)))
    assert s["sem_iou"] == pytest.approx(s["std_iou"] / math.sqrt(len(ious)))
    assert s["median_iou"] == pytest.approx(float(np.median(values)))
    assert s["share_below_75"] == sum(v < 0.75 for v in ious) / len(ious)
    assert s["share_at_least_90"] == sum(v >= 0.9 for v in ious) / len(ious)
    ordered = sorted(angles)
    rank = 0.9 * (len(ordered) - 1)  # numpy's default linear interpolation, written out
    low = int(math.floor(rank))
    high = min(low + 1, len(ordered) - 1)
    assert s["p90_angle_error"] == pytest.approx(ordered[low] + (rank - low) * (ordered[high] - ordered[low]))
    assert s["avg_angle_error"] == pytest.approx(sum(angles) / len(angles))


def test_group_statistics_of_empty_group_are_zero():
    s = group_statistics([], [])
    assert s["boxes"] == 0 and all(v == 0 for v in s.values())


def test_summarize_cut_only_counts_matched_rows(write_labels):
    gt = [rect(0, 0, 40, 20), rect(100, 0, 40, 20), rect(200, 0, 40, 20)]
    pred = [rect(2, 0, 40, 20), rect(300, 300, 40, 20), rect(200, 0, 40, 20)]
    root = write_labels({"gt/a.txt": "\n".join(gt) + "\n", "pred/a.txt": "\n".join(pred) + "\n"})
    table = evaluate_frames(root / "gt", root / "pred").table
    props = ground_truth_properties(table)
    summary = summarize_cut(table, orientation_cut(props))
    axis = summary["groups"][0]
    assert axis["boxes"] == 2
    assert axis["avg_iou"] == pytest.approx((38 * 20 / (2 * 800 - 38 * 20) + 1.0) / 2)
    assert unmatched_gt_rows(table).tolist() == [1]


# --------------------------------------------------------------------------- difficult flags


DOTA_HEADER = "imagesource:test\ngsd:0.1\n"


def dota_line(x, y, w, h, name, flag):
    return f"{x} {y} {x + w} {y} {x + w} {y + h} {x} {y + h} {name} {flag}"


def test_difficult_flags_from_dota_beside_gt(write_labels):
    gt = [rect(0, 0, 40, 20, cls=0), rect(100, 0, 40, 20, cls=1), rect(200, 0, 40, 20, cls=0)]
    dota = DOTA_HEADER + "\n".join([dota_line(0, 0, 40, 20, "car", 0), dota_line(100, 0, 40, 20, "bus", 0),
                                    dota_line(200, 0, 40, 20, "car", 1)]) + "\n"
    root = write_labels({"gt/a.txt": "\n\n".join(gt) + "\n", "gt/a.dota": dota, "pred/a.txt": "\n".join(gt) + "\n"})
    label_map = {0: "car", 1: "bus"}
    # Class 1 excluded: the table loses the middle row, the flags must still land on the right box.
    result = evaluate_frames(root / "gt", root / "pred", EvalSettings(excluded_classes=(1,)), label_map=label_map)
    flags, warnings = difficult_flags(result.table, root / "gt", label_map)
    assert result.table.gt.line.tolist() == [1, 5]
    assert flags.tolist() == [False, True]
    assert warnings == []
    props = ground_truth_properties(result.table, flags)
    assert props.controlled.tolist() == [True, False]
    assert "difficult" in [cut.key for cut in standard_cuts(props)]


def test_difficult_flags_ignored_when_row_counts_differ(write_labels):
    gt = [rect(0, 0, 40, 20), rect(100, 0, 40, 20)]
    root = write_labels({"gt/a.txt": "\n".join(gt) + "\n", "gt/a.dota": dota_line(0, 0, 40, 20, "car", 1) + "\n",
                         "pred/a.txt": "\n".join(gt) + "\n"})
    result = evaluate_frames(root / "gt", root / "pred")
    flags, warnings = difficult_flags(result.table, root / "gt", {0: "car"})
    assert flags.tolist() == [False, False]
    assert len(warnings) == 1 and "a.dota: 1 boxes but 2" in warnings[0][1]


def test_broken_dota_beside_gt_is_an_error_with_file_and_line(write_labels):
    root = write_labels({"gt/a.txt": rect(0, 0, 40, 20) + "\n", "gt/a.dota": "0 0 40 0 40 20 0 20 car 7\n",
                         "pred/a.txt": rect(0, 0, 40, 20) + "\n"})
    result = evaluate_frames(root / "gt", root / "pred")
    with pytest.raises(LabelFormatError, match=r"a\.dota:1: difficult flag"):
        difficult_flags(result.table, root / "gt", {0: "car"})


# --------------------------------------------------------------------------- side ratios


def test_side_ratios_are_mean_per_box_ratios(write_labels):
    # Reference boxes at 0, 2 and 20 deg; the converted short side scaled by a known factor.
    specs = [(0.0, 1.10), (2.0, 0.90), (20.0, 1.20), (20.0, 1.00)]
    gt_lines, pred_lines = [], []
    for k, (angle, factor) in enumerate(specs):
        cx = 200 + 150 * k
        gt_lines.append(obb_line(0, rotated_rect(cx, 200, 80, 40, angle)))
        pred_lines.append(obb_line(0, rotated_rect(cx, 200, 80, 40 * factor, angle)))
    root = write_labels({"gt/a.txt": "\n".join(gt_lines) + "\n", "pred/a.txt": "\n".join(pred_lines) + "\n"})
    table = evaluate_frames(root / "gt", root / "pred", sizes=ImageSizes(width=1000, height=500)).table
    props = ground_truth_properties(table)
    bands = {b["label"]: b for b in side_ratio_table(table, props, props.controlled)}
    assert bands["exactly aligned"]["boxes"] == 1
    assert bands["exactly aligned"]["short_side"] == pytest.approx(1.10)
    assert bands["1 to 3 deg"]["short_side"] == pytest.approx(0.90)
    assert bands["15 to 45 deg"]["boxes"] == 2
    assert bands["15 to 45 deg"]["short_side"] == pytest.approx((1.20 + 1.00) / 2)
    assert bands["15 to 45 deg"]["long_side"] == pytest.approx(1.0)
    assert bands["15 to 45 deg"]["area"] == pytest.approx((1.20 + 1.00) / 2)
    assert bands["3 to 5 deg"]["boxes"] == 0 and bands["3 to 5 deg"]["area"] == 0.0


# --------------------------------------------------------------------------- worst pairs


def test_worst_pairs_are_table_rows_in_order(write_labels):
    gt = [rect(0, 0, 40, 20), rect(100, 0, 40, 20), rect(200, 0, 40, 20), rect(300, 0, 40, 20)]
    shifts = [1, 6, 40, 3]  # 40 px along a 40 px box leaves no overlap: row 2 is unmatched
    pred = [rect(100 * k + s, 0, 40, 20) for k, s in enumerate(shifts)]
    root = write_labels({"gt/a.txt": "\n".join(gt) + "\n", "pred/a.txt": "\n".join(pred) + "\n"})
    table = evaluate_frames(root / "gt", root / "pred").table
    assert table.matched.tolist() == [True, True, False, True]
    assert worst_pairs(table, 2).tolist() == [1, 3]
    assert worst_pairs(table, 10).tolist() == [1, 3, 0]
    assert worst_pairs(table, 0).tolist() == []
    assert worst_pairs(table, 2, by="angle").tolist() == [1, 3]  # all angles 0: lower IoU first
    with pytest.raises(ValueError):
        worst_pairs(table, 2, by="area")


def test_worst_pairs_by_angle_puts_largest_error_first(write_labels):
    gt = [obb_line(0, rotated_rect(100 + 120 * k, 100, 80, 30, 0)) for k in range(3)]
    pred = [obb_line(0, rotated_rect(100 + 120 * k, 100, 80, 30, a)) for k, a in enumerate([3.0, 12.0, 7.0])]
    root = write_labels({"gt/a.txt": "\n".join(gt) + "\n", "pred/a.txt": "\n".join(pred) + "\n"})
    table = evaluate_frames(root / "gt", root / "pred").table
    assert worst_pairs(table, 3, by="angle").tolist() == [1, 2, 0]


def test_worst_pairs_of_empty_table(write_labels):
    root = write_labels({"gt/a.txt": "", "pred/a.txt": ""})
    result = evaluate_frames(root / "gt", root / "pred")
    assert worst_pairs(result.table, 5).tolist() == []
    data = analyze(result, ground_truth_properties(result.table), worst=5)
    assert data["overall"]["boxes"] == 0
    assert data["worst"] == {"by_iou": [], "by_angle": [], "unmatched_ground_truth": []}
    assert all(g["boxes"] == 0 for cut in data["cuts"] for g in cut["groups"])


# --------------------------------------------------------------------------- identity baseline


def hbb_of(corners):
    (x0, y0), (x1, y1) = corners.min(axis=0).tolist(), corners.max(axis=0).tolist()
    return (x0 + x1) / 2, (y0 + y1) / 2, x1 - x0, y1 - y0


def test_identity_baseline_against_shapely(write_labels):
    angles = [0.0, 10.0, 25.0, 40.0]
    gts = [rotated_rect(150 + 200 * k, 150, 90, 40, a) for k, a in enumerate(angles)]
    hbb_lines = ["0 %r %r %r %r" % hbb_of(c) for c in gts]
    root = write_labels({
        "gt/a.txt": "\n".join(obb_line(0, c) for c in gts) + "\n",
        "pred/a.txt": "\n".join(obb_line(0, c) for c in gts) + "\n",
        "hbb/a.txt": "\n".join(hbb_lines) + "\n",
    })
    result = evaluate_frames(root / "gt", root / "pred")
    match = match_identity_baseline(result.table, root / "hbb", result.settings)
    expected = []
    for c, line in zip(gts, hbb_lines):
        xc, yc, w, h = map(float, line.split()[1:])
        box = [(xc - w / 2, yc - h / 2), (xc + w / 2, yc - h / 2), (xc + w / 2, yc + h / 2), (xc - w / 2, yc + h / 2)]
        expected.append(shapely_iou(c, box))
    assert match.matched.all() and match.warnings == []
    assert np.allclose(match.iou, expected, atol=1e-12, rtol=0)
    props = ground_truth_properties(result.table)
    summary = identity_summary(result.table, match, orientation_cut(props), orientation_partition(props))
    overall = summary["rows"][0]
    assert overall["boxes"] == 4
    assert overall["iou_as_is"] == pytest.approx(np.mean(expected))
    assert overall["gain"] == pytest.approx(1.0 - np.mean(expected))


def test_identity_baseline_scales_normalized_prompts(write_labels):
    gt = rotated_rect(400, 300, 90, 40, 30)
    xc, yc, w, h = hbb_of(gt)
    root = write_labels({
        "gt/a.txt": obb_line(0, gt) + "\n",
        "pred/a.txt": obb_line(0, gt) + "\n",
        "hbb/a.txt": f"0 {xc / 800!r} {yc / 600!r} {w / 800!r} {h / 600!r}\n",
        "hbb_px/a.txt": f"0 {xc!r} {yc!r} {w!r} {h!r}\n",
    })
    sized = evaluate_frames(root / "gt", root / "pred", sizes=ImageSizes(width=800, height=600))
    scaled = match_identity_baseline(sized.table, root / "hbb", sized.settings)
    pixels = match_identity_baseline(sized.table, root / "hbb_px", sized.settings)
    assert scaled.iou[0] == pytest.approx(pixels.iou[0], abs=1e-12)
    assert scaled.angle_error[0] == pytest.approx(30.0, abs=1e-9)
    unsized = evaluate_frames(root / "gt", root / "pred")
    with pytest.raises(InputError, match="normalized while the ground truth is in pixels"):
        match_identity_baseline(unsized.table, root / "hbb", unsized.settings)


def test_identity_baseline_missing_and_broken_prompt_files(write_labels):
    root = write_labels({
        "gt/a.txt": rect(0, 0, 40, 20) + "\n", "pred/a.txt": rect(0, 0, 40, 20) + "\n",
        "gt/b.txt": rect(0, 0, 40, 20) + "\n", "pred/b.txt": rect(0, 0, 40, 20) + "\n",
        "hbb/a.txt": "0 20 10 40 20\n0 20 10 forty 20\n",
    })
    result = evaluate_frames(root / "gt", root / "pred")
    match = match_identity_baseline(result.table, root / "hbb", result.settings)
    assert match.matched.tolist() == [True, False]
    kinds = [kind for kind, _ in match.warnings]
    assert kinds == ["broken prompt file", "missing prompt file"]
    assert "a.txt:2:" in match.warnings[0][1]
    with pytest.raises(InputError, match="HBB prompt folder not found"):
        match_identity_baseline(result.table, root / "nope", result.settings)


def test_identity_baseline_respects_class_and_exclusion(write_labels):
    root = write_labels({
        "gt/a.txt": rect(0, 0, 40, 20, cls=1) + "\n" + rect(100, 0, 40, 20, cls=0) + "\n",
        "pred/a.txt": rect(0, 0, 40, 20, cls=1) + "\n" + rect(100, 0, 40, 20, cls=0) + "\n",
        "hbb/a.txt": "2 20 10 40 20\n0 120 10 40 20\n",
    })
    result = evaluate_frames(root / "gt", root / "pred")
    assert match_identity_baseline(result.table, root / "hbb", result.settings).matched.tolist() == [False, True]
    agnostic = EvalSettings(class_agnostic=True)
    result = evaluate_frames(root / "gt", root / "pred", agnostic)
    assert match_identity_baseline(result.table, root / "hbb", agnostic).matched.tolist() == [True, True]
    excluded = EvalSettings(class_agnostic=True, excluded_classes=(2,))
    result = evaluate_frames(root / "gt", root / "pred", excluded)
    assert match_identity_baseline(result.table, root / "hbb", excluded).matched.tolist() == [False, True]


# --------------------------------------------------------------------------- normalized labels


def test_normalized_labels_analyse_like_pixels(write_labels):
    """A 16:9 frame: angles on normalized corners would be wrong; with the size they are not."""
    width, height = 1600.0, 900.0
    gts = [rotated_rect(300 + 250 * k, 400, 100, 40, a) for k, a in enumerate([0.0, 8.0, 20.0, 35.0])]
    preds = [rotated_rect(302 + 250 * k, 401, 96, 42, a + 2) for k, a in enumerate([0.0, 8.0, 20.0, 35.0])]
    scale = np.array([width, height])

    def lines(boxes, divide):
        return "\n".join(obb_line(0, c / scale if divide else c) for c in boxes) + "\n"

    root = write_labels({"px/gt/a.txt": lines(gts, False), "px/pred/a.txt": lines(preds, False),
                         "n/gt/a.txt": lines(gts, True), "n/pred/a.txt": lines(preds, True)})
    sizes = ImageSizes(width=width, height=height)
    results = [evaluate_frames(root / s / "gt", root / s / "pred", sizes=sizes) for s in ("px", "n")]
    data = [analyze(r, ground_truth_properties(r.table)) for r in results]
    for cut_px, cut_n in zip(data[0]["cuts"], data[1]["cuts"]):
        for g_px, g_n in zip(cut_px["groups"], cut_n["groups"]):
            assert g_n["boxes"] == g_px["boxes"]
            assert g_n["avg_iou"] == pytest.approx(g_px["avg_iou"], abs=1e-9)
            assert g_n["p90_angle_error"] == pytest.approx(g_px["p90_angle_error"], abs=1e-6)
    assert [g["boxes"] for g in data[1]["cuts"][0]["groups"]] == [1, 3, 1, 1, 1, 1]
