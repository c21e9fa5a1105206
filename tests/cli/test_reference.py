"""Flags only the reference tool has, and ``-V``: what a user coming from the reference sees."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from hbb2obb import __version__
from hbb2obb.cli.analyze import main as analyze_main
from hbb2obb.cli.convert import main as convert_main
from hbb2obb.cli.eval import main as eval_main
from hbb2obb.cli.optimize import main as optimize_main
from hbb2obb.cli.reference import REFERENCE_FLAGS, reference_only_flag

COMMANDS = {"hbb2obb": convert_main, "hbb2obb-eval": eval_main, "hbb2obb-analyze": analyze_main,
            "hbb2obb-optimize": optimize_main}


def invoke(command, args):
    return CliRunner().invoke(command, args)


@pytest.mark.parametrize("program", list(COMMANDS))
@pytest.mark.parametrize("flag", ["-V", "--version"])
def test_version_is_printed_under_both_spellings(program, flag):
    result = invoke(COMMANDS[program], [flag])
    assert result.exit_code == 0
    assert result.output == f"{program} {__version__}\n"


@pytest.mark.parametrize("args, flag", [
    (["images", "-sm", "sam_l"], "-sm"),
    (["images", "--sam_models", "sam_b", "sam_l"], "--sam_models"),
    (["images", "-fr", "0.2"], "-fr"),
    (["images", "--device=cuda:0"], "--device"),
    (["images", "--models_dir", "models"], "--models_dir"),
])
def test_a_sam_flag_on_the_converter_points_to_the_sweep_template(args, flag):
    result = invoke(convert_main, args)
    assert result.exit_code == 2
    message = result.output.strip()
    assert "\n" not in message
    assert message.startswith(f"hbb2obb: error: {flag} is a flag of the reference tool's SAM-based hbb2obb")
    assert "built-in converter" in message and "--converter command" in message
    assert "Living beside the reference tool" in message


def test_a_sam_flag_on_optimize_is_explained():
    result = invoke(optimize_main, ["images", "gt", "-sm", "sam_b"])
    assert result.exit_code == 2
    assert "-sm is a flag of the reference tool's hbb2obb-optimize (its SAM conversion)" in result.output
    assert "--grid sam_model=" in result.output


def test_a_flag_neither_tool_has_is_left_to_click():
    result = invoke(convert_main, ["images", "--no_such_flag"])
    assert result.exit_code == 2
    assert "No such option" in result.output and "reference" not in result.output


def test_values_and_tokens_after_double_dash_are_not_flags():
    own = ["--command"]
    assert reference_only_flag("hbb2obb-optimize", ["--command", "tool --sam_models {m}"], own) is None
    assert reference_only_flag("hbb2obb", ["--", "-sm"], []) is None
    assert reference_only_flag("not-a-reference-command", ["-sm"], []) is None


@pytest.mark.parametrize("program", list(COMMANDS))
def test_our_own_flags_are_never_reported(program):
    """Every flag our command defines parses as ours, even where the reference spells it too."""
    command = COMMANDS[program]
    own = [s for p in command.params if hasattr(p, "opts") for s in p.opts + p.secondary_opts]
    shared = sorted(set(own) & REFERENCE_FLAGS[program])
    assert shared, "the commands share the reference's spellings"
    assert reference_only_flag(program, shared, own) is None
