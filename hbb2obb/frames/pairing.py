"""Pairing label files by name: which frames a run scores, and where each frame's files are.

The plan is made before any label file is read: the ground-truth and prediction folders are
listed once each (directory entries know their type: no ``stat`` per file), and every frame
becomes a :class:`FrameSpec`. Loading the frames of a plan is :mod:`hbb2obb.frames.loading`.
"""

from __future__ import annotations

import functools
import itertools
import operator
import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import NamedTuple, Optional

import numpy as np

from hbb2obb.boxes import Boxes
from hbb2obb.errors import InputError
from hbb2obb.io import ImageSizes
from hbb2obb.io.written import MANIFEST_NAME

LABEL_SUFFIX = ".txt"
MISSING_PRED_POLICIES = ("skip", "empty", "error")


class FrameSpec(NamedTuple):
    """One frame to score: its name and the two label files (``pred_file`` may be absent).

    The files are kept as path strings, ``gt_path`` and ``pred_path`` give them as
    :class:`~pathlib.Path`: pairing thousands of frames builds no path objects, and a named
    tuple is built in a third of the time of a frozen dataclass. File sizes are not asked
    for (a ``stat`` per file cost as much as reading a small file): batches of frames are
    sized by the bytes read (:func:`~hbb2obb.frames.batches.read_frame_batches`).
    """

    name: str
    gt_file: str
    pred_file: Optional[str]
    gt_boxes: Optional[Boxes] = None  # read already (COCO, LabelMe, VOC, .dota sets): not read from gt_file
    pred_boxes: Optional[Boxes] = None
    recorded_size: Optional[tuple] = None  # (width, height) a COCO, VOC or LabelMe file gives the frame

    @property
    def gt_path(self) -> Path:
        return Path(self.gt_file)

    @property
    def pred_path(self) -> Optional[Path]:
        return None if self.pred_file is None else Path(self.pred_file)


# FrameSpec from a full tuple of its fields without the Python-level __new__ (a third of the
# time); the tuple must give every field (tests compare with FrameSpec built field by field)
_new_spec = functools.partial(tuple.__new__, FrameSpec)


def spec_column(specs, name: str) -> list:
    """One field of every FrameSpec, gathered without a Python step per frame."""
    return list(map(_FIELD_GETTERS[name], specs))


_FIELD_GETTERS = {name: operator.itemgetter(index) for index, name in enumerate(FrameSpec._fields)}


@dataclass(frozen=True)
class FramePlan:
    """Which frames are scored, and what could not be paired.

    When the predictions came from one DOTA Task1 submission (``pred_source``) rather than a
    file per frame, each frame carries its detections already read (:attr:`FrameSpec.pred_boxes`)
    and ``orphan_images`` are the submission's images without ground truth.
    ``broken_pred_links`` are prediction files that are symbolic links to nothing: named in a
    warning and treated as missing.
    """

    frames: tuple[FrameSpec, ...]
    missing_pred: tuple[Path, ...]
    orphan_pred: tuple[Path, ...]
    pred_problems: tuple = ()  # skipped lines of predictions read with the plan (sets read whole, Task1)
    orphan_images: tuple = ()
    pred_source: Optional[Path] = None
    broken_pred_links: tuple[Path, ...] = ()  # prediction links to nothing: warned, read as missing
    # Frames given in memory (the Python API) without predictions: the detection metrics read
    # their ground truth from these specs, where a plan of files lists its folders again.
    missing_specs: tuple[FrameSpec, ...] = ()


