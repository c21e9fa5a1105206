"""A plain ``hbb2obb-eval GT PRED -nb --json``: loads nothing it does not use, and runs as a whole process."""

from __future__ import annotations

import json
import subprocess
import sys

from conftest import rect

# Runs the command in a fresh interpreter, then lists which of the packages and modules that a plain
# run does not need (each costs start-up) it imported.
DRIVER = r"""
import contextlib, io, json, sys
from hbb2obb.cli.eval import main
with contextlib.redirect_stdout(io.StringIO()) as out:
    main.main(sys.argv[1:], standalone_mode=False)
heavy = ("tqdm", "yaml", "matplotlib", "PIL", "dask", "shapely", "pandas", "scipy", "cv2", "fractions",
         "xml.etree.ElementTree", "csv", "hbb2obb.gates.golden", "hbb2obb.gates.require",
         # the readers of other formats and of DOTA Task1 submissions: a folder of .txt files reads none
         "hbb2obb.io.label_sets", "hbb2obb.io.coco", "hbb2obb.io.labelme", "hbb2obb.io.dota_task1")
print(json.dumps({"metrics": json.loads(out.getvalue()), "loaded": sorted(m for m in sys.modules if m in heavy)}))
"""


def test_plain_json_run_loads_no_heavy_package(tmp_path):
    for side, shift, score in (("gt", 0, ""), ("pred", 1, " 0.9")):
        (tmp_path / side).mkdir()
        lines = [rect(20 * k + shift, 0, 10, 6, cls=k % 2) + score for k in range(10)]
        (tmp_path / side / "frame.txt").write_text("\n".join(lines) + "\n")
    proc = subprocess.run([sys.executable, "-c", DRIVER, str(tmp_path / "gt"), str(tmp_path / "pred"), "-nb", "--json"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["metrics"]["total_matches"] == 10 and report["metrics"]["detection_scored"] is True
    assert report["loaded"] == []


# The console script as a whole process (hbb2obb_launch -> hbb2obb.cli.eval.main), on 10 boxes.
CONSOLE = "import sys, hbb2obb_launch\nsys.argv[0] = 'hbb2obb-eval'\nhbb2obb_launch.evaluate()\n"


def test_console_script_scores_ten_boxes(tmp_path):
    for side, shift in (("gt", 0), ("pred", 1)):
        (tmp_path / side).mkdir()
        (tmp_path / side / "frame.txt").write_text("".join(rect(20 * k + shift, 0, 10, 6) + "\n" for k in range(10)))
    args = [str(tmp_path / "gt"), str(tmp_path / "pred"), "-nb", "--json", "--jobs", "1"]
    proc = subprocess.run([sys.executable, "-c", CONSOLE, *args], capture_output=True, text=True, timeout=120)
    assert (proc.returncode, proc.stderr) == (0, "")
    metrics = json.loads(proc.stdout)
    assert metrics["total_gt"] == 10 and metrics["total_matches"] == 10
    # each prediction is its box moved 1 px along the 10 px side: IoU 9 / 11
    assert abs(metrics["avg_iou"] - 9 / 11) < 1e-12
