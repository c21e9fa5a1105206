"""Which label format a file or folder holds: by suffix, then by a look inside.

A folder's format is the first of :data:`~hbb2obb.io.format_names.ALL_FORMATS` that it holds
(the reference converter's rule), so canonical YOLO wins over the rounded copies shipped
beside it. Formats that share a suffix are told apart by content: ``.json`` is COCO with its
three keys, else LabelMe with ``shapes``; ``.txt`` is DOTA or YOLO by its first box line; the
registered formats (:data:`~hbb2obb.io.format_names.REGISTERED`) look at a file's head first.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Optional

from hbb2obb.errors import InputError
from hbb2obb.io.coco import file_key, is_coco, sniff_json
from hbb2obb.io.format_names import ALL_FORMATS, REGISTERED
from hbb2obb.io.labelme import is_labelme
from hbb2obb.io.text_file import file_head
from hbb2obb.io.write_plan import DOTA_EXT
from hbb2obb.io.written import MANIFEST_NAME

EXTENSIONS = {"yolo": ".txt", "dota": ".txt", "voc": ".xml", "coco": ".json", "labelme": ".json",
              **{name: spec.suffix for name, spec in REGISTERED.items()}}


def _json_kind(path: Path) -> Optional[str]:
    """``"coco"``, ``"labelme"`` or ``None`` for a ``.json`` file, parsed once per version of it.

    Finding a folder's format asks each file several times (is it COCO? LabelMe? what else is
    beside it?), and a LabelMe folder's every file would be parsed as many times.
    """
    key = file_key(path)
    return None if key is None else _json_kind_of(key)


@functools.lru_cache(maxsize=1 << 17)
def _json_kind_of(key: tuple) -> Optional[str]:
    try:
        data = sniff_json(Path(key[0]))
    except InputError:
        return None
    return "coco" if is_coco(data) else "labelme" if is_labelme(data) else None


def format_module(fmt: str):
    """The module that reads and writes a registered format (:data:`~hbb2obb.io.format_names.REGISTERED`)."""
    import importlib

    return importlib.import_module(REGISTERED[fmt].module)


def _registered_kind(path: Path, suffix: str) -> Optional[str]:
    """The registered format a file is one of, by its suffix and its content; ``None`` if none."""
    candidates = [name for name, spec in REGISTERED.items() if spec.suffix == suffix]
    if not candidates:
        return None
    head = file_head(path)  # read once: five formats share .xml, and a VOC folder is sniffed file by file
    return next((name for name in candidates if format_module(name).sniff(head)), None)


def _spells_number(token: str) -> bool:
    """Whether a field is written as a number at all, finite or not (``nan``, ``1e400`` are)."""
    try:
        float(token)
    except ValueError:
        return False
    return True


def sniff_format(path: Path) -> Optional[str]:
    """The format of one file, or ``None`` when it is not a label file (a README, a names.txt).

    ``.xml`` is VOC and ``.dota`` DOTA; ``.json`` is COCO with its three keys, else LabelMe with
    ``shapes``; ``.txt`` is DOTA when the ninth field of its first box line is a word, YOLO when
    that line has two or more fields and all of them spell numbers, finite or not (an empty file
    is YOLO, one of DOTA headers alone DOTA). Only the first line decides, so a label file broken
    further down, or on that line by a wrong count or a ``nan``, is read and its broken line
    reported, rather than passed over as not being labels.
    """
    suffix = path.suffix.lower()
    registered = _registered_kind(path, suffix)  # the more specific look first: several formats share a suffix
    if registered is not None:
        return registered
    if suffix == ".xml":
        return "voc"
    if suffix == DOTA_EXT:
        return "dota"
    if suffix == ".json":
        return _json_kind(path)
    if suffix != ".txt":
        return None
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except (OSError, UnicodeDecodeError):
        return None
    headers = False
    for line in text.splitlines():
        fields = line.split()
        if not fields:
            continue
        if ":" in fields[0]:  # a DOTA header line
            headers = True
            continue
        if len(fields) >= 9 and not _spells_number(fields[8]):
            return "dota"
        # a number the reader refuses (nan, 1e400) or a wrong count is a broken YOLO line, which the
        # reader names; one lone number is no box line (a side-car of confidences)
        if len(fields) < 2 or not all(_spells_number(f) for f in fields):
            return None
        return "yolo"
    return "dota" if headers else "yolo"  # DOTA headers and no box: a DOTA frame without objects


def _listed(folder: Path, suffix: str) -> list[Path]:
    """The files of a folder ending in ``suffix``, sorted; the toolkit's record of its outputs is no label file."""
    return sorted(p for p in folder.glob(f"*{suffix}") if p.name != MANIFEST_NAME and p.is_file())


def label_files(folder: Path, fmt: str, dota_ext: str = DOTA_EXT) -> list[Path]:
    """The files of one format in a folder, sorted by name (DOTA: ``dota_ext`` ones first, else DOTA ``.txt``)."""
    if fmt == "dota":
        dota = _listed(folder, dota_ext)
        if dota:
            return dota
    return [p for p in _listed(folder, EXTENSIONS[fmt]) if sniff_format(p) == fmt]


def formats_present(path: Path) -> list[str]:
    """Every format a folder holds files of, in :data:`ALL_FORMATS` order; a file's own format."""
    path = Path(path)
    if path.is_dir():
        return [fmt for fmt in ALL_FORMATS if label_files(path, fmt)]
    fmt = sniff_format(path) if path.is_file() else None
    return [fmt] if fmt else []


def formats_beside_text(folder: Path) -> list[str]:
    """The formats of the label files of a folder that are not ``NAME.txt`` (VOC, COCO, LabelMe, registered ones).

    For a folder read as ``.txt`` labels: any answer means the folder mixes formats. (``NAME.dota``
    beside ``NAME.txt`` is no mix: it carries the difficult flags of the same boxes.) An ``.xml``
    file counts as VOC only when no registered XML format claims the folder's files, and only when
    it opens an ``<annotation>`` (a metadata file is none).
    """
    others = [name for name, spec in REGISTERED.items() if spec.suffix != ".txt"]
    present = [fmt for fmt in ("coco", "labelme", *others) if label_files(folder, fmt)]
    voc = not any(EXTENSIONS[fmt] == ".xml" for fmt in present) and any(
        _looks_like_voc(p) for p in _listed(folder, EXTENSIONS["voc"]))
    return ["voc"] * voc + present


def _looks_like_voc(path: Path) -> bool:
    """Whether an ``.xml`` file opens a VOC ``<annotation>`` in its first 4 KiB."""
    return b"<annotation" in file_head(path, 4096)


def detect_format(path: Path) -> str:
    """The format of a file or folder; :class:`InputError` when it holds no label files."""
    path = Path(path)
    if not path.exists():
        raise InputError(f"{path}: no such file or folder")
    present = formats_present(path)
    if present:
        return present[0]
    raise InputError(f"{path}: no label files found" if path.is_dir() else f"{path}: cannot tell its label format")
