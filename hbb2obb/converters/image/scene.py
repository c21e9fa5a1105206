"""Evidence from a whole frame for the ``image`` converter: tightness, neighbours, class checks.

The first two are decided for all boxes of a frame before any rectangle is fitted, the others
after:

- :func:`estimate_tightness`: whether the HBBs are the bounding boxes of the objects'
  rectangles (tight, as in DOTA-HBB or any set derived from OBBs) or hand-drawn around objects
  with rounded corners (loose, as in the Songdo sample).
- :func:`neighbour_axes`: objects in rows (parking lots, marinas) share an orientation, so a
  box whose own pixels leave the diagonal open takes its neighbours' as evidence.
- :func:`classes_less_supported`: a class whose fitted boxes as a whole follow the image's
  edges less than their HBBs keeps its HBBs.
- :func:`pooled_breadths` (loose frames): vehicles of one class share a breadth, so each box's
  own breadth is pooled with its class's before a refit; :func:`breadth_agreements` says how
  far the pool had to move it, for the box's confidence.
"""

from __future__ import annotations

import math

import numpy as np

from hbb2obb.converters.image.box import REASON_NO_MASK
from hbb2obb.converters.image.fit import long_axis, long_edge, wrap_quarter
from hbb2obb.converters.image.params import ImageParams


def estimate_tightness(xyxy, params: ImageParams) -> str:
    """``"tight"`` when the HBBs look boxed from polygons with whole-pixel corners, else ``"loose"``.

    A DOTA-HBB set (and any set boxed from DOTA's polygons) puts every HBB side on a whole
    pixel (within ``params.whole_pixel``); hand-drawn or detector boxes (the Songdo sample's are
    in tenths) almost never do all of them. Boxes not on whole pixels are read from the frame's
    pixels next (:func:`~hbb2obb.converters.image.reading.read_prompts`); give ``tightness``
    explicitly when a set's provenance is known. No boxes: ``"loose"``, the historical reading.

    Examples
    --------
    >>> params = ImageParams()
    >>> estimate_tightness([[10, 20, 47, 59], [3, 4, 9, 12]], params), estimate_tightness([[10.5, 20, 47, 59]], params)
    ('tight', 'loose')
    >>> estimate_tightness(np.zeros((0, 4)), params)
    'loose'
    """
    xyxy = np.asarray(xyxy, dtype=np.float64).reshape(-1, 4)
    if len(xyxy) == 0:
        return "loose"
    whole = np.abs(xyxy - np.round(xyxy)) <= params.whole_pixel
    return "tight" if bool(whole.all()) else "loose"


def neighbour_axes(segmentations, params: ImageParams) -> list:
    """Per box, the orientation its neighbours agree on (radians), or ``None``.

    Only boxes with two candidate orientations, or with no usable mask, get one; the neighbours
    are boxes with a single candidate (their own pixels decided) within ``neighbour_reach`` of
    their diagonal, and they must agree (doubled-angle mean resultant at least ``min_agreement``).

    Examples
    --------
    >>> neighbour_axes([], ImageParams())
    []
    """
    centres = np.array([s.centre for s in segmentations], dtype=np.float64).reshape(-1, 2)
    decided = [not s.reason and len(s.candidates) == 1 for s in segmentations]
    thetas = np.array([s.candidates[0].theta if d else 0.0 for s, d in zip(segmentations, decided)])
    decided = np.array(decided, dtype=bool)
    preferred = []
    for index, segmentation in enumerate(segmentations):
        open_question = len(segmentation.candidates) >= 2 or segmentation.reason == REASON_NO_MASK
        if not open_question or not decided.any():
            preferred.append(None)
            continue
        x1, y1, x2, y2 = segmentation.xyxy
        reach = params.neighbour_reach * math.hypot(x2 - x1, y2 - y1)
        near = decided & (np.hypot(*(centres - centres[index]).T) <= reach)
        near[index] = False
        if not near.any():
            preferred.append(None)
            continue
        doubled = np.exp(2j * thetas[near]).mean()
        preferred.append(float(np.angle(doubled) / 2) if abs(doubled) >= params.min_agreement else None)
    return preferred


