"""Scoring: match ground truth to predictions frame by frame, and summarize to the metric dict.

Built as COCOeval is, in steps: :mod:`~hbb2obb.scoring.evaluate` evaluates frames and
accumulates one match table, :mod:`~hbb2obb.scoring.metric_dict` summarizes it. Each module
imports only those below it: metric_dict imports evaluate, evaluate imports run_warnings.

* :mod:`~hbb2obb.scoring.evaluate`: evaluate and accumulate (``evaluate_frames``), the result types.
* :mod:`~hbb2obb.scoring.metric_dict`: summarize, the match table to the metric dict; ``evaluate_obb``.
* :mod:`~hbb2obb.scoring.metrics`: statistics of matched pairs, overall and per class.
* :mod:`~hbb2obb.scoring.overlap_metrics`: GIoU, DIoU, CIoU, centre offset, spatial match.
* :mod:`~hbb2obb.scoring.run_warnings`: what was missing, broken or repaired in a run's inputs.
"""
