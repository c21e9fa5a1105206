"""Top-down rendering of a :class:`~hbb2obb.synthetic.scene.SyntheticFrame` with numpy and Pillow.

Pavement and grass with low-frequency variation and grain, asphalt roads with lane marks, and
each vehicle as a rotated body with glass bands, a soft shadow cast away from one sun per frame,
and shaded rims (its sides curve down and away from the camera, so the body darkens toward the
outline, most on the side away from the sun). A 1920x1080 frame takes a few tens of
milliseconds; no OpenCV.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
from PIL import Image, ImageChops, ImageDraw, ImageFilter

from hbb2obb.geometry.hull import convex_hull
from hbb2obb.synthetic.scene import CORNER_RADIUS, Road, SyntheticFrame

#: Car body colours and how common each is.
BODY_COLOURS = {
    "white": ((232, 233, 235), 0.30), "black": ((28, 29, 32), 0.20), "grey": ((112, 114, 118), 0.14),
    "silver": ((186, 188, 193), 0.20), "red": ((160, 30, 28), 0.08), "blue": ((32, 60, 138), 0.08),
}
BUS_COLOURS = ((40, 112, 64), (38, 78, 156), (222, 222, 216), (196, 60, 40))
CARGO_COLOURS = ((226, 226, 222), (150, 152, 156), (40, 70, 130), (70, 110, 60))
HELMET_COLOURS = ((235, 235, 235), (25, 25, 25), (200, 40, 30), (230, 190, 40))
GLASS = np.array([30, 36, 46])
ASPHALT = np.array([78, 79, 83], dtype=np.float32)
PAVEMENT = np.array([150, 147, 140], dtype=np.float32)
GRASS = np.array([82, 104, 62], dtype=np.float32)
WHITE_MARK = (214, 214, 208)
#: Shadow length range as a fraction of the median vehicle breadth (the sun's elevation per frame).
SHADOW_REACH = (0.3, 1.0)
#: Frame width at which the rendered blur is one pixel (sigma); narrower frames blur less.
REFERENCE_WIDTH_PX = 3840
YELLOW_MARK = (206, 172, 58)
#: Shaded rims: the band inside the outline where a body's sides curve down, as a fraction of its
#: breadth, and how much darker the outline is than the roof (per frame, the sun's height); the
#: side away from the sun darkens up to ``1 + RIM_SUN_SIDE`` times that, the sunny side less.
RIM_WIDTH = (0.10, 0.18)
RIM_DEPTH = (0.30, 0.50)
RIM_SUN_SIDE = 0.5
#: Each class's drawn body, breadth as a fraction of the labelled breadth (a car's mirrors stick
#: out beyond its body); motorcycles have no rim worth drawing.
RIM_BODY_BREADTH = {0: 0.9, 1: 1.0, 2: 1.0}


def _smooth_noise(rng: np.random.Generator, width: int, height: int, cell: int) -> np.ndarray:
    """Unit-variance noise varying over about ``cell`` pixels, ``(height, width)`` float32."""
    small = rng.standard_normal((height // cell + 2, width // cell + 2)).astype(np.float32)
    return np.asarray(Image.fromarray(small, mode="F").resize((width, height), Image.BICUBIC))


def _band(road: "Road", offset_lo: float, offset_hi: float, t_lo: float, t_hi: float) -> list[tuple]:
    """Polygon of the part ``t_lo..t_hi`` along, ``offset_lo..offset_hi`` across a road."""
    angle = np.radians(road.angle)
    u, v = np.array([np.cos(angle), np.sin(angle)]), np.array([-np.sin(angle), np.cos(angle)])
    o = np.asarray(road.origin)
    return [tuple(o + t * u + s * v) for t, s in ((t_lo, offset_lo), (t_hi, offset_lo), (t_hi, offset_hi),
                                                   (t_lo, offset_hi))]


def _in_other_road(point, roads: Sequence["Road"], skip: int) -> bool:
    for k, road in enumerate(roads):
        if k == skip:
            continue
        angle = np.radians(road.angle)
        across = -(point[0] - road.origin[0]) * np.sin(angle) + (point[1] - road.origin[1]) * np.cos(angle)
        if abs(across) < road.half_width + 0.3 * road.lane_width:
            return True
    return False


def _background(rng, roads, width: int, height: int) -> Image.Image:
    """Pavement with grass patches, asphalt road bands, gradient and grain."""
    surface = Image.new("L", (width, height), 0)  # palette index: 0 pavement, 1 grass, 2 asphalt
    draw = ImageDraw.Draw(surface)
    reach = float(np.hypot(width, height)) * 1.5
    grass = _smooth_noise(rng, width, height, max(width // 8, 16)) > 0.7
    surface.paste(Image.fromarray(grass.astype(np.uint8)), (0, 0))
    for road in roads:
        draw.polygon(_band(road, -road.half_width - 0.15 * road.lane_width,
                           road.half_width + 0.15 * road.lane_width, -reach, reach), fill=2)
    surface = surface.convert("P")
    surface.putpalette(np.concatenate([PAVEMENT, GRASS, ASPHALT]).astype(np.uint8).tolist())
    blotches = _smooth_noise(rng, width, height, max(width // 24, 8))
    gx, gy = np.linspace(-1.0, 1.0, width, dtype=np.float32), np.linspace(-1.0, 1.0, height, dtype=np.float32)
    a, b = rng.uniform(-10.0, 10.0, 2)
    shade = rng.standard_normal((height, width), dtype=np.float32) * np.float32(6.0)
    shade += np.float32(5.0) * blotches
    shade += (np.float32(a) * gx)[None, :]
    shade += (np.float32(b) * gy + np.float32(128.5))[:, None]
    grain = Image.fromarray(np.clip(shade, 0, 255).astype(np.uint8), mode="L").convert("RGB")
    return ImageChops.add(surface.convert("RGB"), grain, 1.0, -128)


def _lane_marks(draw: ImageDraw.ImageDraw, roads, width: int, height: int) -> None:
    """Dashed white lines between lanes, solid white edges, a double yellow centre line."""
    reach = float(np.hypot(width, height))
    for index, road in enumerate(roads):
        lane = road.lane_width
        thick = max(1.2, 0.06 * lane)
        lines = [(-0.1 * lane, YELLOW_MARK, 0.0), (0.1 * lane, YELLOW_MARK, 0.0)]
        for k in range(1, road.lanes + 1):
            dashed = k < road.lanes
            lines += [(sign * k * lane, WHITE_MARK, 1.5 * lane if dashed else 0.0) for sign in (-1, 1)]
        angle = np.radians(road.angle)
        u, v = np.array([np.cos(angle), np.sin(angle)]), np.array([-np.sin(angle), np.cos(angle)])
        for offset, colour, gap in lines:
            t, step = -reach, lane + gap
            while t < reach:
                centre = np.asarray(road.origin) + (t + lane / 2) * u + offset * v
                inside = -lane <= centre[0] <= width + lane and -lane <= centre[1] <= height + lane
                if inside and not _in_other_road(centre, roads, index):
                    draw.polygon(_band(road, offset - thick / 2, offset + thick / 2, t, t + lane), fill=colour)
                t += step


def _local(centre, heading: float):
    """A function mapping vehicle coordinates (along, across) to image points."""
    angle = np.radians(heading)
    u, v = np.array([np.cos(angle), np.sin(angle)]), np.array([-np.sin(angle), np.cos(angle)])
    c = np.asarray(centre, dtype=np.float64)
    return lambda pts: [tuple(c + t * u + s * v) for t, s in pts]


def _rect(t0: float, t1: float, s0: float, s1: float) -> list[tuple[float, float]]:
    return [(t0, s0), (t1, s0), (t1, s1), (t0, s1)]


def _rounded(length: float, breadth: float, radius: float, steps: int = 4) -> list[tuple[float, float]]:
    """Outline of a ``length x breadth`` rectangle whose corners are arcs of ``radius``.

    Real car bodies are rounded like this (about a third of their breadth): seen from above,
    a detector's HBB hugs the arcs and so sits inside the corners of the labelled rectangle.
    """
    hl, hb = length / 2, breadth / 2
    radius = min(radius, hl, hb)
    points = []
    for (cx, cy), start in (((hl - radius, hb - radius), 0.0), ((-hl + radius, hb - radius), 90.0),
                            ((-hl + radius, -hb + radius), 180.0), ((hl - radius, -hb + radius), 270.0)):
        for angle in np.radians(start + np.linspace(0.0, 90.0, steps + 1)):
            points.append((cx + radius * np.cos(angle), cy + radius * np.sin(angle)))
    return points


def _tint(colour, rng, spread: float = 8.0) -> tuple[int, int, int]:
    return tuple(int(v) for v in np.clip(np.asarray(colour) + rng.normal(0.0, spread), 0, 255))


def _vehicle(draw: ImageDraw.ImageDraw, rng, cls: int, centre, length: float, breadth: float,
             heading: float) -> None:
    """Draw one vehicle facing ``heading``; ``t`` runs rear to front, ``s`` across."""
    to_img = _local(centre, heading)
    L, B = length, breadth
    glass = _tint(GLASS, rng, 4.0)
    if cls == 3:  # motorcycle: narrow frame and a rider's helmet
        draw.polygon(to_img(_rounded(L, 0.55 * B, CORNER_RADIUS[3] * B)), fill=_tint((45, 45, 50), rng))
        ring = [(0.3 * B * np.cos(a) - 0.05 * L, 0.3 * B * np.sin(a)) for a in np.linspace(0, 2 * np.pi, 10)[:-1]]
        draw.polygon(to_img(ring), fill=_tint(HELMET_COLOURS[rng.integers(len(HELMET_COLOURS))], rng))
        return
    if cls == 1:  # bus: long body, side window strips, roof units
        body = _tint(BUS_COLOURS[rng.integers(len(BUS_COLOURS))], rng)
        draw.polygon(to_img(_rounded(L, B, CORNER_RADIUS[1] * B)), fill=body)
        for side in (-1, 1):
            draw.polygon(to_img(_rect(-0.46 * L, 0.42 * L, side * 0.40 * B, side * 0.48 * B)), fill=glass)
        draw.polygon(to_img(_rect(0.45 * L, 0.49 * L, -0.42 * B, 0.42 * B)), fill=glass)
        for t0 in (-0.2, 0.1):
            draw.polygon(to_img(_rect(t0 * L, (t0 + 0.12) * L, -0.25 * B, 0.25 * B)), fill=_tint((200, 202, 204), rng))
        return
    names = list(BODY_COLOURS)
    pick = rng.choice(len(names), p=[BODY_COLOURS[n][1] for n in names])
    body = _tint(BODY_COLOURS[names[pick]][0], rng)
    if cls == 2:  # truck: cab at the front, cargo box behind a dark gap
        draw.polygon(to_img(_rounded(L, B, CORNER_RADIUS[2] * B)), fill=(35, 35, 38))
        draw.polygon(to_img(_rect(0.30 * L, 0.5 * L - 0.05 * B, -0.5 * B, 0.5 * B)), fill=body)
        draw.polygon(to_img(_rect(0.41 * L, 0.47 * L, -0.42 * B, 0.42 * B)), fill=glass)
        cargo = _tint(CARGO_COLOURS[rng.integers(len(CARGO_COLOURS))], rng)
        draw.polygon(to_img(_rect(-0.5 * L, 0.26 * L, -0.5 * B, 0.5 * B)), fill=cargo)
        return
    # the body is a little narrower than the labelled box: the side mirrors set its breadth;
    # the bumpers at both ends are dark plastic
    for side in (-1, 1):
        mirror = _rect(0.06 * L, 0.13 * L, side * 0.42 * B, side * 0.5 * B)
        draw.polygon(to_img(mirror), fill=_tint((40, 40, 44), rng, 4.0))
    draw.polygon(to_img(_rounded(L, 0.9 * B, CORNER_RADIUS[0] * B)), fill=(38, 38, 42))
    draw.polygon(to_img(_rounded(0.95 * L, 0.9 * B, CORNER_RADIUS[0] * B)), fill=body)
    roof = tuple(int(min(255, v * 1.08 + 6)) for v in body)
    draw.polygon(to_img(_rect(-0.25 * L, 0.09 * L, -0.31 * B, 0.31 * B)), fill=roof)
    draw.polygon(to_img([(0.09 * L, -0.36 * B), (0.27 * L, -0.42 * B), (0.27 * L, 0.42 * B),
                         (0.09 * L, 0.36 * B)]), fill=glass)  # windscreen
    draw.polygon(to_img(_rect(-0.37 * L, -0.26 * L, -0.36 * B, 0.36 * B)), fill=glass)  # rear window
    for side in (-1, 1):
        draw.polygon(to_img(_rect(-0.25 * L, 0.08 * L, side * 0.33 * B, side * 0.43 * B)), fill=glass)


def _lots(draw: ImageDraw.ImageDraw, rng, lots) -> None:
    """Parking lots: an asphalt rectangle each (its own shade), white stall lines across every row."""
    for lot in lots:
        to_img = _local(lot.centre, lot.angle)
        half_length, half_depth = lot.length / 2, lot.depth / 2
        draw.polygon(to_img(_rect(-half_length, half_length, -half_depth, half_depth)),
                     fill=_tint(ASPHALT + rng.uniform(-12.0, 25.0), rng, 3.0))
        thick = max(0.8, 0.07 * lot.stall)
        for offset in lot.row_offsets:
            for k in range(int(round(lot.length / lot.stall)) + 1):
                t = k * lot.stall - half_length
                draw.polygon(to_img(_rect(t - thick / 2, t + thick / 2, offset - lot.stall_depth / 2,
                                          offset + lot.stall_depth / 2)), fill=WHITE_MARK)


def _rounded_inside_distance(t: np.ndarray, s: np.ndarray, half_length: float, half_breadth: float,
                             radius: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distance inside a rounded rectangle's outline (negative outside) and its outward normal.

    ``t``, ``s`` are points in the rectangle's own axes; returns the distance and the normal's
    two components in those axes (the direction to the nearest point of the outline).
    """
    qx, qy = np.abs(t) - (half_length - radius), np.abs(s) - (half_breadth - radius)
    corner = (qx > 0) & (qy > 0)
    reach = np.hypot(np.maximum(qx, 0), np.maximum(qy, 0))
    outside = reach + np.minimum(np.maximum(qx, qy), 0) - radius
    along = qx >= qy
    safe = np.where(reach > 0, reach, 1.0)
    nx = np.where(corner, qx / safe, along.astype(np.float64)) * np.sign(t)
    ny = np.where(corner, qy / safe, (~along).astype(np.float64)) * np.sign(s)
    return -outside, nx, ny


