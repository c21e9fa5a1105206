"""Label input/output: one module per format, one shared line reader.

Readers return a :class:`~hbb2obb.io.text.LabelFile`: the boxes, the lines that were skipped
(with file and line), and whether the coordinates look normalized. With ``strict=True`` (ground
truth) the first broken line raises :class:`~hbb2obb.errors.LabelFormatError` instead.

Examples
--------
>>> import hbb2obb.io
>>> hbb2obb.io.read_dota.__module__
'hbb2obb.io.dota'
"""

from hbb2obb.io.dota import read_dota
from hbb2obb.io.images import ImageSizes, find_image, image_size
from hbb2obb.io.labelmap import load_label_map
from hbb2obb.io.text import LabelFile, LabelProblem, scale_to_pixels
from hbb2obb.io.yolo_hbb import read_yolo_hbb
from hbb2obb.io.yolo_obb import read_obb_labels, read_yolo_obb, write_yolo_obb

__all__ = [
    "ImageSizes",
    "LabelFile",
    "LabelProblem",
    "find_image",
    "image_size",
    "load_label_map",
    "read_dota",
    "read_obb_labels",
    "read_yolo_hbb",
    "read_yolo_obb",
    "scale_to_pixels",
    "write_yolo_obb",
]
