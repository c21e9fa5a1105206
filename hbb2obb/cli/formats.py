"""``hbb2obb-convert SOURCE --to FORMAT [FORMAT...]``: labels between YOLO, DOTA, VOC, COCO and LabelMe.

Flags and output as the reference tool's ``hbb2obb-convert`` (1.12.0); ``--verify`` checks that
the formats found under a folder encode the same boxes and writes nothing.
"""

from __future__ import annotations

import math
from pathlib import Path

import click

from hbb2obb.cli.common import handles_errors, multi_value_command, progress_bar, version_option
from hbb2obb.cli.reading import coco_angle_option, split_option
from hbb2obb.errors import InputError, UsageError
from hbb2obb.io.confidence_sidecar import flag_below, side_car_scores, source_scores, unmatched_side_car_files
from hbb2obb.io.folder_lock import CONVERSION_LOCK, FolderLock
from hbb2obb.io.frame_labels import DEFAULT_PRECISION
from hbb2obb.io.images import ImageSizes
from hbb2obb.io.label_sets import (
    ALL_FORMATS,
    DOTA_EXT,
    NORMALIZED_LIMIT,
    LabelSet,
    canonical_set,
    complete_names,
    copy_difficult,
    find_names,
    plan_outputs,
    read_set,
    set_kind,
    unit_boxes,
    write_set,
)
from hbb2obb.io.written import OutputGuard

PROGRAM = "hbb2obb-convert"
MAX_PRECISION = 15  # decimals beyond a float64's
DIFFICULT_BELOW = 0.5  # the reference's default threshold of --difficult_from confidence
DIFFICULT_FORMATS = ("dota", "voc")  # the output formats that carry a difficult flag
RECTANGLE_FORMATS = ("rolabelimg", "labelstudio")  # the output formats that store a box as centre, size, angle


def _check_precision(precision, normalize: bool) -> None:
    """A negative precision cannot be written; zero decimals flatten normalized values to 0 or 1."""
    if precision is None:
        return
    floor = 1 if normalize else 0
    if not floor <= precision <= MAX_PRECISION:
        raise UsageError(f"--precision must be between {floor} and {MAX_PRECISION}, got {precision}")


def round_trip_precision(longest: float) -> int:
    """The decimals a normalized coordinate needs on a frame whose long side is ``longest`` pixels.

    Read back, a coordinate written at ``p`` decimals moves by up to half of ``10**-p`` of the
    frame; it lands on the same canonical value (a hundredth of a pixel) only when that is under
    half a hundredth. The reference tool's rule.

    Examples
    --------
    >>> round_trip_precision(640), round_trip_precision(1920), round_trip_precision(10000)
    (5, 6, 7)
    """
    precision = 1
    while 10.0 ** -precision * longest >= 10.0 ** -DEFAULT_PRECISION:
        precision += 1
    return precision


def _warn_lossy_precision(label_set: LabelSet, precision, normalize: bool) -> None:
    """Warn when normalized output at ``precision`` decimals would not read back to the same boxes."""
    sizes = [frame.size for frame in label_set.frames if frame.size]
    if not normalize or precision is None or not sizes:
        return
    width, height = max(sizes, key=max)
    needed = round_trip_precision(max(width, height))
    if precision < needed:
        click.echo(f"{PROGRAM}: warning: --precision {precision} does not survive the round trip on a "
                   f"{width:g}x{height:g} frame, so reading these labels back moves boxes; use {needed} or more",
                   err=True)


def _warn_reshaped(label_set: LabelSet, targets, box_kind: str) -> None:
    """Warn when a format of turned rectangles is asked for quads that are not rectangles: their corners move."""
    turned = [fmt for fmt in RECTANGLE_FORMATS if fmt in targets]
    if not turned or box_kind != "obb":
        return
    from hbb2obb.io.rolabelimg import reshaped

    count, first, farthest = reshaped(label_set.frames)
    if count:
        verb = "store" if len(turned) > 1 else "stores"
        click.echo(f"{PROGRAM}: warning: {', '.join(turned)} {verb} each box as a turned rectangle: {count} of "
                   f"{label_set.box_count} box(es) are not rectangles and move, corners up to {farthest:.2f} px "
                   f"(first: {first}); cvat, coco, labelme, dota and yolo keep the quads", err=True)


def _warn_unit_boxes(label_set: LabelSet) -> None:
    """Warn of YOLO boxes read as pixels that look normalized (``hbb2obb-eval`` warns of them too)."""
    count, first = unit_boxes(label_set)
    if count:
        click.echo(f"{PROGRAM}: warning: {count} box(es) in files of pixel coordinates look normalized (no "
                   f"coordinate beyond {NORMALIZED_LIMIT:g}; first: {first}): read as pixels, each is a box of a "
                   "pixel or two at the frame's corner; check the data set", err=True)


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


