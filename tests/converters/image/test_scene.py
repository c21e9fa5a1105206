"""Frame-level evidence of the ``image`` converter: tightness, neighbours' axes, the class check."""

from __future__ import annotations

import math

import numpy as np
import pytest

from hbb2obb.converters.image.box import REASON_NO_MASK, BoxResult, Candidate, Segmentation
from hbb2obb.converters.image.params import ImageParams
from hbb2obb.converters.image.scene import (
    breadth_agreements,
    classes_less_supported,
    estimate_tightness,
    hbb_overshoot,
    hugs_its_hbb,
    neighbour_axes,
    pooled_breadths,
    row_axes,
)

from conftest import rotated_rect

PARAMS = ImageParams()


def test_tightness_is_read_from_whole_pixel_sides():
    assert estimate_tightness([[357, 595, 394, 634], [0, 0, 5, 9]], PARAMS) == "tight"
    assert estimate_tightness([[1892.15, 1834.5, 1955.25, 1921.1]], PARAMS) == "loose"
    assert estimate_tightness([[357, 595, 394, 634], [1.5, 0, 5, 9]], PARAMS) == "loose"  # one box decides
    assert estimate_tightness([], PARAMS) == "loose"


def segmentation_at(x, y, thetas=(), reason=""):
    box = (x - 10.0, y - 10.0, x + 10.0, y + 10.0)
    candidates = [Candidate(t, t, np.zeros((2, 2), bool), np.zeros((0, 2)), np.zeros((2, 2))) for t in thetas]
    return Segmentation(box, np.array(box), None, candidates, reason)


def test_neighbours_vote_only_where_a_box_left_its_orientation_open():
    row = [segmentation_at(30.0 * k, 0.0, [math.radians(40 + k)]) for k in range(4)]
    open_box = segmentation_at(120.0, 0.0, [math.radians(45), math.radians(135)])
    no_mask = segmentation_at(105.0, 0.0, reason=REASON_NO_MASK)
    far = segmentation_at(2000.0, 0.0, [0.0, math.pi / 2])
    preferred = neighbour_axes(row + [open_box, no_mask, far], PARAMS)
    assert preferred[:4] == [None] * 4  # decided boxes keep their own
    assert math.degrees(preferred[4]) == pytest.approx(42.5, abs=1.0)  # the nearby row's mean
    assert preferred[5] is not None and preferred[6] is None  # no neighbour within reach


def test_neighbours_that_disagree_give_no_orientation():
    crossing = [segmentation_at(0.0, 0.0, [0.0]), segmentation_at(25.0, 0.0, [math.pi / 2]),
                segmentation_at(12.0, 12.0, [0.3, 0.3 + math.pi / 2])]
    assert neighbour_axes(crossing, PARAMS)[2] is None
    assert neighbour_axes([], PARAMS) == []


#: A fitted box 20 degrees off the axes: far from its HBB, so it has a say in the class check.
TURNED = np.array([[0.0, 0.0], [28.2, 10.3], [24.8, 19.7], [-3.4, 9.4]])


def result(edges, hbb_edges, converted=True, corners=TURNED):
    return BoxResult(corners if converted else None, edges=edges, hbb_edges=hbb_edges)


def test_a_class_whose_fits_follow_edges_less_than_its_hbbs_is_marked():
    results = [result(0.8, 1.0), result(0.9, 1.0), result(1.2, 1.0), result(0.5, 1.0, converted=False),
               result(2.0, 1.0), result(1.5, 1.0), result(0.4, 1.0)]
    classes = [7, 7, 7, 7, 3, 3, 3]
    marked = classes_less_supported(results, classes, PARAMS)
    # class 7: geometric mean of 0.8, 0.9, 1.2, 0.5 is 0.82 < 1: its converted boxes are marked, the
    # fallback is not; class 3: 2.0, 1.5, 0.4 give 1.06 (a median would be 1.5, a plain mean 1.3)
    assert marked.tolist() == [True, True, True, False, False, False, False]
    wrong_way = classes_less_supported([result(2.0, 1.0), result(1.5, 1.0), result(0.3, 1.0)], [3, 3, 3], PARAMS)
    assert wrong_way.all()  # geometric mean 0.97: the one box far below outweighs
    few = classes_less_supported([result(0.1, 1.0), result(0.1, 1.0)], [0, 0], PARAMS)
    assert not few.any()  # too few boxes to judge a class
    nothing = classes_less_supported([BoxResult(None), BoxResult(None), BoxResult(None)], [0, 0, 0], PARAMS)
    assert not nothing.any()


