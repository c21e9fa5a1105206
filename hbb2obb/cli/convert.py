"""``hbb2obb IMG_SOURCE``: convert HBB prompts to OBBs with the built-in ``image`` converter.

Mirrors the reference tool's main command where it applies (image or folder of images, HBBs
from ``--hbb_dir``, OBBs to ``--obb_dir``, ``--scale_factors`` one or two values,
``--opening_kernel_percentage``, ``--imgsz``, ``--save_img``/``--viz_dir``, ``--no_bar``), but
needs no model: it segments each box from the pixels (see :mod:`hbb2obb.converters.image.converter`).
"""

from __future__ import annotations

import os
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
from hbb2obb.cli.workers import check_scheduler, task_executor
from hbb2obb.converters.distribute import (
    Frame,
    check_outputs_apart,
    plan_frames,
    remove_temporaries,
    run_frames,
)
from hbb2obb.converters.folder_frames import image_paths, orphan_prompts, prompt_files, tally_outcomes
from hbb2obb.converters.frame_tasks import FrameJob
from hbb2obb.converters.image.converter import DEFAULT_PARAMETERS, TIGHTNESS, margin_value, validate_parameters
from hbb2obb.errors import Hbb2ObbError, InputError, UsageError
from hbb2obb.io.folder_lock import CONVERSION_LOCK, FolderLock
from hbb2obb.io.labelmap import load_label_map, load_yaml
from hbb2obb.io.written import OutputGuard
from hbb2obb.scoring.evaluate import resolve_jobs
from hbb2obb.sweeps.dask_executor import DEFAULT_RETRIES, failure_reason

PROGRAM = "hbb2obb"


def best_parameters(results_path: Path) -> dict:
    """The converter parameters of the best grid point of a sweep's ``results.yaml``."""
    # the checks of every YAML file a user gives: a folder, odd encodings, alias bombs, deep nesting
    data = load_yaml(Path(results_path), "results file")
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
@click.option("-j", "--jobs", type=int, default=1, show_default=True,
              help="Convert the frames in this many processes (0: one per core); the files are the same.")
@click.option("--scheduler", metavar="ADDRESS|local[:N]",
              help="Convert the frames as Dask tasks: on the scheduler at ADDRESS (tcp://host:8786; workers must "
                   "read the inputs at the same paths) or on N local worker processes (local: one per core). "
                   "Needs: pip install 'hbb2obb-toolkit[dask]'.")
@click.option("--resume", is_flag=True,
              help="Keep the frames an earlier run with the same settings completed (its record is "
                   "OBB_DIR/.hbb2obb-frames.jsonl) and convert the rest, e.g. after a kill or Ctrl-C.")
