"""scripts/converter_scores.py on a small synthetic sample: converter against the HBB as is, per class."""

from __future__ import annotations

import re
import subprocess
import sys

from conftest import ROOT

SCRIPT = ROOT / "scripts" / "converter_scores.py"


def test_the_scores_table_of_a_synthetic_sample(tmp_path):
    from hbb2obb.synthetic.dataset import generate_dataset

    dataset = generate_dataset(tmp_path / "syn", n_frames=2, seed=3, width=640, height=400)
    (dataset.root / "classes.yaml").write_text("0: car\n1: bus\n2: truck\n3: motorcycle\n")
    done = subprocess.run([sys.executable, str(SCRIPT), "--data", str(tmp_path), "--samples", "syn",
                           "--param", "tightness=loose"], capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "syn, tuned on: " in out and "held out" not in out  # no frame of this sample is held out
    rows = re.findall(r"^\| (\w+) \| (\d+) \| ([\d.]+) \| ([\d.]+)", out, re.M)
    total = [r for r in rows if r[0] == "all"]
    assert total and int(total[0][1]) == dataset.boxes
    assert float(total[0][3]) > float(total[0][2])  # the converter beats the HBB as is on synthetic cars
    assert "HBB tightness: loose" in out and re.search(r"\d+\.\d\d s CPU per 100 boxes", out)
    missing = subprocess.run([sys.executable, str(SCRIPT), "--data", str(tmp_path), "--samples", "none"],
                             capture_output=True, text=True, timeout=60)
    assert missing.returncode == 2 and "no sample there" in missing.stderr
