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
    fit_rectangle,
    fit_rectangle_at_breadth,
    inside_rectangle,
    long_axis,
    long_edge,
    edge_support,
    mask_agreement,
    principal_axis,
    region_contrast,
    rough_sides,
    wrap_half,
    wrap_quarter,
)
from hbb2obb.converters.image.segmentation import foreground_log_odds, kmeans, morphology, select_components
from hbb2obb.geometry.hull import convex_hull, mask_outline_points

#: Width of the background ring around the scaled box, as a fraction of the HBB's short side.
RING = 0.15
#: Colour clusters per window, and about how many pixels the cluster centres are fitted on.
CLUSTERS = 6
KMEANS_SAMPLES = 1500
#: Strength of the rectangle prior (log-odds at the centre; the negative of it far outside).
PRIOR_STRENGTH = 1.0
#: How fast the prior falls off across the rough rectangle's border (per half-breadth).
PRIOR_SLOPE = 3.0
#: Mean-field coupling between neighbouring pixels' labels, steps per round, and rounds of
#: colour re-estimation after the first.
COUPLING = 0.5
SMOOTHING_STEPS = 5
ROUNDS = 2
#: The same for a tight HBB, whose fit holds the HBB nearly as a constraint, so that the mask
#: mostly gives the axis: one re-estimation and three steps did better than two and five on the
#: tuned DOTA frames (ships 0.740 -> 0.746, helicopters 0.850 -> 0.860, planes 0.872 -> 0.874)
#: and on synthetic tight frames (0.884 -> 0.890), at less than half the mean field's cost
#: (0 rounds and 3 steps, or 1 and 2, scored lower on both).
TIGHT_ROUNDS = 1
TIGHT_SMOOTHING_STEPS = 3
#: A tight HBB whose long side is at most ``MOMENTS_UP_TO`` pixels, with a mask at least this
#: elongated (covariance eigenvalue ratio; a 2.4:1 car gives about 5.8), refines its angle by the
#: mask's second moments instead of the outline's minimum-area rectangle, whose staircase outline
#: snaps a small car to the pixel grid. Synthetic lots (`--layout lots --tight`): cars 0.900 -> 0.919
#: and 0.913 -> 0.925 with the hugging rule of the class check (the fits alone, checks off: 0.903
#: -> 0.922); on larger boxes the outline did better (buses and trucks 0.836 with the limit, 0.831
#: at 90 px, 0.830 at none), and at an elongation of 1.5 the tuned DOTA planes lost 0.008.
MIN_ELONGATION = 2.5
MOMENTS_UP_TO = 60.0
#: A loose box's angle moves this share of the way from its outline's (or its hint's) to its mask's
#: principal axis when the two agree within ``ANGLE_AGREEMENT``. Mean IoU on Songdo 00164 /
#: synthetic loose roads 720p / 4K / lots, with the pooled breadths: none 0.859 / 0.877 / 0.927 /
#: 0.852, this 0.860 / 0.888 / 0.928 / 0.857 (angle p90 4.3 -> 3.4, 5.1 -> 3.6 deg on the first
#: two); 0.25 0.861 / 0.883 / 0.928 / 0.855; 0.75 0.858 / 0.890 / 0.928 / 0.860; 1 0.856 / 0.892
#: / 0.927 / 0.859.
LOOSE_MOMENT_SHARE = 0.5
#: An HBB whose sides differ by less than this ratio may hold its object along either diagonal.
NEAR_SQUARE = 1.3
#: Least coherence of the edge directions for them to pick the diagonal of a near-square HBB.
MIN_COHERENCE = 0.2
#: Largest angle (degrees) between the mask's rectangle and the gradient hint for the mask's to win.
ANGLE_AGREEMENT = 8.0
#: Weight of the HBB's four sides against the mask's four extents in the final fit: a loose
#: (hand-drawn) HBB is one noisy opinion among the mask's; a tight one is nearly a constraint.
LOOSE_HBB_WEIGHT = 3.0
TIGHT_HBB_WEIGHT = 10.0
#: A mask smaller than this share of the HBB's pixels is no object: fall back.
MIN_MASK_SHARE = 0.1
#: Least colour evidence (nats) by which the mask must stand out from the ring around the box;
#: on a featureless or pure-noise window it stays below 0.02, on the real sample's vehicles it
#: is 0.15 at the least (median 4.8).
MIN_CONTRAST = 0.1
#: How far (working pixels) the mask's extents are pulled in: none (0 and 0.5 tie on synthetic data).
OUTLINE_INSET = 0.0
#: Colour evidence is clipped to this many nats before it is averaged, so that a few saturated
#: pixels do not decide a comparison.
EVIDENCE_CLIP = 3.0
#: Width of the band around a rectangle that its inside is compared with, as a fraction of the
#: HBB's short side.
SUPPORT_BAND = 0.15
#: The self-check keeps the HBB when the fitted box follows the image's edges no better than the
#: HBB and its colour contrast is lower by more than this (nats): colour alone is a weak judge
#: in a row of look-alike neighbours (moored boats fill an HBB's corners), so it needs a margin.
SUPPORT_TOLERANCE = 0.2

