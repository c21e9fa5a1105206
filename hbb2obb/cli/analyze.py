"""``hbb2obb-analyze GT_DIR PRED_DIR``: where the score comes from, which boxes to fix, and
whether A beat B (docs/metrics.md §5)."""

from __future__ import annotations

import contextlib
import functools
from pathlib import Path

import click
import yaml
from click.core import ParameterSource

from hbb2obb.analysis.reference_layout import analysis_file, reference_keys
from hbb2obb.analysis.report import render_analysis, render_markdown
from hbb2obb.api.evaluation import NothingScored
from hbb2obb.api.workflows import AUTO, MIN_BOOTSTRAP, analyze_run
from hbb2obb.cli.ci_reports import check_report_paths, ci_report_options, emit_ci_reports, run_title
from hbb2obb.cli.common import handles_errors, multi_value_command, progress_bar, version_option, warn
from hbb2obb.cli.eval import write_pair_file
from hbb2obb.cli.options import (
    evaluation_options,
    passes_settings,
    require_option,
    run_options,
    spatial_threshold_option,
)
from hbb2obb.cli.pictures import (
    WORST_SHEETS,
    emit_overlays,
    emit_worst_sheets,
    overlay_frames,
    overlay_options,
    overlay_targets,
)
from hbb2obb.cli.reading import coco_angle_option
from hbb2obb.detection.errors import TideParams
from hbb2obb.detection.evaluate import DetectionParams
from hbb2obb.errors import InputError, UsageError
from hbb2obb.io import ImageSizes, load_label_map
from hbb2obb.io.written import OutputGuard
from hbb2obb.report.pairs import check_pairs_path

PROGRAM = "hbb2obb-analyze"


OUTPUTS = ("analysis.md", "analysis.yaml", "analysis.png")
ERRORS_FIGURE = "errors.png"  # the detection error decomposition, when the predictions carry scores


def _write_outputs(out_dir: Path, data: dict, names, reference: dict, guard) -> None:
    """The analysis files (and the error figure), each written atomically and recorded as the toolkit's."""
    from hbb2obb.io.atomic import atomic_path, write_text_atomic
    from hbb2obb.plotting.analysis import plot_analysis

    md, yml, png = paths = [out_dir / name for name in OUTPUTS]
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        write_text_atomic(md, render_markdown(data, names))
        written = analysis_file(data, reference)  # the reference tool's key paths, ours beside them
        write_text_atomic(yml, yaml.safe_dump(written, sort_keys=False, allow_unicode=True))
        with atomic_path(png) as temporary:
            plot_analysis(data).savefig(temporary, dpi=110, format="png")
        if data.get("detection_errors"):
            from hbb2obb.plotting.errors import plot_errors

            with atomic_path(out_dir / ERRORS_FIGURE) as temporary:
                plot_errors(data["detection_errors"]).savefig(temporary, dpi=110, format="png")
            paths.append(out_dir / ERRORS_FIGURE)
    except OSError as exc:
        raise InputError(f"{out_dir}: cannot write ({exc.strerror or exc})") from None
    for path in paths:
        guard.wrote(path)


@contextlib.contextmanager
def _bar(no_bar: bool, what: str, total: int):
    """The progress display the analysis is scored under: a bar over frames, told of each frame done."""
    with progress_bar(total, what, no_bar) as bar:
        yield bar.update


@multi_value_command({"excluded_classes": int, "boundary_classes": int}, name=PROGRAM)
@click.argument("gt_dir", type=click.Path(path_type=Path))
@click.argument("pred_dir", type=click.Path(path_type=Path))
@evaluation_options
@run_options
@click.option("-hd", "--hbb_dir", type=click.Path(path_type=Path),
              help="HBB prompts (YOLO-HBB) for the identity baseline [default: GT_DIR/../labels_hbb when it exists].")
@click.option("-bc", "--boundary_classes", type=int, multiple=True,
              help="Class ids the side ratios are restricted to; several after one flag: -bc 0 2.")
@click.option("-o", "--out_dir", type=click.Path(path_type=Path),
              help="Also write analysis.md, analysis.yaml and analysis.png into this folder.")
