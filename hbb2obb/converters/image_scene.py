"""Evidence from a whole frame for the ``image`` converter: tightness, neighbours, class checks.

The first two are decided for all boxes of a frame before any rectangle is fitted, the third
after:

- :func:`estimate_tightness`: whether the HBBs are the bounding boxes of the objects'
  rectangles (tight, as in DOTA-HBB or any set derived from OBBs) or hand-drawn around objects
  with rounded corners (loose, as in the Songdo sample).
- :func:`neighbour_axes`: objects in rows (parking lots, marinas) share an orientation, so a
  box whose own pixels leave the diagonal open takes its neighbours' as evidence.
- :func:`classes_less_supported`: a class whose fitted boxes as a whole follow the image's
  edges less than their HBBs keeps its HBBs.
"""

from __future__ import annotations

import math

import numpy as np

from hbb2obb.converters.image_box import REASON_NO_MASK


#: How close (pixels) to a whole pixel an HBB side must lie to count as boxed from integer corners
#: (room for the float arithmetic of centre and size; normalized files rounded to a few decimals
#: do not land on whole pixels, so give their tightness explicitly).
WHOLE_PIXEL = 1e-3
#: Fewest boxes of a class with an edge-support comparison for the class-level self-check.
MIN_CLASS_BOXES = 3
#: Neighbours are boxes whose centres lie within this many of the box's own diagonals.
NEIGHBOUR_REACH = 1.5
#: Least agreement of the neighbours' orientations (mean resultant length of doubled angles).
MIN_AGREEMENT = 0.6


def estimate_tightness(xyxy) -> str:
    """``"tight"`` when the HBBs look boxed from polygons with whole-pixel corners, else ``"loose"``.

    A DOTA-HBB set (and any set boxed from DOTA's polygons) puts every HBB side on a whole
    pixel; hand-drawn or detector boxes (the Songdo sample's are in tenths) almost never do all
    of them. The pixels themselves were measured not to tell the two readings apart (see the
    README's converter section), so this is read from the labels; give ``tightness`` explicitly
    when a set's provenance is known. No boxes: ``"loose"``, the historical reading.

    Examples
    --------
    >>> estimate_tightness([[10, 20, 47, 59], [3, 4, 9, 12]]), estimate_tightness([[10.5, 20, 47, 59]])
    ('tight', 'loose')
    >>> estimate_tightness(np.zeros((0, 4)))
    'loose'
    """
    xyxy = np.asarray(xyxy, dtype=np.float64).reshape(-1, 4)
    if len(xyxy) == 0:
        return "loose"
    whole = np.abs(xyxy - np.round(xyxy)) <= WHOLE_PIXEL
    return "tight" if bool(whole.all()) else "loose"


def neighbour_axes(segmentations) -> list:
    """Per box, the orientation its neighbours agree on (radians), or ``None``.

    Only boxes with two candidate orientations, or with no usable mask, get one; the neighbours are boxes with a single
    candidate (their own pixels decided) within ``NEIGHBOUR_REACH`` of their diagonal, and they
    must agree (doubled-angle mean resultant at least ``MIN_AGREEMENT``).

    Examples
    --------
    >>> neighbour_axes([])
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
        reach = NEIGHBOUR_REACH * math.hypot(x2 - x1, y2 - y1)
        near = decided & (np.hypot(*(centres - centres[index]).T) <= reach)
        near[index] = False
        if not near.any():
            preferred.append(None)
            continue
        doubled = np.exp(2j * thetas[near]).mean()
        preferred.append(float(np.angle(doubled) / 2) if abs(doubled) >= MIN_AGREEMENT else None)
    return preferred


def classes_less_supported(results, class_ids) -> np.ndarray:
    """Boolean per box: its class's fitted boxes follow the image's edges less than their HBBs.

    For each class with at least ``MIN_CLASS_BOXES`` boxes that were fitted (and compared, even
    if the box's own check then kept its HBB), the median ratio of the fitted box's edge support
    to the HBB's; below one, every converted box of that class is marked. Objects of one class
    share a shape, so a class whose rectangles as a whole run across the image's edges
    (helicopters: the rotor disc is in the labelled box, the fuselage in the mask) is better
    left as its HBBs.

    Examples
    --------
    >>> from types import SimpleNamespace as Box
    >>> boxes = [Box(corners=1, edges=e, hbb_edges=1.0) for e in (0.8, 0.9, 0.95, 2.0)]
    >>> classes_less_supported(boxes, [0, 0, 0, 1]).tolist()
    [True, True, True, False]
    """
    class_ids = np.asarray(class_ids).reshape(-1)
    ratio = np.array([r.edges / r.hbb_edges if r.hbb_edges > 0 else math.nan for r in results], dtype=np.float64)
    converted = np.array([r.corners is not None for r in results], dtype=bool)
    marked = np.zeros(len(results), dtype=bool)
    for class_id in np.unique(class_ids):
        member = class_ids == class_id
        compared = member & np.isfinite(ratio)
        if compared.sum() >= MIN_CLASS_BOXES and float(np.median(ratio[compared])) < 1.0:
            marked |= member & converted
    return marked
