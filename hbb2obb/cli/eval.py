"""``hbb2obb-eval GT_DIR PRED_DIR``: score converted OBBs against ground truth (docs/metrics.md §3-4).

This module is what the command does; its click declaration (``--help``, the option groups that
analyze and optimize share) is :mod:`hbb2obb.cli.eval_options`, imported on first use of
:data:`main`. The console script (:func:`run`) parses a plain command line itself
(:mod:`hbb2obb.cli.eval_argv`) and hands anything else to click, so a plain run never imports
click: 38 million instructions, 7 % of a 10-box run (issue 18).
"""

from __future__ import annotations

import errno
import gc
import sys
from pathlib import Path

from hbb2obb.cli.console import echo_ascii, ends_without_teardown, handles_errors, progress_bar, warn, without_teardown
from hbb2obb.cli.pictures import emit_overlays, overlay_frames
from hbb2obb.errors import InputError, UsageError
from hbb2obb.scoring.evaluate import EvalSettings, evaluate_frames
from hbb2obb.scoring.metric_dict import summarize
from hbb2obb.detection.evaluate import DetectionParams
from hbb2obb.frames.pairing import plan_any
from hbb2obb.io import ImageSizes, load_label_map
from hbb2obb.io.format_names import ALL_FORMATS as FORMATS  # not label_sets: a plain run reads none of its formats
from hbb2obb.report.serialize import metrics_json_bytes, write_metrics

# Gates (--require), the golden check (--expect), --pairs and the text report are imported where
# they are used: a plain `--json` run needs none of them, and every module costs start-up.

PROGRAM = "hbb2obb-eval"

#: Names defined by :mod:`hbb2obb.cli.eval_options` (click), found here as before.
_CLICK_NAMES = frozenset({"main", "evaluation_options", "run_options", "detection_options", "spatial_threshold_option"})


def __getattr__(name: str):
    if name not in _CLICK_NAMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from hbb2obb.cli import eval_options

    return getattr(eval_options, name)


def evaluate_with_bar(gt_dir, pred_dir, settings, sizes, label_map, jobs, no_bar, what="Evaluating",
                      formats=(None, None), detection=None):
    """Pair the frames (or read a DOTA Task1 submission), then evaluate them under a progress bar over frames.

    ``formats`` are ``--gt_format`` and ``--pred_format`` (``None``: detected).
    """
    plan = plan_any(gt_dir, pred_dir, settings.missing_pred, label_map, gt_format=formats[0],
                    pred_format=formats[1], sizes=sizes)
    with progress_bar(len(plan.frames), what, no_bar) as bar:
        return evaluate_frames(gt_dir, pred_dir, settings, sizes=sizes, label_map=label_map, jobs=jobs,
                               progress=bar.update, plan=plan, detection=detection)


def emit_pairs(path, result, gt_dir, label_map, edge_tolerance: float, spatial_threshold: float) -> list:
    """Write the ``--pairs`` file; returns the warnings met on the way (difficult flags)."""
    from hbb2obb.analysis.cuts import difficult_flags, ground_truth_properties
    from hbb2obb.report.pairs import pair_columns, write_pairs
    from hbb2obb.scoring.overlap_metrics import row_overlap

    flags, warnings = difficult_flags(result.table, gt_dir, label_map)
    properties = ground_truth_properties(result.table, flags, edge_tolerance)
    write_pairs(path, pair_columns(result.table, properties, row_overlap(result.table, spatial_threshold)))
    return warnings


