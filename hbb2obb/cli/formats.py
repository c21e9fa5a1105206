"""``hbb2obb-convert SOURCE --to FORMAT [FORMAT...]``: labels between YOLO, DOTA, VOC, COCO and LabelMe.

Flags and output as the reference tool's ``hbb2obb-convert`` (1.12.0); ``--verify`` checks that
the formats found under a folder encode the same boxes and writes nothing.
"""

from __future__ import annotations

from pathlib import Path

import click

from hbb2obb.cli.common import handles_errors, multi_value_command, progress_bar, version_option
from hbb2obb.errors import InputError, UsageError
from hbb2obb.io.images import ImageSizes
from hbb2obb.io.label_sets import (
    ALL_FORMATS,
    DOTA_EXT,
    LabelSet,
    canonical_set,
    complete_names,
    copy_difficult,
    plan_outputs,
    read_set,
    resolve_names,
    set_kind,
    write_set,
)
from hbb2obb.io.written import OutputGuard

PROGRAM = "hbb2obb-convert"
MAX_PRECISION = 15  # decimals beyond a float64's


def _check_precision(precision, normalize: bool) -> None:
    """A negative precision cannot be written; zero decimals flatten normalized values to 0 or 1."""
    if precision is None:
        return
    floor = 1 if normalize else 0
    if not floor <= precision <= MAX_PRECISION:
        raise UsageError(f"--precision must be between {floor} and {MAX_PRECISION}, got {precision}")


def _sizes(images, img_width, img_height) -> ImageSizes:
    """Sizes from the images (as shown: EXIF orientation applied), or one for all frames.

    The reference ignores -iw without -ih: we stop.
    """
    return ImageSizes(images, img_width, img_height)


def _verify(source: Path, map_path, images, img_width, img_height, dota_ext) -> None:
    from hbb2obb.io.verify_sets import render_verify, verify_tree

    root = source if source.is_dir() else source.parent
    if not root.is_dir():
        raise InputError(f"{source}: no such file or folder")
    sizes = None
    if images is not None or img_width is not None:
        sizes = _sizes(images, img_width, img_height)
    report = verify_tree(source, map_path=map_path, sizes=sizes, dota_ext=dota_ext)
    click.echo(render_verify(report, root), nl=False)
    if not report.checked:  # a check that compared nothing must not pass, nor read as a disagreement
        raise InputError(f"nothing to verify under {root}: no folder holds the same labels in two formats")
    if not report.passed:
        raise SystemExit(1)


def _read_with_bar(source, src_format, label_map, sizes, no_bar) -> LabelSet:
    with progress_bar(None, "Reading", no_bar, unit="file") as bar:
        return read_set(source, src_format, label_map=label_map, sizes=sizes, strict=True, progress=bar.update)


@multi_value_command({"targets": str}, name=PROGRAM)
@click.argument("source", type=click.Path(path_type=Path))
@click.option("-t", "--to", "targets", multiple=True, type=click.Choice(ALL_FORMATS),
              help="Output format(s); several after one flag: --to coco dota labelme.")
@click.option("-f", "--from", "src_format", type=click.Choice(ALL_FORMATS),
              help="Input format [default: detected from the files].")
@click.option("-o", "--out_dir", type=click.Path(path_type=Path),
              help="Folder to write into [default: the source folder].")
@click.option("-mp", "--map_path", type=click.Path(path_type=Path), help="Label map YAML {id: name}.")
@click.option("-i", "--images", type=click.Path(path_type=Path), help="Image folder: the frame sizes.")
@click.option("-iw", "--img_width", type=int, help="Frame width, when there is no image folder.")
@click.option("-ih", "--img_height", type=int, help="Frame height, when there is no image folder.")
@click.option("-k", "--kind", type=click.Choice(["auto", "hbb", "obb"]), default="auto", show_default=True,
              help="Write horizontal or oriented boxes (auto: oriented when any box is rotated).")
