"""The public Python API: what the commands do, as functions that return data.

The names are exported from :mod:`hbb2obb` itself (``from hbb2obb import evaluate``); the
modules here are where they live. The commands call the same functions (``hbb2obb-eval`` scores
through :func:`~hbb2obb.api.evaluation.evaluate_run`, ``hbb2obb-analyze`` analyzes through
:func:`~hbb2obb.api.workflows.analyze_run`, ``hbb2obb-optimize`` sweeps through
:mod:`~hbb2obb.api.sweeping`), so a number is computed one way only.
This package imports nothing at start-up: each command loads only the module it uses.
"""
