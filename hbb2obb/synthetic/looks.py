"""Frames that do not look like daylight colour: a thermal camera's single channel, and night.

The converter was built on daylight colour frames. Thermal drone video shows a vehicle by its
heat: one channel, a body a few to a few tens of grey levels warmer than the ground (a parked
car that has cooled barely stands out), cold glass, soft optics and sensor noise. A night frame
is the daylight scene under weak, uneven street light: dark, noisy, and dark cars nearly as dark
as the road. :func:`render_look` draws either from the same
:class:`~hbb2obb.synthetic.scene.SyntheticFrame` (the labels do not change).
"""

from __future__ import annotations

import numpy as np
from PIL import Image, ImageDraw, ImageFilter

from hbb2obb.errors import UsageError
from hbb2obb.synthetic.scene import CORNER_RADIUS, SyntheticFrame

#: Thermal: the ground's grey level range (low contrast) and a vehicle body's warmth above it
#: (grey levels): running vehicles are warm, parked ones that cooled down barely stand out.
THERMAL_GROUND = (70.0, 110.0)
THERMAL_WARMTH = (12.0, 70.0)
#: Thermal sensor noise (grey levels, standard deviation) and optical blur (pixels, sigma).
THERMAL_NOISE = 3.0
THERMAL_BLUR = 1.0
#: Night: the street light's brightness as a share of daylight, lowest and highest across a frame.
NIGHT_LIGHT = (0.12, 0.35)
NIGHT_NOISE = 3.0


def _smooth(rng: np.random.Generator, width: int, height: int, cell: int) -> np.ndarray:
    """Noise in [0, 1] varying over about ``cell`` pixels, ``(height, width)``."""
    coarse = rng.random((max(2, height // cell + 2), max(2, width // cell + 2)))
    image = Image.fromarray((coarse * 255).astype(np.uint8), mode="L").resize((width, height), Image.BICUBIC)
    return np.asarray(image, dtype=np.float32) / 255.0


def _body(centre, length: float, breadth: float, heading: float, radius: float) -> list:
    """The rounded body's outline in image pixels."""
    angle = np.radians(heading)
    u, v = np.array([np.cos(angle), np.sin(angle)]), np.array([-np.sin(angle), np.cos(angle)])
    points = []
    hl, hb = length / 2, breadth / 2
    radius = min(radius, hb)
    for (cx, cy), start in (((hl - radius, hb - radius), 0.0), ((-hl + radius, hb - radius), 90.0),
                            ((-hl + radius, -hb + radius), 180.0), ((hl - radius, -hb + radius), 270.0)):
        for a in np.radians(start + np.linspace(0.0, 90.0, 5)):
            t, s = cx + radius * np.cos(a), cy + radius * np.sin(a)
            points.append(tuple(np.asarray(centre) + t * u + s * v))
    return points


def render_thermal(frame: SyntheticFrame, rng: np.random.Generator) -> Image.Image:
    """A thermal frame (mode ``"L"``): low-contrast ground, warm bodies with cold glass, blur, noise."""
    width, height = frame.width, frame.height
    low, high = THERMAL_GROUND
    ground = low + (high - low) * (0.35 + 0.3 * _smooth(rng, width, height, max(width // 6, 8))
                                   + 0.15 * _smooth(rng, width, height, max(width // 40, 4)))
    image = Image.fromarray(np.clip(ground, 0, 255).astype(np.uint8), mode="L")
    draw = ImageDraw.Draw(image)
    base = float(np.median(ground))
    for cls, centre, length, breadth, heading in zip(frame.gt.class_id, frame.centre, frame.length,
                                                     frame.breadth, frame.heading):
        warmth = rng.uniform(*THERMAL_WARMTH)
        body = int(np.clip(base + warmth, 0, 255))
        draw.polygon(_body(centre, length, breadth, heading, CORNER_RADIUS.get(int(cls), 0.2) * breadth), fill=body)
        # cold glass (it mirrors the sky) and a warmer engine end
        angle = np.radians(heading)
        u = np.array([np.cos(angle), np.sin(angle)])
        glass = int(np.clip(base + warmth * rng.uniform(-0.3, 0.3), 0, 255))
        draw.polygon(_body(np.asarray(centre) + 0.1 * length * u, 0.22 * length, 0.7 * breadth, heading,
                           0.1 * breadth), fill=glass)
        engine = int(np.clip(body + 0.4 * warmth, 0, 255))
        draw.polygon(_body(np.asarray(centre) + 0.33 * length * u, 0.2 * length, 0.6 * breadth, heading,
                           0.2 * breadth), fill=engine)
    image = image.filter(ImageFilter.GaussianBlur(THERMAL_BLUR))
    pixels = np.asarray(image, dtype=np.float32) + rng.normal(0.0, THERMAL_NOISE, (height, width)).astype(np.float32)
    return Image.fromarray(np.clip(np.rint(pixels), 0, 255).astype(np.uint8), mode="L")


def render_night(frame: SyntheticFrame, rng: np.random.Generator) -> Image.Image:
    """A night frame (RGB): the daylight render under weak, uneven light, with sensor noise."""
    from hbb2obb.synthetic.render import render_frame

    day = np.asarray(render_frame(frame, rng), dtype=np.float32)
    low, high = NIGHT_LIGHT
    light = low + (high - low) * _smooth(rng, frame.width, frame.height, max(frame.width // 5, 8))
    pixels = day * light[..., None] + rng.normal(0.0, NIGHT_NOISE, day.shape).astype(np.float32)
    return Image.fromarray(np.clip(np.rint(pixels), 0, 255).astype(np.uint8), mode="RGB")


def render_look(frame: SyntheticFrame, rng: np.random.Generator, look: str) -> Image.Image:
    """:func:`render_thermal` or :func:`render_night` by ``look`` (``"thermal"`` or ``"night"``).

    Examples
    --------
    >>> from hbb2obb.synthetic.dataset import simulate_frame
    >>> frame = simulate_frame("f", 0, 0, width=320, height=240, boxes_per_frame=(3, 3))
    >>> image = render_look(frame, np.random.default_rng(0), "thermal")
    >>> image.mode, image.size
    ('L', (320, 240))
    """
    if look == "thermal":
        return render_thermal(frame, rng)
    if look == "night":
        return render_night(frame, rng)
    raise UsageError(f"look must be thermal or night here, got {look!r}")