def test_fits_that_are_their_hbbs_do_not_vote_in_the_class_check():
    # a frame of cars, most of them axis-aligned (fit == HBB, ratio 1) and a few diagonal ones
    # that follow the edges better: a median over all would sit at one, a coin toss on ties
    tied = [result(1.0, 1.0)] * 6 + [result(1.004, 1.0), result(0.9, 1.0), result(1.4, 1.0), result(1.3, 1.0)]
    assert not classes_less_supported(tied, [0] * len(tied), PARAMS).any()
    # with only two boxes that differ from their HBBs there is no class-level judgement at all
    assert not classes_less_supported([result(1.0, 1.0)] * 5 + [result(0.5, 1.0)] * 2, [0] * 7, PARAMS).any()
    # nearly axis-aligned cars in rows: most fits follow their HBBs' edges, four lose a little;
    # too few votes to send the whole class back, while the same four alone would
    losing = [result(0.85, 1.0), result(0.9, 1.0), result(0.95, 1.0), result(1.05, 1.0)]
    assert not classes_less_supported([result(1.0, 1.0)] * 20 + losing, [0] * 24, PARAMS).any()
    assert classes_less_supported([result(1.0, 1.0)] * 3 + losing, [0] * 7, PARAMS).all()  # 4 of 7 vote


def test_fallbacks_take_the_axis_their_rows_agree_on_modulo_90_degrees():
    def rect(cx, cy, degrees, long=20.0, short=8.0):
        t = math.radians(degrees)
        along, across = (
            np.array([math.cos(t), math.sin(t)]) * long / 2,
            np.array([-math.sin(t), math.cos(t)]) * short / 2,
        )
        centre = np.array([cx, cy])
        return np.array([centre - along - across, centre + along - across, centre + along + across,
                         centre - along + across])

    # an apron: boxes parked at 15 degrees and across it at 105; one fallback among them, wide
    # and tall, one far away and one where the neighbours point every way
    done = [rect(30.0 * k, 0.0, 15 if k % 2 else 105) for k in range(4)]
    xyxy = [np.r_[c.min(0), c.max(0)] for c in done] + [[115, -5, 135, 5], [115, -10, 125, 10], [900, 0, 920, 10]]
    results = [BoxResult(c) for c in done] + [BoxResult(None)] * 3
    axes = row_axes(xyxy, results, [False] * 4 + [True] * 3, PARAMS)
    assert axes[:4] == [None] * 4
    assert math.degrees(axes[4]) == pytest.approx(15.0, abs=1e-6)  # wider than tall: the long side lies flat
    assert math.degrees(axes[5]) == pytest.approx(105.0, abs=1e-6)  # taller than wide: turned by 90
    assert axes[6] is None  # nothing converted within reach
    scattered = [BoxResult(rect(30.0 * k, 0.0, 20 * k)) for k in range(4)] + [BoxResult(None)]
    assert row_axes(xyxy[:4] + [xyxy[4]], scattered, [False] * 4 + [True], PARAMS)[4] is None
    assert row_axes(np.zeros((0, 4)), [], [], PARAMS) == []


def test_fits_that_hug_their_hbbs_do_not_vote_in_the_class_check():
    # cars 2 degrees off the axes, 33 px long: each side within about 1.2 px of its HBB's, so
    # which one follows the edges better is where the pixel grid cuts them; the same verdicts
    # from fits 20 degrees off the axes do send the class back
    t = math.radians(2.0)
    along, across = np.array([math.cos(t), math.sin(t)]) * 16.5, np.array([-math.sin(t), math.cos(t)]) * 7.0
    hugging = np.array([-along - across, along - across, along + across, -along + across])
    assert hugs_its_hbb(hugging, PARAMS) and not hugs_its_hbb(TURNED, PARAMS) and not hugs_its_hbb(None, PARAMS)
    assert hugs_its_hbb(hugging[:, ::-1], PARAMS)  # near the vertical axis as well
    verdicts = [0.8, 0.85, 0.9, 0.95, 0.9]
    assert not classes_less_supported([result(v, 1.0, corners=hugging) for v in verdicts], [0] * 5, PARAMS).any()
    assert classes_less_supported([result(v, 1.0) for v in verdicts], [0] * 5, PARAMS).all()
    # a long bus at the same angle is 4 px off its HBB at one end: it votes
    bus = np.array([-3.5 * along - across, 3.5 * along - across, 3.5 * along + across, -3.5 * along + across])
    assert not hugs_its_hbb(bus, PARAMS)


def test_a_class_whose_fits_stand_out_by_colour_keeps_them_whatever_the_edges_say():
    def coloured(edges, margin):
        return BoxResult(TURNED, edges=edges, hbb_edges=1.0, support=margin, hbb_support=0.0)

    losing = [0.8, 0.9, 0.95, 0.85]
    assert not classes_less_supported([coloured(e, 0.25) for e in losing], [0] * 4, PARAMS).any()
    assert classes_less_supported([coloured(e, 0.02) for e in losing], [0] * 4, PARAMS).all()  # helicopter-like
    # without colour evidence (nan: inscribed boxes) the edges decide alone
    assert classes_less_supported([result(e, 1.0) for e in losing], [0] * 4, PARAMS).all()


def car(breadth, degrees, length=40.0, from_mask=True, converted=True):
    """A fitted loose box of ``breadth`` at ``degrees``, as the per-box fit leaves it."""
    corners = rotated_rect(0.0, 0.0, length, breadth, degrees)
    return BoxResult(corners if converted else None, from_mask=from_mask,
                     candidate=Candidate(0.0, 0.0, np.zeros((2, 2), bool), corners, np.zeros((2, 2))))


