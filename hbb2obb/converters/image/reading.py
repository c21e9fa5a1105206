"""How a frame's HBBs hold their objects, read from its pixels: tight, corner-cutting, or with a margin.

Three kinds of HBB prompt need three readings. A *tight* box is the bounding box of the object's
rectangle (boxed from OBBs); a *corner-cutting* one hugs a vehicle's rounded body, inside its
rectangle's corners (hand-drawn boxes, Songdo's); a box with a *margin* leaves room around the
object on every side (detectors, quick annotators). The pixels tell them apart by where the
objects' outlines end:

- with a margin, some way inside the box's sides, whatever the object's angle;
- in a tight box around a rounded body (a car, a van), at the sides for objects along the image
  axes, but inside the sides for diagonal ones: the rounded corners stop short of the
  rectangle's (the "pixel or two around the warm body" of tight thermal labels);
- in a corner-cutting box, at the sides at every angle.

Per box, the colour gradient's magnitude and the colour's distance from the ground (each side's
median colour from 12% of the box's size outward) are averaged along lines parallel to each side
at offsets from 20% of the box's size inside to 20% outside (each box's window cropped and
smoothed on its own: a 4K frame costs no whole-frame pass), each scaled by the box's own level
deep inside, and the box's angle modulo 90 degrees is read from the same gradients
(:func:`~hbb2obb.converters.image.fit.dominant_axis`). Over a group of boxes the median profile
falls from the objects' level to the ground's; where it crosses half way is where their outlines
end, the *edge* (:func:`edge_position`, a share of the box's size, negative inside).

- A margin is read from the *colour* edge of the boxes along the axes: a blurred step's colour
  crosses half way on the step whatever the blur, where the gradient's half way moves out with
  it (thermal optics moved it 0.04 of the box). A frame has a margin when that edge lies inside
  ``margin_colour_edge``, unless the gradient edge of its diagonal boxes lies outside
  ``margin_diagonal_edge`` (a margin leaves room at every angle; hand-drawn boxes a little loose
  along the axes but cutting diagonal objects' corners do not); the room is the edge less that
  of tight prompts, scaled (``margin_colour_bias``, ``margin_colour_scale``). A frame without
  enough boxes along the axes has a margin when the gradient edge of all its boxes lies inside
  ``margin_edge``.
- Otherwise tight and corner-cutting boxes differ by how the gradient edge moves with the
  box's angle (:func:`edge_slope`, over every box, so that a few diagonal boxes are enough): it
  moves inward on diagonal boxes in a tight frame (slope below ``-tight_slope``, and the
  diagonal boxes' edge, when measured, inside ``tight_diagonal_edge``), not in a corner-cutting
  one; a frame whose diagonal boxes' edge lies well inside (``tight_diagonal_inside``) is tight
  whatever the slope (its boxes along the axes end inside too, blurred or jittered). With
  diagonal boxes only, a frame is tight when their edge lies inside ``tight_edge``; with boxes
  along the axes only, it is read as corner-cutting (along the axes the two kinds are the same
  boxes).

The numbers, measured on generated roads (day, thermal, night) and on prompts made from the
real samples' ground truth, are in :class:`~hbb2obb.converters.image.params.ImageParams`.

The boxes of a frame with a margin are shrunk by it (:func:`shrink_boxes`) and fitted as tight
boxes. One margin for the frame: measured per box from the same profiles or from the masks, the
margins came out noisier than the frame's one value is off for any box (the shrunk boxes then
scored 0.01-0.05 lower).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from hbb2obb.converters.image.fit import dominant_axis
from hbb2obb.converters.image.params import ImageParams

#: Offsets from each side (shares of the box's size along the side's normal; outward positive).
OFFSETS = np.round(np.arange(-0.20, 0.2001, 0.01), 2)
#: Points along each side the gradient is averaged over (shares of the side's length).
ALONG = np.linspace(0.0, 1.0, 24)


def side_points(xyxy, offsets) -> tuple[np.ndarray, np.ndarray]:
    """Image coordinates of the :data:`ALONG` points of the four sides of one box moved each of
    ``offsets`` of its size outward: arrays ``(len(offsets), 4 * len(ALONG))``, the sides left,
    right, top, bottom.

    Examples
    --------
    >>> xs, ys = side_points((10.0, 20.0, 30.0, 60.0), [0.0, 0.5])
    >>> xs.shape, xs[:, 0].tolist(), ys[:, -1].tolist()
    ((2, 96), [10.0, 0.0], [60.0, 80.0])
    """
    x1, y1, x2, y2 = (float(v) for v in xyxy)
    w, h = x2 - x1, y2 - y1
    offsets = np.asarray(offsets, dtype=np.float64)[:, None]
    n = len(ALONG)
    along_x = np.broadcast_to(x1 + ALONG * w, (len(offsets), n))
    along_y = np.broadcast_to(y1 + ALONG * h, (len(offsets), n))
    left, right = np.repeat(x1 - offsets * w, n, axis=1), np.repeat(x2 + offsets * w, n, axis=1)
    top, bottom = np.repeat(y1 - offsets * h, n, axis=1), np.repeat(y2 + offsets * h, n, axis=1)
    return (np.concatenate([left, right, along_x, along_x], axis=1),
            np.concatenate([along_y, along_y, top, bottom], axis=1))


def box_profile(pixels: np.ndarray, x0: int, y0: int, xyxy) -> tuple[np.ndarray, np.ndarray]:
    """The mean gradient magnitude, and the mean colour distance from the ground, at every offset
    of :data:`OFFSETS` from the four sides of one box.

    ``pixels`` is the smoothed window ``(h, w, channels)`` whose top-left pixel is image pixel
    ``(x0, y0)``; points outside it count as its border. Each side's ground is its median colour
    from offset 0.12 outward.

    Examples
    --------
    >>> image = np.zeros((60, 60, 1), np.float32); image[20:40, 20:40] = 100.0  # a square, a tight box
    >>> gradient, colour = box_profile(image, 0, 0, (20, 20, 40, 40))
    >>> bool(gradient[OFFSETS == 0][0] > gradient[OFFSETS == 0.1][0] and gradient[OFFSETS == 0.1][0] == 0)
    True
    >>> round(float(colour[OFFSETS == -0.1][0])), float(colour[OFFSETS == 0.1][0])  # line ends on the sides
    (96, 0.0)
    """
    gy, gx = np.gradient(pixels, axis=(0, 1))
    magnitude = np.sqrt((gx * gx + gy * gy).sum(axis=2))
    height, width = magnitude.shape
    xs, ys = side_points(xyxy, OFFSETS)
    xi = np.clip(np.round(xs).astype(int) - x0, 0, width - 1)
    yi = np.clip(np.round(ys).astype(int) - y0, 0, height - 1)
    gradient = magnitude[yi, xi].mean(axis=1)
    colours = pixels[yi, xi].reshape(len(OFFSETS), 4, len(ALONG), -1).astype(np.float64)
    ground = np.median(colours[OFFSETS >= 0.12], axis=(0, 2))  # per side and channel
    colour = np.sqrt(((colours - ground[None, :, None, :]) ** 2).sum(axis=3)).mean(axis=(1, 2))
    return gradient, colour


def frame_profiles(image, xyxy, params: ImageParams) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Profiles of :func:`box_profile` (each scaled by its level deep inside the box) and angles
    (degrees modulo 90, from the gradients inside the box) of at most ``params.reading_boxes``
    boxes, evenly spread over the list; boxes under 4 pixels a side and boxes with no gradient
    inside left out.

    Returns
    -------
    profiles : ndarray, shape (m, len(OFFSETS))
        Gradient magnitude.
    colours : ndarray, shape (m, len(OFFSETS))
        Colour distance from the ground.
    angles : ndarray, shape (m,)
    """
    import cv2  # imported here: the commands that never convert do not pay for loading OpenCV

    xyxy = np.asarray(xyxy, dtype=np.float64).reshape(-1, 4)
    width, height = image.size
    sizes = xyxy[:, 2:] - xyxy[:, :2]
    usable = np.flatnonzero((sizes >= 4.0).all(axis=1))
    if len(usable) > params.reading_boxes:
        usable = usable[np.linspace(0, len(usable) - 1, params.reading_boxes).round().astype(int)]
    profiles, colours, angles = [], [], []
    reach = OFFSETS.max() + 0.05
    for index in usable:
        x1, y1, x2, y2 = xyxy[index]
        w, h = x2 - x1, y2 - y1
        left, top = int(max(0, np.floor(x1 - reach * w))), int(max(0, np.floor(y1 - reach * h)))
        right, bottom = int(min(width, np.ceil(x2 + reach * w) + 1)), int(min(height, np.ceil(y2 + reach * h) + 1))
        if right - left < 4 or bottom - top < 4:
            continue
        window = np.asarray(image.crop((left, top, right, bottom)), dtype=np.float32)
        window = window.reshape(window.shape[0], window.shape[1], -1)
        smoothed = cv2.GaussianBlur(window, (0, 0), params.reading_smoothing).reshape(window.shape)
        profile, colour = box_profile(smoothed, left, top, xyxy[index])
        inner = profile[OFFSETS <= -0.16].mean()
        if not inner > 0:
            continue
        gray = smoothed.mean(axis=2)
        xs, ys = np.arange(left, right) + 0.5, np.arange(top, bottom) + 0.5
        inside = (((ys >= y1) & (ys <= y2))[:, None] & ((xs >= x1) & (xs <= x2))[None, :]).astype(np.float64)
        angle = math.degrees(dominant_axis(gray, inside, tuple(np.gradient(gray))))
        profiles.append(profile / inner)
        colours.append(colour / max(float(colour[OFFSETS <= -0.16].mean()), 1e-6))
        angles.append(angle % 90.0)
    shape = (-1, len(OFFSETS))
    return np.array(profiles).reshape(shape), np.array(colours).reshape(shape), np.array(angles, dtype=np.float64)