def _read_with_bar(source, src_format, label_map, sizes, no_bar, read_options=None) -> LabelSet:
    with progress_bar(None, "Reading", no_bar, unit="file") as bar:
        return read_set(source, src_format, label_map=label_map, sizes=sizes, strict=True, progress=bar.update,
                        read_options=read_options)


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
@click.option("--difficult_from", type=click.Choice(["dota", "voc", "confidence"]),
              help="Take each box's difficult flag from this format in the source folder, row for row; "
                   "'confidence' flags every box scoring below --difficult_below instead (scores from "
                   "--confidence_dir, else from the source's confidence column). Only DOTA and VOC carry the flag.")
@click.option("--confidence_dir", type=click.Path(path_type=Path), metavar="DIR",
              help="Side-car folder of per-box confidences (one STEM.txt per frame, one score per line, as "
                   "'hbb2obb --confidence_dir' writes them); read only by --difficult_from confidence.")
@click.option("--difficult_below", type=float, default=DIFFICULT_BELOW, show_default=True,
              help="With --difficult_from confidence, flag every box scoring below this (a fallback scores 0).")
@click.option("--voc_database", default="Unknown", show_default=True, help="The <database> of VOC output.")
@click.option("--coco_name", help="File name of COCO output [default: coco_annotations_<kind>.json].")
@click.option("--coco_from", type=click.Path(path_type=Path), metavar="FILE",
              help="Take the image, annotation and category ids and the licenses from this COCO file, which the "
                   "boxes were derived from one for one (matched by frame name and row, checked before writing).")
@click.option("--coco_info", type=click.Path(path_type=Path), metavar="FILE",
              help="JSON file holding the 'info' object of the written COCO file [default: empty].")
@click.option(
    "--verify", is_flag=True, help="Check that every format under SOURCE encodes the same boxes; write nothing."
)
@click.option("--overwrite", is_flag=True,
              help="Replace existing files of the output names that hbb2obb-convert did not write.")
@click.option("--save_provenance", is_flag=True,
              help="Also write PROVENANCE_convert_NAME.txt (NAME: the output folder's name) in the output folder's "
                   "parent: the command, the settings, digests of the inputs and outputs, the versions that ran.")
@click.option("-nb", "--no_bar", is_flag=True, help="No progress bar.")
@split_option
@coco_angle_option
@version_option(PROGRAM)
@handles_errors(PROGRAM)
def main(source, targets, src_format, out_dir, map_path, images, img_width, img_height, kind, normalize, precision,
         dota_ext, difficult_from, confidence_dir, difficult_below, voc_database, coco_name, coco_from, coco_info,
         verify, overwrite, save_provenance, no_bar, split, coco_angle):
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
    _check_side_inputs(targets, difficult_from, confidence_dir, difficult_below, coco_from, coco_info)
    sizes = _sizes(images, img_width, img_height)
    label_map, names_file = find_names(map_path, source)
    label_set = _read_with_bar(source, src_format, label_map, sizes, no_bar,
                               {"split": split, "coco_angle": coco_angle})
    for path in label_set.ignored:
        click.echo(f"{PROGRAM}: warning: {path}: not a label file of any format, left out", err=True)
    names = complete_names(label_map or label_set.names, label_set)
    box_kind = set_kind(label_set) if kind == "auto" else kind
    _warn_lossy_precision(label_set, precision, normalize)
    label_set = canonical_set(label_set)
    out_dir = out_dir or (source if source.is_dir() else source.parent)
    click.echo(f"Read {label_set.box_count} {box_kind.upper()} boxes over {len(label_set.frames)} frames "
               f"from {source} ({label_set.format})")
    if difficult_from:
        label_set = _difficult(label_set, source, difficult_from, confidence_dir, difficult_below, names, sizes,
                               targets)
    identity, info = _coco_identity(coco_from, coco_info, label_set, names)
    plan = plan_outputs(label_set, out_dir, targets, kind=box_kind, normalize=normalize, dota_ext=dota_ext,
                        coco_name=coco_name)  # every format checked before any file is written
    _warn_reshaped(label_set, targets, box_kind)  # once the outputs are known to be written
    _warn_unit_boxes(label_set)
    record = None
    if save_provenance:  # imported here: a plain conversion needs none of the record's machinery
        from hbb2obb.cli.formats_provenance import record_path, write_conversion_record

        record = record_path(out_dir)
    # one writer at a time: taken before the folder's record of earlier outputs is read
    click.get_current_context().with_resource(FolderLock(out_dir, CONVERSION_LOCK, "conversion",
                                                         "wait for it to finish, or give another -o"))
    guard = OutputGuard()
    if not overwrite:
        guard.refuse_foreign([path for paths in plan.values() for path in paths] + ([record] if record else []))
    done = {}
    try:
        with progress_bar(len(plan), "Writing", no_bar, unit="format") as bar:
            for fmt in plan:
                done[fmt] = write_set(label_set, out_dir, fmt, kind=box_kind, names=names, normalize=normalize,
                                      precision=precision, dota_ext=dota_ext, coco_name=coco_name,
                                      voc_database=voc_database, images=sizes, wrote=guard.wrote,
                                      coco_identity=identity, coco_info=info)
                click.echo(f"Wrote {len(done[fmt])} {fmt} file(s) to {out_dir}")
                bar.update()
        if record is not None:
            write_conversion_record(record, params=click.get_current_context().params, label_set=label_set,
                                    box_kind=box_kind, names=names, names_file=names_file, written=done)
            guard.wrote(record)
            click.echo(f"Wrote {record}")
    finally:  # what was written is recorded even when a later file fails: a rerun may replace it
        guard.save()


