"""hbb2obb-eval's own parser of plain command lines: click's arguments exactly, or it declines (issue 18)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import click
import pytest

from conftest import rect
from hbb2obb.cli import eval_argv
from hbb2obb.cli.eval import PROGRAM
from hbb2obb.cli.eval_argv import ARGUMENTS, CLICK_ONLY, FLAG, INTEGERS, OPTIONS, plain_arguments
from hbb2obb.cli.eval_options import main


def click_arguments(argv):
    """What click passes to the command for ``argv``, or the ``click.UsageError`` it raises."""
    try:
        with main.make_context(PROGRAM, list(argv)) as ctx:
            return ctx.params
    except click.exceptions.Exit:
        return "exit"  # --help, --version
    except click.UsageError as exc:
        return exc


def same(ours, clicks) -> bool:
    """The same names, value types and values (NaN equal to NaN, as a value given twice is the same)."""
    def form(arguments):
        return {name: (type(value), repr(value)) for name, value in arguments.items()}

    return isinstance(clicks, dict) and form(ours) == form(clicks)


def test_every_parameter_of_the_click_command_is_known_to_the_plain_parser():
    declared = {param.name for param in main.params}
    assert declared == set(OPTIONS) | set(CLICK_ONLY) | set(ARGUMENTS) | {"version"}
    defaults = click_arguments(["gt", "pred"])  # the values click gives parameters not on the command line
    for param in main.params:
        if param.name not in OPTIONS:
            continue
        spellings, kind, default = OPTIONS[param.name]
        assert sorted(param.opts + param.secondary_opts) == sorted(spellings), param.name
        assert param.nargs == 1 and param.multiple == (kind is INTEGERS), param.name
        assert defaults[param.name] == default and type(defaults[param.name]) is type(default), param.name
        if kind is FLAG:
            assert param.is_flag, param.name
        elif kind is INTEGERS:  # several values after one flag: the command's multi-value rewrite takes them
            assert param.type is click.INT and main.multi_value_types == {param.name: int}
        elif isinstance(kind, tuple):
            assert isinstance(param.type, click.Choice) and tuple(param.type.choices) == kind, param.name
        elif kind is Path:
            assert isinstance(param.type, click.Path) and param.type.type is Path, param.name
            assert (param.type.exists, param.type.file_okay, param.type.dir_okay, param.type.readable,
                    param.type.writable, param.type.resolve_path) == (False, True, True, True, False, False)
        else:
            assert param.type is {int: click.INT, float: click.FLOAT}[kind], param.name
    for param in main.params:
        if param.name in ARGUMENTS:
            assert isinstance(param.type, click.Path) and param.type.type is Path and not param.type.exists


def test_defaults_of_the_click_only_parameters_are_clicks():
    given = click_arguments(["gt", "pred"])
    assert {name: given[name] for name in CLICK_ONLY} == CLICK_ONLY
    assert same(plain_arguments(["gt", "pred"], environ={}), given)


@pytest.mark.parametrize("argv", [
    ["gt", "pred"],
    ["gt", "pred", "-nb", "--json"],
    ["-nb", "gt", "--json", "pred"],
    ["gt", "pred", "-t", "0.5", "-ca", "-exc", "-et", "2", "-iw", "1920", "-ih", "1080"],
    ["gt", "pred", "--iou_threshold", " 0.25 ", "--edge_tolerance", "nan", "--img_width", "1e3"],
    ["gt", "pred", "-j", "2", "--jobs_", "3"],
    ["gt", "pred", "-j", "0x10"],
    ["gt", "pred", "-j", "1.5"],
    ["gt", "pred", "-j", " 3"],
    ["gt", "pred", "--missing_pred", "empty", "--one_to_one", "--gt_format", "dota", "--pred_format", "yolo"],
    ["gt", "pred", "--missing_pred", "EMPTY"],
    ["gt", "pred", "--gt_format", "nope"],
    ["gt", "pred", "-mp", "classes.yaml", "-i", "images", "--pairs", "p.csv", "-o", "m.json"],
    ["gt", "pred", "--spatial_threshold", "0.7", "--expect", "g.json", "--expect_tolerance", "1e-9",
     "--expect_ignore_extra", "-d"],
    ["gt", "pred", "--ap_rule", "voc", "--conf", "0.3", "--max_dets", "300", "--plots", "figs", "--no_detection"],
    ["gt", "pred", "--conf", "x"],
    ["gt", "pred", "-t"],
    ["gt", "pred", "-t", "-0.5"],
    ["gt", "pred", "-t", "0.2", "-t", "0.3"],
    ["gt", "pred", "-nb", "-nb"],
    ["gt", "pred", "--json=1"],
    ["gt", "pred", "-t0.5"],
    ["gt", "pred", "--", "-x"],
    ["gt"],
    [],
    ["gt", "pred", "extra"],
    ["gt", "pred", "-e", "0", "3"],
    ["-e", "0", "3", "gt", "pred"],
    ["gt", "pred", "-e", "0", "-e", "3", "--excluded_classes", "4"],
    ["gt", "pred", "-e", "-1", " 2", "1_0"],
    ["gt", "pred", "-e"],
    ["gt", "pred", "-e", "x"],
    ["gt", "pred", "-e", "1.5"],
    ["-e", "1", "2", "3", "pred"],
    ["gt", "pred", "-e", "0", "--", "7"],
    ["gt", "pred", "--require", "avg_iou>=0.5"],
    ["gt", "pred", "--overlay", "out"],
    ["gt", "pred", "--overlay_size", "32"],
    ["gt", "pred", "--help"],
    ["gt", "pred", "-h"],
    ["--version"],
    ["-V"],
    ["gt", "pred", "--no_such_flag"],
    ["gt", "pred", "-hd", "labels_hbb"],  # a flag of the reference tool's command
    ["gt", "pred", "-"],
    ["", "pred"],
], ids=lambda argv: " ".join(argv) or "empty")
def test_parsed_arguments_are_clicks_or_the_parser_declines(argv):
    ours = plain_arguments(argv, environ={})
    if ours is not None:
        assert same(ours, click_arguments(argv))


@pytest.mark.parametrize("argv", [
    ["gt", "pred"],
    ["gt", "pred", "-nb", "--json"],
    ["gt", "pred", "-t", "0.5", "-ca", "-j", "2", "--missing_pred", "empty", "-mp", "m.yaml", "-o", "o.yaml"],
    ["gt", "pred", "--ap_rule", "voc", "--conf", "0.3", "--no_detection", "-d", "--pairs", "p.csv"],
    ["-e", "0", "3", "gt", "pred", "-e", "-1"],
], ids=["bare", "json", "matching", "detection", "excluded"])
def test_plain_command_lines_are_parsed_without_click(argv):
    ours = plain_arguments(argv, environ={})
    assert ours is not None and same(ours, click_arguments(argv))


@pytest.mark.parametrize("argv", [
    ["gt", "pred", "--help"], ["-V"], ["gt", "pred", "-e"], ["gt", "pred", "--require", "x>1"],
    ["gt", "pred", "-t", "0.2", "-t", "0.3"], ["gt", "pred", "--json=1"], ["gt", "pred", "--", "x"],
    ["gt", "pred", "-t", "-1"], ["gt", "pred", "--conf", "x"], ["gt", "pred", "--gt_format", "YOLO"],
    ["gt", "pred", "x"], ["gt"], ["gt", "pred", "--overlay_size", "100"], ["gt", "pred", "-t"],
    ["gt", "pred\0"],
], ids=lambda argv: " ".join(argv).replace("\0", "NUL"))
def test_anything_unusual_goes_to_click(argv):
    assert plain_arguments(argv, environ={}) is None


def test_shell_completion_goes_to_click():
    assert plain_arguments(["gt", "pred"], environ={"_HBB2OBB_EVAL_COMPLETE": "bash_source"}) is None
    assert plain_arguments(["gt", "pred"], environ={"HOME": "/root"}) is not None


@pytest.mark.parametrize("readable", [True, False])
def test_an_existing_path_click_would_refuse_goes_to_click(tmp_path, monkeypatch, readable):
    (tmp_path / "gt").mkdir()
    argv = [str(tmp_path / "gt"), str(tmp_path / "absent")]
    if not readable:  # as root every path reads: make the permission test say no, for click too
        monkeypatch.setattr(eval_argv.os, "access", lambda path, mode: False)
    clicks = click_arguments(argv)
    ours = plain_arguments(argv, environ={})
    if readable:
        assert same(ours, clicks)
    else:
        assert isinstance(clicks, click.UsageError) and "is not readable" in str(clicks)
        assert ours is None


@pytest.mark.parametrize("name", ["main", "evaluation_options", "run_options", "detection_options",
                                  "spatial_threshold_option"])
def test_the_click_declarations_are_still_found_in_the_eval_module(name):
    import hbb2obb.cli.eval as eval_module
    from hbb2obb.cli import eval_options

    assert getattr(eval_module, name) is getattr(eval_options, name)


def test_other_names_are_not_found_in_the_eval_module():
    import hbb2obb.cli.eval as eval_module

    with pytest.raises(AttributeError, match="no_such_name"):
        eval_module.no_such_name


# --- the console script: the same bytes and status with or without click --------------------

SCRIPT = "import sys\nfrom hbb2obb.cli.eval import run\nsys.argv[0] = 'hbb2obb-eval'\nrun()\n"
CLICK_SCRIPT = ("import sys\nfrom hbb2obb.cli.common import without_teardown\nfrom hbb2obb.cli.eval_options import main\n"
                "sys.argv[0] = 'hbb2obb-eval'\nwithout_teardown(main)()\n")
WATCH = ("import os, sys\nfrom hbb2obb.cli.eval import _plain_main\nfrom hbb2obb.cli.eval_argv import plain_arguments\n"
         "arguments = plain_arguments(sys.argv[1:])\nassert arguments is not None\n"
         "try:\n    _plain_main(arguments)\nexcept SystemExit:\n    pass\n"
         "sys.stderr.write('click loaded: %s' % ('click' in sys.modules))\n")


@pytest.fixture
def run_labels(write_labels):
    gt = "".join(rect(60 * k, 0, 40, 20, cls=k % 2) + "\n" for k in range(6))
    pred = "".join(rect(60 * k + 2, 0, 40, 20, cls=k % 2) + " 0.9\n" for k in range(5)) + "0 1 2 x\n"
    return write_labels({"gt/a.txt": gt, "gt/b.txt": gt, "pred/a.txt": pred, "classes.yaml": "0: Car\n1: Bus\n"})


@pytest.mark.parametrize("extra", [
    ["-nb", "--json"],
    ["-nb"],
    ["-nb", "-mp", "{root}/classes.yaml", "-t", "0.5", "--missing_pred", "empty"],
    ["-nb", "--missing_pred", "error"],
    ["-nb", "--json", "-t", "2"],
    ["-nb", "--json", "-o", "{root}/m.txt"],
    ["-nb", "--json", "--no_such_flag"],
    ["-nb", "--json", "-e", "1"],
    ["-nb", "--json", "-e", "-x"],
], ids=["json", "text", "map-and-threshold", "missing-error", "bad-threshold", "bad-output", "unknown-flag",
        "excluded", "excluded-without-value"])
def test_console_script_prints_and_exits_as_the_click_command(run_labels, extra):
    argv = [str(run_labels / "gt"), str(run_labels / "pred"), *[a.format(root=run_labels) for a in extra]]
    ours = subprocess.run([sys.executable, "-c", SCRIPT, *argv], capture_output=True, timeout=120)
    clicks = subprocess.run([sys.executable, "-c", CLICK_SCRIPT, *argv], capture_output=True, timeout=120)
    assert (ours.returncode, ours.stdout, ours.stderr) == (clicks.returncode, clicks.stdout, clicks.stderr)
    assert ours.stdout or ours.stderr  # every case prints something: a report, a dict or a message


@pytest.mark.parametrize("extra, click_loaded", [
    (["-nb", "--json"], False),  # the plain run
    (["-nb"], True),  # the text report is written by click.echo
], ids=["json", "text"])
def test_a_plain_json_run_never_imports_click(run_labels, extra, click_loaded):
    for name in ("a.txt", "b.txt"):  # no warning: a clean run
        (run_labels / "pred" / name).write_text(rect(2, 0, 40, 20) + "\n")
    argv = [str(run_labels / "gt"), str(run_labels / "pred"), *extra]
    proc = subprocess.run([sys.executable, "-c", WATCH, *argv], capture_output=True, text=True, timeout=120)
    assert proc.stderr.endswith(f"click loaded: {click_loaded}"), proc.stderr
    if "--json" in extra:
        assert json.loads(proc.stdout)["total_gt"] == 12
