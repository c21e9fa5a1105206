#!/usr/bin/env python3
"""supervision's ``MeanAveragePrecision`` on oriented boxes, the files read with plain Python.

Ground truth without difficult flags (supervision has none; its oriented-box evaluator does not
support crowd regions either), predictions with their scores; COCO's rule otherwise, 100
detections per frame and class. Prints mAP50:95, mAP50 and mAP75, and AP50 and AP50:95 per
class, as JSON.

Usage::

    python supervision_obb.py GT_DIR PRED_DIR
"""

import json
import sys

import numpy as np
import supervision as sv
from dota_files import class_names, read_ground_truth, read_task1  # beside this script
from supervision.metrics import MeanAveragePrecision, MetricTarget


def detections(boxes: list, index: dict, scored: bool) -> sv.Detections:
    if not boxes:
        return sv.Detections.empty()
    corners = np.array([box[-1] for box in boxes], dtype=np.float64).reshape(-1, 4, 2)
    xyxy = np.concatenate([corners.min(axis=1), corners.max(axis=1)], axis=1)
    return sv.Detections(xyxy=xyxy, class_id=np.array([index[box[0]] for box in boxes]),
                         confidence=np.array([box[1] for box in boxes]) if scored else None,
                         data={"xyxyxyxy": corners})


def main() -> None:
    gt = read_ground_truth(sys.argv[1])
    dt = read_task1(sys.argv[2])
    index = {name: i for i, name in enumerate(class_names(gt, dt))}
    targets = [detections([(name, corners) for name, corners, _ in gt[f]], index, False) for f in sorted(gt)]
    predictions = [detections(dt.get(f, []), index, True) for f in sorted(gt)]
    metric = MeanAveragePrecision(metric_target=MetricTarget.ORIENTED_BOUNDING_BOXES)
    result = metric.update(predictions, targets).compute()
    names = {i: name for name, i in index.items()}
    per_class = {names[int(k)]: {"ap50": float(ap[0]), "ap50_95": float(ap.mean())}
                 for k, ap in zip(result.matched_classes, result.ap_per_class)}
    print(json.dumps({"map50_95": float(result.map50_95), "map50": float(result.map50), "map75": float(result.map75),
                      "classes": per_class}))


if __name__ == "__main__":
    main()
