"""Morphology, connected components, k-means and the foreground model, against brute force."""

from __future__ import annotations

from collections import deque

import numpy as np
import pytest

from hbb2obb.converters.image.segmentation import (
    closing,
    dilate,
    erode,
    foreground_log_odds,
    kmeans,
    label_components,
    morphology,
    neighbour_sum,
    opening,
    select_components,
)


def brute_erode(mask: np.ndarray, size: int) -> np.ndarray:
    """Pixel-by-pixel erosion by a centred size x size square, outside = False."""
    h, w = mask.shape
    before = size // 2
    out = np.zeros_like(mask)
    for r in range(h):
        for c in range(w):
            r0, c0 = r - before, c - before
            window = [(rr, cc) for rr in range(r0, r0 + size) for cc in range(c0, c0 + size)]
            out[r, c] = all(0 <= rr < h and 0 <= cc < w and mask[rr, cc] for rr, cc in window)
    return out


def brute_dilate(mask: np.ndarray, size: int) -> np.ndarray:
    h, w = mask.shape
    before = size // 2
    out = np.zeros_like(mask)
    for r in range(h):
        for c in range(w):
            r0, c0 = r - before, c - before
            out[r, c] = any(0 <= rr < h and 0 <= cc < w and mask[rr, cc]
                            for rr in range(r0, r0 + size) for cc in range(c0, c0 + size))
    return out


def flood_components(mask: np.ndarray, connectivity: int) -> list[set]:
    """Components as sets of pixels, by breadth-first search."""
    steps = [(0, 1), (1, 0), (0, -1), (-1, 0)]
    if connectivity == 8:
        steps += [(1, 1), (1, -1), (-1, 1), (-1, -1)]
    seen = np.zeros_like(mask)
    parts = []
    for start in zip(*np.nonzero(mask)):
        if seen[start]:
            continue
        part, queue = set(), deque([start])
        seen[start] = True
        while queue:
            r, c = queue.popleft()
            part.add((r, c))
            for dr, dc in steps:
                rr, cc = r + dr, c + dc
                if 0 <= rr < mask.shape[0] and 0 <= cc < mask.shape[1] and mask[rr, cc] and not seen[rr, cc]:
                    seen[rr, cc] = True
                    queue.append((rr, cc))
        parts.append(part)
    return parts


RANDOM_MASKS = [np.random.default_rng(seed).random((9, 11)) < density
                for seed, density in ((0, 0.3), (1, 0.5), (2, 0.7), (3, 0.9))]


@pytest.mark.parametrize("mask", RANDOM_MASKS + [np.zeros((4, 5), bool), np.ones((4, 5), bool)])
@pytest.mark.parametrize("size", [1, 2, 3, 4, 5])
def test_erode_and_dilate_match_brute_force(mask, size):
    np.testing.assert_array_equal(erode(mask, size), brute_erode(mask, size))
    np.testing.assert_array_equal(dilate(mask, size), brute_dilate(mask, size))


@pytest.mark.parametrize("mask", RANDOM_MASKS)
def test_opening_and_closing_are_anti_extensive_and_extensive(mask):
    opened, closed = opening(mask, 3), closing(mask, 3)
    assert not (opened & ~mask).any()  # opening only removes
    assert not (mask & ~closed).any()  # closing only adds
    np.testing.assert_array_equal(opening(opened, 3), opened)  # both are idempotent
    np.testing.assert_array_equal(closing(closed, 3), closed)


def test_closing_fills_a_gap_and_keeps_border_objects():
    mask = np.zeros((7, 12), bool)
    mask[1:6, 0:5] = True
    mask[1:6, 6:12] = True  # a one-pixel gap at column 5; the object touches the left border
    closed = closing(mask, 3)
    assert closed[1:6, 0:12].all()
    assert not closed[0].any() and not closed[6].any()


