"""``--coco_from SRC.json``: the ids of a source COCO file, read and checked against the frames being written.

A converted set is usually a derivative of a COCO file: one box per annotation, in its order.
Writing it numbered 1..N breaks the join back to the source, so ``hbb2obb-convert --coco_from``
takes the source's image, annotation and category ids (and its licenses) instead. The map is
positional, and a positional map applied to the wrong rows writes a file that is wrong in a way
nothing downstream can see; so it is checked frame by frame and row by row before anything is
written, and a source file that is itself broken is refused, naming the JSON path at fault.
"""

from __future__ import annotations

import json
from pathlib import Path

from hbb2obb.errors import InputError
from hbb2obb.io.coco import CocoIdentity, category_classes, image_table, is_coco, is_id, load_json
from hbb2obb.io.text import ProblemSink

PROBLEMS_SHOWN = 3  # a mismatch message names this many problems, then counts the rest


def read_coco_identity(path: str | Path) -> CocoIdentity:
    """The ids, categories and licenses of a COCO file, its annotations grouped by frame in file order.

    Raises
    ------
    InputError
        The file is not a COCO instance file, or an image, category or annotation in it has no
        usable id or points at an image or category the file does not have (named by JSON path,
        as ``src.json:annotations[3].image_id``).
    """
    path = Path(path)
    data = load_json(path, "COCO file")
    if not is_coco(data):
        raise InputError(f"{path}: not a COCO instance file (needs 'images', 'annotations' and 'categories')")
    for key in ("images", "categories", "licenses"):  # the objects carried into the written file as they are
        if isinstance(data.get(key), list):
            for index, item in enumerate(data[key]):
                _refuse_non_finite(item, f"{path}:{key}[{index}]")
    category_classes(data, path, {})  # ids and names each given once, or an error naming the category
    category_names = {c["id"]: str(c.get("name", c["id"])) for c in data["categories"]}
    images = image_table(data, path, ProblemSink(path, strict=True))  # {id: (stem, size, name)}, unique
    objects = {image["id"]: image for image in data["images"]}
    annotations = data["annotations"]
    if not isinstance(annotations, list):
        raise InputError(f"{path}:annotations: must be a list")
    ids = {stem: [] for stem, *_ in images.values()}
    names = {stem: [] for stem, *_ in images.values()}
    for index, annotation in enumerate(annotations):
        where = f"{path}:annotations[{index}]"
        if not isinstance(annotation, dict) or not is_id(annotation.get("id")):
            raise InputError(f"{where}: needs an integer 'id'")
        image_id, category_id = annotation.get("image_id"), annotation.get("category_id")
        if not is_id(image_id) or image_id not in images:
            raise InputError(f"{where}.image_id: no image with id {image_id!r}")
        if not is_id(category_id) or category_id not in category_names:
            raise InputError(f"{where}.category_id: no category with id {category_id!r}")
        stem = images[image_id][0]
        ids[stem].append(annotation["id"])
        names[stem].append(category_names[category_id])
    licenses = data.get("licenses")
    if licenses is not None and not isinstance(licenses, list):
        raise InputError(f"{path}:licenses: must be a list")
    return CocoIdentity(
        source=path,
        images={stem: objects[image_id] for image_id, (stem, *_) in images.items()},
        annotation_ids=ids,
        annotation_names=names,
        categories={str(c.get("name", c["id"])): c for c in data["categories"]},
        licenses=list(licenses or []),
    )


def identity_problems(identity: CocoIdentity, frames, names: dict) -> list[str]:
    """Why ``identity`` does not describe ``frames`` row for row; empty when it does.

    Every frame must be an image of the source with as many annotations as it has boxes, box
    ``k`` of the class the source's annotation ``k`` names, and no annotation id may serve twice.
    """
    problems = []
    missing = [frame.stem for frame in frames if frame.stem not in identity.images]
    if missing:
        problems.append(f"{len(missing)} frame(s) are not in the source file, e.g. {', '.join(missing[:3])}")
    used = []
    for frame in frames:
        if frame.stem not in identity.images:
            continue
        ids = identity.annotation_ids[frame.stem]
        used += ids
        if len(ids) != len(frame.boxes):
            problems.append(f"{frame.stem}: {len(frame.boxes)} box(es) here against {len(ids)} in the source")
            continue
        for row, (class_id, name) in enumerate(zip(frame.boxes.class_id.tolist(),
                                                   identity.annotation_names[frame.stem])):
            here = names.get(int(class_id), f"class_{class_id}")
            if here != name:
                problems.append(f"{frame.stem} row {row}: class {here!r} here against {name!r}")
    if len(set(used)) != len(used):
        problems.append("the source file repeats an annotation id across the frames being written")
    return problems


def check_coco_identity(identity: CocoIdentity, frames, names: dict) -> None:
    """:class:`InputError` listing the first problems of :func:`identity_problems`, if any."""
    problems = identity_problems(identity, frames, names)
    if not problems:
        return
    more = len(problems) - PROBLEMS_SHOWN
    shown = "; ".join(problems[:PROBLEMS_SHOWN]) + (f"; and {more} more" if more > 0 else "")
    raise InputError(f"--coco_from {identity.source} does not describe these boxes row for row: {shown}")


def read_coco_info(path: str | Path) -> dict:
    """The ``info`` object of ``--coco_info``: a JSON file holding one object, written as it is."""
    path = Path(path)
    try:
        data = load_json(path, "--coco_info file")
    except InputError as exc:
        raise InputError(f"--coco_info {exc}") from None
    if not isinstance(data, dict):
        raise InputError(f"--coco_info {path}: expected a JSON object, got {type(data).__name__}")
    _refuse_non_finite(data, f"--coco_info {path}")
    return data


def _refuse_non_finite(value, where: str) -> None:
    """Refuse a value holding NaN or an infinity (Python reads them, and ``1e400``, from JSON files):
    written on, it would make the COCO file one that JSON readers other than Python's refuse."""
    try:
        json.dumps(value, allow_nan=False)
    except ValueError:
        raise InputError(f"{where}: holds NaN or an infinity, which a JSON file cannot; the written COCO file "
                         "would not be JSON") from None
