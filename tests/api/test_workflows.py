"""read_labels/write_labels, analyze, convert and sweep from Python give what the commands give."""

from __future__ import annotations

import numpy as np
import pytest
import yaml
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


def _written_analysis(analysis, label_map, boundary_classes=()):
    """``analysis.yaml`` as the command lays it out, from what the API returned."""
    from hbb2obb.analysis.reference_layout import analysis_file, reference_keys

    reference = reference_keys(analysis.evaluation.result.table, analysis.properties, analysis.identity, label_map,
                               boundary_classes)
    return yaml.safe_load(yaml.safe_dump(analysis_file(analysis.data, reference), sort_keys=False))


def test_songdo_analysis_of_the_api_is_the_commands(sample_dir, tmp_path):
    """The shared sample: analysis.yaml and analysis.md of ``hbb2obb-analyze -o`` are the API's
    data, from prediction files and from predictions in memory."""
    from hbb2obb.analysis.report import render_markdown
    from hbb2obb.cli.analyze import main
    from hbb2obb.io import load_label_map

    gt_dir, pred_dir, names = sample_dir / "labels_obb_gt", sample_dir / "labels_obb_sam_b", sample_dir / "classes.yaml"
    hbb, images = sample_dir / "labels_hbb", sample_dir / "images"
    out = tmp_path / "out"
    result = CliRunner().invoke(main, [str(a) for a in (gt_dir, pred_dir, "-mp", names, "-hd", hbb, "-i", images,
                                                        "-nb", "--worst", 5, "-o", out)])
    assert result.exit_code == 0, result.output
    written = yaml.safe_load((out / "analysis.yaml").read_text())
    label_map = load_label_map(names)
    from_files = analyze(gt_dir, pred_dir, label_map=names, hbb=hbb, image_sizes=images, worst=5)
    in_memory = analyze(gt_dir, read_labels(pred_dir, image_sizes=images, label_map=names, strict=False),
                        label_map=names, hbb=hbb, image_sizes=images, worst=5)
    assert written["identity"]["rows"] and from_files.identity is not None and from_files.hbb == hbb
    for found in (from_files, in_memory):
        assert _written_analysis(found, label_map) == written
        assert render_markdown(found.data, None) == (out / "analysis.md").read_text()
        assert found.warnings == []


def test_the_command_analyzes_through_the_api(tmp_path, monkeypatch):
    """hbb2obb-analyze scores and analyzes with the API's functions: a spy on the API's scoring
    step sees both prediction sets, and what it raises is what the command reports."""
    import hbb2obb.api.workflows as workflows
    from hbb2obb.cli.analyze import main

    gt_dir, pred_dir = label_set(tmp_path)
    seen = []
    real = workflows.score_for_analysis

    def spy(gt, pred, settings, **options):
        seen.append((pred, options["what"]))
        return real(gt, pred, settings, **options)

    monkeypatch.setattr(workflows, "score_for_analysis", spy)
    args = [str(gt_dir), str(pred_dir), "-nb", "--baseline", str(gt_dir)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert seen == [(pred_dir, "Evaluating"), (gt_dir, "Evaluating baseline")]

    def refuse(*args, **options):
        raise InputError("scored by the API")

    monkeypatch.setattr(workflows, "score_for_analysis", refuse)
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2 and "scored by the API" in result.stderr


def test_analysis_prompts_asked_for_or_found_beside_the_ground_truth(tmp_path):
    """``hbb="auto"`` is the command's default (labels_hbb beside the ground truth; unusable
    prompts found so are a warning); prompts asked for must be usable."""
    gt_dir, pred_dir = label_set(tmp_path)
    hbb = tmp_path / "labels_hbb"
    hbb.mkdir()
    (hbb / "a.txt").write_text("".join(f"{k % 2} {30 * k + 6} 8 12 6\n" for k in range(4)))
    found = analyze(gt_dir, pred_dir, hbb="auto")
    assert found.hbb == hbb.resolve() and found.data["identity"]["rows"][0]["boxes"] == 4
    assert analyze(gt_dir, pred_dir).identity is None  # not asked for: none
    (hbb / "a.txt").write_text("0 0.5 0.5 0.1 0.1\n")  # normalized, while the ground truth is in pixels
    skipped = analyze(gt_dir, pred_dir, hbb="auto")
    assert skipped.identity is None and skipped.hbb is None
    assert [w.kind for w in skipped.warnings] == ["prompts"] and "identity baseline skipped" in skipped.warnings[0][1]
    with pytest.raises(InputError, match="normalized while the ground truth is in pixels"):
        analyze(gt_dir, pred_dir, hbb=hbb)
    with pytest.raises(InputError, match="nope: HBB prompt folder not found"):
        analyze(gt_dir, pred_dir, hbb=tmp_path / "nope")


def test_analysis_of_a_baseline_that_scored_nothing_names_it(tmp_path):
    from hbb2obb.api.evaluation import NothingScored

    gt_dir, pred_dir = label_set(tmp_path)
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "a.txt").write_text("0 1 2\n")
    with pytest.raises(NothingScored, match=r"^baseline: .*broken: every prediction line was skipped") as caught:
        analyze(gt_dir, pred_dir, baseline=broken)
    assert caught.value.warnings[-1].kind == "broken prediction file"
    assert caught.value.warnings[-1].message.startswith("baseline: ")  # said as the baseline's, as in a full run
    with pytest.raises(UsageError, match="bootstrap must be at least 100"):
        analyze(gt_dir, pred_dir, baseline=pred_dir, bootstrap=10)
    compared = analyze(gt_dir, pred_dir, baseline=dict(read_labels(gt_dir)), bootstrap=100)
    assert (compared.data["comparison"]["a"], compared.data["comparison"]["b"]) == (str(pred_dir), "baseline")


