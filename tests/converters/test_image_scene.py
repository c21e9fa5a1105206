"""Frame-level evidence of the ``image`` converter: tightness, neighbours' axes, the class check."""

from __future__ import annotations

import math

import numpy as np
import pytest

from hbb2obb.converters.image_box import REASON_NO_MASK, BoxResult, Candidate, Segmentation
from hbb2obb.converters.image_scene import classes_less_supported, estimate_tightness, neighbour_axes


def test_tightness_is_read_from_whole_pixel_sides():
    assert estimate_tightness([[357, 595, 394, 634], [0, 0, 5, 9]]) == "tight"
    assert estimate_tightness([[1892.15, 1834.5, 1955.25, 1921.1]]) == "loose"
    assert estimate_tightness([[357, 595, 394, 634], [1.5, 0, 5, 9]]) == "loose"  # one box decides
    assert estimate_tightness([]) == "loose"


def segmentation_at(x, y, thetas=(), reason=""):
    box = (x - 10.0, y - 10.0, x + 10.0, y + 10.0)
    candidates = [Candidate(t, t, np.zeros((2, 2), bool), np.zeros((0, 2)), np.zeros((2, 2))) for t in thetas]
    return Segmentation(box, np.array(box), None, candidates, reason)


def test_neighbours_vote_only_where_a_box_left_its_orientation_open():
    row = [segmentation_at(30.0 * k, 0.0, [math.radians(40 + k)]) for k in range(4)]
    open_box = segmentation_at(120.0, 0.0, [math.radians(45), math.radians(135)])
    no_mask = segmentation_at(105.0, 0.0, reason=REASON_NO_MASK)
    far = segmentation_at(2000.0, 0.0, [0.0, math.pi / 2])
    preferred = neighbour_axes(row + [open_box, no_mask, far])
    assert preferred[:4] == [None] * 4  # decided boxes keep their own
    assert math.degrees(preferred[4]) == pytest.approx(42.5, abs=1.0)  # the nearby row's mean
    assert preferred[5] is not None and preferred[6] is None  # no neighbour within reach


def test_neighbours_that_disagree_give_no_orientation():
    crossing = [segmentation_at(0.0, 0.0, [0.0]), segmentation_at(25.0, 0.0, [math.pi / 2]),
                segmentation_at(12.0, 12.0, [0.3, 0.3 + math.pi / 2])]
    assert neighbour_axes(crossing)[2] is None
    assert neighbour_axes([]) == []


def result(edges, hbb_edges, converted=True):
    return BoxResult(np.zeros((4, 2)) if converted else None, edges=edges, hbb_edges=hbb_edges)


def test_a_class_whose_fits_follow_edges_less_than_its_hbbs_is_marked():
    results = [result(0.8, 1.0), result(0.9, 1.0), result(1.2, 1.0), result(0.5, 1.0, converted=False),
               result(2.0, 1.0), result(1.5, 1.0), result(0.1, 1.0)]
    classes = [7, 7, 7, 7, 3, 3, 3]
    marked = classes_less_supported(results, classes)
    # class 7: median of 0.8, 0.9, 1.2, 0.5 is 0.85 < 1: its converted boxes are marked, the fallback is not
    assert marked.tolist() == [True, True, True, False, False, False, False]
    few = classes_less_supported([result(0.1, 1.0), result(0.1, 1.0)], [0, 0])
    assert not few.any()  # too few boxes to judge a class
    nothing = classes_less_supported([BoxResult(None), BoxResult(None), BoxResult(None)], [0, 0, 0])
    assert not nothing.any()
