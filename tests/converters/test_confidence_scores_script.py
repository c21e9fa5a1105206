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


def test_sample_parts_with_prompts_made_from_the_ground_truth(dota_sample_dir, tmp_path):
    """``--prompts margin``: each part's labels_hbb are boxes around its ground truth's bounds (each
    holds its object's OBB), not the sample's own HBBs; the images and ground truth are the sample's."""
    from hbb2obb.io import read_yolo_hbb, read_yolo_obb

    parts = confidence_scores.sample_parts(dota_sample_dir.parent, [dota_sample_dir.name], False, False, tmp_path,
                                           prompts="margin", margin=(0.05, 0.10))
    assert [name.split(" (")[0] for name, _ in parts] == ["dota-sample tuned, margin prompts",
                                                         "dota-sample held out, margin prompts"]
    for _, folder in parts:
        files = sorted((folder / "labels_hbb").glob("*.txt"))
        assert files and not any(path.is_symlink() for path in files)
        for path in files:
            prompts = read_yolo_hbb(path, strict=True).boxes.corners
            truth = read_yolo_obb(folder / "labels_obb_gt" / path.name, strict=True).boxes.corners
            assert prompts.shape == truth.shape
            # grown by 5-10% of the box per side, with 1 px of noise (sd): every prompt holds its
            # object's bounds to within 4 px, and the prompts are larger on average
            low, high = truth.min(axis=1), truth.max(axis=1)
            assert (prompts.min(axis=1) <= low + 4.0).all() and (prompts.max(axis=1) >= high - 4.0).all()
            assert np.mean(np.prod(prompts.max(axis=1) - prompts.min(axis=1), axis=1)) > 1.1 * np.mean(
                np.prod(high - low, axis=1))
            own = read_yolo_hbb(dota_sample_dir / "labels_hbb" / path.name, strict=True).boxes.corners
            assert not np.allclose(prompts, own, atol=0.5)
