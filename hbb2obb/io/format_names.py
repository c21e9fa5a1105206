"""The label formats the commands read, by name: a module of its own so ``--gt_format``'s choices cost no import.

:mod:`hbb2obb.io.label_sets` reads and writes them; the command line only needs their names to
declare its options, and a plain ``hbb2obb-eval`` run reads no format but the ``.txt`` folders
(importing :mod:`~hbb2obb.io.label_sets` and its COCO, LabelMe and frame-label modules would be
a noticeable share of a small run's start-up).

The five formats of the reference tool are read and written by :mod:`~hbb2obb.io.label_sets`
itself. Every other format is a module of :mod:`hbb2obb.io` described here by a
:class:`FormatSpec`, and reached through the same functions (reading, writing, detection,
``--verify``). Its module provides, by name:

``sniff(head) -> bool``
    Whether a file with the format's suffix is one of its files, from its first bytes (``head``,
    :func:`~hbb2obb.io.text_file.file_head`, read once for every format that shares the suffix:
    several share ``.xml`` and ``.json``).
``read(path, *, strict, label_map, discovered) -> FrameLabels``
    One file per frame; ``discovered`` collects class names met without a label map, as
    :func:`~hbb2obb.io.labelme.read_labelme` does. For a one-file format:
    ``read(path, *, strict, label_map) -> (frames, names, problems)``. A format that needs more
    to read its files (the split of a dataset, an angle unit) takes the reading options named in
    :attr:`FormatSpec.options` by keyword too (see :data:`READ_OPTIONS`).
``write(path, frame, names, *, obb, image_name)``
    Optional (a format without it is read only). For a one-file format:
    ``write(path, frames, names, *, obb, image_names)``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FormatSpec:
    """A label format read and written through its own module (see the module docstring).

    Attributes
    ----------
    name : str
        The name users give (``--gt_format``, ``--to``).
    suffix : str
        Its files' suffix, lower case.
    module : str
        The module with ``sniff``, ``read`` and (optionally) ``write``; imported when used.
    one_file : bool
        One file holds the whole set (as COCO), rather than one file per frame.
    kinds : tuple of str
        What its writer can carry: ``"obb"`` (rotated boxes), ``"hbb"`` (horizontal ones).
    sized : bool
        Its files record each frame's width and height (a writer needs the frame size).
    writes : bool
        Whether its module has a writer.
    options : tuple of str
        The reading options (:data:`READ_OPTIONS`) its ``read`` takes by keyword.
    """

    name: str
    suffix: str
    module: str
    one_file: bool = False
    kinds: tuple = ("obb", "hbb")
    sized: bool = False
    writes: bool = True
    options: tuple = ()


#: The reading options a command passes to the readers that take them, with their defaults:
#: ``split``, the split of an Ultralytics dataset YAML; ``coco_angle``, the unit and direction of
#: the angle of a COCO ``bbox`` of five numbers (``None``: such a box is refused, the unit unsaid).
READ_OPTIONS = {"split": "val", "coco_angle": None}

#: ``coco_angle``'s values: the unit, and the way a positive angle turns the box as shown on
#: screen (image y down). ``deg_ccw`` is Detectron2's ``XYWHA_ABS``; ``rad_cw`` is the ``xywhr``
#: of Ultralytics, mmrotate and OpenCV.
COCO_ANGLES = ("deg_ccw", "deg_cw", "rad_ccw", "rad_cw")

#: The formats beyond the reference tool's five, by name.
REGISTERED = {spec.name: spec for spec in (
    FormatSpec("rolabelimg", ".xml", "hbb2obb.io.rolabelimg", sized=True),
    FormatSpec("cvat", ".xml", "hbb2obb.io.cvat", one_file=True, sized=True),
    FormatSpec("hrsc", ".xml", "hbb2obb.io.hrsc", sized=True, writes=False),
    FormatSpec("dior", ".xml", "hbb2obb.io.dior", sized=True, writes=False),
    FormatSpec("fair1m", ".xml", "hbb2obb.io.fair1m", sized=True, writes=False),
    FormatSpec("labelstudio", ".json", "hbb2obb.io.label_studio", one_file=True, sized=True),
    FormatSpec("ultralytics", ".yaml", "hbb2obb.io.ultralytics_data", one_file=True, writes=False, options=("split",)),
    FormatSpec("ultralytics_json", ".json", "hbb2obb.io.ultralytics_json", one_file=True, writes=False),
)}

#: Every format name, in the order a folder holding several is read (the first found wins).
ALL_FORMATS = ("yolo", "dota", "voc", "coco", "labelme", *REGISTERED)
