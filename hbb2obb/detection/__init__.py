"""Detection metrics of oriented boxes: rotated AP by the COCO and DOTA rules, P/R/F1, confusion.

Built as COCOeval is, in steps:

* :mod:`~hbb2obb.geometry.matching`: ground truth to predictions from scored candidate pairs
  (the greedy matching of docs/metrics.md §2, which :mod:`hbb2obb.scoring` uses too).
* :mod:`~hbb2obb.detection.evaluate`: per frame and class, detections matched to ground truth.
* :mod:`~hbb2obb.detection.accumulate`: precision and recall arrays, AP by each rule.
* :mod:`~hbb2obb.detection.counts`: precision, recall, F1 and the confusion matrix at one confidence.
* :mod:`~hbb2obb.detection.summary`: the keys these add to the metric dict.
"""
