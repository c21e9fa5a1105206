"""Where the score comes from: cuts of the matched pairs by properties of the ground truth (docs/metrics.md §5).

COCOeval style: one :class:`~hbb2obb.scoring.evaluate.MatchTable` is accumulated by
:func:`~hbb2obb.scoring.evaluate.evaluate_frames`, and every cut here is a set of boolean masks over its
ground-truth rows. Nothing is re-matched per cut, so a pair scored here is the pair eval scored.

* :func:`ground_truth_properties`: per ground-truth row, off-axis angle, sides, edge and
  difficult flags (:func:`difficult_flags` reads them from ``.dota`` files), class.
* :func:`orientation_cut`, :func:`orientation_partition`, :func:`short_side_cut`,
  :func:`edge_cut`, :func:`difficult_cut`, :func:`class_cut`: the cuts, as :class:`Cut`
  (labelled masks); :func:`standard_cuts` lists those of the report.
* :func:`group_statistics`, :func:`summarize_cut`: the statistics of each group.
* :func:`side_ratio_table`: converted-to-reference side ratios by reference off-axis band.
* :func:`worst_pairs`, :func:`unmatched_gt_rows`: table rows to open and fix.
* :func:`analyze`: all of it as plain data (what the report, YAML and figure draw from).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence

import numpy as np

from hbb2obb.frames.loading import touches_edge
from hbb2obb.geometry import off_axis_angle, orientation, polygon_area, side_lengths
from hbb2obb.io import read_dota, read_obb_labels
from hbb2obb.io.labelmap import class_name
from hbb2obb.scoring.evaluate import EvaluationResult, MatchTable
from hbb2obb.scoring.metric_dict import summarize
from hbb2obb.scoring.overlap_metrics import RowOverlap, overlap_statistics, row_overlap

AXIS_ALIGNED_BELOW = 0.005
"""Off-axis angle (degrees) under which a ground-truth box counts as axis-aligned."""

ORIENTATION_BANDS = ((0.0, 5.0), (5.0, 15.0), (15.0, 30.0), (30.0, 45.0))
SHORT_SIDE_BANDS = ((0.0, 25.0), (25.0, 35.0), (35.0, 45.0), (45.0, 60.0), (60.0, math.inf))
ASPECT_RATIO_BANDS = ((1.0, 1.5), (1.5, 2.0), (2.0, 3.0), (3.0, 5.0), (5.0, math.inf))
SIDE_RATIO_BANDS = ((AXIS_ALIGNED_BELOW, 1.0), (1.0, 3.0), (3.0, 5.0), (5.0, 15.0), (15.0, 45.0))
LOW_IOU, HIGH_IOU = 0.75, 0.9


@dataclass(frozen=True)
class GroundTruthProperties:
    """Properties of every ground-truth row of a match table, aligned with ``table.gt``.

    Attributes
    ----------
    off_axis : (n,) float
        Off-axis angle of the box orientation, degrees in [0, 45].
    short_side, long_side, area : (n,) float
        In the table's units (pixels whenever the frame size was known).
    edge : (n,) bool
        A corner within the edge tolerance of the frame border; ``False`` where unknown.
    edge_known : (n,) bool
        Whether the frame size, hence the edge flag, is known.
    difficult : (n,) bool
        The DOTA ``difficult`` flag; ``False`` where no flag was found.
    class_id : (n,) int
    """

    off_axis: np.ndarray
    short_side: np.ndarray
    long_side: np.ndarray
    area: np.ndarray
    edge: np.ndarray
    edge_known: np.ndarray
    difficult: np.ndarray
    class_id: np.ndarray

    @property
    def axis_aligned(self) -> np.ndarray:
        return self.off_axis < AXIS_ALIGNED_BELOW

    @property
    def any_edge_known(self) -> bool:
        return bool(self.edge_known.any())

    @property
    def controlled(self) -> np.ndarray:
        """Interior and not difficult; when no frame size is known at all, not difficult."""
        interior = self.edge_known & ~self.edge if self.any_edge_known else np.ones_like(self.edge)
        return interior & ~self.difficult


def ground_truth_properties(table: MatchTable, difficult: Optional[np.ndarray] = None,
                            edge_tolerance: float = 1.0) -> GroundTruthProperties:
    """Measure every ground-truth row of ``table``.

    Parameters
    ----------
    table : MatchTable
    difficult : (n,) bool, optional
        Flags from :func:`difficult_flags`; default: the table's own (DOTA ground truth) or none.
    edge_tolerance : float
        Pixels from the border that count as touching it (``<=``).

    Examples
    --------
    >>> from hbb2obb.boxes import Boxes
    >>> from hbb2obb.scoring.evaluate import MatchTable
    >>> gt = Boxes(corners=[[[0, 0], [40, 0], [40, 20], [0, 20]]], class_id=[0])
    >>> nan = np.array([np.nan])
    >>> table = MatchTable(("f",), np.array([[100.0, 100.0]]), gt, np.array([0]), Boxes.empty(),
    ...                    np.zeros(0, int), np.array([False]), np.array([0]), np.zeros(1), nan, nan,
    ...                    np.zeros(0, bool))
    >>> p = ground_truth_properties(table)
    >>> p.off_axis.tolist(), p.short_side.tolist(), p.edge.tolist()
    ([0.0], [20.0], [True])
    """
    corners = table.gt.corners
    short, long = side_lengths(corners)
    sizes = table.frame_sizes[table.gt_frame] if len(corners) else np.zeros((0, 2))
    edge_known = np.isfinite(sizes).all(axis=1)
    edge = np.zeros(len(corners), dtype=bool)
    if edge_known.any():
        rows = np.flatnonzero(edge_known)
        # The test --exclude_edge_cases uses, with each row's own frame size broadcast over its corners.
        edge[rows] = touches_edge(corners[rows], sizes[rows, 0:1], sizes[rows, 1:2], edge_tolerance)
    if difficult is None:
        difficult = table.gt.difficult if table.gt.difficult is not None else np.zeros(len(corners), dtype=bool)
    return GroundTruthProperties(
        off_axis=off_axis_angle(orientation(corners)) if len(corners) else np.zeros(0),
        short_side=short,
        long_side=long,
        area=polygon_area(corners) if len(corners) else np.zeros(0),
        edge=edge,
        edge_known=edge_known,
        difficult=np.asarray(difficult, dtype=bool),
        class_id=table.gt.class_id,
    )


def difficult_flags(table: MatchTable, gt_dir, label_map: Optional[dict]) -> tuple[np.ndarray, list]:
    """The DOTA ``difficult`` flag of every ground-truth row, and warnings.

    Ground truth read from DOTA files carries its own flags. Otherwise a file ``NAME.dota``
    beside ``gt_dir/NAME.txt`` gives them, box for box in file order, but only when it holds
    as many boxes as the ground-truth file (else it describes other boxes: warned, ignored).

    Returns
    -------
    flags : (n,) bool
    warnings : list of (kind, message)
    """
    if table.gt.difficult is not None:
        return np.asarray(table.gt.difficult, dtype=bool), []
    flags = np.zeros(len(table.gt), dtype=bool)
    warnings = []
    gt_dir = Path(gt_dir)
    for frame, name in enumerate(table.frame_names):
        dota_path = gt_dir / f"{name}.dota"
        if not dota_path.is_file():
            continue
        dota = read_dota(dota_path, strict=True, label_map=label_map).boxes
        gt_lines = read_obb_labels(gt_dir / f"{name}.txt", strict=True, label_map=label_map).boxes.line
        if len(dota) != len(gt_lines):
            warnings.append(("difficult flags", f"{dota_path}: {len(dota)} boxes but {len(gt_lines)} in "
                             f"{gt_dir / (name + '.txt')}: its difficult flags are ignored"))
            continue
        rows = np.flatnonzero(table.gt_frame == frame)
        # Table rows keep their file line number; its rank among the file's box lines is the box index.
        flags[rows] = dota.difficult[np.searchsorted(gt_lines, table.gt.line[rows])]
    return flags, warnings


@dataclass(frozen=True)
class Cut:
    """A named set of groups of ground-truth rows (masks may overlap)."""

    key: str
    title: str
    labels: tuple
    masks: tuple


def _band_label(low: float, high: float, unit: str) -> str:
    return f"{low:g} {unit} and up" if math.isinf(high) else f"{low:g} to {high:g} {unit}"


def _in_band(values: np.ndarray, low: float, high: float, closed_top: bool) -> np.ndarray:
    return (values >= low) & ((values <= high) if closed_top else (values < high))


def orientation_cut(props: GroundTruthProperties, subset: Optional[np.ndarray] = None,
                    key: str = "orientation", title: str = "By ground-truth orientation") -> Cut:
    """Axis-aligned, rotated, then the off-axis bands [0, 5), [5, 15), [15, 30), [30, 45]
    (overlapping: the first band includes the axis-aligned boxes)."""
    within = np.ones(len(props.off_axis), dtype=bool) if subset is None else subset
    labels = [f"axis-aligned (<{AXIS_ALIGNED_BELOW:g} deg)", "rotated"]
    masks = [within & props.axis_aligned, within & ~props.axis_aligned]
    for i, (low, high) in enumerate(ORIENTATION_BANDS):
        labels.append(f"off-axis {_band_label(low, high, 'deg')}")
        masks.append(within & _in_band(props.off_axis, low, high, i == len(ORIENTATION_BANDS) - 1))
    return Cut(key, title, tuple(labels), tuple(masks))


def orientation_partition(props: GroundTruthProperties) -> Cut:
    """Axis-aligned, then [0.005, 5), [5, 15), [15, 30), [30, 45]: every box in one group."""
    labels = ["axis-aligned"]
    masks = [props.axis_aligned]
    for i, (low, high) in enumerate(ORIENTATION_BANDS):
        low = max(low, AXIS_ALIGNED_BELOW)
        labels.append(f"{low:g} to {high:g} deg")
        masks.append(_in_band(props.off_axis, low, high, i == len(ORIENTATION_BANDS) - 1))
    return Cut("orientation_partition", "By ground-truth orientation (partition)", tuple(labels), tuple(masks))


def short_side_cut(props: GroundTruthProperties) -> Cut:
    labels = tuple(_band_label(low, high, "px") for low, high in SHORT_SIDE_BANDS)
    masks = tuple(_in_band(props.short_side, low, high, False) for low, high in SHORT_SIDE_BANDS)
    return Cut("short_side", "By ground-truth short side", labels, masks)


def aspect_ratio_cut(props: GroundTruthProperties) -> Cut:
    """Long side over short side: [1, 1.5), [1.5, 2), [2, 3), [3, 5), 5 and up (a box of no width: the last)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(props.short_side > 0, props.long_side / props.short_side, math.inf)
    labels = tuple(f"{low:g} and up" if math.isinf(high) else f"{low:g} to {high:g}"
                   for low, high in ASPECT_RATIO_BANDS)
    masks = tuple(_in_band(ratio, low, high, False) for low, high in ASPECT_RATIO_BANDS)
    return Cut("aspect_ratio", "By ground-truth aspect ratio (long / short side)", labels, masks)