def _label_files(folder: Path, role: str, ordered: bool = True) -> tuple[dict[str, str], list[str], bool]:
    """``{stem: path string}`` of the label files of a folder, sorted by name, its broken links,
    and whether it also holds files that may be labels of another format (``.json``, ``.xml``).

    A label file ends in ``.txt`` in any case (``.TXT`` too); a symbolic link whose target is
    gone is returned apart, by path, so the caller can name it instead of skipping it unseen.
    Directory entries know their type: only symbolic links are looked up (no ``stat`` per file).
    ``ordered=False``: the files in the folder's own order (the prediction side is only looked
    up by name: sorting 100,000 names cost more than building their paths).
    """
    if not folder.exists():
        raise InputError(f"{folder}: {role} folder not found")
    if not folder.is_dir():
        raise InputError(f"{folder}: {role} path is not a folder")
    suffix = len(LABEL_SUFFIX)
    prefix = "" if str(folder) == "." else os.path.join(str(folder), "")  # as str(folder / name) spells it
    with os.scandir(folder) as listing:  # directory entries know their type: no Path per file
        entries = list(listing)
    # the usual spelling first: the case-blind test only for the names it does not take
    labels = [e for e in entries if e.name.endswith(LABEL_SUFFIX) or e.name[-suffix:].lower() == LABEL_SUFFIX]
    # a folder of labels alone (the usual case) needs no look at the other names
    other_labels = len(labels) < len(entries) and any(
        e.name.lower().endswith(_OTHER_LABEL_SUFFIXES) for e in entries if e.name != MANIFEST_NAME)
    found = [e.name for e in labels if e.is_file()]
    others = [e for e in labels if not e.is_file()] if len(found) < len(labels) else []
    broken = sorted(e.name for e in others if e.is_symlink() and not os.path.exists(e.path))
    del entries, labels
    if ordered:
        found.sort()
    # The paths are built here rather than taken from the entries (e.path): built one after the
    # other they lie together in memory, where the entries' were scattered among the freed
    # entries, and every later pass over them (the reading, the batch reader) was slower for it.
    files = dict(zip(map(operator.getitem, found, itertools.repeat(slice(None, -suffix))), map(prefix.__add__, found)))
    if len(files) < len(found):  # a.txt and a.TXT: two files of one frame; name the first pair in name order
        seen = {}
        for name in sorted(found):
            stem = name[:-suffix]
            if stem in seen:
                raise InputError(f"{folder}: two label files for frame {stem!r}: {seen[stem]} and {name}")
            seen[stem] = name
    return files, [prefix + name for name in broken], other_labels


def _no_labels_error(folder: Path) -> InputError:
    """Nothing to score is an error: say what the folder holds instead, so the mistake is visible."""
    with os.scandir(folder) as entries:
        suffixes = sorted({os.path.splitext(e.name)[1].lower() or "(no suffix)" for e in entries})
    held = f"; it holds {', '.join(suffixes[:6])} files" if suffixes else "; it is empty"
    return InputError(f"no label files in {folder} (the ground-truth folder needs NAME.txt files{held})")


_OTHER_LABEL_SUFFIXES = (".json", ".xml")  # what VOC, COCO and LabelMe files end in
NATIVE_FORMATS = ("yolo", "dota")  # read from NAME.txt files by the batch reader (the fast path)


def _side(path: Path, fmt: Optional[str], role: str, strict: bool, label_map, sizes,
          read_options: Optional[dict] = None) -> tuple[dict, tuple, bool, list]:
    """One side's label files: ``({stem: entry}, skipped lines, whether it is the batch reader's, broken links)``.

    A folder holding ``.txt`` files is listed for the batch reader as it always was (YOLO-OBB or
    DOTA by content, in one scan of the folder: no look inside a file); so is a folder with no
    label files at all. A file, or a folder of ``.xml``, ``.json`` or ``.dota`` files, is
    detected (:func:`~hbb2obb.io.format_detection.detect_format`) and read whole: its entries are
    ``FrameLabels`` instead of path strings.
    """
    if fmt in (None, *NATIVE_FORMATS) and path.is_dir():  # the usual case: the listing is all it needs
        files, broken, other_labels = _label_files(path, role, ordered=strict)  # ground truth in name order
        if files or broken:
            if other_labels and fmt is None:
                _refuse_mixed_formats(path, role)
            return files, (), True, broken
    from hbb2obb.io.format_detection import detect_format, formats_present
    from hbb2obb.io.label_sets import ALL_FORMATS, read_set

    if fmt is not None and fmt not in ALL_FORMATS:
        raise InputError(f"unknown {role} format {fmt!r}; one of {', '.join(ALL_FORMATS)}")
    if path.is_dir() and fmt in (None, *NATIVE_FORMATS):
        files, broken = {}, []
        if fmt is None:
            present = formats_present(path)
            if not present:
                return files, (), True, broken  # no labels at all: every frame missing (an error for GT)
            if len(present) > 1:  # which one the user meant is not ours to guess
                raise InputError(f"{path}: the {role} folder holds labels in several formats "
                                 f"({', '.join(present)}); choose one with --gt_format/--pred_format")
            fmt = present[0]
    elif not path.exists():
        raise InputError(f"{path}: {role} folder not found")
    elif fmt is None:
        fmt = detect_format(path)
    label_set = read_set(path, fmt, label_map=label_map, sizes=sizes, strict=strict, read_options=read_options)
    return {frame.stem: frame for frame in label_set.frames}, label_set.problems, False, []


def _refuse_mixed_formats(path: Path, role: str) -> None:
    """:class:`InputError` when a folder of ``NAME.txt`` labels also holds label files of another format."""
    from hbb2obb.io.format_detection import formats_beside_text

    others = formats_beside_text(path)
    if others:  # which one the user meant is not ours to guess
        raise InputError(f"{path}: the {role} folder holds NAME.txt labels and {', '.join(others)} label files; "
                         f"choose one with --gt_format/--pred_format")


