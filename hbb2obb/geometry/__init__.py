"""Geometry of oriented boxes: area, repair, exact IoU, orientation, and matching by overlap.

Array in, array out, in the style of shapely 2: corners are ``(n, 4, 2)`` float64 arrays in
image coordinates (``(n, 8)`` and :class:`~hbb2obb.boxes.Boxes` are accepted too), every
function works on all boxes at once, and empty inputs give empty outputs.

* :mod:`~hbb2obb.geometry.polygon`: :func:`polygon_area`, :func:`repair_corners`,
  :func:`is_degenerate`, :func:`is_concave`, :func:`bounds`, :func:`side_lengths`.
* :mod:`~hbb2obb.geometry.iou`: :func:`iou_pairs`, :func:`candidate_pairs`,
  :func:`sparse_pairwise_iou`, :func:`pairwise_iou`, :func:`calculate_obb_iou`.
* :mod:`~hbb2obb.geometry.angles`: :func:`orientation`, :func:`angle_difference`,
  :func:`orientation_errors`, :func:`off_axis_angle`, :func:`orientation_error`.
* :mod:`~hbb2obb.geometry.distance`: :func:`distance_ious` (GIoU, DIoU, CIoU, centre offset),
  :func:`enclosing_extent`, :func:`box_centers`, :func:`box_axes`.
* :mod:`~hbb2obb.geometry.matching`: :func:`~hbb2obb.geometry.matching.match_pairs`, ground truth
  to predictions from scored candidate pairs (docs/metrics.md §2), shared by the metric dict and
  the detection metrics.
"""

from hbb2obb.geometry.angles import (
    angle_difference,
    off_axis_angle,
    orientation,
    orientation_error,
    orientation_errors,
)
from hbb2obb.geometry.candidates import candidate_pairs
from hbb2obb.geometry.distance import DistanceIoU, box_axes, box_centers, distance_ious, enclosing_extent
from hbb2obb.geometry.iou import (
    calculate_obb_iou,
    iou_pairs,
    pairwise_iou,
    sparse_pairwise_iou,
)
from hbb2obb.geometry.polygon import bounds, is_concave, is_degenerate, polygon_area, repair_corners, side_lengths

__all__ = [
    "DistanceIoU",
    "angle_difference",
    "bounds",
    "box_axes",
    "box_centers",
    "calculate_obb_iou",
    "candidate_pairs",
    "distance_ious",
    "enclosing_extent",
    "iou_pairs",
    "is_concave",
    "is_degenerate",
    "off_axis_angle",
    "orientation",
    "orientation_error",
    "orientation_errors",
    "pairwise_iou",
    "polygon_area",
    "repair_corners",
    "side_lengths",
    "sparse_pairwise_iou",
]
