"""hbb2obb-analyze as a user runs it: the sample against the reference, the paired comparison,
files written, worst pairs, bad input."""

import re

import numpy as np
import pytest
import yaml
from click.testing import CliRunner
from PIL import Image

from hbb2obb.cli.analyze import main

from conftest import rect, shifted_pair

NUMBER = re.compile(r"[+-]?\d+(?:\.\d+)?")


def run(*args):
    result = CliRunner().invoke(main, [str(a) for a in args])
    return result.exit_code, result.stdout, result.stderr


def numbered_rows(text):
    """``{(section, wording with numbers blanked): [[numbers], ...]}`` of every line holding numbers.

    Rows of a section that read alike (``off-axis # to # deg``) are kept in order under one key.
    """
    section, rows = "", {}
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("#"):
            section = line.strip("# ").lower()
            continue
        numbers = NUMBER.findall(line)
        if numbers:
            rows.setdefault((section, " ".join(NUMBER.sub("#", line).split())), []).append(numbers)
    return rows


# --------------------------------------------------------------------------- the real sample


def test_sample_matches_the_reference_table_by_table(sample_dir, reference_dir):
    code, out, err = run(sample_dir / "labels_obb_gt", sample_dir / "labels_obb_sam_b",
                         "-mp", sample_dir / "classes.yaml", "-hd", sample_dir / "labels_hbb",
                         "-i", sample_dir / "images", "-nb")
    assert code == 0, err
    ours = numbered_rows(out)
    reference = numbered_rows((reference_dir / "analyze_sam_b.txt").read_text(encoding="utf-8"))
    assert sum(len(rows) for rows in reference.values()) > 40  # the parser found the tables
    for key, their_rows in reference.items():
        assert key in ours, f"missing in ours: {key}"
        assert len(ours[key]) == len(their_rows), key
        for mine, theirs in zip(ours[key], their_rows):
            assert len(mine) == len(theirs), key
            for a, b in zip(mine, theirs):
                places = len(b.split(".")[1]) if "." in b else 0
                assert abs(float(a) - float(b)) <= 1.0001 * 10 ** -places, (key, mine, theirs)
    sections = {section for section, _ in reference}
    assert {"by class", "against doing nothing", "converted-to-reference side ratios",
            "by ground-truth orientation, interior and not difficult (115 boxes)"} <= sections


def test_sample_finds_its_prompts_beside_the_ground_truth(sample_dir):
    code, out, _ = run(sample_dir / "labels_obb_gt", sample_dir / "labels_obb_sam_b", "-nb")
    assert code == 0
    row = re.search(r"^\s+all\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+([+-][\d.]+)", out, re.M)
    assert row.groups() == ("122", "0.7104", "0.8885", "+0.1781")
    assert "frame size unknown: edge not checked" in out and "### By frame edge" not in out


# --------------------------------------------------------------------------- --baseline


def test_baseline_reports_the_constructed_paired_difference(tmp_path):
    gt, a_dir, b_dir, iou_a, iou_b, shifted = shifted_pair(tmp_path)
    expected = iou_a - iou_b
    code, out, err = run(gt, a_dir, "--baseline", b_dir, "-o", tmp_path / "out", "--seed", 7,
                         "--bootstrap", 400, "-nb")
    assert code == 0, err
    sentence = re.search(r"^Mean IoU over (\d+) boxes both matched: .* difference ([+-][\d.]+) "
                         r"\(paired SE ([\d.]+), 95% CI ([+-][\d.]+) to ([+-][\d.]+)\): (.*)\. "
                         r"Wins/losses/ties per box: (\d+)/(\d+)/(\d+)\.$", out, re.M)
    assert sentence, out
    assert int(sentence.group(1)) == expected.size
    assert sentence.group(2) == f"{expected.mean():+.4f}"
    assert sentence.group(3) == f"{expected.std(ddof=1) / np.sqrt(expected.size):.4f}"
    assert sentence.group(6) == "A is better"
    assert int(sentence.group(9)) == int((~shifted).sum())
    data = yaml.safe_load((tmp_path / "out" / "analysis.yaml").read_text(encoding="utf-8"))
    overall = data["comparison"]["overall"]
    assert overall["iou_diff"] == pytest.approx(expected.mean(), abs=1e-12)
    assert overall["ties"] == int((~shifted).sum())
    assert f"{overall['iou_ci'][0]:+.4f} to {overall['iou_ci'][1]:+.4f}" == sentence.group(4) + " to " + sentence.group(
        5
    )
    # Reproducible: the same seed prints the same report.
    report, wrote = out.rsplit("\nWrote ", 1)  # -o adds the reference tool's closing line
    assert wrote == f"analysis.md, analysis.yaml and analysis.png to {tmp_path / 'out'}\n"
    assert run(gt, a_dir, "--baseline", b_dir, "--seed", 7, "--bootstrap", 400, "-nb")[1] == report


