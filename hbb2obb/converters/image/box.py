"""One box of the ``image`` converter: segment the window, fit the rectangle, check it.

:func:`segment_box` does the expensive part once per box (window, orientation hints, colour
clusters, GrabCut-style masks along one or two candidate axes); :func:`fit_box` turns a
segmentation into a rectangle for a given HBB tightness and checks it against the HBB itself.
Splitting the two lets a frame estimate its tightness and weigh its neighbours' orientations
before any rectangle is committed to (see :mod:`hbb2obb.converters.image.converter`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from hbb2obb.converters.identity import scale_factor_pair, scale_hbbs
from hbb2obb.converters.image.fit import (
    Window,
    crop_window,
    dominant_axis,
    edge_axis,
    edge_support,
    fit_rectangle,
    fit_rectangle_at_breadth,
    inside_rectangle,
    long_axis,
    long_edge,
    mask_agreement,
    principal_axis,
    region_contrast,
    rough_sides,
    wrap_half,
    wrap_quarter,
)
from hbb2obb.converters.image.params import ImageParams
from hbb2obb.converters.image.segmentation import foreground_log_odds, kmeans, morphology, select_components
from hbb2obb.geometry.hull import convex_hull, mask_outline_points

#: Why a box was written as its HBB.
REASON_DEGENERATE = "degenerate box"
REASON_OUTSIDE = "outside the frame"
REASON_NO_MASK = "no usable mask"
REASON_NO_RECTANGLE = "no rectangle fits mask and HBB"
REASON_LESS_SUPPORTED = "fitted box less supported by the image than the HBB"
REASON_CLASS_LESS_SUPPORTED = "this class's fitted boxes follow the image's edges less than their HBBs"
REASON_OVERSHOOTS = "fitted box would stick out of its corner-cutting HBB"
REASON_SLIVER = "fitted box is a sliver across its thin tight HBB"
REASON_WEAK = "too little evidence in a small, faint box"


@dataclass
class Candidate:
    """One orientation's segmentation: the axis it assumed, the mask and what it suggests."""

    axis: float
    theta: float
    mask: np.ndarray
    outline: np.ndarray
    evidence: np.ndarray


@dataclass
class Segmentation:
    """What :func:`segment_box` found in one box's window; ``reason`` is set when nothing usable."""

    xyxy: tuple
    scaled: np.ndarray
    window: Optional[Window] = None
    candidates: list = field(default_factory=list)
    reason: str = ""
    gradient: Optional[tuple] = None
    edge: float = 0.0
    coherence: float = 0.0

    @property
    def centre(self) -> tuple[float, float]:
        x1, y1, x2, y2 = self.xyxy
        return (x1 + x2) / 2, (y1 + y2) / 2


@dataclass
class BoxResult:
    """What the converter did with one box.

    ``corners`` is ``None`` for a fallback (the caller writes the HBB), and ``reason`` says why.
    ``confidence`` is in [0, 1] (0 for a fallback; :func:`fit_box` and :func:`edge_confidence`
    say how); ``support`` and ``hbb_support`` are the colour contrasts of the fitted box and of
    the HBB that the self-check compared, ``edges`` and ``hbb_edges`` their edge supports;
    ``from_mask`` marks a box fitted to its own mask (not inscribed at its rows' axis), and
    ``candidate`` is that mask's :class:`Candidate` (for a refit at another breadth).
    """

    corners: Optional[np.ndarray]
    window: Optional[Window] = None
    mask: Optional[np.ndarray] = None
    hull: Optional[np.ndarray] = None
    reason: str = ""
    confidence: float = 0.0
    support: float = math.nan
    hbb_support: float = math.nan
    edges: float = math.nan
    hbb_edges: float = math.nan
    from_mask: bool = False
    candidate: Optional[Candidate] = None

    def fallen_back(self, reason: str) -> "BoxResult":
        """This box as a fallback for ``reason``, keeping its window, mask and hull (for the pictures)."""
        return BoxResult(None, self.window, self.mask, self.hull, reason=reason)