def edge_cut(props: GroundTruthProperties) -> Cut:
    """Touches an edge / interior, plus a group for frames of unknown size when there are any."""
    labels = ["touches an edge", "interior"]
    masks = [props.edge_known & props.edge, props.edge_known & ~props.edge]
    if not props.edge_known.all():
        labels.append("frame size unknown")
        masks.append(~props.edge_known)
    return Cut("edge", "By frame edge", tuple(labels), tuple(masks))


def difficult_cut(props: GroundTruthProperties) -> Cut:
    return Cut("difficult", "By difficult flag", ("difficult", "not difficult"), (props.difficult, ~props.difficult))


def class_cut(props: GroundTruthProperties, label_map: Optional[dict] = None) -> Cut:
    """One group per class: the label map's classes in its order, then any other class seen."""
    label_map = label_map or {}
    seen = np.unique(props.class_id).tolist()
    ids = [c for c in label_map if c in seen] + [c for c in seen if c not in label_map]
    return Cut("class", "By class", tuple(class_name(label_map, c) for c in ids),
               tuple(props.class_id == c for c in ids))


def group_statistics(ious, angle_errors) -> dict:
    """Statistics of one group of matched pairs (docs/metrics.md §5); every value is 0 for an empty group.

    Examples
    --------
    >>> s = group_statistics([0.7, 0.8, 0.95, 0.9], [0, 1, 2, 10])
    >>> s["boxes"], round(s["avg_iou"], 4), s["share_below_75"], s["share_at_least_90"]
    (4, 0.8375, 0.25, 0.5)
    """
    ious = np.asarray(ious, dtype=np.float64)
    angles = np.asarray(angle_errors, dtype=np.float64)
    n = int(ious.size)
    if n == 0:
        return dict(boxes=0, avg_iou=0.0, std_iou=0.0, sem_iou=0.0, median_iou=0.0, share_below_75=0.0,
                    share_at_least_90=0.0, p90_angle_error=0.0, avg_angle_error=0.0)
    std = float(np.std(ious))
    return dict(
        boxes=n,
        avg_iou=float(np.mean(ious)),
        std_iou=std,
        sem_iou=std / math.sqrt(n),
        median_iou=float(np.median(ious)),
        share_below_75=float(np.count_nonzero(ious < LOW_IOU) / n),
        share_at_least_90=float(np.count_nonzero(ious >= HIGH_IOU) / n),
        p90_angle_error=float(np.percentile(angles, 90)),
        avg_angle_error=float(np.mean(angles)),
    )


