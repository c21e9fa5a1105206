"""Geometry of the ``image`` converter: the working window, the orientation hint, the fit.

:class:`Window` maps a resampled crop back to image pixels; :func:`dominant_axis` reads the
orientation modulo 90 degrees from gradients; :func:`fit_rectangle` solves for the four sides
of a rectangle that agrees with a mask outline and with the HBB it came from.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

import numpy as np

from hbb2obb.converters.image.params import ImageParams


@dataclass(frozen=True)
class Window:
    """A resampled crop: working pixel ``(row, col)`` covers image ``[x0 + col/sx, x0 + (col+1)/sx)``.

    Attributes
    ----------
    pixels : ndarray, shape (h, w, 3)
        RGB values as float.
    x0, y0 : float
        Image coordinates of the crop's top-left corner.
    sx, sy : float
        Working pixels per image pixel along x and y.
    """

    pixels: np.ndarray
    x0: float
    y0: float
    sx: float
    sy: float

    @property
    def centres_x(self) -> np.ndarray:
        """Image x of every working column's centre."""
        return self.x0 + (np.arange(self.pixels.shape[1]) + 0.5) / self.sx

    @property
    def centres_y(self) -> np.ndarray:
        return self.y0 + (np.arange(self.pixels.shape[0]) + 0.5) / self.sy

    def to_image(self, points: np.ndarray) -> np.ndarray:
        """Working coordinates ``(n, 2)`` (x right, y down) to image coordinates."""
        return np.asarray(points, dtype=np.float64) / [self.sx, self.sy] + [self.x0, self.y0]

    def inside(self, xyxy) -> np.ndarray:
        """Boolean ``(h, w)``: working pixels whose centre lies in the image box ``x1 y1 x2 y2``."""
        x1, y1, x2, y2 = xyxy
        xs, ys = self.centres_x, self.centres_y
        return ((ys >= y1) & (ys <= y2))[:, None] & ((xs >= x1) & (xs <= x2))[None, :]


def crop_window(image, xyxy, margin: float, params: ImageParams) -> Optional[Window]:
    """Resample the part of ``image`` (a PIL image) around ``xyxy``, grown by ``margin``, to ``params.imgsz``.

    The crop is clipped to the frame; the longer side of what remains becomes ``imgsz`` working
    pixels (bilinear), or fewer for a small crop: at most ``max_upsampling`` per image pixel, but
    never fewer than ``min_window`` (when ``imgsz`` allows). ``None`` when nothing of it lies in the frame.
    """
    from PIL import Image

    width, height = image.size
    x1, y1, x2, y2 = xyxy
    wx1, wy1 = max(0.0, x1 - margin), max(0.0, y1 - margin)
    wx2, wy2 = min(float(width), x2 + margin), min(float(height), y2 + margin)
    if wx2 - wx1 < 1.0 or wy2 - wy1 < 1.0:
        return None
    longest = max(wx2 - wx1, wy2 - wy1)
    scale = min(params.imgsz / longest, max(params.max_upsampling, params.min_window / longest))
    size = (max(4, round((wx2 - wx1) * scale)), max(4, round((wy2 - wy1) * scale)))
    crop = image.resize(size, Image.BILINEAR, box=(wx1, wy1, wx2, wy2))
    pixels = np.asarray(crop, dtype=np.float64)
    return Window(pixels, wx1, wy1, size[0] / (wx2 - wx1), size[1] / (wy2 - wy1))


