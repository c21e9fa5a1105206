"""The picture flags that eval and analyze share: ``--overlay DIR`` and ``--overlay_size``."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import click

from hbb2obb.cli.common import progress_bar, warn
from hbb2obb.errors import InputError, UsageError
from hbb2obb.plotting import OVERLAY_SIZE


def overlay_options(function):
    """Add ``--overlay DIR`` and ``--overlay_size PX`` to a command."""
    function = click.option("--overlay_size", type=click.IntRange(min=64), default=OVERLAY_SIZE, show_default=True,
                            metavar="PX", help="Long side of each overlay JPEG in pixels.")(function)
    return click.option("--overlay", type=click.Path(file_okay=False, path_type=Path), metavar="DIR",
                        help="Write DIR/<frame>.jpg per frame with an image: ground truth thin, predictions "
                             "coloured by IoU, unmatched boxes marked, the frame's mean IoU in a corner. Frames from "
                             "-i, else GT_DIR/../images when it exists.")(function)


def overlay_frames(program: str, overlay: Optional[Path], img_source: Optional[Path], gt_dir: Path,
                   worst_sheets: bool = False) -> Optional[Path]:
    """The frames folder of the run: ``-i`` when given; with ``--overlay`` (or, for analyze,
    ``--worst N -o X``) and no ``-i``, ``GT_DIR/../images`` when it exists (as ``-hd`` defaults to
    ``GT_DIR/../labels_hbb``), said on stderr because its image sizes then also scale normalized
    labels, as ``-i`` would.

    Fails before any scoring when overlays are asked for and no frames are found; the worst-box
    sheets alone are not worth an error: :func:`emit_worst_sheets` says they were not drawn.
    """
    if img_source is not None or (overlay is None and not worst_sheets):
        return img_source
    default = Path(gt_dir).resolve().parent / "images"
    if not default.is_dir():
        if overlay is not None:
            raise UsageError(f"--overlay needs the frames: give -i/--img_source IMAGES ({default} not found)")
        return None
    click.echo(f"{program}: frames from {default} (the default beside GT_DIR; -i chooses others)", err=True)
    return default


def overlay_targets(table, overlay: Optional[Path]) -> list[Path]:
    """The files ``--overlay`` may write for a run: one JPEG per frame (checked before any is written)."""
    if overlay is None:
        return []
    from hbb2obb.plotting.overlay import overlay_path  # matplotlib only when pictures are asked for

    return [overlay_path(overlay, name) for name in table.frame_names]


def emit_overlays(program: str, table, img_source: Path, overlay: Optional[Path], size: int, no_bar: bool,
                  wrote=None) -> None:
    """Write the overlays of a run, warn about frames without an image, and say what was written.

    ``wrote`` is called with each file written (the caller's record of its outputs).
    """
    if overlay is None:
        return
    from hbb2obb.plotting.overlay import write_overlays  # matplotlib only when pictures are asked for

    with progress_bar(len(table.frame_names), "Overlays", no_bar) as bar:
        run = write_overlays(table, img_source, overlay, size, progress=bar.update)
    if wrote is not None:
        for path in run.written:
            wrote(path)
    warn(program, run.warnings())
    skipped = f" ({len(run.skipped)} frames without a readable image skipped)" if run.skipped else ""
    click.echo(f"{program}: wrote {len(run.written)} overlays to {overlay}{skipped}", err=True)


WORST_SHEETS = ("worst_iou.png", "worst_angle.png")


def emit_worst_sheets(program: str, result, worst: int, img_source: Optional[Path], out_dir: Optional[Path],
                      hbb_dir: Optional[Path], label_map: dict, wrote=None) -> None:
    """``OUT/worst_iou.png`` and ``OUT/worst_angle.png``: contact sheets of the ``worst`` pairs of
    lowest IoU and of largest angle error, with the HBB prompts when ``hbb_dir`` is given.
    ``wrote`` is called with each file written (the caller's record of its outputs)."""
    if not worst or out_dir is None:
        return
    if img_source is None:
        # -o with --worst asks for the pictures: drawing none without a word would be a quiet no-op.
        warn(program, [("worst", "no worst-box pictures were drawn: no images were given "
                                  "(-i IMAGES, or an images folder beside GT_DIR)")])
        return
    from hbb2obb.analysis.cuts import worst_pairs
    from hbb2obb.analysis.identity_baseline import match_identity_baseline
    from hbb2obb.plotting.contact_sheet import write_contact_sheet
    from hbb2obb.plotting.pixels import FrameImages

    table = result.table
    prompts = None if hbb_dir is None else match_identity_baseline(table, hbb_dir, result.settings).prompt_corners
    images = FrameImages(img_source)
    missing: dict = {}
    for by, name, order in (("iou", "worst_iou.png", "by IoU, lowest first"),
                            ("angle", "worst_angle.png", "by angle error, largest first")):
        rows = worst_pairs(table, worst, by)
        title = f"{len(rows)} worst of {table.n_matches} pairs {order}"
        try:
            missing.update(write_contact_sheet(out_dir / name, table, rows, images, hbb=prompts,
                                               label_map=label_map, title=title))
        except OSError as exc:
            raise InputError(f"{out_dir / name}: cannot write ({exc.strerror or exc})") from None
        if wrote is not None:
            wrote(out_dir / name)
    warn(program, [("contact sheet", f"frame {frame}: {reason}: its tiles show the boxes without pixels")
                   for frame, reason in missing.items()])
