"""Contact sheets: one tile per ground-truth box, its prediction (and HBB prompt) on the pixels.

A tile is a square crop around the pair with a margin, scaled to a fixed tile size (so a small
vehicle is enlarged), captioned ``frame:line class IoU angle-error``. Tiles run in the order of
``rows`` (rank order) left to right, top to bottom. All tiles are pasted into one canvas and drawn
in a single axes, so a sheet of dozens of tiles renders in a fraction of a second.

Colours are from the Okabe-Ito palette, which stays distinguishable with every common colour
vision deficiency; the three outlines also differ in line style, so they survive greyscale print.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional, Sequence

import numpy as np
from matplotlib import patheffects
from matplotlib.collections import PolyCollection
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from PIL import Image

from hbb2obb.errors import InputError, UsageError
from hbb2obb.io.atomic import atomic_path
from hbb2obb.io.labelmap import class_name
from hbb2obb.plotting.pixels import FrameImages, image_size_of, open_rgb, to_image_pixels

GT_STYLE = {"color": "#0072B2", "linestyle": "-", "label": "ground truth"}  # Okabe-Ito blue
PRED_STYLE = {"color": "#E69F00", "linestyle": (0, (6, 1.5, 1.5, 1.5)), "label": "prediction"}  # orange, dash-dot
HBB_STYLE = {"color": "#F0F0F0", "linestyle": (0, (3, 2)), "label": "HBB prompt"}  # near-white, dashed
NO_IMAGE_GREY = 200
DPI = 100
CAPTION = 30  # px above each tile for its two caption lines
GAP = 8  # px between tiles
HEADER = 44  # px above the tiles for the title and the legend
MIN_WIDTH = 640  # px, room for the title and the legend above a sheet of few tiles


def crop_windows(*corner_sets: np.ndarray, margin: float = 0.3, min_side=40.0) -> np.ndarray:
    """A square window per row around every box of that row (NaN boxes are ignored).

    Parameters
    ----------
    *corner_sets : ndarray, shape (n, 4, 2)
        Aligned box sets (ground truth, prediction, prompt); a row's NaN corners are left out.
    margin : float
        Space added on every side, as a share of the boxes' larger extent.
    min_side : float or ndarray (n,)
        Smallest window side, so a tiny box keeps some context.

    Returns
    -------
    ndarray, shape (n, 3)
        ``x0, y0, side`` of each window, centred on the boxes.

    Examples
    --------
    >>> crop_windows(np.array([[[10, 10], [30, 10], [30, 20], [10, 20]]]), margin=0.5).tolist()
    [[0.0, -5.0, 40.0]]
    """
    stacked = np.concatenate([np.asarray(c, dtype=np.float64).reshape(-1, 4, 2) for c in corner_sets], axis=1)
    if stacked.shape[0] == 0:
        return np.zeros((0, 3))
    low, high = np.nanmin(stacked, axis=1), np.nanmax(stacked, axis=1)
    side = np.maximum((high - low).max(axis=1) * (1 + 2 * margin), min_side)
    side = np.maximum(side, 1e-9 * np.abs(low).max(axis=1) + 1e-12)  # a point still gets a window
    return np.column_stack([(low + high) / 2 - side[:, None] / 2, side])


def _crop(pixels: np.ndarray, window: np.ndarray, tile: int) -> np.ndarray:
    """The window of ``pixels`` (grey outside the frame), resampled to ``tile`` x ``tile``."""
    x0, y0, side = (float(v) for v in window)
    ix, iy = int(np.floor(x0)), int(np.floor(y0))
    span = int(np.ceil(max(x0 - ix, y0 - iy) + side)) + 1  # an integer block that holds the window
    block = np.full((span, span, 3), NO_IMAGE_GREY, np.uint8)
    height, width = pixels.shape[:2]
    xa, ya, xb, yb = max(ix, 0), max(iy, 0), min(ix + span, width), min(iy + span, height)
    if xb > xa and yb > ya:
        block[ya - iy:yb - iy, xa - ix:xb - ix] = pixels[ya:yb, xa:xb]
    box = (x0 - ix, y0 - iy, x0 - ix + side, y0 - iy + side)
    return np.asarray(Image.fromarray(block).resize((tile, tile), Image.Resampling.LANCZOS, box=box))


def _shorten(text: str, limit: int) -> str:
    """``text`` cut in the middle to ``limit`` characters: frame names differ at both ends."""
    if len(text) <= limit:
        return text
    keep = limit - 1
    return text[: keep - keep // 2] + "\u2026" + text[len(text) - keep // 2:]


def tile_captions(table, rows, label_map: Optional[dict] = None, limit: int = 35) -> list[str]:
    """Two-line captions of ground-truth rows: ``#rank frame:line`` and ``class IoU angle-error``.

    A matched row gives its IoU and orientation error (``Δθ``), with the prediction's class
    when it differs (class-agnostic matching); an unmatched row gives its best IoU. Names are
    shortened in the middle to keep each line within ``limit`` characters.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> from hbb2obb.boxes import Boxes
    >>> gt = Boxes(np.zeros((2, 4, 2)), [0, 1], line=[3, 7])
    >>> t = SimpleNamespace(frame_names=("f",), gt=gt, gt_frame=np.array([0, 0]), pred=gt,
    ...     matched=np.array([True, False]), pred_index=np.array([0, 0]), iou=np.array([0.5, np.nan]),
    ...     angle_error=np.array([2.3, np.nan]), best_iou=np.array([0.5, 0.04]))
    >>> print("\\n".join(tile_captions(t, [1, 0], {0: "Car"})))
    #1 f:7
    1  unmatched (best IoU 0.04)
    #2 f:3
    Car  IoU 0.500  Δθ 2.3°
    """
    rows = np.asarray(rows, dtype=np.int64).reshape(-1)
    label_map = label_map or {}
    matched = table.matched[rows]
    frames = [table.frame_names[k] for k in table.gt_frame[rows]]
    lines = table.gt.line[rows] if table.gt.line is not None else rows + 1
    gt_class = table.gt.class_id[rows]
    pred_class = np.full(rows.size, -1, dtype=np.int64)
    pred_class[matched] = table.pred.class_id[table.pred_index[rows[matched]]]
    texts = []
    for rank, (frame, line, hit) in enumerate(zip(frames, lines, matched)):
        name = class_name(label_map, gt_class[rank])
        if hit and pred_class[rank] != gt_class[rank]:
            name += f" as {class_name(label_map, pred_class[rank])}"
        if hit:
            numbers = f"IoU {table.iou[rows[rank]]:.3f}  \u0394\u03b8 {table.angle_error[rows[rank]]:.1f}\u00b0"
        else:
            numbers = f"unmatched (best IoU {table.best_iou[rows[rank]]:.2f})"
        head = f"#{rank + 1} {_shorten(str(frame), limit - len(str(line)) - 5)}:{line}"
        texts.append(f"{head}\n{_shorten(name, limit - len(numbers) - 2)}  {numbers}")
    return texts


def contact_sheet(table, rows: Sequence[int], images=None, hbb=None, label_map: Optional[dict] = None,
                  title: Optional[str] = None, *, columns: int = 6, tile: int = 200, margin: float = 0.3,
                  min_side: float = 40.0) -> Figure:
    """A sheet of tiles, one per ground-truth box of ``rows``, in that order.

    Parameters
    ----------
    table : MatchTable
        ``evaluate_frames(...).table``.
    rows : sequence of int
        Ground-truth rows of ``table`` to show, in rank order (worst first, say).
    images : path-like, mapping or FrameImages, optional
        The frames' pixels (a folder of images named like the label files). A frame without an
        image gets a grey tile with the boxes alone; :attr:`FrameImages.missing` records it.
    hbb : ndarray (len(table.gt), 4, 2) or Boxes, optional
        The HBB prompt of every ground-truth row (NaN where none), drawn dashed: the
        ``prompt_corners`` of :func:`hbb2obb.analysis.identity_baseline.match_identity_baseline`.
    label_map : dict, optional
        Class id to name, for the captions.
    title : str, optional
        Sheet title.
    columns : int
        Tiles per row of the sheet.
    tile : int
        Tile side in pixels (at the figure's 100 dpi).
    margin, min_side : float
        Crop margin (share of the box extent) and smallest crop side in pixels.

    Returns
    -------
    matplotlib.figure.Figure
        Save it with ``fig.savefig(path, dpi=fig.dpi)`` to keep one tile pixel per pixel.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from hbb2obb.scoring.evaluate import evaluate_frames
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> for sub, line in (("gt", "0 10 10 50 10 50 30 10 30"), ("pred", "0 12 10 52 10 52 30 12 30")):
    ...     (root / sub).mkdir()
    ...     _ = (root / sub / "f.txt").write_text(line + "\\n")
    >>> table = evaluate_frames(root / "gt", root / "pred").table
    >>> fig = contact_sheet(table, [0], {"f": np.zeros((60, 80, 3), np.uint8)}, title="worst")
    >>> [round(v) for v in fig.get_size_inches() * fig.dpi]  # one tile, at least 640 px wide
    [640, 282]
    """
    rows = np.asarray(rows, dtype=np.int64).reshape(-1)
    if rows.size and (rows.min() < 0 or rows.max() >= len(table.gt)):
        raise UsageError(f"rows must index the {len(table.gt)} ground-truth boxes of the table")
    if columns < 1 or tile < 16:
        raise UsageError(f"columns must be positive and tile at least 16 px, got {columns}, {tile}")
    images = FrameImages.of(images)
    label_map = label_map or {}
    n = rows.size
    n_cols, n_rows = max(1, min(columns, n)), max(1, -(-n // columns))
    width = max(GAP + n_cols * (tile + GAP), MIN_WIDTH)
    height = n_rows * (CAPTION + tile + GAP)

    matched = table.matched[rows]
    gt = table.gt.corners[rows]
    pred = np.full_like(gt, np.nan)
    if matched.any():
        pred[matched] = table.pred.corners[table.pred_index[rows[matched]]]
    prompt = np.full_like(gt, np.nan)
    if hbb is not None:
        prompt = np.asarray(getattr(hbb, "corners", hbb), dtype=np.float64)[rows]

    canvas = np.full((height, width, 3), 255, np.uint8)
    frames = table.gt_frame[rows]
    sources, sizes = {}, {}
    for k in np.unique(frames).tolist():
        sources[k] = images.locate(table.frame_names[k])
        if sources[k] is not None:
            try:
                sizes[k] = image_size_of(sources[k])
            except InputError as exc:  # an unreadable frame gets tiles without pixels
                images.missing[table.frame_names[k]] = str(exc)
                sources[k] = None
    for k, size in sizes.items():  # every box of a frame into its image's pixel coordinates
        here = frames == k
        for corners in (gt, pred, prompt):
            corners[here] = to_image_pixels(corners[here], table.frame_sizes[k], size)
    has_pixels = np.array([sources[k] is not None for k in frames.tolist()], dtype=bool)
    # Without pixels the coordinates may be normalized: frame the boxes alone.
    windows = crop_windows(gt, pred, prompt, margin=margin, min_side=np.where(has_pixels, min_side, 0.0))
    slot = np.arange(n)
    origin = np.column_stack([GAP + (slot % columns) * (tile + GAP),
                              CAPTION + (slot // columns) * (CAPTION + tile + GAP)]).astype(np.float64)
    for k, source in sources.items():  # decode each frame once, crop all its tiles
        here = np.flatnonzero(frames == k)
        pixels = None
        if source is not None:
            try:
                pixels = np.asarray(open_rgb(source)[0])
            except InputError as exc:  # a header that reads but pixels that do not
                images.missing[table.frame_names[k]] = str(exc)
        for i in here:
            x, y = (int(v) for v in origin[i])
            canvas[y:y + tile, x:x + tile] = NO_IMAGE_GREY if pixels is None else _crop(pixels, windows[i], tile)
    scale = (tile / windows[:, 2])[:, None, None]

    def on_canvas(corners):
        return (corners - windows[:, None, :2]) * scale + origin[:, None, :]

    fig = Figure(figsize=(width / DPI, (height + HEADER) / DPI), dpi=DPI, facecolor="white")
    ax = fig.add_axes((0, 0, 1, height / (height + HEADER)))
    ax.imshow(canvas, extent=(0, width, height, 0), interpolation="nearest")
    ax.set_xlim(0, width)
    ax.set_ylim(height, 0)
    ax.set_axis_off()
    halo = [patheffects.withStroke(linewidth=3.4, foreground=(0, 0, 0, 0.45))]
    handles = []
    for corners, style, width_pt in ((prompt, HBB_STYLE, 1.3), (gt, GT_STYLE, 1.8), (pred, PRED_STYLE, 1.8)):
        drawn = np.isfinite(corners).all(axis=(1, 2))
        if style is HBB_STYLE and hbb is None:
            continue
        collection = PolyCollection(on_canvas(corners)[drawn], closed=True, facecolors="none",
                                    edgecolors=style["color"], linestyles=[style["linestyle"]], linewidths=width_pt)
        collection.set_path_effects(halo)
        ax.add_collection(collection)
        handles.append(Line2D([], [], color=style["color"], ls=style["linestyle"], lw=width_pt,
                              label=style["label"], path_effects=halo))
    limit = int(tile / 5.6)
    for i, text in enumerate(tile_captions(table, rows, label_map, limit)):
        ax.text(origin[i, 0], origin[i, 1] - 2, text, fontsize=7.5, va="bottom", ha="left", linespacing=1.15)
    for i in np.flatnonzero(~has_pixels):
        ax.text(origin[i, 0] + tile / 2, origin[i, 1] + tile - 6, "no image", fontsize=7.5, ha="center",
                va="bottom", color="#333333")
    if n == 0:
        ax.text(width / 2, height / 2, "no pairs to show", ha="center", va="center", fontsize=9)
    header = 1 - HEADER / 2 / (height + HEADER)
    fig.text(GAP / width, header, title or f"{n} pairs", fontsize=10, fontweight="bold", va="center", ha="left")
    order = [GT_STYLE["label"], PRED_STYLE["label"], HBB_STYLE["label"]]
    handles.sort(key=lambda handle: order.index(handle.get_label()))
    fig.legend(handles=handles, loc="center right", bbox_to_anchor=(1 - GAP / width, header), ncol=len(handles),
               fontsize=8, frameon=False, handlelength=2.6, columnspacing=1.2, borderaxespad=0)
    return fig


def write_contact_sheet(path, table, rows, images=None, **options) -> dict:
    """Draw :func:`contact_sheet` and save it (PNG at one tile pixel per pixel).

    Returns
    -------
    dict
        Frame name to the reason its tiles had no pixels, for the caller to warn about.
    """
    images = FrameImages.of(images)
    fig = contact_sheet(table, rows, images, **options)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    # zlib level 3: half the time of the default 6, files a few per cent larger (photographic tiles)
    with atomic_path(path) as temporary:
        fig.savefig(temporary, dpi=fig.dpi, pil_kwargs={"compress_level": 3} if path.suffix.lower() == ".png" else None)
    shown = {table.frame_names[k] for k in table.gt_frame[np.asarray(rows, dtype=np.int64)].tolist()}
    return {name: reason for name, reason in images.missing.items() if name in shown}