def summarize_cut(table: MatchTable, cut: Cut, overlap: Optional[RowOverlap] = None) -> dict:
    """``{"key", "title", "groups": [{"label", ...group_statistics}]}`` over matched rows.

    With ``overlap`` (:func:`~hbb2obb.scoring.overlap_metrics.row_overlap` of the table) each group also
    gets the distance-aware keys and ``spatial_match`` (over all the group's ground-truth rows).
    """
    groups = []
    for label, mask in zip(cut.labels, cut.masks):
        rows = mask & table.matched
        group = {"label": label, **group_statistics(table.iou[rows], table.angle_error[rows])}
        if overlap is not None:
            group.update(overlap_statistics(overlap, mask))
        groups.append(group)
    return {"key": cut.key, "title": cut.title, "groups": groups}


def side_ratio_table(table: MatchTable, props: GroundTruthProperties, subset: np.ndarray) -> list[dict]:
    """Mean per-box ratio converted/reference of short side, long side and area, by off-axis band.

    Over the matched rows of ``subset``; bands: exactly aligned, [0.005, 1), [1, 3), [3, 5),
    [5, 15), [15, 45].
    """
    rows = subset & table.matched
    pred_corners = table.pred.corners[table.pred_index[rows]]
    ratios = {
        "short_side": np.zeros(len(rows)),
        "long_side": np.zeros(len(rows)),
        "area": np.zeros(len(rows)),
    }
    if rows.any():
        short, long = side_lengths(pred_corners)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratios["short_side"][rows] = short / props.short_side[rows]
            ratios["long_side"][rows] = long / props.long_side[rows]
            ratios["area"][rows] = polygon_area(pred_corners) / props.area[rows]
    bands = [("exactly aligned", props.axis_aligned)]
    for i, (low, high) in enumerate(SIDE_RATIO_BANDS):
        bands.append((f"{low:g} to {high:g} deg", _in_band(props.off_axis, low, high, i == len(SIDE_RATIO_BANDS) - 1)))
    out = []
    for label, band in bands:
        chosen = rows & band
        entry = {"label": label, "boxes": int(chosen.sum())}
        for name, values in ratios.items():
            picked = values[chosen]
            picked = picked[np.isfinite(picked)]  # a zero-area reference has no ratio
            entry[name] = float(picked.mean()) if picked.size else 0.0
        out.append(entry)
    return out


