"""``hbb2obb IMG_SOURCE``: the conversion command, run through click's test runner."""

from __future__ import annotations

import re

import numpy as np
import pytest
from click.testing import CliRunner
from PIL import Image

from hbb2obb import __version__
from hbb2obb.cli.convert import main
from hbb2obb.scoring.metric_dict import evaluate_obb


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    """Two synthetic frames in the reference layout: images/, labels_hbb/, labels_obb_gt/."""
    from hbb2obb.synthetic.dataset import generate_dataset

    return generate_dataset(tmp_path_factory.mktemp("convert"), n_frames=2, seed=5, width=960, height=540)


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def summary_numbers(output: str) -> tuple[int, int, int]:
    boxes, frames = map(int, re.search(r"Converted (\d+) boxes in (\d+) frames", output).groups())
    fallbacks = int(re.search(r"Fallbacks \(HBB written as the OBB\): (\d+)", output).group(1))
    return boxes, frames, fallbacks


def test_converts_a_folder_with_the_default_layout(dataset):
    # the prompts' kind is known (detector-like boxes around rounded bodies): reading it from the
    # pixels is measured in docs/converter.md, not pinned here
    result = run(dataset.images_dir, "-nb", "-ti", "loose")
    assert result.exit_code == 0, result.output
    out_dir = dataset.root / "labels_obb"  # IMG_SOURCE/../labels_obb, HBBs from IMG_SOURCE/../labels_hbb
    assert summary_numbers(result.output) == (dataset.boxes, 2, 0)
    assert str(out_dir) in result.output
    for name, count in zip(dataset.frame_names, dataset.boxes_per_frame):
        assert len((out_dir / f"{name}.txt").read_text().splitlines()) == count
    metrics = evaluate_obb(dataset.gt_dir, out_dir)
    assert metrics["total_matches"] == dataset.boxes and metrics["avg_iou"] > 0.85


def box_areas(rows: np.ndarray) -> np.ndarray:
    """Areas of YOLO-OBB rows (class, then four corners) as parallelograms on corners 1, 2 and 4."""
    first, last = rows[:, 3:5] - rows[:, 1:3], rows[:, 7:9] - rows[:, 1:3]
    return np.abs(first[:, 0] * last[:, 1] - first[:, 1] * last[:, 0])


def test_flags_reach_the_converter(dataset, tmp_path):
    common = [dataset.images_dir, "--hbb_dir", dataset.hbb_dir, "-nb"]
    plain = run(*common, "--obb_dir", tmp_path / "a")
    scaled = run(*common, "--obb_dir", tmp_path / "b", "--scale_factors", "0.0", "0.2", "-okp", "-0.1",
                 "--imgsz", "48", "--corner_radius", "0")
    assert plain.exit_code == 0 and scaled.exit_code == 0, scaled.output
    name = dataset.frame_names[0]
    a = np.loadtxt(tmp_path / "a" / f"{name}.txt", ndmin=2)
    b = np.loadtxt(tmp_path / "b" / f"{name}.txt", ndmin=2)
    np.testing.assert_array_equal(a[:, 0], b[:, 0])
    assert not np.allclose(a, b)
    assert box_areas(b).mean() > box_areas(a).mean()  # the long sides were allowed to grow by 20 %


def test_single_image_and_pictures(dataset, tmp_path):
    image = next(dataset.images_dir.iterdir())
    result = run(image, "--hbb_dir", dataset.hbb_dir, "--obb_dir", tmp_path / "obb", "--save_img",
                 "--viz_dir", tmp_path / "viz", "-nb")
    assert result.exit_code == 0, result.output
    assert summary_numbers(result.output)[1] == 1
    # the labels, the record of written files and the record of frames (for --resume)
    assert sorted(p.name for p in (tmp_path / "obb").iterdir()) == [".hbb2obb-frames.jsonl", ".hbb2obb-written.json",
                                                                     f"{image.stem}.txt"]
    with Image.open(tmp_path / "viz" / f"{image.stem}.jpg") as picture, Image.open(image) as original:
        # the frame, then a footer strip with the colour key
        assert picture.width == original.width and picture.height > original.height
        frame_part = np.asarray(picture, float)[:original.height]
        difference = np.abs(frame_part - np.asarray(original.convert("RGB"), float)).mean(axis=2)
        assert np.asarray(picture)[original.height:].mean() > 200  # a light strip, dark key text on it
    assert (difference > 40).mean() > 0.001  # something was drawn
    assert f"Pictures: {tmp_path / 'viz'}" in result.output


