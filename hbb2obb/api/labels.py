"""Label sets in and out: :func:`read_labels` and :func:`write_labels`, every format the toolkit reads.

Both go through :mod:`hbb2obb.io.label_sets` (``read_set``/``write_set``), as ``hbb2obb-convert``
does, so a set read here is read exactly as the commands read it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Literal, Optional

import numpy as np

from hbb2obb.api.inputs import ImageSizesLike, LabelMapLike, PathLike, image_sizes_of, label_map_of
from hbb2obb.boxes import Boxes
from hbb2obb.errors import UsageError
from hbb2obb.io.text import LabelProblem


class Frames(dict[str, Boxes]):
    """Boxes by frame name, as :func:`read_labels` returns them and :func:`evaluate` takes them.

    A plain ``dict`` of ``{frame name: Boxes}`` (corners in pixels) with what the label set
    said beside its boxes. Any mapping of :class:`~hbb2obb.Boxes` can stand for it.

    Parameters
    ----------
    frames : mapping of str to Boxes
    format : str
        The format the set was read from (``"memory"`` for boxes made in Python).
    names : dict of int to str, optional
        Class names (from the label map, or found in the files).
    sizes : dict of str to (width, height), optional
        Frame sizes in pixels where known (recorded in the files, or from the images).
    problems : tuple of LabelProblem
        Lines skipped as broken (only when read with ``strict=False``).
    sources : dict of str to Path, optional
        The file each frame was read from (:func:`write_labels` never writes over them).
    """

    def __init__(self, frames: Mapping[str, Boxes] = {}, *, format: str = "memory",
                 names: Optional[Mapping[int, str]] = None,
                 sizes: Optional[Mapping[str, Optional[tuple[float, float]]]] = None,
                 problems: tuple[LabelProblem, ...] = (),
                 sources: Optional[Mapping[str, Path]] = None) -> None:
        super().__init__(frames)
        self.format = format
        self.names: dict[int, str] = dict(names or {})
        self.sizes: dict[str, Optional[tuple[float, float]]] = dict(sizes or {})
        self.problems = tuple(problems)
        self.sources: dict[str, Path] = dict(sources or {})


def read_labels(path: PathLike, format: Optional[str] = None, image_sizes: ImageSizesLike = None,
                label_map: LabelMapLike = None, *, strict: bool = True, split: str = "val",
                coco_angle: Optional[str] = None) -> Frames:
    """Read a label set: a folder of per-frame files, or a one-file set such as COCO ``.json``.

    Parameters
    ----------
    path : str or Path
    format : str, optional
        ``yolo``, ``dota``, ``voc``, ``coco``, ``labelme`` or another format the toolkit reads
        (``hbb2obb-convert --formats`` lists them); detected when omitted.
    image_sizes : str, Path or (width, height), optional
        Frame sizes for normalized YOLO labels: a folder of the frames, or one size for all.
    label_map : str, Path or dict of int to str, optional
        Class names: needed for DOTA; pins the class ids of formats that name their classes.
    strict : bool
        ``True`` (ground truth): the first broken line raises :class:`~hbb2obb.InputError`
        naming ``file:line``. ``False`` (predictions): broken lines are skipped and listed in
        :attr:`Frames.problems`.
    split : str
        An Ultralytics dataset YAML: the split to read (``train``, ``val``, ``test``).
    coco_angle : str, optional
        COCO files whose ``bbox`` has five numbers ``[cx, cy, w, h, angle]``: the angle's unit and
        direction, one of ``deg_ccw``, ``deg_cw``, ``rad_ccw``, ``rad_cw`` (``--coco_angle``).

    Returns
    -------
    Frames
        ``{frame name: Boxes}`` in pixels, sorted by name (a one-file set: in its own order).

    Raises
    ------
    hbb2obb.InputError
        A missing path, no label files, a broken ground-truth line.
    hbb2obb.UsageError
        An unknown format name.
    """
    from hbb2obb.io.label_sets import read_set

    label_set = read_set(Path(path), format, label_map=label_map_of(label_map), sizes=image_sizes_of(image_sizes),
                         strict=strict, read_options={"split": split, "coco_angle": coco_angle})
    return Frames({frame.stem: frame.boxes for frame in label_set.frames}, format=label_set.format,
                  names=label_set.names, sizes={frame.stem: frame.size for frame in label_set.frames},
                  problems=label_set.problems, sources={frame.stem: frame.source for frame in label_set.frames})


def write_labels(frames: Mapping[str, Boxes], dest: PathLike, format: str, *,
                 kind: Optional[Literal["obb", "hbb"]] = None, label_map: LabelMapLike = None,
                 image_sizes: ImageSizesLike = None, normalize: bool = False,
                 overwrite: bool = False) -> list[Path]:
    """Write frames in a format; returns the files written.

    Every file is checked before the first is written and replaced atomically; a file the
    toolkit did not write is never overwritten (the rules of ``hbb2obb-convert``).

    Parameters
    ----------
    frames : mapping of str to Boxes
        ``{frame name: Boxes}`` in pixels, as :func:`read_labels` returns them.
    dest : str or Path
        The folder to write into (a one-file format such as COCO writes one file there).
    format : str
        One of the formats the toolkit writes (``yolo``, ``dota``, ``voc``, ``coco``, ``labelme``, ...).
    kind : {"obb", "hbb"}, optional
        Rotated or horizontal boxes; by default ``"hbb"`` when every box is axis-aligned and the
        format can carry horizontal boxes, else ``"obb"``.
    label_map : str, Path or dict of int to str, optional
        Class names (DOTA, VOC, COCO and LabelMe write names); ``class_N`` where missing.
    image_sizes : str, Path or (width, height), optional
        Frame sizes, for the formats that record them and for ``normalize``; sizes a
        :class:`Frames` carries are used where this gives none.
    normalize : bool
        YOLO: write coordinates normalized to ``[0, 1]``.
    overwrite : bool
        Replace files of the output names that the toolkit did not write (never the files the
        frames were read from).

    Raises
    ------
    hbb2obb.InputError
        A file in the way, a frame without the size its format needs, a folder that cannot be written.
    hbb2obb.UsageError
        An unknown format, or a kind the format cannot carry.
    """
    from hbb2obb.io.frame_labels import FrameLabels
    from hbb2obb.io.label_sets import (
        HBB_FORMATS,
        LabelSet,
        canonical_set,
        complete_names,
        plan_outputs,
        set_kind,
        write_set,
    )
    from hbb2obb.io.written import OutputGuard

    dest = Path(dest)
    sizes = image_sizes_of(image_sizes)
    recorded = frames.sizes if isinstance(frames, Frames) else {}
    sources = frames.sources if isinstance(frames, Frames) else {}
    labels = []
    for stem in sorted(frames):
        boxes = frames[stem]
        if not isinstance(boxes, Boxes):
            raise UsageError(f"frame {stem!r}: expected Boxes, got {type(boxes).__name__}")
        if len(boxes) and not np.isfinite(boxes.corners).all():
            raise UsageError(f"frame {stem!r}: a corner is not a finite number")
        size = sizes(stem) or recorded.get(stem)
        # boxes made in memory come from no file: a name no output has stands for it
        labels.append(FrameLabels(stem, boxes, None if size is None else tuple(size),
                                  Path(sources.get(stem, dest / f"{stem}.in-memory"))))
    label_set = canonical_set(LabelSet(frames.format if isinstance(frames, Frames) else "memory", tuple(labels),
                                       label_map_of(label_map)))
    names = complete_names(label_set.names, label_set)
    chosen: str = kind or set_kind(label_set)
    if kind is None and chosen == "hbb" and format not in HBB_FORMATS:  # axis-aligned boxes are OBBs too
        chosen = "obb"
    planned = plan_outputs(label_set, dest, [format], kind=chosen, normalize=normalize)
    guard = OutputGuard()
    if not overwrite:
        guard.refuse_foreign([path for paths in planned.values() for path in paths], flag="overwrite=True")
    try:
        return write_set(label_set, dest, format, kind=chosen, names=names, normalize=normalize, images=sizes,
                         wrote=guard.wrote)
    finally:
        guard.save()  # what was written is the toolkit's, even when a later file failed
