"""Convex hull and minimum-area rectangle, checked against shapely and a brute-force angle sweep."""

from __future__ import annotations

import numpy as np
import pytest
import shapely
from hypothesis import given, settings
from hypothesis import strategies as st

from hbb2obb.geometry.hull import convex_hull, mask_outline_points, minimum_area_rectangle


def shoelace(polygon: np.ndarray) -> float:
    x, y = polygon[:, 0], polygon[:, 1]
    return 0.5 * float(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1)))


def brute_force_min_area(points: np.ndarray, steps: int = 36000) -> float:
    """Smallest enclosing-rectangle area over a fine sweep of directions in [0, 90) degrees."""
    theta = np.radians(np.arange(steps) * 90.0 / steps)
    u = points @ np.stack([np.cos(theta), np.sin(theta)])
    v = points @ np.stack([-np.sin(theta), np.cos(theta)])
    return float(((u.max(0) - u.min(0)) * (v.max(0) - v.min(0))).min())


@pytest.mark.parametrize(
    "points, expected",
    [
        ([], np.zeros((0, 2))),
        ([[1, 2]], [[1, 2]]),
        ([[1, 2], [1, 2]], [[1, 2]]),
        ([[0, 0], [3, 3]], [[0, 0], [3, 3]]),
        ([[0, 0], [1, 1], [2, 2], [3, 3]], [[0, 0], [3, 3]]),  # collinear: the two ends
        ([[0, 0], [2, 0], [2, 2], [0, 2], [1, 1], [1, 0]], [[0, 0], [2, 0], [2, 2], [0, 2]]),
        ([[0, 0], [4, 0], [2, 3], [2, 1]], [[0, 0], [4, 0], [2, 3]]),
    ],
)
def test_convex_hull_table(points, expected):
    hull = convex_hull(points)
    assert hull.shape == np.asarray(expected, dtype=float).reshape(-1, 2).shape
    np.testing.assert_array_equal(hull, np.asarray(expected, dtype=float).reshape(-1, 2))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(-50, 50), st.integers(-50, 50)), min_size=3, max_size=40))
def test_convex_hull_matches_shapely(raw):
    points = np.array(raw, dtype=float)
    reference = shapely.convex_hull(shapely.MultiPoint(points))
    hull = convex_hull(points)
    if reference.geom_type != "Polygon":  # all points collinear or coincident
        assert len(hull) <= 2
        return
    assert shoelace(hull) > 0  # counterclockwise with y up
    assert shoelace(hull) == pytest.approx(reference.area, abs=1e-9)
    assert len(hull) == len(reference.exterior.coords) - 1  # no collinear vertices kept


@pytest.mark.parametrize(
    "points, area",
    [
        ([[0, 0], [4, 0], [4, 2], [0, 2]], 8.0),
        ([[0, 0], [2, 2], [3, 1], [1, -1]], 4.0),  # a rotated 2.83 x 1.41 rectangle
        ([[0, 0], [1, 0], [0, 1]], 1.0),  # right triangle: on a leg or on the hypotenuse, both area 1
        ([[0, 0], [5, 5]], 0.0),  # degenerate: a segment
        ([[3, 3]], 0.0),
    ],
)
def test_minimum_area_rectangle_table(points, area):
    rect = minimum_area_rectangle(points)
    assert rect.shape == (4, 2)
    assert abs(shoelace(rect)) == pytest.approx(area, abs=1e-9)
    # the rectangle encloses every point (up to rounding)
    polygon = shapely.Polygon(rect).buffer(1e-7) if area > 0 else shapely.LineString(rect[:2]).buffer(1e-7)
    assert all(polygon.covers(shapely.Point(p)) for p in np.asarray(points, float))


def test_minimum_area_rectangle_rejects_no_points():
    with pytest.raises(ValueError):
        minimum_area_rectangle(np.zeros((0, 2)))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.floats(-100, 100), st.floats(-100, 100)), min_size=3, max_size=30))
@pytest.mark.filterwarnings("ignore::RuntimeWarning:shapely")  # shapely's own arithmetic on collinear points
def test_minimum_area_rectangle_matches_shapely_and_brute_force(raw):
    points = np.array(raw, dtype=float)
    reference = shapely.minimum_rotated_rectangle(shapely.MultiPoint(points))
    rect = minimum_area_rectangle(points)
    sides = np.linalg.norm(np.roll(rect, -1, axis=0) - rect, axis=1)
    np.testing.assert_allclose(sides[:2], sides[2:], atol=1e-7)  # opposite sides equal
    edge_a, edge_b = rect[1] - rect[0], rect[2] - rect[1]
    assert abs(float(edge_a @ edge_b)) <= 1e-6 * (1 + sides.max() ** 2)  # right angles
    area = abs(shoelace(rect))
    assert area == pytest.approx(reference.area, rel=1e-7, abs=1e-6)
    assert area <= brute_force_min_area(points) + 1e-6
    if area > 1e-6:
        grown = shapely.Polygon(rect).buffer(1e-6 * (1 + sides.max()))
        assert grown.covers(shapely.MultiPoint(points))


@pytest.mark.parametrize(
    "rows, expected_area",
    [
        ([[0, 0, 0]], None),  # empty mask
        ([[0, 1, 0]], 1.0),
        ([[1, 1, 1], [1, 0, 1], [1, 1, 1]], 9.0),  # a hole does not change the hull
        ([[1, 0, 0], [0, 0, 0], [0, 0, 1]], 5.0),  # two pixels at opposite corners: a hexagon
    ],
)
def test_mask_outline_points_hull_area(rows, expected_area):
    mask = np.array(rows, dtype=bool)
    points = mask_outline_points(mask)
    if expected_area is None:
        assert points.shape == (0, 2)
        return
    reference = shapely.unary_union([shapely.box(c, r, c + 1, r + 1) for r, c in zip(*np.nonzero(mask))])
    assert shoelace(convex_hull(points)) == pytest.approx(reference.convex_hull.area)
    assert shoelace(convex_hull(points)) == pytest.approx(expected_area)


@pytest.mark.parametrize("n, seed", [(33, 0), (200, 1), (2000, 2)])
@pytest.mark.parametrize("shape", ["disc", "square", "grid"])
def test_convex_hull_of_many_points_matches_shapely(n, seed, shape):
    """Many points: the extreme-point prefilter must not drop a hull vertex."""
    rng = np.random.default_rng(seed)
    if shape == "disc":
        angle, radius = rng.uniform(0, 2 * np.pi, n), np.sqrt(rng.uniform(0, 1, n))
        points = np.stack([radius * np.cos(angle), radius * np.sin(angle)], 1) * 50
    elif shape == "square":
        points = rng.uniform(-10, 10, (n, 2))
    else:  # integer grid points, many collinear and tied
        points = rng.integers(0, 12, (n, 2)).astype(float)
    hull = convex_hull(points)
    reference = shapely.convex_hull(shapely.MultiPoint(points))
    assert shoelace(hull) == pytest.approx(reference.area, rel=1e-12)
    assert len(hull) == len(reference.exterior.coords) - 1
