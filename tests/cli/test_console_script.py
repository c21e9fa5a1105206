"""The hbb2obb-eval console script as a whole process: its whole output and its exit status."""

import json
import subprocess
import sys

import pytest
from click.testing import CliRunner

from hbb2obb.cli.eval import main

from conftest import rect

EVAL_SCRIPT = [sys.executable, "-c", "import hbb2obb_launch; hbb2obb_launch.evaluate()"]


@pytest.fixture
def eval_labels(write_labels):
    many = "".join(rect(10 + 60 * (i % 50), 10 + 40 * (i // 50), 40, 20) + "\n" for i in range(2000))
    shifted = "".join(rect(12 + 60 * (i % 50), 10 + 40 * (i // 50), 40, 20) + "\n" for i in range(2000))
    return write_labels({"gt/a.txt": many, "pred/a.txt": shifted})


def test_console_script_prints_everything_and_exits_0(eval_labels):
    run = subprocess.run(EVAL_SCRIPT + [str(eval_labels / "gt"), str(eval_labels / "pred"), "-nb", "--json"],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    printed = json.loads(run.stdout)  # the whole dict arrived through the pipe: 2,000 IoUs
    assert len(printed["class_stats"]["0"]["ious"]) == 2000
    in_process = CliRunner().invoke(main, [str(eval_labels / "gt"), str(eval_labels / "pred"), "-nb", "--json"])
    assert run.stdout == in_process.stdout


@pytest.mark.parametrize("args, status, stderr_start", [
    (["--require", "avg_iou>=0.99"], 1, ""),
    (["--require", "avg_iou>=0.5"], 0, ""),
    (["--no_such_flag"], 2, "Usage:"),
])
def test_console_script_keeps_the_exit_status(eval_labels, args, status, stderr_start):
    run = subprocess.run(EVAL_SCRIPT + [str(eval_labels / "gt"), str(eval_labels / "pred"), "-nb", *args],
                         capture_output=True, text=True)
    assert run.returncode == status
    assert run.stderr.startswith(stderr_start)


def test_console_script_input_error_is_one_line_and_2(tmp_path):
    run = subprocess.run(EVAL_SCRIPT + [str(tmp_path / "absent"), str(tmp_path), "-nb"], capture_output=True, text=True)
    assert run.returncode == 2
    assert run.stderr.count("\n") == 1 and "absent: ground-truth folder not found" in run.stderr
