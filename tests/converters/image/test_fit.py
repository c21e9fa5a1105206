"""The ``image`` converter's fit at a given breadth (:func:`fit_rectangle_at_breadth`)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from hbb2obb.converters.image.fit import fit_rectangle, fit_rectangle_at_breadth, long_edge

from conftest import rotated_rect
from conftest import shapely_iou as iou


def bounds(corners) -> tuple:
    corners = np.asarray(corners)
    return (*corners.min(axis=0), *corners.max(axis=0))


def sides(rect) -> tuple[float, float]:
    """Length and breadth of a rectangle."""
    edge, other = long_edge(np.asarray(rect))
    return math.hypot(*edge), math.hypot(*other)


@pytest.mark.parametrize("angle", [0, 7, 30, 44, 45, 46, 60, 90, 135, -20])
def test_at_its_own_breadth_it_recovers_a_rectangle_that_mask_and_hbb_agree_on(angle):
    truth = rotated_rect(50.0, 40.0, 30.0, 12.0, angle)
    fitted = fit_rectangle_at_breadth(truth, math.radians(angle), (50, 40), bounds(truth), 0.0, 0.0, 12.0)
    assert iou(fitted, truth) == pytest.approx(1.0, abs=1e-9)


@pytest.mark.parametrize("angle", [0, 20, 40, 45])
def test_the_true_breadth_undoes_a_mask_swollen_on_both_sides(angle):
    # the mask took in a halo 3 px broad along both long sides; the HBB is the truth's bounds
    t = math.radians(angle)
    truth = rotated_rect(0.0, 0.0, 40.0, 16.0, angle)
    swollen = rotated_rect(0.0, 0.0, 40.0, 22.0, angle)
    free = fit_rectangle(swollen, t, (0, 0), bounds(truth), 0.0, 0.0)
    held = fit_rectangle_at_breadth(swollen, t, (0, 0), bounds(truth), 0.0, 0.0, 16.0)
    assert sides(held)[1] == pytest.approx(16.0)
    assert iou(held, truth) > iou(free, truth) + 0.02
    assert iou(held, truth) > 0.97


def test_near_45_degrees_the_hbb_gives_the_length_once_the_breadth_is_known():
    # a loose HBB of a diagonal box fixes length plus breadth; a mask too short and too broad
    # leaves the free fit short, while the breadth held gives the length back from the HBB
    t = math.radians(45.0)
    truth = rotated_rect(0.0, 0.0, 40.0, 16.0, 45.0)
    mask = rotated_rect(0.0, 0.0, 34.0, 22.0, 45.0)
    free = fit_rectangle(mask, t, (0, 0), bounds(truth), 0.0, 0.0)
    held = fit_rectangle_at_breadth(mask, t, (0, 0), bounds(truth), 0.0, 0.0, 16.0)
    assert abs(sides(held)[0] - 40.0) < abs(sides(free)[0] - 40.0)
    assert iou(held, truth) > iou(free, truth) + 0.05


@pytest.mark.parametrize("breadth", [0.0, -3.0])
def test_no_rectangle_at_an_empty_breadth(breadth):
    outline = rotated_rect(0.0, 0.0, 10.0, 4.0, 0.0)
    assert fit_rectangle_at_breadth(outline, 0.0, (0, 0), bounds(outline), 0.0, 0.0, breadth) is None


def test_an_inverted_solution_is_refused():
    outline = rotated_rect(0.0, 0.0, 10.0, 4.0, 0.0)
    assert fit_rectangle_at_breadth(outline, 0.0, (0, 0), (3, 3, -3, -3), 0.0, 0.0, 4.0, hbb_weight=100.0) is None


def test_the_corner_rounding_is_the_held_breadths():
    # an HBB hugging a rounded diagonal vehicle: with the radius modelled at the held breadth the
    # sharp rectangle comes back
    import shapely

    t = math.radians(30.0)
    sharp = rotated_rect(0.0, 0.0, 40.0, 18.0, 30.0)
    radius = 0.3 * 18.0
    body = np.asarray(shapely.Polygon(rotated_rect(0.0, 0.0, 40.0 - 2 * radius, 18.0 - 2 * radius, 30.0))
                      .buffer(radius, 32).exterior.coords)[:-1]
    with_model = fit_rectangle_at_breadth(body, t, (0, 0), bounds(body), 0.3, 0.0, 18.0)
    without = fit_rectangle_at_breadth(body, t, (0, 0), bounds(body), 0.0, 0.0, 18.0)
    assert iou(with_model, sharp) > 0.99 and iou(with_model, sharp) > iou(without, sharp)
