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
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

from hbb2obb.converters.image.converter import hbb_xyxy, read_frame
from hbb2obb.converters.image.params import ImageParams
from hbb2obb.converters.image.reading import read_prompts
from hbb2obb.converters.image.scene import estimate_tightness
from hbb2obb.io import find_image, read_yolo_hbb

sys.path.insert(0, str(Path(__file__).resolve().parent))
from converter_scores import write_prompts  # noqa: E402  (a sibling script, not a package)


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


def score_set(name: str, images: Path, hbbs: Path, kind: str, params: ImageParams) -> tuple[int, int]:
    good = total = 0
    for hbb_path in sorted(hbbs.glob("*.txt")):
        tightness, margin, edges = reading_of(find_image(images, hbb_path.stem), hbb_path, params)
        ok = right(kind, tightness, margin)
        good += ok
        total += 1
        if not ok:
            print(f"  wrong: {name} {hbb_path.stem} ({kind}) read {tightness} margin {margin:.3f}, "
                  f"edges (all, diagonal, colour along the axes, slope) {np.round(edges, 3).tolist()}")
    print(f"{name} ({kind}): {good}/{total}")
    return good, total


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sets", nargs="*", type=Path)
    parser.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[1].parent / "shared" / "data")
    parser.add_argument("--samples", nargs="*", default=[])
    args = parser.parse_args(argv)
    params = ImageParams()
    good = total = 0
    for folder in args.sets:
        g, t = score_set(folder.name, folder / "images", folder / "labels_hbb", kind_of(folder.name), params)
        good, total = good + g, total + t
    generated = (good, total)
    for name in args.samples:
        sample = args.data / name
        own = "corner" if name.startswith("songdo") else "tight"
        g, t = score_set(f"{name} own HBBs", sample / "images", sample / "labels_hbb", own, params)
        good, total = good + g, total + t
        for kind in ("tight", "corner", "margin"):
            with tempfile.TemporaryDirectory(prefix="reading_scores_") as work:
                hbbs = write_prompts(sample / "labels_obb_gt", Path(work) / "hbb", kind, (0.0, 0.10))
                g, t = score_set(f"{name} {kind} prompts", sample / "images", hbbs, kind, params)
            good, total = good + g, total + t
    if generated[1]:
        print(f"generated: {generated[0]}/{generated[1]} = {generated[0] / generated[1]:.0%}")
    print(f"all: {good}/{total} = {good / max(total, 1):.0%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
