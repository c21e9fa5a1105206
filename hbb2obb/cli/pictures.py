"""The picture flags that eval and analyze share: ``--overlay DIR`` and ``--overlay_size``."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import click

from hbb2obb.cli.common import progress_bar, warn
from hbb2obb.errors import UsageError
from hbb2obb.plotting import OVERLAY_SIZE


def overlay_options(function):
    """Add ``--overlay DIR`` and ``--overlay_size PX`` to a command."""
    function = click.option("--overlay_size", type=click.IntRange(min=64), default=OVERLAY_SIZE, show_default=True,
                            metavar="PX", help="Long side of each overlay JPEG in pixels.")(function)
    return click.option("--overlay", type=click.Path(file_okay=False, path_type=Path), metavar="DIR",
                        help="Write DIR/<frame>.jpg per frame with an image (needs -i): predictions coloured by "
                             "IoU, unmatched boxes marked, the frame's mean IoU in a corner.")(function)


def check_overlay(overlay: Optional[Path], img_source: Optional[Path]) -> None:
    """Fail before any scoring when overlays are asked for without the frames."""
    if overlay is not None and img_source is None:
        raise UsageError("--overlay needs the frames: give -i/--img_source IMAGES")


def emit_overlays(program: str, table, img_source: Path, overlay: Optional[Path], size: int, no_bar: bool) -> None:
    """Write the overlays of a run, warn about frames without an image, and say what was written."""
    if overlay is None:
        return
    from hbb2obb.plotting.overlay import write_overlays  # matplotlib only when pictures are asked for

    with progress_bar(len(table.frame_names), "Overlays", no_bar) as bar:
        run = write_overlays(table, img_source, overlay, size, progress=bar.update)
    warn(program, run.warnings())
    skipped = f" ({len(run.skipped)} frames without a readable image skipped)" if run.skipped else ""
    click.echo(f"{program}: wrote {len(run.written)} overlays to {overlay}{skipped}", err=True)
