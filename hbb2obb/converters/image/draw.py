"""Pictures of what the ``image`` converter did on a frame: HBB, mask, contour and OBB, with Pillow.

Colours follow the Okabe-Ito palette (readable for colour-blind eyes): the HBB prompt in blue,
the mask as a translucent bluish-green fill, its convex contour in vermilion, the OBB in
yellow, a fallback (the HBB emitted as is) in reddish purple. Each OBB is labelled with its class
name (from a label map, else its id), and a footer strip under the frame says what each colour is.
"""

from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

HBB_COLOUR = (0, 114, 178)
MASK_COLOUR = (0, 158, 115)
CONTOUR_COLOUR = (213, 94, 0)
OBB_COLOUR = (240, 228, 66)
FALLBACK_COLOUR = (204, 121, 167)
MASK_OPACITY = 0.45


def _paste_mask(canvas, window, mask: np.ndarray) -> None:
    """Blend ``mask`` (working pixels of ``window``) onto ``canvas`` in the mask colour."""
    from PIL import Image

    x_lo, y_lo = round(window.x0), round(window.y0)
    x_hi = round(window.x0 + mask.shape[1] / window.sx)
    y_hi = round(window.y0 + mask.shape[0] / window.sy)
    if x_hi <= x_lo or y_hi <= y_lo:
        return
    alpha = Image.fromarray((mask * round(255 * MASK_OPACITY)).astype(np.uint8), mode="L")
    alpha = alpha.resize((x_hi - x_lo, y_hi - y_lo), Image.NEAREST)
    canvas.paste(Image.new("RGB", alpha.size, MASK_COLOUR), (x_lo, y_lo), alpha)


def _legend_entries(show_hbb: bool, show_masks: bool, show_contours: bool, show_obb: bool,
                    fallbacks: int) -> list[tuple[str, tuple, str]]:
    """``(kind, colour, words)`` of what the picture shows, in drawing order."""
    entries = []
    if show_hbb:
        entries.append(("outline", HBB_COLOUR, "HBB prompt"))
    if show_masks:
        entries.append(("fill", MASK_COLOUR, "mask"))
    if show_contours:
        entries.append(("outline", CONTOUR_COLOUR, "mask contour (convex)"))
    if show_obb:
        entries.append(("outline", OBB_COLOUR, "OBB"))
        if fallbacks:
            entries.append(("outline", FALLBACK_COLOUR, f"fallback: HBB written as the OBB ({fallbacks})"))
    return entries


