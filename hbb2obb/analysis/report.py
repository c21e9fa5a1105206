"""Rendering the analysis for people: terminal text and markdown, from the plain data of
:func:`hbb2obb.analysis.cuts.analyze`. Functions return strings; they never print.

The terminal layout follows the reference tool's report (``analyze_sam_b.txt``) line for line
where the two overlap, so its numbers can be checked against ours by wording; what the reference
lacks (worst pairs, the paired comparison) comes after. The markdown adds the std and SEM columns.
"""

from __future__ import annotations

from typing import Callable, Optional

from hbb2obb.analysis.error_report import error_blocks
from hbb2obb.report.textable import render_table

SEM_NOTE = ("Two runs of the same set are the same measurement only if their SEM says so: "
            "a difference smaller than one standard error is a tie.")
IDENTITY_NOTE = ("A horizontal box is already a valid oriented box, so emitting the prompt unchanged is the null "
                 "conversion. This is what it scores, beside the conversion, on the same matched pairs.")
RATIO_NOTE = ("The long side is the control. A step confined to the short side, across a boundary the geometry "
              "crosses continuously, is a property of the reference rather than of the conversion.")
CUT_SHORT_NAMES = {"orientation": "orientation", "orientation_controlled": "orientation, controlled subset",
                   "short_side": "short side", "edge": "frame edge", "difficult": "difficult flag", "class": "class"}
GROUP_HEADERS = ["Boxes", "IoU (mean)", "IoU (median)", "IoU<0.75", "IoU>=0.9", "Angle p90", "Angle mean"]


def _group_row(group: dict, extended: bool) -> list:
    if not group["boxes"]:
        return [group["label"], 0]
    row = [group["label"], group["boxes"], f"{group['avg_iou']:.4f}"]
    if extended:
        row += [f"{group['std_iou']:.4f}", f"{group['sem_iou']:.4f}"]
    row += [f"{group['median_iou']:.4f}", f"{group['share_below_75']:.1%}",
            f"{group['share_at_least_90']:.1%}", f"{group['p90_angle_error']:.2f}",
            f"{group['avg_angle_error']:.2f}"]
    if extended and "avg_giou" in group:
        row += [f"{group['avg_giou']:.4f}", f"{group['avg_diou']:.4f}", f"{group['avg_ciou']:.4f}",
                f"{group['avg_center_offset']:.2f}", f"{group['spatial_match']:.1%}"]
    return row


def _group_table(cut: dict, extended: bool) -> tuple[list, list]:
    headers = [""] + GROUP_HEADERS
    if extended:
        headers = headers[:3] + ["IoU (std)", "IoU (SEM)"] + headers[3:]
        if cut["groups"] and "avg_giou" in cut["groups"][0]:
            headers += ["GIoU", "DIoU", "CIoU", "Centre offset (px)", "Spatial match"]
    return headers, [_group_row(g, extended) for g in cut["groups"]]


def _identity_table(identity: dict, extended: bool) -> tuple[list, list]:
    headers = ["", "Boxes", "IoU as-is", "IoU converted", "Gain", "Angle p90 as-is", "Angle p90 converted"]
    if extended:
        headers[4:4] = ["SEM as-is", "SEM converted"]
    rows = []
    for r in identity["rows"]:
        if not r["boxes"]:
            rows.append([r["label"], 0])
            continue
        row = [r["label"], r["boxes"], f"{r['iou_as_is']:.4f}", f"{r['iou_converted']:.4f}"]
        if extended:
            row += [f"{r['sem_as_is']:.4f}", f"{r['sem_converted']:.4f}"]
        rows.append(row + [f"{r['gain']:+.4f}", f"{r['p90_angle_as_is']:.2f}", f"{r['p90_angle_converted']:.2f}"])
    return headers, rows


def _ratio_table(ratios: dict) -> tuple[list, list]:
    headers = ["Reference off-axis", "Boxes", "Short side", "Long side", "Area"]
    rows = [[b["label"], b["boxes"], f"{b['short_side']:.4f}", f"{b['long_side']:.4f}", f"{b['area']:.4f}"]
            if b["boxes"] else [b["label"], 0] for b in ratios["bands"]]
    return headers, rows


def _pair_table(records: list, unmatched: bool = False) -> tuple[list, list]:
    if unmatched:
        headers = ["Frame", "Line", "Class", "Best IoU", "GT off-axis", "GT short x long (px)"]
    else:
        headers = ["Frame", "Line", "Class", "IoU", "Angle error", "GT off-axis", "GT short x long (px)"]
    rows = []
    for r in records:
        score = [f"{r['best_iou']:.4f}"] if unmatched else [f"{r['iou']:.4f}", f"{r['angle_error']:.2f}"]
        rows.append([r["frame"], r["line"], r["class"], *score, f"{r['off_axis']:.2f}",
                     f"{r['short_side']:.1f} x {r['long_side']:.1f}"])
    return headers, rows


