"""Gates for CI: bounds on the metric dict (``--require``) and golden files (``--expect``).

* :mod:`~hbb2obb.gates.require`: ``--require avg_iou>=0.85``, ``--require 'Car:avg_iou>=0.85'``.
* :mod:`~hbb2obb.gates.golden`: a run's metric dict compared with a stored one.
"""
