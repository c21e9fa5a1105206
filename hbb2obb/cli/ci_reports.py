"""``--junit FILE`` and ``--summary FILE.md``, shared by hbb2obb-eval and hbb2obb-analyze.

Nothing is written unless asked. Both paths are checked before the run reads its inputs (not
a folder, in a folder that exists, not one of the run's inputs); the JUnit file is written
atomically, the summary appended (see :mod:`hbb2obb.gates.summary`).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Optional

import click

from hbb2obb.errors import UsageError


def ci_report_options(function):
    """The two options; the command's parameters ``junit`` and ``summary``."""
    options = [
        click.option("--junit", type=click.Path(path_type=Path), metavar="FILE",
                     help="Write the gates as JUnit XML to FILE (one test case per --require gate and "
                          "--expect field; failures give the measured value, the bound and the class)."),
        click.option("--summary", type=click.Path(path_type=Path), metavar="FILE.md",
                     help="Append a short Markdown report to FILE.md (headline metrics, per-class table, gates, "
                          "skipped input, pictures): e.g. --summary \"$GITHUB_STEP_SUMMARY\"."),
    ]
    for option in reversed(options):
        function = option(function)
    return function


def check_report_paths(junit: Optional[Path], summary: Optional[Path], inputs) -> float:
    """Refuse (usage error) a report path that cannot be written or is one of the run's ``inputs``
    (``(role, path)`` pairs), before anything is read or written; returns the start time."""
    from hbb2obb.report.files import refuse_inputs

    for flag, path in (("--junit", junit), ("--summary", summary)):
        if path is None:
            continue
        if path.is_dir():
            raise UsageError(f"{flag} {path}: is a folder; give a file name")
        if not path.parent.is_dir():
            raise UsageError(f"{flag} {path}: the folder {path.parent} does not exist")
    if junit is not None and summary is not None and junit.resolve() == summary.resolve():
        raise UsageError(f"--junit and --summary name the same file {junit}")
    refuse_inputs([("--junit", junit), ("--summary", summary)], inputs)
    return time.perf_counter()


def run_title(pred_dir: Path, gt_dir: Path) -> str:
    """What a run scored, as the summary's first line: the paths in code spans (a ``_`` stays a ``_``)."""
    return f"Predictions `{pred_dir}` against ground truth `{gt_dir}`."


def emit_ci_reports(program: str, junit: Optional[Path], summary: Optional[Path], *, title: str, metrics: dict,
                    label_map: Optional[dict], started: float, outcomes=(), comparison=None, warnings=(),
                    pictures=(), wrote=None) -> None:
    """Write the reports asked for: ``outcomes`` of the ``--require`` gates, ``comparison`` of ``--expect``.

    ``wrote`` is called with the JUnit file once written (the caller's record of its outputs); the
    summary is appended to, never replaced, so it is not recorded.
    """
    if junit is None and summary is None:
        return
    from hbb2obb.gates.junit import JUnitReport, expect_cases, require_cases

    cases = require_cases(outcomes, label_map)
    if comparison is not None:
        cases += expect_cases(comparison)
    if junit is not None:
        from hbb2obb.gates.junit import write_junit

        properties = {key: f"{metrics[key]:.6g}" if isinstance(metrics[key], float) else str(metrics[key])
                      for key in ("frames_scored", "total_gt", "total_pred", "total_matches", "avg_iou",
                                  "skipped_pred_lines", "missing_pred_files") if key in metrics}
        write_junit(junit, JUnitReport(program, cases, properties, time.perf_counter() - started))
        if wrote is not None:
            wrote(junit)
    if summary is not None:
        from hbb2obb.gates.summary import append_summary, render_summary

        append_summary(summary, render_summary(program, title, metrics, label_map=label_map, cases=cases,
                                               warnings=warnings, pictures=[p for p in pictures if Path(p).exists()]))
