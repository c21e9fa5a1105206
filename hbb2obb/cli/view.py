"""``hbb2obb-view IMG_SOURCE LABELS [LABELS_B ...] -o DIR``: a review page of frames, boxes and their errors."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import click

from hbb2obb.cli.common import handles_errors, multi_value_command, progress_bar, version_option, warn
from hbb2obb.cli.eval import evaluate_with_bar
from hbb2obb.cli.options import evaluation_options
from hbb2obb.errors import InputError, UsageError
from hbb2obb.io import ImageSizes, load_label_map
from hbb2obb.io.format_names import ALL_FORMATS
from hbb2obb.report.files import refuse_inputs
from hbb2obb.scoring.evaluate import EvalSettings
from hbb2obb.view.images import write_pictures
from hbb2obb.view.model import from_label_sets, from_results, layer_of_set
from hbb2obb.view.page import check_output, write_page

PROGRAM = "hbb2obb-view"
DEFAULT_MAX_SIDE = 2048


def _scored(gt_dir, labels, names, settings, sizes, label_map, formats, jobs, no_bar):
    """Each set scored against the ground truth by the scoring core (``hbb2obb-eval``'s matching)."""
    results, warnings = [], []
    for path, name in zip(labels, names):
        result = evaluate_with_bar(gt_dir, path, settings, sizes, label_map, jobs, no_bar, f"Scoring {name}", formats)
        prefix = f"{name}: " if len(labels) > 1 else ""
        warnings += [(kind, prefix + message) for kind, message in result.warnings]
        results.append(result)
    return from_results(results, names), warnings


def _read(labels, names, fmt, sizes, label_map):
    """Each set read whole, without ground truth: shown as it is, unmatched."""
    from hbb2obb.io.label_sets import read_set

    sets, warnings, class_names = [], [], dict(label_map or {})
    for path, name in zip(labels, names):
        label_set = read_set(path, fmt, label_map=label_map, sizes=sizes, strict=False)
        prefix = f"{name}: " if len(labels) > 1 else ""
        warnings += [("skipped line", f"{prefix}{problem}: skipped") for problem in label_set.problems]
        for key, value in label_set.names.items():
            class_names.setdefault(key, value)
        sets.append(label_set)
    return dataclasses.replace(from_label_sets(sets, names), class_names=class_names), warnings


def _with_prompts(data, hbb_dir, sizes, settings):
    """The HBB prompts (YOLO-HBB ``NAME.txt`` per frame) as a layer, excluded classes dropped as for predictions."""
    from hbb2obb.io.label_sets import read_set

    prompts = read_set(hbb_dir, "yolo", sizes=sizes, strict=False)
    warnings = [("skipped line", f"HBB prompts: {problem}: skipped") for problem in prompts.problems]
    layer = layer_of_set(prompts, data.frames)
    if settings.excluded_classes:
        import numpy as np

        keep = ~np.isin(layer.boxes.class_id, settings.excluded_classes)
        layer = dataclasses.replace(layer, boxes=layer.boxes[keep], frame=layer.frame[keep])
    return dataclasses.replace(data, prompts=layer), warnings


def serve(out_dir: Path, port: int) -> None:
    """Serve the page folder on localhost until Ctrl-C."""
    import functools
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, format, *args):  # noqa: A002 - the signature is http.server's
            return None

    handler = functools.partial(Quiet, directory=str(out_dir))
    try:
        server = ThreadingHTTPServer(("127.0.0.1", port), handler)
    except OSError as exc:
        raise UsageError(f"--port {port}: cannot serve there ({exc.strerror or exc})") from None
    with server:
        click.echo(f"{PROGRAM}: serving {out_dir} at http://127.0.0.1:{server.server_address[1]}/ "
                   "(Ctrl-C stops)", err=True)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            click.echo(f"{PROGRAM}: stopped serving", err=True)


@multi_value_command({"excluded_classes": int, "names": str}, name=PROGRAM)
@click.argument("img_source", type=click.Path(path_type=Path))
@click.argument("labels", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("-o", "--out_dir", required=True, type=click.Path(path_type=Path),
              help="Folder of the page: DIR/index.html, the frames and the data files (created).")
@click.option("-gt", "--gt_dir", type=click.Path(path_type=Path),
              help="Ground truth: every label set is matched with it as hbb2obb-eval matches (IoU, pairs, misses).")
@click.option("-hd", "--hbb_dir", type=click.Path(path_type=Path), help="HBB prompts (YOLO-HBB), a layer of their own.")
@evaluation_options
@click.option("--one_to_one", is_flag=True, help="Exclusive matching, highest IoU first (default: non-exclusive).")
@click.option("-mp", "--map_path", type=click.Path(path_type=Path), help="Label map YAML {id: name}.")
@click.option("--gt_format", type=click.Choice(ALL_FORMATS), help="Ground-truth label format [default: detected].")
@click.option("--pred_format", type=click.Choice(ALL_FORMATS),
              help="Format of the label sets [default: detected per set].")
@click.option("--names", multiple=True, metavar="NAME",
              help="Names of the label sets on the page, one per LABELS [default: the paths as given].")
@click.option("--title", default=None, help="Heading of the page [default: the first label set].")
@click.option("--max_side", type=click.IntRange(min=256), default=DEFAULT_MAX_SIDE, show_default=True, metavar="PX",
              help="Long side of the frames the page shows first; larger frames are also kept at full resolution "
                   "for zooming in.")
@click.option("--no_full", is_flag=True, help="Leave out the full-resolution frames (a smaller page folder).")
@click.option("-j", "--jobs", type=int, default=1, show_default=True,
              help="Processes scoring and downscaling frames (0: all cores).")
@click.option("-nb", "--no_bar", is_flag=True, help="No progress bar.")
@click.option("--overwrite", is_flag=True, help="Write into DIR even when it holds files this command did not write.")
@click.option("--serve", "serve_page", is_flag=True, help="Then serve the page on http://127.0.0.1:PORT/ until Ctrl-C.")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True,
              help="Port of --serve (0: any free port).")