def test_baseline_against_itself_is_within_the_noise(tmp_path):
    gt, a_dir, _, iou_a, _, _ = shifted_pair(tmp_path)
    code, out, _ = run(gt, a_dir, "--baseline", a_dir, "-nb", "--bootstrap", 200)
    assert code == 0
    assert "difference +0.0000 (paired SE 0.0000, 95% CI +0.0000 to +0.0000): within the noise" in out
    assert f"Wins/losses/ties per box: 0/0/{iou_a.size}." in out


# --------------------------------------------------------------------------- files written


def test_out_dir_writes_markdown_yaml_and_png(tmp_path):
    gt, a_dir, _, iou_a, _, _ = shifted_pair(tmp_path)
    hbb = tmp_path / "hbb"
    hbb.mkdir()
    for path in sorted(gt.glob("*.txt")):
        corners = np.array([[float(v) for v in line.split()[1:]] for line in path.read_text().splitlines()])
        corners = corners.reshape(-1, 4, 2)
        low, high = corners.min(axis=1), corners.max(axis=1)
        centre, size = ((low + high) / 2).tolist(), (high - low).tolist()
        (hbb / path.name).write_text("".join(f"0 {c[0]!r} {c[1]!r} {s[0]!r} {s[1]!r}\n" for c, s in zip(centre, size)))
    out_dir = tmp_path / "nested" / "out"
    code, out, err = run(gt, a_dir, "-hd", hbb, "-iw", 2000, "-ih", 1000, "-o", out_dir, "-nb")
    assert code == 0 and err == "", err
    data = yaml.safe_load((out_dir / "analysis.yaml").read_text(encoding="utf-8"))
    assert data["overall"]["boxes"] == iou_a.size
    assert data["overall"]["avg_iou"] == pytest.approx(iou_a.mean(), abs=1e-12)
    assert [cut["key"] for cut in data["cuts"]] == ["orientation", "orientation_controlled", "short_side", "edge",
                                                   "class"]
    assert data["identity"]["rows"][0]["boxes"] == iou_a.size
    assert len(data["side_ratio_table"]["bands"]) == 6 and len(data["side_ratios"]) == 6  # ours, the reference's
    markdown = (out_dir / "analysis.md").read_text(encoding="utf-8")
    assert "### Against doing nothing" in markdown
    assert "| | Boxes | IoU (mean) | IoU (std) | IoU (SEM) |" in markdown.replace("|  |", "| |")
    assert f"{data['overall']['avg_iou']:.5f}" in out
    with Image.open(out_dir / "analysis.png") as image:
        assert image.format == "PNG"
        assert image.size[0] > 1500 and image.size[1] > 500


# --------------------------------------------------------------------------- worst pairs