@pytest.mark.parametrize("boxes, classes, expected", [
    ([], [], []),
    # fewer than four boxes of a class: each keeps its own fit
    ([car(18, 0), car(22, 45), car(20, 30)], [0, 0, 0], [None, None, None]),
    # the median breadth is 21; at the axes a box keeps half its own, at 45 degrees none
    ([car(18, 0), car(22, 90), car(20, 30), car(26, 45)], [0, 0, 0, 0], [19.5, 21.5, 20.875, 21.0]),
    # classes are pooled apart: three trucks are too few, the four cars pool alone
    ([car(18, 0), car(24, 45), car(20, 45), car(22, 45), car(40, 45), car(44, 0), car(42, 45)],
     [0, 0, 0, 0, 2, 2, 2], [19.5, 21.0, 21.0, 21.0, None, None, None]),
    # a class of mixed sizes (an apron's planes: lengths 40 to 120) has no one breadth to pool
    ([car(18, 0, 40.0), car(30, 45, 60.0), car(45, 45, 90.0), car(60, 45, 120.0)], [0, 0, 0, 0],
     [None, None, None, None]),
    # ... while lengths within the spread of one kind of vehicle pool as before
    ([car(18, 0, 40.0), car(24, 45, 44.0), car(20, 45, 46.0), car(22, 45, 50.0)], [0, 0, 0, 0],
     [19.5, 21.0, 21.0, 21.0]),
    # fallbacks and boxes without a mask of their own neither pool nor are pooled
    ([car(18, 0), car(20, 45), car(22, 45), car(24, 45), car(90, 45, converted=False), car(90, 45, from_mask=False)],
     [0, 0, 0, 0, 0, 0], [19.5, 21.0, 21.0, 21.0, None, None]),
])
def test_pooled_breadths_table(boxes, classes, expected):
    pooled = pooled_breadths(boxes, classes, PARAMS)
    assert len(pooled) == len(expected)
    for got, want in zip(pooled, expected):
        assert (got is None) if want is None else got == pytest.approx(want)


@pytest.mark.parametrize("boxes, classes, expected", [
    ([], [], []),
    # a class too small to pool: its boxes' breadths rest on their HBBs, (1 + (cos 2a)^2) / 2
    ([car(18, 0), car(22, 45), car(20, 30)], [0, 0, 0], [1.0, 0.5, 0.625]),
    # pooled (median 21): 1 - |b - 21| / 21, whatever the angle
    ([car(21, 0), car(21, 45), car(14, 30), car(28, 45), car(21, 90)], [0, 0, 0, 0, 0],
     [1.0, 1.0, 2 / 3, 2 / 3, 1.0]),
    # a breadth more than twice the pool's is at 0, never below
    ([car(10, 0), car(10, 0), car(10, 0), car(10, 0), car(35, 45)], [0, 0, 0, 0, 0], [1.0, 1.0, 1.0, 1.0, 0.0]),
    # fallbacks and boxes without a mask of their own keep their confidence (factor 1), and do not pool
    ([car(18, 0), car(20, 45), car(22, 45), car(90, 45, converted=False), car(90, 45, from_mask=False)],
     [0, 0, 0, 0, 0], [1.0, 0.5, 0.5, 1.0, 1.0]),
])
def test_breadth_agreements_table(boxes, classes, expected):
    factors = breadth_agreements(boxes, classes, PARAMS)
    assert factors.shape == (len(expected),) and ((factors >= 0) & (factors <= 1)).all()
    assert factors == pytest.approx(expected)


@pytest.mark.parametrize("seed", range(5))
def test_hbb_overshoot_is_how_far_the_rounded_rectangle_leaves_its_hbb(seed):
    """Against shapely: the rectangle shrunk by its corner radius and buffered by it is the rounded
    body, whose bounds are the corner-cutting HBB it needs."""
    import shapely

    rng = np.random.default_rng(seed)
    for _ in range(20):
        length, breadth = rng.uniform(10, 80), 0.0
        breadth = rng.uniform(4, length)
        degrees = rng.uniform(0, 180)
        corners = rotated_rect(50.0, 40.0, length, breadth, degrees)
        radius = PARAMS.corner_radius * breadth
        body = shapely.Polygon(rotated_rect(50.0, 40.0, length - 2 * radius, breadth - 2 * radius, degrees))
        x1, y1, x2, y2 = body.buffer(radius, quad_segs=256).bounds
        hbb = np.array([x1, y1, x2, y2]) + rng.uniform(-3, 3, 4)
        expected = max((x2 - x1 - (hbb[2] - hbb[0])) / (hbb[2] - hbb[0]),
                       (y2 - y1 - (hbb[3] - hbb[1])) / (hbb[3] - hbb[1]))
        assert hbb_overshoot(corners, hbb, PARAMS) == pytest.approx(expected, abs=1e-4)
    assert math.isnan(hbb_overshoot(None, [0, 0, 10, 10], PARAMS))
