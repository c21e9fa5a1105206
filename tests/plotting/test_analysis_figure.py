"""The analysis figure: what each panel's axis starts at, and where its marks sit."""

import numpy as np
import pytest

from hbb2obb.analysis.cuts import analyze, ground_truth_properties
from hbb2obb.plotting.analysis import plot_analysis
from hbb2obb.scoring.evaluate import evaluate_frames

from conftest import obb_line, rotated_rect


@pytest.fixture
def data(write_labels):
    rng = np.random.default_rng(1)
    gt, pred = [], []
    for k in range(24):
        angle = [0.0, 3.0, 10.0, 20.0, 40.0][k % 5]
        box = rotated_rect(60 + 90 * (k % 8), 60 + 90 * (k // 8), 50, 20, angle)
        gt.append(obb_line(0, box))
        pred.append(obb_line(0, box + rng.normal(0, 1.5, (1, 2))))
    root = write_labels({"gt/f.txt": "\n".join(gt) + "\n", "pred/f.txt": "\n".join(pred) + "\n"})
    result = evaluate_frames(root / "gt", root / "pred")
    return analyze(result, ground_truth_properties(result.table))


def test_orientation_panel_draws_points_on_a_zoomed_axis_that_says_so(data):
    fig = plot_analysis(data)
    ax = fig.axes[0]
    groups = [g for g in data["orientation_partition"]["groups"]]
    assert not ax.patches  # no bars: a bar on an axis that does not start at 0 misleads
    points = np.asarray(ax.lines[0].get_ydata(), dtype=float)
    expected = [g["avg_iou"] if g["boxes"] else np.nan for g in groups]
    assert np.allclose(points, expected, equal_nan=True)
    low, high = ax.get_ylim()
    assert low > 0.5 and high <= 1.0
    assert "zoomed, not from 0" in ax.get_ylabel()
    finite = np.asarray(expected)[np.isfinite(expected)]
    assert low < finite.min() and finite.max() < high


def test_bars_of_the_prompt_panel_start_at_zero(data):
    fig = plot_analysis(data)
    ax = fig.axes[1]
    assert ax.get_ylim() == (0.0, 1.0)
    assert all(patch.get_y() == 0.0 for patch in ax.patches)
    assert ax.get_title() == "Prompt as-is vs converted"
