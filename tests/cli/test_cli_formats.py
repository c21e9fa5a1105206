"""``hbb2obb-convert``: the reference's own outputs on the samples, --verify, broken input."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from reference_tool import CONVERT_DRIVER as REFERENCE_DRIVER
from reference_tool import REFERENCE_PYTHON

from hbb2obb.cli.formats import PROGRAM, main
from hbb2obb.io.written import MANIFEST_NAME

from conftest import SHARED

CONVERT = SHARED / "reference" / "convert"
COMMANDS = {  # folder of ../shared/reference/convert: the command of its README (OUT: that folder)
    "songdo_obb_gt": "data/songdo-sample/labels_obb_gt --to coco dota labelme -mp data/songdo-sample/classes.yaml "
                     "-i data/songdo-sample/images -nb",
    "songdo_hbb": "data/songdo-sample/labels_hbb --to coco voc labelme -mp data/songdo-sample/classes.yaml "
                  "-i data/songdo-sample/images -nb",
    "dota_obb_gt": "data/dota-sample/labels_obb_gt --to coco dota labelme -mp data/dota-sample/classes.yaml "
                   "-i data/dota-sample/images -nb",
    "dota_from_dota": "data/dota-sample/labels_dota --from dota --to yolo -mp data/dota-sample/classes.yaml "
                      "-i data/dota-sample/images -nb",
    "songdo_obb_gt_normalized": "data/songdo-sample/labels_obb_gt --to yolo --normalize "
                                "-mp data/songdo-sample/classes.yaml -i data/songdo-sample/images -nb",
}


def _run(args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


@pytest.mark.parametrize("folder", sorted(COMMANDS))
def test_output_equals_the_reference_files_byte_for_byte(folder, tmp_path, monkeypatch):
    if not (CONVERT / folder).is_dir():
        pytest.skip("reference convert outputs not present")
    monkeypatch.chdir(SHARED)
    result = _run(COMMANDS[folder].split() + ["-o", tmp_path])
    assert result.exit_code == 0, result.output
    expected = sorted(p.name for p in (CONVERT / folder).iterdir())
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(expected + [MANIFEST_NAME])
    images = SHARED / COMMANDS[folder].split("-i ")[1].split()[0]
    for name in expected:
        reference = (CONVERT / folder / name).read_bytes()
        for image in images.iterdir():  # the reference names every image STEM.jpg; we name the real file
            reference = reference.replace(f'"{image.stem}.jpg"'.encode(), f'"{image.name}"'.encode())
        assert (tmp_path / name).read_bytes() == reference, name
    assert result.output.splitlines()[0].startswith("Read ")


def _dataset(tmp_path) -> Path:
    """A Songdo copy laid out as a release: labels_gt/ with YOLO and DOTA, a COCO file beside it."""
    sample = SHARED / "data" / "songdo-sample"
    if not (sample / "labels_obb_gt").is_dir():
        pytest.skip("real sample not present")
    root = tmp_path / "release"
    shutil.copytree(sample / "labels_obb_gt", root / "labels_gt")
    shutil.copy(sample / "classes.yaml", root / "classes.yaml")
    assert _run([root / "labels_gt", "--to", "dota", "coco", "--coco_name", "coco_annotations_gt.json",
                 "-o", root / "labels_gt", "-i", sample / "images", "-nb"]).exit_code == 0
    shutil.move(root / "labels_gt" / "coco_annotations_gt.json", root / "coco_annotations_gt.json")
    return root


def _reference_verify(root: Path):
    if REFERENCE_PYTHON is None:
        return None
    done = subprocess.run([str(REFERENCE_PYTHON), "-c", REFERENCE_DRIVER, str(root), "--verify", "-mp",
                           str(root / "classes.yaml"), "-i", str(SHARED / "data" / "songdo-sample" / "images")],
                          capture_output=True, text=True, timeout=120, cwd=root)  # not beside our package
    return done.returncode, done.stdout


def test_verify_passes_on_a_consistent_release_and_names_each_disagreement(tmp_path):
    root = _dataset(tmp_path)
    args = [root, "--verify", "-mp", root / "classes.yaml", "-i", SHARED / "data" / "songdo-sample" / "images"]
    good = _run(args)
    assert good.exit_code == 0
    assert good.output == ("labels_gt: 2 frames, 122 boxes, 3 formats (coco, dota, yolo)\n"
                           "OK: 122 boxes, every format encodes the same boxes\n")
    reference = _reference_verify(root)
    if reference is not None:
        assert reference == (0, good.output)
    dota = root / "labels_gt" / "00164.dota"
    lines = dota.read_text().splitlines()
    lines[2] = "9" + lines[2][1:]  # move the first box's first corner
    lines[3] = lines[3].replace(" Car ", " Bus ")
    dota.write_text("\n".join(lines) + "\n")
    bad = _run(args)
    assert bad.exit_code == 1
    assert "FAILED with 2 problems:\n  labels_gt/00164#0: dota corners disagree with yolo\n" \
           "  labels_gt/00164#1: dota class 1 != yolo class 0\n" in bad.output
    reference = _reference_verify(root)
    if reference is not None:
        assert reference == (1, bad.output)


def test_broken_source_is_one_line_at_file_and_line_exit_2(write_labels):
    root = write_labels({"gt/a.txt": "0 1 1 5 1 5 3 1 3\n0 1 1 5 1 5 x 1 3\n"})
    result = CliRunner().invoke(main, [str(root / "gt"), "--to", "dota", "-o", str(root / "out")])
    assert result.exit_code == 2
    assert f"{root / 'gt' / 'a.txt'}:2: field 7 is not a number: 'x'" in result.output
    assert "Traceback" not in result.output and not (root / "out").exists()


def test_usage_errors(write_labels):
    root = write_labels({"gt/a.txt": "0 1 1 5 1 5 3 1 3\n"})
    assert "--to is required" in CliRunner().invoke(main, [str(root / "gt")]).output
    tilted = write_labels({"gt/b.txt": "0 1 1 5 2 4 4 0 3\n"})
    result = CliRunner().invoke(main, [str(tilted / "gt"), "--to", "voc", "-iw", "10", "-ih", "10"])
    assert result.exit_code == 2 and "voc cannot carry oriented boxes" in result.output
    result = CliRunner().invoke(main, [str(root / "gt"), "--to", "coco", "-o", str(root / "o")])
    assert result.exit_code == 2 and "frame size unknown" in result.output


def test_console_script_runs(tmp_path):
    script = Path(sys.executable).parent / "hbb2obb-convert"
    if not script.is_file():
        pytest.skip("console script not installed")
    done = subprocess.run([str(script), "--help"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "--difficult_from" in done.stdout


def test_a_file_that_is_not_labels_is_left_out_with_a_warning(write_labels):
    root = write_labels({"gt/a.txt": "0 1 1 5 1 5 3 1 3\n", "gt/README.txt": "some notes\n"})
    result = CliRunner().invoke(main, [str(root / "gt"), "--to", "yolo", "-o", str(root / "out")])
    assert result.exit_code == 0
    assert f"{root / 'gt' / 'README.txt'}: not a label file of any format, left out" in result.stderr
    assert sorted(p.name for p in (root / "out").iterdir()) == [MANIFEST_NAME, "a.txt"]


def test_never_writes_over_the_labels_it_reads(write_labels):
    root = write_labels({"gt/a.txt": "0 1 1 5 1 5 3 1 3\n"})
    before = (root / "gt" / "a.txt").read_bytes()
    result = CliRunner().invoke(main, [str(root / "gt"), "--to", "dota", "yolo", "-k", "obb", "-nb"])
    assert result.exit_code == 2 and "would overwrite the labels being converted" in result.output
    assert (root / "gt" / "a.txt").read_bytes() == before
    assert not (root / "gt" / "a.dota").exists()  # nothing written when any format would overwrite
    assert CliRunner().invoke(main, [str(root / "gt"), "--to", "dota", "-k", "obb", "-nb"]).exit_code == 0
    assert (root / "gt" / "a.dota").read_text() == "imagesource:drone\ngsd:null\n1 1 5 1 5 3 1 3 class_0 0\n"


def test_difficult_flags_go_through_coco_and_come_back_with_difficult_from(tmp_path):
    sample = SHARED / "data" / "dota-sample"
    if not (sample / "labels_dota").is_dir():
        pytest.skip("real sample not present")
    common = ["-mp", sample / "classes.yaml", "-i", sample / "images", "-nb"]
    assert _run([sample / "labels_dota", "--from", "dota", "--to", "dota", "coco", "-o", tmp_path / "rel", *common]
                ).exit_code == 0
    flags = sum(line.endswith(" 1") for p in (tmp_path / "rel").glob("*.dota") for line in p.read_text().splitlines())
    assert flags == 3  # the sample's three difficult boxes, kept by the DOTA copy
    coco = tmp_path / "rel" / "coco_annotations_obb.json"
    plain = _run([coco, "--to", "dota", "-o", tmp_path / "plain", *common])
    assert plain.exit_code == 0
    carried = _run([coco, "--to", "dota", "--difficult_from", "dota", "-o", tmp_path / "back", *common])
    assert carried.exit_code == 0 and "Carried 3 difficult flag(s) from dota" in carried.output
    for path in (tmp_path / "rel").glob("*.dota"):
        assert (tmp_path / "back" / path.name).read_bytes() == path.read_bytes()
    assert not any(
        line.endswith(" 1") for p in (tmp_path / "plain").glob("*.dota") for line in p.read_text().splitlines()
    )


def test_verify_reports_box_counts_and_frames_as_the_reference_does(tmp_path):
    import json

    sample, written = SHARED / "data" / "dota-sample", CONVERT / "dota_obb_gt"
    if not written.is_dir() or not (sample / "labels_obb_gt").is_dir():
        pytest.skip("reference convert outputs not present")
    root = tmp_path / "release"
    shutil.copytree(sample / "labels_obb_gt", root / "labels_gt")
    for path in written.glob("P*"):
        shutil.copy(path, root / "labels_gt" / path.name)
    shutil.copy(written / "coco_annotations_obb.json", root / "coco_annotations_gt.json")
    shutil.copy(sample / "classes.yaml", root / "classes.yaml")
    labelme = root / "labels_gt" / "P0168.json"
    data = json.loads(labelme.read_text())
    data["shapes"].pop()
    labelme.write_text(json.dumps(data))
    coco = root / "coco_annotations_gt.json"
    data = json.loads(coco.read_text())
    data["annotations"][5]["category_id"] = 2
    data["images"][2]["file_name"] = "X.png"
    coco.write_text(json.dumps(data))
    result = _run([root, "--verify", "-mp", root / "classes.yaml", "-i", sample / "images"])
    assert result.exit_code == 1
    assert result.output == ("labels_gt: 3 frames, 329 boxes, 4 formats (coco, dota, labelme, yolo)\n\n"
                             "FAILED with 4 problems:\n"
                             "  labels_gt/P0168: labelme has 35 boxes, yolo has 36\n"
                             "  labels_gt/coco: missing frames ['P1888']\n"
                             "  labels_gt/coco: unexpected frames ['X']\n"
                             "  labels_gt/P0168#5: coco class 1 != yolo class 0\n")
    if REFERENCE_PYTHON is not None:
        done = subprocess.run([str(REFERENCE_PYTHON), "-c", REFERENCE_DRIVER, str(root), "--verify", "-mp",
                               str(root / "classes.yaml"), "-i", str(sample / "images")],
                              capture_output=True, text=True, timeout=120, cwd=root)
        assert (done.returncode, done.stdout) == (1, result.output)


def test_a_width_without_a_height_is_a_usage_error(write_labels):
    root = write_labels({"gt/a.txt": "0 0.1 0.1 0.5 0.1 0.5 0.3 0.1 0.3\n"})
    result = CliRunner().invoke(main, [str(root / "gt"), "--to", "coco", "-iw", "100", "-o", str(root / "o")])
    assert result.exit_code == 2 and "--img_width and --img_height must be given together" in result.output
    result = CliRunner().invoke(
        main, [str(root / "gt"), "--to", "coco", "-iw", "100", "-ih", "50", "-o", str(root / "o")]
    )
    assert result.exit_code == 0
    import json

    annotation = json.loads((root / "o" / "coco_annotations_hbb.json").read_text())["annotations"][0]
    assert annotation["bbox"] == [10, 5, 40, 10]  # normalized YOLO scaled by 100 x 50


def test_a_normalized_precision_too_low_to_read_back_is_warned_about_and_really_loses(write_labels):
    """The reference's warning (its ``sufficient_precision``): fewer decimals than the frame needs move boxes."""
    root = write_labels({"gt/a.txt": "0 1234.57 100.13 1500.01 120.99 1480.5 300.25 1210.33 280.77\n"})
    results = {}
    for decimals in (5, 6):
        out = root / f"p{decimals}"
        result = _run([root / "gt", "--to", "yolo", "-n", "-p", decimals, "-iw", 1920, "-ih", 1080, "-o", out, "-nb"])
        assert result.exit_code == 0, result.output
        results[decimals] = result.output
        back = _run([out, "--to", "yolo", "-iw", 1920, "-ih", 1080, "-o", root / f"back{decimals}", "-nb"])
        assert back.exit_code == 0, back.output
        results[f"same{decimals}"] = (root / f"back{decimals}" / "a.txt").read_text().split()[1:] == [
            f"{float(v):.2f}" for v in (root / "gt" / "a.txt").read_text().split()[1:]]
    assert "--precision 5 does not survive the round trip on a 1920x1080 frame" in results[5]
    assert "use 6 or more" in results[5] and "round trip" not in results[6]
    assert results["same6"] and not results["same5"]


