"""Input coercion shared by the geometry modules (private)."""

from __future__ import annotations

import numpy as np

#: Relative tolerance of the geometry: an area below ``REL_TOL * size**2`` counts as zero,
#: where ``size`` is the larger side of the box's axis-aligned bounds.
REL_TOL = 1e-12


def as_corners(corners) -> np.ndarray:
    """Corners as a float64 ``(n, 4, 2)`` array.

    Accepts an ``(n, 4, 2)`` or ``(n, 8)`` array-like, or anything with a ``corners``
    attribute (a :class:`~hbb2obb.boxes.Boxes`). Any empty input gives shape ``(0, 4, 2)``.
    """
    array = np.asarray(getattr(corners, "corners", corners), dtype=np.float64)
    if array.size == 0:
        return np.zeros((0, 4, 2))
    if array.ndim == 2 and array.shape[1] == 8:
        array = array.reshape(-1, 4, 2)
    if array.ndim != 3 or array.shape[1:] != (4, 2):
        raise ValueError(f"corners must have shape (n, 4, 2) or (n, 8), got {array.shape}")
    return array


def as_single(corners) -> np.ndarray:
    """One box given as a ``(4, 2)`` array-like or a flat sequence of 8 numbers, as ``(1, 4, 2)``."""
    array = np.asarray(corners, dtype=np.float64)
    if array.shape not in ((4, 2), (8,)):
        raise ValueError(f"one box needs 4 corners as shape (4, 2) or 8 numbers, got shape {array.shape}")
    return array.reshape(1, 4, 2)


def as_angles(theta) -> np.ndarray:
    """Angles in degrees as a float64 array (at least 1-d)."""
    return np.atleast_1d(np.asarray(theta, dtype=np.float64))