#: Why a box was written as its HBB.
REASON_DEGENERATE = "degenerate box"
REASON_OUTSIDE = "outside the frame"
REASON_NO_MASK = "no usable mask"
REASON_NO_RECTANGLE = "no rectangle fits mask and HBB"
REASON_LESS_SUPPORTED = "fitted box less supported by the image than the HBB"
REASON_CLASS_LESS_SUPPORTED = "this class's fitted boxes follow the image's edges less than their HBBs"


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


def _rectangle_prior(window: Window, centre, theta: float, long_side: float, short_side: float,
                     in_box: np.ndarray) -> np.ndarray:
    """Prior log-odds: ``+PRIOR_STRENGTH`` deep inside the rough rectangle, the negative outside."""
    dx = window.centres_x[None, :] - centre[0]
    dy = window.centres_y[:, None] - centre[1]
    u = dx * math.cos(theta) + dy * math.sin(theta)
    v = -dx * math.sin(theta) + dy * math.cos(theta)
    outside = np.maximum(np.abs(u) - long_side / 2, np.abs(v) - short_side / 2) / max(short_side / 2, 1.0)
    prior = -PRIOR_STRENGTH * np.clip(PRIOR_SLOPE * outside, -1.0, 1.0)
    return np.where(in_box, prior, -10.0)


def candidate_axes(width: float, height: float, hint: float, edge: float, coherence: float) -> list:
    """The long-axis directions worth a segmentation: the hint or the hint turned by 90 degrees.

    An elongated HBB holds its object nearer its long side. A near-square one may hold it along
    either diagonal; the edge direction (modulo 180 degrees) decides when it is clear enough,
    otherwise both are tried.

    Examples
    --------
    >>> [round(a, 2) for a in candidate_axes(30, 30, 0.78, edge=-0.8, coherence=0.5)]
    [2.35]
    >>> len(candidate_axes(30, 30, 0.78, edge=-0.8, coherence=0.01))
    2
    """
    if width >= NEAR_SQUARE * height:
        return [hint]
    if height >= NEAR_SQUARE * width:
        return [hint + math.pi / 2]
    if coherence >= MIN_COHERENCE:
        turned = abs(wrap_half(hint + math.pi / 2 - edge)) < abs(wrap_half(hint - edge))
        return [hint + math.pi / 2 if turned else hint]
    return [hint, hint + math.pi / 2]