def test_worst_lists_the_known_worst_boxes_and_the_unmatched(write_labels):
    gt = [rect(100 * k, 0, 40, 20) for k in range(5)]
    shifts = [1, 9, 3, 40, 5]  # box 4 (line 4) gets no match; line 2 is the worst matched pair
    pred = [rect(100 * k + s, 0, 40, 20) for k, s in enumerate(shifts)]
    root = write_labels({"gt/f.txt": "\n".join(gt) + "\n", "pred/f.txt": "\n".join(pred) + "\n",
                         "classes.yaml": "0: Car\n"})
    code, out, _ = run(root / "gt", root / "pred", "--worst", 2, "-mp", root / "classes.yaml", "-nb")
    assert code == 0
    block = out.split("### Lowest IoU (2 matched pairs)")[1].split("###")[0]
    rows = [line.split() for line in block.strip().splitlines()[1:]]
    assert [(r[0], r[1], r[2]) for r in rows] == [("f", "2", "Car"), ("f", "5", "Car")]
    assert rows[0][3] == f"{31 * 20 / (49 * 20):.4f}"
    unmatched = out.split("### Unmatched ground-truth boxes (1)")[1].split()
    assert unmatched[unmatched.index("f") + 1] == "4"
    assert "Unmatched: 1 of 5 ground-truth boxes" in out


def _worst_case(write_labels):
    """Five boxes, one prediction far off, in the reference layout (no images folder yet)."""
    gt = [rect(100 * k, 0, 40, 20) for k in range(5)]
    pred = [rect(100 * k + s, 0, 40, 20) for k, s in enumerate([1, 9, 3, 40, 5])]
    return write_labels({"set/gt/f.txt": "\n".join(gt) + "\n", "set/pred/f.txt": "\n".join(pred) + "\n"}) / "set"


def test_worst_pictures_take_the_images_beside_the_ground_truth(write_labels, tmp_path):
    # --worst N -o X without -i used to draw nothing and say nothing; now it takes GT_DIR/../images
    # as --overlay does, and the tiles have pixels (no "without pixels" warning).
    root = _worst_case(write_labels)
    (root / "images").mkdir()
    Image.new("RGB", (600, 100), (90, 120, 150)).save(root / "images" / "f.png")
    code, _, err = run(root / "gt", root / "pred", "--worst", 2, "-o", tmp_path / "out", "-nb")
    assert code == 0
    assert f"frames from {(root / 'images').resolve()}" in err
    assert (tmp_path / "out" / "worst_iou.png").is_file() and (tmp_path / "out" / "worst_angle.png").is_file()
    assert "without pixels" not in err


def test_worst_pictures_without_images_say_none_were_drawn(write_labels, tmp_path):
    root = _worst_case(write_labels)
    code, out, err = run(root / "gt", root / "pred", "--worst", 2, "-o", tmp_path / "out", "-nb")
    assert code == 0 and "### Lowest IoU (2 matched pairs)" in out
    said = [line for line in err.splitlines() if "no worst-box pictures were drawn" in line]
    assert len(said) == 1 and "no images were given" in said[0]
    assert not (tmp_path / "out" / "worst_iou.png").exists()
    assert not (tmp_path / "out" / "worst_angle.png").exists()


def test_worst_without_out_dir_draws_nothing_and_says_nothing(write_labels):
    # Pictures are asked for only with -o: a listing alone is not a quiet no-op.
    root = _worst_case(write_labels)
    code, _, err = run(root / "gt", root / "pred", "--worst", 2, "-nb")
    assert code == 0 and "worst-box pictures" not in err and "frames from" not in err


# --------------------------------------------------------------------------- flags


def test_boundary_classes_take_several_values_after_one_flag(write_labels):
    gt = rect(0, 0, 40, 20) + "\n" + rect(100, 0, 40, 20, cls=1) + "\n" + rect(200, 0, 40, 20, cls=2) + "\n"
    root = write_labels({"gt/a.txt": gt, "pred/a.txt": gt, "classes.yaml": "0: Car\n1: Bus\n2: Truck\n"})
    code, out, err = run("-bc", 0, 2, root / "gt", root / "pred", "-mp", root / "classes.yaml", "-nb")
    assert code == 0, err
    assert "classes Car, Truck." in out
    aligned = re.search(r"^\s+exactly aligned\s+(\d+)", out, re.M)
    assert aligned.group(1) == "2"


def test_empty_ground_truth_is_a_report_of_zeros(write_labels):
    root = write_labels({"gt/a.txt": "", "pred/a.txt": ""})
    code, out, _ = run(root / "gt", root / "pred", "-nb")
    assert code == 0
    assert out.startswith("# Conversion breakdown\n\n0 matched boxes. Mean IoU 0.00000")


