"""hbb2obb toolkit: score oriented bounding boxes converted from horizontal ones.

The public API mirrors the command line: :func:`evaluate_obb` is what ``hbb2obb-eval``
prints, :class:`Boxes` is the one type every layer passes around, and the geometry helpers
:func:`calculate_obb_iou` and :func:`orientation_error` work on single ``(4, 2)`` corner arrays.
"""

__version__ = "0.1.0"
#: Tells this package from the reference tool's, which shares the import name (see :mod:`hbb2obb_launch`).
__distribution__ = "hbb2obb-toolkit"

from hbb2obb.boxes import Boxes  # noqa: E402
from hbb2obb.errors import Hbb2ObbError, InputError, LabelFormatError, UsageError  # noqa: E402
from hbb2obb.geometry import calculate_obb_iou, orientation_error  # noqa: E402
from hbb2obb.scoring.evaluate import evaluate_obb  # noqa: E402

__all__ = [
    "Boxes",
    "Hbb2ObbError",
    "InputError",
    "LabelFormatError",
    "UsageError",
    "__version__",
    "calculate_obb_iou",
    "evaluate_obb",
    "orientation_error",
]
