"""hbb2obb toolkit: score oriented bounding boxes converted from horizontal ones.

The public API mirrors the command line (:mod:`hbb2obb.api`): :func:`evaluate` scores as
``hbb2obb-eval`` does and returns an :class:`Evaluation`, :func:`read_labels` and
:func:`write_labels` read and write every label format, :func:`analyze`, :func:`convert` and
:func:`sweep` do what ``hbb2obb-analyze``, ``hbb2obb`` and ``hbb2obb-optimize`` do, with the
settings objects the commands build (:class:`EvalSettings`, :class:`DetectionParams`,
:class:`ImageParams`). :class:`Boxes` is the one type every layer passes around;
:func:`evaluate_obb` keeps the reference tool's signature, and the geometry helpers
:func:`calculate_obb_iou` and :func:`orientation_error` work on single ``(4, 2)`` corner arrays.
Type checkers read the names from ``__init__.pyi``.
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
    "Analysis": "hbb2obb.api.workflows",
    "Boxes": "hbb2obb.boxes",
    "DetectionParams": "hbb2obb.detection.evaluate",
    "EvalSettings": "hbb2obb.scoring.evaluate",
    "Evaluation": "hbb2obb.api.evaluation",
    "Frames": "hbb2obb.api.labels",
    "ImageParams": "hbb2obb.converters.image.params",
    "RunWarning": "hbb2obb.api.evaluation",
    "analyze": "hbb2obb.api.workflows",
    "convert": "hbb2obb.api.workflows",
    "evaluate": "hbb2obb.api.evaluation",
    "read_labels": "hbb2obb.api.labels",
    "sweep": "hbb2obb.api.workflows",
    "write_labels": "hbb2obb.api.labels",
    "Hbb2ObbError": "hbb2obb.errors",
    "InputError": "hbb2obb.errors",
    "LabelFormatError": "hbb2obb.errors",
    "UsageError": "hbb2obb.errors",
    "calculate_obb_iou": "hbb2obb.geometry",
    "orientation_error": "hbb2obb.geometry",
    "evaluate_obb": "hbb2obb.scoring.metric_dict",
}

__all__ = sorted(["__version__", *_EXPORTS])


def __getattr__(name: str) -> object:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'hbb2obb' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(_EXPORTS[name]), name)
    globals()[name] = value  # found directly from now on
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
