"""What a plain ``hbb2obb-eval GT PRED -nb --json`` loads: nothing it does not use (issue 18)."""

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
         "hbb2obb.io.label_sets", "hbb2obb.io.coco", "hbb2obb.io.labelme", "hbb2obb.io.dota_task1",
         # nor the DOTA and YOLO-HBB readers, which hbb2obb/io/__init__.py imports only when asked for
         "hbb2obb.io.dota", "hbb2obb.io.yolo_hbb")
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


# The console script itself (hbb2obb_launch -> hbb2obb.cli.eval.run): a plain command line is parsed
# without click (cli/eval_argv.py), so neither click nor the command's click declaration is loaded.
# The script ends in os._exit; the driver lists the modules just before.
CONSOLE_DRIVER = r"""
import json, os, sys
HEAVY = ("click", "hbb2obb.cli.eval_options", "hbb2obb.cli.common", "tqdm", "yaml", "hbb2obb.io.dota",
         "hbb2obb.io.yolo_hbb", "hbb2obb.io.label_sets", "hbb2obb.gates.require", "hbb2obb.gates.golden",
         "threading")  # the IoU kernel's per-thread work arrays need only _thread._local
end = os._exit
def listing_exit(status):
    sys.stderr.write(json.dumps(sorted(m for m in sys.modules if m in HEAVY)))
    sys.stderr.flush()
    end(status)
os._exit = listing_exit
sys.argv[0] = "hbb2obb-eval"
import hbb2obb_launch
hbb2obb_launch.evaluate()
"""


def test_console_script_plain_run_loads_no_click(tmp_path):
    for side, shift in (("gt", 0), ("pred", 1)):
        (tmp_path / side).mkdir()
        (tmp_path / side / "frame.txt").write_text("".join(rect(20 * k + shift, 0, 10, 6) + "\n" for k in range(10)))
    args = [str(tmp_path / "gt"), str(tmp_path / "pred"), "-nb", "--json", "--jobs", "1"]
    proc = subprocess.run([sys.executable, "-c", CONSOLE_DRIVER, *args], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["total_matches"] == 10
    assert json.loads(proc.stderr) == []
    # the same driver sees click when the command line is one for click (here --version)
    proc = subprocess.run([sys.executable, "-c", CONSOLE_DRIVER, "--version"], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0 and proc.stdout.startswith("hbb2obb-eval ")
    assert "click" in json.loads(proc.stderr)
