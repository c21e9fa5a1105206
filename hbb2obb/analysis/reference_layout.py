"""``analysis.yaml`` in the reference tool's layout, so scripts written for its file keep working.

The reference tool 1.12.0 writes its summary with top-level keys ``boxes``, ``has_identity``,
``has_edge``, ``has_difficult``, ``overall``, the cut lists ``orientation``,
``orientation_controlled``, ``orientation_partition``, ``orientation_partition_controlled``,
``size``, ``klass`` (and ``edge``, ``difficult`` when known), each a list of
``{"group": name, "boxes", "mean_iou", ...}``, then ``controlled_boxes``, ``side_ratios`` (a list
of ``{"band", "boxes", "short_ratio", "long_ratio", "area_ratio"}``) and ``boundary_classes``.
:func:`analysis_file` puts every one of those key paths, computed from the same match table,
beside this toolkit's own keys; the two of ours whose names the reference uses for another
shape move to ``orientation_partition_cut`` and ``side_ratio_table``.
"""

from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

from hbb2obb.analysis.cuts import (
    HIGH_IOU,
    LOW_IOU,
    GroundTruthProperties,
    orientation_cut,
    orientation_partition,
    short_side_cut,
    side_ratio_table,
)
from hbb2obb.io.labelmap import class_name

#: Our keys whose names the reference's file uses for a different structure, and where they go.
RENAMED = {"orientation_partition": "orientation_partition_cut", "side_ratios": "side_ratio_table"}


def reference_group(name: str, iou, angle, identity_iou=None, identity_angle=None) -> dict:
    """One group as the reference writes it: ``{"group", "boxes"}`` only when empty.

    Examples
    --------
    >>> g = reference_group("all", [0.8, 0.95], [1.0, 3.0])
    >>> g["boxes"], g["mean_iou"], g["at_high"], g["angle_p90"]
    (2, 0.875, 0.5, 2.8)
    """
    iou, angle = np.asarray(iou, dtype=np.float64), np.asarray(angle, dtype=np.float64)
    if iou.size == 0:
        return {"group": name, "boxes": 0}
    std = float(np.std(iou))
    group = {
        "group": name,
        "boxes": int(iou.size),
        "mean_iou": float(np.mean(iou)),
        "std_iou": std,
        "sem_iou": std / float(np.sqrt(iou.size)),
        "median_iou": float(np.median(iou)),
        "below_075": float(np.count_nonzero(iou < LOW_IOU) / iou.size),
        "at_high": float(np.count_nonzero(iou >= HIGH_IOU) / iou.size),
        "angle_p90": float(np.percentile(angle, 90)),
        "angle_mean": float(np.mean(angle)),
    }
    if identity_iou is not None and len(identity_iou):
        group["identity_iou"] = float(np.mean(identity_iou))
        group["identity_angle_p90"] = float(np.percentile(identity_angle, 90))
    return group


def reference_keys(table, props: GroundTruthProperties, identity=None, label_map: Optional[dict] = None,
                   boundary_classes: Sequence[int] = ()) -> dict:
    """The reference tool's ``analysis.yaml`` keys, from our match table.

    Parameters
    ----------
    table : MatchTable
    props : GroundTruthProperties
        Of ``table``.
    identity : IdentityMatch, optional
        The prompts matched to the ground truth (:func:`match_identity_baseline`).
    label_map : dict, optional
    boundary_classes : sequence of int
        Restrict the side ratios (the reference's ``-bc``).
    """
    matched = table.matched
    has_identity = identity is not None and bool((identity.matched & matched).any())

    def group(name: str, mask: np.ndarray) -> dict:
        rows = mask & matched
        ids = rows & identity.matched if has_identity else None
        return reference_group(name, table.iou[rows], table.angle_error[rows],
                               identity.iou[ids] if has_identity else None,
                               identity.angle_error[ids] if has_identity else None)

    def groups(cut) -> list:
        return [group(label, mask) for label, mask in zip(cut.labels, cut.masks)]

    everything = np.ones(len(matched), dtype=bool)
    edge_known = props.any_edge_known
    controlled = (~props.edge if edge_known else everything) & ~props.difficult  # as the reference selects it
    has_difficult = bool(props.difficult.any())
    overall = group("all", everything)
    overall.pop("group")
    partition = orientation_partition(props)
    data = {
        "boxes": int(matched.sum()),
        "has_identity": has_identity,
        "has_edge": edge_known,
        "has_difficult": has_difficult,
        "overall": overall,
        "orientation": groups(orientation_cut(props)),
        "orientation_controlled": groups(orientation_cut(props, controlled)),
        "orientation_partition": [group(_partition_name(label), mask)
                                  for label, mask in zip(partition.labels, partition.masks)],
        "orientation_partition_controlled": [group(_partition_name(label), mask & controlled)
                                             for label, mask in zip(partition.labels, partition.masks)],
        "controlled_boxes": int((controlled & matched).sum()),
        "size": groups(short_side_cut(props)),
        # the classes of matched pairs, by id (the reference's order), named through the map
        "klass": [group(class_name(label_map or {}, c), props.class_id == c)
                  for c in np.unique(props.class_id[matched]).tolist()],
        "side_ratios": _side_ratios(table, props, controlled, boundary_classes),
        "boundary_classes": list(boundary_classes) if boundary_classes else None,
    }
    if edge_known:
        data["edge"] = [group("touches an edge", props.edge_known & props.edge),
                        group("interior", props.edge_known & ~props.edge)]
    if has_difficult:
        data["difficult"] = [group("difficult 1", props.difficult), group("difficult 0", ~props.difficult)]
    return data


def _partition_name(label: str) -> str:
    """Our partition labels carry the unit; the reference's do not (``0 to 5``)."""
    return label.replace(" deg", "").replace("0.005 to", "0 to")


def _side_ratios(table, props: GroundTruthProperties, controlled: np.ndarray, boundary_classes) -> list:
    subset = controlled.copy()
    if boundary_classes:
        subset &= np.isin(props.class_id, np.asarray(list(boundary_classes), dtype=np.int64))
    out = []
    for band in side_ratio_table(table, props, subset):
        if not band["boxes"]:
            out.append({"band": band["label"], "boxes": 0})
            continue
        out.append({"band": band["label"], "boxes": band["boxes"], "short_ratio": band["short_side"],
                    "long_ratio": band["long_side"], "area_ratio": band["area"]})
    return out


def analysis_file(data: dict, reference: dict) -> dict:
    """What ``analysis.yaml`` holds: the reference's key paths first, then ours beside them.

    ``overall`` is one mapping with both sets of keys (they do not collide; ``boxes`` is the
    same number in both). Our ``orientation_partition`` and ``side_ratios`` are written under
    :data:`RENAMED` names.
    """
    out = dict(reference)
    out["overall"] = {**reference["overall"], **{k: v for k, v in data["overall"].items()
                                                 if k not in reference["overall"]}}
    for key, value in data.items():
        key = RENAMED.get(key, key)
        if key not in out:
            out[key] = value
    return out
