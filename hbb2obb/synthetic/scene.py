"""What a synthetic frame is made of: the vehicles' truth and the roads, shared by the generator
(:mod:`hbb2obb.synthetic.dataset`) and the renderer (:mod:`hbb2obb.synthetic.render`).

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
