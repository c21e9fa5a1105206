"""``hbb2obb``'s output options, as the reference tool's conversion spells them (issue 36).

Ported in our words from the reference's ``tests/test_cli.py``, ``tests/test_conversion_cli.py``
and ``tests/test_provenance.py`` (1.12.0), where they run through the command line or files.
"""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from PIL import Image, ImageDraw

from hbb2obb.cli.convert import main

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"
FOUR_BOXES = [(50, 50, 40, 30), (150, 50, 40, 30), (50, 150, 40, 30), (150, 150, 40, 30)]


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    from hbb2obb.synthetic.dataset import generate_dataset

    return generate_dataset(tmp_path_factory.mktemp("outputs"), n_frames=2, seed=5, width=640, height=400)


def make_frames(root: Path, boxes_per_frame, cars: int = 0, scores=None) -> Path:
    """200x200 grey frames, one HBB file each; the first ``cars`` boxes of a frame hold a bright
    car (converted), the others bare road (fallbacks). ``scores``: a 6th column per box."""
    images, labels = root / "images", root / "labels_hbb"
    images.mkdir(parents=True)
    labels.mkdir(parents=True)
    for index, boxes in enumerate(boxes_per_frame):
        frame = Image.new("RGB", (200, 200), (60, 60, 60))
        draw = ImageDraw.Draw(frame)
        for xc, yc, w, h in boxes[:cars]:
            draw.rectangle([xc - w / 2 + 4, yc - h / 2 + 6, xc + w / 2 - 4, yc + h / 2 - 6], fill=(240, 240, 240))
        frame.save(images / f"frame{index:02d}.png")
        lines = [f"0 {xc} {yc} {w} {h}" + (f" {scores[i]}" if scores and scores[i] is not None else "")
                 for i, (xc, yc, w, h) in enumerate(boxes)]
        (labels / f"frame{index:02d}.txt").write_text("".join(line + "\n" for line in lines))
    return images


def rows(path: Path) -> list[list[float]]:
    return [[float(v) for v in line.split()] for line in path.read_text().splitlines()]


# --- help ------------------------------------------------------------------------------------

def test_help_lists_every_console_script_with_one_line_each():
    section = re.search(r"\[project\.scripts\]\n(.*?)\n\[", PYPROJECT.read_text(), re.S).group(1)
    scripts = set(re.findall(r'^"?(hbb2obb[\w-]*)"?\s*=', section, re.M))
    result = run("--help")
    assert result.exit_code == 0
    listed = {line.split()[0] for line in result.output.splitlines() if re.match(r"^\s+hbb2obb[\w-]*\s{2,}\w", line)}
    assert listed == scripts
    assert "hbb2obb-eval --help" in result.output
    for flag in ("--normalize", "--save_polygon", "--save_provenance", "--hide_class_labels", "-fw", "-ff"):
        assert flag in result.output


# --- refusals, before anything is written --------------------------------------------------------

@pytest.mark.parametrize("args, words", [
    (["--precision", "6"], "--precision applies to normalized output"),
    (["-n", "-p", "0"], "--precision must be between 1 and 17, got 0"),
    (["-n", "-p", "18"], "--precision must be between 1 and 17, got 18"),
    (["-n", "-p", "-1"], "--precision must be between 1 and 17, got -1"),
    (["--fail_on_fallback_share", "5"], "--fail_on_fallback_share is a share of the boxes"),
    (["--fallback_warn_share", "-1"], "--fallback_warn_share is a share of the boxes"),
    (["-pd", "polygons"], "--polygon_dir shapes the polygons of --save_polygon"),
    (["--save_polygon", "-pe", "-0.5"], "--polygon_epsilon is a fraction"),
    (["--hide_masks"], "--show_masks/--hide_masks changes the --save_img pictures"),
    (["--show_labels"], "--show_class_labels/--hide_class_labels changes the --save_img pictures"),
    (["-cs", "detector"], "--confidence_source detector changes only the confidences"),
])
def test_an_option_that_cannot_be_used_is_refused_and_nothing_is_written(tmp_path, args, words):
    images = make_frames(tmp_path, [FOUR_BOXES], cars=4)
    result = run(images, "-nb", *args)
    assert result.exit_code == 2
    assert words in result.output and result.output.count("\n") == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["images", "labels_hbb"]


def test_a_record_the_command_did_not_write_is_refused_unless_overwrite(tmp_path):
    images = make_frames(tmp_path, [FOUR_BOXES], cars=4)
    (tmp_path / "PROVENANCE_obb.txt").write_text("written by somebody else\n")
    result = run(images, "-nb", "--save_provenance")
    assert result.exit_code == 2 and "PROVENANCE_obb.txt" in result.output
    assert not (tmp_path / "labels_obb").exists()
    assert (tmp_path / "PROVENANCE_obb.txt").read_text() == "written by somebody else\n"
    assert run(images, "-nb", "--save_provenance", "--overwrite").exit_code == 0
    assert (tmp_path / "PROVENANCE_obb.txt").read_text().startswith("hbb2obb conversion provenance")
    assert run(images, "-nb", "--save_provenance").exit_code == 0  # its own record is replaced