@version_option(PROGRAM)
@handles_errors(PROGRAM)
def main(img_source, labels, out_dir, gt_dir, hbb_dir, excluded_classes, iou_threshold, class_agnostic,
         exclude_edge_cases, edge_tolerance, img_width, img_height, one_to_one, map_path, gt_format, pred_format,
         names, title, max_side, no_full, jobs, no_bar, overwrite, serve_page, port):
    """Write a review page of the frames in IMG_SOURCE with the boxes of each LABELS set.

    Open DIR/index.html in a browser (from disk, or from any static web server): a frame list
    with each frame's mean IoU, misses, extra boxes and confidence range (sortable, filterable),
    the frame with pan and zoom, layers to toggle, colours by IoU, confidence or class, the
    details of a clicked box (its pair, IoU, angle error, confidence, file:line), the worst
    boxes of the run, two sets side by side or overlaid. With -gt every set is matched with the
    ground truth exactly as hbb2obb-eval matches. Frames already downscaled by an earlier run
    are reused. Exit status: 0 ok, 2 usage or input error.
    """
    from hbb2obb.scoring.evaluate import resolve_jobs

    if names and len(names) != len(labels):
        raise UsageError(f"--names gives {len(names)} name(s) for {len(labels)} label set(s)")
    names = list(names) if names else [str(path) for path in labels]
    if not Path(img_source).is_dir():
        raise InputError(f"{img_source}: image folder not found")
    jobs = resolve_jobs(jobs)
    refuse_inputs([("-o", out_dir)], [("image folder", img_source), ("ground truth", gt_dir),
                                      ("HBB prompts", hbb_dir), ("label map", map_path)]
                  + [("label set", path) for path in labels])
    if gt_dir is None and (gt_format is not None or excluded_classes or exclude_edge_cases or one_to_one
                           or class_agnostic):
        raise UsageError("--gt_format, --excluded_classes, --exclude_edge_cases, --one_to_one and --class_agnostic "
                         "are matching options: they need -gt GT_DIR")
    check_output(out_dir, overwrite)
    label_map = load_label_map(map_path)
    sizes = ImageSizes(img_source, img_width, img_height)
    settings = EvalSettings(excluded_classes=excluded_classes, iou_threshold=iou_threshold,
                            class_agnostic=class_agnostic, exclude_edge_cases=exclude_edge_cases,
                            edge_tolerance=edge_tolerance, one_to_one=one_to_one, missing_pred="empty")
    if gt_dir is not None:
        data, warnings = _scored(gt_dir, labels, names, settings, sizes, label_map, (gt_format, pred_format),
                                 jobs, no_bar)
        data = dataclasses.replace(data, class_names=label_map)
    else:
        data, warnings = _read(labels, names, pred_format, sizes, label_map)
    if hbb_dir is not None:
        data, prompt_warnings = _with_prompts(data, hbb_dir, sizes, settings)
        warnings += prompt_warnings
    if not data.frames:
        raise InputError("no frame to show: the label sets hold no frame")
    from hbb2obb.io import find_image

    found = {name: find_image(Path(img_source), name) for name in data.frames}
    images = {name: path for name, path in found.items() if path is not None}
    with progress_bar(len(images), "Frames", no_bar) as bar:
        pictures, problems = write_pictures(out_dir, images, max_side, full=not no_full, jobs=jobs,
                                            progress=bar.update)
    with progress_bar(len(data.frames), "Page", no_bar) as bar:
        run = write_page(data, out_dir, pictures, title=title or names[0], progress=bar.update)
    warnings += [("image", f"frame {name}: {reason}: shown without pixels") for name, reason in problems.items()]
    missing = [name for name in run.without_image if name not in problems]
    if missing:
        warnings.append(("image", f"{len(missing)} frame(s) have no image in {img_source} (first: {missing[0]}): "
                                  "shown without pixels"))
    warn(PROGRAM, warnings)
    click.echo(f"{PROGRAM}: wrote {out_dir / 'index.html'}: {run.frames} frames, {run.boxes} boxes", err=True)
    if serve_page:
        serve(out_dir, port)


if __name__ == "__main__":
    main()