def _shade_rims(image: Image.Image, frame: "SyntheticFrame", rng: np.random.Generator,
                away_from_sun: np.ndarray) -> Image.Image:
    """Darken every body toward its outline, more on the side facing ``away_from_sun`` (a unit
    vector, the shadows' direction). Pixels up to one outside the outline darken as the outline
    does, so that no unshaded edge of the polygon's rasterization survives."""
    width_share, depth = rng.uniform(*RIM_WIDTH), rng.uniform(*RIM_DEPTH)
    pixels = np.asarray(image, dtype=np.float32).copy()
    for cls, centre, length, breadth, heading in zip(frame.gt.class_id, frame.centre, frame.length,
                                                     frame.breadth, frame.heading):
        if int(cls) not in RIM_BODY_BREADTH:
            continue
        body_breadth = RIM_BODY_BREADTH[int(cls)] * breadth
        reach = 0.5 * float(np.hypot(length, body_breadth)) + 2
        x0, y0 = max(int(centre[0] - reach), 0), max(int(centre[1] - reach), 0)
        x1, y1 = min(int(centre[0] + reach) + 1, frame.width), min(int(centre[1] + reach) + 1, frame.height)
        if x1 <= x0 or y1 <= y0:
            continue
        angle = np.radians(heading)
        u, v = np.array([np.cos(angle), np.sin(angle)]), np.array([-np.sin(angle), np.cos(angle)])
        dx = np.arange(x0, x1)[None, :] + 0.5 - centre[0]
        dy = np.arange(y0, y1)[:, None] + 0.5 - centre[1]
        inside, nt, ns = _rounded_inside_distance(dx * u[0] + dy * u[1], dx * v[0] + dy * v[1], length / 2,
                                                  body_breadth / 2, CORNER_RADIUS[int(cls)] * breadth)
        rim = width_share * body_breadth
        closeness = np.clip(1.0 - np.maximum(inside, 0.0) / rim, 0.0, 1.0) ** 2
        facing = (nt * u[0] + ns * v[0]) * away_from_sun[0] + (nt * u[1] + ns * v[1]) * away_from_sun[1]
        factor = 1.0 - depth * (1.0 + RIM_SUN_SIDE * facing) * closeness
        factor = np.where(inside > -1.0, factor, 1.0).astype(np.float32)
        pixels[y0:y1, x0:x1] *= factor[..., None]
    return Image.fromarray(np.clip(np.rint(pixels), 0, 255).astype(np.uint8), mode="RGB")


