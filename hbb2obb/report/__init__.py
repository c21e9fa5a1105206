"""Reports for people and files for programs, from the metric dict.

* :mod:`~hbb2obb.report.eval_report`: the evaluation as terminal text (what ``hbb2obb-eval`` prints).
* :mod:`~hbb2obb.report.serialize`: the metric dict as JSON or YAML text and back.
* :mod:`~hbb2obb.report.textable`: plain-text tables with aligned columns.

Functions here return strings or write files; they never print.
"""