def test_fallbacks_are_counted_and_warned(dataset, tmp_path):
    hbb = tmp_path / "hbb"
    hbb.mkdir()
    name = dataset.frame_names[0]
    lines = (dataset.hbb_dir / f"{name}.txt").read_text().splitlines()[:2]
    (hbb / f"{name}.txt").write_text("\n".join(lines + ["0 100 100 0 30", "0 x 1 2 3"]) + "\n")
    result = CliRunner().invoke(main, [str(dataset.images_dir / f"{name}.jpg"), "--hbb_dir", str(hbb),
                                       "--obb_dir", str(tmp_path / "obb"), "-nb"])
    assert result.exit_code == 0, result.output
    assert summary_numbers(result.stdout) == (3, 1, 1)
    assert f"{name}.txt:3: degenerate box; the HBB was written as the OBB" in result.stderr  # the reason
    assert "  1: degenerate box" in result.stdout
    assert f"{name}.txt:4: field 2 is not a number" in result.stderr


def test_frames_without_prompts_are_skipped_with_a_warning(dataset, tmp_path):
    hbb = tmp_path / "hbb"
    hbb.mkdir()
    name = dataset.frame_names[1]
    (hbb / f"{name}.txt").write_text((dataset.hbb_dir / f"{name}.txt").read_text())
    result = CliRunner().invoke(main, [str(dataset.images_dir), "--hbb_dir", str(hbb), "--obb_dir",
                                       str(tmp_path / "obb"), "-nb"])
    assert result.exit_code == 0
    assert summary_numbers(result.stdout)[:2] == (dataset.boxes_per_frame[1], 1)
    assert "no HBB file" in result.stderr and "frame skipped" in result.stderr


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--scale_factors", "0.1", "0.2", "0.3"], "one or two values"),
        (["--imgsz", "4"], "imgsz"),
        (["-okp", "2"], "opening_kernel_percentage"),
        (["--viz_dir", "somewhere"], "--viz_dir needs --save_img"),
        (["-mp", "classes.yaml"], "it needs --save_img"),
        (["--hbb_dir", "/nonexistent/hbb"], "HBB folder not found"),
        (["--margin", "wide"], "--margin takes 'auto' or a share"),
        (["--margin", "0.5"], "margin must be 'auto' or a share"),
        (["--margin", "-0.1"], "margin must be 'auto' or a share"),
    ],
)
def test_usage_and_input_errors_exit_2(dataset, tmp_path, extra, message):
    result = run(dataset.images_dir, "--obb_dir", tmp_path / "obb", "-nb", *extra)
    assert result.exit_code == 2
    assert message in result.output and "Traceback" not in result.output


def test_missing_source_exits_2(tmp_path):
    result = run(tmp_path / "nothing", "-nb")
    assert result.exit_code == 2 and "no such image or folder" in result.output


def test_a_folder_without_images_exits_2_and_writes_nothing(tmp_path):
    # Prompts but no image (a text file and a sub-folder do not count): today's run "converted 0
    # boxes" and exited 0, which a script cannot tell from success.
    images, hbb = tmp_path / "images", tmp_path / "labels_hbb"
    (images / "sub").mkdir(parents=True)
    (images / "notes.txt").write_text("not an image\n", encoding="utf-8")
    hbb.mkdir()
    (hbb / "a.txt").write_text("0 10 10 50 50\n", encoding="utf-8")
    result = run(images, "-nb")
    assert result.exit_code == 2
    assert f"{images}: no images found in this folder" in result.output
    assert len(result.output.strip().splitlines()) == 1 and "Traceback" not in result.output
    assert not (tmp_path / "labels_obb").exists()


def test_version():
    result = run("--version")
    assert result.exit_code == 0 and result.output.strip() == f"hbb2obb {__version__}"


def test_params_from_reads_the_axes_of_the_best_point_of_a_sweep(tmp_path):
    import yaml

    from hbb2obb.cli.convert import best_parameters

    results = tmp_path / "results.yaml"
    results.write_text(yaml.safe_dump({
        "best_parameters": {"imgsz": 64, "scale_factor": 0.02, "opening_kernel_percentage": 0.2,
                            "avg_iou": 0.9, "execution_time": 1.0},
        "all_results": [],
    }))
    assert best_parameters(results) == {"imgsz": 64, "scale_factor": 0.02, "opening_kernel_percentage": 0.2}
    (tmp_path / "bad.yaml").write_text("best_parameters: {avg_iou: 0.5}\n")
    result = CliRunner().invoke(main, [str(tmp_path), "--params_from", str(tmp_path / "bad.yaml")])
    assert result.exit_code == 2 and "holds none of" in result.stderr
    result = CliRunner().invoke(main, [str(tmp_path), "--params_from", str(tmp_path / "missing.yaml")])
    assert result.exit_code == 2 and "results file not found" in result.stderr