def hugs_its_hbb(corners, params: ImageParams) -> bool:
    """Whether a fitted rectangle lies within ``params.hug_pixels`` of its own bounding box everywhere.

    A rectangle of long side ``L`` turned ``a`` from the nearest image axis leaves a gap of at
    most about ``L sin a`` between its sides and its bounding box's: a car 3 degrees off the axes
    is within two pixels of its HBB all round, so how well each follows the image's edges
    differs by where the pixel grid cuts them, not by the angle. ``None`` (a fallback) does not hug.

    Examples
    --------
    >>> import numpy as np
    >>> def rect(degrees, long=33.0, short=14.0):
    ...     t = np.radians(degrees); u = np.array([np.cos(t), np.sin(t)]) * long / 2
    ...     v = np.array([-np.sin(t), np.cos(t)]) * short / 2
    ...     return np.array([-u - v, u - v, u + v, -u + v])
    >>> params = ImageParams()
    >>> [hugs_its_hbb(corners, params) for corners in (rect(2.0), rect(88.5), rect(8.0), None)]
    [True, True, False, False]
    """
    if corners is None:
        return False
    edge = long_edge(np.asarray(corners, dtype=np.float64))[0]
    turn = wrap_quarter(math.atan2(edge[1], edge[0]))
    return math.hypot(*edge) * abs(math.sin(turn)) <= params.hug_pixels


def hbb_overshoot(corners, xyxy, params: ImageParams) -> float:
    """How far a loose fit's rectangle, its corners rounded by ``corner_radius`` of its breadth,
    would reach out of its HBB ``x1 y1 x2 y2``: the larger of its bounding box's excess width and
    height, as a share of the HBB's side (negative: it stays inside); ``nan`` for a fallback.

    A corner-cutting HBB is the bounding box of the rounded body, so a rectangle turned off the
    HBB's long axis by more than the HBB's shape allows cannot be what it holds: in a 20 x 9 box,
    a 20 x 9 motorcycle turned 15 degrees would need a box 20 x 13.

    Examples
    --------
    >>> def rect(degrees, long=20.0, short=9.0):
    ...     t = np.radians(degrees); u = np.array([np.cos(t), np.sin(t)]) * long / 2
    ...     v = np.array([-np.sin(t), np.cos(t)]) * short / 2
    ...     return np.array([-u - v, u - v, u + v, -u + v]) + [10.0, 4.5]
    >>> box = [0.0, 0.0, 20.0, 9.0]
    >>> round(hbb_overshoot(rect(0.0), box, ImageParams()), 3), round(hbb_overshoot(rect(15.0), box, ImageParams()), 2)
    (0.0, 0.36)
    """
    if corners is None:
        return math.nan
    edge, other = long_edge(np.asarray(corners, dtype=np.float64))
    length, breadth = math.hypot(*edge), math.hypot(*other)
    angle = math.atan2(edge[1], edge[0])
    cos, sin = abs(math.cos(angle)), abs(math.sin(angle))
    radius = params.corner_radius * breadth
    width = (length - 2 * radius) * cos + (breadth - 2 * radius) * sin + 2 * radius
    height = (length - 2 * radius) * sin + (breadth - 2 * radius) * cos + 2 * radius
    x1, y1, x2, y2 = (float(v) for v in xyxy)
    return max((width - (x2 - x1)) / max(x2 - x1, 1e-9), (height - (y2 - y1)) / max(y2 - y1, 1e-9))


def is_sliver(corners, xyxy, params: ImageParams) -> bool:
    """Whether a tight fit is a sliver across its thin HBB ``x1 y1 x2 y2``: the HBB at least
    ``sliver_aspect`` times as long as broad, the fit's breadth under ``sliver_breadth`` of the
    HBB's short side. ``False`` for a fallback.

    A rectangle inscribed in a tight HBB gets thinner as it turns from the HBB's long side toward
    its diagonal, down to nothing on the diagonal; in a thin HBB the object lies near the long
    side, so a sliver says the fit followed something else.

    Examples
    --------
    >>> box = [0.0, 0.0, 20.0, 9.0]
    >>> is_sliver(np.array([[0, 0], [20, 0], [20, 9], [0, 9]], float), box, ImageParams())
    False
    >>> is_sliver(np.array([[0, 1], [1, 0], [20, 8], [19, 9]], float), box, ImageParams())  # along the diagonal
    True
    """
    if corners is None:
        return False
    x1, y1, x2, y2 = (float(v) for v in xyxy)
    short, long = sorted((x2 - x1, y2 - y1))
    if not short > 0 or long < params.sliver_aspect * short:
        return False
    _, other = long_edge(np.asarray(corners, dtype=np.float64))
    return math.hypot(*other) < params.sliver_breadth * short


