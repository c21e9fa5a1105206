"""Whole label sets in any of the five formats: which format a folder holds, reading, writing.

=========  ===  ===  ==============================================================
format     HBB  OBB  files
=========  ===  ===  ==============================================================
yolo       yes  yes  ``NAME.txt``: ``class xc yc w h`` or ``class x1 y1 ... x4 y4``
dota            yes  ``NAME.dota`` (or DOTA ``.txt``): ``x1 y1 ... x4 y4 name difficult``
voc        yes       ``NAME.xml``: Pascal VOC, integer ``<bndbox>``
coco       yes  yes  one ``.json`` for the set: 8-number ``segmentation`` and ``bbox``
labelme    yes  yes  ``NAME.json``: LabelMe shapes of 2 or 4 points
=========  ===  ===  ==============================================================

Detection and file selection follow the reference converter (``hbb2obb.formats`` 1.12.0): a
folder's format is the first of the order above that it holds, so canonical YOLO wins over the
rounded copies shipped beside it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

import numpy as np

from hbb2obb.errors import InputError, UsageError
from hbb2obb.io.coco import forget_sniffed, read_coco, write_coco
from hbb2obb.io.dota import read_dota, write_dota
from hbb2obb.io.format_detection import EXTENSIONS, _listed, detect_format, format_module, label_files, sniff_format
from hbb2obb.io.format_names import (  # the names live apart: the command line imports them
    ALL_FORMATS,
    READ_OPTIONS,
    REGISTERED,
)
from hbb2obb.io.frame_labels import DEFAULT_PRECISION, FrameLabels, canonical
from hbb2obb.io.images import ImageSizes, find_image
from hbb2obb.io.labelmap import load_label_map
from hbb2obb.io.labelme import read_labelme, write_labelme
from hbb2obb.io.text import split_lines
from hbb2obb.io.write_plan import (  # noqa: F401  (callers import the format lists and checks from here)
    DOTA_EXT,
    HBB_FORMATS,
    OBB_FORMATS,
    output_paths,
    plan_outputs,
    refuse_overwrite,
)
from hbb2obb.io.yolo_hbb import read_yolo_hbb_pixels, write_yolo
from hbb2obb.io.yolo_obb import read_yolo_obb

NORMALIZED_LIMIT = 2.0  # the reference converter's rule: no coordinate beyond 2 means normalized
DEFAULT_NORMALIZED_PRECISION = 10


@dataclass(frozen=True)
class LabelSet:
    """A whole set of frames read from one format.

    Attributes
    ----------
    format : str
    frames : tuple of FrameLabels
        Sorted by file name (COCO: in the order of its ``images``).
    names : dict of int to str
    problems : tuple of LabelProblem
        Skipped lines or annotations of the whole set (``strict=False`` only).
    ignored : tuple of Path
        Files with the format's suffix that are no label file of any format (a ``README.txt``).
    """

    format: str
    frames: tuple
    names: dict
    problems: tuple = ()
    ignored: tuple = ()

    @property
    def box_count(self) -> int:
        return sum(len(frame.boxes) for frame in self.frames)


def resolve_names(map_path: Optional[Path], source: Path) -> dict:
    """The label map: ``--map_path``, else ``names.txt`` or ``classes.yaml`` beside the source or one up.

    Returns ``{}`` when none is found (the format's own names are used then).
    """
    return find_names(map_path, source)[0]


def find_names(map_path: Optional[Path], source: Path) -> tuple[dict, Optional[Path]]:
    """:func:`resolve_names`'s label map and the file it was read from (``None`` when none was found)."""
    if map_path is not None:
        return load_label_map(map_path), Path(map_path)
    root = source if source.is_dir() else source.parent
    for folder in (root, root.parent):
        names_txt = folder / "names.txt"
        if names_txt.is_file():
            return dict(enumerate(names_txt.read_text(encoding="utf-8").split())), names_txt
        classes = folder / "classes.yaml"
        if classes.is_file():
            found = load_label_map(classes)
            if found:
                return found, classes
    return {}, None


def _integer_size(size):
    if size is None:
        return None
    return tuple(int(v) if float(v).is_integer() else v for v in size)


def _read_yolo(path: Path, size, strict: bool) -> FrameLabels:
    """A YOLO file, HBB or OBB by its first line's field count, in pixels."""
    first = next((fields for _, fields in split_lines(path)), [])
    if len(first) in (5, 6):
        label_file = read_yolo_hbb_pixels(path, size, strict=strict, normalized_limit=NORMALIZED_LIMIT)
        boxes = label_file.boxes
    else:
        label_file = read_yolo_obb(path, strict=strict)
        boxes = label_file.boxes
        if len(boxes) and np.abs(boxes.corners).max() <= NORMALIZED_LIMIT:
            if size is None:
                raise InputError(f"{path}: normalized coordinates need the frame size (give -i IMAGES or -iw/-ih)")
            boxes = boxes.with_corners(boxes.corners * np.array(size, dtype=np.float64))
    if boxes.score is None and len(boxes):
        _no_partial_confidence(path, set(boxes.line.tolist()))
    boxes = type(boxes)(corners=boxes.corners, class_id=boxes.class_id, score=boxes.score, line=boxes.line,
                        difficult=np.zeros(len(boxes), dtype=bool))
    return FrameLabels(path.stem, boxes, size, path, label_file.problems)


def _no_partial_confidence(path: Path, good_lines: set) -> None:
    """:class:`InputError` when some box lines carry a confidence and others do not.

    The readers keep a confidence only when every box has one; converting such a file would
    drop the scores it does have without a word.
    """
    counts = {number: len(fields) for number, fields in split_lines(path) if number in good_lines}
    scored = [n for n, c in counts.items() if c in (6, 10)]
    plain = [n for n, c in counts.items() if c in (5, 9)]
    if scored and plain:
        raise InputError(f"{path}:{plain[0]}: no confidence column, while line {scored[0]} has one "
                         "(give every box of the file a confidence, or none)")


def read_set(source: Path, fmt: Optional[str] = None, *, label_map: Optional[dict] = None,
             sizes: Optional[ImageSizes] = None, strict: bool = True,
             progress: Optional[Callable[[int], None]] = None, dota_ext: str = DOTA_EXT,
             read_options: Optional[dict] = None) -> LabelSet:
    """Read a whole set: a folder of per-frame files, or a COCO ``.json``.

    Parameters
    ----------
    source : Path
    fmt : str, optional
        One of :data:`ALL_FORMATS`; detected when omitted.
    label_map : dict of int to str, optional
        Class names: needed for DOTA; pins the ids of COCO, LabelMe and VOC names.
    sizes : ImageSizes, optional
        Frame sizes for normalized YOLO; a size the file records (COCO, VOC, LabelMe) wins.
    strict : bool
        Ground truth (raise at the first broken line) or predictions (skip and list).
    progress : callable, optional
        Called with 1 after each file read.
    dota_ext : str
        The suffix of DOTA files (DOTA ``.txt`` files are found when there are none).
    read_options : dict, optional
        Reading options of the formats that take them
        (:data:`~hbb2obb.io.format_names.READ_OPTIONS`); the defaults where absent.

    Returns
    -------
    LabelSet
    """
    try:
        return _read_set(Path(source), fmt, label_map, sizes, strict, progress, dota_ext, read_options)
    finally:
        forget_sniffed()  # a document parsed to find the format and not read (a stray COCO file) is not kept


def _read_set(source: Path, fmt: Optional[str], label_map: Optional[dict], sizes: Optional[ImageSizes],
              strict: bool, progress: Optional[Callable[[int], None]], dota_ext: str,
              read_options: Optional[dict]) -> LabelSet:
    fmt = fmt or detect_format(source)
    if fmt not in ALL_FORMATS:
        raise UsageError(f"unknown label format {fmt!r}; one of {', '.join(ALL_FORMATS)}")
    sizes = sizes or ImageSizes()
    label_map = dict(label_map or {})
    options = {**READ_OPTIONS, **(read_options or {})}
    if fmt in REGISTERED:
        return _read_registered(source, fmt, label_map, sizes, strict, progress, options)
    if fmt == "coco":
        path = source
        if source.is_dir():
            cocos = [p for p in _listed(source, ".json") if sniff_format(p) == "coco"]
            path = _the_one_file(source, "COCO", ".json", cocos)
        return _one_file_set(fmt, read_coco(path, strict=strict, label_map=label_map, angle=options["coco_angle"]),
                             sizes, progress)
    if not source.is_dir():
        raise InputError(f"{source}: {fmt} labels are one file per frame, so this must be a folder")
    paths = label_files(source, fmt, dota_ext)
    if not paths:
        raise InputError(
            f"{source}: no {fmt} label files ({EXTENSIONS[fmt] if fmt != 'dota' else dota_ext + ' or .txt'})"
        )
    frames = []
    if fmt == "dota" and not label_map:
        raise InputError(f"{source}: DOTA files name their classes; give the label map (-mp/--map_path)")
    if fmt == "voc":  # imported here: xml.etree is start-up that the usual YOLO run never uses
        from hbb2obb.io.voc import read_voc, voc_names

        label_map = label_map or voc_names(paths)
    discovered: dict = {}
    for path in paths:
        size = _integer_size(sizes(path.stem))
        if fmt == "yolo":
            frame = _read_yolo(path, size, strict)
        elif fmt == "dota":
            label_file = read_dota(path, strict=strict, label_map=label_map)
            frame = FrameLabels(path.stem, label_file.boxes, size, path, label_file.problems)
        elif fmt == "voc":
            frame = read_voc(path, strict=strict, label_map=label_map)
        else:
            frame = read_labelme(path, strict=strict, label_map=label_map or None, discovered=discovered)
        if frame.size is None:
            frame = frame.with_size(size)
        frames.append(frame)
        if progress:
            progress(1)
    names = label_map or discovered
    problems = tuple(problem for frame in frames for problem in frame.problems)
    chosen = set(paths)
    ignored = tuple(p for p in _listed(source, EXTENSIONS[fmt]) if p not in chosen and sniff_format(p) is None)
    return LabelSet(fmt, tuple(frames), names, problems, ignored)


def _the_one_file(folder: Path, what: str, suffix: str, found: list) -> Path:
    """The one file of a one-file format in a folder; none, or several, is an :class:`InputError`."""
    if not found:
        raise InputError(f"{folder}: no {what} {suffix} file found")
    if len(found) > 1:  # the reference reads the first by name: which one is luck, and not ours to guess
        raise InputError(f"{folder}: holds {len(found)} {what} files ({', '.join(p.name for p in found[:4])}"
                         f"{', ...' if len(found) > 4 else ''}); give the one to read as the path")
    return found[0]


def _one_file_set(fmt: str, read: tuple, sizes: ImageSizes, progress) -> LabelSet:
    """The set a one-file reader returned (``frames, names, problems``), sizes filled in where it records none."""
    frames, names, problems = read
    if progress:
        progress(1)
    frames = [f if f.size is not None else f.with_size(_integer_size(sizes(f.stem))) for f in frames]
    return LabelSet(fmt, tuple(frames), names, problems)


def _read_registered(source: Path, fmt: str, label_map: dict, sizes: ImageSizes, strict: bool,
                     progress: Optional[Callable[[int], None]], options: dict) -> LabelSet:
    """:func:`read_set` for a format of :data:`~hbb2obb.io.format_names.REGISTERED`."""
    spec, module = REGISTERED[fmt], format_module(fmt)
    wanted = {name: options[name] for name in spec.options}
    if spec.one_file:
        path = source if not source.is_dir() else _the_one_file(source, fmt, spec.suffix, label_files(source, fmt))
        return _one_file_set(fmt, module.read(path, strict=strict, label_map=label_map, **wanted), sizes, progress)
    if not source.is_dir():
        raise InputError(f"{source}: {fmt} labels are one file per frame, so this must be a folder")
    paths = label_files(source, fmt)
    if not paths:
        raise InputError(f"{source}: no {fmt} label files ({spec.suffix})")
    frames, discovered = [], {}
    for path in paths:
        frame = module.read(path, strict=strict, label_map=label_map or None, discovered=discovered, **wanted)
        if frame.size is None:
            frame = frame.with_size(_integer_size(sizes(path.stem)))
        frames.append(frame)
        if progress:
            progress(1)
    problems = tuple(problem for frame in frames for problem in frame.problems)
    return LabelSet(fmt, tuple(frames), label_map or discovered, problems)


def set_kind(label_set: LabelSet) -> str:
    """``"obb"`` when any box is rotated, else ``"hbb"``."""
    from hbb2obb.io.frame_labels import is_axis_aligned

    rotated = any(len(f.boxes) and not is_axis_aligned(f.boxes.corners).all() for f in label_set.frames)
    return "obb" if rotated else "hbb"


def unit_boxes(label_set: LabelSet) -> tuple[int, Optional[str]]:
    """YOLO boxes read as pixels that look normalized: how many, and the first as ``file:line``.

    A YOLO file is normalized only when every coordinate in it is within
    :data:`NORMALIZED_LIMIT`; one normalized line among pixel lines (a tool that wrote some boxes
    one way and some the other) is read as a box of a pixel or two at the frame's corner. Boxes
    of normalized files are in pixels by now, so any box left that small is such a line.
    """
    if label_set.format != "yolo":
        return 0, None
    count, first = 0, None
    for frame in label_set.frames:
        if not len(frame.boxes):
            continue
        unit = np.abs(frame.boxes.corners).reshape(-1, 8).max(axis=1) <= NORMALIZED_LIMIT
        if unit.any():
            count += int(np.count_nonzero(unit))
            if first is None:
                line = frame.boxes.line[int(np.argmax(unit))] if frame.boxes.line is not None else "?"
                first = f"{frame.source}:{line}"
    return count, first


def canonical_set(label_set: LabelSet, precision: int = DEFAULT_PRECISION) -> LabelSet:
    """Every box rounded once (:func:`~hbb2obb.io.frame_labels.canonical`): what every writer takes."""
    frames = tuple(frame.with_boxes(canonical(frame.boxes, precision)) for frame in label_set.frames)
    return LabelSet(label_set.format, frames, label_set.names, label_set.problems, label_set.ignored)


def complete_names(names: dict, label_set: LabelSet) -> dict:
    """The names, with ``class_N`` for any class id a box uses that the names lack."""
    used = {int(c) for frame in label_set.frames for c in frame.boxes.class_id.tolist()}
    return {**{c: f"class_{c}" for c in used if c not in names}, **names}


def write_set(label_set: LabelSet, dest: Path, fmt: str, *, kind: str, names: dict, normalize: bool = False,
              precision: Optional[int] = None, dota_ext: str = DOTA_EXT, coco_name: Optional[str] = None,
              voc_database: str = "Unknown", image_ext: str = ".jpg", images: Optional[ImageSizes] = None,
              wrote: Optional[Callable[[Path], None]] = None, coco_identity=None,
              coco_info: Optional[dict] = None) -> list[Path]:
    """Write a set in one format (canonical corners expected); returns the files written.

    Every check of :func:`~hbb2obb.io.write_plan.plan_outputs` runs before the first file (a file
    the set was read from is never overwritten); each file is replaced atomically.

    Parameters
    ----------
    images : ImageSizes, optional
        With an image folder, COCO, LabelMe and VOC name each frame's image file as it is there
        (``a.png``, ``b.JPG``); otherwise as the source labels named it, else ``STEM + image_ext``.
    wrote : callable, optional
        Called with each path once its file is complete (the caller's record of its outputs).
    coco_identity : CocoIdentity, optional
        COCO: the source file's ids and licenses, checked beforehand (:mod:`hbb2obb.io.coco_identity`).
    coco_info : dict, optional
        COCO: the ``info`` object.
    """
    from hbb2obb.io.voc import write_voc

    plan_outputs(label_set, dest, [fmt], kind=kind, normalize=normalize, dota_ext=dota_ext, coco_name=coco_name)
    obb = kind == "obb"
    try:
        dest.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"{dest}: cannot create ({exc.strerror})") from None
    image_dir = images.image_dir if images is not None else None
    image_names = {frame.stem: _image_name(image_dir, frame, image_ext) for frame in label_set.frames}
    if precision is None:
        precision = DEFAULT_NORMALIZED_PRECISION if normalize else DEFAULT_PRECISION
    written = []
    for path in output_paths(label_set, dest, fmt, kind=kind, dota_ext=dota_ext, coco_name=coco_name):
        try:
            if fmt in REGISTERED:
                _write_registered(path, fmt, label_set, len(written), names, obb, image_names)
            elif fmt == "coco":
                write_coco(path, label_set.frames, names, obb, image_names=image_names, identity=coco_identity,
                           info=coco_info)
            else:
                frame = label_set.frames[len(written)]
                if fmt == "yolo":
                    write_yolo(path, frame.boxes, frame.size, obb=obb, normalize=normalize, precision=precision)
                elif fmt == "dota":
                    write_dota(path, frame.boxes, names)
                elif fmt == "voc":
                    write_voc(path, frame, names, image_name=image_names[frame.stem], database=voc_database,
                              folder=image_dir.name if image_dir is not None else "images")
                else:
                    write_labelme(path, frame, names, obb, image_name=image_names[frame.stem])
        except OSError as exc:  # a full disk, a read-only folder: the file keeps its old content
            raise InputError(f"{path}: cannot write ({exc.strerror or exc})") from None
        written.append(path)
        if wrote is not None:
            wrote(path)
    return written


