"""``--summary FILE.md``: a short Markdown report of a run for a CI job summary or a pull-request comment.

Headline metrics, the per-class table, the gates with pass or fail, what was skipped in the
inputs and the pictures drawn. The report is appended to the file, as CI job summaries expect
(GitHub Actions gathers each step's ``$GITHUB_STEP_SUMMARY``): a run adds its section after
those of earlier steps, and never rewrites them.
"""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path
from typing import Optional

from hbb2obb.gates.junit import GateCase
from hbb2obb.io.labelmap import class_name

# The skipped-input counters of the metric dict, as a reader would name them.
SKIPPED = (
    ("missing_pred_files", "frames without a prediction file"),
    ("orphan_pred_files", "prediction files without ground truth"),
    ("skipped_pred_lines", "broken prediction lines skipped"),
    ("degenerate_boxes", "zero-area boxes"),
    ("reordered_boxes", "boxes with corners reordered"),
)


def _cell(text: str) -> str:
    """Text safe in a table cell: a ``|`` would end it, a line break would end the table."""
    return str(text).replace("|", "\\|").replace("\n", " ")


def _value(value, percent: bool = False, digits: int = 4) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    if percent:
        return f"{100 * value:.1f}%"
    return f"{value:.{digits}f}" if isinstance(value, float) else str(value)


def _headline(metrics: dict) -> list[tuple[str, str]]:
    rows = [
        ("Frames scored", _value(metrics.get("frames_scored"))),
        ("Ground-truth boxes", _value(metrics.get("total_gt"))),
        ("Predictions", _value(metrics.get("total_pred"))),
        ("Matched", _value(metrics.get("total_matches"))),
        ("Mean IoU", _value(metrics.get("avg_iou"))),
        ("Median IoU", _value(metrics.get("median_iou"))),
        ("Matches with IoU ≥ 0.9", _value((metrics.get("iou_fractions") or {}).get("0.90"), percent=True)),
        ("Angle error p90", f"{_value(metrics.get('p90_angle_error'), digits=2)}°"),
    ]
    if metrics.get("detection_scored"):
        rows += [("mAP50 (COCO rule)", _value(metrics.get("map50"))),
                 ("mAP50:95 (COCO rule)", _value(metrics.get("map50_95")))]
    if "precision" in metrics:
        rows += [("Precision / recall / F1", " / ".join(_value(metrics.get(k)) for k in ("precision", "recall", "f1")))]
    return rows


def _class_table(metrics: dict, label_map: Optional[dict]) -> list[str]:
    stats = metrics.get("class_stats") or {}
    if not stats:
        return []
    names = {**(metrics.get("class_names") or {}), **(label_map or {})}
    scored = bool(metrics.get("detection_scored"))
    head = ["Class", "GT", "Pred", "Matched", "Mean IoU", "IoU ≥ 0.9", "Angle p90"] + (["AP50"] if scored else [])
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join([" --- "] + [" ---: "] * (len(head) - 1)) + "|"]
    for class_id, entry in stats.items():
        cells = [_cell(class_name(names, class_id)), _value(entry.get("gt_total")), _value(entry.get("pred_total")),
                 _value(entry.get("matches")), _value(entry.get("avg_iou")),
                 _value((entry.get("iou_fractions") or {}).get("0.90"), percent=True),
                 f"{_value(entry.get('p90_angle_error'), digits=2)}°"]
        if scored:
            cells.append(_value(entry.get("ap50")))
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def _gates(cases: list[GateCase]) -> list[str]:
    counted = [case for case in cases if not case.skipped]
    lines = []
    require = [case for case in counted if case.group == "require"]
    if require:
        passed = sum(case.passed for case in require)
        lines += [f"**Gates: {passed} of {len(require)} passed.**", "",
                  "| Gate | Result | Measured |", "| --- | --- | ---: |"]
        for case in require:
            measured = next((line.split(": ", 1)[1] for line in case.details.splitlines()
                             if line.startswith("measured: ")), "")
            lines.append(f"| `{_cell(case.name)}` | {'pass' if case.passed else '**FAIL**'} | {measured} |")
        lines.append("")
    expect = [case for case in counted if case.group == "expect"]
    if expect:
        bad = [case for case in expect if not case.passed]
        lines.append(f"**Golden file: {len(expect) - len(bad)} of {len(expect)} fields match.**")
        lines += [f"- **FAIL** `{_cell(case.name)}`: {_cell(case.message)}" for case in bad[:10]]
        if len(bad) > 10:
            lines.append(f"- ... and {len(bad) - 10} more")
        lines.append("")
    return lines


def render_summary(program: str, title: str, metrics: dict, *, label_map: Optional[dict] = None,
                   cases: Optional[list[GateCase]] = None, warnings=(), pictures=()) -> str:
    """The Markdown section of one run.

    Parameters
    ----------
    program : str
        The command (the section's heading).
    title : str
        What was scored, a line of Markdown, e.g. ``Predictions `pred` against ground truth `gt`.``
    metrics : dict
        The run's metric dict.
    cases : list of GateCase, optional
        The gates' outcomes (:mod:`hbb2obb.gates.junit`); no gate section without them.
    warnings : sequence of (kind, message)
        The run's warnings: counted by kind.
    pictures : sequence of Path
        Pictures the run drew, linked by their path.
    """
    cases = list(cases or [])
    failed = any(not case.passed and not case.skipped for case in cases)
    verdict = ": gates FAILED" if failed else ": gates passed" if cases else ""
    lines = [f"### {program}{verdict}", "", f"{title}", "", "| Metric | Value |", "| --- | ---: |"]
    lines += [f"| {name} | {value} |" for name, value in _headline(metrics)]
    lines.append("")
    table = _class_table(metrics, label_map)
    if table:
        # a plain table, not folded in <details>: renderers other than GitHub's leave Markdown
        # inside HTML as raw text (the summary is also read as a PR comment or a page)
        lines += ["**Per class**", "", *table, ""]
    if cases:
        lines += _gates(cases)
    skipped = [f"{metrics[key]} {what}" for key, what in SKIPPED if metrics.get(key)]
    lines.append(f"Skipped or repaired input: {', '.join(skipped)}." if skipped else "Skipped input: none.")
    if warnings:
        kinds = Counter(kind for kind, _ in warnings)
        lines.append("Warnings: " + ", ".join(f"{count} × {kind}" for kind, count in kinds.items())
                     + " (the command's output has them in full).")
    lines.append("")
    if pictures:
        lines.append("Pictures: " + ", ".join(f"[{Path(p).name}]({Path(p).as_posix()})" for p in pictures))
        lines.append("")
    return "\n".join(lines) + "\n"


def append_summary(path: Path, text: str) -> None:
    """Append the section to ``path`` (created when absent), after a blank line when it holds text.

    Appending is by design (a CI job summary gathers every step's section); the section is
    written with one call, so a reader never sees half of it.
    """
    from hbb2obb.errors import InputError

    try:
        with open(path, "a+", encoding="utf-8") as handle:
            handle.seek(0, 2)
            separator = "\n" if handle.tell() else ""
            handle.write(separator + text)
    except OSError as exc:
        raise InputError(f"--summary {path}: cannot write ({exc.strerror or exc})") from None