def test_foreign_polygon_files_are_refused(tmp_path):
    images = make_frames(tmp_path, [FOUR_BOXES], cars=4)
    (tmp_path / "labels_polygon").mkdir()
    (tmp_path / "labels_polygon" / "frame00.txt").write_text("0 1 2 3 4 5 6\n")
    result = run(images, "-nb", "--save_polygon")
    assert result.exit_code == 2 and "labels_polygon" in result.output and "--overwrite" in result.output
    assert not (tmp_path / "labels_obb").exists()
    assert (tmp_path / "labels_polygon" / "frame00.txt").read_text() == "0 1 2 3 4 5 6\n"


@pytest.mark.parametrize("args, words", [
    # two outputs named STEM.txt in one folder: the confidences replaced the OBB files, exit 0
    (["-od", "{o}", "-cd", "{o}"], "both the obb and the confidence file of frame frame00"),
    (["-od", "{o}", "--save_polygon", "-pd", "{o}"], "both the obb and the polygon file of frame frame00"),
    (["-od", "{o}", "-cd", "{c}", "--save_polygon", "-pd", "{c}"], "both the confidence and the polygon file"),
    # with --overwrite, the OBBs replaced the HBB prompts being read, and the pictures the images
    (["-od", "{hbb}", "--overwrite"], "would overwrite the HBB file of frame frame00"),
    (["-od", "{o}", "--save_img", "--viz_dir", "{images}", "--overwrite"], "would overwrite the image of frame"),
])
def test_outputs_that_land_on_one_file_or_on_an_input_are_refused(tmp_path, args, words):
    images = make_frames(tmp_path, [FOUR_BOXES], cars=4)
    (images / "frame00.png").rename(images / "frame00.jpg")  # the pictures are STEM.jpg
    folders = {"o": tmp_path / "o", "c": tmp_path / "c", "hbb": tmp_path / "labels_hbb", "images": images}
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    result = run(images, "-nb", *[a.format(**folders) for a in args])
    assert result.exit_code == 2 and words in result.output, result.output
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before
    assert not (tmp_path / "o").exists() and not (tmp_path / "c").exists()


# --- confidence -------------------------------------------------------------------------------

def test_the_tenth_column_and_the_side_car_carry_the_same_scores(dataset, tmp_path):
    plain = run(dataset.images_dir, "-nb", "--obb_dir", tmp_path / "plain")
    scored = run(dataset.images_dir, "-nb", "--obb_dir", tmp_path / "scored", "--save_confidence",
                 "--confidence_dir", tmp_path / "side")
    assert plain.exit_code == 0 and scored.exit_code == 0, scored.output
    for name in dataset.frame_names:
        with_column = rows(tmp_path / "scored" / f"{name}.txt")
        assert {len(r) for r in with_column} == {10}
        np.testing.assert_array_equal([r[:9] for r in with_column], rows(tmp_path / "plain" / f"{name}.txt"))
        side = [float(v) for v in (tmp_path / "side" / f"{name}.txt").read_text().split()]
        np.testing.assert_array_equal([r[9] for r in with_column], side)
        assert all(0 <= s <= 1 for s in side)


def test_the_detector_confidence_is_carried_through(tmp_path):
    scores = [0.91, 0.35, None, 0.5]
    images = make_frames(tmp_path, [FOUR_BOXES], cars=4, scores=scores)
    own = run(images, "-nb", "--obb_dir", tmp_path / "own", "-cd", tmp_path / "own_scores")
    detector = run(images, "-nb", "--obb_dir", tmp_path / "det", "--save_confidence", "-cs", "detector")
    combined = run(images, "-nb", "--obb_dir", tmp_path / "comb", "--save_confidence", "-cs", "combined")
    assert own.exit_code == detector.exit_code == combined.exit_code == 0, detector.output
    conversion = [float(v) for v in (tmp_path / "own_scores" / "frame00.txt").read_text().split()]
    reported = [r[9] for r in rows(tmp_path / "det" / "frame00.txt")]
    np.testing.assert_allclose(reported, [0.91, 0.35, conversion[2], 0.5], atol=5e-5)
    products = [s * c if s is not None else c for s, c in zip(scores, conversion)]
    np.testing.assert_allclose([r[9] for r in rows(tmp_path / "comb" / "frame00.txt")], products, atol=1e-4)
    assert "1 of 4 HBBs in" in detector.output and "no usable detector confidence" in detector.output
    # a run that keeps the detector's scores nowhere says so, once (own: the conversion's scores)
    unused = "carry a 6th column, a detector's confidence, that no output keeps"
    assert own.stderr.count(unused) == 1 and unused not in detector.stderr and unused not in combined.stderr
    plain = run(images, "-nb", "--obb_dir", tmp_path / "plain")
    assert plain.stderr.count(unused) == 1 and "--confidence_source detector" in plain.stderr
    assert {len(r) for r in rows(tmp_path / "plain" / "frame00.txt")} == {9}  # the scores really are not there


