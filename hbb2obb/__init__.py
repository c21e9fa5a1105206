"""hbb2obb toolkit: score oriented bounding boxes converted from horizontal ones.

The public API mirrors the command line: :func:`evaluate_obb` is what ``hbb2obb-eval``
prints, :class:`Boxes` is the one type every layer passes around, and the geometry helpers
:func:`calculate_obb_iou` and :func:`orientation_error` work on single ``(4, 2)`` corner arrays.
"""

__version__ = "0.1.0"
#: Tells this package from the reference tool's, which shares the import name (see :mod:`hbb2obb_launch`).
__distribution__ = "hbb2obb-toolkit"

# The public names are imported on first use (PEP 562), the one lazy import left in the
# package. Every ``import hbb2obb.<anything>`` runs this file first, and the console scripts
# import it to check the installation (hbb2obb_launch) before anything else: importing the
# names here would load numpy and the whole scoring stack into every command, before
# hbb2obb/cli/__init__.py has kept BLAS to one thread and outside the launcher's start-up
# settings, and would make this root import the highest layer (scoring) that imports it back.
_EXPORTS = {
    "Boxes": "hbb2obb.boxes",
    "Hbb2ObbError": "hbb2obb.errors",
    "InputError": "hbb2obb.errors",
    "LabelFormatError": "hbb2obb.errors",
    "UsageError": "hbb2obb.errors",
    "calculate_obb_iou": "hbb2obb.geometry",
    "orientation_error": "hbb2obb.geometry",
    "evaluate_obb": "hbb2obb.scoring.metric_dict",
}

__all__ = sorted(["__version__", *_EXPORTS])


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module 'hbb2obb' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(_EXPORTS[name]), name)
    globals()[name] = value  # found directly from now on
    return value


def __dir__():
    return sorted(set(globals()) | set(_EXPORTS))
