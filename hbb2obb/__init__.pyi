"""Type information of the names :mod:`hbb2obb` imports on first use (see ``__init__.py``)."""

from hbb2obb.api.evaluation import Evaluation as Evaluation
from hbb2obb.api.evaluation import RunWarning as RunWarning
from hbb2obb.api.evaluation import evaluate as evaluate
from hbb2obb.api.labels import Frames as Frames
from hbb2obb.api.labels import read_labels as read_labels
from hbb2obb.api.labels import write_labels as write_labels
from hbb2obb.api.workflows import Analysis as Analysis
from hbb2obb.api.workflows import analyze as analyze
from hbb2obb.api.workflows import convert as convert
from hbb2obb.api.workflows import sweep as sweep
from hbb2obb.boxes import Boxes as Boxes
from hbb2obb.converters.image.params import ImageParams as ImageParams
from hbb2obb.detection.evaluate import DetectionParams as DetectionParams
from hbb2obb.errors import Hbb2ObbError as Hbb2ObbError
from hbb2obb.errors import InputError as InputError
from hbb2obb.errors import LabelFormatError as LabelFormatError
from hbb2obb.errors import UsageError as UsageError
from hbb2obb.geometry import calculate_obb_iou as calculate_obb_iou
from hbb2obb.geometry import orientation_error as orientation_error
from hbb2obb.scoring.evaluate import EvalSettings as EvalSettings
from hbb2obb.scoring.metric_dict import evaluate_obb as evaluate_obb

__version__: str
__distribution__: str
__all__: list[str]

def __dir__() -> list[str]: ...
