"""read_labels/write_labels, analyze, convert and sweep from Python give what the commands give."""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner
from PIL import Image, ImageDraw

from hbb2obb import Boxes, InputError, UsageError, analyze, convert, read_labels, sweep, write_labels

from conftest import rect


def label_set(root):
    for side, shift in (("gt", 0), ("pred", 2)):
        (root / side).mkdir()
        (root / side / "a.txt").write_text("".join(rect(30 * k + shift, 5, 12, 6, cls=k % 2) + "\n" for k in range(4)))
    return root / "gt", root / "pred"


def test_labels_round_trip_through_another_format(tmp_path):
    gt_dir, _ = label_set(tmp_path)
    frames = read_labels(gt_dir)
    written = write_labels(frames, tmp_path / "dota", "dota", label_map={0: "car", 1: "bus"})
    assert [p.stem for p in written] == ["a"]
    back = read_labels(tmp_path / "dota", "dota", label_map={0: "car", 1: "bus"})
    np.testing.assert_allclose(back["a"].corners, frames["a"].corners)
    assert back["a"].class_id.tolist() == [0, 1, 0, 1]
    with pytest.raises(InputError, match="overwrite the labels"):
        write_labels(frames, gt_dir, "yolo")  # the files the frames came from
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "a.txt").write_text("kept\n")
    with pytest.raises(UsageError, match="overwrite=True"):
        write_labels(frames, tmp_path / "mine", "yolo")
    assert (tmp_path / "mine" / "a.txt").read_text() == "kept\n"
    with pytest.raises(InputError, match=r"broken/a.txt:2: "):
        (tmp_path / "broken").mkdir()
        (tmp_path / "broken" / "a.txt").write_text(rect(0, 0, 4, 4) + "\n0 1 2 x 4 5 6 7 8\n")
        read_labels(tmp_path / "broken")
    assert read_labels(tmp_path / "broken", strict=False).problems[0].line == 2


def test_analyze_gives_the_commands_cuts(tmp_path):
    from hbb2obb.analysis.report import render_markdown
    from hbb2obb.cli.analyze import main

    gt_dir, pred_dir = label_set(tmp_path)
    result = CliRunner().invoke(main, [str(gt_dir), str(pred_dir), "-nb", "-o", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    found = analyze(gt_dir, pred_dir)
    assert found.evaluation.metrics["total_matches"] == 4
    assert render_markdown(found.data, None) == (tmp_path / "out" / "analysis.md").read_text()
    assert found.data["overall"]["avg_iou"] == pytest.approx(10 / 14)  # 12 x 6 boxes moved by 2 px: 60 / 84


def test_convert_on_pixels_and_boxes():
    frame = Image.new("RGB", (120, 80), (90, 90, 90))
    ImageDraw.Draw(frame).polygon([(30, 50), (60, 20), (75, 35), (45, 65)], fill=(230, 230, 230))
    from_rows = convert(np.asarray(frame), [[30, 20, 75, 65]])
    hbb = Boxes([[[30, 20], [75, 20], [75, 65], [30, 65]]], class_id=[0])
    from_boxes = convert(frame, hbb, {"tightness": "loose"})
    assert not from_rows.fallback[0] and from_rows.corners.shape == (1, 4, 2)
    np.testing.assert_allclose(from_boxes.corners, convert(frame, [[30, 20, 75, 65]], {"tightness": "loose"}).corners)
    with pytest.raises(UsageError):
        convert(frame, [[30, 20, 75]])
    with pytest.raises(UsageError):
        convert(frame, [[30, 20, 75, 65]], {"imgsz": -1})


def test_sweep_of_the_identity_converter_refuses_to_replace_results(tmp_path):
    gt_dir, _ = label_set(tmp_path)
    hbb = tmp_path / "hbb"
    hbb.mkdir()
    (hbb / "a.txt").write_text("0 0.5 0.5 0.1 0.1\n")
    outcome = sweep(None, gt_dir, hbb, tmp_path / "sweep", {}, converter="identity", image_size=(200, 100))
    assert outcome.best is not None and outcome.measured == len(outcome.records) >= 1
    assert (tmp_path / "sweep" / "identity" / "results.yaml").is_file()
    with pytest.raises(UsageError, match="resume=True"):
        sweep(None, gt_dir, hbb, tmp_path / "sweep", {}, converter="identity", image_size=(200, 100))
    again = sweep(None, gt_dir, hbb, tmp_path / "sweep", {}, converter="identity", image_size=(200, 100), resume=True)
    assert again.measured == 0 and again.reused == len(outcome.records)