def segment_box(image, xyxy, *, scale_factor, opening_kernel_percentage: float, imgsz: int,
                tight: bool = False) -> Segmentation:
    """Segment the object of one HBB ``x1 y1 x2 y2`` (image pixels) on a PIL RGB image.

    ``tight`` (the HBB is its object's rectangle's bounding box) uses the lighter mean field of
    ``TIGHT_ROUNDS`` and ``TIGHT_SMOOTHING_STEPS``.

    Returns a :class:`Segmentation` with one :class:`Candidate` per orientation tried whose
    mask is big enough and stands out from the ring around the box; none (and a ``reason``)
    when the box is degenerate, outside the frame, or holds no such mask.
    """
    x1, y1, x2, y2 = (float(v) for v in xyxy)
    width, height = x2 - x1, y2 - y1
    short, long = scale_factor_pair(scale_factor)
    scaled = scale_hbbs(np.array([[x1, y1, x2, y2]]), short, long)[0]
    segmentation = Segmentation((x1, y1, x2, y2), scaled)
    if not (width >= 1.0 and height >= 1.0):
        segmentation.reason = REASON_DEGENERATE
        return segmentation
    window = crop_window(image, scaled, RING * min(width, height) + 2.0, imgsz)
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
    _, clusters = kmeans(pixels, CLUSTERS, iterations=6, fit_every=max(1, len(pixels) // KMEANS_SAMPLES))
    clusters = clusters.reshape(window.pixels.shape[:2])
    segmentation.edge, segmentation.coherence = edge_axis(channels, spread, colour_gradient)
    for axis in candidate_axes(width, height, hint, segmentation.edge, segmentation.coherence):
        long_side, short_side = rough_sides(width, height, axis)
        prior = _rectangle_prior(window, centre, axis, long_side, short_side, in_box)
        posterior, evidence = foreground_log_odds(clusters, prior, rounds=TIGHT_ROUNDS if tight else ROUNDS,
                                                  smoothing_steps=TIGHT_SMOOTHING_STEPS if tight else SMOOTHING_STEPS,
                                                  coupling=COUPLING)
        # a tight HBB's corners outside a diagonal object hold its neighbours' corners: parts other
        # than the main one must lie in the rough rectangle (synthetic lots of buses and trucks side
        # by side 0.836 -> 0.870, cars 0.919 -> 0.920 and 0.925 -> 0.929; tuned DOTA frames unchanged)
        parts = in_hbb & (prior > 0) if tight else None
        mask = morphology(select_components(posterior > 0, in_hbb, parts_inside=parts), opening_kernel_percentage)
        if np.count_nonzero(mask) < MIN_MASK_SHARE * np.count_nonzero(in_hbb):
            continue
        if evidence[mask].mean() - evidence[~in_box].mean() < MIN_CONTRAST:
            continue
        outline = window.to_image(mask_outline_points(mask))
        theta = axis
        turn = wrap_quarter(outline_axis(outline) - axis)
        if tight and max(width, height) <= MOMENTS_UP_TO:  # every mask pixel votes: the staircase
            # outline of a small car snaps to the pixel grid
            moment_axis, elongation = principal_axis(mask, window)
            if elongation >= MIN_ELONGATION:
                turn = wrap_half(moment_axis - axis)
        if abs(math.degrees(turn)) <= ANGLE_AGREEMENT:
            theta = axis + turn
        if not tight:  # a loose box's outline snaps to its mask's ragged border: the mask's second
            # moments, where every pixel votes, take half the say when the two agree
            moved = wrap_half(principal_axis(mask, window)[0] - theta)
            if abs(math.degrees(moved)) <= ANGLE_AGREEMENT:
                theta += LOOSE_MOMENT_SHARE * moved
        segmentation.candidates.append(Candidate(axis, theta, mask, outline, evidence))
    if not segmentation.candidates:
        segmentation.reason = REASON_NO_MASK
    return segmentation


def outline_axis(outline: np.ndarray) -> float:
    """Direction (radians) of the long side of the points' minimum-area rectangle.

    OpenCV's rotating calipers (``cv2.minAreaRect``): 15x faster than
    :func:`hbb2obb.geometry.hull.minimum_area_rectangle` on the masks' outlines (0.03 against
    0.46 ms), the same direction to 0.002 degrees (OpenCV works in single precision). For a
    square either side may come out as the long one; the caller folds the angle modulo 90
    degrees.

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


def fit_candidate(segmentation: Segmentation, candidate: Candidate, tight: bool, corner_radius: float):
    """The rectangle of one candidate: tight reads the HBB as the rectangle's bounding box (sharp
    corners, heavy weight), loose as the bounding box of a rounded object (``corner_radius``)."""
    radius, weight = (0.0, TIGHT_HBB_WEIGHT) if tight else (corner_radius, LOOSE_HBB_WEIGHT)
    window = segmentation.window
    return fit_rectangle(candidate.outline, candidate.theta, segmentation.centre, segmentation.scaled, radius,
                         OUTLINE_INSET / window.sx, weight)


def box_support(segmentation: Segmentation, evidence: np.ndarray, rect: np.ndarray) -> float:
    """How much better the colour evidence is inside ``rect`` than in the band just around it."""
    x1, y1, x2, y2 = segmentation.xyxy
    band = SUPPORT_BAND * min(x2 - x1, y2 - y1)
    return region_contrast(segmentation.window, np.clip(evidence, -EVIDENCE_CLIP, EVIDENCE_CLIP), rect, band)


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


def inscribed_box(segmentation: Segmentation, axis: float, check: bool, reason: str,
                  min_edge_ratio: float = 1.0) -> BoxResult:
    """The rectangle at ``axis`` inscribed in a tight HBB (its sides are then fixed by the angle),
    kept when it follows the image's edges at least ``min_edge_ratio`` times as well as the HBB;
    otherwise a fallback with ``reason``. Its confidence has no colour term."""
    window = segmentation.window
    x1, y1, x2, y2 = segmentation.xyxy
    long_side, short_side = rough_sides(x2 - x1, y2 - y1, axis)
    c, s = math.cos(axis), math.sin(axis)
    along, across = np.array([c, s]) * long_side / 2, np.array([-s, c]) * short_side / 2
    centre = np.asarray(segmentation.centre)
    rough = np.array([centre - along - across, centre + along - across, centre + along + across,
                      centre - along + across])
    rect = fit_rectangle(rough, axis, segmentation.centre, segmentation.scaled, 0.0, 0.0, TIGHT_HBB_WEIGHT)
    if rect is None or window is None:
        return BoxResult(None, window, reason=reason)
    edges = edge_support(window, segmentation.gradient, rect)
    hbb_edges = edge_support(window, segmentation.gradient, hbb_corners(segmentation.xyxy))
    if check and not edges >= min_edge_ratio * hbb_edges:
        return BoxResult(None, window, reason=reason, edges=edges, hbb_edges=hbb_edges)
    return BoxResult(rect, window, confidence=edge_confidence(edges, hbb_edges), edges=edges, hbb_edges=hbb_edges)


def _inscribed_without_mask(segmentation: Segmentation, prefer_axis: Optional[float], check: bool) -> BoxResult:
    """A tight HBB with no usable mask: the rectangle inscribed at the neighbours' orientation or,
    failing that, at a clear edge direction, kept only when it follows the image's edges better
    than the HBB."""
    axis = prefer_axis if prefer_axis is not None else \
        segmentation.edge if segmentation.coherence >= MIN_COHERENCE else None
    if axis is None or segmentation.window is None:
        return BoxResult(None, segmentation.window, reason=REASON_NO_MASK)
    result = inscribed_box(segmentation, axis, check, REASON_NO_MASK)
    if check and result.corners is not None and not result.edges > result.hbb_edges:
        return BoxResult(None, segmentation.window, reason=REASON_NO_MASK, edges=result.edges,
                         hbb_edges=result.hbb_edges)
    return result


def fit_box(segmentation: Segmentation, *, tight: bool, corner_radius: float, prefer_axis: Optional[float] = None,
            check: bool = True, keep_masks: bool = False) -> BoxResult:
    """The box's OBB from its segmentation, or a fallback with its reason.

    With two candidates (a near-square HBB whose edges did not pick a diagonal), the one whose
    axis is nearer ``prefer_axis`` (the neighbours' orientation) wins when given, else the one
    whose rectangle holds more colour evidence. The self-check (``check``) then compares the
    colour contrast of the fitted box with that of the HBB itself and keeps the HBB when the
    fit is not better supported: a converter must never do worse than doing nothing.

    The confidence of a fitted box is how well its rectangle agrees with the mask it was fitted
    to (:func:`~hbb2obb.converters.image.fit.mask_agreement`): the share of the mask it holds
    (a loose HBB), or the mean of that share and their IoU (a tight HBB, whose rectangle is
    nearly fixed by the HBB, so that one holding much more than the mask should also score
    lower). Chosen on synthetic and the tuned real frames (README, converter section): the
    fit's edge and colour margins over the HBB, the old confidence, ranked the boxes no better
    than chance.
    """
    if segmentation.reason == REASON_NO_MASK and tight:
        return _inscribed_without_mask(segmentation, prefer_axis, check)
    if segmentation.reason:
        return BoxResult(None, segmentation.window, reason=segmentation.reason)
    fitted = []
    for candidate in segmentation.candidates:
        rect = fit_candidate(segmentation, candidate, tight, corner_radius)
        if rect is not None:
            fitted.append((candidate, rect))
    if not fitted:
        return BoxResult(None, segmentation.window, reason=REASON_NO_RECTANGLE)
    window = segmentation.window
    if len(fitted) > 1 and prefer_axis is not None:
        best = min(fitted, key=lambda item: abs(wrap_half(long_axis(item[1]) - prefer_axis)))
    elif len(fitted) > 1:  # the diagonal whose rectangle holds more evidence
        shared = np.clip(sum(item[0].evidence for item in fitted), -6.0, 6.0) / len(fitted)
        best = max(fitted, key=lambda item: float(shared[inside_rectangle(window, item[1])].sum()))
    else:
        best = fitted[0]
    candidate, rect = best
    return judged_box(segmentation, candidate, rect, tight=tight, check=check, keep_masks=keep_masks)


def judged_box(segmentation: Segmentation, candidate: Candidate, rect: np.ndarray, *, tight: bool, check: bool,
               keep_masks: bool = False, hbb: Optional[BoxResult] = None) -> BoxResult:
    """``rect``, fitted to ``candidate``'s mask, as a :class:`BoxResult`: with the self-check
    against the HBB (a fallback when it follows the image's edges no better than the HBB and
    its colour stands out ``SUPPORT_TOLERANCE`` less) and its confidence (see :func:`fit_box`).
    ``hbb``: an earlier judgement of the same candidate, whose HBB supports are reused."""
    window = segmentation.window
    support = box_support(segmentation, candidate.evidence, rect)
    edges = edge_support(window, segmentation.gradient, rect)
    if hbb is not None:
        hbb_support, hbb_edges = hbb.hbb_support, hbb.hbb_edges
    else:
        hbb_support = box_support(segmentation, candidate.evidence, hbb_corners(segmentation.xyxy))
        hbb_edges = edge_support(window, segmentation.gradient, hbb_corners(segmentation.xyxy))
    masks = dict(window=window, mask=candidate.mask, hull=convex_hull(candidate.outline)) if keep_masks else {}
    if check and support < hbb_support - SUPPORT_TOLERANCE and not edges > hbb_edges:
        return BoxResult(None, reason=REASON_LESS_SUPPORTED, support=support, hbb_support=hbb_support,
                         edges=edges, hbb_edges=hbb_edges, **masks)
    held, overlap = mask_agreement(window, candidate.mask, rect)
    confidence = (held + overlap) / 2 if tight else held
    return BoxResult(rect, confidence=confidence, support=support, hbb_support=hbb_support, edges=edges,
                     hbb_edges=hbb_edges, from_mask=True, candidate=candidate, **masks)


def refit_at_breadth(segmentation: Segmentation, result: BoxResult, breadth: float, corner_radius: float, *,
                     check: bool = True, keep_masks: bool = False) -> Optional[BoxResult]:
    """A loose box's fit (``result``, fitted to its own mask) again with its breadth held at
    ``breadth`` (:func:`~hbb2obb.converters.image.fit.fit_rectangle_at_breadth`), judged as
    :func:`fit_box` judges a fit; ``None`` (keep ``result``) when no proper rectangle fits or
    the self-check would send the refit back to its HBB."""
    candidate = result.candidate
    rect = fit_rectangle_at_breadth(candidate.outline, candidate.theta, segmentation.centre, segmentation.scaled,
                                    corner_radius, OUTLINE_INSET / segmentation.window.sx, breadth, LOOSE_HBB_WEIGHT)
    if rect is None:
        return None
    refitted = judged_box(segmentation, candidate, rect, tight=False, check=check, keep_masks=keep_masks, hbb=result)
    return refitted if refitted.corners is not None else None


def narrowed_box(segmentation: Segmentation, rect: np.ndarray, breadth: float) -> Optional[np.ndarray]:
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
    return fit_rectangle(rough, theta, segmentation.centre, segmentation.scaled, 0.0, 0.0, TIGHT_HBB_WEIGHT)
