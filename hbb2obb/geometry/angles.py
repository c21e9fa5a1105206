"""Orientation of boxes and the angle between two orientations (docs/metrics.md §2).

Angles are in degrees. An orientation is a direction modulo 180, in [0, 180); the error
between two orientations is at most 90.
"""

from __future__ import annotations

import numpy as np

from hbb2obb.geometry._arrays import as_angles, as_corners, as_single

_CLEARLY = 1.0 + 1e-9  # squared edge lengths this far apart order their hypots alike (rounding: ~1e-15)
_TINY_SQUARE = 1e-250  # below it a square of a difference may be subnormal: left to hypot


def _half_turn(theta: np.ndarray) -> np.ndarray:
    """``theta mod 180`` guaranteed in [0, 180) (a tiny negative would round up to 180.0)."""
    theta = np.mod(theta, 180.0)
    return np.where(theta >= 180.0, 0.0, theta)


def orientation(corners) -> np.ndarray:
    """Direction of each box in degrees, in [0, 180).

    Of the edges p1->p2 and p2->p3 the longer one is kept (the first on an exact tie) and its
    direction ``atan2(dy, dx)`` is taken modulo 180. The corners are used as given (image
    coordinates, y down); they are not re-wound, so for a square the listing decides.

    Parameters
    ----------
    corners : array_like, shape (n, 4, 2)
        Corner coordinates.

    Returns
    -------
    ndarray, shape (n,)

    Examples
    --------
    >>> orientation([[[0, 0], [4, 0], [4, 2], [0, 2]], [[0, 0], [1, 1], [0, 2], [-1, 1]]]).tolist()
    [0.0, 45.0]
    >>> orientation([[[0, 0], [0, 2], [4, 2], [4, 0]]]).tolist()
    [0.0]
    """
    flat = as_corners(corners).reshape(-1, 8)  # whole columns: long inner loops, no (n, 2) reductions
    first_x, first_y = flat[:, 2] - flat[:, 0], flat[:, 3] - flat[:, 1]
    second_x, second_y = flat[:, 4] - flat[:, 2], flat[:, 5] - flat[:, 3]
    # np.hypot, as the reference measures the edges: comparing squared lengths instead rounds
    # differently and breaks exact decimal ties the other way (edges (-17.06, 16.65) and
    # (-16.65, -17.06): equal by hypot, not by dx^2 + dy^2), turning a near-square box by 90 deg.
    # Squared lengths apart by far more than their rounding (1e-9 relative, and above the
    # range where squares lose precision) order the hypots the same way; only the others
    # (squares, near-squares, NaN, overflow) are measured by hypot.
    first2, second2 = first_x * first_x, second_x * second_x
    first2 += first_y * first_y
    second2 += second_y * second_y
    longer = second2 > first2 * _CLEARLY + _TINY_SQUARE
    clear = longer | (first2 > second2 * _CLEARLY + _TINY_SQUARE)
    clear &= np.isfinite(first2 + second2)  # an overflowed square orders nothing
    unclear = np.flatnonzero(~clear)
    if unclear.size:
        longer[unclear] = np.hypot(second_x[unclear], second_y[unclear]) > np.hypot(first_x[unclear], first_y[unclear])
    theta = np.degrees(np.arctan2(np.where(longer, second_y, first_y), np.where(longer, second_x, first_x)))
    # atan2 is in [-180, 180], where "mod 180" is adding 180 to the angles <= 0: the values
    # _half_turn gives (zero too comes out as +0.0), without np.mod's costly division.
    theta = np.where(theta <= 0.0, theta + 180.0, theta)
    return np.where(theta >= 180.0, 0.0, theta)


def angle_difference(theta_a, theta_b) -> np.ndarray:
    """Smallest angle between two orientations: ``d = |a - b| mod 180``, then ``min(d, 180 - d)``.

    Parameters
    ----------
    theta_a, theta_b : array_like
        Orientations in degrees; broadcast against each other.

    Returns
    -------
    ndarray
        Errors in [0, 90].

    Examples
    --------
    >>> angle_difference([10, 0, 45], [170, 90, 45]).tolist()
    [20.0, 90.0, 0.0]
    """
    d = np.mod(np.abs(as_angles(theta_a) - as_angles(theta_b)), 180.0)
    return np.minimum(d, 180.0 - d)


def orientation_errors(a, b) -> np.ndarray:
    """Orientation error of aligned pairs of boxes ``a[i]``, ``b[i]``.

    Parameters
    ----------
    a, b : array_like, shape (n, 4, 2)
        Corner coordinates of the two sides, aligned.

    Returns
    -------
    ndarray, shape (n,)
        ``angle_difference(orientation(a), orientation(b))``, in [0, 90].

    Examples
    --------
    >>> orientation_errors([[[0, 0], [4, 0], [4, 2], [0, 2]]], [[[0, 0], [2, 2], [1, 3], [-1, 1]]]).tolist()
    [45.0]
    """
    a, b = as_corners(a), as_corners(b)
    if a.shape != b.shape:
        raise ValueError(f"aligned pairs need equal shapes, got {a.shape} and {b.shape}")
    if not len(a):
        return np.zeros(0)
    # Both orientations are in [0, 180), so |a - b| is too and angle_difference's mod is a no-op.
    d = np.abs(orientation(a) - orientation(b))
    return np.minimum(d, 180.0 - d)


def off_axis_angle(theta) -> np.ndarray:
    """How far an orientation is from the nearest image axis: ``min(t, |t - 90|, 180 - t)``.

    Parameters
    ----------
    theta : array_like
        Orientations in degrees; taken modulo 180 first.

    Returns
    -------
    ndarray
        Angles in [0, 45].

    Examples
    --------
    >>> off_axis_angle([0, 10, 80, 135, 179]).tolist()
    [0.0, 10.0, 10.0, 45.0, 1.0]
    """
    t = _half_turn(as_angles(theta))
    return np.minimum(np.minimum(t, np.abs(t - 90.0)), 180.0 - t)


def orientation_error(a, b) -> float:
    """Orientation error between two boxes, in degrees in [0, 90].

    Parameters
    ----------
    a, b : array_like
        One box each: corners as shape (4, 2), or 8 numbers ``x1 y1 ... x4 y4``.

    Returns
    -------
    float

    Examples
    --------
    >>> orientation_error([0, 0, 4, 0, 4, 2, 0, 2], [[0, 0], [0, 4], [-2, 4], [-2, 0]])
    90.0
    """
    return float(orientation_errors(as_single(a), as_single(b))[0])
