"""Vehicles on roads, as a drone sees a street: the ``roads`` layout of the synthetic generator.

A frame gets two or three straight roads (a street grid lined up with the camera a third of the
time, otherwise at any angle), each with one to three lanes a direction. Vehicles are proposed
in a lane (driving along it, never exactly axis-aligned), entering at a frame edge (slid in
until a corner touches it), or parked off the roads (some exactly axis-aligned);
:func:`hbb2obb.synthetic.dataset.simulate_frame` keeps the proposals that stay clear of the vehicles placed before.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from hbb2obb.synthetic.scene import Road, cos_sin, rectangle

LANE_WIDTH_4K = 80.0


def _line_span(point, direction, width: int, height: int) -> tuple[float, float]:
    """Parameter range ``t`` over which ``point + t * direction`` stays inside the frame."""
    lo, hi = -np.inf, np.inf
    for p, d, size in ((point[0], direction[0], width - 1), (point[1], direction[1], height - 1)):
        if abs(d) < 1e-12:
            if not 0 <= p <= size:
                return 0.0, -1.0
            continue
        a, b = sorted(((0 - p) / d, (size - p) / d))
        lo, hi = max(lo, a), min(hi, b)
    return lo, hi


def make_roads(rng: np.random.Generator, width: int, height: int, scale: float) -> tuple[Road, ...]:
    """Two or three roads across a frame, lanes ``LANE_WIDTH_4K`` wide at 4K (times ``scale``, 0.95-1.1)."""
    base = rng.uniform(0.0, 180.0)
    if rng.random() < 0.35:  # a street grid lined up with the camera
        base = float(rng.choice([0.0, 90.0]) + rng.normal(0.0, 3.0))
    angles = [base, base + 90.0 + rng.normal(0.0, 4.0)]
    if rng.random() < 0.5:
        angles.append(base + rng.uniform(30.0, 60.0))
    roads = []
    for angle in angles:
        origin = (rng.uniform(0.2, 0.8) * width, rng.uniform(0.2, 0.8) * height)
        lanes = int(rng.integers(1, 4))
        roads.append(Road(origin, float(angle % 180.0), lanes, LANE_WIDTH_4K * scale * rng.uniform(0.95, 1.1)))
    return tuple(roads)


def _on_road(point, roads: Sequence[Road], margin: float) -> bool:
    for road in roads:
        c, s = cos_sin(road.angle)
        if abs(-(point[0] - road.origin[0]) * s + (point[1] - road.origin[1]) * c) < road.half_width + margin:
            return True
    return False


def propose_vehicle(rng, kind: str, length: float, breadth: float, roads, width: int, height: int):
    """One candidate ``(centre, heading)`` for a vehicle of the given kind, or ``None``."""
    if kind in ("road", "edge"):
        road = roads[rng.integers(len(roads))]
        side = 1 if rng.random() < 0.5 else -1
        c, s = cos_sin(road.angle)
        u, v = np.array([c, s]), np.array([-s, c])
        offset = side * (rng.integers(road.lanes) + 0.5 + rng.normal(0.0, 0.06)) * road.lane_width
        anchor = np.asarray(road.origin) + offset * v
        lo, hi = _line_span(anchor, u, width, height)
        if hi <= lo:
            return None
        heading = road.angle + (0.0 if side > 0 else 180.0) + rng.normal(0.0, 2.0)
        deviation = (heading + 45.0) % 90.0 - 45.0  # a road vehicle is never exactly axis-aligned
        if abs(deviation) < 2.0:
            heading += (2.0 if deviation >= 0 else -2.0) - deviation
        if kind == "road":
            return anchor + rng.uniform(lo, hi) * u, heading
        start = rng.random() < 0.5  # enter at one end of the lane and slide in until a corner touches
        end, inward = anchor + (lo if start else hi) * u, (u if start else -u)
        offsets = rectangle((0.0, 0.0), length, breadth, heading)
        axis = 0 if min(end[0], width - 1 - end[0]) <= min(end[1], height - 1 - end[1]) else 1
        if abs(inward[axis]) < 0.25:
            return None
        limit = 0.0 if inward[axis] > 0 else (width - 1 if axis == 0 else height - 1)
        extreme = offsets[:, axis].min() if inward[axis] > 0 else offsets[:, axis].max()
        return end + (limit - end[axis] - extreme) / inward[axis] * inward, heading
    centre = np.array([rng.uniform(0, width - 1), rng.uniform(0, height - 1)])
    if _on_road(centre, roads, breadth):
        return None
    heading = float(rng.integers(4) * 90) if kind == "aligned" else rng.uniform(0.0, 360.0)
    return centre, heading