def dominant_axis(gray: np.ndarray, weight: np.ndarray, gradient: Optional[tuple] = None) -> float:
    """Direction (radians, in [-pi/4, pi/4]) of the dominant pair of perpendicular edge axes.

    ``gradient`` is ``np.gradient(gray)`` when the caller has it already.

    Examples
    --------
    >>> y, x = np.mgrid[0:40, 0:40]
    >>> stripes = np.sin(0.5 * (x * np.cos(0.3) + y * np.sin(0.3)))  # edges across direction 0.3 rad
    >>> round(dominant_axis(stripes, np.ones_like(stripes)), 1)
    0.3
    """
    gy, gx = np.gradient(np.asarray(gray, dtype=np.float64)) if gradient is None else gradient
    # |g| exp(4i phi) by the double-angle formulas (no arctan2, no complex exp): with
    # c = gx^2 - gy^2 and s = 2 gx gy, it is (c^2 - s^2, 2 c s) / |g|^3; zero where g is.
    squared = gx * gx + gy * gy
    cos2, sin2 = gx * gx - gy * gy, 2.0 * gx * gy
    scale = np.divide(weight, squared * np.sqrt(squared), out=np.zeros_like(squared), where=squared > 0)
    real = float(((cos2 * cos2 - sin2 * sin2) * scale).sum())
    imag = float((2.0 * cos2 * sin2 * scale).sum())
    return math.atan2(imag, real) / 4.0


def edge_axis(gray: np.ndarray, weight: np.ndarray, gradient: Optional[tuple] = None) -> tuple[float, float]:
    """Direction (radians, in [-pi/2, pi/2)) along which the edges run, and how clearly (0 to 1).

    ``gray`` is ``(h, w)`` or ``(h, w, channels)``; the channels' structure tensors add up, so
    an object that differs from its background in colour only still has edges. ``gradient`` is
    ``np.gradient(gray, axis=(0, 1))`` when the caller has it already.

    The structure tensor's dominant gradient direction turned by 90 degrees: unlike
    :func:`dominant_axis` it is defined modulo 180 degrees, so it tells the two diagonals of a
    near-square box apart (an elongated object's long sides, and the gaps to neighbours lying
    side by side, are its longest edges). The coherence ``(l1 - l2) / (l1 + l2)`` of the
    tensor's eigenvalues is 0 for edges in every direction and 1 for edges in one.

    Examples
    --------
    >>> y, x = np.mgrid[0:40, 0:40]
    >>> stripes = np.sin(0.5 * (x * np.cos(0.3) + y * np.sin(0.3)))  # edges run across 0.3 rad
    >>> angle, coherence = edge_axis(stripes, np.ones_like(stripes))
    >>> round(angle, 1), coherence > 0.9
    (-1.3, True)
    """
    values = np.asarray(gray, dtype=np.float64)
    gy, gx = np.gradient(values, axis=(0, 1)) if gradient is None else gradient
    if gx.ndim == 3:  # the channels' tensors add up: weight each pixel's sum over channels
        xx, yy, xy = (np.einsum("ijk,ijk->ij", a, b) for a, b in ((gx, gx), (gy, gy), (gx, gy)))
    else:
        xx, yy, xy = gx * gx, gy * gy, gx * gy
    jxx, jyy, jxy = (float((term * weight).sum()) for term in (xx, yy, xy))
    total = jxx + jyy
    if total <= 0:
        return 0.0, 0.0
    coherence = math.hypot(jxx - jyy, 2.0 * jxy) / total
    gradient = 0.5 * math.atan2(2.0 * jxy, jxx - jyy)
    return (gradient + math.pi) % math.pi - math.pi / 2, coherence


def rough_sides(width: float, height: float, theta: float) -> tuple[float, float]:
    """Long and short side of the rectangle at ``theta`` inscribed in a ``width x height`` box.

    Near 45 degrees the inscribed rectangle is undetermined (and the HBB's aspect says little),
    so typical vehicle proportions of the box diagonal are used instead.

    Examples
    --------
    >>> [round(v, 6) for v in rough_sides(10.0, 4.0, 0.0)]
    [10.0, 4.0]
    """
    c, s = abs(math.cos(theta)), abs(math.sin(theta))
    det = c * c - s * s
    if abs(det) > 0.2:
        long_side, short_side = (c * width - s * height) / det, (c * height - s * width) / det
        if long_side > 0 and short_side > 0:
            return max(long_side, short_side), min(long_side, short_side)
    diagonal = math.hypot(width, height)
    return 0.81 * diagonal, 0.36 * diagonal


