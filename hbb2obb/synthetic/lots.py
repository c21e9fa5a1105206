"""Parking lots seen from a satellite: the ``lots`` layout of the synthetic generator.

Aerial frames such as DOTA's are not drone footage of a street: their vehicles are small (at
0.1-0.3 m per pixel a car is 8-20 pixels broad, a bus or truck 15-30), most of them are parked
side by side in rows, and the rows follow the lot's edges, which often run within a few degrees
of the image axes (cities are built on grids, and the scenes are usually north up). This module
places such vehicles: per frame one ground sampling (the cars' breadth in pixels), a few lots
(asphalt rectangles with painted stall lines), each with rows of stalls on both sides of an
aisle, most stalls taken, cars perpendicular to the row with a little play, and some lots of
buses or trucks. The renderer (:mod:`hbb2obb.synthetic.render`) draws the lots under the
vehicles and their shadows.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from hbb2obb.synthetic.scene import rectangle

#: Cars' breadth in pixels (one value per frame, the frame's ground sampling), and what the other
#: classes measure against it: a car about 1.8 x 4.4 m, a bus 2.5 x 12 m, a truck 2.5 x 8-10 m.
CAR_BREADTH_PX = (8.0, 20.0)
CAR_ASPECT = (2.2, 2.6)
LARGE_BREADTH = 1.4  # times the car breadth
LARGE_ASPECT = {1: (4.4, 5.0), 2: (3.2, 4.2)}
#: Share of lots holding buses or trucks instead of cars.
LARGE_LOT_SHARE = 0.3
#: Share of lots whose rows run within ``NEAR_AXIS_DEG`` of the image axes.
NEAR_AXIS_SHARE = 0.6
NEAR_AXIS_DEG = 5.0
#: Stall width in vehicle breadths; stalls taken; how much a parked car strays (degrees, breadths).
STALL_WIDTH = (1.35, 1.7)
OCCUPANCY = (0.6, 0.95)
PARKING_PLAY_DEG = 1.5
PARKING_PLAY = 0.08


@dataclass(frozen=True)
class Lot:
    """A parking lot: an asphalt rectangle ``length x depth`` around ``centre`` whose rows run at
    ``angle`` degrees (image coordinates, y down), with stall lines ``stall`` pixels apart on the
    rows at ``row_offsets`` (across the lot, from its centre line) reaching ``stall_depth`` deep."""

    centre: tuple[float, float]
    angle: float
    length: float
    depth: float
    stall: float
    stall_depth: float
    row_offsets: tuple[float, ...]


def _lot_angle(rng: np.random.Generator) -> float:
    if rng.random() < NEAR_AXIS_SHARE:
        return float(rng.choice([0.0, 90.0]) + rng.uniform(-NEAR_AXIS_DEG, NEAR_AXIS_DEG))
    return float(rng.uniform(0.0, 180.0))


def place_lots(rng: np.random.Generator, width: int, height: int, classes: np.ndarray, weights: np.ndarray,
               n_target: int, overlaps) -> tuple[list, tuple]:
    """Vehicles parked in lots: ``rows`` of ``(class, x, y, length, breadth, heading)`` and the lots.

    ``classes`` and ``weights`` say which classes to draw (cars are class 0, buses 1, trucks 2;
    a large lot takes 1 and 2 by their weights, a car lot 0 and 3, falling back to whatever is
    asked for); ``overlaps(quad)`` tells whether a rectangle would touch one already placed (and
    records it when it does not); at most ``n_target`` vehicles.
    """
    car_breadth = float(rng.uniform(*CAR_BREADTH_PX))
    large = [c for c in classes if c in (1, 2)]
    small = [c for c in classes if c not in (1, 2)]
    rows, lots = [], []
    for _ in range(12):  # lots tried
        if len(rows) >= n_target:
            break
        pool = large if large and (not small or rng.random() < LARGE_LOT_SHARE) else small
        share = np.array([weights[list(classes).index(c)] for c in pool], dtype=np.float64)
        share = share / share.sum() if share.sum() > 0 else np.full(len(pool), 1.0 / len(pool))
        breadth = car_breadth * (LARGE_BREADTH if pool is large else 1.0)
        aspect = float(np.mean(LARGE_ASPECT[pool[0]])) if pool is large else float(np.mean(CAR_ASPECT))
        stall, stall_depth = breadth * rng.uniform(*STALL_WIDTH), breadth * aspect * 1.1
        n_pairs = int(rng.integers(1, 4))  # pairs of rows back to back, an aisle between pairs
        aisle = stall_depth * 1.2
        offsets = []
        for pair in range(n_pairs):
            base = pair * (2 * stall_depth + aisle)
            offsets += [base - stall_depth / 2, base + stall_depth / 2]
        offsets = tuple(o - (offsets[0] + offsets[-1]) / 2 for o in offsets)
        n_stalls = int(rng.integers(5, 16))
        length, depth = n_stalls * stall, 2 * n_pairs * stall_depth + (n_pairs - 1) * aisle + aisle
        angle = _lot_angle(rng)
        reach = math.hypot(length, depth) / 2
        if 2 * reach >= min(width, height):
            continue
        centre = (float(rng.uniform(reach, width - reach)), float(rng.uniform(reach, height - reach)))
        if any(math.dist(centre, other.centre) < reach + math.hypot(other.length, other.depth) / 2 for other in lots):
            continue  # lots do not overlap (their bounding circles)
        lot = Lot(centre, angle, length, depth, stall, stall_depth, offsets)
        c, s = math.cos(math.radians(angle)), math.sin(math.radians(angle))
        along, across = np.array([c, s]), np.array([-s, c])
        occupancy = rng.uniform(*OCCUPANCY)
        placed_here = 0
        for index, offset in enumerate(offsets):
            facing = angle + (90.0 if index % 2 == 0 else -90.0) + (180.0 if rng.random() < 0.3 else 0.0)
            for k in range(n_stalls):
                if len(rows) >= n_target or rng.random() > occupancy:
                    continue
                cls = int(rng.choice(pool, p=share))
                vehicle_breadth = breadth * rng.uniform(0.93, 1.07)
                low, high = LARGE_ASPECT[cls] if cls in LARGE_ASPECT else CAR_ASPECT
                vehicle_length = vehicle_breadth * rng.uniform(low, high)
                slot = np.asarray(centre) + ((k + 0.5) * stall - length / 2) * along + offset * across
                slot = slot + rng.normal(0.0, PARKING_PLAY * breadth, 2)
                heading = (facing + rng.normal(0.0, PARKING_PLAY_DEG)) % 360.0
                quad = rectangle(slot, vehicle_length, vehicle_breadth, heading)
                inside = (quad >= 0).all() and (quad[:, 0] <= width - 1).all() and (quad[:, 1] <= height - 1).all()
                if inside and not overlaps(quad):
                    rows.append((cls, float(slot[0]), float(slot[1]), vehicle_length, vehicle_breadth, heading))
                    placed_here += 1
        if placed_here:
            lots.append(lot)
    return rows, tuple(lots)
