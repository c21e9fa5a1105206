"""Label input/output: one module per format, one shared line reader.

Readers return a :class:`~hbb2obb.io.text.LabelFile`: the boxes, the lines that were skipped
(with file and line), and whether the coordinates look normalized. With ``strict=True`` (ground
truth) the first broken line raises :class:`~hbb2obb.errors.LabelFormatError` instead.

The names below are imported on first use (PEP 562): ``from hbb2obb.io import read_dota`` works
as before, but a command that needs only :class:`ImageSizes` and the label map (a plain
``hbb2obb-eval``) no longer loads the DOTA and YOLO-HBB readers on its way, about 6 ms of
start-up (issue 18).

Examples
--------
>>> import hbb2obb.io
>>> hbb2obb.io.read_dota.__module__
'hbb2obb.io.dota'
"""

#: Every public name and the module that defines it.
_EXPORTS = {
    "ImageSizes": "hbb2obb.io.images",
    "LabelFile": "hbb2obb.io.text",
    "LabelProblem": "hbb2obb.io.text",
    "find_image": "hbb2obb.io.images",
    "image_size": "hbb2obb.io.images",
    "load_label_map": "hbb2obb.io.labelmap",
    "read_dota": "hbb2obb.io.dota",
    "read_obb_labels": "hbb2obb.io.yolo_obb",
    "read_yolo_hbb": "hbb2obb.io.yolo_hbb",
    "read_yolo_obb": "hbb2obb.io.yolo_obb",
    "scale_to_pixels": "hbb2obb.io.text",
    "write_yolo_obb": "hbb2obb.io.yolo_obb",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    module_name = _EXPORTS.get(name)
    if module_name is None:
        # Not a name of ours: a submodule (``from hbb2obb.io import numeric_text``) is then
        # imported by the import system itself, which asks here first.
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module_name), name)
    globals()[name] = value  # found directly from now on
    return value


def __dir__():
    return sorted(set(globals()) | set(_EXPORTS))
