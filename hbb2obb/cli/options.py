"""The click option groups that the scoring commands (eval, analyze, optimize) share, and
:func:`passes_settings`, which turns the matching options into one :class:`EvalSettings`."""

from __future__ import annotations

import dataclasses
import functools
from pathlib import Path

import click

from hbb2obb.cli.reading import split_option
from hbb2obb.detection.evaluate import AP_RULES, DEFAULT_MAX_DETS, DIFFICULT_RULES
from hbb2obb.frames.pairing import MISSING_PRED_POLICIES
from hbb2obb.io.format_names import ALL_FORMATS as FORMATS
from hbb2obb.scoring.evaluate import EvalSettings

#: The matching settings; each is the parameter of the option of the same name.
SETTINGS_NAMES = tuple(field.name for field in dataclasses.fields(EvalSettings))


def evaluation_options(function):
    """The matching flags of the reference tool, shared by eval, analyze and optimize."""
    options = [
        click.option("-e", "--excluded_classes", type=int, multiple=True,
                     help="Class ids to leave out on both sides; several after one flag: -e 0 3."),
        click.option("-t", "--iou_threshold", type=float, default=0.1, show_default=True,
                     help="A pair matches when its IoU is strictly greater."),
        click.option("-ca", "--class_agnostic", is_flag=True, help="Match boxes whatever their class."),
        click.option("-exc", "--exclude_edge_cases", is_flag=True,
                     help="Drop ground-truth boxes touching the frame border (needs the frame size)."),
        click.option("-et", "--edge_tolerance", type=float, default=1.0, show_default=True,
                     help="Pixels from the border that count as touching it."),
        click.option("-iw", "--img_width", type=float, help="Frame width in pixels (all frames)."),
        click.option("-ih", "--img_height", type=float, help="Frame height in pixels (all frames)."),
    ]
    for option in reversed(options):
        function = option(function)
    return function


def detection_options(function):
    """The detection-metric flags: AP rule, operating point, detections per frame, figures."""
    options = [
        click.option("--ap_rule", type=click.Choice(AP_RULES), default="voc07", show_default=True,
                     help="DOTA-rule AP interpolation: voc07 (11-point, the DOTA task-1 default) or voc (all points)."),
        click.option("--conf", type=float, default=None,
                     help="Confidence for precision, recall, F1 and the confusion matrix "
                          "(default: the one that maximizes F1, printed)."),
        click.option("--max_dets", type=int, default=DEFAULT_MAX_DETS, show_default=True,
                     help="COCO rule: detections kept per frame and class (raise it for dense aerial frames)."),
        click.option("--difficult", type=click.Choice(DIFFICULT_RULES), default="ignore", show_default=True,
                     help="COCO rule: difficult ground truth as crowd regions, as COCOeval treats iscrowd "
                          "(ignore), or as ordinary boxes (count). The DOTA rule ignores them as its devkit does. "
                          "A COCO iscrowd region is a crowd region either way."),
        click.option("--plots", type=click.Path(path_type=Path), metavar="DIR",
                     help="Write confusion_matrix.png and pr_curves.png (with scores) to DIR."),
        click.option("--no_detection", is_flag=True,
                     help="Leave out the detection metrics (precision, recall, AP): the reference tool's keys only."),
    ]
    for option in reversed(options):
        function = option(function)
    return function


def run_options(function):
    """Where sizes and names come from, and how a run goes: shared by eval and analyze."""
    options = [
        click.option("-i", "--img_source", type=click.Path(path_type=Path),
                     help="Folder of the frames; sizes are read from the image headers "
                          "(normalized labels, frame edge)."),
        click.option("-mp", "--map_path", type=click.Path(path_type=Path), help="Label map YAML {id: name}."),
        click.option("--one_to_one", is_flag=True,
                     help="Exclusive matching, highest IoU first (default: non-exclusive)."),
        click.option("--missing_pred", type=click.Choice(MISSING_PRED_POLICIES), default="skip", show_default=True,
                     help="A ground-truth file without a prediction file: skip the frame, score it as empty, "
                          "or stop."),
        click.option("-j", "--jobs", type=int, default=1, show_default=True, help="Processes (0: all cores)."),
        click.option("-nb", "--no_bar", is_flag=True, help="No progress bar."),
        click.option("--gt_format", type=click.Choice(FORMATS),
                     help="Ground-truth label format [default: detected; a folder of .txt files is YOLO-OBB or "
                          "DOTA]. COCO: give the .json file as GT_DIR."),
        click.option("--pred_format", type=click.Choice(FORMATS),
                     help="Prediction label format [default: detected], as --gt_format."),
        split_option,
        click.option("--pairs", "pairs_path", type=click.Path(path_type=Path), metavar="FILE",
                     help="Write the match table, one row per GT box and per unmatched prediction, "
                          "to FILE.csv (or .parquet with pyarrow)."),
    ]
    for option in reversed(options):
        function = option(function)
    return function


spatial_threshold_option = click.option(
    "--spatial_threshold", type=float, default=0.5, show_default=True,
    help="Spatial match: a ground-truth box passes when its best IoU is at least this.")


def require_option(function):
    """``--require EXPR`` (repeatable): a CI gate on a numeric key of the run's numbers."""
    return click.option(
        "--require", "requirements", multiple=True, metavar="EXPR",
        help="CI gate on any numeric key of the metric dict, e.g. 'avg_iou>=0.85', 'iou_at_90>=0.5', "
             "or per class 'Car:avg_iou>=0.85' (name from -mp, or id); exit 1 when any fails, "
             "2 when a key or class is unknown. Repeatable.")(function)


def passes_settings(function):
    """Call ``function`` with ``settings``, the :class:`EvalSettings` of the options named in
    :data:`SETTINGS_NAMES`, in place of those options.

    The command must declare every one of them (:func:`evaluation_options`, :func:`run_options`,
    :data:`spatial_threshold_option`). Put it under ``handles_errors``: a value out of range is a
    usage error.
    """

    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        settings = EvalSettings(**{name: kwargs.pop(name) for name in SETTINGS_NAMES})
        return function(*args, settings=settings, **kwargs)

    return wrapper