def edge_position(profile: np.ndarray, level: float = 0.5) -> float:
    """Where a profile over :data:`OFFSETS` falls below half way from its highest level inside the
    box to its level outside (offsets from 0.10 on), first after that highest point, linearly
    interpolated; ``nan`` when it does not fall.

    The highest level rather than the level deep inside: an object without texture has edges at
    its outline only, so its profile peaks there.

    Examples
    --------
    >>> profile = np.where(OFFSETS < -0.05, 1.0, 0.2)
    >>> round(edge_position(profile), 3)
    -0.055
    >>> round(edge_position(np.where(np.abs(OFFSETS + 0.08) < 0.015, 1.0, 0.0)), 3)  # an outline only
    -0.065
    """
    inside = np.flatnonzero(OFFSETS <= 0.0)
    peak = int(inside[np.argmax(profile[inside])])
    top, floor = profile[peak], profile[OFFSETS >= 0.10].mean()
    if not top > floor:
        return float("nan")
    middle = floor + level * (top - floor)
    for k in range(peak + 1, len(OFFSETS)):
        if profile[k] < middle:
            before, after = profile[k - 1], profile[k]
            return float(OFFSETS[k - 1] + (before - middle) / (before - after) * (OFFSETS[k] - OFFSETS[k - 1]))
    return float("nan")