def _signed_interval(interval, places: int) -> str:
    return f"{interval[0]:+.{places}f} to {interval[1]:+.{places}f}"


def _p90_interval(d: dict) -> str:
    """The p90 interval, or the word that it locates nothing (older files lack the flag: shown as is)."""
    return _signed_interval(d["p90_ci"], 2) if d.get("p90_ci_usable", True) else "unusable"


def _comparison_table(comparison: dict) -> tuple[list, list]:
    headers = ["", "Both", "IoU A", "IoU B", "A - B", "Paired SE", "95% CI", "W/L/T", "IoU verdict", "p90 A - B",
               "p90 95% CI", "p90 verdict"]

    def row(label, d):
        if not d["boxes"]:
            return [label, 0]
        return [label, d["boxes"], f"{d['iou_a']:.4f}", f"{d['iou_b']:.4f}", f"{d['iou_diff']:+.4f}",
                f"{d['paired_se']:.4f}", _signed_interval(d["iou_ci"], 4), f"{d['wins']}/{d['losses']}/{d['ties']}",
                d["iou_verdict"], f"{d['p90_diff']:+.2f}", _p90_interval(d), d["angle_verdict"]]

    rows = [row("all", comparison["overall"])]
    for cut in comparison["cuts"]:
        rows.append([CUT_SHORT_NAMES.get(cut["key"], cut["title"]) + ":"])
        rows += [row("  " + g["label"], g) for g in cut["groups"]]
    return headers, rows


def comparison_sentences(comparison: dict, name_a: str = "A", name_b: str = "B") -> list[str]:
    """The overall comparison in words: the IoU difference, its errors, and the angle p90 difference."""
    d = comparison["overall"]
    if not d["boxes"]:
        return [f"No ground-truth box was matched by both {name_a} and {name_b}: nothing to compare."]
    shared = {
        "within the noise": "within the noise (the interval holds 0)",
        "within the noise (Holm)": "within the noise once adjusted for the number of comparisons (Holm)",
        "too few boxes": f"no verdict: fewer than {comparison.get('family', {}).get('min_boxes', 10)} boxes",
    }
    iou_words = {"A better": f"{name_a} is better", "B better": f"{name_b} is better", **shared}
    angle_words = {"A better": f"{name_a} is better (lower)", "B better": f"{name_b} is better (lower)", **shared}
    if d.get("p90_ci_usable", True):
        angle_interval = f"95% CI {_signed_interval(d['p90_ci'], 2)}"
    else:
        angle_interval = (f"the 95% interval, {_signed_interval(d['p90_ci'], 2)}, is wider than the p90 itself: "
                          "too few boxes in the tail to place it, so no verdict")
    angle_verdict = "" if d["angle_verdict"] == "interval unusable" else f": {angle_words[d['angle_verdict']]}"
    return [
        f"Mean IoU over {d['boxes']} boxes both matched: {name_a} {d['iou_a']:.4f}, {name_b} {d['iou_b']:.4f}, "
        f"difference {d['iou_diff']:+.4f} (paired SE {d['paired_se']:.4f}, 95% CI "
        f"{_signed_interval(d['iou_ci'], 4)}): {iou_words[d['iou_verdict']]}. "
        f"Wins/losses/ties per box: {d['wins']}/{d['losses']}/{d['ties']}.",
        f"Two independent SEMs would put the error of the difference at {d['independent_se']:.4f}; pairing "
        "removes the box-to-box spread both sets share, and the paired error is what decides a close call.",
        f"Angle p90: {name_a} {d['p90_a']:.2f} deg, {name_b} {d['p90_b']:.2f} deg, difference {d['p90_diff']:+.2f} deg "
        f"({angle_interval}){angle_verdict}.",
    ]


def family_note(comparison: dict) -> str:
    """What the verdicts of the comparison table are worth: group size floor and the Holm family."""
    family = comparison.get("family")
    if not family:
        return ""
    return (f"Verdicts: none for a group of fewer than {family['min_boxes']} boxes both matched (its numbers are "
            f"shown, its interval describes those few boxes). The {family['iou_tests']} mean-IoU verdicts and the "
            f"{family['angle_tests']} angle-p90 verdicts below are each one family, Holm-adjusted (family-wise "
            "error 5%): a cut that beats its own interval but not the adjustment reads \"within the noise "
            "(Holm)\". A p90 interval wider than the larger p90 is \"unusable\": the tail holds too few boxes.")