@pytest.mark.parametrize(
    "percentage, expected_size",
    [
        (0.0, None),  # off
        (0.1, 3),  # 10 % of 20 = 2 -> odd, at least 3
        (0.3, 7),  # 6 -> 7 (odd)
        (0.45, 9),
        (-0.3, 7),  # closing with the same kernel
    ],
)
def test_morphology_kernel_size_rule(percentage, expected_size):
    mask = np.zeros((30, 50), bool)
    mask[5:25, 5:45] = True  # smaller side 20
    mask[14, 45:49] = True  # a one-pixel spur
    mask[10, 20] = False  # a one-pixel hole
    result = morphology(mask, percentage)
    if expected_size is None:
        np.testing.assert_array_equal(result, mask)
    elif percentage > 0:
        np.testing.assert_array_equal(result, opening(mask, expected_size))
        assert not result[14, 45:49].any()
    else:
        np.testing.assert_array_equal(result, closing(mask, expected_size))
        assert result[10, 20]


def test_morphology_of_an_empty_mask_is_empty():
    assert not morphology(np.zeros((5, 5), bool), 0.2).any()


@pytest.mark.parametrize("mask", RANDOM_MASKS + [np.zeros((3, 3), bool), np.ones((1, 7), bool),
                                                 np.eye(6, dtype=bool), np.eye(6, dtype=bool)[::-1]])
@pytest.mark.parametrize("connectivity", [4, 8])
def test_label_components_match_flood_fill(mask, connectivity):
    labels, n = label_components(mask, connectivity)
    expected = flood_components(mask, connectivity)
    assert n == len(expected)
    assert (labels[~mask] == 0).all()
    found = [set(zip(*np.nonzero(labels == k))) for k in range(1, n + 1)]
    assert sorted(map(sorted, found)) == sorted(map(sorted, expected))
    firsts = [min(part) for part in found]  # numbered in raster order of their first pixel
    assert firsts == sorted(firsts)


@pytest.mark.parametrize("density", [0.35, 0.45, 0.6])
@pytest.mark.parametrize("connectivity", [4, 8])
def test_label_components_match_flood_fill_on_large_masks(density, connectivity):
    mask = np.random.default_rng(int(density * 100)).random((40, 57)) < density
    labels, n = label_components(mask, connectivity)
    expected = flood_components(mask, connectivity)
    assert n == len(expected)
    assert sorted(sorted(zip(*np.nonzero(labels == k))) for k in range(1, n + 1)) == sorted(map(sorted, expected))


def test_label_components_long_spiral_is_one_component():
    mask = np.zeros((21, 21), bool)
    r0, c0, r1, c1 = 0, 0, 20, 20
    while r0 <= r1 and c0 <= c1:  # a one-pixel-wide spiral: the worst case for propagation
        mask[r0, c0:c1 + 1] = True
        mask[r0:r1 + 1, c1] = True
        if r1 - r0 >= 2:
            mask[r1, c0 + 2:c1 + 1] = True
        if c1 - c0 >= 4:
            mask[r0 + 2:r1 + 1, c0 + 2] = True
        r0, c0, r1, c1 = r0 + 2, c0 + 2, r1 - 2, c1 - 2
    assert label_components(mask, 4)[1] == len(flood_components(mask, 4))


def test_label_components_rejects_bad_connectivity():
    with pytest.raises(ValueError):
        label_components(np.ones((2, 2), bool), 6)


@pytest.mark.parametrize(
    "samples, k, expected_centres",
    [
        ([[0.0, 0.0], [0.0, 1.0], [10.0, 10.0], [10.0, 11.0]], 2, [[0.0, 0.5], [10.0, 10.5]]),
        ([[5.0, 5.0]] * 4, 3, [[5.0, 5.0]]),  # fewer distinct samples than clusters
        ([[1.0], [2.0], [3.0], [50.0], [51.0], [99.0]], 3, [[2.0], [50.5], [99.0]]),
    ],
)
def test_kmeans_table(samples, k, expected_centres):
    centres, assignment = kmeans(np.array(samples), k)
    np.testing.assert_allclose(centres, expected_centres)
    distances = ((np.array(samples)[:, None] - centres[None]) ** 2).sum(-1)
    np.testing.assert_array_equal(assignment, distances.argmin(1))  # every sample at its nearest centre


