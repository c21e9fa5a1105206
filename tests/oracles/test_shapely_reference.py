"""tests/oracles/shapely_reference.py settles pairs on a decision bound in exact rationals.

The oracle's own exact arithmetic against IoUs computed by hand (integer rectangles by their
overlap widths, the manual's 9/10 pair by its clipped corner), and its metric dict on files
holding such a pair: the rung counts it, where shapely's float alone would not.
"""

import random
from fractions import Fraction

import numpy as np
import pytest

from hbb2obb.geometry.exact import exact_iou as package_exact_iou

from oracles import shapely_reference as oracle

# The benchmark's pair (docs/reference-tool.md, "Agreement"): IoU exactly 9/10.
DOCS_GT = "1095 494 1095 397 1132 397 1132 494".split()
DOCS_PRED = "1131 400 1131 492 1095 493 1093 401".split()


def texts(corners):
    return [str(value) for corner in corners for value in corner]


def float_iou(a, b):
    """shapely's float IoU, as the oracle computes it without settling."""
    def polygon(t):
        return oracle.make_polygon([(float(t[2 * i]), float(t[2 * i + 1])) for i in range(4)])
    return oracle.polygon_iou(polygon(a), polygon(b))


def write_pair(folder, gt_line, pred_line):
    (folder / "gt").mkdir()
    (folder / "pred").mkdir()
    (folder / "gt" / "f.txt").write_text(gt_line + "\n")
    (folder / "pred" / "f.txt").write_text(pred_line + "\n")
    return folder / "gt", folder / "pred"


def test_readme_pair_is_exactly_nine_tenths_and_shapely_puts_it_below():
    # By hand: the GT is 37 x 97 = 3589; the prediction's shoelace area is 3405; clipping its
    # edge (1093,401)->(1131,400) at x = 1095 gives (1095, 401 - 1/19), so the overlap is the quad
    # (1131,400) (1131,492) (1095,493) (1095, 401 - 1/19) of area 62946/19.
    gt, pred = oracle.exact_hull(oracle.exact_quad(DOCS_GT)), oracle.exact_hull(oracle.exact_quad(DOCS_PRED))
    assert oracle.exact_area(gt) == 3589 and oracle.exact_area(pred) == 3405
    overlap = Fraction(62946, 19)
    assert oracle.exact_iou(DOCS_GT, DOCS_PRED) == overlap / (3589 + 3405 - overlap) == Fraction(9, 10)
    assert float_iou(DOCS_GT, DOCS_PRED) < 0.9  # the float alone misses the rung


@pytest.mark.parametrize("seed", range(3))
def test_integer_rectangles_against_their_overlap_by_hand(seed):
    rng = random.Random(seed)
    for _ in range(25):
        x0, y0 = rng.randint(-50, 50), rng.randint(-50, 50)
        x1, y1 = x0 + rng.randint(1, 30), y0 + rng.randint(1, 30)
        u0, v0 = rng.randint(-50, 50), rng.randint(-50, 50)
        u1, v1 = u0 + rng.randint(1, 30), v0 + rng.randint(1, 30)
        width = max(0, min(x1, u1) - max(x0, u0))
        height = max(0, min(y1, v1) - max(y0, v0))
        inter = width * height
        expected = Fraction(inter, (x1 - x0) * (y1 - y0) + (u1 - u0) * (v1 - v0) - inter)
        a = [(x0, y0), (x1, y0), (x1, y1), (x0, y1)]
        b = [(u0, v0), (u1, v0), (u1, v1), (u0, v1)]
        start = rng.randrange(4)
        b = (b[start:] + b[:start])[:: rng.choice([1, -1])]  # any first corner, either winding
        assert oracle.exact_iou(texts(a), texts(b)) == expected


def test_decimal_coordinates_are_taken_as_written():
    # 0.1 and 0.3 are not floats here: the strips' IoU is exactly (0.1 * 1) / (0.3 * 1) = 1/3.
    thin = "0 0 0.1 0 0.1 1 0 1".split()
    wide = "0 0 0.3 0 0.3 1 0 1".split()
    assert oracle.exact_iou(thin, wide) == Fraction(1, 3)
    # A diamond in its bounding square: half the square (corners at 1e0 written in exponent form).
    diamond = "1e0 0 2 1 1 2 0 1".split()
    square = "0 0 2 0 2 2 0 2".split()
    assert oracle.exact_iou(diamond, square) == Fraction(1, 2)


def test_a_bow_tie_is_its_rectangle_and_a_concave_or_flat_box_has_no_exact_value():
    bow_tie = "0 0 2 2 2 0 0 2".split()  # corners 2 and 3 swapped
    square = "0 0 2 0 2 2 0 2".split()
    assert oracle.exact_iou(bow_tie, square) == 1
    arrowhead = "0 0 4 0 1 1 0 4".split()  # (1,1) lies inside the triangle of the others
    flat = "0 0 4 0 8 0 2 0".split()
    assert oracle.exact_iou(arrowhead, square) is None
    assert oracle.exact_iou(flat, square) is None