def test_prompts_without_scores_raise_no_word_about_them(dataset, tmp_path):
    result = run(dataset.images_dir, "-nb", "--obb_dir", tmp_path / "obb")
    assert result.exit_code == 0 and "6th column" not in result.stderr


# --- polygons ---------------------------------------------------------------------------------

def test_polygons_are_row_aligned_and_leave_the_obbs_alone(dataset, tmp_path):
    plain = run(dataset.images_dir, "-nb", "--obb_dir", tmp_path / "plain")
    result = run(dataset.images_dir, "-nb", "--obb_dir", tmp_path / "obb", "--save_polygon", "-pd", tmp_path / "poly")
    assert plain.exit_code == 0 and result.exit_code == 0, result.output
    for name in dataset.frame_names:
        assert (tmp_path / "obb" / f"{name}.txt").read_bytes() == (tmp_path / "plain" / f"{name}.txt").read_bytes()
        obb = rows(tmp_path / "obb" / f"{name}.txt")
        poly = rows(tmp_path / "poly" / f"{name}.txt")
        assert len(poly) == len(obb) and [p[0] for p in poly] == [o[0] for o in obb]
        assert all(len(p) % 2 == 1 and len(p) >= 7 for p in poly)
        assert any(len(p) > 9 for p in poly)  # segmented boxes keep their outline


def test_the_default_polygon_folder_and_a_fallback_line(tmp_path):
    images = make_frames(tmp_path, [FOUR_BOXES], cars=3)
    result = run(images, "-nb", "--save_polygon")
    assert result.exit_code == 0, result.output
    obb = (tmp_path / "labels_obb" / "frame00.txt").read_text().splitlines()
    poly = (tmp_path / "labels_polygon" / "frame00.txt").read_text().splitlines()
    assert poly[3] == obb[3] == "0 130.0 135.0 170.0 135.0 170.0 165.0 130.0 165.0"  # the HBB as read


# --- normalized coordinates -----------------------------------------------------------------------

