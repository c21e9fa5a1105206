"""``hbb2obb-eval GT_DIR PRED_DIR``: score converted OBBs against ground truth (docs/metrics.md §3-4)."""

from __future__ import annotations

from pathlib import Path

import click
from click.core import ParameterSource

from hbb2obb.api.evaluation import Evaluation, detection_warnings, evaluate_run, nothing_scored, plan_run
from hbb2obb.cli.ci_reports import check_report_paths, ci_report_options, emit_ci_reports, run_title
from hbb2obb.cli.common import echo_ascii, handles_errors, multi_value_command, progress_bar, version_option, warn
from hbb2obb.cli.options import (
    detection_options,
    evaluation_options,
    passes_settings,
    require_option,
    run_options,
    spatial_threshold_option,
)
from hbb2obb.cli.pictures import emit_overlays, overlay_frames, overlay_options, overlay_targets
from hbb2obb.cli.reading import coco_angle_option
from hbb2obb.detection.evaluate import DetectionParams
from hbb2obb.errors import InputError, UsageError
from hbb2obb.io import ImageSizes, load_label_map
from hbb2obb.io.written import OutputGuard
from hbb2obb.report.serialize import metrics_json_bytes, write_metrics

# Gates (--require), the golden check (--expect), --pairs and the text report are imported where
# they are used: a plain `--json` run needs none of them, and every module costs start-up.

PROGRAM = "hbb2obb-eval"


def evaluate_with_bar(gt_dir, pred_dir, settings, sizes, label_map, jobs, no_bar, what="Evaluating",
                      formats=(None, None), detection=None, read_options=None):
    """:func:`scored_with_bar`'s accumulated result (:class:`~hbb2obb.scoring.evaluate.EvaluationResult`)."""
    return scored_with_bar(gt_dir, pred_dir, settings, sizes, label_map, jobs, no_bar, what, formats, detection,
                           read_options).result


def scored_with_bar(gt_dir, pred_dir, settings, sizes, label_map, jobs, no_bar, what="Evaluating",
                    formats=(None, None), detection=None, read_options=None) -> Evaluation:
    """Pair the frames (or read a DOTA Task1 submission), then evaluate them under a progress bar
    over frames: the Python API's :func:`~hbb2obb.api.evaluation.evaluate_run`.

    ``formats`` are ``--gt_format`` and ``--pred_format`` (``None``: detected); ``read_options``
    those of :data:`~hbb2obb.io.format_names.READ_OPTIONS` (``--split``, ``--coco_angle``).
    """
    plan = plan_run(gt_dir, pred_dir, settings, label_map=label_map, sizes=sizes, gt_format=formats[0],
                    pred_format=formats[1], read_options=read_options)
    with progress_bar(len(plan.frames), what, no_bar) as bar:
        return evaluate_run(gt_dir, pred_dir, settings, sizes=sizes, label_map=label_map, jobs=jobs,
                            progress=bar.update, plan=plan, detection=detection, gt_format=formats[0],
                            pred_format=formats[1], read_options=read_options)


def emit_pairs(path, result, gt_dir, label_map) -> list:
    """Write the ``--pairs`` file of an accumulated result; returns the warnings met on the way (difficult flags)."""
    return write_pair_file(path, Evaluation(result, gt_dir))


def write_pair_file(path, evaluation: Evaluation) -> list:
    """Write the ``--pairs`` file (the API's :meth:`~hbb2obb.api.evaluation.Evaluation.pair_columns`);
    returns the warnings met on the way (difficult flags)."""
    from hbb2obb.report.pairs import write_pairs

    write_pairs(path, evaluation.pair_columns())
    return list(evaluation.pair_warnings)


@multi_value_command({"excluded_classes": int}, name=PROGRAM)
@click.argument("gt_dir", type=click.Path(path_type=Path))
@click.argument("pred_dir", type=click.Path(path_type=Path))
@evaluation_options
@run_options
@click.option("-o", "--output", type=click.Path(path_type=Path), help="Write the metric dict to FILE (.yaml or .json).")
@click.option("--json", "as_json", is_flag=True, help="Print the metric dict as JSON on stdout instead of the report.")
@require_option
@spatial_threshold_option
@click.option("--expect", type=click.Path(path_type=Path), metavar="GOLDEN",
              help="Golden-file check: compare the metric dict with a stored -o output; exit 1 unless all match.")