def classes_less_supported(results, class_ids, params: ImageParams) -> np.ndarray:
    """Boolean per box: its class's fitted boxes follow the image's edges less than their HBBs.

    For each class with at least ``min_class_boxes`` fitted boxes that differ from their HBBs
    (edge-support ratio, fitted box over HBB, off one by more than ``same_as_hbb``; compared
    even if the box's own check then kept its HBB), the geometric mean of those ratios; below
    one, every converted box of that class is marked. Objects of one class share a shape, so a
    class whose rectangles as a whole run across the image's edges (helicopters: the rotor disc
    is in the labelled box, the fuselage in the mask) is better left as its HBBs. A fitted box
    that is its HBB (an axis-aligned car) says nothing either way: counted in, such ties put
    the median of a frame's cars at one exactly, and the class's fate on a coin toss. And when
    such boxes are most of the class (fewer than ``min_vote_share`` of its compared fits
    vote), the class is not judged at all. Nor does a fit that hugs its HBB (:func:`hugs_its_hbb`:
    within ``hug_pixels`` all round) vote: near the axes the two follow the same edges, and the
    pixel grid, not the angle, decides which follows them better (rows of cars 1-5 degrees off
    the axes in synthetic parking lots sent whole frames of cars back, 70 of 355, at 0.905
    against 0.919 kept). And, like the box-level check, the class needs colour to lose as well:
    a class whose fits stand out from the band around them by ``class_colour_margin`` nats more
    than their HBBs on average keeps them (edge support is a poor judge of small fits: a frame of
    108 synthetic cars 13 degrees off the axes had a geometric mean of 0.999 and went back, 0.646
    as HBBs against 0.914 as fits, colour margin 0.24; the tuned DOTA helicopters' is 0.016).

    Examples
    --------
    >>> from types import SimpleNamespace as Box
    >>> turned = np.array([[0.0, 0.0], [28.2, 10.3], [24.8, 19.7], [-3.4, 9.4]])  # 20 degrees off the axes
    >>> boxes = [Box(corners=turned, edges=e, hbb_edges=1.0) for e in (0.8, 0.9, 0.95, 2.0)]
    >>> classes_less_supported(boxes, [0, 0, 0, 1], ImageParams()).tolist()
    [True, True, True, False]
    >>> ties = [Box(corners=turned, edges=e, hbb_edges=1.0) for e in (1.0, 1.0, 0.9, 0.8, 1.3, 1.2)]
    >>> bool(classes_less_supported(ties, [0] * 6, ImageParams()).any())
    False
    """
    class_ids = np.asarray(class_ids).reshape(-1)
    ratio = np.array([r.edges / r.hbb_edges if r.hbb_edges > 0 and r.edges > 0 else math.nan for r in results],
                     dtype=np.float64)
    converted = np.array([r.corners is not None for r in results], dtype=bool)
    colour = np.array([getattr(r, "support", math.nan) - getattr(r, "hbb_support", math.nan) for r in results],
                      dtype=np.float64)
    marked = np.zeros(len(results), dtype=bool)
    log_ratio = np.log(np.where(np.isfinite(ratio), ratio, 1.0))
    differs = np.isfinite(ratio) & (np.abs(log_ratio) > math.log1p(params.same_as_hbb))
    differs &= ~np.array([hugs_its_hbb(r.corners, params) for r in results], dtype=bool)
    for class_id in np.unique(class_ids):
        member = class_ids == class_id
        compared = member & differs
        votes = int(compared.sum())
        enough = votes >= params.min_class_boxes \
            and votes >= params.min_vote_share * int((member & np.isfinite(ratio)).sum())
        if enough and float(np.log(ratio[compared]).mean()) < 0.0:
            with_colour = member & np.isfinite(colour)
            if not with_colour.any() or float(colour[with_colour].mean()) < params.class_colour_margin:
                marked |= member & converted
    return marked