def _rectangle_prior(window: Window, centre, theta: float, long_side: float, short_side: float,
                     in_box: np.ndarray, params: ImageParams) -> np.ndarray:
    """Prior log-odds: ``+prior_strength`` deep inside the rough rectangle, the negative outside."""
    dx = window.centres_x[None, :] - centre[0]
    dy = window.centres_y[:, None] - centre[1]
    u = dx * math.cos(theta) + dy * math.sin(theta)
    v = -dx * math.sin(theta) + dy * math.cos(theta)
    outside = np.maximum(np.abs(u) - long_side / 2, np.abs(v) - short_side / 2) / max(short_side / 2, 1.0)
    prior = -params.prior_strength * np.clip(params.prior_slope * outside, -1.0, 1.0)
    return np.where(in_box, prior, -10.0)


def candidate_axes(width: float, height: float, hint: float, edge: float, coherence: float,
                   params: ImageParams) -> list:
    """The long-axis directions worth a segmentation: the hint or the hint turned by 90 degrees.

    An elongated HBB holds its object nearer its long side. A near-square one may hold it along
    either diagonal; the edge direction (modulo 180 degrees) decides when it is clear enough,
    otherwise both are tried (``near_square`` and ``min_coherence`` of ``params``).

    Examples
    --------
    >>> [round(a, 2) for a in candidate_axes(30, 30, 0.78, edge=-0.8, coherence=0.5, params=ImageParams())]
    [2.35]
    >>> len(candidate_axes(30, 30, 0.78, edge=-0.8, coherence=0.01, params=ImageParams()))
    2
    """
    if width >= params.near_square * height:
        return [hint]
    if height >= params.near_square * width:
        return [hint + math.pi / 2]
    if coherence >= params.min_coherence:
        turned = abs(wrap_half(hint + math.pi / 2 - edge)) < abs(wrap_half(hint - edge))
        return [hint + math.pi / 2 if turned else hint]
    return [hint, hint + math.pi / 2]


