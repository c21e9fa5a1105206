"""How often the built-in converter reads a frame's HBB prompts right (tight, corner-cutting, margin).

    python tools/reading_scores.py SET [SET ...] [--samples songdo-sample dota-sample] [--data DIR]

Each ``SET`` is a generated set (``python -m hbb2obb.synthetic OUT --prompts KIND [--margin LOW
HIGH] [--look day|thermal|night]``) whose prompts are of one known kind: the kind is taken from
the folder's name (``tight``, ``corner``, or ``margin``/``mlow``/``mhigh``). Every frame's prompts
are read as ``--tightness auto --margin auto`` reads them
(:func:`hbb2obb.converters.image.reading.read_prompts`, after the whole-pixel test) and compared
with the kind: ``tight`` must be read tight without a margin, ``corner`` as corner-cutting
(``loose``) without a margin, a margin as any reading with a margin. ``--samples`` also reads the
shared samples' own HBBs (Songdo's corner-cutting, DOTA's tight) and prompts of every kind made
from their ground truth (as ``tools/converter_scores.py --prompts`` makes them, margins 0-10%).
Prints one line per frame that is read wrong and one per set.

``--cost`` also converts every frame read wrong twice, as ``auto`` reads it and as its known kind
says (``--tightness tight --margin 0``, ``--tightness loose --margin 0``, or ``--margin`` at the
frame's true margin: the mean over its boxes and sides of how far each prompt side lies outside
the ground truth's bounds, a share of their size), scores both against ``labels_obb_gt`` and
prints what the misreading cost in mean IoU; the last line gives the mean cost over those frames.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

from hbb2obb.converters import get_converter
from hbb2obb.converters.image.converter import hbb_xyxy, read_frame
from hbb2obb.converters.image.params import ImageParams
from hbb2obb.converters.image.reading import read_prompts
from hbb2obb.converters.image.scene import estimate_tightness
from hbb2obb.io import find_image, image_size, read_yolo_hbb, read_yolo_obb
from hbb2obb.scoring.metric_dict import evaluate_obb

sys.path.insert(0, str(Path(__file__).resolve().parent))
from converter_scores import link_subset, write_prompts  # noqa: E402  (a sibling script, not a package)


def kind_of(name: str) -> str:
    """The prompt kind a generated set's folder name says."""
    for word, kind in (("tight", "tight"), ("corner", "corner"), ("margin", "margin"), ("mlow", "margin"),
                       ("mhigh", "margin")):
        if word in name:
            return kind
    raise SystemExit(f"{name}: the folder's name says no prompt kind (tight, corner, margin)")


def reading_of(image_path: Path, hbb_path: Path, params: ImageParams) -> tuple[str, float, tuple]:
    """``(tightness, margin, edges)`` as the converter's auto reading decides them for one frame
    (no edges for HBBs on whole pixels, which are tight without reading the pixels)."""
    label_file = read_yolo_hbb(hbb_path, strict=False)
    image = read_frame(image_path)
    xyxy = hbb_xyxy(label_file, image.size)
    if estimate_tightness(xyxy, params) == "tight":
        return "tight", 0.0, ()
    reading = read_prompts(image.convert("RGB") if image.mode != "RGB" else image, xyxy, params)
    return reading.tightness, reading.margin, reading.edges


def right(kind: str, tightness: str, margin: float) -> bool:
    if kind == "margin":
        return margin > 0
    return margin == 0 and tightness == ("tight" if kind == "tight" else "loose")


def true_margin(hbb_path: Path, truth_path: Path, size: tuple) -> float:
    """The mean share of the ground truth's bounds by which the prompts' sides lie outside them
    (prompts and ground truth line by line, as the generator and :func:`write_prompts` write them)."""
    xyxy = hbb_xyxy(read_yolo_hbb(hbb_path, strict=True), size)
    corners = read_yolo_obb(truth_path, strict=True).boxes.corners
    if len(corners) != len(xyxy) or not len(xyxy):
        raise SystemExit(f"{hbb_path}: not one prompt per ground-truth box of {truth_path}")
    low, high = corners.min(axis=1), corners.max(axis=1)
    extent = np.tile(high - low, 2)
    outward = np.concatenate([low - xyxy[:, :2], xyxy[:, 2:] - high], axis=1)
    return float(np.mean(outward / extent))