@click.option("--overwrite", is_flag=True,
              help="Replace files in -o/--out_dir, --pairs, --junit and --overlay that hbb2obb did not write "
                   "(refused otherwise).")
@click.option("--worst", type=int, default=0, show_default=True, metavar="N",
              help="List the N matched pairs of lowest IoU, the N of largest angle error, and every unmatched GT box; "
                   "with -o also draw them: worst_iou.png, worst_angle.png (frames from -i, else GT_DIR/../images "
                   "when it exists).")
@click.option("--baseline", "baseline_dir", type=click.Path(path_type=Path), metavar="PRED_DIR_B",
              help="A second converted set: report the paired difference PRED_DIR minus PRED_DIR_B per cut.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the bootstrap intervals.")
@click.option("--bootstrap", "n_boot", type=int, default=2000, show_default=True, metavar="N",
              help="Bootstrap resamples for the --baseline intervals.")
@click.option("--tide_fg", type=float, default=0.5, show_default=True,
              help="Scored predictions: foreground IoU of the error decomposition (a hit at or above it).")
@click.option("--tide_bg", type=float, default=0.1, show_default=True,
              help="Scored predictions: background IoU of the error decomposition (a false positive at or below "
                   "it with every box is background).")
@require_option
@spatial_threshold_option
@coco_angle_option
@overlay_options
@ci_report_options
@version_option(PROGRAM)
@handles_errors(PROGRAM)
@passes_settings
def main(gt_dir, pred_dir, settings, img_width, img_height, img_source, map_path, hbb_dir, boundary_classes, out_dir,
         worst, baseline_dir, overlay, overlay_size, seed, n_boot, jobs, no_bar, gt_format, pred_format, pairs_path,
         tide_fg, tide_bg, overwrite, junit, summary, requirements, split, coco_angle):
    """Break the score of PRED_DIR against GT_DIR down by ground-truth orientation, size, frame
    edge, difficult flag and class; compare it with the HBB prompts as-is and, with --baseline,
    with a second converted set.

    With a confidence on every prediction (a detector's output), also decompose its AP into
    TIDE's error types plus orientation, give the AP by ground-truth cut and, with --baseline,
    the paired AP difference per class.

    Same matching as hbb2obb-eval. Exit status: 0 ok, 1 a --require gate failed, 2 usage or input error.
    """
    if worst < 0:
        raise UsageError(f"--worst must not be negative, got {worst}")
    label_map = load_label_map(map_path)
    gates = []
    if requirements:  # parsed before the run: a malformed gate or an unknown class fails at once
        from hbb2obb.gates.require import parse_gate

        gates = [parse_gate(text, label_map) for text in requirements]
    if baseline_dir is not None and n_boot < MIN_BOOTSTRAP:
        raise UsageError(f"--bootstrap must be at least {MIN_BOOTSTRAP}, got {n_boot}")
    if pairs_path is not None:
        check_pairs_path(pairs_path)
    from hbb2obb.report.files import refuse_shared, refuse_unwritable

    written_to_out = [("--out_dir", out_dir / name) for name in (
        OUTPUTS + (ERRORS_FIGURE,) + (WORST_SHEETS if worst else ()) if out_dir is not None else ())]
    # a target no run could write is refused before the first file is written, --overwrite or not
    refuse_unwritable(files=[("--pairs", pairs_path)] + written_to_out,
                      folders=[("--out_dir", out_dir), ("--overlay", overlay)])
    guard = OutputGuard()
    started = check_report_paths(junit, summary, [("ground truth", gt_dir), ("predictions", pred_dir),
                                                  ("baseline", baseline_dir), ("label map", map_path),
                                                  ("HBB prompts", hbb_dir)])
    named = written_to_out + [("--pairs", pairs_path), ("--junit", junit), ("--summary", summary)]
    refuse_shared(named)
    if not overwrite:  # a file this command did not write is refused before anything is read
        # (the summary is appended to, never replaced)
        guard.refuse_foreign([path for flag, path in named if path is not None and flag != "--summary"])
    img_source = overlay_frames(PROGRAM, overlay, img_source, gt_dir,
                                worst_sheets=bool(worst) and out_dir is not None)
    sizes = ImageSizes(img_source, img_width, img_height)
    tide = TideParams(fg=tide_fg, bg=tide_bg)
    # as eval: a frame without a prediction file is skipped by the matching keys but its boxes
    # count as missed in the detection metrics, unless --missing_pred skip was asked for
    count_missing = click.get_current_context().get_parameter_source("missing_pred") is ParameterSource.DEFAULT
    detection = DetectionParams(count_missing=count_missing or settings.missing_pred != "skip")
    try:
        analysis = analyze_run(gt_dir, pred_dir, settings, label_map=label_map, sizes=sizes, detection=detection,
                               hbb=AUTO if hbb_dir is None else hbb_dir, baseline=baseline_dir,
                               boundary_classes=boundary_classes, worst=worst, seed=seed, bootstrap=n_boot, tide=tide,
                               jobs=jobs, formats=(gt_format, pred_format),
                               read_options={"split": split, "coco_angle": coco_angle},
                               progress=functools.partial(_bar, no_bar))
    except NothingScored as exc:  # the warnings say why nothing was scored
        warn(PROGRAM, exc.warnings)
        raise
    evaluation, data = analysis.evaluation, analysis.data
    result = evaluation.result
    # the overlays' names come from the frames scored: checked before the first write
    overlays = overlay_targets(result.table, overlay)
    refuse_unwritable(files=[("--overlay", path) for path in overlays])
    refuse_shared(named + [("--overlay", path) for path in overlays])
    if not overwrite:
        guard.refuse_foreign(overlays)
    with guard:  # what was written is recorded, even when a gate fails or a write breaks
        warnings = list(analysis.warnings)
        if pairs_path is not None:
            write_pair_file(pairs_path, evaluation)  # its warnings (difficult flags) are the analysis's
            guard.wrote(pairs_path)
        names = None if baseline_dir is None else (str(pred_dir), str(baseline_dir))
        outcomes, metrics = [], None
        if gates or junit is not None or summary is not None:  # the metric dict, for the gates and the reports
            metrics = evaluation.metrics
        if gates:  # checked before anything is printed or written: an unknown key leaves no report behind
            from hbb2obb.analysis.detection_errors import with_error_keys
            from hbb2obb.gates.require import gate_outcomes, outcome_line

            outcomes = gate_outcomes(gates, with_error_keys(metrics, data.get("detection_errors")))
        warn(PROGRAM, warnings)
        click.echo(render_analysis(data, names), nl=False)
        if out_dir is not None:
            reference = reference_keys(result.table, analysis.properties, analysis.identity, label_map,
                                       boundary_classes)
            _write_outputs(out_dir, data, names, reference, guard)
            # as the reference tool says it, and the figure it does not draw
            extra = f" (and {ERRORS_FIGURE})" if data.get("detection_errors") else ""
            click.echo(f"\nWrote {', '.join(OUTPUTS[:2])} and {OUTPUTS[2]} to {out_dir}{extra}")
        emit_worst_sheets(PROGRAM, result, worst, img_source, out_dir, analysis.hbb, label_map,
                          wrote=guard.wrote)
        emit_overlays(PROGRAM, result.table, img_source, overlay, overlay_size, no_bar, wrote=guard.wrote)
        emit_analysis_reports(junit, summary, label_map, started, warnings, out_dir, worst, pred_dir, gt_dir, outcomes,
                              metrics, wrote=guard.wrote)
        for outcome in outcomes:
            click.echo(outcome_line(outcome))
        if not all(outcome.passed for outcome in outcomes):
            raise SystemExit(1)


def emit_analysis_reports(junit, summary, label_map, started, warnings, out_dir, worst, pred_dir, gt_dir, outcomes,
                          metrics, wrote=None):
    """``--junit`` (one test case per ``--require`` gate) and ``--summary``, from the run's metric dict."""
    if junit is None and summary is None:
        return
    pictures = [] if out_dir is None else [out_dir / name for name in (OUTPUTS[2], ERRORS_FIGURE)] + (
        [out_dir / name for name in WORST_SHEETS] if worst else [])
    emit_ci_reports(PROGRAM, junit, summary, title=run_title(pred_dir, gt_dir), metrics=metrics,
                    label_map=label_map, started=started, warnings=warnings, pictures=pictures, outcomes=outcomes,
                    wrote=wrote)
