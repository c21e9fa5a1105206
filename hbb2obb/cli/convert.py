"""``hbb2obb IMG_SOURCE``: convert HBB prompts to OBBs with the built-in ``image`` converter.

Mirrors the reference tool's main command where it applies (image or folder of images, HBBs
from ``--hbb_dir``, OBBs to ``--obb_dir``, ``--scale_factors`` one or two values,
``--opening_kernel_percentage``, ``--imgsz``, ``--save_img``/``--viz_dir``, ``--no_bar``), but
needs no model: it segments each box from the pixels (see :mod:`hbb2obb.converters.image.converter`).
"""

from __future__ import annotations

import time
from pathlib import Path

import click

from hbb2obb.cli.common import handles_errors, multi_value_command, progress_bar, version_option, warn
from hbb2obb.cli.convert_outputs import (
    EPILOG,
    RunTotals,
    output_options,
    record_path,
    reproducing_command,
    requested_outputs,
    write_conversion_record,
)
from hbb2obb.converters.image.converter import (
    DEFAULT_PARAMETERS,
    TIGHTNESS,
    convert_frame,
    margin_value,
    validate_parameters,
)
from hbb2obb.converters.image.outputs import frame_texts, lossy_precision_warning
from hbb2obb.errors import InputError, UsageError
from hbb2obb.io.atomic import atomic_path, write_text_atomic
from hbb2obb.io.images import IMAGE_SUFFIXES
from hbb2obb.io.labelmap import load_label_map
from hbb2obb.io.written import OutputGuard

PROGRAM = "hbb2obb"


def image_paths(source: Path) -> list[Path]:
    """The frames to convert: ``source`` itself, or the images in the folder, sorted by name.

    Raises
    ------
    InputError
        ``source`` does not exist, or is a folder without any image.
    """
    if source.is_file():
        return [source]
    if not source.is_dir():
        raise InputError(f"{source}: no such image or folder")
    frames = sorted(p for p in source.iterdir() if p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES)
    if not frames:
        # Converting nothing and exiting 0 would look like success to a script.
        raise InputError(f"{source}: no images found in this folder (looked for {', '.join(IMAGE_SUFFIXES)})")
    return frames