def test_normalized_output_is_the_absolute_output_over_the_frame_size(dataset, tmp_path):
    absolute = run(dataset.images_dir, "-nb", "--obb_dir", tmp_path / "abs", "--save_polygon", "-pd", tmp_path / "pa")
    normal = run(dataset.images_dir, "-nb", "--obb_dir", tmp_path / "rel", "-n", "--save_polygon",
                 "-pd", tmp_path / "pr")
    assert absolute.exit_code == 0 and normal.exit_code == 0, normal.output
    scale = np.tile([640.0, 400.0], 4)
    for name in dataset.frame_names:
        pixels = np.array(rows(tmp_path / "abs" / f"{name}.txt"))
        relative = np.array(rows(tmp_path / "rel" / f"{name}.txt"))
        np.testing.assert_array_equal(pixels[:, 0], relative[:, 0])
        # the absolute file has one decimal; the normalized one ten, so they agree to 0.05 px
        np.testing.assert_allclose(relative[:, 1:] * scale, pixels[:, 1:], atol=0.05 + 1e-9)
        for p, r in zip(rows(tmp_path / "pa" / f"{name}.txt"), rows(tmp_path / "pr" / f"{name}.txt")):
            np.testing.assert_allclose(np.array(r[1:]) * np.tile([640.0, 400.0], len(r) // 2), p[1:], atol=0.05 + 1e-9)


def test_a_lossy_precision_is_warned_once_and_still_written(tmp_path):
    images = make_frames(tmp_path, [FOUR_BOXES] * 2, cars=4)
    result = run(images, "-nb", "-n", "-p", "2")
    assert result.exit_code == 0
    assert result.output.count("--precision 2 does not survive the round trip on a 200x200 frame") == 1
    assert "Use 5 or more" in result.output
    assert all(len(v.split(".")[-1]) <= 2 for v in (tmp_path / "labels_obb" / "frame00.txt").read_text().split())


# --- fallbacks --------------------------------------------------------------------------------

def test_a_frame_that_falls_back_entirely_is_named(tmp_path):
    images = make_frames(tmp_path, [FOUR_BOXES], cars=0)
    result = run(images, "-nb")
    assert result.exit_code == 0
    assert "4 of 4 boxes in frame00.png fell back to their HBB (100.0%)" in result.output
    assert "Fell back entirely: 1 frame(s), frame00.png" in result.output


def test_the_fallback_warning_respects_its_threshold(tmp_path):
    images = make_frames(tmp_path, [FOUR_BOXES], cars=3)  # one box of four falls back
    quiet = run(images, "-nb", "--fallback_warn_share", "0.5")
    assert quiet.exit_code == 0 and "boxes in frame00.png fell back" not in quiet.output
    loud = run(images, "-nb", "-fw", "0.1")
    assert "1 of 4 boxes in frame00.png fell back to their HBB (25.0%)" in loud.output
    assert "Fell back entirely" not in loud.output


def test_fail_on_fallback_share_exits_1_after_writing_everything(tmp_path):
    images = make_frames(tmp_path, [FOUR_BOXES], cars=0)
    result = run(images, "-nb", "--save_provenance", "--fail_on_fallback_share", "0.1")
    assert result.exit_code == 1
    assert "4 of 4 boxes (100.00%) fell back to their HBB, over the --fail_on_fallback_share of 10.00%" in result.output
    assert (tmp_path / "labels_obb" / "frame00.txt").read_text().strip()
    assert (tmp_path / "PROVENANCE_obb.txt").is_file()
    assert run(images, "-nb", "-ff", "1").exit_code == 0


# --- provenance -------------------------------------------------------------------------------

def test_the_record_lands_beside_the_labels_and_counts_the_fallbacks(tmp_path):
    images = make_frames(tmp_path, [FOUR_BOXES] * 2, cars=2)
    result = run(images, "-nb", "--save_provenance", "-fw", "0.9")
    assert result.exit_code == 0, result.output
    assert not list((tmp_path / "labels_obb").glob("PROVENANCE*"))
    text = (tmp_path / "PROVENANCE_obb.txt").read_text()
    assert "OBB boxes      : 8" in text
    assert "HBB fallbacks  : 4 (50.00%)" in text
    assert "--fallback_warn_share" not in text and "-fw" not in text  # reporting flags change no label
    for key in ("source sha256  :", "images sha256  :", "HBB sha256     :", "Coordinates              : absolute"):
        assert key in text


def test_the_recorded_command_reproduces_the_labels(tmp_path, monkeypatch):
    images = make_frames(tmp_path / "a", [FOUR_BOXES], cars=3, scores=[0.5, 0.6, 0.7, 0.8])
    monkeypatch.chdir(tmp_path / "a")
    first = run("images", "-nb", "--save_provenance", "-n", "-p", "7", "--save_confidence", "-cs", "combined",
                "--save_polygon", "-pe", "0.01", "-sf", "0.02", "0.05", "--tightness", "tight")
    assert first.exit_code == 0, first.output
    text = (tmp_path / "a" / "PROVENANCE_obb.txt").read_text()
    command = text.split("\nCommand\n")[1].splitlines()[1]
    args = shlex.split(command)
    assert args[0] == "hbb2obb"
    shutil.copytree(images, tmp_path / "b" / "images")
    shutil.copytree(tmp_path / "a" / "labels_hbb", tmp_path / "b" / "labels_hbb")
    monkeypatch.chdir(tmp_path / "b")
    again = run(*args[1:], "-nb")
    assert again.exit_code == 0, again.output
    for folder in ("labels_obb", "labels_polygon"):
        assert (tmp_path / "b" / folder / "frame00.txt").read_bytes() == \
            (tmp_path / "a" / folder / "frame00.txt").read_bytes()


def test_the_pictures_take_the_drawing_switches(tmp_path):
    images = make_frames(tmp_path, [FOUR_BOXES], cars=4)
    drawn = run(images, "-nb", "--save_img", "--viz_dir", tmp_path / "all", "--show_confidence")
    bare = run(images, "-nb", "--save_img", "--viz_dir", tmp_path / "none", "--hide_hbb", "--hide_masks",
               "--hide_segments", "--hide_obb", "--hide_class_labels", "--hide_confidence", "--overwrite")
    assert drawn.exit_code == 0 and bare.exit_code == 0, bare.output
    with Image.open(images / "frame00.png") as original:
        frame = np.asarray(original.convert("RGB"), float)
    with Image.open(tmp_path / "none" / "frame00.jpg") as picture:
        nothing = np.asarray(picture, float)
    with Image.open(tmp_path / "all" / "frame00.jpg") as picture:
        everything = np.asarray(picture, float)[:200]
    assert nothing.shape == frame.shape  # nothing drawn, so no colour key below either
    assert np.abs(nothing - frame).mean() < 2  # JPEG noise only
    assert np.abs(everything - frame).mean() > 5
