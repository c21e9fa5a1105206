"""Every output of a conversion checked before the first file is written (``hbb2obb-convert``).

A run that stops half-way leaves a folder that is neither the old set nor the new, so whatever
can be known to fail is found first: a format that cannot carry the boxes, a frame size a
format needs and nobody gave, a ``--dota_ext`` or ``--coco_name`` that names another folder, a
frame name that would make a hidden file or one outside the output folder (an odd COCO
``file_name``), two formats writing one file, and a file the set was read from.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

from hbb2obb.errors import InputError, UsageError
from hbb2obb.io.format_names import REGISTERED

_WRITTEN = [spec for spec in REGISTERED.values() if spec.writes]
OBB_FORMATS = ("yolo", "dota", "coco", "labelme", *(s.name for s in _WRITTEN if "obb" in s.kinds))
HBB_FORMATS = ("yolo", "voc", "coco", "labelme", *(s.name for s in _WRITTEN if "hbb" in s.kinds))
DOTA_EXT = ".dota"
# they record each frame's width and height
SIZED_FORMATS = ("coco", "labelme", "voc", *(s.name for s in REGISTERED.values() if s.sized))
FORBIDDEN = ("/", "\\", "\0")  # a backslash is a folder on Windows, where the file may be read


def check_carry(fmt: str, kind: str) -> None:
    """:class:`UsageError` when ``fmt`` cannot carry boxes of ``kind`` (``"obb"`` or ``"hbb"``)."""
    if fmt in REGISTERED and not REGISTERED[fmt].writes:
        raise UsageError(f"{fmt} is read only: the toolkit reads it, and writes {', '.join(sorted(set(OBB_FORMATS)))}")
    if kind == "obb" and fmt not in OBB_FORMATS:
        raise UsageError(f"{fmt} cannot carry oriented boxes; for these use one of {', '.join(OBB_FORMATS)}")
    if kind == "hbb" and fmt not in HBB_FORMATS:
        raise UsageError(f"{fmt} cannot carry horizontal boxes; for these use one of {', '.join(HBB_FORMATS)}")


def _plain_name(value: str) -> bool:
    """A name that stays in its folder and is not hidden: no separator, no leading dot, not empty."""
    return bool(value) and not value.startswith(".") and not any(c in value for c in FORBIDDEN)


def check_dota_ext(dota_ext: str) -> None:
    """``--dota_ext`` must be a suffix: a dot, then a name without a folder in it."""
    rest = dota_ext[1:] if dota_ext.startswith(".") else ""
    if not _plain_name(rest):
        raise UsageError(f"--dota_ext must be a file suffix such as .dota or .txt, without a folder: {dota_ext!r}")


def check_coco_name(coco_name: Optional[str]) -> None:
    """``--coco_name`` must be a file name in the output folder, not a path and not hidden."""
    if coco_name is not None and not _plain_name(coco_name):
        raise UsageError(f"--coco_name must be a file name without a folder (and not starting with '.'): "
                         f"{coco_name!r}; choose the folder with -o")


def check_stem(frame) -> None:
    """:class:`InputError` when a frame's name would write a hidden file or one outside the folder."""
    if not _plain_name(frame.stem):
        raise InputError(f"{frame.source}: frame name {frame.stem!r} cannot name an output file (it is empty, "
                         "starts with '.' or holds a folder); rename the frame")


def _sized(frame) -> bool:
    return frame.size is not None and bool(frame.size[0]) and bool(frame.size[1])


def check_sizes(frames, fmt: str, normalize: bool) -> None:
    """:class:`InputError` naming the first frame without the size that ``fmt`` needs."""
    if fmt not in SIZED_FORMATS and not (fmt == "yolo" and normalize):
        return
    missing = [frame for frame in frames if not _sized(frame)]
    if missing:
        what = "--normalize" if fmt == "yolo" else f"{fmt} output"
        raise InputError(f"{missing[0].stem}: frame size unknown, needed by {what} ({len(missing)} of "
                         f"{len(frames)} frame(s) lack one; give -i IMAGES or -iw/-ih)")


def output_paths(label_set, dest: Path, fmt: str, *, kind: str, dota_ext: str = DOTA_EXT,
                 coco_name: Optional[str] = None) -> list[Path]:
    """The files :func:`~hbb2obb.io.label_sets.write_set` would write."""
    if fmt == "coco":
        return [dest / (coco_name or f"coco_annotations_{kind}.json")]
    if fmt in REGISTERED and REGISTERED[fmt].one_file:
        return [dest / f"{fmt}_annotations_{kind}{REGISTERED[fmt].suffix}"]
    suffix = {"yolo": ".txt", "dota": dota_ext, "voc": ".xml", "labelme": ".json",
              **{name: spec.suffix for name, spec in REGISTERED.items()}}[fmt]
    return [dest / f"{frame.stem}{suffix}" for frame in label_set.frames]


def refuse_overwrite(label_set, fmt: str, paths) -> None:
    """:class:`InputError` when any of ``paths`` is a file the set was read from."""
    sources = {frame.source.resolve() for frame in label_set.frames}
    clash = next((p for p in paths if p.resolve() in sources), None)
    if clash is not None:
        raise InputError(f"{clash}: writing {fmt} here would overwrite the labels being converted; "
                         "give another folder with -o/--out_dir")


def plan_outputs(label_set, dest: Path, targets, *, kind: str, normalize: bool, dota_ext: str = DOTA_EXT,
                 coco_name: Optional[str] = None) -> dict:
    """``{format: [paths]}`` that writing ``targets`` would produce, every check passed.

    Parameters
    ----------
    label_set : LabelSet
        Canonical boxes, as they will be written.
    dest : Path
        The output folder.
    targets : sequence of str
        Output formats; repeats count once.
    kind, normalize, dota_ext, coco_name
        As :func:`~hbb2obb.io.label_sets.write_set` takes them.

    Raises
    ------
    UsageError, InputError
        The first problem found; nothing has been written.
    """
    targets = list(dict.fromkeys(targets))
    if "dota" in targets:
        check_dota_ext(dota_ext)
    if "coco" in targets:
        check_coco_name(coco_name)
    for fmt in targets:
        check_carry(fmt, kind)
    for frame in label_set.frames:
        check_stem(frame)
    for fmt in targets:
        check_sizes(label_set.frames, fmt, normalize)
    plan, owner = {}, {}
    for fmt in targets:
        paths = output_paths(label_set, dest, fmt, kind=kind, dota_ext=dota_ext, coco_name=coco_name)
        refuse_overwrite(label_set, fmt, paths)
        for path in paths:
            first = owner.setdefault(path, fmt)
            if first != fmt:
                raise UsageError(f"{path}: both {first} and {fmt} would write this file; "
                                 "choose another --dota_ext or --coco_name")
        plan[fmt] = paths
    return plan
