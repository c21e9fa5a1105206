#!/usr/bin/env python3
"""Draw the manual's two pictures (README.md, docs/) from the generated demo data (``make figures``).

* ``DOCS/worst_iou.png``: the contact sheet ``hbb2obb-analyze --worst N -i IMAGES -o OUT`` writes
  as ``worst_iou.png`` (ground truth, prediction, HBB prompt), stored as a 256-colour PNG so the
  committed file stays small;
* ``DOCS/overlay.jpg``: the overlay ``--overlay DIR`` writes, of the demo frame that shows the
  most (unmatched boxes of both kinds first, then the most pairs below IoU 0.75).

Usage::

    python tools/readme_figures.py demo/data docs [--tiles 12] [--size 1200]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from PIL import Image

from hbb2obb.analysis.cuts import worst_pairs
from hbb2obb.analysis.identity_baseline import match_identity_baseline
from hbb2obb.io import ImageSizes, load_label_map
from hbb2obb.plotting.contact_sheet import contact_sheet
from hbb2obb.plotting.overlay import overlay_frame
from hbb2obb.plotting.pixels import FrameImages
from hbb2obb.scoring.evaluate import evaluate_frames


def most_telling_frame(table) -> int:
    """Frame with unmatched ground truth and unmatched predictions, then most pairs below 0.75."""
    frames = np.arange(len(table.frame_names))
    missed = np.bincount(table.gt_frame[~table.matched], minlength=frames.size) > 0
    extra = np.bincount(table.pred_frame[~table.pred_matched], minlength=frames.size) > 0
    low = np.bincount(table.gt_frame[table.matched & (table.iou < 0.75)], minlength=frames.size)
    return int(np.lexsort((frames, -low, -(missed.astype(int) + extra.astype(int))))[0])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path, help="a dataset written by python -m hbb2obb.synthetic.dataset")
    parser.add_argument("docs", type=Path, help="folder to write worst_iou.png and overlay.jpg into")
    parser.add_argument("--tiles", type=int, default=12, help="tiles on the sheet (default 12)")
    parser.add_argument("--size", type=int, default=1200, help="overlay long side in pixels (default 1200)")
    args = parser.parse_args()
    images = FrameImages(args.data / "images")
    table = evaluate_frames(args.data / "labels_obb_gt", args.data / "labels_obb_pred",
                            sizes=ImageSizes(args.data / "images")).table
    label_map = load_label_map(args.data / "classes.yaml")
    prompts = match_identity_baseline(table, args.data / "labels_hbb").prompt_corners
    rows = worst_pairs(table, args.tiles, "iou")
    fig = contact_sheet(table, rows, images, hbb=prompts, label_map=label_map,
                        title=f"{len(rows)} worst of {table.n_matches} pairs by IoU, lowest first")
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    sheet = Image.fromarray(np.asarray(canvas.buffer_rgba())[..., :3])
    args.docs.mkdir(parents=True, exist_ok=True)
    sheet.quantize(256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE).save(
        args.docs / "worst_iou.png", optimize=True)
    frame = most_telling_frame(table)
    name = table.frame_names[frame]
    overlay_frame(images.locate(name), table, frame, args.size).save(args.docs / "overlay.jpg", quality=85,
                                                                      optimize=True)
    for path in (args.docs / "worst_iou.png", args.docs / "overlay.jpg"):
        print(f"wrote {path} ({path.stat().st_size // 1024} KB)")
    print(f"overlay of frame {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
