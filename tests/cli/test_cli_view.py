"""``hbb2obb-view`` on the command line: what it writes, what it refuses, --serve."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from click.testing import CliRunner

from hbb2obb.cli.view import main

from view.conftest import EVIL, read_script, write_view_dataset


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_writes_the_page_and_says_what_it_skipped(tmp_path):
    root = write_view_dataset(tmp_path / "d")
    result = run(root / "images", root / "set_a", "-gt", root / "gt", "-mp", root / "classes.yaml", "-hd",
                 root / "set_b", "-o", tmp_path / "page", "-nb")
    assert result.exit_code == 0, result.output
    assert "1 frame(s) have no image" in result.output and "3 frames, 13 boxes" in result.output
    _, (index,) = read_script(tmp_path / "page" / "data" / "index.js")
    assert index["classes"]["1"] == EVIL and index["hasHbb"] and index["frames"]["img"][2] is None
    for asset in ("index.html", "view.js", "canvas.js", "view.css"):
        assert (tmp_path / "page" / asset).is_file()
    # again into its own folder: allowed, and the frames are reused
    stamp = (tmp_path / "page" / "frames" / "a.jpg").stat().st_mtime_ns
    assert run(root / "images", root / "set_a", "-gt", root / "gt", "-o", tmp_path / "page", "-nb").exit_code == 0
    assert (tmp_path / "page" / "frames" / "a.jpg").stat().st_mtime_ns == stamp


def test_without_ground_truth_reads_any_format(tmp_path, sample_dir):
    result = run(sample_dir / "images", sample_dir / "labels_obb_sam_b", "-o", tmp_path / "page", "-nb")
    assert result.exit_code == 0, result.output
    _, (index,) = read_script(tmp_path / "page" / "data" / "index.js")
    assert not index["hasGt"] and index["stats"][0]["n"] == [56, 66]


def test_refusals_come_before_anything_is_written(tmp_path):
    root = write_view_dataset(tmp_path / "d")
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep")
    result = run(root / "images", root / "set_a", "-o", tmp_path / "mine", "-nb")
    assert result.exit_code == 2 and "did not write" in result.output
    assert sorted(os.listdir(tmp_path / "mine")) == ["notes.txt"]
    result = run(root / "images", root / "set_a", "-o", root / "set_a", "-nb")
    assert result.exit_code == 2 and "label set" in result.output
    result = run(root / "images", root / "set_a", root / "set_b", "--names", "one", "-o", tmp_path / "p", "-nb")
    assert result.exit_code == 2 and "--names gives 1 name(s) for 2" in result.output
    result = run(root / "images", root / "set_a", "--one_to_one", "-o", tmp_path / "p", "-nb")
    assert result.exit_code == 2 and "need -gt" in result.output
    assert not (tmp_path / "p").exists()


def test_broken_ground_truth_is_one_line_naming_file_and_line(tmp_path):
    root = write_view_dataset(tmp_path / "d")
    (root / "gt" / "b.txt").write_text("0 1 2 oops\n")
    result = run(root / "images", root / "set_a", "-gt", root / "gt", "-o", tmp_path / "page", "-nb")
    assert result.exit_code == 2 and "b.txt:1" in result.output and "Traceback" not in result.output


def test_serve_answers_on_localhost_and_stops_on_ctrl_c(tmp_path):
    root = write_view_dataset(tmp_path / "d")
    # Ctrl-C as a terminal delivers it: a suite started in the background (`make test &`, a CI
    # runner's job) runs with SIGINT ignored, which its children would inherit, and Python then
    # never raises KeyboardInterrupt
    process = subprocess.Popen([sys.executable, "-m", "hbb2obb.cli.view", str(root / "images"), str(root / "set_a"),
                                "-o", str(tmp_path / "page"), "-nb", "--serve", "--port", "0"],
                               stderr=subprocess.PIPE, text=True,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        url = None
        deadline = time.monotonic() + 30
        while url is None and time.monotonic() < deadline:
            found = re.search(r"http://127\.0\.0\.1:\d+/", process.stderr.readline())
            url = found.group(0) if found else None
        assert url is not None
        page = urllib.request.urlopen(url + "index.html", timeout=10).read().decode()
        assert "view.js" in page
        data = urllib.request.urlopen(url + "data/index.js", timeout=10).read().decode()
        assert json.loads(data[len("hbb2obbIndex("):-3])["frames"]["name"] == ["a", "b", "c"]
    finally:
        process.send_signal(signal.SIGINT)
        try:
            status = process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            raise AssertionError(f"--serve did not stop within 10 s of Ctrl-C: {process.stderr.read()!r}") from None
        finally:
            process.stderr.close()
        assert status == 0
    assert Path(tmp_path / "page" / "index.html").is_file()
