"""The command converter: templates, placeholders, running an external tool, failures and timeouts."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import numpy as np
import pytest

from hbb2obb.converters import get_converter
from hbb2obb.converters.command import STDERR_TAIL_LINES, CommandConverter, render_command, stderr_tail, template_fields
from hbb2obb.errors import UsageError
from hbb2obb.io import read_yolo_obb

FAKE = Path(__file__).resolve().parents[1] / "fake_obb_converter.py"
PY = shlex.quote(sys.executable)
TEMPLATE = f"{PY} {shlex.quote(str(FAKE))} {{hbb_dir}} {{out_dir}} --sf {{scale_factor}} --imgsz {{imgsz}}"


@pytest.mark.parametrize("template, fields", [
    ("tool", []),
    ("tool {hbb_dir} {out_dir}", ["hbb_dir", "out_dir"]),
    ("tool --a {x} --b run_{x}_{y} '{img_source}/x y'", ["x", "y", "img_source"]),
    ("tool --json '{{\"k\": 1}}' {z}", ["z"]),
])
def test_template_fields_in_order_of_first_use(template, fields):
    assert template_fields(template) == fields


@pytest.mark.parametrize("template, message", [
    ("", "empty"), ("   ", "empty"), ("tool 'unclosed", "quotation"), ("tool {}", "parameter name"),
    ("tool {0}", "parameter name"), ("tool {a.b}", "parameter name"), ("tool {a", "braces"), ("tool a}", "braces"),
])
def test_bad_templates_are_usage_errors(template, message):
    with pytest.raises(UsageError, match=message):
        template_fields(template)


@pytest.mark.parametrize("template, values, args", [
    ("t --sf {sf}", {"sf": 0.05}, ["t", "--sf", "0.05"]),
    ("t --sf {sf}", {"sf": [0.02, 0.05]}, ["t", "--sf", "0.02", "0.05"]),
    ("t --tag=sf{sf}", {"sf": [0.02, 0.05]}, ["t", "--tag=sf0.02,0.05"]),
    ("t --size {imgsz:05d}", {"imgsz": 640}, ["t", "--size", "00640"]),
    ("t '{d}/out dir' {{literal}}", {"d": "/tmp/a b"}, ["t", "/tmp/a b/out dir", "{literal}"]),
    ("t {v}", {"v": "x; rm -rf /"}, ["t", "x; rm -rf /"]),  # one argument: no shell ever sees it
])
def test_render_command(template, values, args):
    assert render_command(template, values) == args


def test_render_command_names_placeholders_without_value():
    with pytest.raises(UsageError, match=r"\{b\}"):
        render_command("t {a} {b}", {"a": 1, "b": None})


def test_stderr_tail_keeps_the_last_lines():
    text = "\n".join(f"line {i}" for i in range(100)) + "\n\n"
    tail = stderr_tail(text).splitlines()
    assert len(tail) == STDERR_TAIL_LINES and tail[-1] == "line 99" and tail[0] == f"line {100 - STDERR_TAIL_LINES}"
    assert stderr_tail("") == ""


def test_parameters_come_from_the_template():
    converter = get_converter("command", template=TEMPLATE)
    assert converter.parameters == {"scale_factor": None, "imgsz": None}
    assert not converter.needs_images
    assert get_converter("command", template="echo {img_source} {out_dir}").needs_images
    assert converter.check_parameters({"scale_factor": 0.1, "imgsz": 640}) == {"scale_factor": 0.1, "imgsz": 640}
    with pytest.raises(UsageError, match=r"no value: \{imgsz\}"):
        converter.check_parameters({"scale_factor": 0.1})
    with pytest.raises(UsageError, match="no parameter 'opening_kernel_percentage'"):
        converter.check_parameters({"scale_factor": 0.1, "imgsz": 640, "opening_kernel_percentage": 0.1})


@pytest.mark.parametrize("template, timeout, message", [
    ("no-such-program-hbb2obb {out_dir}", None, "not found"),
    ("{prog} {out_dir}", None, "program itself"),
    ("echo {out_dir}", 0, "positive"),
])
def test_bad_converter_setups(template, timeout, message):
    with pytest.raises(UsageError, match=message):
        CommandConverter(template, timeout)


def test_convert_runs_the_tool(write_labels):
    root = write_labels({"hbb/a.txt": "0 50 40 30 10\n", "hbb/b.txt": "1 20 60 8 24\n"})
    report = get_converter("command", template=TEMPLATE).convert(
        root / "hbb", root / "out", {"scale_factor": [0.0, 0.1], "imgsz": 3840})
    assert report.ok and report.error == "" and report.files == 2 and report.seconds > 0
    assert "--sf 0.0 0.1" in report.details["command"]
    corners = read_yolo_obb(root / "out" / "a.txt", strict=True).boxes.corners[0]
    # wide box: long side (30) grows by 2 x 0.1 x 30, short side (10) unchanged; whole-pixel grid at 3840
    np.testing.assert_allclose(corners, [[32, 35], [68, 35], [68, 45], [32, 45]])


def test_non_zero_exit_is_a_failed_conversion_with_stderr_tail(write_labels):
    root = write_labels({"hbb/a.txt": "0 50 40 30 10\n"})
    converter = get_converter("command", template=TEMPLATE + " --fail_at 0.05")
    report = converter.convert(root / "hbb", root / "out", {"scale_factor": 0.05, "imgsz": 640})
    assert not report.ok
    assert report.error.splitlines()[0] == "exit status 3"
    assert report.error.splitlines()[-1] == "RuntimeError: out of memory at scale factor 0.05"


def test_timeout_stops_the_whole_process_group(write_labels):
    root = write_labels({"hbb/a.txt": "0 50 40 30 10\n"})
    # a wrapper that leaves a grandchild holding the pipes open: killing only the child would hang
    template = "sh -c 'echo starting >&2; sleep 30 & sleep 30' {out_dir}"
    report = get_converter("command", template=template, timeout=0.3).convert(root / "hbb", root / "out", {})
    assert not report.ok
    assert report.error.startswith("timed out after 0.3 s")
    assert report.error.splitlines()[-1] == "starting"