def _hbb_rows(theta: float) -> np.ndarray:
    """Rows ``A`` with ``A @ [u1, u2, v1, v2]`` = the rectangle's x_min, x_max, y_min, y_max.

    The rectangle spans ``u1..u2`` along ``(cos, sin)`` and ``v1..v2`` along ``(-sin, cos)``
    around the origin; which end of each span reaches an image-axis extreme depends on signs.
    """
    c, s = math.cos(theta), math.sin(theta)
    rows = np.zeros((4, 4))
    # x = u c - v s, y = u s + v c; columns 0/1 are u1/u2, 2/3 are v1/v2.
    rows[0, 0 if c >= 0 else 1], rows[0, 3 if s >= 0 else 2] = c, -s  # x_min
    rows[1, 1 if c >= 0 else 0], rows[1, 2 if s >= 0 else 3] = c, -s  # x_max
    rows[2, 0 if s >= 0 else 1], rows[2, 2 if c >= 0 else 3] = s, c  # y_min
    rows[3, 1 if s >= 0 else 0], rows[3, 3 if c >= 0 else 2] = s, c  # y_max
    return rows


def fit_rectangle(points: np.ndarray, theta: float, centre, scaled_box, corner_radius: float,
                  half_pixel: float, hbb_weight: float = 3.0) -> Optional[np.ndarray]:
    """The rectangle at angle ``theta`` agreeing best with a mask outline and with the HBB.

    Unknowns are the four sides ``u1, u2, v1, v2`` in the rotated frame around ``centre``.
    The mask proposes its extents (pulled in by ``half_pixel``: outline points are pixel
    corners); the HBB proposes that the rectangle's bounding box, shrunk by the rounding of
    its corners (radius ``corner_radius`` times the breadth), equals ``scaled_box``. Least
    squares with weight ``hbb_weight`` on the HBB's four equations.

    Parameters
    ----------
    points : ndarray, shape (n, 2)
        Mask outline in image coordinates.
    theta : float
        Long-axis direction, radians.
    centre : (float, float)
        Origin of the rotated frame (the HBB centre).
    scaled_box : (x1, y1, x2, y2)
        The scaled HBB.

    Returns
    -------
    ndarray, shape (4, 2) or None
        Corners in cyclic order; ``None`` when the solution is not a proper rectangle.

    Examples
    --------
    >>> pts = np.array([[0, 0], [10, 0], [10, 4], [0, 4]], float)
    >>> fit_rectangle(pts, 0.0, (5, 2), (0, 0, 10, 4), 0.0, 0.0).round(6).tolist()
    [[0.0, 0.0], [10.0, 0.0], [10.0, 4.0], [0.0, 4.0]]
    """
    extents, rows, box = _fit_terms(points, theta, centre, scaled_box, corner_radius, half_pixel)
    normal = np.eye(4) + hbb_weight * rows.T @ rows
    return _rectangle(np.linalg.solve(normal, extents + hbb_weight * rows.T @ box), theta, centre)


def fit_rectangle_at_breadth(points: np.ndarray, theta: float, centre, scaled_box, corner_radius: float,
                             half_pixel: float, breadth: float, hbb_weight: float = 3.0) -> Optional[np.ndarray]:
    """:func:`fit_rectangle` with the breadth (the side across ``theta``) held at ``breadth``.

    The same least squares over the mask's extents and the HBB's four equations, with
    ``v2 - v1 = breadth`` as a constraint: what is left free is the length's two ends and where
    across the axis the rectangle sits. The corner rounding is ``corner_radius`` times
    ``breadth``. For a box whose own breadth is unreliable (near 45 degrees a loose HBB gives
    little more than length plus breadth) while its frame's other boxes say what it should be.

    Examples
    --------
    >>> pts = np.array([[0, 0], [10, 0], [10, 6], [0, 6]], float)  # a mask one unit too broad each side
    >>> fit_rectangle_at_breadth(pts, 0.0, (5, 3), (0, 1, 10, 5), 0.0, 0.0, 4.0).round(6).tolist()
    [[0.0, 1.0], [10.0, 1.0], [10.0, 5.0], [0.0, 5.0]]
    """
    extents, rows, box = _fit_terms(points, theta, centre, scaled_box, corner_radius, half_pixel, breadth)
    # the unknowns u1, u2 and the middle m of the span across: v1, v2 = m -/+ breadth / 2
    spans = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [0.0, 0.0, 1.0]])
    offset = np.array([0.0, 0.0, -breadth / 2, breadth / 2])
    normal = np.eye(4) + hbb_weight * rows.T @ rows
    right = extents + hbb_weight * rows.T @ box - normal @ offset
    u1, u2, middle = np.linalg.solve(spans.T @ normal @ spans, spans.T @ right)
    return _rectangle(np.array([u1, u2, middle - breadth / 2, middle + breadth / 2]), theta, centre)


