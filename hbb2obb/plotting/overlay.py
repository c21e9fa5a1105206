"""Per-frame overlays: every prediction drawn on the (downscaled) frame, coloured by its IoU.

Every ground-truth box is drawn thin, so a prediction can be read against its target. Matched
predictions are coloured over a fixed IoU range, so colours mean the same in every frame, on the
bright upper part of plasma (:data:`IOU_CMAP`: pink through orange to yellow, luminance rising
with IoU and no dark end), each line with a dark halo: bright on dark asphalt, edged on light
ground. Ground-truth boxes nobody matched and predictions nobody chose are drawn in two broken
styles in hues outside that colormap. The frame's mean IoU sits in the top-left corner; a footer
strip holds the colour bar and the legend, so nothing covers the pixels.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional, Union

import numpy as np
from matplotlib import colormaps, patheffects
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.cm import ScalarMappable
from matplotlib.collections import PolyCollection
from matplotlib.colors import ListedColormap, Normalize
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from PIL import Image

from hbb2obb.errors import InputError, UsageError
from hbb2obb.io.atomic import atomic_path
from hbb2obb.plotting import OVERLAY_SIZE
from hbb2obb.plotting.pixels import FrameImages, ImageSource, image_size_of, open_rgb, to_image_pixels

DEFAULT_SIZE = OVERLAY_SIZE
IOU_RANGE = (0.5, 1.0)  # below 0.5 every pair is equally bad; the colours spend their range above
IOU_CMAP = ListedColormap(colormaps["plasma"](np.linspace(0.5, 1.0, 256)), name="plasma_bright")
"""The IoU colours: plasma without its dark purple third, which vanished on asphalt."""
GROUND_TRUTH = {"color": "white", "linestyle": "solid"}  # thin, under the predictions
UNMATCHED_GT = {"color": "#56B4E9", "linestyle": (0, (4, 2))}  # Okabe-Ito sky blue, dashed
UNMATCHED_PRED = {"color": "#3DDC97", "linestyle": (0, (1.5, 1.2))}  # a bright bluish green, dotted
DPI = 100


def frame_index(table, frame: Union[int, str]) -> int:
    """The index of ``frame`` (an index or a frame name) in ``table.frame_names``."""
    if isinstance(frame, (int, np.integer)):
        if not 0 <= frame < len(table.frame_names):
            raise UsageError(f"frame index {frame} out of range (the table has {len(table.frame_names)} frames)")
        return int(frame)
    try:
        return table.frame_names.index(frame)
    except ValueError:
        raise UsageError(f"frame {frame!r} is not in the table") from None


@dataclass(frozen=True)
class FrameBoxes:
    """One frame's boxes sorted for drawing, in the table's coordinates.

    ``pred_iou`` is the IoU of each matched prediction (the highest, when it is the best match of
    several ground-truth boxes); ``mean_iou`` is over the frame's matched ground-truth boxes.
    """

    matched_pred: np.ndarray
    pred_iou: np.ndarray
    gt: np.ndarray
    unmatched_gt: np.ndarray
    unmatched_pred: np.ndarray
    mean_iou: float
    n_pairs: int


def frame_boxes(table, frame: int) -> FrameBoxes:
    """Split frame ``frame``'s boxes of a :class:`~hbb2obb.scoring.evaluate.MatchTable` for drawing."""
    gt_rows = np.flatnonzero(table.gt_frame == frame)
    pred_rows = np.flatnonzero(table.pred_frame == frame)
    hit = gt_rows[table.matched[gt_rows]]
    best = np.full(len(table.pred), -np.inf)
    np.maximum.at(best, table.pred_index[hit], table.iou[hit])
    chosen = pred_rows[table.pred_matched[pred_rows]]
    ious = table.iou[hit]
    return FrameBoxes(
        matched_pred=table.pred.corners[chosen],
        pred_iou=best[chosen],
        gt=table.gt.corners[gt_rows],
        unmatched_gt=table.gt.corners[gt_rows[~table.matched[gt_rows]]],
        unmatched_pred=table.pred.corners[pred_rows[~table.pred_matched[pred_rows]]],
        mean_iou=float(ious.mean()) if ious.size else float("nan"),
        n_pairs=int(ious.size),
    )


def _layout(original: tuple[int, int], size: int) -> tuple[tuple[int, int], int, float]:
    """Picture size, footer height and drawing scale: the output's long side is ``size``
    (smaller frames are not enlarged)."""
    scale = max(0.6, min(size, max(original)) / DEFAULT_SIZE)  # text and lines follow the picture's size
    footer = round(56 * scale)
    width, height = original
    shrink = min(1.0, size / width, (size - footer) / height)
    if shrink <= 0:
        raise UsageError(f"overlay size {size} is too small")
    return (max(1, round(width * shrink)), max(1, round(height * shrink))), footer, scale