def best_parameters(results_path: Path) -> dict:
    """The converter parameters of the best grid point of a sweep's ``results.yaml``."""
    import yaml

    try:
        data = yaml.safe_load(Path(results_path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"{results_path}: results file not found") from None
    except yaml.YAMLError:
        raise InputError(f"{results_path}: not valid YAML") from None
    best = data.get("best_parameters") if isinstance(data, dict) else None
    if not isinstance(best, dict) or not best:
        raise InputError(f"{results_path}: no best_parameters (is it an hbb2obb-optimize results.yaml?)")
    # The reference layout keeps the best point's metrics beside its axes: take the axes only.
    params = {name: value for name, value in best.items() if name in DEFAULT_PARAMETERS}
    if not params:
        raise InputError(f"{results_path}: best_parameters holds none of {', '.join(DEFAULT_PARAMETERS)}")
    return params


def default_dir(source: Path, name: str) -> Path:
    """``<folder of the images>/../name``, the reference tool's default layout."""
    folder = source if source.is_dir() else source.parent
    return folder.parent / name


@multi_value_command({"scale_factors": float}, name=PROGRAM, epilog=EPILOG)
@click.argument("img_source", type=click.Path(path_type=Path))
@click.option("-hd", "--hbb_dir", type=click.Path(path_type=Path),
              help="Folder of YOLO-HBB prompts (default: IMG_SOURCE/../labels_hbb).")
@click.option("-od", "--obb_dir", type=click.Path(path_type=Path),
              help="Where to write the YOLO-OBB files, absolute pixels (default: IMG_SOURCE/../labels_obb).")
@click.option("-sf", "--scale_factors", type=float, multiple=True,
              help="How far beyond the HBB the object may reach, per side as a fraction of that side: "
                   f"one value, or short side then long side (default: {DEFAULT_PARAMETERS['scale_factor']}).")
@click.option("-okp", "--opening_kernel_percentage", type=float,
              default=DEFAULT_PARAMETERS["opening_kernel_percentage"], show_default=True,
              help="Morphological opening of each mask, as a fraction of its smaller side; negative closes; 0 is off.")
@click.option("--imgsz", type=int, default=DEFAULT_PARAMETERS["imgsz"], show_default=True,
              help="Long side in pixels of the window each box is segmented in.")
@click.option("-cr", "--corner_radius", type=float, default=DEFAULT_PARAMETERS["corner_radius"], show_default=True,
              help="Vehicle corner rounding as a fraction of the breadth (how far a hugging HBB sits inside "
                   "a diagonal vehicle's rectangle corners).")
@click.option("-ti", "--tightness", type=click.Choice(TIGHTNESS), default=DEFAULT_PARAMETERS["tightness"],
              show_default=True,
              help="How the HBBs relate to the objects: tight (the bounding box of each object's rectangle, as in "
                   "DOTA-HBB), loose (hand-drawn, cutting rounded corners), auto (per frame: tight on whole pixels, "
                   "else read from the pixels).")
@click.option("--margin", default=str(DEFAULT_PARAMETERS["margin"]), show_default=True, metavar="auto|F",
              help="Room the HBBs leave around their objects, a share of the object's size per side (detector "
                   "boxes: 0.05-0.10): the boxes are shrunk by it before the fit; auto reads it per frame from the "
                   "pixels (with --tightness auto); 0 turns it off.")
# A plain string, not click.Path: the bare flag's empty value must stay empty (a Path of "" is ".").
@click.option("-cd", "--confidence_dir", type=str, is_flag=False, flag_value="", default=None,
              metavar="DIR", help="Also write a per-box confidence in [0, 1] (0 for a fallback), one per line, "
                                  "row-aligned with the OBB files; bare: IMG_SOURCE/../labels_confidence.")
@click.option("--params_from", type=click.Path(path_type=Path), metavar="RESULTS.yaml",
              help="Take the parameters from the best point of an hbb2obb-optimize results.yaml; "
                   "flags given explicitly still win.")
@click.option("--save_img", is_flag=True, help="Also save each frame with HBBs, masks, contours and OBBs drawn on it, "
                                                "class names beside the OBBs and a colour key below.")
@click.option("-mp", "--map_path", type=click.Path(path_type=Path),
              help="Label map YAML {id: name} for the class names of --save_img "
                   "[default: IMG_SOURCE/../classes.yaml when it exists].")
@click.option("--viz_dir", type=click.Path(path_type=Path), help="Folder of the pictures (default: the OBB folder).")
@click.option("--overwrite", is_flag=True,
              help="Replace existing files in the output folders that hbb2obb did not write (e.g. ground truth).")
@click.option("-nb", "--no_bar", is_flag=True, help="No progress bar.")
@output_options
@version_option(PROGRAM)
@handles_errors(PROGRAM)
def main(img_source, hbb_dir, obb_dir, scale_factors, opening_kernel_percentage, imgsz, corner_radius, tightness,
         margin, confidence_dir, params_from, save_img, map_path, viz_dir, overwrite, no_bar, **options):
    """Convert the HBB prompts of the frames in IMG_SOURCE (an image or a folder) to OBBs.

    Each box is segmented from the image pixels (no model, no download) and a rectangle is
    fitted to the mask and the HBB. A box without a usable mask, or whose fitted box the image
    supports less than the HBB, is written as its HBB and counted as a fallback with its
    reason. Files in the output folders that hbb2obb did not write are never replaced without
    --overwrite. Exit status: 0 ok, 1 some frames could not be read (the others were
    converted) or more boxes fell back than --fail_on_fallback_share allows, 2 usage or input
    error (nothing written).
    """
    if len(scale_factors) > 2:
        raise UsageError(f"--scale_factors takes one or two values (short side, long side), got {len(scale_factors)}")
    params = {
        "scale_factor": (list(scale_factors) if len(scale_factors) == 2 else scale_factors[0]) if scale_factors
        else DEFAULT_PARAMETERS["scale_factor"],
        "opening_kernel_percentage": opening_kernel_percentage, "imgsz": imgsz, "corner_radius": corner_radius,
        "tightness": tightness, "margin": margin_value(margin),
    }
    if params_from is not None:
        context = click.get_current_context()
        given = {name for name in ("scale_factors", "opening_kernel_percentage", "imgsz", "corner_radius", "tightness",
                                   "margin")
                 if context.get_parameter_source(name) is click.core.ParameterSource.COMMANDLINE}
        given = {"scale_factor" if name == "scale_factors" else name for name in given}
        params.update({k: v for k, v in best_parameters(params_from).items() if k not in given})
    params = validate_parameters(params)
    if viz_dir is not None and not save_img:
        raise UsageError("--viz_dir needs --save_img")
    if map_path is not None and not save_img:
        raise UsageError("--map_path names the classes in the --save_img pictures: it needs --save_img")
    outputs = requested_outputs(options, save_img=save_img, confidence_dir_given=confidence_dir is not None,
                                default_polygon_dir=default_dir(img_source, "labels_polygon"))
    frames = image_paths(img_source)
    hbb_dir = hbb_dir or default_dir(img_source, "labels_hbb")
    obb_dir = obb_dir or default_dir(img_source, "labels_obb")
    viz_dir = viz_dir or obb_dir
    if not hbb_dir.is_dir():
        raise InputError(f"{hbb_dir}: HBB folder not found")
    if confidence_dir is not None:
        confidence_dir = Path(confidence_dir) if confidence_dir else default_dir(img_source, "labels_confidence")
    label_map = {}
    if save_img:
        if map_path is None:
            beside = default_dir(img_source, "classes.yaml")
            map_path = beside if beside.is_file() else None
        label_map = load_label_map(map_path)
    warnings = []
    prompted = [p for p in frames if (hbb_dir / f"{p.stem}.txt").is_file()]
    unprompted = [p for p in frames if p not in prompted]
    warnings += [("no-hbb", f"{p}: no HBB file {hbb_dir / (p.stem + '.txt')}; frame skipped") for p in unprompted]
    orphans = orphan_prompts(hbb_dir, frames) if img_source.is_dir() else []
    warnings += [("no-image", f"{p}: no image named {p.stem}.* in {img_source}; its boxes were not converted")
                 for p in orphans]
    guard = OutputGuard()
    targets = [obb_dir / f"{p.stem}.txt" for p in prompted]
    if save_img:
        targets += [viz_dir / f"{p.stem}.jpg" for p in prompted]
    if confidence_dir is not None:
        targets += [confidence_dir / f"{p.stem}.txt" for p in prompted]
    polygon_dir = outputs.polygon_dir
    if polygon_dir is not None:
        targets += [polygon_dir / f"{p.stem}.txt" for p in prompted]
    record = record_path(obb_dir) if outputs.save_provenance else None
    if record is not None:
        targets.append(record)
    if not overwrite:
        guard.refuse_foreign(targets)
    folders = [obb_dir] + ([viz_dir] if save_img else []) + ([confidence_dir] if confidence_dir else [])
    for folder in folders + ([polygon_dir] if polygon_dir else []):
        folder.mkdir(parents=True, exist_ok=True)
    converted = boxes = fallbacks = 0
    reasons, readings, frame_readings = {}, {}, []
    unreadable, wholly_fallen_back, written, hbb_files, converted_frames = [], [], [], [], []
    precision_checked = not outputs.settings.normalize
    show_confidence = save_img and outputs.confidences_shown
    broken_lines = 0  # HBB lines that could not be read: warned one by one, counted on the Skipped: line
    start = time.perf_counter()
    try:
        with progress_bar(len(prompted), "Converting", no_bar) as bar:
            for image_path in prompted:
                hbb_path = hbb_dir / f"{image_path.stem}.txt"
                out_path = obb_dir / hbb_path.name
                confidence_path = confidence_dir / hbb_path.name if confidence_dir else None
                polygon_path = polygon_dir / hbb_path.name if polygon_dir else None
                try:
                    result = convert_frame(image_path, hbb_path, None, params,
                                           keep_masks=save_img or polygon_path is not None)
                except InputError as exc:  # an unreadable image or prompt file: this frame only
                    unreadable.append(image_path)
                    warnings.append(("unreadable", f"{exc}; frame skipped"))
                    bar.update(1)
                    continue
                texts = frame_texts(result, outputs.settings, polygons_wanted=polygon_path is not None,
                                    confidences_wanted=show_confidence, side_car=confidence_path is not None)
                if not precision_checked:
                    lossy = lossy_precision_warning(outputs.settings.precision, result.image.size)
                    if lossy:
                        warnings.append(("precision", lossy))
                        precision_checked = True  # said once per run
                for path, text in ((out_path, texts.obb), (confidence_path, texts.confidence),
                                   (polygon_path, texts.polygon)):
                    if path is not None:
                        write_text_atomic(path, text)
                        guard.wrote(path)
                written.append(out_path)
                hbb_files.append(hbb_path)
                converted_frames.append(image_path)
                warnings += [("bad-score", problem) for problem in texts.problems]
                if texts.missing_scores:
                    warnings.append(("no-score", f"{texts.missing_scores} of {len(texts.confidences)} HBBs in "
                                                 f"{hbb_path} carry no usable detector confidence; the conversion's "
                                                 "score is reported for those boxes"))
                warnings += [("bad-hbb", f"{problem}; line skipped") for problem in result.label_file.problems]
                broken_lines += len(result.label_file.problems)
                fallback = result.conversion.fallback
                for line, reason in zip(result.label_file.boxes.line.tolist(), result.conversion.reasons):
                    if reason:
                        warnings.append(("fallback", f"{hbb_path}:{line}: {reason}; the HBB was written as the OBB"))
                        reasons[reason] = reasons.get(reason, 0) + 1
                if save_img:
                    from hbb2obb.converters.image.draw import draw_conversion

                    drawing = outputs.drawing
                    picture = draw_conversion(result.image, result.xyxy, result.conversion,
                                              result.label_file.boxes.class_id, label_map=label_map,
                                              show_hbb=drawing["show_hbb"], show_masks=drawing["show_masks"],
                                              show_contours=drawing["show_segments"], show_obb=drawing["show_obb"],
                                              show_labels=drawing["show_labels"], show_confidence=show_confidence,
                                              confidences=texts.confidences)
                    with atomic_path(viz_dir / f"{image_path.stem}.jpg") as temporary:
                        picture.save(temporary, format="JPEG", quality=90)
                    guard.wrote(viz_dir / f"{image_path.stem}.jpg")
                readings[result.conversion.reading] = readings.get(result.conversion.reading, 0) + 1
                frame_readings.append(f"{image_path.name} {result.conversion.reading}")
                converted += 1
                boxes += len(fallback)
                fallbacks += int(fallback.sum())
                share = fallback.sum() / len(fallback) if len(fallback) else 0.0
                if fallback.any() and share > outputs.fallback_warn_share:
                    warnings.append(("fallback-share", f"{int(fallback.sum())} of {len(fallback)} boxes in "
                                                       f"{image_path.name} fell back to their HBB ({share:.1%})"))
                if len(fallback) and fallback.all():
                    wholly_fallen_back.append(image_path.name)
                bar.update(1)
    finally:
        guard.save()  # also when interrupted: the next run may replace what this one wrote
    warn(PROGRAM, warnings)
    click.echo(f"Converted {boxes} boxes in {converted} frames in {time.perf_counter() - start:.2f} s -> {obb_dir}")
    click.echo(f"Fallbacks (HBB written as the OBB): {fallbacks}")
    for reason, count in sorted(reasons.items()):
        click.echo(f"  {count}: {reason}")
    if wholly_fallen_back:
        shown = ", ".join(wholly_fallen_back[:10]) + (f", and {len(wholly_fallen_back) - 10} more"
                                                      if len(wholly_fallen_back) > 10 else "")
        click.echo(f"Fell back entirely: {len(wholly_fallen_back)} frame(s), {shown}")
    if readings:
        click.echo(
            "HBB tightness: " + ", ".join(f"{name} ({count} frames)" for name, count in sorted(readings.items()))
        )
        click.echo("  per frame: " + ", ".join(frame_readings))
    skipped = [(len(unprompted), "image(s) without an HBB file"), (len(orphans), "HBB file(s) without an image"),
               (len(unreadable), "unreadable frame(s)")]
    if broken_lines:  # named only when there are some, so the line reads as before otherwise
        skipped.append((broken_lines, "broken HBB line(s) (no OBB written for them)"))
    if any(count for count, _ in skipped):
        click.echo("Skipped: " + ", ".join(f"{count} {what}" for count, what in skipped))
    if confidence_dir is not None:
        click.echo(f"Confidences: {confidence_dir}")
    if polygon_dir is not None:
        click.echo(f"Polygons: {polygon_dir}")
    if save_img:
        click.echo(f"Pictures: {viz_dir}")
    if record is not None:
        totals = RunTotals(converted_frames, hbb_files, written, boxes, fallbacks, reasons, readings, skipped)
        command = reproducing_command(img_source, hbb_dir, obb_dir, params, outputs, confidence_dir)
        write_conversion_record(record, command, img_source, hbb_dir, obb_dir, params, outputs, confidence_dir,
                                params_from, totals)
        guard.wrote(record)
        guard.save()
        click.echo(f"Provenance: {record}")
    limit = outputs.fail_on_fallback_share
    if limit is not None and boxes and fallbacks / boxes > limit:
        click.echo(f"{PROGRAM}: error: {fallbacks} of {boxes} boxes ({fallbacks / boxes:.2%}) fell back to their "
                   f"HBB, over the --fail_on_fallback_share of {limit:.2%}", err=True)
        raise SystemExit(1)
    if unreadable:
        click.echo(f"{PROGRAM}: error: {len(unreadable)} frame(s) could not be read and have no OBB file "
                   f"(first: {unreadable[0]})", err=True)
        raise SystemExit(1)


def orphan_prompts(hbb_dir: Path, frames: list) -> list[Path]:
    """The HBB files of ``hbb_dir`` that no frame in ``frames`` is named after."""
    stems = {p.stem for p in frames}
    return sorted(p for p in hbb_dir.glob("*.txt") if p.stem not in stems)