def _fit_terms(points, theta: float, centre, scaled_box, corner_radius: float, half_pixel: float,
               breadth: Optional[float] = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The two opinions of a rectangle fit: the mask's extents ``(u1, u2, v1, v2)`` around
    ``centre``, and the HBB's rows and right-hand side (the scaled box grown by the corner
    rounding, radius ``corner_radius`` times ``breadth``, by default the mask's smaller extent)."""
    c, s = math.cos(theta), math.sin(theta)
    along, across = np.array([c, s]), np.array([-s, c])
    relative = np.asarray(points, dtype=np.float64) - centre
    u, v = relative @ along, relative @ across
    extents = np.array([u.min() + half_pixel, u.max() - half_pixel, v.min() + half_pixel, v.max() - half_pixel])
    if breadth is None:
        breadth = max(0.0, min(extents[1] - extents[0], extents[3] - extents[2]))
    rounding = corner_radius * breadth * (abs(c) + abs(s) - 1.0)
    x1, y1, x2, y2 = scaled_box
    box = np.array([x1 - centre[0] - rounding, x2 - centre[0] + rounding,
                    y1 - centre[1] - rounding, y2 - centre[1] + rounding])
    return extents, _hbb_rows(theta), box


def _rectangle(sides: np.ndarray, theta: float, centre) -> Optional[np.ndarray]:
    """Corners of the rectangle spanning ``u1..u2`` along ``theta`` and ``v1..v2`` across, around
    ``centre``; ``None`` when a span is empty."""
    u1, u2, v1, v2 = sides
    if not (u2 > u1 and v2 > v1):
        return None
    c, s = math.cos(theta), math.sin(theta)
    along, across = np.array([c, s]), np.array([-s, c])
    origin = np.asarray(centre, dtype=np.float64)
    return np.array([origin + a * along + b * across for a, b in ((u1, v1), (u2, v1), (u2, v2), (u1, v2))])


def principal_axis(mask: np.ndarray, window: Window) -> tuple[float, float]:
    """Direction (radians, in (-pi/2, pi/2]) of a mask's long axis by its second moments, and its
    elongation (the larger over the smaller eigenvalue of the covariance; 1 for a disc or a square).

    Measured in image pixels (the working pixels may not be square). Unlike the minimum-area
    rectangle of the outline, every pixel of the mask votes, so a small mask's staircase border
    does not snap the angle to the pixel grid. ``(0.0, 1.0)`` for fewer than two pixels.

    Examples
    --------
    >>> w = Window(np.zeros((40, 40, 3)), 0.0, 0.0, 1.0, 1.0)
    >>> y, x = np.mgrid[0:40, 0:40]
    >>> bar = np.abs(-(x - 20) * math.sin(0.1) + (y - 20) * math.cos(0.1)) < 4
    >>> angle, elongation = principal_axis(bar & (np.hypot(x - 20, y - 20) < 18), w)
    >>> round(angle, 1), elongation > 4
    (0.1, True)
    """
    rows, cols = np.nonzero(mask)
    if len(rows) < 2:
        return 0.0, 1.0
    xs, ys = cols / window.sx, rows / window.sy
    dx, dy = xs - xs.mean(), ys - ys.mean()
    cxx, cyy, cxy = float(dx @ dx), float(dy @ dy), float(dx @ dy)
    spread = math.hypot(cxx - cyy, 2.0 * cxy)
    larger, smaller = (cxx + cyy + spread) / 2, (cxx + cyy - spread) / 2
    return 0.5 * math.atan2(2.0 * cxy, cxx - cyy), (larger / smaller if smaller > 0 else math.inf)


def wrap_quarter(angle: float) -> float:
    """An angle difference folded into [-pi/4, pi/4)."""
    return (angle + math.pi / 4) % (math.pi / 2) - math.pi / 4


def wrap_half(angle: float) -> float:
    """An angle difference folded into [-pi/2, pi/2) (directions of lines are modulo 180 degrees)."""
    return (angle + math.pi / 2) % math.pi - math.pi / 2


def long_edge(rect: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A rectangle's long side and its short side, as vectors: ``p1 - p0`` and ``p2 - p1`` in that
    order of length (the first when the two are equal).

    Examples
    --------
    >>> long_edge(np.array([[0.0, 0.0], [0.0, 4.0], [-2.0, 4.0], [-2.0, 0.0]]))[0].tolist()
    [0.0, 4.0]
    """
    first, second = rect[1] - rect[0], rect[2] - rect[1]
    return (first, second) if first @ first >= second @ second else (second, first)


def long_axis(rect: np.ndarray) -> float:
    """Direction (radians, in (-pi, pi]) of a rectangle's long side, :func:`long_edge`."""
    edge = long_edge(rect)[0]
    return math.atan2(edge[1], edge[0])


def rectangle_coordinates(window: Window, rect: np.ndarray) -> tuple[np.ndarray, np.ndarray, float, float]:
    """Every working pixel centre in the rectangle's own frame: ``(a, b)`` in units of its sides.

    ``|a| <= 0.5`` and ``|b| <= 0.5`` is inside; the side lengths are returned beside, so that a
    distance in image pixels is ``a * first`` or ``b * second``.
    """
    centre = rect.mean(axis=0)
    first, second = rect[1] - rect[0], rect[3] - rect[0]
    dx = window.centres_x[None, :] - centre[0]
    dy = window.centres_y[:, None] - centre[1]
    first_length, second_length = math.sqrt(first @ first), math.sqrt(second @ second)
    a = (dx * first[0] + dy * first[1]) / (first_length * first_length)
    b = (dx * second[0] + dy * second[1]) / (second_length * second_length)
    return a, b, first_length, second_length


def region_contrast(window: Window, values: np.ndarray, rect: np.ndarray, band: float) -> float:
    """Mean of ``values`` inside ``rect`` minus their mean in the band of ``band`` px around it.

    The band is clipped to the window; ``-inf`` when either part holds no working pixel (a box
    with nothing to compare is supported by nothing).

    Examples
    --------
    >>> w = Window(np.zeros((20, 20, 3)), 0.0, 0.0, 1.0, 1.0)
    >>> values = np.zeros((20, 20)); values[5:15, 5:15] = 1.0
    >>> square = np.array([[5, 5], [15, 5], [15, 15], [5, 15]], float)
    >>> region_contrast(w, values, square, 3.0), region_contrast(w, values, square + 2, 3.0) < 1
    (1.0, True)
    """
    a, b, first, second = rectangle_coordinates(window, rect)
    inside = (np.abs(a) <= 0.5) & (np.abs(b) <= 0.5)
    grown = (np.abs(a) <= 0.5 + band / max(first, 1e-9)) & (np.abs(b) <= 0.5 + band / max(second, 1e-9))
    ring = grown & ~inside
    if not inside.any() or not ring.any():
        return -math.inf
    return float(values[inside].mean() - values[ring].mean())


def inside_rectangle(window: Window, rect: np.ndarray) -> np.ndarray:
    """Boolean ``(h, w)``: working pixel centres inside the rectangle ``rect`` (image coords)."""
    a, b, _, _ = rectangle_coordinates(window, rect)
    return (np.abs(a) <= 0.5) & (np.abs(b) <= 0.5)


def mask_agreement(window: Window, mask: np.ndarray, rect: np.ndarray) -> tuple[float, float]:
    """How well ``rect`` agrees with the ``mask`` (working pixels whose centres it covers): the
    share of the mask it holds, and the IoU of the two (both 0 for an empty mask).

    Examples
    --------
    >>> w = Window(np.zeros((20, 20, 3)), 0.0, 0.0, 1.0, 1.0)
    >>> mask = np.zeros((20, 20), bool); mask[5:15, 5:15] = True
    >>> square = np.array([[5, 5], [15, 5], [15, 15], [5, 15]], float)
    >>> mask_agreement(w, mask, square), mask_agreement(w, mask, square + [5, 0])
    ((1.0, 1.0), (0.5, 0.3333333333333333))
    >>> mask_agreement(w, mask & False, square)
    (0.0, 0.0)
    """
    total = np.count_nonzero(mask)
    if total == 0:
        return 0.0, 0.0
    inside = inside_rectangle(window, rect)
    both = np.count_nonzero(mask & inside)
    return float(both / total), float(both / (total + np.count_nonzero(inside) - both))


def edge_support(window: Window, gradient: tuple[np.ndarray, np.ndarray], rect: np.ndarray,
                 trim: float = 0.1) -> float:
    """Mean image gradient across the sides of ``rect``: how well its outline follows edges.

    Samples every side about once per working pixel (leaving out ``trim`` of its length at each
    corner, where two edges meet), takes the gradient at the nearest working pixel and keeps its
    component along the side's normal. Samples outside the window are left out; ``0.0`` when
    none is inside.

    Parameters
    ----------
    gradient : (ndarray, ndarray)
        ``(gy, gx)`` of the window's grey values per working pixel (``np.gradient``).

    Examples
    --------
    >>> gray = np.zeros((40, 40)); gray[10:30, 10:30] = 1.0
    >>> w = Window(np.zeros((40, 40, 3)), 0.0, 0.0, 1.0, 1.0)
    >>> g = np.gradient(gray)
    >>> on = np.array([[10, 10], [30, 10], [30, 30], [10, 30]], float)
    >>> edge_support(w, g, on) > 4 * edge_support(w, g, on + 5)
    True
    """
    gy, gx = gradient
    height, width = gx.shape
    rect = np.asarray(rect, dtype=np.float64)
    sides = np.roll(rect, -1, axis=0) - rect  # side k runs from corner k to corner k + 1
    scale = np.array([window.sx, window.sy])
    steps = np.maximum(2, np.hypot(*(sides * scale).T).astype(int))  # about one sample per working pixel
    side_of = np.repeat(np.arange(4), steps)
    # the j-th of n samples of a side sits at trim + j (1 - 2 trim) / (n - 1) along it (np.linspace)
    offset = np.arange(len(side_of)) - np.repeat(np.cumsum(steps) - steps, steps)
    t = trim + offset * ((1.0 - 2.0 * trim) / (steps - 1))[side_of]
    points = rect[side_of] + t[:, None] * sides[side_of]
    cols = np.floor((points[:, 0] - window.x0) * window.sx).astype(int)
    rows = np.floor((points[:, 1] - window.y0) * window.sy).astype(int)
    ok = (cols >= 0) & (cols < width) & (rows >= 0) & (rows < height)
    if not ok.any():
        return 0.0
    normals = np.stack([-sides[:, 1] * window.sy, sides[:, 0] * window.sx], axis=1)  # in working pixels
    normals /= np.maximum(np.hypot(*normals.T), 1e-12)[:, None]
    normal = normals[side_of[ok]]
    across = gx[rows[ok], cols[ok]] * normal[:, 0] + gy[rows[ok], cols[ok]] * normal[:, 1]
    return float(np.abs(across).sum() / ok.sum())