def plan_frames(gt_dir: str | Path, pred_dir: str | Path, missing_pred: str = "skip", *,
                gt_format: Optional[str] = None, pred_format: Optional[str] = None,
                label_map: Optional[dict] = None, sizes: Optional[ImageSizes] = None,
                read_options: Optional[dict] = None) -> FramePlan:
    """Pair ``gt_dir/NAME.txt`` with ``pred_dir/NAME.txt``, sorted by name.

    Either side may instead be in another format (a COCO ``.json``, a folder of LabelMe,
    VOC or ``.dota`` files): such a side is read whole here, with the bad-input rule (ground
    truth raises, prediction problems go to ``pred_problems``), and paired by frame name.

    Parameters
    ----------
    missing_pred : {"skip", "empty", "error"}
        A ground-truth file with no prediction file: leave the frame out (the reference
        behaviour), score it as a frame with no predictions, or raise :class:`InputError`.
    gt_format, pred_format : str, optional
        One of ``yolo dota voc coco labelme``; detected when omitted.
    label_map, sizes
        Class names and frame sizes for the sides read whole.
    read_options : dict, optional
        Reading options of the formats that take them (:data:`~hbb2obb.io.format_names.READ_OPTIONS`).

    Raises
    ------
    InputError
        A missing folder, a ground-truth folder without label files of any format, a
        ground-truth label file that is a broken symbolic link, two files of one frame
        (``a.txt`` and ``a.TXT``).
    """
    return _plan_frames(Path(gt_dir), Path(pred_dir), missing_pred, gt_format, pred_format, label_map, sizes,
                        read_options=read_options)


def _plan_frames(gt_dir: Path, pred_dir: Path, missing_pred: str, gt_format, pred_format, label_map, sizes, *,
                 task1: bool = False, read_options: Optional[dict] = None) -> FramePlan:
    """:func:`plan_frames`; with ``task1``, a prediction folder that is a DOTA Task1 submission is read as one.

    Each folder is listed once: the submission is told from the listing of per-frame files.
    """
    gt_files, _, gt_listed, gt_broken = _side(gt_dir, gt_format, "ground-truth", True, label_map, sizes, read_options)
    if gt_broken:
        raise InputError(f"{gt_broken[0]}: broken symbolic link (its target does not exist)")
    if not gt_files:
        raise _no_labels_error(gt_dir)
    pred_files, pred_problems, pred_listed, pred_broken = _side(pred_dir, pred_format, "prediction", False,
                                                                label_map, sizes, read_options)
    if task1 and gt_listed and pred_listed and _is_submission(gt_files, pred_files):
        return _task1_plan(gt_files, pred_dir, label_map)
    # a listed prediction folder comes in the folder's order: its orphans are sorted when named
    if gt_listed and pred_listed:
        plan = _pair(gt_files, pred_files, pred_dir, missing_pred, pred_ordered=False)
    else:
        plan = _pair_read(gt_files, pred_files, pred_dir, missing_pred, pred_problems, pred_ordered=not pred_listed)
    return replace(plan, broken_pred_links=tuple(Path(p) for p in pred_broken))


def _pair_read(gt_files: dict, pred_files: dict, pred_dir: Path, missing_pred: str, pred_problems,
               pred_ordered: bool) -> FramePlan:
    """Pairing when a side was read whole: its entries are ``FrameLabels`` instead of path strings."""
    def split(item):
        if isinstance(item, str):
            return item, None
        # a frame of a COCO file is named within it: the file alone would name every frame
        where = str(item.source) if item.source.stem == item.stem else f"{item.source}:{item.stem}"
        return where, item.boxes

    def recorded(name):
        for side in (gt_files, pred_files):
            item = side.get(name)
            if item is not None and not isinstance(item, str) and item.size is not None:
                return tuple(float(v) for v in item.size)
        return None

    plain_gt = {name: split(item) for name, item in gt_files.items()}
    plain_pred = {name: split(item) for name, item in pred_files.items()}
    plan = _pair({n: p for n, (p, _) in plain_gt.items()}, {n: p for n, (p, _) in plain_pred.items()},
                 pred_dir, missing_pred, pred_ordered)
    frames = tuple(FrameSpec(spec.name, spec.gt_file, spec.pred_file, plain_gt[spec.name][1],
                             plain_pred[spec.name][1] if spec.name in plain_pred else None, recorded(spec.name))
                   for spec in plan.frames)
    return FramePlan(frames, plan.missing_pred, plan.orphan_pred, tuple(pred_problems))


