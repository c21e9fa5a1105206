"""Console commands: thin click wrappers that parse, call the core, render, and exit.

This package is also what the reference tool's console scripts reach when its install and ours
overlap in one environment (its scripts run ``from hbb2obb.cli import main_hbb2obb_eval``, and
our ``cli/`` package wins over its ``cli.py`` module). So importing it first checks that the
``hbb2obb`` package around it is ours, and the reference's entry-point names resolve to a one-line
explanation instead of an ImportError (see :mod:`hbb2obb_launch`).
"""

from hbb2obb_launch import ensure_ours as _ensure_ours, reference_command_called as _reference_command_called

_ensure_ours()


def __getattr__(name: str):
    if name.startswith("main_hbb2obb"):
        _reference_command_called(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