def worst_pairs(table: MatchTable, n: int, by: str = "iou") -> np.ndarray:
    """Ground-truth rows of the ``n`` matched pairs to look at first.

    Parameters
    ----------
    by : {"iou", "angle"}
        ``"iou"``: lowest IoU first; ``"angle"``: largest orientation error first (lower IoU
        first among equal errors). Remaining ties keep table order, so the choice is stable.

    Returns
    -------
    (k,) int64
        Row indices into ``table.gt``, ``k = min(n, matches)``.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> t = SimpleNamespace(matched=np.array([True, False, True, True]),
    ...                     iou=np.array([0.9, np.nan, 0.5, 0.7]), angle_error=np.array([1.0, np.nan, 1.0, 9.0]))
    >>> worst_pairs(t, 2).tolist(), worst_pairs(t, 5, by="angle").tolist()
    ([2, 3], [3, 2, 0])
    """
    rows = np.flatnonzero(table.matched)
    if by == "iou":
        order = np.lexsort((rows, table.iou[rows]))
    elif by == "angle":
        order = np.lexsort((rows, table.iou[rows], -table.angle_error[rows]))
    else:
        raise ValueError(f"by must be 'iou' or 'angle', got {by!r}")
    return rows[order[:max(int(n), 0)]]


def unmatched_gt_rows(table: MatchTable) -> np.ndarray:
    """Ground-truth rows with no match, in frame then file order."""
    return np.flatnonzero(~table.matched)