def _pair(gt_files: dict, pred_files: dict, pred_dir: Path, missing_pred: str, pred_ordered: bool = True) -> FramePlan:
    """Frames of the names both sides have (and, by the policy, those only ground truth has).

    ``gt_files`` and ``pred_files`` are ``{name: path string}``, ground truth in name order, the
    predictions too unless not ``pred_ordered`` (its orphans are then sorted by path, which for
    a listed folder is name order). A frame's prediction file is looked up once, which also tells
    the frames without one; orphans are found by set difference, and only when the counts say
    there are some, so a complete set costs no Python step per frame beyond building its specs.
    """
    # One lookup per frame tells both what a frame's prediction file is and whether it lacks one;
    # comparing the two key sets first would be a second pass as slow as this one (each lookup
    # misses the cache, the names' strings lying scattered in memory).
    found = list(map(pred_files.get, gt_files))  # None: no prediction file
    lacking = set() if None not in found else {name for name, path in zip(gt_files, found) if path is None}
    same = not lacking and len(pred_files) == len(gt_files)  # the usual case: every frame has both files
    missing = tuple(Path(path) for name, path in gt_files.items() if name in lacking) if lacking else ()
    if missing and missing_pred == "error":
        raise InputError(
            f"{missing[0]}: no prediction file {Path(pred_dir) / missing[0].name}"
            + (f" (and {len(missing) - 1} more frames)" if len(missing) > 1 else "")
        )
    if missing and missing_pred != "empty":
        names = [name for name in gt_files if name not in lacking]
        gt_paths = [gt_files[name] for name in names]
        pred_paths = [path for path in found if path is not None]
    else:
        names, gt_paths = list(gt_files), list(gt_files.values())
        pred_paths = found  # None: no prediction file (scored as empty)
    nothing = itertools.repeat(None)  # no boxes read already, no recorded size
    frames = tuple(map(_new_spec, zip(names, gt_paths, pred_paths, nothing, nothing, nothing)))
    extra = set() if same else pred_files.keys() - gt_files.keys()
    if not extra:
        orphans = ()
    elif pred_ordered:
        orphans = tuple(Path(path) for name, path in pred_files.items() if name in extra)
    else:
        orphans = tuple(map(Path, sorted(pred_files[name] for name in extra)))
    return FramePlan(frames, missing, orphans)


def plan_any(gt_dir: str | Path, pred_dir: str | Path, missing_pred: str = "skip",
             label_map: Optional[dict] = None, *, gt_format: Optional[str] = None,
             pred_format: Optional[str] = None, sizes: Optional[ImageSizes] = None,
             read_options: Optional[dict] = None) -> FramePlan:
    """:func:`plan_frames`, or, when ``pred_dir`` is a DOTA Task1 submission, its detections by frame.

    A folder is a submission when it holds ``Task1_<class>.txt`` files and no file named like a
    ground-truth file. Every ground-truth frame is then scored (a submission lists only images
    with detections, so a frame it lacks has none).
    """
    gt_dir, pred_dir = Path(gt_dir), Path(pred_dir)
    task1 = pred_format is None and gt_format in (None, "yolo", "dota") and pred_dir.is_dir()
    return _plan_frames(gt_dir, pred_dir, missing_pred, gt_format, pred_format, label_map, sizes, task1=task1,
                        read_options=read_options)


def _is_submission(gt_files: dict, pred_files: dict) -> bool:
    """Listed prediction files that are a DOTA Task1 submission.

    That is ``Task1_<class>.txt`` files, none named like ground truth.
    """
    # a name both sides have rules it out at once (the usual case): no look at every name then,
    # and no import of the Task1 reader on a run that does not need it
    if not pred_files.keys().isdisjoint(gt_files.keys()):
        return False
    from hbb2obb.io.dota_task1 import TASK1_FILE

    return any(
        TASK1_FILE.match(os.path.basename(path)) for name, path in pred_files.items() if name.startswith("Task1_")
    )


def _task1_plan(gt_files: dict, pred_dir: Path, label_map: Optional[dict]) -> FramePlan:
    """Every ground-truth frame with its detections from the submission in ``pred_dir``."""
    from hbb2obb.io.dota_task1 import read_task1

    submission = read_task1(pred_dir, label_map)
    none = Boxes(np.zeros((0, 4, 2)), np.zeros(0, dtype=np.int64), score=np.zeros(0), line=np.zeros(0, dtype=np.int64))
    # every frame is scored: an image the submission does not list had no detections
    frames = tuple(FrameSpec(name, path, f"{pred_dir}:{name}", pred_boxes=submission.boxes.get(name, none))
                   for name, path in gt_files.items())
    orphans = tuple(sorted(name for name in submission.boxes if name not in gt_files))
    return FramePlan(frames, (), (), pred_problems=submission.problems, orphan_images=orphans,
                     pred_source=Path(pred_dir))