def _write_registered(path: Path, fmt: str, label_set: LabelSet, index: int, names: dict, obb: bool,
                      image_names: dict) -> None:
    """Write the ``index``-th file of a registered format (its only one, for a one-file format)."""
    module = format_module(fmt)
    if REGISTERED[fmt].one_file:
        module.write(path, label_set.frames, names, obb=obb, image_names=image_names)
    else:
        frame = label_set.frames[index]
        module.write(path, frame, names, obb=obb, image_name=image_names[frame.stem])


def _image_name(image_dir: Optional[Path], frame: FrameLabels, image_ext: str) -> str:
    """The frame's image file: as it is in ``image_dir`` (its real suffix), else as the source
    labels name it (COCO, LabelMe, VOC), else ``STEM + image_ext``."""
    found = find_image(image_dir, frame.stem) if image_dir is not None else None
    if found is not None:
        return found.name
    return frame.image_name or f"{frame.stem}{image_ext}"


def copy_difficult(label_set: LabelSet, flags: LabelSet) -> tuple[LabelSet, int]:
    """The set with each box's difficult flag taken from another reading of it, row for row.

    Only DOTA and VOC carry the flag, so converting from YOLO or COCO would reset it. The two
    readings must have the same frames and box counts; anything else is an :class:`InputError`.
    """
    by_stem = {frame.stem: frame for frame in flags.frames}
    frames, count = [], 0
    for frame in label_set.frames:
        other = by_stem.get(frame.stem)
        if other is None:
            raise InputError(
                f"{frame.source}: no {flags.format} file for frame {frame.stem} to take difficult flags from"
            )
        if len(other.boxes) != len(frame.boxes):
            raise InputError(f"{other.source}: {len(other.boxes)} boxes there, {len(frame.boxes)} in {frame.source}; "
                             "cannot carry difficult flags row for row")
        boxes = frame.boxes
        flags_here = other.boxes.difficult if other.boxes.difficult is not None else np.zeros(len(boxes), dtype=bool)
        count += int(flags_here.sum())
        frames.append(frame.with_boxes(type(boxes)(corners=boxes.corners, class_id=boxes.class_id, score=boxes.score,
                                                   line=boxes.line, difficult=flags_here)))
    return LabelSet(label_set.format, tuple(frames), label_set.names, label_set.problems), count