@pytest.mark.parametrize("content, message", [
    (None, "results file is a folder, not a file"),
    (b"\xff\xfe\x00garbage\n", "results file is not UTF-16 text"),
    (b"best_parameters: {imgsz: 64}\nbest_parameters: {imgsz: 32}\n",
     ":2: results file key 'best_parameters' is given twice"),
    (b"a: &a [x, x, x, x, x, x, x, x, x, x]\n" + b"".join(
        b"%c: &%c [" % (ord("b") + k, ord("b") + k) + b", ".join([b"*%c" % (ord("a") + k)] * 10) + b"]\n"
        for k in range(7)), "expands to more than 1,000,000 values"),
])
def test_params_from_a_file_that_is_not_a_results_file_exits_2_in_one_line(dataset, tmp_path, content, message):
    """Before, a folder or a binary file given to --params_from ended in a traceback."""
    given = tmp_path / "results.yaml"
    if content is None:
        given.mkdir()
    else:
        given.write_bytes(content)
    result = run(dataset.images_dir, "--obb_dir", tmp_path / "obb", "-nb", "--params_from", given)
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "obb").exists()


def test_confidence_dir_writes_one_score_per_obb_line(dataset, tmp_path):
    hbb = tmp_path / "hbb"
    hbb.mkdir()
    name = dataset.frame_names[0]
    lines = (dataset.hbb_dir / f"{name}.txt").read_text().splitlines()[:3]
    (hbb / f"{name}.txt").write_text("\n".join(lines + ["0 100 100 0 30", "0 x 1 2 3"]) + "\n")
    result = run(dataset.images_dir / f"{name}.jpg", "--hbb_dir", hbb, "--obb_dir", tmp_path / "obb",
                 "--confidence_dir", tmp_path / "conf", "-nb")
    assert result.exit_code == 0, result.output
    scores = (tmp_path / "conf" / f"{name}.txt").read_text().splitlines()
    obb_lines = (tmp_path / "obb" / f"{name}.txt").read_text().splitlines()
    assert len(scores) == len(obb_lines) == 4  # the broken line is in neither
    assert f"{name}.txt:5:" in result.stderr and "line skipped" in result.stderr
    assert "Skipped: 0 image(s) without an HBB file, 0 HBB file(s) without an image, 0 unreadable frame(s), " \
           "1 broken HBB line(s) (no OBB written for them)" in result.stdout
    assert all(re.fullmatch(r"\d\.\d{4}", s) for s in scores)
    values = [float(s) for s in scores]
    assert all(0 <= v <= 1 for v in values) and values[3] == 0.0  # the degenerate box fell back
    assert f"Confidences: {tmp_path / 'conf'}" in result.stdout


def test_bare_confidence_dir_is_the_reference_default(dataset, tmp_path):
    images = tmp_path / "set" / "images"
    images.mkdir(parents=True)
    name = dataset.frame_names[0]
    (images / f"{name}.jpg").write_bytes((dataset.images_dir / f"{name}.jpg").read_bytes())
    result = run(images, "--hbb_dir", dataset.hbb_dir, "--obb_dir", tmp_path / "obb", "-nb", "--confidence_dir")
    assert result.exit_code == 0, result.output
    written = (tmp_path / "set" / "labels_confidence" / f"{name}.txt").read_text().splitlines()
    assert len(written) == len((tmp_path / "obb" / f"{name}.txt").read_text().splitlines())


def test_tightness_flag_reaches_the_converter(dataset, tmp_path):
    common = [dataset.images_dir, "--hbb_dir", dataset.hbb_dir, "-nb"]
    tight = run(*common, "--obb_dir", tmp_path / "t", "--tightness", "tight")
    loose = run(*common, "--obb_dir", tmp_path / "l", "-ti", "loose")
    assert tight.exit_code == 0 and loose.exit_code == 0, tight.output + loose.output
    assert "HBB tightness: tight (2 frames)" in tight.stdout and "HBB tightness: loose (2 frames)" in loose.stdout
    name = dataset.frame_names[0]
    assert (tmp_path / "t" / f"{name}.txt").read_text() != (tmp_path / "l" / f"{name}.txt").read_text()
    bad = run(*common, "--obb_dir", tmp_path / "b", "--tightness", "snug")
    assert bad.exit_code == 2 and "snug" in bad.output