def render_frame(frame: "SyntheticFrame", rng: np.random.Generator, *, rims: bool = False) -> Image.Image:
    """Render a synthetic frame as an RGB image of ``frame.width x frame.height``.

    Parameters
    ----------
    frame : SyntheticFrame
        Roads and vehicles (exact rectangles, not the rounded labels) to draw.
    rng : numpy.random.Generator
        Stream for textures and colours; the same stream state gives the same pixels.
    rims : bool
        Shade each body's rim (darker toward the outline, most on the side away from the sun).
        Off by default: the flat-coloured bodies the converter's tests pin; on, every other
        pixel is the same (the rims take their random numbers last).

    Returns
    -------
    PIL.Image.Image
    """
    width, height = frame.width, frame.height
    image = _background(rng, frame.roads, width, height)
    _lane_marks(ImageDraw.Draw(image), frame.roads, width, height)
    if frame.lots:  # drawn only for the lots layout, so the roads layout's frames stay as they were
        _lots(ImageDraw.Draw(image), rng, frame.lots)
    if len(frame.centre):
        # one sun per frame: every vehicle casts the same-direction shadow, its body swept along
        # the sun's ground direction (a box of some height under a low sun), edges a little soft
        sun = np.radians(rng.uniform(0.0, 360.0))
        reach = rng.uniform(*SHADOW_REACH) * float(np.median(frame.breadth))
        shift = np.array([np.cos(sun), np.sin(sun)]) * reach
        mask = Image.new("L", (width, height), 0)
        mask_draw = ImageDraw.Draw(mask)
        for centre, length, breadth, heading in zip(frame.centre, frame.length, frame.breadth, frame.heading):
            body = np.array(_local(centre, heading)(_rounded(length, breadth, 0.25 * breadth)))
            swept = convex_hull(np.concatenate([body, body + shift]))
            mask_draw.polygon([tuple(p) for p in swept], fill=170)
        mask = mask.filter(ImageFilter.GaussianBlur(max(0.7, 0.15 * reach)))
        image = Image.composite(image.point(lambda value: value // 3), image, mask)
        draw = ImageDraw.Draw(image)
        for cls, centre, length, breadth, heading in zip(frame.gt.class_id, frame.centre, frame.length,
                                                         frame.breadth, frame.heading):
            _vehicle(draw, rng, int(cls), centre, length, breadth, heading)
        if rims:
            image = _shade_rims(image, frame, rng, shift / max(float(np.hypot(*shift)), 1e-9))
    # the optics and motion of a drone camera: about one pixel of blur at 4K, as on real footage
    return image.filter(ImageFilter.GaussianBlur(max(0.5, width / REFERENCE_WIDTH_PX)))