@click.option("--expect_tolerance", type=float, metavar="T",
              help="Numbers within T of the golden value match (default 0: exact).")
@click.option("--expect_ignore_extra", is_flag=True, help="Fields the golden file lacks do not count.")
@click.option("-d", "--debug", is_flag=True, help="List unmatched boxes per frame.")
@click.option("--overwrite", is_flag=True,
              help="Let -o, --pairs, --plots, --junit and --overlay replace files hbb2obb did not write, "
                   "the run's own inputs included (refused otherwise).")
@detection_options
@coco_angle_option
@overlay_options
@ci_report_options
@version_option(PROGRAM)
@handles_errors(PROGRAM)
@passes_settings
def main(gt_dir, pred_dir, settings, img_width, img_height, img_source, map_path, output, as_json, requirements,
         overlay, overlay_size, expect, expect_tolerance, expect_ignore_extra, jobs, debug, no_bar, gt_format,
         pred_format, pairs_path, ap_rule, conf, max_dets, plots, no_detection, overwrite, difficult, junit, summary,
         split, coco_angle):
    """Score the oriented boxes in PRED_DIR against the ground truth in GT_DIR.

    Label files are paired by name; boxes are matched per frame by rotated IoU. Either side may
    be a folder of YOLO-OBB, DOTA, VOC or LabelMe files, or a COCO .json file; PRED_DIR may also
    be a DOTA Task1 submission (Task1_CLASS.txt files; needs -mp). With a confidence column,
    the report adds rotated AP (COCO and DOTA rules), precision, recall and F1. Exit status:
    0 ok, 1 a --require gate or the --expect check failed, 2 usage or input error (a run that
    scored nothing included: no frame, no prediction file, or every prediction line skipped).
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
    img_source = overlay_frames(PROGRAM, overlay, img_source, gt_dir)
    sizes = ImageSizes(img_source, img_width, img_height)
    # the default policy skips frames without a prediction file in the matching keys (as the reference
    # tool does) but counts their ground truth as missed in the detection metrics; only an explicit
    # --missing_pred skip drops them there too
    count_missing = click.get_current_context().get_parameter_source("missing_pred") is ParameterSource.DEFAULT
    detection = DetectionParams(max_dets=max_dets, ap_rule=ap_rule, conf=conf, difficult=difficult,
                                count_missing=count_missing or settings.missing_pred != "skip")
    if no_detection:
        if plots is not None:
            raise UsageError("--plots draws the detection metrics: it cannot go with --no_detection")
        detection = None
    if pairs_path is not None:
        from hbb2obb.report.pairs import check_pairs_path

        check_pairs_path(pairs_path)
    from hbb2obb.report.files import refuse_shared, refuse_unwritable

    files = [("-o", output), ("--pairs", pairs_path)] + [
        ("--plots", plots / name) for name in (FIGURES if plots is not None else ())]
    refuse_unwritable(files=files, folders=[("--plots", plots), ("--overlay", overlay)])
    guard = OutputGuard()
    if not overwrite:
        refuse_own_inputs(output, pairs_path, plots, (gt_dir, pred_dir, expect, map_path))
    started = check_report_paths(junit, summary, [("ground truth", gt_dir), ("predictions", pred_dir),
                                                  ("--expect golden file", expect), ("label map", map_path)])
    named = files + [("--junit", junit), ("--summary", summary)]
    refuse_shared(named)
    if not overwrite:  # then any other file hbb2obb did not write: refused before anything is read
        # (the summary is appended to, never replaced)
        guard.refuse_foreign([path for flag, path in named if path is not None and flag != "--summary"])
    evaluation = scored_with_bar(gt_dir, pred_dir, settings, sizes, label_map, jobs, no_bar,
                                 formats=(gt_format, pred_format), detection=detection,
                                 read_options={"split": split, "coco_angle": coco_angle})
    result = evaluation.result
    nothing = nothing_scored(result)
    if nothing is not None:
        warn(PROGRAM, result.warnings)
        raise InputError(nothing)
    # the overlays' names come from the frames scored: checked before the first write
    overlays = overlay_targets(result.table, overlay)
    refuse_unwritable(files=[("--overlay", path) for path in overlays])
    refuse_shared(named + [("--overlay", path) for path in overlays])
    if not overwrite:
        guard.refuse_foreign(overlays)
    with guard:  # what was written is recorded, even when a gate fails or a write breaks
        warnings = list(result.warnings)
        if pairs_path is not None:
            warnings += write_pair_file(pairs_path, evaluation)
            guard.wrote(pairs_path)
        warn(PROGRAM, warnings)
        metrics = evaluation.metrics
        # Gates are checked before anything is printed or written: a key the metric dict lacks (a
        # typo) is a usage error, and must not leave a report behind that reads like a run.
        outcomes = []
        if gates:
            from hbb2obb.gates.require import gate_outcomes, outcome_line

            outcomes = gate_outcomes(gates, metrics)
        warn(PROGRAM, detection_warnings(evaluation))
        if as_json:
            echo_ascii(metrics_json_bytes(metrics))
        else:
            from hbb2obb.report.detection_report import render_detection
            from hbb2obb.report.eval_report import render_report, render_unmatched

            if debug:
                click.echo(render_unmatched(result.table, label_map))
            click.echo(render_report(metrics, label_map), nl=False)
            click.echo(render_detection(metrics, label_map), nl=False)
        if output is not None:
            write_metrics(metrics, output)
            guard.wrote(output)
        if plots is not None:
            for path in write_detection_figures(result, metrics, label_map, plots):
                guard.wrote(path)
        emit_overlays(PROGRAM, result.table, img_source, overlay, overlay_size, no_bar, wrote=guard.wrote)
        for outcome in outcomes:
            click.echo(outcome_line(outcome), err=as_json)
        golden_failed, comparison = False, None
        if golden is not None:
            from hbb2obb.gates.golden import compare_to_golden, render_comparison, stored_form

            comparison = compare_to_golden(stored_form(metrics, expect), golden, expect_tolerance or 0.0,
                                           expect_ignore_extra, source=str(expect))
            click.echo(render_comparison(comparison), err=as_json)
            golden_failed = not comparison.passed
        pictures = [] if plots is None else [plots / name for name in FIGURES]
        emit_ci_reports(PROGRAM, junit, summary, title=run_title(pred_dir, gt_dir), metrics=metrics,
                        label_map=label_map, started=started, outcomes=outcomes, comparison=comparison,
                        warnings=evaluation.warnings, pictures=pictures, wrote=guard.wrote)
        if golden_failed or not all(outcome.passed for outcome in outcomes):
            raise SystemExit(1)


FIGURES = ("confusion_matrix.png", "pr_curves.png")


def refuse_own_inputs(output, pairs_path, plots, inputs) -> None:
    """Refuse (exit 2) an output that would replace one of the run's inputs, before anything is read or written.

    ``inputs`` are the ground truth, the predictions, the ``--expect`` golden file and the label map.
    """
    from hbb2obb.report.files import refuse_inputs

    gt_dir, pred_dir, expect, map_path = inputs
    outputs = [("-o", output), ("--pairs", pairs_path), ("--plots", plots)]
    if plots is not None:
        outputs += [("--plots", plots / name) for name in FIGURES]
    refuse_inputs(outputs, [("ground truth", gt_dir), ("predictions", pred_dir), ("--expect golden file", expect),
                            ("label map", map_path)])


def write_detection_figures(result, metrics: dict, label_map, folder: Path) -> list[Path]:
    """``confusion_matrix.png`` always, ``pr_curves.png`` when the predictions carry scores; each written
    atomically. Returns the files written."""
    from hbb2obb.io.atomic import atomic_path
    from hbb2obb.plotting.detection import confusion_figure, pr_figure

    written = []

    def save(figure, name):
        with atomic_path(folder / name) as temporary:
            figure.savefig(temporary, format="png")
        written.append(folder / name)

    try:
        folder.mkdir(parents=True, exist_ok=True)
        save(confusion_figure(metrics, label_map), FIGURES[0])
        if result.detection_summary.scored:
            save(pr_figure(result.detection_summary, metrics, label_map), FIGURES[1])
    except OSError as exc:
        raise InputError(f"--plots {folder}: cannot write the figures ({exc.strerror or exc})") from exc
    return written


if __name__ == "__main__":
    main()