@output_options
@version_option(PROGRAM)
@handles_errors(PROGRAM)
def main(img_source, hbb_dir, obb_dir, scale_factors, opening_kernel_percentage, imgsz, corner_radius, tightness,
         margin, confidence_dir, params_from, save_img, map_path, viz_dir, overwrite, no_bar, jobs, scheduler, resume,
         **options):
    """Convert the HBB prompts of the frames in IMG_SOURCE (an image or a folder) to OBBs.

    Each box is segmented from the image pixels (no model, no download) and a rectangle is
    fitted to the mask and the HBB. A box without a usable mask, or whose fitted box the image
    supports less than the HBB, is written as its HBB and counted as a fallback with its
    reason. Files in the output folders that hbb2obb did not write are never replaced without
    --overwrite. Exit status: 0 ok, 1 some frames could not be read (the others were
    converted) or more boxes fell back than --fail_on_fallback_share allows, 2 usage or input
    error (nothing written).
    """
    resolve_jobs(jobs)
    scheduler = check_scheduler(click.get_current_context(), scheduler, None, tasks="frames")
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
    prompts = prompt_files(hbb_dir)
    prompted = [p for p in frames if p.stem in prompts]
    unprompted = [p for p in frames if p.stem not in prompts]
    warnings += [("no-hbb", f"{p}: no HBB file {hbb_dir / (p.stem + '.txt')}; frame skipped") for p in unprompted]
    orphans = orphan_prompts(prompts, frames) if img_source.is_dir() else []
    warnings += [("no-image", f"{p}: no image named {p.stem}.* in {img_source}; its boxes were not converted")
                 for p in orphans]
    guard = OutputGuard()
    polygon_dir = outputs.polygon_dir
    job = FrameJob(params, outputs.settings, polygons=polygon_dir is not None, side_car=confidence_dir is not None,
                   drawing=outputs.drawing if save_img else None, label_map=label_map,
                   fallback_warn_share=outputs.fallback_warn_share)
    folders = {"obb": obb_dir, "confidence": confidence_dir, "polygon": polygon_dir, "picture": viz_dir}
    if not prompted:
        raise InputError(f"{hbb_dir}: none of the {len(frames)} image(s) in {img_source} has an HBB file here "
                         f"(looked for {frames[0].stem}.txt and the like): nothing to convert")
    suffixes = {"picture": ".jpg"}
    to_convert = [Frame(p, prompts[p.stem],
                        {kind: folders[kind] / f"{p.stem}{suffixes.get(kind, '.txt')}" for kind in job.kinds()})
                  for p in prompted]
    check_outputs_apart(to_convert)  # before the locks: a refused run leaves no folder behind
    warnings += [("lock", note) for note in lock_outputs(folders[kind] for kind in job.kinds())]
    identity = {"img_source": os.path.abspath(img_source), "hbb_dir": os.path.abspath(hbb_dir),
                "outputs": {kind: os.path.abspath(folders[kind]) for kind in job.kinds()}}
    plan = plan_frames(to_convert, job, obb_dir, guard, resume=resume, identity=identity)
    record = record_path(obb_dir) if outputs.save_provenance else None
    # kind by kind, as the files are listed in the refusal's "first:"
    targets = plan.targets_to_write(("obb", "picture", "confidence", "polygon"))
    targets += [record] if record is not None else []
    if not overwrite:
        guard.refuse_foreign(targets)
    # The cluster first: a scheduler that does not answer leaves no folder behind.
    with task_executor(PROGRAM, jobs, scheduler, DEFAULT_RETRIES, _frame_failed) as executor:
        for kind in job.kinds():
            folders[kind].mkdir(parents=True, exist_ok=True)
        remove_temporaries(plan)
        if resume:
            click.echo(f"Resuming: {len(plan.done)} of {len(prompted)} frame(s) complete in {plan.record_path}, "
                       "kept" if plan.resumed else
                       f"Resuming: no record of an earlier run in {obb_dir}: converting every frame")
        start = time.perf_counter()
        try:
            with progress_bar(len(plan.todo), "Converting", no_bar) as bar:
                outcomes = run_frames(plan, executor, guard, absolute=scheduler is not None,
                                      on_frame=lambda index, outcome: bar.update(1))
        finally:
            guard.save()  # also when interrupted: the next run may replace what this one wrote
    tally = tally_outcomes(to_convert, outcomes)
    warnings += tally.warnings
    warn(PROGRAM, warnings)
    elapsed = time.perf_counter() - start
    click.echo(f"Converted {tally.boxes} boxes in {tally.converted} frames in {elapsed:.2f} s -> {obb_dir}")
    click.echo(f"Fallbacks (HBB written as the OBB): {tally.fallbacks}")
    for reason, count in sorted(tally.reasons.items()):
        click.echo(f"  {count}: {reason}")
    if tally.wholly_fallen_back:
        fallen = tally.wholly_fallen_back
        shown = ", ".join(fallen[:10]) + (f", and {len(fallen) - 10} more" if len(fallen) > 10 else "")
        click.echo(f"Fell back entirely: {len(fallen)} frame(s), {shown}")
    if tally.readings:
        click.echo(
            "HBB tightness: " + ", ".join(f"{name} ({count} frames)" for name, count in sorted(tally.readings.items()))
        )
        click.echo("  per frame: " + ", ".join(tally.frame_readings))
    skipped = [(len(unprompted), "image(s) without an HBB file"), (len(orphans), "HBB file(s) without an image"),
               (len(tally.unreadable), "unreadable frame(s)")]
    if tally.broken_lines:  # named only when there are some, so the line reads as before otherwise
        skipped.append((tally.broken_lines, "broken HBB line(s) (no OBB written for them)"))
    if any(count for count, _ in skipped):
        click.echo("Skipped: " + ", ".join(f"{count} {what}" for count, what in skipped))
    if confidence_dir is not None:
        click.echo(f"Confidences: {confidence_dir}")
    if polygon_dir is not None:
        click.echo(f"Polygons: {polygon_dir}")
    if save_img:
        click.echo(f"Pictures: {viz_dir}")
    if record is not None:
        totals = RunTotals(tally.converted_frames, tally.hbb_files, tally.written, tally.boxes, tally.fallbacks,
                           tally.reasons, tally.readings, skipped)
        command = reproducing_command(img_source, hbb_dir, obb_dir, params, outputs, confidence_dir)
        write_conversion_record(record, command, img_source, hbb_dir, obb_dir, params, outputs, confidence_dir,
                                params_from, totals)
        guard.wrote(record)
        guard.save()
        click.echo(f"Provenance: {record}")
    limit = outputs.fail_on_fallback_share
    if limit is not None and tally.boxes and tally.fallbacks / tally.boxes > limit:
        click.echo(f"{PROGRAM}: error: {tally.fallbacks} of {tally.boxes} boxes ({tally.fallbacks / tally.boxes:.2%}) "
                   f"fell back to their HBB, over the --fail_on_fallback_share of {limit:.2%}", err=True)
        raise SystemExit(1)
    if tally.unreadable:
        click.echo(f"{PROGRAM}: error: {len(tally.unreadable)} frame(s) could not be read and have no OBB file "
                   f"(first: {tally.unreadable[0]})", err=True)
        raise SystemExit(1)


def lock_outputs(folders) -> list[str]:
    """Hold the lock of each output folder until the command ends (a second conversion into one of
    them is refused, exit status 2); the notes a person should hear (a dead run's lock taken over)."""
    context = click.get_current_context()
    notes = []
    distinct = {}  # one lock per folder, however its paths are spelled; named as the user gave it
    for folder in folders:
        distinct.setdefault(os.path.realpath(folder), Path(folder))
    for _, folder in sorted(distinct.items()):
        notes += context.with_resource(FolderLock(folder, CONVERSION_LOCK, "conversion",
                                                  "wait for it to finish, or give another --obb_dir")).notes
    return notes


def _frame_failed(call: tuple, exc: BaseException):
    """A frame's Dask task given up on: its exception raised as a run in one process raises it, or,
    for a lost worker, an error naming the frame."""
    if type(exc).__name__ == "KilledWorker":
        raise Hbb2ObbError(f"{call[3]}: {failure_reason(exc)}; the frames finished so far are kept: "
                           "run again with --resume to convert the rest")
    raise exc
