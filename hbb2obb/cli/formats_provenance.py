"""``hbb2obb-convert --save_provenance``: the record of a conversion, beside its output folder.

The record is ``PROVENANCE_convert_<output folder name>.txt`` in the output folder's parent: one
name per output folder, so two conversions into sibling folders (``labels_dota/``,
``labels_voc/``) keep a record each, and none of them is named like the records ``hbb2obb``
writes (``PROVENANCE_obb.txt``). It never goes among label files: a parent folder that holds
YOLO or DOTA ``.txt`` labels (``-o labels/dota``) is refused, since a ``labels/*.txt`` glob would
read the record as a frame.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

from hbb2obb.errors import UsageError
from hbb2obb.io.format_detection import sniff_format
from hbb2obb.io.frame_labels import DEFAULT_PRECISION
from hbb2obb.io.label_sets import DEFAULT_NORMALIZED_PRECISION
from hbb2obb.io.provenance import command_line, section, sha256_file, sha256_of_files, write_record

RECORD_PREFIX = "PROVENANCE_convert_"
TITLE = "hbb2obb-convert provenance"


def record_path(out_dir: Path) -> Path:
    """Where the record of a conversion into ``out_dir`` goes, every check passed.

    Raises
    ------
    UsageError
        ``out_dir`` has no parent folder (``/``), or its parent holds ``.txt`` label files.
    """
    folder = Path(out_dir).resolve()
    if folder.parent == folder:
        raise UsageError(f"--save_provenance: {out_dir} has no parent folder to hold the record beside it")
    labels = sorted(p for p in folder.parent.glob("*.txt") if p.is_file() and sniff_format(p) in ("yolo", "dota"))
    if labels:
        raise UsageError(f"--save_provenance: the record goes beside the output folder, in {folder.parent}, which "
                         f"holds label files (first: {labels[0].name}) that a *.txt glob would read it with; "
                         "choose an output folder (-o) whose parent holds no labels")
    return folder.parent / f"{RECORD_PREFIX}{folder.name}.txt"


def _described(name: str, path: Optional[Path]) -> str:
    """An input as the record names it: a file with its SHA-256, a side-car folder with the digest of
    its ``.txt`` files; the image folder only by name (hashing every frame would cost more than the
    conversion, and only the sizes were read from it)."""
    if path is None:
        return "not given"
    path = Path(path)
    if path.is_file():
        return f"{path}  sha256 {sha256_file(path)}"
    if path.is_dir() and name != "images":
        return f"{path}  sha256 {sha256_of_files(sorted(path.glob('*.txt')))}"
    return str(path)


def shown_names(names: dict, limit: int = 20) -> str:
    """The class names as the record shows them: ``0 car, 1 bus``, cut after ``limit``.

    Examples
    --------
    >>> shown_names({1: "bus", 0: "car", 2: "van"}, limit=2)
    '0 car, 1 bus, and 1 more'
    """
    shown = ", ".join(f"{class_id} {name}" for class_id, name in sorted(names.items())[:limit])
    return shown + (f", and {len(names) - limit} more" if len(names) > limit else "")


def convention(normalize: bool, precision: Optional[int]) -> str:
    """The coordinates of YOLO output, as the record states them (the decimals change the bytes)."""
    if precision is None:
        precision = DEFAULT_NORMALIZED_PRECISION if normalize else DEFAULT_PRECISION
    return f"{'normalized to [0, 1]' if normalize else 'absolute pixels'}, {precision} decimals (YOLO)"


def write_conversion_record(path: Path, *, params: dict, label_set, box_kind: str, names: dict,
                            names_file: Optional[Path], written: dict) -> Path:
    """Write the record of one ``hbb2obb-convert`` run.

    Parameters
    ----------
    path : Path
        From :func:`record_path`.
    params : dict
        The command's parameters as click parsed them (``source``, ``targets``, ...).
    label_set : LabelSet
        The set as read (its files are digested, names included).
    box_kind : str
        ``"obb"`` or ``"hbb"``, as written.
    names : dict
        The class names written.
    names_file : Path or None
        The label map they were read from (``-mp``, or the one found beside the source).
    written : dict
        Format to the list of files written.
    """
    confidence = params["difficult_from"] == "confidence"
    settings = {
        "to": " ".join(written), "classes": shown_names(names), "kind": box_kind,
        "coordinates": convention(params["normalize"], params["precision"]), "dota_ext": params["dota_ext"],
        "difficult_from": params["difficult_from"] or "not given",
        "difficult_below": params["difficult_below"] if confidence else "not used",
        "voc_database": params["voc_database"], "coco_name": params["coco_name"] or "default",
    }
    inputs = {"label map": names_file, "images": params["images"], "confidence_dir": params["confidence_dir"],
              "coco_from": params["coco_from"], "coco_info": params["coco_info"]}
    sources = sorted({frame.source for frame in label_set.frames})
    read = [
        f"source         : {params['source']} ({label_set.format}, {len(label_set.frames)} frames, "
        f"{label_set.box_count} {box_kind.upper()} boxes)",
        f"source files   : {sha256_of_files(sources)}",
    ]
    read += [f"{name:<15}: {_described(name, value)}" for name, value in inputs.items()]
    options = [f"{name:<15}: {value}" for name, value in settings.items()]
    outputs = [f"{fmt:<15}: {sha256_of_files(paths)}" for fmt, paths in written.items()]
    outputs += [f"{'folder':<15}: {next(iter(written.values()))[0].parent}"] if written else []
    sections = [section("Settings", options), section("Inputs", read), section("Outputs", outputs)]
    return write_record(path, TITLE, command_line(), sections)