def _overall_sentences(data: dict) -> list[str]:
    o = data["overall"]
    sentences = [
        f"{o['boxes']} matched boxes. Mean IoU {o['avg_iou']:.5f} ± {o['std_iou']:.5f} (SEM {o['sem_iou']:.5f}), "
        f"median {o['median_iou']:.5f}, {o['share_at_least_90']:.1%} at or above IoU 0.9, "
        f"orientation error p90 {o['p90_angle_error']:.2f} deg."
    ]
    if o["unmatched_ground_truth"] or o["unmatched_predictions"]:
        sentences.append(f"Unmatched: {o['unmatched_ground_truth']} of {o['ground_truth_boxes']} ground-truth boxes, "
                         f"{o['unmatched_predictions']} of {o['predictions']} predictions.")
    return sentences


def _render(data: dict, table: Callable[[list, list], str], extended: bool,
            names: Optional[tuple[str, str]]) -> str:
    """The report, with ``table(headers, rows)`` deciding how a table looks."""
    blocks = ["# Conversion breakdown", *_overall_sentences(data), SEM_NOTE]
    for cut in data["cuts"]:
        blocks += [f"### {cut['title']}", table(*_group_table(cut, extended))]
    blocks.append("### Against doing nothing")
    identity = data.get("identity")
    if identity:
        blocks += [IDENTITY_NOTE, table(*_identity_table(identity, extended))]
    else:
        blocks.append("No HBB prompts were found: give -hd/--hbb_dir (default GT_DIR/../labels_hbb) to score them.")
    ratios = data["side_ratios"]
    subset = "Interior boxes not flagged difficult" if data["edge_checked"] else \
        "Boxes not flagged difficult (frame size unknown: edge not checked)"
    classes = "all classes" if ratios["classes"] == "all" else "classes " + ", ".join(ratios["classes"])
    blocks += ["### Converted-to-reference side ratios", f"{subset}, {classes}. {RATIO_NOTE}",
               table(*_ratio_table(ratios))]
    worst = data.get("worst")
    if worst:
        blocks += [f"### Lowest IoU ({len(worst['by_iou'])} matched pairs)", table(*_pair_table(worst["by_iou"])),
                   f"### Largest orientation error ({len(worst['by_angle'])} matched pairs)",
                   table(*_pair_table(worst["by_angle"]))]
        unmatched = worst["unmatched_ground_truth"]
        blocks.append(f"### Unmatched ground-truth boxes ({len(unmatched)})")
        blocks.append(table(*_pair_table(unmatched, unmatched=True)) if unmatched else "None.")
    if data.get("detection_errors"):
        blocks += error_blocks(data["detection_errors"], table, names)
    comparison = data.get("comparison")
    if comparison:
        name_a, name_b = names or ("A", "B")
        blocks += [
            "### Against the baseline (paired)",
            f"A is {name_a}, B is {name_b}. Differences are A minus B over the ground-truth boxes both matched "
            f"({comparison['matched_by_a_only']} matched by A only, {comparison['matched_by_b_only']} by B only); "
            f"intervals are 95% bootstrap intervals ({comparison['bootstrap']} resamples, seed {comparison['seed']}).",
            *comparison_sentences(comparison),
        ]
        if comparison["overall"]["boxes"]:
            note = family_note(comparison)
            blocks += ([note] if note else []) + [table(*_comparison_table(comparison))]
    return "\n\n".join(blocks) + "\n"


def render_analysis(data: dict, names: Optional[tuple[str, str]] = None) -> str:
    """The terminal report: aligned columns, indented tables.

    Parameters
    ----------
    data : dict
        From :func:`hbb2obb.analysis.cuts.analyze`.
    names : (str, str), optional
        How to call the two sets of a comparison (the two prediction folders).
    """
    return _render(data, lambda headers, rows: render_table(headers, rows, indent="  ", gap=3), False, names)


def _markdown_table(headers: list, rows: list) -> str:
    width = len(headers)

    def line(cells):
        cells = [str(c).replace("|", "\\|") for c in cells] + [""] * (width - len(cells))
        return "| " + " | ".join(cells) + " |"

    align = ["---"] + ["---:"] * (width - 1)
    return "\n".join([line(headers), "| " + " | ".join(align) + " |"] + [line(r) for r in rows])


def render_markdown(data: dict, names: Optional[tuple[str, str]] = None) -> str:
    """The same report as markdown (``analysis.md``), with std and SEM columns added."""
    return _render(data, _markdown_table, True, names)