def test_a_quad_written_as_a_turned_rectangle_is_said_to_change(write_labels):
    # roLabelImg and Label Studio store a box as centre, size and angle: a trapezoid (line 1)
    # comes out a 200 x 112 rectangle, which was written without a word
    root = write_labels({"gt/a.txt": "0 400 400 500 400 500 500 400 500\n0 100 100 300 100 250 200 150 200\n"})
    size = ["-iw", "1000", "-ih", "1000", "-nb"]
    result = CliRunner().invoke(main, [str(root / "gt"), "--to", "rolabelimg", "labelstudio", "cvat",
                                       "-o", str(root / "out"), *size])
    assert result.exit_code == 0
    warned = [line for line in result.stderr.splitlines() if "not rectangles" in line]
    assert len(warned) == 1 and warned[0].startswith(f"{PROGRAM}: warning: rolabelimg, labelstudio store ")
    assert "1 of 2 box(es) are not rectangles" in warned[0] and f"first: {root / 'gt' / 'a.txt'}:2" in warned[0]
    for targets in (["cvat", "labelme"], ["rolabelimg"]):  # cvat writes the quad as a polygon; a rectangle is kept
        source = "gt" if "cvat" in targets else "rect"
        write_labels({"rect/a.txt": "0 400 400 500 400 500 500 400 500\n"})
        result = CliRunner().invoke(main, [str(root / source), "--to", *targets, "-o", str(root / f"o{len(targets)}"),
                                           *size])
        assert result.exit_code == 0 and "not rectangles" not in result.stderr


def test_a_normalized_line_among_pixel_lines_is_warned_of(write_labels):
    # before: a.txt's first line became a 1 px box at the frame's corner, exit 0, without a word
    root = write_labels({"mixed/a.txt": "0 0.5 0.5 0.1 0.1\n0 50 50 10 10\n0 0.2 0.2 0.1 0.1\n",
                         "mixed/b.txt": "0 0.5 0.5 0.1 0.1\n",
                         "clean/a.txt": "0 50 50 10 10\n", "clean/b.txt": "0 0.5 0.5 0.1 0.1\n"})
    for folder, warned in (("mixed", "2 box(es) in files of pixel coordinates look normalized"), ("clean", None)):
        result = _run([root / folder, "--to", "coco", "-o", root / f"{folder}_out", "-iw", 100, "-ih", 100, "-nb"])
        assert result.exit_code == 0, result.output
        if warned:
            assert warned in result.stderr and f"first: {root / folder / 'a.txt'}:1)" in result.stderr
        else:
            assert "look normalized" not in result.stderr
