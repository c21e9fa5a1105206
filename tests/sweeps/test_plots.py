"""Sweep and comparison figures: error bars are standard errors, nothing covers the data, units agree."""

import math

import numpy as np
import pytest
from matplotlib.collections import LineCollection, PathCollection

from hbb2obb.sweeps.plots import comparison_figure, standard_error, sweep_figure

AXES = ["scale_factor", "opening_kernel_percentage"]


def records(times=(8.9, 4.7, 3.3, 3.1)):
    out = []
    for (scale, kernel), seconds, iou, share in zip(
            [(0.0, 0.1), (0.0, 0.2), (0.02, 0.1), (0.02, 0.2)], times, (0.8945, 0.8936, 0.8705, 0.8733),
            (0.5973, 0.589, 0.427, 0.436)):
        out.append({"scale_factor": scale, "opening_kernel_percentage": kernel, "avg_iou": iou, "std_iou": 0.0795,
                    "sem_iou": 0.0795 / math.sqrt(365), "total_matches": 365, "iou_fractions": {"0.90": share},
                    "p90_angle_error": 4.0, "execution_time": seconds, "status": "ok"})
    return out


def drawn(fig):
    fig.canvas.draw()
    return fig.canvas.get_renderer()


def error_bar_halves(ax) -> list:
    halves = []
    for collection in ax.collections:
        if isinstance(collection, LineCollection):
            halves += [abs(seg[1][1] - seg[0][1]) / 2 for seg in collection.get_segments()]
    return sorted(halves)


def test_error_bars_are_the_standard_error_not_the_spread():
    recs = records()
    ax = sweep_figure(recs, AXES, "avg_iou", recs[0]).axes[0]
    assert error_bar_halves(ax) == pytest.approx([r["sem_iou"] for r in recs], rel=1e-9)
    assert "standard error" in ax.get_title() and "std" not in ax.get_title()


def test_share_error_is_binomial_and_its_text_is_in_percent():
    recs = records()
    fig = sweep_figure(recs, AXES, "iou_at_90", recs[0])
    ax = fig.axes[0]
    expected = sorted(math.sqrt(p * (1 - p) / 365) for p in (0.5973, 0.589, 0.427, 0.436))
    assert error_bar_halves(ax) == pytest.approx(expected, rel=1e-9)
    best_text = [t.get_text() for t in ax.texts if "best point" in t.get_text()][0]
    assert "iou_at_90 = 59.7% ± 2.6%" in best_text and "0.5973" not in best_text


def test_legend_and_best_point_text_sit_beside_the_axes():
    recs = records()
    fig = sweep_figure(recs, AXES, "avg_iou", recs[0])
    renderer = drawn(fig)
    ax = fig.axes[0]
    frame = ax.get_window_extent(renderer)
    legend = ax.get_legend().get_window_extent(renderer)
    best = [t for t in ax.texts if "best point" in t.get_text()][0].get_window_extent(renderer)
    for box in (legend, best):
        assert box.x0 >= frame.x1  # right of the plotting area: over no point
        assert box.x1 <= fig.bbox.x1 + 1  # and inside the picture
    assert not legend.overlaps(best)


def marker_sizes(ax) -> np.ndarray:
    """Areas of the series' markers (the star is a collection of one)."""
    return np.concatenate([c.get_sizes() for c in ax.collections
                           if isinstance(c, PathCollection) and len(c.get_offsets()) > 1])


def test_marker_area_follows_time_unless_times_are_alike():
    fig = sweep_figure(records(), AXES, "avg_iou")
    sizes = marker_sizes(fig.axes[0])
    assert sizes.max() > 2 * sizes.min()
    assert [t for t in fig.axes[0].get_legend().get_texts() if t.get_text().endswith(" s")]
    alike = sweep_figure(records(times=(3.0, 3.1, 3.2, 3.3)), AXES, "avg_iou")
    sizes = marker_sizes(alike.axes[0])
    assert np.unique(sizes).size == 1
    assert not [t for t in alike.axes[0].get_legend().get_texts() if t.get_text().endswith(" s")]
    assert "times alike" in alike.axes[0].get_title()


def test_percentiles_have_no_error_bar_and_say_so():
    ax = sweep_figure(records(), AXES, "p90_angle_error").axes[0]
    assert error_bar_halves(ax) == []
    assert "no error bars" in ax.get_title()
    assert standard_error(records()[0], "median_iou") is None


def test_comparison_names_stay_inside_the_axes():
    names = ["image_converter_imgsz_1024", "segmentation_sam_b_full_grid", "image_fast_opening_0.2",
             "identity_prompt_as_is", "command_external_obb_converter"]
    rows = [{"name": n, "avg_iou": iou, "sem_iou": 0.004, "execution_time": t}
            for n, iou, t in zip(names, (0.8945, 0.8921, 0.8936, 0.7604, 0.8702), (8.9, 95.0, 4.7, 0.2, 120.0))]
    fig = comparison_figure(rows)
    renderer = drawn(fig)
    ax = fig.axes[0]
    frame = ax.get_window_extent(renderer)
    notes = [t for t in ax.texts if t.get_text() in names]
    assert sorted(t.get_text() for t in notes) == sorted(names)
    for note in notes:
        box = note.get_window_extent(renderer)
        assert frame.x0 - 1 <= box.x0 and box.x1 <= frame.x1 + 1, note.get_text()
