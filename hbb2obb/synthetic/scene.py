"""What a synthetic frame is made of: the vehicles' truth and the roads, shared by the generator
(:mod:`hbb2obb.synthetic.dataset`) and the renderer (:mod:`hbb2obb.synthetic.render`), and the
rectangles both layouts (:mod:`~hbb2obb.synthetic.roads`, :mod:`~hbb2obb.synthetic.lots`) place.

It sits in its own module so that neither of those two imports the other.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hbb2obb.boxes import Boxes

#: Corner radius of each class's body as a fraction of its breadth. The renderer draws bodies so
#: rounded, and a detector's HBB hugs the body: it sits inside a diagonal vehicle's rectangle.
CORNER_RADIUS = {0: 0.4, 1: 0.1, 2: 0.08, 3: 0.2}


@dataclass(frozen=True)
class Road:
    """A straight road across the frame: centre line, lanes on each side of it."""

    origin: tuple[float, float]
    angle: float  # direction of the centre line in degrees, image coordinates (y down)
    lanes: int  # lanes per direction
    lane_width: float

    @property
    def half_width(self) -> float:
        return self.lanes * self.lane_width


@dataclass(frozen=True, eq=False)
class SyntheticFrame:
    """One simulated frame in memory: the truth behind the three label files and the image.

    ``centre``, ``length``, ``breadth`` and ``heading`` (degrees, direction the vehicle faces) are
    the exact vehicle rectangles; ``gt`` holds their integer-rounded corners as written.
    ``hbb`` is ``(n, 4)`` ``xc yc w h`` as written. The ``*_mask`` arrays flag the GT boxes each
    simulated error hit; ``extras`` counts the spurious predictions; ``lots`` holds the parking lots
    (:class:`hbb2obb.synthetic.lots.Lot`) of the ``lots`` layout.
    """

    name: str
    width: int
    height: int
    roads: tuple[Road, ...]
    gt: Boxes
    centre: np.ndarray
    length: np.ndarray
    breadth: np.ndarray
    heading: np.ndarray
    hbb: np.ndarray
    pred: Boxes
    dropped_mask: np.ndarray
    turned_mask: np.ndarray
    widened_mask: np.ndarray
    extras: int
    lots: tuple = ()


def cos_sin(angle_deg: float) -> tuple[float, float]:
    """Cosine and sine, exact at multiples of 90 degrees (so axis-aligned boxes stay exact)."""
    turn = angle_deg % 360.0
    if turn % 90.0 == 0.0:
        return {0.0: (1.0, 0.0), 90.0: (0.0, 1.0), 180.0: (-1.0, 0.0), 270.0: (0.0, -1.0)}[turn]
    rad = np.radians(turn)
    return float(np.cos(rad)), float(np.sin(rad))


def rectangle(centre, length: float, breadth: float, heading: float) -> np.ndarray:
    """Corners ``(4, 2)`` of a rectangle facing ``heading``: rear corner first, then clockwise.

    Examples
    --------
    >>> rectangle((10, 20), 8, 4, 0).tolist()
    [[6.0, 18.0], [14.0, 18.0], [14.0, 22.0], [6.0, 22.0]]
    """
    c, s = cos_sin(heading)
    u, v = np.array([c, s]) * (length / 2), np.array([-s, c]) * (breadth / 2)
    return np.asarray(centre, dtype=np.float64) + np.stack([-u - v, u - v, u + v, -u + v])


def overlaps(quad: np.ndarray, placed: list[np.ndarray], gap: float) -> bool:
    """Whether a rectangle comes closer than ``gap`` to any placed one (separating axis test)."""
    if not placed:
        return False
    others = np.stack(placed)
    near = np.linalg.norm(others.mean(1) - quad.mean(0), axis=1) < (
        np.linalg.norm(others[:, 0] - others[:, 2], axis=1) / 2 + np.linalg.norm(quad[0] - quad[2]) / 2 + gap)
    if not near.any():
        return False
    others = others[near]
    edges = np.concatenate([np.diff(others[:, :3], axis=1), np.broadcast_to(np.diff(quad[:3], axis=0),
                                                                          (len(others), 2, 2))], axis=1)
    axes = np.stack([-edges[..., 1], edges[..., 0]], -1)
    axes /= np.linalg.norm(axes, axis=-1, keepdims=True)
    p = np.einsum("mkd,mcd->mkc", axes, others)
    q = np.einsum("mkd,cd->mkc", axes, quad)
    apart = (p.max(-1) + gap <= q.min(-1)) | (q.max(-1) + gap <= p.min(-1))
    return bool((~apart.any(axis=1)).any())
