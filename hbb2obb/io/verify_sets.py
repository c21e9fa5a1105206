"""Whether the formats found under a folder encode the same boxes (``hbb2obb-convert --verify``).

Every reading is rounded once to the canonical two decimals and compared by exact equality of
the integer corners and of the class, frame by frame and box by box, against the YOLO reading
(or the first format by name), as the reference converter does. A folder holding YOLO, DOTA or
VOC files is checked on its own; otherwise each subfolder is, ``labels_NAME/`` paired with a
``coco_annotations_NAME.json`` beside it (``labels/`` with ``coco_annotations.json``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from hbb2obb.io.frame_labels import integer_corners
from hbb2obb.io.images import ImageSizes
from hbb2obb.io.label_sets import ALL_FORMATS, LabelSet, canonical_set, label_files, read_set, resolve_names

SIDECAR_DIRS = frozenset({"labels_confidence", "labels_polygon"})  # one .txt per frame, but not labels
LISTED = 5  # frame names listed per missing/unexpected message


@dataclass
class FolderCheck:
    """What was compared in one folder."""

    name: str
    frames: int
    boxes: int
    formats: tuple


@dataclass
class VerifyReport:
    """The outcome of :func:`verify_tree`: folders compared, notes, and every disagreement found."""

    checked: list = field(default_factory=list)
    log: list = field(default_factory=list)  # one line per folder, in order
    problems: list = field(default_factory=list)
    found_any: bool = True

    @property
    def boxes(self) -> int:
        return sum(check.boxes for check in self.checked)

    @property
    def passed(self) -> bool:
        return self.found_any and not self.problems


def _listed(stems: list) -> str:
    return f"{stems[:LISTED]}{' ...' if len(stems) > LISTED else ''}"


def compare_sets(sets: dict, reference: str) -> list[str]:
    """Every disagreement of the readings in ``sets`` (format to canonical LabelSet) with ``reference``."""
    problems = []
    ref_frames = {frame.stem: frame for frame in sets[reference].frames}
    for fmt, label_set in sets.items():
        if fmt == reference:
            continue
        frames = {frame.stem: frame for frame in label_set.frames}
        missing = sorted(set(ref_frames) - set(frames))
        extra = sorted(set(frames) - set(ref_frames))
        if missing:
            problems.append(f"{fmt}: missing frames {_listed(missing)}")
        if extra:
            problems.append(f"{fmt}: unexpected frames {_listed(extra)}")
        for stem, ref in ref_frames.items():
            other = frames.get(stem)
            if other is None:
                continue
            a, b = ref.boxes, other.boxes
            if len(a) != len(b):
                problems.append(f"{stem}: {fmt} has {len(b)} boxes, {reference} has {len(a)}")
                continue
            same_corners = (integer_corners(a.corners) == integer_corners(b.corners)).all(axis=(1, 2))
            for row in range(len(a)):
                if a.class_id[row] != b.class_id[row]:
                    problems.append(
                        f"{stem}#{row}: {fmt} class {b.class_id[row]} != {reference} class {a.class_id[row]}"
                    )
                if not same_corners[row]:
                    problems.append(f"{stem}#{row}: {fmt} corners disagree with {reference}")
    return problems


def _targets(root: Path) -> list[tuple[Path, Optional[Path]]]:
    if any(label_files(root, fmt) for fmt in ("yolo", "dota", "voc")):
        return [(root, None)]
    targets = []
    for sub in sorted(p for p in root.iterdir() if p.is_dir()):
        if sub.name in SIDECAR_DIRS or not any(sub.iterdir()):
            continue
        if sub.name == "labels":
            coco = root / "coco_annotations.json"
        elif sub.name.startswith("labels_"):
            coco = root / f"coco_annotations_{sub.name[len('labels_'):]}.json"
        else:
            coco = None
        targets.append((sub, coco if coco is not None and coco.is_file() else None))
    return targets


def verify_tree(source: Path, *, map_path: Optional[Path], sizes: Optional[ImageSizes] = None) -> VerifyReport:
    """Check every folder under ``source`` (see the module notes); broken files raise as for ground truth."""
    source = Path(source)
    root = source if source.is_dir() else source.parent
    targets = _targets(root)
    report = VerifyReport(found_any=bool(targets))
    if sizes is None:
        sizes = ImageSizes(root / "images") if (root / "images").is_dir() else ImageSizes()
    for folder, coco in targets:
        label_map = resolve_names(map_path, folder)
        sets: dict[str, LabelSet] = {}
        for fmt in (f for f in ALL_FORMATS if f != "coco" and label_files(folder, f)):
            label_set = read_set(folder, fmt, label_map=label_map, sizes=sizes, strict=True)
            label_map = label_map or label_set.names
            sets[fmt] = canonical_set(label_set)
        if coco is not None:
            sets["coco"] = canonical_set(read_set(coco, "coco", label_map=label_map, sizes=sizes, strict=True))
        if len(sets) < 2:
            if sets:
                report.log.append(f"{folder.name}: only the {next(iter(sets))} format is present, nothing to compare")
            continue
        reference = "yolo" if "yolo" in sets else sorted(sets)[0]
        first = next(iter(sets.values()))
        check = FolderCheck(folder.name, len(first.frames), first.box_count, tuple(sorted(sets)))
        report.checked.append(check)
        report.log.append(f"{check.name}: {check.frames} frames, {check.boxes} boxes, {len(check.formats)} formats "
                          f"({', '.join(check.formats)})")
        report.problems.extend(f"{folder.name}/{p}" for p in compare_sets(sets, reference))
    return report


def render_verify(report: VerifyReport, root: Path, limit: int = 40) -> str:
    """The report as the reference prints it."""
    if not report.found_any:
        return f"No annotation files found under {root}\n"
    lines = list(report.log)
    if report.problems:
        lines.append(f"\nFAILED with {len(report.problems)} problems:")
        lines.extend("  " + p for p in report.problems[:limit])
        if len(report.problems) > limit:
            lines.append(f"  ... and {len(report.problems) - limit} more")
    else:
        lines.append(f"OK: {report.boxes} boxes, every format encodes the same boxes")
    return "\n".join(lines) + "\n"

