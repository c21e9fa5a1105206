"""Scoring: pair label files into frames, match ground truth to predictions, build the metric dict.

* :mod:`~hbb2obb.scoring.frame_plan`: pairing files by name, before any is read.
* :mod:`~hbb2obb.scoring.frames`: loading the frames of a plan, boxes repaired.
* :mod:`~hbb2obb.scoring.frame_batches`: label files read a group at a time (a helper process ahead), cut into chunks.
* :mod:`~hbb2obb.scoring.matching`: ground truth to predictions from scored candidate pairs.
* :mod:`~hbb2obb.scoring.evaluate`: evaluate and accumulate (``evaluate_frames``, ``evaluate_obb``).
* :mod:`~hbb2obb.scoring.metric_dict`: summarize, the match table to the metric dict.
* :mod:`~hbb2obb.scoring.metrics`: statistics of matched pairs, overall and per class.
* :mod:`~hbb2obb.scoring.overlap_metrics`: GIoU, DIoU, CIoU, centre offset, spatial match.
* :mod:`~hbb2obb.scoring.gates`: ``--require`` bounds checked against the metric dict.
* :mod:`~hbb2obb.scoring.golden`: a run's metric dict compared with a stored one.

Nothing is imported here, so a command pays only for the modules it uses.
"""