def row_axes(xyxy, results, wanted, params: ImageParams) -> list:
    """Per box, the axis of the rows it stands in (radians), or ``None``: for tight HBBs whose own fit failed.

    For every ``wanted`` box, the converted boxes (``corners`` not ``None``) whose centres lie
    within ``row_reach`` of its diagonal vote with their long axes modulo 90 degrees (objects
    on an apron or a parking lot stand along or across the same lanes); when the votes agree
    (quadrupled-angle mean resultant at least ``min_row_agreement``), the box gets that axis,
    turned by 90 degrees when its HBB is taller than wide: the rectangle inscribed in a tight
    HBB has its long side within 45 degrees of the HBB's long side, so the axis modulo 90 and
    the HBB fix the rectangle.

    Examples
    --------
    >>> from types import SimpleNamespace as Box
    >>> import numpy as np
    >>> square = np.array([[0, 0], [10, 3], [9, 7], [-1, 4]], float)
    >>> done = [Box(corners=square + [30 * k, 0]) for k in range(3)]
    >>> boxes = [[30 * k - 1, 0, 30 * k + 10, 7] for k in range(4)] + [[90, 0, 97, 11]]
    >>> axes = row_axes(boxes, done + [Box(corners=None)] * 2, [False, False, False, True, True], ImageParams())
    >>> [None if a is None else round(float(np.degrees(a)), 1) for a in axes]
    [None, None, None, 16.7, 106.7]
    """
    xyxy = np.asarray(xyxy, dtype=np.float64).reshape(-1, 4)
    centres = (xyxy[:, :2] + xyxy[:, 2:]) / 2
    converted = np.array([r.corners is not None for r in results], dtype=bool)
    axes = np.zeros(len(results))
    for index in np.flatnonzero(converted):
        axes[index] = long_axis(np.asarray(results[index].corners))
    found = []
    for index in range(len(results)):
        if not wanted[index] or not converted.any():
            found.append(None)
            continue
        x1, y1, x2, y2 = xyxy[index]
        near = converted & (np.hypot(*(centres - centres[index]).T) <= params.row_reach * math.hypot(x2 - x1, y2 - y1))
        near[index] = False
        if not near.any():
            found.append(None)
            continue
        quadrupled = np.exp(4j * axes[near]).mean()
        if abs(quadrupled) < params.min_row_agreement:
            found.append(None)
            continue
        axis = float(np.angle(quadrupled) / 4)  # in [-pi/4, pi/4]
        found.append(axis if x2 - x1 >= y2 - y1 else axis + math.pi / 2)
    return found


def side_by_side_breadths(results, params: ImageParams) -> list:
    """Per box, the largest breadth its side-by-side neighbours leave it (pixels), or ``None``.

    Only converted boxes near 45 degrees (``|cos 2 theta|`` below ``params.diagonal_cos``) get
    one: the nearest converted box on each side whose axis agrees within ``side_by_side_deg``
    and whose centre lies more across than along the axis (and within the box's length along
    it) caps the breadth at ``side_by_side_share`` of the distance across.

    Examples
    --------
    >>> from types import SimpleNamespace as Box
    >>> import numpy as np
    >>> t = np.radians(45.0); u = np.array([np.cos(t), np.sin(t)]); v = np.array([-np.sin(t), np.cos(t)])
    >>> def bus(k, breadth=14.0):
    ...     c = k * 10.0 * v
    ...     return Box(corners=np.array([c - 25 * u - breadth / 2 * v, c + 25 * u - breadth / 2 * v,
    ...                                  c + 25 * u + breadth / 2 * v, c - 25 * u + breadth / 2 * v]))
    >>> caps = side_by_side_breadths([bus(0), bus(1), bus(2), Box(corners=None)], ImageParams())
    >>> [None if b is None else round(b, 1) for b in caps]
    [10.0, 10.0, 10.0, None]
    """
    centres, axes, lengths, breadths = [], [], [], []
    for result in results:
        if result.corners is None:
            centres.append((math.nan, math.nan))
            axes.append(math.nan)
            lengths.append(0.0)
            breadths.append(0.0)
            continue
        corners = np.asarray(result.corners, dtype=np.float64)
        edge, other = long_edge(corners)
        centres.append(tuple(corners.mean(axis=0)))
        axes.append(math.atan2(edge[1], edge[0]))
        lengths.append(math.hypot(*edge))
        breadths.append(math.hypot(*other))
    centres, axes = np.array(centres, dtype=np.float64).reshape(-1, 2), np.array(axes)
    caps = []
    for index in range(len(results)):
        theta = axes[index]
        if not math.isfinite(theta) or abs(math.cos(2.0 * theta)) >= params.diagonal_cos:
            caps.append(None)
            continue
        offset = centres - centres[index]
        along = offset[:, 0] * math.cos(theta) + offset[:, 1] * math.sin(theta)
        across = -offset[:, 0] * math.sin(theta) + offset[:, 1] * math.cos(theta)
        agree = np.abs((axes - theta + math.pi / 2) % math.pi - math.pi / 2) <= math.radians(params.side_by_side_deg)
        beside = agree & (np.abs(across) > np.abs(along)) & (np.abs(along) < lengths[index] / 2) \
            & (np.abs(across) < breadths[index])
        beside[index] = False
        caps.append(float(params.side_by_side_share * np.abs(across[beside]).min()) if beside.any() else None)
    return caps