@dataclass(frozen=True)
class PromptReading:
    """How a frame's HBBs were read (:func:`read_prompts`) and the edges it was read from.

    ``tightness`` is ``"tight"`` or ``"loose"`` (corner-cutting); ``margin`` the share of the
    object's size per side the boxes leave around it (0.0: none), to be shrunk before a tight
    fit. ``edges`` holds the gradient edge of all boxes and of the diagonal ones, the colour
    edge of the boxes along the axes, and the slope of the gradient edge against the boxes'
    diagonality (:func:`edge_slope`); ``nan`` where too few boxes gave one.
    """

    tightness: str
    margin: float = 0.0
    edges: tuple = (math.nan, math.nan, math.nan, math.nan)


def group_edge(profiles: np.ndarray, members: np.ndarray, least: int, level: float) -> float:
    """:func:`edge_position` (at ``level``) of the median profile of ``members``; ``nan`` for
    fewer than ``least``."""
    if int(np.count_nonzero(members)) < least:
        return math.nan
    return edge_position(np.median(profiles[members], axis=0), level)


def diagonality(angles) -> np.ndarray:
    """How far a box's sides stand from the object's rectangle's corners, per angle (degrees):
    ``(|cos| + |sin| - 1) / (sqrt(2) - 1)``, 0 along the image axes, 1 at 45 degrees.

    Examples
    --------
    >>> diagonality([0.0, 45.0, 90.0]).round(3).tolist()
    [0.0, 1.0, 0.0]
    """
    radians = np.radians(np.asarray(angles, dtype=np.float64))
    return (np.abs(np.cos(radians)) + np.abs(np.sin(radians)) - 1.0) / (math.sqrt(2.0) - 1.0)


def edge_slope(profiles: np.ndarray, angles: np.ndarray, least: int, level: float) -> float:
    """How the gradient edge moves from boxes along the axes to diagonal ones: the edges of the
    median profiles of the boxes of each band of :func:`diagonality` (below 0.35, to 0.7, above;
    those with at least ``least`` boxes), and the slope of the line through them (least squares,
    each weighted by the square root of its count); ``nan`` unless the bands' boxes measured lie
    0.3 apart or more on average.

    Examples
    --------
    >>> near, far = np.where(OFFSETS < 0.0, 1.0, 0.0), np.where(OFFSETS < -0.1, 1.0, 0.0)
    >>> profiles, angles = np.array([near] * 3 + [far] * 3), np.array([0.0] * 3 + [45.0] * 3)
    >>> round(edge_slope(profiles, angles, 3, 0.5), 3), edge_slope(profiles[:4], angles[:4], 3, 0.5)
    (-0.1, nan)
    """
    share = diagonality(angles)
    xs, ys, counts = [], [], []
    for low, high in ((0.0, 0.35), (0.35, 0.7), (0.7, 1.01)):
        members = (share >= low) & (share < high)
        edge = group_edge(profiles, members, least, level)
        if math.isfinite(edge):
            xs.append(share[members].mean())
            ys.append(edge)
            counts.append(np.count_nonzero(members))
    if len(xs) < 2 or np.ptp(xs) < 0.3:
        return math.nan
    return float(np.polyfit(xs, ys, 1, w=np.sqrt(counts))[0])