def test_margin_flag_shrinks_the_prompts_and_the_summary_reads_every_frame(dataset, tmp_path):
    common = [dataset.images_dir, "--hbb_dir", dataset.hbb_dir, "-nb"]
    plain = run(*common, "--obb_dir", tmp_path / "plain", "--margin", "0")
    shrunk = run(*common, "--obb_dir", tmp_path / "shrunk", "--margin", "0.1")
    assert plain.exit_code == 0 and shrunk.exit_code == 0, plain.output + shrunk.output
    first, second = (f"{name}.jpg" for name in dataset.frame_names)
    assert re.search(rf"per frame: {first} (tight|loose), {second} (tight|loose)\n", plain.stdout)
    assert f"per frame: {first} tight with a 10% margin, {second} tight with a 10% margin" in shrunk.stdout
    name = dataset.frame_names[0]
    plain_area = box_areas(np.loadtxt(tmp_path / "plain" / f"{name}.txt", ndmin=2)).sum()
    shrunk_area = box_areas(np.loadtxt(tmp_path / "shrunk" / f"{name}.txt", ndmin=2)).sum()
    assert shrunk_area < 0.85 * plain_area  # boxes 1.2 times the objects: about 1/1.44 of the area


def _copy_frames(dataset, root, names=None):
    """The dataset's images and prompts copied under ``root`` (the reference layout), to change freely."""
    import shutil

    for sub, source in (("images", dataset.images_dir), ("labels_hbb", dataset.hbb_dir)):
        (root / sub).mkdir(parents=True)
        for path in sorted(source.iterdir()):
            if names is None or path.stem in names:
                shutil.copy(path, root / sub / path.name)
    return root / "images", root / "labels_hbb"


def test_prompts_without_an_image_are_warned_and_counted(dataset, tmp_path):
    images, hbb = _copy_frames(dataset, tmp_path)
    lost = sorted(images.iterdir())[0]
    lost.unlink()
    (hbb / "stray.txt").write_text("0 10 10 4 4\n")
    result = run(images, "-nb")
    assert result.exit_code == 0, result.output
    assert f"{hbb / (lost.stem + '.txt')}: no image named {lost.stem}.* in {images}" in result.stderr
    assert f"{hbb / 'stray.txt'}: no image named stray.*" in result.stderr
    assert "Skipped: 0 image(s) without an HBB file, 2 HBB file(s) without an image, 0 unreadable" in result.stdout
    assert summary_numbers(result.stdout)[1] == len(dataset.frame_names) - 1


def test_a_16_bit_frame_converts_like_its_8_bit_twin(dataset, tmp_path):
    """Pillow turns a 16-bit greyscale PNG into pure white: every box would fall back."""
    name = dataset.frame_names[0]
    images, hbb = _copy_frames(dataset, tmp_path / "eight", [name])
    source = next(images.iterdir())
    with Image.open(source) as picture:
        grey = np.asarray(picture.convert("L")).copy()
    grey.flat[0] = 255  # the brightest value is full scale, so scaling the 16-bit frame back is exact
    source.unlink()
    Image.fromarray(grey).save(images / f"{name}.png")
    deep_images, _ = _copy_frames(dataset, tmp_path / "deep", [name])
    next(deep_images.iterdir()).unlink()
    Image.fromarray(grey.astype(np.uint16) * 257).save(deep_images / f"{name}.png")
    with Image.open(deep_images / f"{name}.png") as check:
        assert check.mode.startswith("I")
    eight, deep = run(images, "-nb"), run(deep_images, "-nb")
    assert eight.exit_code == deep.exit_code == 0, deep.output
    boxes, _, fallbacks = summary_numbers(deep.stdout)
    assert fallbacks < boxes / 2
    assert summary_numbers(deep.stdout) == summary_numbers(eight.stdout)
    assert ((tmp_path / "deep" / "labels_obb" / f"{name}.txt").read_text()
            == (tmp_path / "eight" / "labels_obb" / f"{name}.txt").read_text())


def test_an_unreadable_image_skips_its_frame_and_exits_1(dataset, tmp_path):
    images, hbb = _copy_frames(dataset, tmp_path)
    broken, good = sorted(images.iterdir())
    broken.write_bytes(b"not an image at all")
    result = run(images, "-nb")
    assert result.exit_code == 1
    assert f"{broken}: cannot read image" in result.stderr and "frame skipped" in result.stderr
    assert "1 unreadable frame(s)" in result.stdout and "Traceback" not in result.output
    assert f"error: 1 frame(s) could not be read and have no OBB file (first: {broken})" in result.stderr
    written = sorted(p.name for p in (tmp_path / "labels_obb").glob("*.txt"))
    assert written == [f"{good.stem}.txt"]