def pair_records(table: MatchTable, props: GroundTruthProperties, rows: Sequence[int],
                 label_map: Optional[dict] = None) -> list[dict]:
    """Plain records of ground-truth rows: frame, line, class, IoU, angle error, GT shape."""
    label_map = label_map or {}
    records = []
    for r in np.asarray(rows, dtype=np.int64).tolist():
        matched = bool(table.matched[r])
        records.append({
            "frame": table.frame_names[table.gt_frame[r]],
            "line": int(table.gt.line[r]) if table.gt.line is not None else None,
            "class": class_name(label_map, int(table.gt.class_id[r])),
            "iou": float(table.iou[r]) if matched else None,
            "best_iou": float(table.best_iou[r]),
            "angle_error": float(table.angle_error[r]) if matched else None,
            "off_axis": float(props.off_axis[r]),
            "short_side": float(props.short_side[r]),
            "long_side": float(props.long_side[r]),
        })
    return records


def standard_cuts(props: GroundTruthProperties, label_map: Optional[dict] = None) -> list[Cut]:
    """The cuts of the report, in its order: orientation, orientation on the controlled subset,
    short side, frame edge (when a frame size is known), difficult (when any box is), class."""
    controlled = props.controlled
    cuts = [
        orientation_cut(props),
        orientation_cut(props, controlled, "orientation_controlled",
                        f"By ground-truth orientation, {_controlled_name(props)} ({int(controlled.sum())} boxes)"),
        short_side_cut(props),
    ]
    if props.any_edge_known:
        cuts.append(edge_cut(props))
    if props.difficult.any():
        cuts.append(difficult_cut(props))
    cuts.append(class_cut(props, label_map))
    return cuts