def overlay_frame(image: ImageSource, table, frame: Union[int, str], size: int = DEFAULT_SIZE, *,
                  cmap=IOU_CMAP, iou_range: tuple[float, float] = IOU_RANGE) -> Image.Image:
    """Draw one frame's predictions on its image, coloured by IoU; return an RGB image.

    Parameters
    ----------
    image : path-like, PIL.Image.Image or ndarray
        The frame. A JPEG path is decoded at a reduced scale, which is the fast way.
    table : MatchTable
        ``evaluate_frames(...).table``.
    frame : int or str
        Frame index in ``table.frame_names``, or the frame's name.
    size : int
        Long side of the result in pixels, footer included; frames are never enlarged.
    cmap : str or Colormap
        Colormap for the IoU of matched predictions; the default, :data:`IOU_CMAP`, has no dark end.
    iou_range : (float, float)
        IoU mapped to the two ends of the colormap; lower IoUs take the low end.

    Returns
    -------
    PIL.Image.Image
        RGB, ready to save as JPEG.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from hbb2obb.scoring.evaluate import evaluate_frames
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> for sub, line in (("gt", "0 10 10 50 10 50 30 10 30"), ("pred", "0 12 10 52 10 52 30 12 30")):
    ...     (root / sub).mkdir()
    ...     _ = (root / sub / "f.txt").write_text(line + "\\n")
    >>> table = evaluate_frames(root / "gt", root / "pred").table
    >>> picture = overlay_frame(np.zeros((60, 80, 3), np.uint8), table, "f")
    >>> picture.mode, picture.size[0]
    ('RGB', 80)
    """
    if size < 64:
        raise UsageError(f"overlay size must be at least 64 px, got {size}")
    index = frame_index(table, frame)
    original = image_size_of(image)
    (width, height), footer, scale = _layout(original, size)
    pixels, _ = open_rgb(image, (width, height))
    boxes = frame_boxes(table, index)
    to_pixels = np.array([width / original[0], height / original[1]])

    def drawn(corners):
        return to_image_pixels(corners, table.frame_sizes[index], original) * to_pixels

    # The boxes are drawn on a transparent figure and laid over the pixels by PIL: letting
    # matplotlib resample a frame-sized image would cost most of the time.
    fig = Figure(figsize=(width / DPI, (height + footer) / DPI), dpi=DPI, facecolor="none")
    ax = fig.add_axes((0, footer / (height + footer), 1, height / (height + footer)))
    ax.set_xlim(0, width)
    ax.set_ylim(height, 0)
    ax.set_axis_off()
    norm = Normalize(*iou_range, clip=True)
    mappable = ScalarMappable(norm=norm, cmap=cmap)
    line_width = 1.6 * scale
    gt_width = 0.8 * scale

    def dark_halo(width):
        """Every colour here is bright: a dark edge keeps it readable on light ground too."""
        return [patheffects.withStroke(linewidth=width + 1.6 * scale, foreground=(0, 0, 0, 0.65))]

    truth = PolyCollection(drawn(boxes.gt), closed=True, facecolors="none", edgecolors=GROUND_TRUTH["color"],
                           linewidths=gt_width)
    truth.set_path_effects(dark_halo(gt_width))
    ax.add_collection(truth)
    for corners, style in ((boxes.unmatched_gt, UNMATCHED_GT), (boxes.unmatched_pred, UNMATCHED_PRED)):
        unmatched = PolyCollection(drawn(corners), closed=True, facecolors="none", edgecolors=style["color"],
                                   linestyles=[style["linestyle"]], linewidths=line_width * 1.25)
        unmatched.set_path_effects(dark_halo(line_width * 1.25))
        ax.add_collection(unmatched)
    matched = PolyCollection(drawn(boxes.matched_pred), closed=True, facecolors="none",
                             edgecolors=mappable.to_rgba(boxes.pred_iou), linewidths=line_width)
    matched.set_path_effects(dark_halo(line_width))
    ax.add_collection(matched)
    font = 11 * scale
    mean = "no matched pair" if boxes.n_pairs == 0 else f"mean IoU {boxes.mean_iou:.3f} ({boxes.n_pairs} pairs)"
    ax.text(6 * scale, 6 * scale, f"{table.frame_names[index]}   {mean}", fontsize=font, color="white",
            va="top", ha="left", bbox={"facecolor": "black", "alpha": 0.65, "edgecolor": "none", "pad": 3 * scale})

    band = footer / (height + footer)
    cax = fig.add_axes((0.64, band * 0.52, 0.33, band * 0.3))
    bar = fig.colorbar(mappable, cax=cax, orientation="horizontal", extend="min")
    bar.ax.tick_params(labelsize=font * 0.8, length=2 * scale, pad=1.5 * scale)
    cax.text(-0.07, 0.5, "IoU of matched prediction", transform=cax.transAxes, ha="right", va="center",
             fontsize=font * 0.85)
    handles = [
        Line2D([], [], lw=gt_width * 1.5, ls=GROUND_TRUTH["linestyle"], color=GROUND_TRUTH["color"],
               path_effects=dark_halo(gt_width * 1.5), label=f"ground truth ({len(boxes.gt)})"),
        Line2D([], [], lw=line_width * 1.25, ls=UNMATCHED_GT["linestyle"], color=UNMATCHED_GT["color"],
               label=f"unmatched ground truth ({len(boxes.unmatched_gt)})"),
        Line2D([], [], lw=line_width * 1.25, ls=UNMATCHED_PRED["linestyle"], color=UNMATCHED_PRED["color"],
               label=f"unmatched prediction ({len(boxes.unmatched_pred)})"),
    ]
    fig.legend(handles=handles, loc="center left", bbox_to_anchor=(0.005, band / 2), ncol=2,
               fontsize=font * 0.85, frameon=False, handlelength=2.5, borderaxespad=0, labelspacing=0.3)
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    drawing = Image.frombuffer("RGBA", canvas.get_width_height(), canvas.buffer_rgba(), "raw", "RGBA", 0, 1)
    picture = Image.new("RGBA", drawing.size, "white")
    picture.paste(pixels, (0, 0))
    return Image.alpha_composite(picture, drawing).convert("RGB")