def test_sweep_of_the_api_is_the_commands(tmp_path):
    """api.sweep measures what hbb2obb-optimize measures with its defaults (the same plan, the
    same settings: a frame without a converted file scored empty) and writes run_config.yaml."""
    from hbb2obb.cli.optimize import main
    from hbb2obb.synthetic.dataset import generate_dataset

    data = generate_dataset(tmp_path / "data", n_frames=3, boxes_per_frame=(6, 9), images=False, seed=3).root
    gt_dir, hbb = data / "labels_obb_gt", data / "labels_hbb"
    result = CliRunner().invoke(main, [str(data / "images"), str(gt_dir), "--converter", "identity", "-sf", "0",
                                       "0.05", "-o", str(tmp_path / "cli"), "-nb", "--no_plot"])
    assert result.exit_code == 0, result.output
    outcome = sweep(data / "images", gt_dir, hbb, tmp_path / "api", {"scale_factor": [0, 0.05]}, converter="identity")

    def timeless(records):
        return [{k: v for k, v in record.items() if k != "execution_time"} for record in records]

    cli = yaml.safe_load((tmp_path / "cli" / "identity" / "results.yaml").read_text())
    api = yaml.safe_load((tmp_path / "api" / "identity" / "results.yaml").read_text())
    assert timeless(api["all_results"]) == timeless(cli["all_results"]) == timeless(outcome.records)
    assert len(outcome.records) == 2 and outcome.measured == 2
    config = yaml.safe_load((tmp_path / "api" / "identity" / "run_config.yaml").read_text())
    assert config["missing_pred"] == "empty" and config["command_line"] == "hbb2obb.sweep() (Python API)"


def test_two_sweeps_of_one_folder_the_second_is_refused_naming_the_lock(tmp_path, monkeypatch):
    """Two api.sweep calls on one run folder at once: the second raises InputError naming the
    lock and writes nothing; the first finishes. A PROVENANCE.txt no sweep wrote is refused."""
    import threading

    import hbb2obb.sweeps.runner as runner

    gt_dir, _ = label_set(tmp_path)
    hbb = tmp_path / "hbb"
    hbb.mkdir()
    (hbb / "a.txt").write_text("0 0.5 0.5 0.1 0.1\n")
    inside, release = threading.Event(), threading.Event()
    real = runner.run_grid_point

    def held_point(*args):  # the first sweep waits inside its lock until the second has tried
        inside.set()
        assert release.wait(30)
        return real(*args)

    monkeypatch.setattr(runner, "run_grid_point", held_point)
    first: dict = {}

    def first_sweep():
        first["outcome"] = sweep(None, gt_dir, hbb, tmp_path / "out", {}, converter="identity", image_size=(200, 100))

    thread = threading.Thread(target=first_sweep)
    thread.start()
    try:
        assert inside.wait(30)
        with pytest.raises(InputError, match=r"out/identity is in use by another sweep .*\.sweep\.lock"):
            sweep(None, gt_dir, hbb, tmp_path / "out", {}, converter="identity", image_size=(200, 100), resume=True)
    finally:
        release.set()
        thread.join(30)
    assert first["outcome"].measured == len(first["outcome"].records) == 12  # the default grid
    assert not (tmp_path / "out" / "identity" / ".sweep.lock").exists()
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "PROVENANCE.txt").write_text("my notes\n")
    with pytest.raises(UsageError, match="not a record hbb2obb-optimize wrote"):
        sweep(None, gt_dir, hbb, tmp_path / "mine", {}, converter="identity", image_size=(200, 100))
    assert (tmp_path / "mine" / "PROVENANCE.txt").read_text() == "my notes\n"
    assert not (tmp_path / "mine" / "identity").exists()


def test_convert_of_the_api_is_the_commands(tmp_path):
    """hbb2obb and api.convert build the converter's settings with one function (image_params)
    and convert with one (convert_boxes): the same OBBs for the same non-default settings. A
    parameter name the converter does not have is refused, not left at its default."""
    from hbb2obb.cli.convert import main
    from hbb2obb.synthetic.dataset import generate_dataset

    data = generate_dataset(tmp_path / "data", n_frames=1, boxes_per_frame=(5, 6), width=320, height=240,
                            seed=5).root
    settings = {"scale_factor": [0.02, 0.04], "opening_kernel_percentage": 0.05, "imgsz": 64,
                "corner_radius": 0.3, "tightness": "loose", "margin": 0.1}
    result = CliRunner().invoke(main, [str(data / "images"), "--hbb_dir", str(data / "labels_hbb"), "--obb_dir",
                                       str(tmp_path / "obb"), "-sf", "0.02", "0.04", "-okp", "0.05", "--imgsz", "64",
                                       "--corner_radius", "0.3", "-ti", "loose", "--margin", "0.1", "-nb"])
    assert result.exit_code == 0, result.output
    (image,) = sorted((data / "images").iterdir())
    prompts = read_labels(data / "labels_hbb", image_sizes=data / "images")[image.stem]
    written = read_labels(tmp_path / "obb")[image.stem]
    converted = convert(image, prompts, settings)
    assert len(written) == len(prompts) >= 5
    np.testing.assert_allclose(written.corners, np.round(converted.corners, 1), atol=0.051)  # the file: 1 decimal
    default = convert(image, prompts)
    assert not np.allclose(default.corners, converted.corners)  # the settings did change the boxes
    with pytest.raises(UsageError, match="converter 'image' has no parameter 'scale_factors'"):
        convert(image, prompts, {"scale_factors": 0.05})