def test_broken_prediction_line_is_warned_and_skipped(write_labels):
    root = write_labels({"gt/a.txt": rect(0, 0, 40, 20) + "\n", "pred/a.txt": rect(0, 0, 40, 20) + "\n0 1 2 3\n"})
    code, out, err = run(root / "gt", root / "pred", "-nb")
    assert code == 0
    assert "pred/a.txt:2:" in err and "warning" in err
    assert out.startswith("# Conversion breakdown\n\n1 matched boxes. Mean IoU 1.00000")


def test_version():
    code, out, _ = run("--version")
    assert code == 0 and out.startswith("hbb2obb-analyze ")


def test_default_prompts_in_the_wrong_units_are_skipped_with_a_warning(write_labels):
    root = write_labels({"data/gt/a.txt": rect(10, 10, 40, 20) + "\n", "data/pred/a.txt": rect(10, 10, 40, 20) + "\n",
                         "data/labels_hbb/a.txt": "0 0.5 0.5 0.1 0.1\n"})
    code, out, err = run(root / "data" / "gt", root / "data" / "pred", "-nb")
    assert code == 0
    assert "identity baseline skipped" in err
    assert "No HBB prompts were found" in out
    code, _, err = run(root / "data" / "gt", root / "data" / "pred", "-hd", root / "data" / "labels_hbb", "-nb")
    assert code == 2 and "normalized while the ground truth is in pixels" in err


GOOD = rect(0, 0, 40, 20) + "\n"


@pytest.mark.parametrize(
    "files, extra, message",
    [
        ({"pred/a.txt": GOOD}, [], "gt: ground-truth folder not found"),
        ({"gt/a.txt": GOOD}, [], "pred: prediction folder not found"),
        ({"gt/a.txt": GOOD + "x 0 0 1 0 1 1 0 1\n", "pred/a.txt": GOOD}, [], "gt/a.txt:2: class id is not an integer"),
        ({"gt/a.txt": GOOD + "0 0 0 1 0 1 nan 0 1\n", "pred/a.txt": GOOD}, [], "gt/a.txt:2: field 7 is not finite"),
        ({"gt/a.txt": GOOD, "gt/a.dota": "0 0 1 0 1 1 0 1 car 3\n", "pred/a.txt": GOOD, "m.yaml": "0: car\n"},
         ["-mp", "{root}/m.yaml"], "gt/a.dota:1: difficult flag must be 0 or 1"),
        ({"gt/a.txt": GOOD, "pred/a.txt": GOOD}, ["-hd", "{root}/nope"], "nope: HBB prompt folder not found"),
        ({"gt/a.txt": GOOD, "pred/a.txt": GOOD}, ["--baseline", "{root}/nope"], "nope: prediction folder not found"),
        ({"gt/a.txt": GOOD, "pred/a.txt": GOOD}, ["--baseline", "{root}/pred", "--bootstrap", "10"],
         "--bootstrap must be at least 100"),
        ({"gt/a.txt": GOOD, "pred/a.txt": GOOD}, ["--worst", "-3"], "--worst must not be negative"),
        ({"gt/a.txt": GOOD, "pred/a.txt": GOOD}, ["-iw", "100"], "--img_width and --img_height must be given together"),
        ({"gt/a.txt": GOOD, "pred/a.txt": GOOD, "file": ""}, ["-o", "{root}/file"], "exists and is not a folder"),
        ({"gt/a.txt": GOOD, "pred/a.txt": GOOD}, ["-mp", "{root}/missing.yaml"], "missing.yaml: label map not found"),
        ({"gt/a.txt": GOOD, "pred/a.txt": GOOD}, ["-i", "{root}/no_images"], "no_images: image folder not found"),
        ({"gt/a.txt": GOOD, "pred/a.txt": GOOD}, ["-e", str(10**23)], f"excluded class id {10**23} is out of range"),
        ({"gt/a.txt": GOOD, "pred/a.txt": GOOD}, ["-bc", str(10**23)], f"boundary class id {10**23} is out of range"),
    ],
    ids=["no-gt", "no-pred", "bad-class", "nan", "bad-dota", "no-hbb", "no-baseline", "bootstrap", "worst",
         "width-only", "out-is-file", "no-map", "no-images", "huge-excluded", "huge-boundary"],
)
def test_bad_input_exits_2_with_one_line(write_labels, files, extra, message):
    root = write_labels(files)
    args = [root / "gt", root / "pred", "-nb"] + [a.format(root=root) for a in extra]
    code, out, err = run(*args)
    assert code == 2
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("hbb2obb-analyze: error: ")
    assert message in lines[0]
    assert "Traceback" not in err


