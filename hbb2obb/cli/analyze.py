"""``hbb2obb-analyze GT_DIR PRED_DIR``: where the score comes from, which boxes to fix, and
whether A beat B (docs/metrics.md §5)."""

from __future__ import annotations

from pathlib import Path

import click
import yaml

from hbb2obb.analysis.compare import compare_cuts
from hbb2obb.analysis.cuts import (
    analyze,
    difficult_flags,
    ground_truth_properties,
    orientation_cut,
    orientation_partition,
    standard_cuts,
)
from hbb2obb.analysis.identity_baseline import identity_summary, match_identity_baseline
from hbb2obb.analysis.reference_layout import analysis_file, reference_keys
from hbb2obb.analysis.report import render_analysis, render_markdown
from hbb2obb.cli.common import handles_errors, multi_value_command, version_option, warn
from hbb2obb.cli.eval import emit_pairs, evaluate_with_bar
from hbb2obb.cli.options import evaluation_options, passes_settings, run_options, spatial_threshold_option
from hbb2obb.cli.pictures import emit_overlays, emit_worst_sheets, overlay_frames, overlay_options
from hbb2obb.cli.reading import coco_angle_option
from hbb2obb.errors import InputError, UsageError
from hbb2obb.io import ImageSizes, load_label_map
from hbb2obb.report.pairs import check_pairs_path

PROGRAM = "hbb2obb-analyze"
MIN_BOOTSTRAP = 100


def _identity(result, props, hbb_dir, explicit: bool, warnings: list):
    """The identity-baseline summary and match, or ``(None, None)`` when there are no prompts to score."""
    if hbb_dir is None or not hbb_dir.is_dir():
        if explicit:
            raise InputError(f"{hbb_dir}: HBB prompt folder not found")
        return None, None
    try:
        match = match_identity_baseline(result.table, hbb_dir, result.settings)
    except InputError as exc:
        if explicit:
            raise
        # Found by default rather than asked for: the rest of the analysis still stands.
        warnings.append(("prompts", f"{exc}; identity baseline skipped"))
        return None, None
    warnings.extend(match.warnings)
    return identity_summary(result.table, match, orientation_cut(props), orientation_partition(props), hbb_dir), match


def _write_outputs(out_dir: Path, data: dict, names, reference: dict) -> None:
    from hbb2obb.plotting.analysis import plot_analysis

    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / "analysis.md").write_text(render_markdown(data, names), encoding="utf-8")
        written = analysis_file(data, reference)  # the reference tool's key paths, ours beside them
        (out_dir / "analysis.yaml").write_text(yaml.safe_dump(written, sort_keys=False, allow_unicode=True),
                                               encoding="utf-8")
        plot_analysis(data).savefig(out_dir / "analysis.png", dpi=110)
    except OSError as exc:
        raise InputError(f"{out_dir}: cannot write ({exc.strerror or exc})") from None


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
@click.option("--worst", type=int, default=0, show_default=True, metavar="N",
              help="List the N matched pairs of lowest IoU, the N of largest angle error, and every unmatched GT box; "
                   "with -o also draw them: worst_iou.png, worst_angle.png (frames from -i, else GT_DIR/../images "
                   "when it exists).")
@click.option("--baseline", "baseline_dir", type=click.Path(path_type=Path), metavar="PRED_DIR_B",
              help="A second converted set: report the paired difference PRED_DIR minus PRED_DIR_B per cut.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the bootstrap intervals.")
@click.option("--bootstrap", "n_boot", type=int, default=2000, show_default=True, metavar="N",
              help="Bootstrap resamples for the --baseline intervals.")
@spatial_threshold_option
@coco_angle_option
@overlay_options
@version_option(PROGRAM)
@handles_errors(PROGRAM)
@passes_settings
def main(gt_dir, pred_dir, settings, img_width, img_height, img_source, map_path, hbb_dir, boundary_classes, out_dir,
         worst, baseline_dir, overlay, overlay_size, seed, n_boot, jobs, no_bar, gt_format, pred_format, pairs_path,
         split, coco_angle):
    """Break the score of PRED_DIR against GT_DIR down by ground-truth orientation, size, frame
    edge, difficult flag and class; compare it with the HBB prompts as-is and, with --baseline,
    with a second converted set.

    Same matching as hbb2obb-eval. Exit status: 0 ok, 2 usage or input error.
    """
    if worst < 0:
        raise UsageError(f"--worst must not be negative, got {worst}")
    if baseline_dir is not None and n_boot < MIN_BOOTSTRAP:
        raise UsageError(f"--bootstrap must be at least {MIN_BOOTSTRAP}, got {n_boot}")
    if out_dir is not None and out_dir.exists() and not out_dir.is_dir():
        raise UsageError(f"--out_dir {out_dir}: exists and is not a folder")
    img_source = overlay_frames(PROGRAM, overlay, img_source, gt_dir,
                                worst_sheets=bool(worst) and out_dir is not None)
    sizes = ImageSizes(img_source, img_width, img_height)
    label_map = load_label_map(map_path)
    if pairs_path is not None:
        check_pairs_path(pairs_path)
    formats, reading = (gt_format, pred_format), {"split": split, "coco_angle": coco_angle}
    result = evaluate_with_bar(gt_dir, pred_dir, settings, sizes, label_map, jobs, no_bar, "Evaluating", formats,
                               read_options=reading)
    warnings = list(result.warnings)
    if pairs_path is not None:
        warnings += emit_pairs(pairs_path, result, gt_dir, label_map)
    flags, flag_warnings = difficult_flags(result.table, gt_dir, label_map)
    warnings += flag_warnings
    props = ground_truth_properties(result.table, flags, settings.edge_tolerance)
    explicit = hbb_dir is not None
    if not explicit:
        default = Path(gt_dir).resolve().parent / "labels_hbb"
        hbb_dir = default if default.is_dir() else None
    identity, identity_match = _identity(result, props, hbb_dir, explicit, warnings)
    comparison, names = None, None
    if baseline_dir is not None:
        baseline = evaluate_with_bar(gt_dir, baseline_dir, settings, sizes, label_map, jobs, no_bar,
                                     "Evaluating baseline", formats, read_options=reading)
        warnings += [(kind, f"baseline: {message}") for kind, message in baseline.warnings]
        comparison = compare_cuts(result.table, baseline.table, standard_cuts(props, label_map), seed=seed,
                                  n_boot=n_boot)
        comparison.update(a=str(pred_dir), b=str(baseline_dir))
        names = (str(pred_dir), str(baseline_dir))
    data = analyze(result, props, label_map, identity=identity, comparison=comparison,
                   boundary_classes=boundary_classes, worst=worst)
    warn(PROGRAM, warnings)
    click.echo(render_analysis(data, names), nl=False)
    if out_dir is not None:
        reference = reference_keys(result.table, props, identity_match, label_map, boundary_classes)
        _write_outputs(out_dir, data, names, reference)
    emit_worst_sheets(PROGRAM, result, worst, img_source, out_dir, hbb_dir if identity is not None else None,
                      label_map)
    emit_overlays(PROGRAM, result.table, img_source, overlay, overlay_size, no_bar)
