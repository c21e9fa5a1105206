"""tools/reading_scores.py: how often the auto reading gets a set's known prompt kind right."""

from __future__ import annotations

import re
import subprocess
import sys

from conftest import ROOT

SCRIPT = ROOT / "tools" / "reading_scores.py"


def test_the_reading_of_generated_sets_of_known_kinds(tmp_path):
    from hbb2obb.converters.image.converter import hbb_xyxy, read_frame
    from hbb2obb.converters.image.params import ImageParams
    from hbb2obb.converters.image.reading import read_prompts
    from hbb2obb.io import read_yolo_hbb
    from hbb2obb.synthetic.dataset import main as generate

    for kind in ("corner", "margin"):
        args = [str(tmp_path / f"syn-{kind}"), "--frames", "2", "--seed", "303", "--width", "640",
                "--height", "400", "--prompts", kind]
        generate(args + (["--margin", "0.10", "0.15"] if kind == "margin" else []))
    done = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path / "syn-corner"), str(tmp_path / "syn-margin")],
                          capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr
    # the oracle: the converter's own reading of every frame, compared with the set's kind here
    expected = {}
    for kind in ("corner", "margin"):
        good = 0
        for path in sorted((tmp_path / f"syn-{kind}" / "labels_hbb").glob("*.txt")):
            image = read_frame(tmp_path / f"syn-{kind}" / "images" / f"{path.stem}.jpg").convert("RGB")
            reading = read_prompts(image, hbb_xyxy(read_yolo_hbb(path, strict=True), image.size), ImageParams())
            good += (reading.margin > 0) if kind == "margin" else (reading.margin == 0 and reading.tightness == "loose")
        expected[kind] = good
    assert re.search(rf"^syn-corner \(corner\): {expected['corner']}/2$", done.stdout, re.M), done.stdout
    assert re.search(rf"^syn-margin \(margin\): {expected['margin']}/2$", done.stdout, re.M), done.stdout
    total = expected["corner"] + expected["margin"]
    assert f"generated: {total}/4" in done.stdout
    assert done.stdout.count("  wrong: ") == 4 - total
    (tmp_path / "plain").mkdir()
    unnamed = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path / "plain")], capture_output=True, text=True,
                             timeout=60)
    assert unnamed.returncode != 0 and "says no prompt kind" in unnamed.stderr


def test_cost_converts_a_misread_frame_both_ways_as_the_command_does(tmp_path):
    """A corner-cutting set named ``tight``: every frame it reads as corner-cutting is wrong by the
    name, and ``--cost`` must give the IoU of ``hbb2obb`` at its defaults and with ``-ti tight --margin 0``."""
    from click.testing import CliRunner

    from hbb2obb.cli.convert import main as convert
    from hbb2obb.scoring.metric_dict import evaluate_obb
    from hbb2obb.synthetic.dataset import main as generate

    named = tmp_path / "syn-tight"
    generate([str(named), "--frames", "1", "--seed", "303", "--width", "640", "--height", "400", "--prompts",
              "corner"])
    done = subprocess.run([sys.executable, str(SCRIPT), str(named), "--cost"], capture_output=True, text=True,
                          timeout=240)
    assert done.returncode == 0, done.stderr
    found = re.search(r"wrong: syn-tight (\S+) \(tight\) read .*; mean IoU ([0-9.]+) as read, ([0-9.]+) as known: "
                      r"cost ([-+][0-9.]+)", done.stdout)
    assert found, done.stdout  # the reading is of corner-cutting prompts: loose, so wrong by the name
    stem, as_read, as_known, cost = found.group(1), *map(float, found.groups()[1:])
    scores = []
    for flags in ([], ["-ti", "tight", "--margin", "0"]):
        out = tmp_path / f"obb{len(scores)}"
        result = CliRunner().invoke(convert, [str(named / "images"), "--hbb_dir", str(named / "labels_hbb"),
                                              "--obb_dir", str(out), "-nb", *flags])
        assert result.exit_code == 0, result.output
        (out / ".hbb2obb-frames.jsonl").unlink()
        scores.append(evaluate_obb(named / "labels_obb_gt", out)["avg_iou"])
    assert stem == "frame_0000"
    assert (as_read, as_known) == (round(scores[0], 4), round(scores[1], 4))
    assert abs(cost - (as_known - as_read)) < 1e-9
    assert f"misreading cost: mean IoU {cost:+.4f} over 1 frame(s) read wrong" in done.stdout


def test_the_true_margin_of_prompts_grown_by_a_known_share(tmp_path):
    import numpy as np
    import pytest

    sys.path.insert(0, str(SCRIPT.parent))
    try:
        from reading_scores import true_margin
    finally:
        sys.path.remove(str(SCRIPT.parent))
    truth, hbb = tmp_path / "gt.txt", tmp_path / "hbb.txt"
    truth.write_text("0 100 100 140 100 140 120 100 120\n0 200 200 260 230 245 260 185 230\n")
    # a 40 x 20 box grown by 10% of its size per side, and a 75 x 60 one by 20%
    hbb.write_text("0 120 110 48 24\n0 222.5 230 105 84\n")
    assert true_margin(hbb, truth, (1000, 1000)) == pytest.approx(np.mean([0.1] * 4 + [0.2] * 4), abs=1e-12)