def read_prompts(image, xyxy, params: ImageParams) -> PromptReading:
    """Read a frame's HBBs from its pixels as tight, corner-cutting (``"loose"``) or with a
    margin (see the module docstring); ``"loose"`` without a margin when the frame has fewer than
    ``reading_min_boxes`` measurable boxes or its objects stand out too little from the ground
    (the median profile's highest level inside below ``reading_contrast`` times its level outside).

    Examples
    --------
    >>> from PIL import Image, ImageDraw
    >>> frame = Image.new("RGB", (400, 100), (90, 90, 90))
    >>> boxes = []
    >>> for k in range(5):  # bright bodies with a dark window, in boxes with a margin of 10% per side
    ...     ImageDraw.Draw(frame).rectangle([20 + 70 * k, 30, 59 + 70 * k, 49], fill=(230, 230, 230))
    ...     ImageDraw.Draw(frame).rectangle([34 + 70 * k, 33, 44 + 70 * k, 46], fill=(40, 40, 50))
    ...     boxes.append([16 + 70 * k, 28, 64 + 70 * k, 52])
    >>> reading = read_prompts(frame, boxes, ImageParams())
    >>> reading.tightness, round(reading.margin, 2)  # a margin, a little underestimated on so small a frame
    ('tight', 0.08)
    """
    profiles, colours, angles = frame_profiles(image, xyxy, params)
    least = params.reading_min_boxes
    if len(profiles) < least:
        return PromptReading("loose")
    median = np.median(profiles, axis=0)
    if not median[OFFSETS <= 0.0].max() >= params.reading_contrast * median[OFFSETS >= 0.10].mean():
        return PromptReading("loose")
    off_diagonal = np.abs(angles - 45.0)
    level = params.edge_level
    every = group_edge(profiles, np.ones(len(angles), dtype=bool), least, level)
    diagonal = group_edge(profiles, off_diagonal <= params.diagonal_within, least, level)
    colour = group_edge(colours, off_diagonal >= params.axis_beyond, least, level)
    slope = edge_slope(profiles, angles, least, level)
    edges = (every, diagonal, colour, slope)
    room = math.nan  # the room the boxes leave around their objects, a share of the box
    if math.isfinite(colour):
        # a margin leaves room at every angle: diagonal boxes end inside too (hand-drawn boxes
        # a little loose along the axes, cutting the corners of diagonal objects, do not)
        if colour < -params.margin_colour_edge and not diagonal > -params.margin_diagonal_edge:
            room = (-colour - params.margin_colour_bias) / params.margin_colour_scale
    elif every < -params.margin_edge:  # no boxes along the axes: the gradient edge of all boxes
        room = -every - params.margin_bias
    if room > 0:  # the margin is a share of the object
        return PromptReading("tight", float(min(params.margin_max, room / (1.0 - 2.0 * room))), edges)
    if math.isfinite(slope):  # diagonal boxes ending near their sides: corner-cutting at any slope; well inside: tight
        steep = slope < -params.tight_slope or diagonal < -params.tight_diagonal_inside
        tight = steep and not diagonal > -params.tight_diagonal_edge
        return PromptReading("tight" if tight else "loose", 0.0, edges)
    if math.isfinite(diagonal):  # diagonal boxes only (ships in a harbour): their edge on its own
        return PromptReading("tight" if diagonal < -params.tight_edge else "loose", 0.0, edges)
    return PromptReading("loose", 0.0, edges)  # along the axes a tight and a corner-cutting box are the same box


def shrink_boxes(xyxy, margin: float) -> np.ndarray:
    """HBBs ``x1 y1 x2 y2`` shrunk about their centres to what they hold when each side leaves
    ``margin`` of the object's size around it (a box ``s`` across holds ``s / (1 + 2 margin)``).

    Examples
    --------
    >>> shrink_boxes([[0.0, 0.0, 24.0, 12.0]], 0.1).tolist()
    [[2.0, 1.0, 22.0, 11.0]]
    """
    xyxy = np.asarray(xyxy, dtype=np.float64).reshape(-1, 4)
    centre = (xyxy[:, :2] + xyxy[:, 2:]) / 2
    half = (xyxy[:, 2:] - xyxy[:, :2]) / (2.0 * (1.0 + 2.0 * float(margin)))
    return np.concatenate([centre - half, centre + half], axis=1)
