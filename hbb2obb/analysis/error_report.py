"""The error decomposition for people: the report's blocks, from the plain data of
:func:`hbb2obb.analysis.detection_errors.detection_errors`. Functions return strings; they never print."""

from __future__ import annotations

from typing import Callable, Optional

from hbb2obb.detection.errors import ERROR_TYPES

SHORT = {"cls": "Cls", "loc": "Loc", "both": "Both", "dupe": "Dupe", "bkg": "Bkg", "miss": "Miss", "orient": "Orient",
         "fp": "FP", "fn": "FN"}
ERRORS_NOTE = ("Each false positive and each missed box gets one type; a type's dAP is the AP gained when an oracle "
               "fixes just the errors of that type (TIDE's definitions; orientation is a localization error whose "
               "IoU passes the foreground threshold once the detection is turned to the box's heading). The dAPs do "
               "not add up to 1 - AP: fix the type with the largest dAP first. FP and FN: every false positive "
               "removed, every missed box no longer counted.")


def _ap(value) -> str:
    return "n/a" if value is None else f"{value:.4f}"


def _types_table(errors: dict) -> tuple[list, list]:
    rows = [[t["name"], "" if t["errors"] is None else t["errors"], _ap(t["dap"])] for t in errors["types"]]
    return ["Error type", "Errors", "dAP"], rows


def _class_table(errors: dict) -> tuple[list, list]:
    headers = ["Class", "Boxes", "Detections", "AP"] + [f"dAP {SHORT[t]}" for t in ERROR_TYPES] + ["dAP FP", "dAP FN"]
    rows = [[c["class"], c["boxes"], c["detections"], _ap(c["ap_tide"])]
            + [_ap(c[f"dap_{t}"]) for t in ERROR_TYPES] + [_ap(c["dap_fp"]), _ap(c["dap_fn"])]
            for c in errors["classes"]]
    return headers, rows


def _cut_table(cut: dict) -> tuple[list, list]:
    return ["", "Boxes", "Detections", "AP"], [[g["label"], g["boxes"], g["detections"], _ap(g["ap"])]
                                              for g in cut["groups"]]


def _interval(ci) -> str:
    return "" if ci is None else f"{ci[0]:+.4f} to {ci[1]:+.4f}"


def _difference_row(label: str, d: dict) -> list:
    diff = "" if d["ap_diff"] is None else f"{d['ap_diff']:+.4f}"
    return [label, d["boxes"], d["frames"], _ap(d["ap_a"]), _ap(d["ap_b"]), diff, _interval(d["ap_ci"]), d["verdict"]]


def _comparison_tables(comparison: dict) -> list[tuple[list, list]]:
    headers = ["", "Boxes", "Frames", "AP A", "AP B", "A - B", "95% CI", "Verdict"]
    rows = [_difference_row("all classes", comparison["overall"])]
    rows += [_difference_row(c["class"], c) for c in comparison["classes"]]
    type_rows = [[SHORT[t["type"]], "" if t["errors_a"] is None else t["errors_a"],
                  "" if t["errors_b"] is None else t["errors_b"], _ap(t["dap_a"]), _ap(t["dap_b"]),
                  "" if t["dap_diff"] is None else f"{t['dap_diff']:+.4f}"] for t in comparison["types"]]
    return [(headers, rows), (["Error type", "Errors A", "Errors B", "dAP A", "dAP B", "A - B"], type_rows)]


def error_blocks(errors: dict, table: Callable[[list, list], str], names: Optional[tuple[str, str]] = None) -> list:
    """The report's blocks on the detection errors, tables drawn by ``table(headers, rows)``."""
    o = errors["overall"]
    blocks = [
        "### Why the AP is what it is (error decomposition)",
        f"AP at IoU {errors['fg']:g} (COCO rule, 101 recall levels): {_ap(o['ap_tide'])} over {errors['boxes']} "
        f"ground-truth boxes and {errors['detections']} detections; foreground IoU {errors['fg']:g}, background "
        f"IoU {errors['bg']:g}. {ERRORS_NOTE}",
        table(*_types_table(errors)),
        "Per class (dAP of each type, in that class's AP):",
        table(*_class_table(errors)),
    ]
    for cut in errors["cuts"]:
        blocks += [f"### {cut['title']}", table(*_cut_table(cut))]
    comparison = errors.get("comparison")
    if comparison:
        name_a, name_b = names or ("A", "B")
        changed = ", ".join(SHORT[t] for t in comparison["changed_types"]) or "none"
        blocks += [
            "### AP against the baseline (paired over frames)",
            f"A is {name_a} ({comparison['detections_a']} detections), B is {name_b} "
            f"({comparison['detections_b']}). Differences are A minus B at IoU {errors['fg']:g}; intervals are 95% "
            f"bootstrap intervals over the {comparison['frames']} frames ({comparison['bootstrap']} resamples, seed "
            f"{comparison['seed']}), both sets resampled with the same frames. A verdict is drawn only where the "
            "interval excludes 0 and the group holds at least 10 boxes. Error types whose counts changed: "
            f"{changed}.",
        ]
        for headers, rows in _comparison_tables(comparison):
            blocks.append(table(headers, rows))
    return blocks