def test_files_the_converter_did_not_write_are_never_overwritten(dataset, tmp_path):
    images, hbb = _copy_frames(dataset, tmp_path)
    target = tmp_path / "labels_obb"
    target.mkdir()
    name = dataset.frame_names[0]
    truth = (dataset.root / "labels_obb_gt" / f"{name}.txt").read_text()
    (target / f"{name}.txt").write_text(truth)  # somebody's ground truth in the default output folder
    refused = run(images, "-nb")
    assert refused.exit_code == 2 and "Traceback" not in refused.output
    assert f"first: {target / (name + '.txt')}" in refused.stderr and "pass --overwrite" in refused.stderr
    assert (target / f"{name}.txt").read_text() == truth and len(list(target.iterdir())) == 1
    replaced = run(images, "-nb", "--overwrite")
    assert replaced.exit_code == 0 and (target / f"{name}.txt").read_text() != truth
    again = run(images, "-nb", "-sf", "0.05")  # its own earlier output it may replace
    assert again.exit_code == 0, again.output
    (target / f"{name}.txt").write_text("0 1 1 5 1 5 4 1 4\n")  # edited by hand since: not its own any more
    edited = run(images, "-nb")
    assert edited.exit_code == 2 and "did not write" in edited.stderr


def test_images_none_of_which_has_a_prompt_exit_2_and_write_nothing(dataset, tmp_path):
    """Every image skipped for want of its HBB file (a wrong --hbb_dir, say) is not a conversion of
    nothing: the run says so and exits 2, leaving no output folder behind."""
    empty = tmp_path / "hbb"
    empty.mkdir()
    (empty / "notes.md").write_text("not a prompt\n", encoding="utf-8")
    result = run(dataset.images_dir, "--hbb_dir", empty, "--obb_dir", tmp_path / "obb", "-nb")
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert f"{empty}: none of the {len(dataset.frame_names)} image(s) in {dataset.images_dir} has an HBB file" \
        in result.stderr
    assert not (tmp_path / "obb").exists()


def test_an_output_folder_that_is_a_file_exits_2_and_keeps_the_file(dataset, tmp_path):
    taken = tmp_path / "labels_obb"
    taken.write_text("somebody's notes\n", encoding="utf-8")
    result = run(dataset.images_dir, "--obb_dir", taken, "-nb")
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert f"{taken}: a file, not a folder" in result.stderr
    assert taken.read_text(encoding="utf-8") == "somebody's notes\n"


def test_two_images_of_one_name_are_refused_before_anything_is_written(dataset, tmp_path):
    """``a.jpg`` and ``a.png`` share ``a.txt`` and would both write ``labels_obb/a.txt``: before, both
    were converted with the same prompts, the second file replaced the first, and the summary
    counted both frames."""
    images, hbb = tmp_path / "images", tmp_path / "labels_hbb"
    images.mkdir()
    hbb.mkdir()
    first, second = dataset.frame_names[:2]
    (images / "a.jpg").write_bytes((dataset.images_dir / f"{first}.jpg").read_bytes())
    Image.open(dataset.images_dir / f"{second}.jpg").save(images / "a.png")
    (hbb / "a.txt").write_text((dataset.hbb_dir / f"{first}.txt").read_text())
    result = run(images, "-nb")
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert f"{images / 'a.jpg'} and {images / 'a.png'}: 2 images named 'a', and one HBB file a.txt" in result.stderr
    assert not (tmp_path / "labels_obb").exists()


def test_a_prompt_file_ending_in_upper_case_txt_is_read_and_two_of_one_name_are_refused(dataset, tmp_path):
    """``A.TXT`` (a Windows tool's spelling) is the frame's HBB file, as the evaluation reads label
    folders; before, its frame was skipped for want of ``A.txt``."""
    images, hbb = _copy_frames(dataset, tmp_path)
    name = dataset.frame_names[0]
    (hbb / f"{name}.txt").rename(hbb / f"{name}.TXT")
    result = run(images, "-nb")
    assert result.exit_code == 0, result.output
    assert summary_numbers(result.stdout)[:2] == (sum(dataset.boxes_per_frame), len(dataset.frame_names))
    assert "no HBB file" not in result.stderr
    (hbb / f"{name}.txt").write_text((hbb / f"{name}.TXT").read_text())
    twice = run(images, "-nb", "--obb_dir", tmp_path / "again")
    assert twice.exit_code == 2 and "Traceback" not in twice.output
    assert f"{hbb / (name + '.TXT')} and {hbb / (name + '.txt')}: two HBB files for frame {name!r}" in twice.stderr