def pooled_breadths(results, class_ids, params: ImageParams) -> list:
    """Per box of a loose frame, the breadth (pixels) to refit it at, or ``None`` to keep its fit.

    Vehicles of one class in one frame share a breadth far more closely than their masks say
    (on Songdo 00164 the cars' true breadths vary by 7%, their fitted ones by 13%). Each box
    fitted to its own mask gets ``w b + (1 - w) P``: its own breadth ``b``, the median ``P`` of
    its class's fitted breadths (at least ``min_pool_boxes`` of them), and its own weight
    ``w = own_breadth_share (cos 2a)^2`` with ``a`` its angle off the image axes. Fallbacks, boxes
    without a mask of their own and classes with fewer boxes get ``None``.

    Parameters
    ----------
    results : list of BoxResult
        The frame's boxes after the per-box fits.
    class_ids : array_like of int, shape (n,)

    Examples
    --------
    >>> from types import SimpleNamespace as Box
    >>> import numpy as np
    >>> def car(breadth, degrees, length=40.0):
    ...     t = np.radians(degrees); u = np.array([np.cos(t), np.sin(t)]) * length / 2
    ...     v = np.array([-np.sin(t), np.cos(t)]) * breadth / 2
    ...     return Box(corners=np.array([-u - v, u - v, u + v, -u + v]), from_mask=True, candidate=object())
    >>> cars = [car(18, 0), car(22, 10), car(20, 30), car(26, 45)]  # median breadth 21
    >>> [round(b, 2) for b in pooled_breadths(cars, [0, 0, 0, 0], ImageParams())]
    [19.5, 21.44, 20.88, 21.0]
    >>> pooled_breadths(cars[:3], [0, 0, 0], ImageParams())
    [None, None, None]
    """
    breadths, axis_shares, pools = class_breadths(results, class_ids, params)
    own = params.own_breadth_share * axis_shares
    return [None if math.isnan(pool) else float(own[index] * breadths[index] + (1.0 - own[index]) * pool)
            for index, pool in enumerate(pools)]


