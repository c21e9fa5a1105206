"""tools/converter_scores.py on a small synthetic sample: converter against the HBB as is, per class."""

from __future__ import annotations

import re
import subprocess
import sys

from conftest import ROOT

SCRIPT = ROOT / "tools" / "converter_scores.py"


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
    assert "HBBs read as: frame_0000 loose, frame_0001 loose" in out
    assert re.search(r"\d+\.\d\d s CPU per 100 boxes", out)
    missing = subprocess.run([sys.executable, str(SCRIPT), "--data", str(tmp_path), "--samples", "none"],
                             capture_output=True, text=True, timeout=60)
    assert missing.returncode == 2 and "no sample there" in missing.stderr


def test_tuned_only_leaves_the_held_out_frame_unconverted(tmp_path):
    from hbb2obb.synthetic.dataset import generate_dataset

    # a sample named like the DOTA one, whose second frame is named like its held-out frame
    dataset = generate_dataset(tmp_path / "dota-sample", n_frames=2, seed=4, width=640, height=400, tight=True)
    for folder, suffix in ((dataset.images_dir, ".jpg"), (dataset.hbb_dir, ".txt"), (dataset.gt_dir, ".txt")):
        (folder / f"frame_0001{suffix}").rename(folder / f"P1888{suffix}")
    (dataset.root / "classes.yaml").write_text("0: car\n1: bus\n2: truck\n3: motorcycle\n")
    keep = tmp_path / "kept"
    command = [sys.executable, str(SCRIPT), "--data", str(tmp_path), "--samples", "dota-sample", "--keep", str(keep)]
    tuned = subprocess.run(command + ["--tuned-only"], capture_output=True, text=True, timeout=240)
    assert tuned.returncode == 0, tuned.stderr
    assert "dota-sample, tuned on: frame_0000" in tuned.stdout and "P1888" not in tuned.stdout
    assert "HBBs read as: frame_0000 tight" in tuned.stdout  # whole-pixel prompts are read as tight
    assert sorted(p.name for p in keep.rglob("*.txt")) == ["frame_0000.txt"]  # P1888 never converted
    both = subprocess.run(command, capture_output=True, text=True, timeout=240)
    assert both.returncode == 0 and "dota-sample, held out: P1888" in both.stdout