def test_spatial_threshold_reaches_the_analysis(tmp_path):
    """--spatial_threshold is recorded and changes who passes: 0.95 fails a pair of IoU 0.905."""
    (tmp_path / "gt").mkdir()
    (tmp_path / "pred").mkdir()
    (tmp_path / "gt" / "a.txt").write_text(rect(10, 10, 40, 20) + "\n")
    (tmp_path / "pred" / "a.txt").write_text(rect(12, 10, 40, 20) + "\n")
    for threshold, share in ((0.5, 1.0), (0.95, 0.0)):
        out = tmp_path / f"out{threshold}"
        result = CliRunner().invoke(main, [str(tmp_path / "gt"), str(tmp_path / "pred"), "-o", str(out),
                                           "--spatial_threshold", str(threshold), "-nb"])
        assert result.exit_code == 0, result.output
        data = yaml.safe_load((out / "analysis.yaml").read_text())
        assert data["settings"]["spatial_threshold"] == threshold
        assert data["overall"]["spatial_match"] == share


def test_out_dir_never_replaces_a_file_it_did_not_write(write_labels):
    """A user's own analysis.md in -o is refused with nothing written; the command's own files are replaced."""
    root = write_labels({"gt/a.txt": GOOD, "pred/a.txt": GOOD})
    out = root / "out"
    out.mkdir()
    (out / "analysis.md").write_text("my notes\n")
    code, stdout, err = run(root / "gt", root / "pred", "-o", out, "-nb")
    assert code == 2 and stdout == "" and str(out / "analysis.md") in err and "--overwrite" in err
    assert sorted(p.name for p in out.iterdir()) == ["analysis.md"]
    assert (out / "analysis.md").read_text() == "my notes\n"
    code, stdout, err = run(root / "gt", root / "pred", "-o", out, "-nb", "--overwrite")
    assert code == 0, err
    assert stdout.endswith(f"\nWrote analysis.md, analysis.yaml and analysis.png to {out}\n")
    assert sorted(p.name for p in out.iterdir()) == [".hbb2obb-written.json", "analysis.md", "analysis.png",
                                                     "analysis.yaml"]
    again = run(root / "gt", root / "pred", "-o", out, "-nb")  # its own files: replaced without a word
    assert again[0] == 0, again[2]


@pytest.mark.parametrize("flag, name", [("--pairs", "p.csv"), ("--junit", "j.xml")])
def test_pairs_and_junit_never_replace_a_file_it_did_not_write(write_labels, flag, name):
    root = write_labels({"gt/a.txt": GOOD, "pred/a.txt": GOOD})
    (root / name).write_text("mine\n")
    code, stdout, err = run(root / "gt", root / "pred", flag, root / name, "-nb")
    assert code == 2 and stdout == "" and str(root / name) in err and "--overwrite" in err
    assert (root / name).read_text() == "mine\n"
    assert run(root / "gt", root / "pred", flag, root / name, "-nb", "--overwrite")[0] == 0
    assert run(root / "gt", root / "pred", flag, root / name, "-nb")[0] == 0  # its own file now