def class_breadths(results, class_ids, params: ImageParams) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per box of a loose frame: its fitted breadth, its ``(cos 2a)^2`` (``a`` its angle off the
    image axes: how nearly its loose HBB gives its breadth) and its class's pooled breadth, the
    median of the class's fitted breadths (``NaN`` for all three where the box was not fitted to a
    mask of its own; the pool ``NaN`` too for a class of fewer than ``params.min_pool_boxes`` or
    of mixed sizes, :func:`one_size`).

    Examples
    --------
    >>> from types import SimpleNamespace as Box
    >>> square = Box(corners=np.array([[0, 0], [30, 0], [30, 10], [0, 10]], float), from_mask=True, candidate=object())
    >>> [values.round(2).tolist() for values in class_breadths([square] * 5, [0, 0, 0, 0, 1], ImageParams())]
    [[10.0, 10.0, 10.0, 10.0, 10.0], [1.0, 1.0, 1.0, 1.0, 1.0], [10.0, 10.0, 10.0, 10.0, nan]]
    """
    class_ids = np.asarray(class_ids).reshape(-1)
    breadths = np.full(len(results), math.nan)
    lengths = np.full(len(results), math.nan)
    axis_shares = np.full(len(results), math.nan)
    pools = np.full(len(results), math.nan)
    for index, result in enumerate(results):
        if result.corners is None or not result.from_mask or result.candidate is None:
            continue
        edge, other = long_edge(np.asarray(result.corners, dtype=np.float64))
        breadths[index] = math.hypot(*other)
        lengths[index] = math.hypot(*edge)
        axis_shares[index] = math.cos(2.0 * math.atan2(edge[1], edge[0])) ** 2
    for class_id in np.unique(class_ids):
        members = np.flatnonzero((class_ids == class_id) & np.isfinite(breadths))
        if len(members) >= params.min_pool_boxes and one_size(lengths[members], params):
            pools[members] = float(np.median(breadths[members]))
    return breadths, axis_shares, pools


def one_size(lengths, params: ImageParams) -> bool:
    """Whether a class's fitted lengths (pixels) are those of one kind of object at one ground
    resolution: their upper quartile at most ``pool_length_spread`` times their lower one.

    A class that mixes sizes (the planes of an apron, 58 to 160 pixels long) has no one breadth
    to pool: the median is too narrow for its large members and too wide for its small ones.

    Examples
    --------
    >>> one_size([40.0, 42.0, 44.0, 47.0], ImageParams()), one_size([60.0, 80.0, 120.0, 160.0], ImageParams())
    (True, False)
    """
    low, high = np.percentile(np.asarray(lengths, dtype=np.float64), [25.0, 75.0])
    return bool(high <= params.pool_length_spread * low)


def breadth_agreements(results, class_ids, params: ImageParams) -> np.ndarray:
    """Per box of a loose frame, the factor in [0, 1] its confidence takes for its breadth, from
    its fit before the pooling (:func:`pooled_breadths`): ``1 - |b - P| / P`` (at least 0) for a
    box whose breadth ``b`` was pooled with its class's ``P`` (how far its own mask disagreed
    with its class's: what the refit had to mend), and ``(1 + (cos 2a)^2) / 2`` for a box of a
    class too small to pool (its breadth rests on its own HBB, which near 45 degrees gives
    little more than length plus breadth); 1 for a box not fitted to a mask of its own.

    The held share of the mask alone ranked the refitted boxes worse than it had ranked the fits
    before the pooling: on Songdo 00164 / synthetic loose roads 720p / 4K / lots (seeds 3, 5,
    202), Spearman against IoU (``tools/confidence_scores.py``) 0.27 / 0.24 / 0.22 / 0.44
    before the pooling, 0.18 / 0.28 / 0.18 / 0.30 after it, 0.37 / 0.40 / 0.45 / 0.39 times this
    factor. Measured beside it (Spearman on the same sets, each box matched to the ground truth
    its HBB overlaps most): the pre-pooling fit's held share 0.19 / 0.26 / 0.12 / 0.39; the
    factor on pooled boxes only 0.20 / 0.14 / 0.26 / 0.39 (a class too small to pool then ranks
    high, and on the 720p roads its 9 boxes average 0.78 IoU against 0.90); ``1 - |r - b| / b``
    with ``r`` the refit's breadth 0.13 / 0.14 / 0.29 / 0.46 (pooled only); ``1 - 0.5 |b - P| /
    P`` 0.33 / 0.42 / 0.47 / 0.39, ``1 - 2 |b - P| / P`` 0.34 / 0.40 / 0.44 / 0.40; ``(cos
    2a)^2`` alone for a small class as good as this; the fit's colour contrast (alone 0.23 / 0.04
    / 0.37 / 0.04) as a further factor lowered the 720p roads to 0.10-0.15 and the lots to
    0.19-0.28, as a standardized term beside the held share and ``|b - P| / P`` the lots to 0.26.

    Examples
    --------
    >>> from types import SimpleNamespace as Box
    >>> def car(breadth, degrees, length=40.0):
    ...     t = np.radians(degrees); u = np.array([np.cos(t), np.sin(t)]) * length / 2
    ...     v = np.array([-np.sin(t), np.cos(t)]) * breadth / 2
    ...     return Box(corners=np.array([-u - v, u - v, u + v, -u + v]), from_mask=True, candidate=object())
    >>> cars = [car(20, 0), car(20, 10), car(20, 30), car(25, 45), car(20, 45)]  # median breadth 20
    >>> breadth_agreements(cars, [0, 0, 0, 0, 1], ImageParams()).round(2).tolist()  # the last alone in its class
    [1.0, 1.0, 1.0, 0.75, 0.5]
    """
    breadths, axis_shares, pools = class_breadths(results, class_ids, params)
    factors = np.ones(len(results))
    pooled = np.isfinite(pools)
    factors[pooled] = np.maximum(0.0, 1.0 - np.abs(breadths[pooled] - pools[pooled]) / pools[pooled])
    alone = np.isfinite(breadths) & ~pooled
    factors[alone] = (1.0 + axis_shares[alone]) / 2.0
    return factors