def misreading_cost(images: Path, hbb_path: Path, truth: Path, kind: str, work: Path) -> tuple[float, float]:
    """Mean IoU of one frame converted as ``auto`` reads it and as its known ``kind`` says."""
    image_path = find_image(images, hbb_path.stem)
    if kind == "margin":
        right_params = {"margin": round(true_margin(hbb_path, truth / hbb_path.name, image_size(image_path)), 4)}
    else:
        right_params = {"tightness": "tight" if kind == "tight" else "loose", "margin": 0.0}
    frame = link_subset(images, work / "images", [hbb_path.stem])
    prompts = link_subset(hbb_path.parent, work / "hbb", [hbb_path.stem])
    truth_part = link_subset(truth, work / "truth", [hbb_path.stem])
    scores = []
    for label, given in (("auto", {}), ("right", right_params)):
        get_converter("image").convert(prompts, work / label, given, img_source=frame)
        scores.append(float(evaluate_obb(truth_part, work / label)["avg_iou"]))
    return scores[0], scores[1]


def score_set(name: str, images: Path, hbbs: Path, kind: str, params: ImageParams,
              truth: Path | None = None, costs: list | None = None) -> tuple[int, int]:
    """Read every frame of one set; with ``costs`` (a list to extend) and ``truth``, what each misreading cost."""
    good = total = 0
    for hbb_path in sorted(hbbs.glob("*.txt")):
        tightness, margin, edges = reading_of(find_image(images, hbb_path.stem), hbb_path, params)
        ok = right(kind, tightness, margin)
        good += ok
        total += 1
        if not ok:
            cost = ""
            if costs is not None and truth is not None:
                with tempfile.TemporaryDirectory(prefix="reading_cost_") as work:
                    auto, right_reading = misreading_cost(images, hbb_path, truth, kind, Path(work))
                costs.append(right_reading - auto)
                cost = f"; mean IoU {auto:.4f} as read, {right_reading:.4f} as known: cost {right_reading - auto:+.4f}"
            print(f"  wrong: {name} {hbb_path.stem} ({kind}) read {tightness} margin {margin:.3f}, "
                  f"edges (all, diagonal, colour along the axes, slope) {np.round(edges, 3).tolist()}{cost}")
    print(f"{name} ({kind}): {good}/{total}")
    return good, total


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sets", nargs="*", type=Path)
    parser.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[1].parent / "shared" / "data")
    parser.add_argument("--samples", nargs="*", default=[])
    parser.add_argument("--cost", action="store_true",
                        help="Convert each frame read wrong as read and as known, and print the IoU it cost.")
    args = parser.parse_args(argv)
    params = ImageParams()
    costs = [] if args.cost else None
    good = total = 0
    for folder in args.sets:
        g, t = score_set(folder.name, folder / "images", folder / "labels_hbb", kind_of(folder.name), params,
                         folder / "labels_obb_gt", costs)
        good, total = good + g, total + t
    generated = (good, total)
    for name in args.samples:
        sample = args.data / name
        own = "corner" if name.startswith("songdo") else "tight"
        truth = sample / "labels_obb_gt"
        g, t = score_set(f"{name} own HBBs", sample / "images", sample / "labels_hbb", own, params, truth, costs)
        good, total = good + g, total + t
        for kind in ("tight", "corner", "margin"):
            with tempfile.TemporaryDirectory(prefix="reading_scores_") as work:
                hbbs = write_prompts(truth, Path(work) / "hbb", kind, (0.0, 0.10))
                g, t = score_set(f"{name} {kind} prompts", sample / "images", hbbs, kind, params, truth, costs)
            good, total = good + g, total + t
    if generated[1]:
        print(f"generated: {generated[0]}/{generated[1]} = {generated[0] / generated[1]:.0%}")
    print(f"all: {good}/{total} = {good / max(total, 1):.0%}")
    if costs:
        print(f"misreading cost: mean IoU {np.mean(costs):+.4f} over {len(costs)} frame(s) read wrong "
              f"(from {min(costs):+.4f} to {max(costs):+.4f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