def test_kmeans_empty_and_deterministic():
    centres, assignment = kmeans(np.zeros((0, 3)), 4)
    assert centres.shape == (0, 3) and assignment.shape == (0,)
    data = np.random.default_rng(5).normal(size=(300, 3))
    first, second = kmeans(data, 5), kmeans(data.copy(), 5)
    np.testing.assert_array_equal(first[0], second[0])


def test_neighbour_sum_matches_loops():
    values = np.random.default_rng(2).normal(size=(5, 6))
    padded = np.pad(values, 1, mode="edge")
    expected = np.array([[padded[r:r + 3, c:c + 3].sum() - values[r, c] for c in range(6)] for r in range(5)])
    np.testing.assert_allclose(neighbour_sum(values), expected)


def test_foreground_log_odds_learns_colour_beyond_the_prior():
    """The prior covers only the left half of a bright square; colour evidence extends it."""
    clusters = np.zeros((20, 20), dtype=int)
    clusters[5:15, 5:15] = 1  # the object's colour
    prior = np.full((20, 20), -1.0)
    prior[5:15, 5:10] = 1.0  # the prior knows only half of it
    prior[:, :2] = -10.0  # a ring that is background for sure
    posterior, evidence = foreground_log_odds(clusters, prior)
    assert (posterior[5:15, 5:15] > 0).all()
    assert (posterior[clusters == 0] < 0).all()
    assert evidence[10, 12] > 0 > evidence[0, 0]


def test_foreground_log_odds_smoothing_removes_an_isolated_pixel():
    clusters = np.zeros((15, 15), dtype=int)
    clusters[3:12, 3:12] = 1
    clusters[7, 7] = 0  # one background-coloured pixel inside the object
    prior = np.where(clusters == 1, 0.5, -0.5)
    prior[7, 7] = 0.5
    with_smoothing, _ = foreground_log_odds(clusters, prior, smoothing_steps=5, coupling=0.5)
    without, _ = foreground_log_odds(clusters, prior, smoothing_steps=0)
    assert with_smoothing[7, 7] > 0 > without[7, 7]


@pytest.mark.parametrize(
    "rows, inside_cols, expected",
    [
        # the component most inside the box wins; a neighbour reaching in from outside is dropped
        (["11000011", "11000011"], slice(0, 5), ["11000000", "11000000"]),
        # a body split in two inside the box stays whole
        (["11011000", "11011000"], slice(0, 6), ["11011000", "11011000"]),
        # a speck inside the box (below 3 % of the box) is dropped
        (["1" * 8 + "0" * 30 + "1" + "0"] + ["1" * 8 + "0" * 32] * 9, slice(0, 40), ["1" * 8 + "0" * 32] * 10),
        (["0000", "0000"], slice(0, 4), ["0000", "0000"]),  # empty
    ],
)
def test_select_components_table(rows, inside_cols, expected):
    mask = np.array([[c == "1" for c in row] for row in rows])
    inside = np.zeros_like(mask)
    inside[:, inside_cols] = True
    result = select_components(mask, inside)
    np.testing.assert_array_equal(result, np.array([[c == "1" for c in row] for row in expected]))


def test_select_components_other_parts_must_lie_where_they_are_told():
    # a diagonal body in its box, and a neighbour's corner in the box's empty corner: inside the
    # box, so kept by default; outside the rough rectangle of the body, so dropped when that is given
    mask = np.array([[c == "1" for c in row] for row in ["11000000", "11100000", "01110011", "00111011",
                                                         "00011000", "00001110"]])
    box = np.ones_like(mask)
    rough = np.array([[abs(r - c) <= 1 for c in range(8)] for r in range(6)])
    assert select_components(mask, box)[2:4, 6:].all()
    kept = select_components(mask, box, parts_inside=rough)
    assert not kept[2:4, 6:].any() and kept[0:2, 0:2].all() and kept.sum() == mask.sum() - 4