def _check_side_inputs(targets, difficult_from, confidence_dir, difficult_below, coco_from, coco_info) -> None:
    """Refuse, before anything is read, the inputs no option of this run would read."""
    for flag, value in (("--coco_from", coco_from), ("--coco_info", coco_info)):
        if value is not None and "coco" not in targets:
            raise UsageError(f"{flag} is read only when COCO is among the output formats (--to coco)")
    if confidence_dir is not None and difficult_from != "confidence":
        raise UsageError("--confidence_dir is read only by --difficult_from confidence, which turns the scores into "
                         "each box's difficult flag; no output format takes the scores themselves from a side-car")
    if not math.isfinite(difficult_below):
        raise UsageError(f"--difficult_below must be a finite number, got {difficult_below}")
    given = click.get_current_context().get_parameter_source("difficult_below")
    if difficult_from != "confidence" and given is click.core.ParameterSource.COMMANDLINE:
        click.echo(f"{PROGRAM}: warning: --difficult_below is read only by --difficult_from confidence; ignored",
                   err=True)


def _difficult(label_set, source: Path, difficult_from: str, confidence_dir, threshold: float, names: dict, sizes,
               targets) -> LabelSet:
    """The set with each box's difficult flag from ``difficult_from``, the count said."""
    if not set(targets) & set(DIFFICULT_FORMATS):
        click.echo(f"{PROGRAM}: warning: --difficult_from: none of the output formats ({', '.join(targets)}) "
                   f"carries a difficult flag (only {' and '.join(DIFFICULT_FORMATS)} do); the flags are not written",
                   err=True)
    if difficult_from != "confidence":
        flags_dir = source if source.is_dir() else source.parent
        flags = read_set(flags_dir, difficult_from, label_map=names, sizes=sizes, strict=True)
        label_set, count = copy_difficult(label_set, flags)
        click.echo(f"Carried {count} difficult flag(s) from {difficult_from}")
        return label_set
    if confidence_dir is not None:
        scores = side_car_scores(confidence_dir, label_set.frames)
        extra = unmatched_side_car_files(confidence_dir, label_set.frames)
        if extra:
            click.echo(f"{PROGRAM}: warning: {confidence_dir}: {len(extra)} confidence file(s) name no frame of the "
                       f"source, left unread (first: {extra[0].name})", err=True)
    else:
        scores = source_scores(label_set.frames)
    frames, count = flag_below(label_set.frames, scores, threshold)
    click.echo(f"Flagged {count} box(es) difficult, scoring below {threshold:g}")
    return LabelSet(label_set.format, tuple(frames), label_set.names, label_set.problems, label_set.ignored)


def _coco_identity(coco_from, coco_info, label_set, names):
    """The source ids of ``--coco_from`` (checked against the frames) and the ``--coco_info`` object."""
    identity = info = None
    if coco_from is not None:
        from hbb2obb.io.coco_identity import check_coco_identity, read_coco_identity

        identity = read_coco_identity(coco_from)
        check_coco_identity(identity, label_set.frames, names)
        click.echo(f"Carrying ids, licenses and supercategory over from {coco_from}")
    if coco_info is not None:
        from hbb2obb.io.coco_identity import read_coco_info

        info = read_coco_info(coco_info)
    return identity, info

if __name__ == "__main__":
    main()