@click.option("-n", "--normalize", is_flag=True, help="Write YOLO coordinates relative to the frame, in [0, 1].")
@click.option("-p", "--precision", type=int, help="Decimals of YOLO output [default: 10 normalized, 2 absolute].")
@click.option("--dota_ext", default=DOTA_EXT, show_default=True,
              help="Suffix of DOTA files (.txt for a standalone labelTxt folder); --verify reads this one too.")
@click.option("--difficult_from", type=click.Choice(["dota", "voc"]),
              help="Take each box's difficult flag from this format in the source folder, row for row.")
@click.option("--voc_database", default="Unknown", show_default=True, help="The <database> of VOC output.")
@click.option("--coco_name", help="File name of COCO output [default: coco_annotations_<kind>.json].")
@click.option(
    "--verify", is_flag=True, help="Check that every format under SOURCE encodes the same boxes; write nothing."
)
@click.option("--overwrite", is_flag=True,
              help="Replace existing files of the output names that hbb2obb-convert did not write.")
@click.option("-nb", "--no_bar", is_flag=True, help="No progress bar.")
@version_option(PROGRAM)
@handles_errors(PROGRAM)
def main(source, targets, src_format, out_dir, map_path, images, img_width, img_height, kind, normalize, precision,
         dota_ext, difficult_from, voc_database, coco_name, verify, overwrite, no_bar):
    """Convert the labels in SOURCE (a folder of per-frame files, or a COCO .json) to other formats.

    Files of the output names that this command did not write are refused unless --overwrite;
    every output is checked before the first file is written, and each file is replaced atomically.

    Exit status: 0 ok, 1 --verify found disagreements, 2 usage or input error (--verify: nothing
    to compare).
    """
    if verify:
        _verify(source, map_path, images, img_width, img_height, dota_ext)
        return
    if not targets:
        raise UsageError("--to is required unless --verify is used")
    _check_precision(precision, normalize)
    sizes = _sizes(images, img_width, img_height)
    label_map = resolve_names(map_path, source)
    label_set = _read_with_bar(source, src_format, label_map, sizes, no_bar)
    for path in label_set.ignored:
        click.echo(f"{PROGRAM}: warning: {path}: not a label file of any format, left out", err=True)
    names = complete_names(label_map or label_set.names, label_set)
    box_kind = set_kind(label_set) if kind == "auto" else kind
    label_set = canonical_set(label_set)
    out_dir = out_dir or (source if source.is_dir() else source.parent)
    click.echo(f"Read {label_set.box_count} {box_kind.upper()} boxes over {len(label_set.frames)} frames "
               f"from {source} ({label_set.format})")
    if difficult_from:
        flags_dir = source if source.is_dir() else source.parent
        flags = read_set(flags_dir, difficult_from, label_map=names, sizes=sizes, strict=True)
        label_set, count = copy_difficult(label_set, flags)
        click.echo(f"Carried {count} difficult flag(s) from {difficult_from}")
    plan = plan_outputs(label_set, out_dir, targets, kind=box_kind, normalize=normalize, dota_ext=dota_ext,
                        coco_name=coco_name)  # every format checked before any file is written
    guard = OutputGuard()
    if not overwrite:
        guard.refuse_foreign(path for paths in plan.values() for path in paths)
    try:
        with progress_bar(len(plan), "Writing", no_bar, unit="format") as bar:
            for fmt in plan:
                written = write_set(label_set, out_dir, fmt, kind=box_kind, names=names, normalize=normalize,
                                    precision=precision, dota_ext=dota_ext, coco_name=coco_name,
                                    voc_database=voc_database, images=sizes, wrote=guard.wrote)
                click.echo(f"Wrote {len(written)} {fmt} file(s) to {out_dir}")
                bar.update()
    finally:  # what was written is recorded even when a later file fails: a rerun may replace it
        guard.save()


if __name__ == "__main__":
    main()
