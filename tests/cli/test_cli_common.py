"""What every command shares: the allocator setting applied where each command starts."""

import platform
import subprocess
import sys

import pytest

GLIBC = sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc"

# Report whether the settings were applied (twice: the second call must agree), and whether a
# 16 MB block then comes from the heap (glibc's default maps a block that large on its own).
PROBE = r"""
import ctypes
from hbb2obb.cli import common
applied = common.keep_freed_memory()
again = common.keep_freed_memory()
libc = ctypes.CDLL("libc.so.6")
libc.malloc.restype = ctypes.c_void_p
block = libc.malloc(16 << 20)
heap = [line.split()[0] for line in open("/proc/self/maps") if line.rstrip().endswith("[heap]")]
low, high = (int(part, 16) for part in heap[0].split("-"))
print(applied, again, low <= block < high)
"""


def _probe(env_extra=None):
    env = {"PATH": "/usr/bin:/bin"}
    env.update(env_extra or {})
    run = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, env=env, check=True)
    return run.stdout.split()


@pytest.mark.skipif(not GLIBC, reason="the setting is glibc's")
def test_freed_memory_is_kept_for_reuse():
    # applied, and a 16 MB allocation is served from the heap
    assert _probe() == ["True", "True", "True"]


@pytest.mark.skipif(not GLIBC, reason="the setting is glibc's")
@pytest.mark.parametrize("name, value", [("GLIBC_TUNABLES", "glibc.malloc.mmap_threshold=131072"),
                                         ("MALLOC_ARENA_MAX", "2")])
def test_the_users_malloc_settings_win(name, value):
    # nothing applied: a 16 MB allocation is mapped on its own, as glibc does by default
    assert _probe({name: value}) == ["False", "False", "False"]


# --- the console script ends without teardown, with the command's output and status ---------

from conftest import rect  # noqa: E402

EVAL_SCRIPT = [sys.executable, "-c", "import hbb2obb_launch; hbb2obb_launch.evaluate()"]


@pytest.fixture
def eval_labels(write_labels):
    many = "".join(rect(10 + 60 * (i % 50), 10 + 40 * (i // 50), 40, 20) + "\n" for i in range(2000))
    shifted = "".join(rect(12 + 60 * (i % 50), 10 + 40 * (i // 50), 40, 20) + "\n" for i in range(2000))
    return write_labels({"gt/a.txt": many, "pred/a.txt": shifted})


def test_console_script_prints_everything_and_exits_0(eval_labels):
    import json

    from click.testing import CliRunner

    from hbb2obb.cli.eval import main

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


@pytest.mark.parametrize("body, status, stderr", [
    ("pass", 0, ""),
    ("sys.exit(3)", 3, ""),
    ("sys.exit('gave up')", 1, "gave up\n"),
    ("click.echo('out'); sys.exit(None)", 0, ""),
])
def test_without_teardown_maps_every_kind_of_exit(body, status, stderr):
    code = ("import sys, click\nfrom hbb2obb.cli.common import without_teardown\n"
            f"@click.command()\ndef cmd():\n    {body}\nwithout_teardown(cmd)()\nprint('never here')\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert (run.returncode, run.stderr) == (status, stderr)
    assert "never here" not in run.stdout
