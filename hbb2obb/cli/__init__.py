"""Console commands: thin click wrappers that parse, call the core, render, and exit.

Importing this package (every console script does, before numpy is loaded) does two things:

* keeps numpy's BLAS library to one thread unless the user chose a thread count: the commands do
  no large matrix products, so the threads OpenBLAS starts at import (one per core, in every
  ``--jobs`` worker too) are start-up time and nothing else;
* checks that the ``hbb2obb`` package around it is ours. This package is also what the reference
  tool's console scripts reach when its install and ours overlap in one environment (they run
  ``from hbb2obb.cli import main_hbb2obb_eval``, and our ``cli/`` package wins over its ``cli.py``
  module), so the reference's entry points are defined below, each a one-line explanation
  instead of an ImportError (see :mod:`hbb2obb_launch`).
"""

import os

from hbb2obb_launch import ensure_ours as _ensure_ours
from hbb2obb_launch import reference_command_called as _reference_command_called

_THREAD_SETTINGS = ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
if not any(name in os.environ for name in _THREAD_SETTINGS):
    os.environ["OPENBLAS_NUM_THREADS"] = "1"

_ensure_ours()


# The console-script targets of the reference tool's seven commands (``hbb2obb.cli:main_hbb2obb_*``).
def main_hbb2obb():
    _reference_command_called("main_hbb2obb")


def main_hbb2obb_eval():
    _reference_command_called("main_hbb2obb_eval")


def main_hbb2obb_analyze():
    _reference_command_called("main_hbb2obb_analyze")


def main_hbb2obb_optimize():
    _reference_command_called("main_hbb2obb_optimize")


def main_hbb2obb_convert():
    _reference_command_called("main_hbb2obb_convert")


def main_hbb2obb_detect():
    _reference_command_called("main_hbb2obb_detect")


def main_hbb2obb_view():
    _reference_command_called("main_hbb2obb_view")
