"""Whether the formats found under a folder encode the same boxes (``hbb2obb-convert --verify``).

Every reading is rounded once to the canonical two decimals and compared by exact equality of
the integer corners and of the class, frame by frame and box by box, against the YOLO reading
(or the first format by name), as the reference converter does. The folder and each of its
subfolders is checked, in every layout ``hbb2obb-convert`` writes: the per-frame formats of a
folder, every COCO file inside it, and ``labels_NAME/`` paired with a ``coco_annotations_NAME.json``
beside it (``labels/`` with ``coco_annotations.json``). The reference checks the subfolders only
when the folder holds no YOLO, DOTA or VOC file, and never a COCO file beside LabelMe files.
A run that compared nothing has :attr:`VerifyReport.passed` false.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from hbb2obb.io.format_detection import label_files, sniff_format
from hbb2obb.io.format_names import REGISTERED
from hbb2obb.io.frame_labels import integer_corners
from hbb2obb.io.images import ImageSizes
from hbb2obb.io.label_sets import ALL_FORMATS, DOTA_EXT, LabelSet, canonical_set, read_set, resolve_names
from hbb2obb.io.written import MANIFEST_NAME

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
    found_any: bool = False  # any label file at all

    @property
    def boxes(self) -> int:
        return sum(check.boxes for check in self.checked)

    @property
    def passed(self) -> bool:
        """At least one folder compared, and no disagreement."""
        return bool(self.checked) and not self.problems


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


def _paired_coco(folder: Path) -> Optional[Path]:
    """The COCO file one level up that goes with a label folder, as the reference pairs them."""
    if folder.name == "labels":
        name = "coco_annotations.json"
    elif folder.name.startswith("labels_"):
        name = f"coco_annotations_{folder.name[len('labels_'):]}.json"
    else:
        return None
    candidate = folder.parent / name
    return candidate if candidate.is_file() else None


def _coco_files(folder: Path) -> list[Path]:
    """The COCO files inside a folder (``hbb2obb-convert`` writes its COCO file beside the others)."""
    return [p for p in sorted(folder.glob("*.json"))
            if p.name != MANIFEST_NAME and p.is_file() and sniff_format(p) == "coco"]


def _folders(root: Path) -> list[Path]:
    """The folder itself, then each subfolder (label side-cars left out)."""
    subs = sorted(p for p in root.iterdir() if p.is_dir() and p.name not in SIDECAR_DIRS)
    return [root] + subs


def _sources(folder: Path, root: Path, dota_ext: str) -> list[tuple[str, str, Path]]:
    """``(label, format, path)`` of every reading of one folder's labels.

    The per-frame formats in the folder, every COCO file in it (the root's own ones that belong
    to a ``labels_NAME/`` subfolder excepted), and the COCO file paired with it one level up.
    """
    one_file = {"coco", *(name for name, spec in REGISTERED.items() if spec.one_file)}
    found = [(fmt, fmt, folder) for fmt in ALL_FORMATS if fmt not in one_file and label_files(folder, fmt, dota_ext)]
    for fmt in sorted(one_file - {"coco"}):  # a one-file format other than COCO: each of its files in the folder
        files = label_files(folder, fmt)
        found += [(fmt if len(files) == 1 else f"{fmt}:{p.name}", fmt, p) for p in files]
    cocos = _coco_files(folder)
    if folder == root:  # a root COCO file paired with a subfolder is read with that subfolder
        taken = {_paired_coco(sub) for sub in _folders(root)[1:]}
        cocos = [p for p in cocos if p not in taken]
    elif _paired_coco(folder) is not None:
        cocos.append(_paired_coco(folder))
    for path in cocos:
        found.append(("coco" if len(cocos) == 1 else f"coco:{path.name}", "coco", path))
    return found


def verify_tree(source: Path, *, map_path: Optional[Path], sizes: Optional[ImageSizes] = None,
                dota_ext: str = DOTA_EXT) -> VerifyReport:
    """Check every folder under ``source`` (see the module notes); broken files raise as for ground truth."""
    source = Path(source)
    root = source if source.is_dir() else source.parent
    report = VerifyReport()
    if sizes is None:
        sizes = ImageSizes(root / "images") if (root / "images").is_dir() else ImageSizes()
    for folder in _folders(root):
        sources = _sources(folder, root, dota_ext)
        if not sources:
            continue
        report.found_any = True
        if len(sources) < 2:
            report.log.append(f"{folder.name}: only the {sources[0][0]} format is present, nothing to compare")
            continue
        label_map = resolve_names(map_path, folder)
        read: dict[str, LabelSet] = {}
        for label, fmt, path in sorted(sources, key=lambda s: s[1] == "dota"):  # DOTA needs names: read it last
            label_set = read_set(path, fmt, label_map=label_map, sizes=sizes, strict=True, dota_ext=dota_ext)
            label_map = label_map or label_set.names
            read[label] = canonical_set(label_set)
        sets = {label: read[label] for label, _, _ in sources}  # compared in the reference's order
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
    elif report.checked:
        lines.append(f"OK: {report.boxes} boxes, every format encodes the same boxes")
    return "\n".join(lines) + "\n"