def _with_legend(canvas, entries: list, width: int, font):
    """The picture with a footer strip below it naming each colour, in as many rows as its width
    needs; nothing on the frame is covered."""
    from PIL import Image, ImageDraw

    if not entries:
        return canvas
    size = font.size
    measure = ImageDraw.Draw(Image.new("RGB", (1, 1)))
    swatch, gap, margin = round(size * 1.6), round(size * 0.4), round(size * 0.6)
    row_height = round(size * 1.6)
    places, x, row = [], margin, 0
    for entry in entries:
        span = swatch + gap + round(measure.textlength(entry[2], font=font))
        if x > margin and x + span > canvas.width - margin:  # wrap to the next row
            x, row = margin, row + 1
        places.append((x, row))
        x += span + round(size * 1.2)
    footer = (row + 1) * row_height + round(size * 0.6)
    picture = Image.new("RGB", (canvas.width, canvas.height + footer), (255, 255, 255))
    picture.paste(canvas, (0, 0))
    draw = ImageDraw.Draw(picture)
    for (kind, colour, words), (x, row) in zip(entries, places):
        middle = canvas.height + round(size * 0.3) + row * row_height + row_height // 2
        box = [x, middle - size // 2, x + swatch, middle + size // 2]
        if kind == "fill":
            draw.rectangle(box, fill=tuple(round(255 - (255 - c) * MASK_OPACITY * 1.4) for c in colour))
        else:
            draw.rectangle(box, fill=(60, 60, 60), outline=colour, width=width + 1)
        draw.text((box[2] + gap, middle), words, fill=(0, 0, 0), font=font, anchor="lm")
    return picture


def draw_conversion(frame, hbb_xyxy, conversion, class_ids: Optional[Sequence[int]] = None,
                    show_hbb: bool = True, show_masks: bool = True, show_contours: bool = True,
                    show_obb: bool = True, show_labels: bool = True, label_map: Optional[dict] = None,
                    legend: bool = True, show_confidence: bool = False, confidences: Optional[Sequence[float]] = None):
    """The frame with every box's HBB, mask, contour and OBB drawn on it.

    Parameters
    ----------
    frame : PIL.Image.Image
        The image the boxes were converted on (not modified).
    hbb_xyxy : array_like, shape (n, 4)
        The prompts, ``x1 y1 x2 y2`` in pixels.
    conversion : ImageConversion
        From :func:`hbb2obb.converters.image.converter.convert_boxes`; masks and contours are drawn
        when it was made with ``keep_masks=True``.
    class_ids : sequence of int, optional
        Their names (``label_map``, else the id) are written beside each OBB.
    label_map : dict, optional
        ``{id: name}``.
    show_hbb, show_masks, show_contours, show_obb, show_labels : bool
        What to draw: the prompts, the masks, their convex contours, the OBBs, the class names.
    show_confidence : bool
        Write each box's score (two decimals) beside it, after its class name when that is shown;
        the scores are ``confidences`` when given, else the conversion's own.
    legend : bool
        Add a footer strip under the frame naming each colour drawn.

    Returns
    -------
    PIL.Image.Image
        An RGB copy of the frame with the drawing, the footer below it; line widths grow with
        the frame size.

    Examples
    --------
    >>> from PIL import Image
    >>> from hbb2obb.converters.image.converter import convert_boxes
    >>> frame = Image.new("RGB", (64, 48), (80, 80, 80))
    >>> frame.paste((230, 230, 230), (20, 18, 44, 30))
    >>> picture = draw_conversion(frame, [[20, 18, 44, 30]], convert_boxes(frame, [[20, 18, 44, 30]], keep_masks=True))
    >>> picture.size[0], picture.size[1] > 48, picture.getpixel((2, 2)) == frame.getpixel((2, 2))
    (64, True, True)
    """
    from PIL import ImageDraw, ImageFont

    from hbb2obb.io.labelmap import class_name

    canvas = frame.convert("RGB").copy()
    width = max(1, round(max(canvas.size) / 1280))
    font = ImageFont.load_default(size=10 + 6 * width)
    if show_masks:
        for box in conversion.boxes:
            if box.mask is not None and box.window is not None:
                _paste_mask(canvas, box.window, box.mask)
    draw = ImageDraw.Draw(canvas)
    xyxy = np.asarray(hbb_xyxy, dtype=np.float64).reshape(-1, 4)
    scores = conversion.confidence if confidences is None else np.asarray(confidences, dtype=np.float64)
    for index, (x1, y1, x2, y2) in enumerate(xyxy):
        fallback = bool(conversion.fallback[index])
        if show_hbb and not fallback:
            draw.rectangle([x1, y1, x2, y2], outline=HBB_COLOUR, width=width)
        if show_contours and index < len(conversion.boxes) and conversion.boxes[index].hull is not None:
            hull = conversion.boxes[index].hull
            draw.line([tuple(p) for p in np.vstack([hull, hull[:1]])], fill=CONTOUR_COLOUR, width=width)
        corners = conversion.corners[index]
        colour = FALLBACK_COLOUR if fallback else OBB_COLOUR
        if show_obb:
            draw.line([tuple(p) for p in np.vstack([corners, corners[:1]])], fill=colour, width=width + 1)
        words = []
        if show_labels and class_ids is not None:
            words.append(class_name(label_map or {}, class_ids[index]) + (" (HBB)" if fallback else ""))
        if show_confidence:
            words.append(f"{float(scores[index]):.2f}")
        if words:
            anchor = corners[np.argmin(corners[:, 1])]
            text = " ".join(words)
            draw.text((float(anchor[0]) + 2, max(0.0, float(anchor[1]) - 12 - 7 * width)), text, fill=colour, font=font,
                      stroke_width=1, stroke_fill=(0, 0, 0))
    if legend:
        entries = _legend_entries(show_hbb, show_masks, show_contours, show_obb, int(np.sum(conversion.fallback)))
        canvas = _with_legend(canvas, entries, width, font)
    return canvas
