"""tools/confidence_scores.py: how well the converter's confidence ranks its boxes by IoU."""

from __future__ import annotations

import re
import subprocess
import sys

import numpy as np
import pytest

from conftest import ROOT

SCRIPT = ROOT / "tools" / "confidence_scores.py"
sys.path.insert(0, str(SCRIPT.parent))
pytest.importorskip("scipy")
import confidence_scores  # noqa: E402


def test_ties_at_the_cut_share_the_flag_evenly():
    weights = confidence_scores.flag_weights(np.array([0.5, 0.0, 0.0, 0.9, 0.0]), 2)
    assert weights.tolist() == pytest.approx([0.0, 2 / 3, 2 / 3, 0.0, 2 / 3]) and weights.sum() == pytest.approx(2)
    assert confidence_scores.flag_weights(np.zeros(0), 1).shape == (0,)


def test_a_perfect_a_reversed_and_a_constant_ranking():
    iou = np.linspace(0.3, 0.95, 40)
    perfect = confidence_scores.ranking(iou * 0.5, iou)
    assert perfect["spearman"] == pytest.approx(1.0) and perfect[0.1]["hit"] == 1.0 and perfect[0.2]["hit"] == 1.0
    assert perfect[0.1]["flagged_iou"] == pytest.approx(iou[:4].mean())
    assert perfect[0.1]["rest_iou"] == pytest.approx(iou[4:].mean())
    reversed_ = confidence_scores.ranking(-iou, iou)
    assert reversed_["spearman"] == pytest.approx(-1.0) and reversed_[0.1]["hit"] == 0.0
    constant = confidence_scores.ranking(np.ones(40), iou)  # no information: a random pick's hit rate
    assert np.isnan(constant["spearman"]) and constant[0.1]["hit"] == pytest.approx(0.1)
    assert constant[0.2]["hit"] == pytest.approx(0.2) and constant[0.2]["flagged_iou"] == pytest.approx(iou.mean())


def test_the_table_of_a_synthetic_set(tmp_path):
    from hbb2obb.synthetic.dataset import generate_dataset

    dataset = generate_dataset(tmp_path / "syn", n_frames=1, seed=3, width=640, height=400, tight=True)
    done = subprocess.run([sys.executable, str(SCRIPT), str(dataset.root), "--keep", str(tmp_path / "kept")],
                          capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr
    row = re.search(
        r"^\| syn \| (\d+) \| (\d+) \(.*?\) \| ([\d.]+) \| (-?[\d.]+|nan) \| ([\d.]+) \(", done.stdout, re.M
    )
    assert row and int(row.group(1)) == dataset.boxes, done.stdout
    assert 0.0 <= float(row.group(5)) <= 1.0
    # the kept confidence files are the command's: one score per OBB line, four decimals
    for obb in (tmp_path / "kept" / "syn" / "obb").glob("*.txt"):
        scores = (tmp_path / "kept" / "syn" / "confidence" / obb.name).read_text().splitlines()
        assert len(scores) == len(obb.read_text().splitlines())
        assert all(re.fullmatch(r"[01]\.\d{4}", s) and 0 <= float(s) <= 1 for s in scores)
    missing = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert missing.returncode == 2 and "no labels_obb_gt there" in missing.stderr