def _controlled_name(props: GroundTruthProperties) -> str:
    if props.any_edge_known:
        return "interior and not difficult"
    return "not difficult (frame size unknown: edge not checked)"


def analyze(result: EvaluationResult, props: GroundTruthProperties, label_map: Optional[dict] = None, *,
            identity: Optional[dict] = None, comparison: Optional[dict] = None,
            boundary_classes: Sequence[int] = (), worst: int = 0) -> dict:
    """Every cut of docs/metrics.md §5 as plain data (lists, dicts, numbers, strings).

    Parameters
    ----------
    result : EvaluationResult
        From :func:`~hbb2obb.scoring.evaluate.evaluate_frames`.
    props : GroundTruthProperties
        Of ``result.table``.
    identity : dict, optional
        From :func:`hbb2obb.analysis.identity_baseline.identity_summary`, placed as is under ``"identity"``.
    comparison : dict, optional
        From :func:`hbb2obb.analysis.compare.compare_cuts`, placed as is under ``"comparison"``.
    boundary_classes : sequence of int
        Restrict the side ratios to these classes (default all).
    worst : int
        How many worst pairs (by IoU, by angle) to list, with every unmatched ground-truth box.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from hbb2obb.scoring.evaluate import evaluate_frames
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> for sub, line in (("gt", "0 0 0 10 0 10 5 0 5"), ("pred", "0 1 0 11 0 11 5 1 5")):
    ...     (root / sub).mkdir()
    ...     _ = (root / sub / "f.txt").write_text(line + "\\n")
    >>> result = evaluate_frames(root / "gt", root / "pred")
    >>> data = analyze(result, ground_truth_properties(result.table))
    >>> group = data["cuts"][0]["groups"][0]
    >>> data["overall"]["boxes"], group["label"], round(group["avg_iou"], 4)
    (1, 'axis-aligned (<0.005 deg)', 0.8182)
    """
    table = result.table
    controlled = props.controlled
    metrics = summarize(result)
    overlap = row_overlap(table, result.settings.spatial_threshold)
    ratio_rows = controlled.copy()
    if boundary_classes:
        ratio_rows &= np.isin(props.class_id, np.asarray(list(boundary_classes), dtype=np.int64))
    data = {
        "overall": {
            "ground_truth_boxes": len(table.gt),
            "predictions": len(table.pred),
            "unmatched_ground_truth": int((~table.matched).sum()),
            "unmatched_predictions": int((~table.pred_matched).sum()),
            **group_statistics(table.iou[table.matched], table.angle_error[table.matched]),
            **overlap_statistics(overlap),
        },
        "settings": {k: metrics[k] for k in ("iou_threshold", "spatial_threshold", "class_agnostic",
                                             "exclude_edge_cases", "excluded_classes", "one_to_one")},
        "input_health": {k: metrics[k] for k in ("frames_scored", "missing_pred_files", "orphan_pred_files",
                                                 "skipped_pred_lines", "reordered_boxes", "degenerate_boxes",
                                                 "concave_boxes", "total_edge_cases")},
        "edge_checked": props.any_edge_known,
        "controlled_subset": _controlled_name(props),
        "controlled_boxes": int(controlled.sum()),
        "cuts": [summarize_cut(table, cut, overlap) for cut in standard_cuts(props, label_map)],
        "orientation_partition": summarize_cut(table, orientation_partition(props), overlap),
        "side_ratios": {
            "classes": [class_name(label_map or {}, c) for c in boundary_classes] or "all",
            "bands": side_ratio_table(table, props, ratio_rows),
        },
        "identity": identity,
        "comparison": comparison,
    }
    if worst:
        data["worst"] = {
            "by_iou": pair_records(table, props, worst_pairs(table, worst, "iou"), label_map),
            "by_angle": pair_records(table, props, worst_pairs(table, worst, "angle"), label_map),
            "unmatched_ground_truth": pair_records(table, props, unmatched_gt_rows(table), label_map),
        }
    return data