def segment_box(image, xyxy, params: ImageParams) -> Segmentation:
    """Segment the object of one HBB ``x1 y1 x2 y2`` (image pixels) on a PIL RGB image.

    ``params`` gives the scale factor, the window size, the opening kernel and the tuned
    numbers; a tight HBB (its object's rectangle's bounding box) uses the lighter mean field of
    ``tight_rounds`` and ``tight_smoothing_steps``.

    Returns a :class:`Segmentation` with one :class:`Candidate` per orientation tried whose
    mask is big enough and stands out from the ring around the box; none (and a ``reason``)
    when the box is degenerate, outside the frame, or holds no such mask.
    """
    x1, y1, x2, y2 = (float(v) for v in xyxy)
    width, height = x2 - x1, y2 - y1
    tight = params.tight
    short, long = scale_factor_pair(params.scale_factor)
    scaled = scale_hbbs(np.array([[x1, y1, x2, y2]]), short, long)[0]
    segmentation = Segmentation((x1, y1, x2, y2), scaled)
    if not (width >= 1.0 and height >= 1.0):
        segmentation.reason = REASON_DEGENERATE
        return segmentation
    window = crop_window(image, scaled, params.ring * min(width, height) + 2.0, params)
    if window is None:
        segmentation.reason = REASON_OUTSIDE
        return segmentation
    segmentation.window = window
    centre = segmentation.centre
    in_box, in_hbb = window.inside(scaled), window.inside((x1, y1, x2, y2))
    if not in_hbb.any() or in_box.all():
        segmentation.reason = REASON_OUTSIDE
        return segmentation
    xs, ys = window.centres_x, window.centres_y
    spread = np.exp(-0.5 * ((xs - centre[0]) / (0.35 * width))[None, :] ** 2
                    - 0.5 * ((ys - centre[1]) / (0.35 * height))[:, None] ** 2)
    channels = window.pixels  # whole numbers (a resampled 8-bit crop): any order of sums is exact
    gray = (channels[..., 0] + channels[..., 1] + channels[..., 2]) / 3.0
    colour_gradient = np.gradient(channels, axis=(0, 1))  # one pass for the edge direction and the grey
    # the grey gradient is the channels' mean (np.gradient is linear): for the hint and the edge supports
    segmentation.gradient = tuple(g.sum(axis=2) / 3.0 for g in colour_gradient)
    hint = dominant_axis(gray, spread, segmentation.gradient)
    pixels = window.pixels.reshape(-1, 3)
    _, clusters = kmeans(pixels, params.clusters, iterations=6, fit_every=max(1, len(pixels) // params.kmeans_samples))
    clusters = clusters.reshape(window.pixels.shape[:2])
    segmentation.edge, segmentation.coherence = edge_axis(channels, spread, colour_gradient)
    for axis in candidate_axes(width, height, hint, segmentation.edge, segmentation.coherence, params):
        long_side, short_side = rough_sides(width, height, axis)
        prior = _rectangle_prior(window, centre, axis, long_side, short_side, in_box, params)
        posterior, evidence = foreground_log_odds(
            clusters, prior, rounds=params.tight_rounds if tight else params.rounds,
            smoothing_steps=params.tight_smoothing_steps if tight else params.smoothing_steps,
            coupling=params.coupling)
        # a tight HBB's corners outside a diagonal object hold its neighbours' corners: parts other
        # than the main one must lie in the rough rectangle (synthetic lots of buses and trucks side
        # by side 0.836 -> 0.870, cars 0.919 -> 0.920 and 0.925 -> 0.929; tuned DOTA frames unchanged)
        parts = in_hbb & (prior > 0) if tight else None
        mask = morphology(select_components(posterior > 0, in_hbb, parts_inside=parts),
                          params.opening_kernel_percentage)
        if np.count_nonzero(mask) < params.min_mask_share * np.count_nonzero(in_hbb):
            continue
        if evidence[mask].mean() - evidence[~in_box].mean() < params.min_contrast:
            continue
        outline = window.to_image(mask_outline_points(mask))
        theta = axis
        turn = wrap_quarter(outline_axis(outline) - axis)
        if tight and max(width, height) <= params.moments_up_to:  # every mask pixel votes: the staircase
            # outline of a small car snaps to the pixel grid
            moment_axis, elongation = principal_axis(mask, window)
            if elongation >= params.min_elongation:
                turn = wrap_half(moment_axis - axis)
        if abs(math.degrees(turn)) <= params.angle_agreement:
            theta = axis + turn
        if not tight:  # a loose box's outline snaps to its mask's ragged border: the mask's second
            # moments, where every pixel votes, take half the say when the two agree
            moved = wrap_half(principal_axis(mask, window)[0] - theta)
            if abs(math.degrees(moved)) <= params.angle_agreement:
                theta += params.loose_moment_share * moved
        segmentation.candidates.append(Candidate(axis, theta, mask, outline, evidence))
    if not segmentation.candidates:
        segmentation.reason = REASON_NO_MASK
    return segmentation


def outline_axis(outline: np.ndarray) -> float:
    """Direction (radians) of the long side of the points' minimum-area rectangle.

    OpenCV's rotating calipers (``cv2.minAreaRect``) rather than
    :func:`hbb2obb.geometry.hull.minimum_area_rectangle`: it runs once per candidate mask, and
    on the masks' outlines it gives the same direction to 0.002 degrees (OpenCV works in single
    precision) at a small fraction of the cost. For a square either side may come out as the
    long one; the caller folds the angle modulo 90 degrees.

    Examples
    --------
    >>> points = np.array([[0, 0], [10, 5], [9, 7], [-1, 2]], float)
    >>> round(math.degrees(outline_axis(points)) % 180, 1)
    26.6
    """
    import cv2  # imported here: the commands that never convert do not pay for loading OpenCV

    corners = cv2.boxPoints(cv2.minAreaRect(np.asarray(outline, dtype=np.float32)))
    return long_axis(corners.astype(np.float64))


def hbb_corners(xyxy) -> np.ndarray:
    """The ``(4, 2)`` corners of an HBB ``x1 y1 x2 y2``, clockwise in image coordinates."""
    x1, y1, x2, y2 = (float(v) for v in xyxy)
    return np.array([[x1, y1], [x2, y1], [x2, y2], [x1, y2]], dtype=np.float64)


def fit_candidate(segmentation: Segmentation, candidate: Candidate, params: ImageParams):
    """The rectangle of one candidate: tight reads the HBB as the rectangle's bounding box (sharp
    corners, heavy weight), loose as the bounding box of a rounded object (``corner_radius``)."""
    if params.tight:
        radius, weight = 0.0, params.tight_hbb_weight
    else:
        radius, weight = params.corner_radius, params.loose_hbb_weight
    window = segmentation.window
    return fit_rectangle(candidate.outline, candidate.theta, segmentation.centre, segmentation.scaled, radius,
                         params.outline_inset / window.sx, weight)


def box_support(segmentation: Segmentation, evidence: np.ndarray, rect: np.ndarray, params: ImageParams) -> float:
    """How much better the colour evidence is inside ``rect`` than in the band just around it."""
    x1, y1, x2, y2 = segmentation.xyxy
    band = params.support_band * min(x2 - x1, y2 - y1)
    clip = params.evidence_clip
    return region_contrast(segmentation.window, np.clip(evidence, -clip, clip), rect, band)


def edge_confidence(edges: float, hbb_edges: float) -> float:
    """Confidence of a box without a mask of its own (inscribed in a tight HBB at its rows' or its
    edges' axis): how well it follows the image's edges against its HBB, capped at 1.

    Examples
    --------
    >>> edge_confidence(3.0, 2.0), edge_confidence(1.0, 2.0), edge_confidence(0.0, 0.0)
    (1.0, 0.5, 0.0)
    """
    if not hbb_edges > 0:
        return 1.0 if edges > 0 else 0.0
    return float(min(1.0, max(0.0, edges / hbb_edges)))


def bounds_share(corners, xyxy, tolerance: float) -> float:
    """How closely a fitted box's bounds keep to its HBB, as a share in [0, 1]: 1 less the mean
    distance of its four bounds from the HBB's sides (each a share of the HBB's size along it)
    over ``tolerance``, clipped.

    A tight HBB is the bounding box of its object, so the rectangle fitted to it should have the
    HBB's bounds; where the mask pulled it off them, one of the two is wrong. Half the confidence
    of a tight fit without a margin.

    Examples
    --------
    >>> hbb = (0.0, 0.0, 20.0, 10.0)
    >>> short = [[0.0, 0.0], [20.0, 0.0], [20.0, 9.6], [0.0, 9.6]]  # one side 4% of the height in
    >>> bounds_share([[0, 0], [20, 0], [20, 10], [0, 10]], hbb, 0.05), round(bounds_share(short, hbb, 0.05), 6)
    (1.0, 0.8)
    """
    corners = np.asarray(corners, dtype=np.float64).reshape(4, 2)
    x1, y1, x2, y2 = (float(v) for v in xyxy)
    size = np.array([x2 - x1, y2 - y1, x2 - x1, y2 - y1])
    if not (size > 0).all():
        return 0.0
    bounds = np.concatenate([corners.min(axis=0), corners.max(axis=0)])
    distance = float(np.mean(np.abs(bounds - np.array([x1, y1, x2, y2])) / size))
    return float(np.clip(1.0 - distance / tolerance, 0.0, 1.0))


def contrast_share(support: float, full: float) -> float:
    """A box's colour contrast with the band around it (nats, :func:`box_support`) as a share in
    [0, 1]: ``support / full``, clipped.

    It is half the confidence of a fit to an HBB shrunk by a margin, which follows its mask
    (``margin_hbb_weight``), so that the mask's agreement with it tells a good fit from a bad one
    less well; how much the fitted box stands out from its surroundings still does.

    Examples
    --------
    >>> contrast_share(1.5, 3.0), contrast_share(4.0, 3.0), contrast_share(-0.5, 3.0)
    (0.5, 1.0, 0.0)
    """
    return float(min(1.0, support / full)) if support > 0 else 0.0


def inscribed_box(segmentation: Segmentation, axis: float, reason: str, params: ImageParams,
                  min_edge_ratio: float = 1.0) -> BoxResult:
    """The rectangle at ``axis`` inscribed in a tight HBB (its sides are then fixed by the angle),
    kept when it follows the image's edges at least ``min_edge_ratio`` times as well as the HBB
    (or unchecked without ``params.check``); otherwise a fallback with ``reason``. Its
    confidence has no colour term."""
    window = segmentation.window
    x1, y1, x2, y2 = segmentation.xyxy
    long_side, short_side = rough_sides(x2 - x1, y2 - y1, axis)
    c, s = math.cos(axis), math.sin(axis)
    along, across = np.array([c, s]) * long_side / 2, np.array([-s, c]) * short_side / 2
    centre = np.asarray(segmentation.centre)
    rough = np.array([centre - along - across, centre + along - across, centre + along + across,
                      centre - along + across])
    rect = fit_rectangle(rough, axis, segmentation.centre, segmentation.scaled, 0.0, 0.0, params.tight_hbb_weight)
    if rect is None or window is None:
        return BoxResult(None, window, reason=reason)
    edges = edge_support(window, segmentation.gradient, rect)
    hbb_edges = edge_support(window, segmentation.gradient, hbb_corners(segmentation.xyxy))
    if params.check and not edges >= min_edge_ratio * hbb_edges:
        return BoxResult(None, window, reason=reason, edges=edges, hbb_edges=hbb_edges)
    return BoxResult(rect, window, confidence=edge_confidence(edges, hbb_edges), edges=edges, hbb_edges=hbb_edges)


def _inscribed_without_mask(segmentation: Segmentation, prefer_axis: Optional[float],
                            params: ImageParams) -> BoxResult:
    """A tight HBB with no usable mask: the rectangle inscribed at the neighbours' orientation,
    kept when it follows the image's edges at least ``neighbour_min_edge_ratio`` times as well as
    the HBB (their agreement is the evidence; the edges only guard against a gross misfit, as for
    the rows' rescue), or, failing that, at a clear edge direction, kept only when it follows the
    image's edges better than the HBB."""
    if prefer_axis is not None and segmentation.window is not None:
        return inscribed_box(segmentation, prefer_axis, REASON_NO_MASK, params, params.neighbour_min_edge_ratio)
    axis = segmentation.edge if segmentation.coherence >= params.min_coherence else None
    if axis is None or segmentation.window is None:
        return BoxResult(None, segmentation.window, reason=REASON_NO_MASK)
    result = inscribed_box(segmentation, axis, REASON_NO_MASK, params)
    if params.check and result.corners is not None and not result.edges > result.hbb_edges:
        return BoxResult(None, segmentation.window, reason=REASON_NO_MASK, edges=result.edges,
                         hbb_edges=result.hbb_edges)
    return result


def fit_box(segmentation: Segmentation, params: ImageParams, *, prefer_axis: Optional[float] = None,
            keep_masks: bool = False) -> BoxResult:
    """The box's OBB from its segmentation, or a fallback with its reason.

    With two candidates (a near-square HBB whose edges did not pick a diagonal), the one whose
    axis is nearer ``prefer_axis`` (the neighbours' orientation, from their masks' axes) wins
    when given, else the one whose rectangle holds more colour evidence; in a loose HBB the
    evidence wins over the neighbours when one rectangle holds ``evidence_decides`` times the
    other's.
    The self-check (``params.check``) then compares the colour contrast of the fitted box with
    that of the HBB itself and keeps the HBB when the fit is not better supported: a converter
    must never do worse than doing nothing.

    The confidence of a fitted box is how well its rectangle agrees with the mask it was fitted
    to (:func:`~hbb2obb.converters.image.fit.mask_agreement`): the share of the mask it holds
    (a loose HBB), or the mean of that share and their IoU (a tight HBB, whose rectangle is
    nearly fixed by the HBB, so that one holding much more than the mask should also score
    lower). Chosen on synthetic and the tuned real frames (CHANGELOG.md, converter history): the
    fit's edge and colour margins over the HBB, the old confidence, ranked the boxes no better
    than chance.
    """
    if segmentation.reason == REASON_NO_MASK and params.tight:
        return _inscribed_without_mask(segmentation, prefer_axis, params)
    if segmentation.reason:
        return BoxResult(None, segmentation.window, reason=segmentation.reason)
    fitted = []
    for candidate in segmentation.candidates:
        rect = fit_candidate(segmentation, candidate, params)
        if rect is not None:
            fitted.append((candidate, rect))
    if not fitted:
        return BoxResult(None, segmentation.window, reason=REASON_NO_RECTANGLE)
    window = segmentation.window
    best = fitted[0]
    if len(fitted) > 1:  # the diagonal whose rectangle holds more evidence, unless it is a near tie
        shared = np.clip(sum(item[0].evidence for item in fitted), -6.0, 6.0) / len(fitted)
        held = [float(shared[inside_rectangle(window, rect)].sum()) for _, rect in fitted]
        order = np.argsort(held)[::-1]
        first, second = held[order[0]], held[order[1]]
        best = fitted[order[0]]
        clear = first > 0 and (second <= 0 or first >= params.evidence_decides * second)
        if prefer_axis is not None and (params.tight or not clear):  # the neighbours' axis decides
            best = min(fitted, key=lambda item: abs(wrap_half(item[0].theta - prefer_axis)))
    candidate, rect = best
    return judged_box(segmentation, candidate, rect, params, keep_masks=keep_masks)


def judged_box(segmentation: Segmentation, candidate: Candidate, rect: np.ndarray, params: ImageParams, *,
               keep_masks: bool = False, hbb: Optional[BoxResult] = None) -> BoxResult:
    """``rect``, fitted to ``candidate``'s mask, as a :class:`BoxResult`: with the self-check
    against the HBB (a fallback when it follows the image's edges no better than the HBB and
    its colour stands out ``support_tolerance`` less) and its confidence (see :func:`fit_box`).
    ``hbb``: an earlier judgement of the same candidate, whose HBB supports are reused."""
    window = segmentation.window
    support = box_support(segmentation, candidate.evidence, rect, params)
    edges = edge_support(window, segmentation.gradient, rect)
    if hbb is not None:
        hbb_support, hbb_edges = hbb.hbb_support, hbb.hbb_edges
    else:
        hbb_support = box_support(segmentation, candidate.evidence, hbb_corners(segmentation.xyxy), params)
        hbb_edges = edge_support(window, segmentation.gradient, hbb_corners(segmentation.xyxy))
    masks = dict(window=window, mask=candidate.mask, hull=convex_hull(candidate.outline)) if keep_masks else {}
    if params.check and support < hbb_support - params.support_tolerance and not edges > hbb_edges:
        return BoxResult(None, reason=REASON_LESS_SUPPORTED, support=support, hbb_support=hbb_support,
                         edges=edges, hbb_edges=hbb_edges, **masks)
    held, overlap = mask_agreement(window, candidate.mask, rect)
    confidence = (held + overlap) / 2 if params.tight else held
    return BoxResult(rect, confidence=confidence, support=support, hbb_support=hbb_support, edges=edges,
                     hbb_edges=hbb_edges, from_mask=True, candidate=candidate, **masks)


def is_weak(result: BoxResult, xyxy, params: ImageParams) -> bool:
    """Whether a fit has too little evidence behind it to replace its HBB ``x1 y1 x2 y2`` (image
    pixels; the shrunk box when the prompts have a margin): the HBB under ``weak_side`` pixels on
    its short side, its outline's edges under ``weak_edges`` grey levels per pixel, the fit's
    colour contrast under ``weak_support`` and its confidence under ``weak_confidence``.
    ``False`` for a fallback and for a box not fitted to its own mask (inscribed at its
    neighbours' axis: their agreement is its evidence).

    A body a few pixels across that hardly differs from the ground leaves the mask to a detail
    (the lamp of an unlit motorcycle at night), and the rectangle fitted to it follows that
    detail wherever it points; the HBB at least holds the body.

    Examples
    --------
    >>> weak = BoxResult(np.zeros((4, 2)), confidence=0.5, support=0.6, hbb_edges=0.9, from_mask=True)
    >>> is_weak(weak, [0, 0, 10, 20], ImageParams()), is_weak(weak, [0, 0, 30, 20], ImageParams())
    (True, False)
    """
    if result.corners is None or not result.from_mask:
        return False
    x1, y1, x2, y2 = (float(v) for v in xyxy)
    return bool(min(x2 - x1, y2 - y1) < params.weak_side and result.hbb_edges < params.weak_edges
                and result.support < params.weak_support and result.confidence < params.weak_confidence)


def refit_at_breadth(segmentation: Segmentation, result: BoxResult, breadth: float, params: ImageParams, *,
                     keep_masks: bool = False) -> Optional[BoxResult]:
    """A loose box's fit (``result``, fitted to its own mask) again with its breadth held at
    ``breadth`` (:func:`~hbb2obb.converters.image.fit.fit_rectangle_at_breadth`), judged as
    :func:`fit_box` judges a fit; ``None`` (keep ``result``) when no proper rectangle fits or
    the self-check would send the refit back to its HBB. ``params`` are a loose frame's.

    The breadth is held across the fit's long side: in a near-square HBB the rectangle fitted
    at the mask's axis can come out longer across that axis than along it, and holding the
    breadth across the mask's axis would then turn the box to the other diagonal."""
    candidate = result.candidate
    theta = candidate.theta
    if abs(wrap_half(long_axis(result.corners) - theta)) > math.pi / 4:  # longer across the mask's axis
        theta += math.pi / 2
    rect = fit_rectangle_at_breadth(candidate.outline, theta, segmentation.centre, segmentation.scaled,
                                    params.corner_radius, params.outline_inset / segmentation.window.sx, breadth,
                                    params.loose_hbb_weight)
    if rect is None:
        return None
    refitted = judged_box(segmentation, candidate, rect, params, keep_masks=keep_masks, hbb=result)
    return refitted if refitted.corners is not None else None


def narrowed_box(segmentation: Segmentation, rect: np.ndarray, breadth: float,
                 params: ImageParams) -> Optional[np.ndarray]:
    """The rectangle at ``rect``'s axis with at most ``breadth``, its length plus breadth kept,
    fitted to the tight HBB as :func:`inscribed_box` does; ``None`` when it is no narrower."""
    edge, other = long_edge(rect)
    sides = sorted((math.hypot(*edge), math.hypot(*other)))
    if breadth >= sides[0] or breadth <= 0:
        return None
    theta = math.atan2(edge[1], edge[0])
    total = sides[0] + sides[1]
    c, s = math.cos(theta), math.sin(theta)
    along, across = np.array([c, s]) * (total - breadth) / 2, np.array([-s, c]) * breadth / 2
    centre = rect.mean(axis=0)
    rough = np.array([centre - along - across, centre + along - across, centre + along + across,
                      centre - along + across])
    return fit_rectangle(rough, theta, segmentation.centre, segmentation.scaled, 0.0, 0.0, params.tight_hbb_weight)