def test_settle_only_near_a_bound_and_decide_on_the_exact_value():
    # Far from every bound: untouched, no exact value.
    assert oracle.settle(0.7, DOCS_GT, DOCS_PRED, [0.1, "0.90"]) == (0.7, None)
    # shapely's own float: settled to the float nearest 9/10, counted at the rung.
    iou, exact = oracle.settle(float_iou(DOCS_GT, DOCS_PRED), DOCS_GT, DOCS_PRED, [0.1, "0.90"])
    assert (iou, exact) == (0.9, Fraction(9, 10))
    assert oracle.at_least(iou, exact, "0.90")
    # The other side of the same kind of error: a float a hair above a match threshold of 0.9
    # is not a match (the rule is strictly greater), as 9/10 is not above 9/10.
    iou, exact = oracle.settle(0.9000000000000003, DOCS_GT, DOCS_PRED, [0.9])
    assert exact == Fraction(9, 10) and not oracle.above(iou, exact, 0.9)
    assert oracle.above(0.9000000000000003, None, 0.9)  # what the float alone would decide


def test_metric_dict_counts_the_tie_at_the_rung(tmp_path):
    gt, pred = write_pair(tmp_path, "0 " + " ".join(DOCS_GT), "0 " + " ".join(DOCS_PRED))
    result = oracle.reference_evaluate(gt, pred)
    assert result["total_matches"] == 1
    assert result["iou_fractions"] == {"0.50": 1.0, "0.75": 1.0, "0.85": 1.0, "0.90": 1.0}
    assert result["class_stats"][0]["iou_fractions"]["0.90"] == 1.0
    assert result["class_stats"][0]["ious"] == [0.9] and result["avg_iou"] == 0.9


def test_match_threshold_tie_that_shapely_puts_above_is_no_match(tmp_path):
    # Integer corners found by a random search; shapely gives 0.500000000000001. By hand, from
    # (2844, 1690): the GT is [0, 12] x [0, 11], 132; the prediction (6,1) (12,6) (6,16) (-3,9)
    # has shoelace area 225/2; it leaves the GT through y = 11 at (9, 11) and enters through
    # x = 0 at (0, 19/3), and the GT corner (0, 11) is inside it, so the overlap is
    # (6,1) (12,6) (9,11) (0,11) (0,19/3) of area 163/2, and IoU = (163/2) / (132 + 225/2 - 163/2) = 1/2.
    gt_texts = "2844 1690 2856 1690 2856 1701 2844 1701".split()
    pred_texts = "2850 1691 2856 1696 2850 1706 2841 1699".split()
    assert oracle.exact_area(oracle.exact_hull(oracle.exact_quad(pred_texts))) == Fraction(225, 2)
    overlap = Fraction(163, 2)
    assert oracle.exact_iou(gt_texts, pred_texts) == overlap / (132 + Fraction(225, 2) - overlap) == Fraction(1, 2)
    assert float_iou(gt_texts, pred_texts) > 0.5
    gt, pred = write_pair(tmp_path, "0 " + " ".join(gt_texts), "0 " + " ".join(pred_texts))
    assert oracle.reference_evaluate(gt, pred, iou_threshold=0.5)["total_matches"] == 0
    loose = oracle.reference_evaluate(gt, pred, iou_threshold=0.1)
    assert loose["total_matches"] == 1 and loose["iou_fractions"]["0.50"] == 1.0


def test_agrees_with_the_package_clipping_on_random_convex_quads():
    # Two independent exact algorithms (hull of corners and crossings here, Sutherland-Hodgman
    # in hbb2obb.geometry.exact) must give the same fraction on integer corners.
    rng = random.Random(5)
    checked = 0
    while checked < 60:
        quads = []
        for _ in range(2):
            corners = [(rng.randint(0, 20), rng.randint(0, 20)) for _ in range(4)]
            hull = oracle.exact_hull([(Fraction(x), Fraction(y)) for x, y in corners])
            quads.append(hull)
        if any(len(q) != 4 for q in quads):
            continue
        a, b = ([str(int(v)) for p in q for v in p] for q in quads)
        theirs = package_exact_iou(np.array(quads[0], dtype=float), np.array(quads[1], dtype=float))
        assert oracle.exact_iou(a, b) == theirs
        checked += 1


def test_match_threshold_tie_is_no_match(tmp_path):
    # IoU exactly 9/10 against -t 0.9: a match needs strictly more, whatever the float says.
    gt, pred = write_pair(tmp_path, "0 " + " ".join(DOCS_GT), "0 " + " ".join(DOCS_PRED))
    assert oracle.reference_evaluate(gt, pred, iou_threshold=0.9)["total_matches"] == 0
    assert oracle.reference_evaluate(gt, pred, iou_threshold=0.89)["total_matches"] == 1