@pytest.mark.parametrize("flags, culprit", [
    (["--pairs", "p.csv", "-o", "notes.txt/out"], "--out_dir"),  # -o under a file: after --pairs was written
    (["--pairs", "p.csv", "-o", "out"], "--out_dir"),  # out/analysis.md is a folder
    (["-o", "fresh", "--pairs", "folder.csv"], "--pairs"),
    (["-o", "fresh", "--pairs", "notes.txt/p.csv"], "--pairs"),
])
@pytest.mark.parametrize("overwrite", [[], ["--overwrite"]])
def test_an_output_that_cannot_be_written_is_refused_before_the_first_write(write_labels, flags, culprit,
                                                                            overwrite):
    root = write_labels({"gt/a.txt": GOOD, "pred/a.txt": GOOD, "notes.txt": "mine\n"})
    (root / "out" / "analysis.md").mkdir(parents=True)
    (root / "folder.csv").mkdir()
    before = sorted(p.relative_to(root).as_posix() for p in root.rglob("*"))
    code, out, err = run(root / "gt", root / "pred", "-nb", *[root / f if f[0] != "-" else f for f in flags],
                         *overwrite)
    assert code == 2 and out == "" and "Traceback" not in err
    assert err.startswith(f"hbb2obb-analyze: error: {culprit} ") and len(err.splitlines()) == 1
    assert sorted(p.relative_to(root).as_posix() for p in root.rglob("*")) == before  # nothing written


@pytest.mark.parametrize("first, second", [
    (["--pairs", "p.csv"], ["--junit", "p.csv"]),
    (["-o", "out"], ["--summary", "out/analysis.md"]),
    (["-o", "out"], ["--junit", "out/analysis.yaml"]),
])
def test_two_outputs_naming_one_file_are_refused_before_anything_is_written(write_labels, first, second):
    root = write_labels({"gt/a.txt": GOOD, "pred/a.txt": GOOD})
    (root / "out").mkdir()
    before = sorted(p.relative_to(root).as_posix() for p in root.rglob("*"))
    code, out, err = run(root / "gt", root / "pred", "-nb", first[0], root / first[1], second[0], root / second[1])
    assert code == 2 and out == "" and "Traceback" not in err
    flag = "--out_dir" if first[0] == "-o" else first[0]
    assert err.splitlines() == [f"hbb2obb-analyze: error: {second[0]} {root / second[1]}: {flag} writes that file "
                                "too; give each output its own name"]
    assert sorted(p.relative_to(root).as_posix() for p in root.rglob("*")) == before  # nothing written


@pytest.mark.parametrize("pred", ["empty", "all_broken"])
def test_an_analysis_of_nothing_is_an_input_error_and_no_gate_passes(write_labels, pred):
    """No prediction file, or every prediction line skipped: exit 2 with one error line, even with a gate
    that would hold on the zeros such a run would report."""
    files = {"gt/a.txt": GOOD}
    if pred == "all_broken":
        files["pred/a.txt"] = "0 1 2\n"
    root = write_labels(files)
    (root / "pred").mkdir(exist_ok=True)
    code, out, err = run(root / "gt", root / "pred", "-nb", "--require", "total_matches>=0")
    assert code == 2 and out == ""
    errors = [line for line in err.splitlines() if line.startswith("hbb2obb-analyze: error: ")]
    assert len(errors) == 1 and "nothing was scored" in errors[0]
    assert "Traceback" not in err


def test_the_error_decomposition_leaves_out_detections_of_dropped_edge_boxes(write_labels):
    # as hbb2obb-eval's AP does: with -exc, the border car and its detection are out of the count
    edge, inside = rect(0, 10, 20, 20), rect(50, 50, 20, 20)
    root = write_labels({"gt/a.txt": edge + "\n" + inside + "\n",
                         "pred/a.txt": edge + " 0.95\n" + inside + " 0.6\n"})
    for args, counted in (([], 2), (["-exc"], 1)):
        out_dir = root / f"out{len(args)}"
        code, _, err = run(root / "gt", root / "pred", "-iw", 100, "-ih", 100, "-o", out_dir, *args)
        assert code == 0, err
        errors = yaml.safe_load((out_dir / "analysis.yaml").read_text())["detection_errors"]
        assert (errors["boxes"], errors["detections"]) == (counted, counted)
        assert errors["overall"]["ap_tide"] == pytest.approx(1.0) and errors["overall"]["dap_bkg"] == 0