def evaluate_command(gt_dir, pred_dir, excluded_classes, iou_threshold, class_agnostic, exclude_edge_cases, edge_tolerance,
         img_width, img_height, img_source, map_path, one_to_one, missing_pred, output, as_json, requirements,
         overlay, overlay_size,
         spatial_threshold, expect, expect_tolerance, expect_ignore_extra, jobs, debug, no_bar, gt_format,
         pred_format, pairs_path, ap_rule, conf, max_dets, plots, no_detection):
    """Score the oriented boxes in PRED_DIR against the ground truth in GT_DIR.

    Label files are paired by name; boxes are matched per frame by rotated IoU. Either side may
    be a folder of YOLO-OBB, DOTA, VOC or LabelMe files, or a COCO .json file; PRED_DIR may also
    be a DOTA Task1 submission (Task1_<class>.txt files; needs -mp). With a confidence column,
    the report adds rotated AP (COCO and DOTA rules), precision, recall and F1. Exit status:
    0 ok, 1 a --require gate or the --expect check failed, 2 usage or input error.
    """
    label_map = load_label_map(map_path)
    gates = []
    if requirements:
        from hbb2obb.gates.require import parse_gate

        gates = [parse_gate(text, label_map) for text in requirements]
    if expect is None and (expect_tolerance is not None or expect_ignore_extra):
        raise UsageError("--expect_tolerance and --expect_ignore_extra need --expect GOLDEN")
    if expect_tolerance is not None and not expect_tolerance >= 0:
        raise UsageError(f"--expect_tolerance must be a non-negative number, got {expect_tolerance}")
    golden = None
    if expect is not None:
        from hbb2obb.gates.golden import load_golden

        golden = load_golden(expect)
    if output is not None and output.suffix.lower() not in (".yaml", ".yml", ".json"):
        raise UsageError(f"--output {output}: the file name must end in .yaml, .yml or .json")
    settings = EvalSettings(excluded_classes, iou_threshold, class_agnostic, exclude_edge_cases, edge_tolerance,
                            one_to_one, missing_pred, spatial_threshold)
    img_source = overlay_frames(PROGRAM, overlay, img_source, gt_dir)
    sizes = ImageSizes(img_source, img_width, img_height)
    detection = DetectionParams(max_dets=max_dets, ap_rule=ap_rule, conf=conf)
    if no_detection:
        if plots is not None:
            raise UsageError("--plots draws the detection metrics: it cannot go with --no_detection")
        detection = None
    if pairs_path is not None:
        from hbb2obb.report.pairs import check_pairs_path

        check_pairs_path(pairs_path)
    result = evaluate_with_bar(gt_dir, pred_dir, settings, sizes, label_map, jobs, no_bar,
                               formats=(gt_format, pred_format), detection=detection)
    warnings = list(result.warnings)
    if pairs_path is not None:
        warnings += emit_pairs(pairs_path, result, gt_dir, label_map, edge_tolerance, spatial_threshold)
    warn(PROGRAM, warnings)
    metrics = summarize(result)
    # Gates are checked before anything is printed or written: a key the metric dict lacks (a
    # typo) is a usage error, and must not leave a report behind that reads like a run.
    outcomes = []
    if gates:
        from hbb2obb.gates.require import gate_outcomes

        outcomes = gate_outcomes(gates, metrics)
    if conf is not None and detection is not None and not result.detection_summary.scored:
        warn(PROGRAM, [("confidence", f"--conf {conf:g} has no effect: the predictions carry no confidence")])
    if as_json:
        echo_ascii(metrics_json_bytes(metrics))
    else:
        import click  # the text report is written as click writes it

        from hbb2obb.report.detection_report import render_detection
        from hbb2obb.report.eval_report import render_report, render_unmatched

        if debug:
            click.echo(render_unmatched(result.table, label_map))
        click.echo(render_report(metrics, label_map), nl=False)
        click.echo(render_detection(metrics, label_map), nl=False)
    if output is not None:
        write_metrics(metrics, output)
    if plots is not None:
        write_detection_figures(result, metrics, label_map, plots)
    emit_overlays(PROGRAM, result.table, img_source, overlay, overlay_size, no_bar)
    if outcomes or golden is not None:
        import click
    for gate, passed, value in outcomes:
        click.echo(f"{'pass' if passed else 'FAIL'}  {gate.text}  (value {value:.6g})", err=as_json)
    golden_failed = False
    if golden is not None:
        from hbb2obb.gates.golden import compare_to_golden, render_comparison, stored_form

        comparison = compare_to_golden(stored_form(metrics, expect), golden, expect_tolerance or 0.0,
                                       expect_ignore_extra, source=str(expect))
        click.echo(render_comparison(comparison), err=as_json)
        golden_failed = not comparison.passed
    if golden_failed or not all(passed for _, passed, _ in outcomes):
        raise SystemExit(1)


def write_detection_figures(result, metrics: dict, label_map, folder: Path) -> None:
    """``confusion_matrix.png`` always, ``pr_curves.png`` when the predictions carry scores."""
    from hbb2obb.plotting.detection import confusion_figure, pr_figure

    try:
        folder.mkdir(parents=True, exist_ok=True)
        confusion_figure(metrics, label_map).savefig(folder / "confusion_matrix.png")
        if result.detection_summary.scored:
            pr_figure(result.detection_summary, metrics, label_map).savefig(folder / "pr_curves.png")
    except OSError as exc:
        raise InputError(f"--plots {folder}: cannot write the figures ({exc.strerror or exc})") from exc


def _plain_main(arguments: dict) -> None:
    """Run the command on arguments :func:`~hbb2obb.cli.eval_argv.plain_arguments` parsed, as click's
    standalone mode would run it: a closed pipe ends it with status 1, an interrupt with "Aborted!"."""
    try:
        handles_errors(PROGRAM)(evaluate_command)(**arguments)
    except OSError as exc:
        if exc.errno != errno.EPIPE:
            raise
        from click.utils import PacifyFlushWrapper

        sys.stdout = PacifyFlushWrapper(sys.stdout)
        sys.stderr = PacifyFlushWrapper(sys.stderr)
        sys.exit(1)
    except (EOFError, KeyboardInterrupt):
        import click

        click.echo(file=sys.stderr)
        click.echo("Aborted!", file=sys.stderr)
        sys.exit(1)


def run() -> None:
    """The console script: ends without freeing the run's objects one by one (:func:`without_teardown`).

    A command line :func:`~hbb2obb.cli.eval_argv.plain_arguments` reads is run without click;
    any other (``--help``, ``--version``, a repeated or unknown flag, a value click would reject)
    goes to the click command, which prints and exits exactly as it always did.
    """
    from hbb2obb.cli.eval_argv import plain_arguments  # here: analyze and optimize import this module too

    arguments = plain_arguments(sys.argv[1:])
    if arguments is not None:
        return ends_without_teardown(lambda: _plain_main(arguments))()
    gc.disable()  # as hbb2obb_launch does while a command is imported
    try:
        from hbb2obb.cli.eval_options import main as command
    finally:
        gc.enable()
    gc.freeze()
    return without_teardown(command)()


if __name__ == "__main__":
    run()
