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