@dataclass
class OverlayRun:
    """What :func:`write_overlays` did: the files written and the frames skipped, with why."""

    written: list = field(default_factory=list)
    skipped: dict = field(default_factory=dict)

    def warnings(self) -> list[tuple[str, str]]:
        """``(kind, message)`` pairs for :func:`hbb2obb.cli.common.warn`, one per skipped frame."""
        return [("overlay", f"frame {name}: {reason}: no overlay written") for name, reason in self.skipped.items()]


def overlay_path(out_dir, name: str) -> Path:
    """Where :func:`write_overlays` writes the overlay of the frame ``name``."""
    return Path(out_dir) / f"{name}.jpg"


def write_overlays(table, images, out_dir, size: int = DEFAULT_SIZE, *, quality: int = 85,
                   progress: Optional[Callable[[int], None]] = None, **options) -> OverlayRun:
    """Write ``OUT_DIR/<frame>.jpg`` for every frame of ``table`` that has an image.

    Parameters
    ----------
    table : MatchTable
    images : path-like, mapping or FrameImages
        Where the frames' pixels are (see :class:`~hbb2obb.plotting.pixels.FrameImages`).
    out_dir : path-like
        Created when absent. Must not be the image folder (the JPEGs would replace the frames).
    size : int
        Long side of each overlay in pixels.
    quality : int
        JPEG quality.
    progress : callable, optional
        Called with 1 after each frame.
    **options
        Passed to :func:`overlay_frame` (``cmap``, ``iou_range``).

    Returns
    -------
    OverlayRun
        Files written, and frames skipped (no image, or an unreadable one).
    """
    images = FrameImages.of(images)
    out_dir = Path(out_dir)
    if isinstance(images.source, Path) and out_dir.resolve() == images.source.resolve():
        raise UsageError(f"--overlay {out_dir}: the overlay folder must not be the image folder")
    out_dir.mkdir(parents=True, exist_ok=True)
    run = OverlayRun()
    for index, name in enumerate(table.frame_names):
        found = images.locate(name)
        if found is not None:
            try:
                picture = overlay_frame(found, table, index, size, **options)
            except InputError as exc:  # an unreadable frame costs its overlay, never the run
                images.missing[name] = str(exc)
            else:
                path = overlay_path(out_dir, name)
                with atomic_path(path) as temporary:  # a killed run leaves the old overlay or the new one
                    picture.save(temporary, format="JPEG", quality=quality, optimize=True)
                run.written.append(path)
        if name in images.missing:
            run.skipped[name] = images.missing[name]
        if progress:
            progress(1)
    return run
