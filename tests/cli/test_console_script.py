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


def _ending(body: str) -> list[str]:
    """A process that runs ``body`` as the command given to :func:`hbb2obb_launch.end_at_once`."""
    script = f"import sys, hbb2obb_launch\ndef main():\n    {body}\nhbb2obb_launch.end_at_once(main)"
    return [sys.executable, "-c", script]


@pytest.mark.parametrize("body, status, stdout, stderr", [
    ("print('x' * 300000, end='')", 0, "x" * 300000, ""),  # buffered output is flushed before the end
    ("sys.exit(3)", 3, "", ""),
    ("sys.exit(None)", 0, "", ""),
    ("sys.exit('went wrong')", 1, "", "went wrong\n"),  # as Python itself reports sys.exit(str)
])
def test_end_at_once_keeps_output_and_status(body, status, stdout, stderr):
    run = subprocess.run(_ending(body), capture_output=True, text=True)
    assert (run.returncode, run.stdout, run.stderr) == (status, stdout, stderr)


def test_end_at_once_reports_a_closed_pipe():
    # the reader of stdout is gone before the flush: Python's own exit says 120, so must this
    run = subprocess.run(_ending("import os; os.close(1); sys.stdout = open(os.devnull, 'w'); "
                                 "sys.stdout.close()"), capture_output=True, text=True)
    assert run.returncode == 120


def test_malloc_settings_of_the_user_are_kept(monkeypatch):
    import hbb2obb_launch

    monkeypatch.setenv("MALLOC_ARENA_MAX", "2")
    assert hbb2obb_launch.keep_freed_memory() is False
    monkeypatch.delenv("MALLOC_ARENA_MAX")
    monkeypatch.setenv("GLIBC_TUNABLES", "glibc.malloc.trim_threshold=0")
    assert hbb2obb_launch.keep_freed_memory() is False
