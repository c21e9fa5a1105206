"""The reference tool's command-line flags, so a flag only it has gets an explanation, not a shrug.

People move between the reference tool (``hbb2obb`` 1.12.0, SAM-based) and this toolkit with the
same shell history. Given ``hbb2obb images -sm sam_l``, click alone would say "No such option:
-s"; this module lets every command say instead that the flag belongs to the reference and what
to do. The table was read off the reference's argument parsers (1.12.0); a flag that one of our
commands defines itself is never reported, whatever the table says.
"""

from __future__ import annotations

from typing import Iterable, Optional

#: How to run the reference's SAM conversion from a sweep of ours (docs/reference-tool.md shows it in full).
SAM_SWEEP_HINT = ("install the reference in its own virtual environment and sweep it with "
                  "'hbb2obb-optimize --converter command --command \"REF_VENV/bin/hbb2obb {img_source} "
                  "--hbb_dir {hbb_dir} --obb_dir {out_dir} --sam_models {sam_model} ...\" --grid sam_model=sam_b' "
                  "(README: 'Living beside the reference tool')")

#: Flag spellings of the reference tool's commands, by command name.
REFERENCE_FLAGS: dict[str, frozenset[str]] = {
    "hbb2obb": frozenset("""
        --hbb_dir -hd --obb_dir -od --polygon_dir -pd --sam_models -sm --imgsz --scale_factors -sf
        --opening_kernel_percentage -okp --fragment_ratio -fr --save_img --viz_dir --show_hbb --hide_hbb
        --show_masks --hide_masks --show_segments --hide_segments --show_obb --hide_obb --show_class_labels
        --show_labels --hide_class_labels --hide_labels --show_confidence --hide_confidence --save_confidence
        --confidence_source -cs --confidence_dir -cd --save_polygon --polygon_epsilon -pe --normalize -n
        --precision -p --device --model_kwargs -k --models_dir --save_provenance --no_bar -nb
        --fallback_warn_share -fw --fail_on_fallback_share -ff""".split()),
    "hbb2obb-eval": frozenset("""
        --excluded_classes -e --iou_threshold -t --class_agnostic -ca --map_path -mp --exclude_edge_cases -exc
        --edge_tolerance -et --img_width -iw --img_height -ih --debug -d --no_bar -nb""".split()),
    "hbb2obb-analyze": frozenset("""
        --hbb_dir -hd --img_source -i --map_path -mp --excluded_classes -e --boundary_classes -bc
        --iou_threshold -t --class_agnostic -ca --out_dir -o --no_bar -nb""".split()),
    "hbb2obb-optimize": frozenset("""
        --config -c --hbb_dir -hd --output_folder -o --run_name -n --sam_models -sm --imgsz -iz
        --scale_factors -sf --opening_kernels -ok --fragment_ratio -fr --excluded_classes -e --iou_threshold -t
        --class_agnostic -ca --exclude_edge_cases -exc --edge_tolerance -et --img_width -iw --img_height -ih
        --only --resume --refresh --dry_run --device --model_kwargs -k --models_dir --no_plot --plot_metric -pm
        --no_bar -nb""".split()),
    "hbb2obb-convert": frozenset("""
        --to -t --from -f --out_dir -o --map_path -mp --images -i --img_width -iw --img_height -ih --kind -k
        --normalize -n --precision -p --dota_ext --difficult_from --confidence_dir --difficult_below
        --voc_database --coco_name --coco_from --coco_info --verify --no_bar -nb""".split()),
}

#: Flags that drive the reference's SAM models: the advice is to sweep the reference itself.
SAM_FLAGS = frozenset("--sam_models -sm --fragment_ratio -fr --device --model_kwargs -k --models_dir "
                      "--polygon_dir -pd --save_polygon --polygon_epsilon -pe --save_provenance".split())


def reference_only_flag(program: str, args: Iterable[str], own_flags: Iterable[str]) -> Optional[str]:
    """The message for the first flag in ``args`` that only the reference's ``program`` has.

    ``own_flags`` are the spellings the command itself defines. Tokens after ``--`` are
    arguments, not flags, and ``--flag=value`` is read as ``--flag``. Returns ``None`` when every
    flag is the command's own, or unknown to both (click then reports it as usual).

    Examples
    --------
    >>> reference_only_flag("hbb2obb", ["imgs", "-sm", "sam_l"], ["-hd", "--hbb_dir"]).split(":")[0]
    "-sm is a flag of the reference tool's SAM-based hbb2obb"
    >>> reference_only_flag("hbb2obb", ["imgs", "-hd", "x"], ["-hd", "--hbb_dir"]) is None
    True
    """
    theirs = REFERENCE_FLAGS.get(program)
    if not theirs:
        return None
    own = set(own_flags)
    for token in args:
        if token == "--":
            break
        flag = token.split("=", 1)[0]
        if not flag.startswith("-") or flag in own or flag not in theirs:
            continue
        if flag in SAM_FLAGS or program == "hbb2obb":
            what = "SAM-based hbb2obb" if program == "hbb2obb" else f"{program} (its SAM conversion)"
            return (f"{flag} is a flag of the reference tool's {what}: this {program} is hbb2obb-toolkit's, "
                    f"whose built-in converter needs no model. To use SAM, {SAM_SWEEP_HINT}")
        return (f"{flag} is a flag of the reference tool's {program} that hbb2obb-toolkit's {program} does not "
                f"have; see '{program} --help' for this toolkit's flags")
    return None
