"""analysis.yaml keeps every key path of the reference tool 1.12.0's file (issue 13).

The expected paths below were read off the file the reference wrote on the Songdo sample
(``tools/analysis_yaml_reference.py`` compares the values there); a script written for that
file must find each one in ours.
"""

from __future__ import annotations

import numpy as np
import pytest
import yaml
from click.testing import CliRunner

from hbb2obb.cli.analyze import main

from conftest import rect, rotated_rect

TOP_LEVEL = ["boxes", "has_identity", "has_edge", "has_difficult", "overall", "orientation", "orientation_controlled",
             "orientation_partition", "orientation_partition_controlled", "controlled_boxes", "size", "klass",
             "side_ratios", "boundary_classes", "edge"]
GROUP_KEYS = ["group", "boxes", "mean_iou", "std_iou", "sem_iou", "median_iou", "below_075", "at_high", "angle_p90",
              "angle_mean", "identity_iou", "identity_angle_p90"]
ORIENTATION_GROUPS = ["axis-aligned (<0.005 deg)", "rotated", "off-axis 0 to 5 deg", "off-axis 5 to 15 deg",
                      "off-axis 15 to 30 deg", "off-axis 30 to 45 deg"]
PARTITION_GROUPS = ["axis-aligned", "0 to 5", "5 to 15", "15 to 30", "30 to 45"]
SIZE_GROUPS = ["0 to 25 px", "25 to 35 px", "35 to 45 px", "45 to 60 px", "60 px and up"]
RATIO_BANDS = ["exactly aligned", "0.005 to 1 deg", "1 to 3 deg", "3 to 5 deg", "5 to 15 deg", "15 to 45 deg"]
RATIO_KEYS = ["band", "boxes", "short_ratio", "long_ratio", "area_ratio"]


def line(corners, cls=0):
    return f"{cls} " + " ".join(f"{v:.4f}" for v in np.asarray(corners).reshape(-1))


@pytest.fixture
def analysis_yaml(write_labels, tmp_path):
    gt, pred, hbb = [], [], []
    for i, angle in enumerate([0, 0, 3, 10, 20, 40, 2, 33]):
        cx, cy = 100 + 120 * i, 300
        corners = rotated_rect(cx, cy, 60, 30, angle)
        gt.append(line(corners, cls=i % 2))
        pred.append(line(rotated_rect(cx + 1.5, cy, 62, 29, angle + 1), cls=i % 2))
        low, high = corners.min(axis=0), corners.max(axis=0)
        hbb.append(f"{i % 2} {(low + high)[0] / 2} {(low + high)[1] / 2} {(high - low)[0]} {(high - low)[1]}")
    gt.append(rect(0, 0, 40, 20))  # touches the frame edge
    pred.append(rect(1, 0, 40, 20))
    hbb.append("0 20 10 40 20")
    root = write_labels({"gt/a.txt": "\n".join(gt) + "\n", "pred/a.txt": "\n".join(pred) + "\n",
                         "hbb/a.txt": "\n".join(hbb) + "\n", "classes.yaml": "0: Car\n1: Bus\n"})
    result = CliRunner().invoke(
        main,
        [
            str(root / "gt"),
            str(root / "pred"),
            "-hd",
            str(root / "hbb"),
            "-mp",
            str(root / "classes.yaml"),
            "-iw",
            "1200",
            "-ih",
            "600",
            "-o",
            str(tmp_path / "out"),
            "-nb",
        ],
    )
    assert result.exit_code == 0, result.stderr
    return yaml.safe_load((tmp_path / "out" / "analysis.yaml").read_text(encoding="utf-8"))


def test_every_reference_key_path_is_there(analysis_yaml):
    data = analysis_yaml
    assert [k for k in TOP_LEVEL if k in data] == TOP_LEVEL
    assert [k for k in GROUP_KEYS[1:] if k in data["overall"]] == GROUP_KEYS[1:]
    assert [g["group"] for g in data["orientation"]] == ORIENTATION_GROUPS
    assert [g["group"] for g in data["orientation_controlled"]] == ORIENTATION_GROUPS
    assert [g["group"] for g in data["orientation_partition"]] == PARTITION_GROUPS
    assert [g["group"] for g in data["orientation_partition_controlled"]] == PARTITION_GROUPS
    assert [g["group"] for g in data["size"]] == SIZE_GROUPS
    assert [g["group"] for g in data["klass"]] == ["Car", "Bus"]
    assert [g["group"] for g in data["edge"]] == ["touches an edge", "interior"]
    assert [b["band"] for b in data["side_ratios"]] == RATIO_BANDS
    for cut in ("orientation", "size", "klass", "edge"):
        for group in data[cut]:
            assert list(group) == (GROUP_KEYS if group["boxes"] else ["group", "boxes"])
    for band in data["side_ratios"]:
        assert list(band) == (RATIO_KEYS if band["boxes"] else ["band", "boxes"])
    assert data["boundary_classes"] is None and data["has_identity"] is True and data["has_edge"] is True


def test_reference_values_are_ours_under_the_reference_names(analysis_yaml):
    data = analysis_yaml
    overall = data["overall"]
    assert overall["boxes"] == data["boxes"] == 9
    assert overall["mean_iou"] == pytest.approx(overall["avg_iou"], abs=1e-15)
    assert overall["angle_p90"] == pytest.approx(overall["p90_angle_error"], abs=1e-12)
    assert overall["at_high"] == overall["share_at_least_90"] and overall["below_075"] == overall["share_below_75"]
    assert data["controlled_boxes"] == 8 and data["edge"][0]["boxes"] == 1
    assert sum(g["boxes"] for g in data["orientation_partition"]) == 9
    # our own structures sit beside them, renamed where the reference uses the name
    assert data["orientation_partition_cut"]["key"] == "orientation_partition"
    assert len(data["side_ratio_table"]["bands"]) == 6 and data["cuts"][0]["key"] == "orientation"
