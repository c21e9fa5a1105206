"""hbb2obb-eval's outputs (issue 34): never over the run's own inputs, valid JSON, no run on nothing."""

import csv
import json

import pytest
from click.testing import CliRunner

from hbb2obb.cli.eval import main
from hbb2obb.io.written import MANIFEST_NAME

from conftest import rect

GT_A = rect(10, 10, 40, 20) + "\n" + rect(100, 100, 40, 20) + "\n"
GT_B = rect(300, 300, 80, 40, cls=1) + "\n"
# a hit of class 0 (0.9), a class-2 detection on nothing (0.8), a class -1 detection (0.7)
PRED_A = rect(10, 10, 40, 20) + " 0.9\n" + rect(200, 200, 40, 20, cls=2) + " 0.8\n" + \
    rect(100, 100, 40, 20, cls=-1) + " 0.7\n"


def run(*args):
    result = CliRunner().invoke(main, [str(a) for a in args])
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def data(write_labels):
    root = write_labels({"gt/a.txt": GT_A, "gt/b.txt": GT_B, "pred/a.txt": PRED_A, "pred/b.txt": "",
                         "classes.yaml": "0: car\n1: bus\n2: truck\n"})
    code, _, err = run(root / "gt", root / "pred", "-nb", "-o", root / "golden.yaml")
    assert code == 0, err
    return root


def _refuse_constant(name):
    raise ValueError(f"not JSON: {name}")


def strict_json(text):
    return json.loads(text, parse_constant=_refuse_constant)


# --- class 1: outputs never replace the run's inputs -------------------------------------------

@pytest.mark.parametrize("flag, target", [
    ("-o", "classes.yaml"), ("-o", "golden.yaml"), ("--pairs", "gt/a.txt"), ("--plots", "gt"),
    ("--plots", "pred"), ("-o", "gt/c.yaml"),
])
def test_outputs_over_the_runs_inputs_are_refused(data, flag, target):
    (data / "gt" / "c.yaml").write_text("a: 1\n")  # a file the user keeps in the ground-truth folder
    (data / "gt" / "a.csv").write_text("x\n")
    if target == "gt/a.txt":
        target = "gt/a.csv"
    before = {p: p.read_bytes() for p in data.rglob("*") if p.is_file()}
    code, out, err = run(data / "gt", data / "pred", "-nb", "-mp", data / "classes.yaml",
                         "--expect", data / "golden.yaml", flag, data / target)
    assert code == 2, err
    assert str(data / target) in err and "--overwrite" in err
    assert out == ""
    after = {p: p.read_bytes() for p in data.rglob("*") if p.is_file()}
    assert after == before  # nothing written, nothing changed


def test_every_output_is_checked_before_the_first_is_written(data):
    code, _, err = run(data / "gt", data / "pred", "-nb", "-o", data / "new.yaml", "--pairs", data / "p.csv",
                       "--plots", data / "pred")
    assert code == 2 and "--plots" in err
    assert not (data / "new.yaml").exists() and not (data / "p.csv").exists()


@pytest.mark.parametrize("flags, culprit", [
    (["--pairs", "p.csv", "-o", "notes.txt/m.json"], "-o"),  # -o under a file: after --pairs was written
    (["-o", "new.yaml", "--plots", "notes.txt"], "--plots"),  # --plots is a file: after -o was written
    (["-o", "new.yaml", "--plots", "notes.txt/figs"], "--plots"),
    (["--pairs", "p.csv", "-o", "folder.json"], "-o"),  # -o names a folder
    (["-o", "new.yaml", "--pairs", "folder.csv"], "--pairs"),
    (["-o", "new.yaml", "--plots", "figs"], "--plots"),  # figs/confusion_matrix.png is a folder
])
@pytest.mark.parametrize("overwrite", [[], ["--overwrite"]])
def test_an_output_that_cannot_be_written_is_refused_before_the_first_write(data, flags, culprit, overwrite):
    (data / "notes.txt").write_text("mine\n")
    (data / "folder.json").mkdir()
    (data / "folder.csv").mkdir()
    (data / "figs" / "confusion_matrix.png").mkdir(parents=True)
    before = sorted(p.relative_to(data).as_posix() for p in data.rglob("*"))
    code, out, err = run(data / "gt", data / "pred", "-nb", *[data / f if "." in f or f == "figs" else f
                                                              for f in flags], *overwrite)
    assert code == 2 and out == "" and "Traceback" not in err
    assert err.startswith(f"hbb2obb-eval: error: {culprit} ") and len(err.splitlines()) == 1
    assert sorted(p.relative_to(data).as_posix() for p in data.rglob("*")) == before  # nothing written
    assert (data / "notes.txt").read_text() == "mine\n"


@pytest.mark.parametrize("first, second", [
    (["-o", "x.json"], ["--summary", "x.json"]),  # was: the metric JSON with Markdown appended, exit 0
    (["--pairs", "p.csv"], ["--junit", "p.csv"]),  # was: the pairs replaced by the JUnit XML, exit 0
    (["-o", "y.json"], ["--junit", "./y.json"]),
    (["--plots", "figs"], ["--junit", "figs/confusion_matrix.png"]),
])
def test_two_outputs_naming_one_file_are_refused_before_anything_is_written(data, first, second):
    (data / "figs").mkdir()  # --junit needs its folder to exist
    before = sorted(p.relative_to(data).as_posix() for p in data.rglob("*"))
    code, out, err = run(data / "gt", data / "pred", "-nb", first[0], data / first[1], second[0], data / second[1])
    assert code == 2 and out == "" and "Traceback" not in err
    assert err.splitlines() == [f"hbb2obb-eval: error: {second[0]} {data / second[1]}: {first[0]} writes that file "
                                "too; give each output its own name"]
    assert sorted(p.relative_to(data).as_posix() for p in data.rglob("*")) == before  # nothing written


def test_overwrite_lets_an_input_be_replaced(data):
    code, _, err = run(data / "gt", data / "pred", "-nb", "--expect", data / "golden.yaml", "-o",
                       data / "golden.yaml", "--overwrite")
    assert code == 0, err
    assert "total_gt" in (data / "golden.yaml").read_text()


def test_a_new_file_beside_the_inputs_is_no_input(data):
    code, _, err = run(data / "gt", data / "pred", "-nb", "-o", data / "gt" / "metrics.json")
    assert code == 0, err
    assert strict_json((data / "gt" / "metrics.json").read_text())["total_gt"] == 3


def test_outputs_leave_no_temporary_file(data):
    code, _, err = run(data / "gt", data / "pred", "-nb", "-o", data / "out" / "m.json", "--pairs",
                       data / "out" / "p.csv", "--plots", data / "out" / "figs")
    assert code == 0, err
    names = sorted(p.relative_to(data / "out").as_posix() for p in (data / "out").rglob("*"))
    assert names == [MANIFEST_NAME, "figs", f"figs/{MANIFEST_NAME}", "figs/confusion_matrix.png", "figs/pr_curves.png",
                     "m.json", "p.csv"]  # the outputs, and in each folder the record of what the run wrote


# --- class 10: machine outputs are valid -------------------------------------------------------

def test_json_is_rfc_8259_with_null_for_undefined(data):
    code, out, err = run(data / "gt", data / "pred", "-nb", "--json", "-o", data / "m.json")
    assert code == 0, err
    for text in (out, (data / "m.json").read_text()):
        metrics = strict_json(text)  # NaN or Infinity would raise
        truck = metrics["class_stats"]["2"]  # detections, no ground truth: AP undefined
        assert truck["ap50"] is None and truck["ap50_95"] is None and truck["dota_ap50"] is None
        assert metrics["map_large"] is None  # no box of that size at all
        assert metrics["class_stats"]["0"]["ap50"] > 0


def test_json_golden_with_null_matches_its_own_run(data):
    code, _, err = run(data / "gt", data / "pred", "-nb", "-o", data / "g.json")
    assert code == 0, err
    code, out, err = run(data / "gt", data / "pred", "-nb", "--expect", data / "g.json")
    assert code == 0, out + err


def test_pairs_keep_class_minus_one(data):
    code, _, err = run(data / "gt", data / "pred", "-nb", "--pairs", data / "p.csv")
    assert code == 0, err
    with (data / "p.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    lone = [row for row in rows if row["gt_line"] == ""]
    assert sorted(row["pred_class"] for row in lone) == ["-1", "2"]
    assert all(row["gt_class"] == "" for row in lone)
    unmatched_gt = [row for row in rows if row["gt_line"] != "" and row["pred_line"] == ""]
    assert unmatched_gt and all(row["pred_class"] == "" for row in unmatched_gt)


def test_pairs_keep_ground_truth_of_class_minus_one(write_labels):
    root = write_labels({"gt/a.txt": rect(10, 10, 40, 20, cls=-1) + "\n", "pred/a.txt": rect(10, 10, 40, 20, cls=-1)})
    code, _, err = run(root / "gt", root / "pred", "-nb", "--pairs", root / "p.csv")
    assert code == 0, err
    with (root / "p.csv").open() as handle:
        (row,) = list(csv.DictReader(handle))
    assert row["gt_class"] == "-1" and row["pred_class"] == "-1" and row["edge"] == "0"


# --- class 11: no run on nothing ---------------------------------------------------------------

@pytest.mark.parametrize("policy", ["skip", "empty"])
@pytest.mark.parametrize("gate", [("--require", "avg_iou>=0"), ("--require", "total_gt>=0"), ()])
def test_an_empty_prediction_folder_is_an_input_error(data, policy, gate):
    (data / "nopred").mkdir()
    code, out, err = run(data / "gt", data / "nopred", "-nb", "--missing_pred", policy, *gate)
    assert code == 2
    assert "nothing was scored" in err
    assert "pass" not in out


def test_every_prediction_line_skipped_is_an_input_error(write_labels):
    # HBB prompts (YOLO-HBB, five fields) given as predictions: every line is skipped
    root = write_labels({"gt/a.txt": GT_A, "pred/a.txt": "0 0.5 0.5 0.1 0.1\n0 0.2 0.2 0.1 0.1\n"})
    code, out, err = run(root / "gt", root / "pred", "-nb", "--require", "avg_iou>=0")
    assert code == 2
    assert "every prediction line was skipped (2 line(s)" in err
    assert "pass" not in out


def test_an_expect_check_on_nothing_is_an_input_error(data):
    (data / "nopred").mkdir()
    code, _, err = run(data / "gt", data / "nopred", "-nb", "--expect", data / "golden.yaml")
    assert code == 2 and "nothing was scored" in err


def test_empty_prediction_files_are_a_scored_run(write_labels):
    # a detector that wrote a file for every frame and found nothing: scored, all misses
    root = write_labels({"gt/a.txt": GT_A, "pred/a.txt": ""})
    code, out, err = run(root / "gt", root / "pred", "-nb", "--require", "total_matches>=0")
    assert code == 0, err
    assert "pass  total_matches>=0" in out


# --- class 12: detection metrics say what they did ---------------------------------------------

def test_max_dets_says_what_it_dropped(write_labels):
    # frame a: 13 detections of class 0 (all on one box, scores falling), frame b: 3; --max_dets 10
    gt = rect(10, 10, 40, 20) + "\n"
    dense = "".join(rect(10 + i, 10, 40, 20) + f" {0.99 - i / 100:.2f}\n" for i in range(13))
    sparse = "".join(rect(10 + i, 10, 40, 20) + f" {0.5 - i / 100:.2f}\n" for i in range(3))
    root = write_labels({"gt/a.txt": gt, "gt/b.txt": gt, "pred/a.txt": dense, "pred/b.txt": sparse})
    code, out, err = run(root / "gt", root / "pred", "-nb", "--json", "--max_dets", "10")
    assert code == 0, err
    metrics = strict_json(out)
    assert metrics["max_dets_dropped"] == 3
    assert "--max_dets 10 left 3 detection(s) out of the COCO rule" in err and "a (3)" in err
    assert " b (" not in err
    code, out, err = run(root / "gt", root / "pred", "-nb", "--json", "--max_dets", "20")
    assert strict_json(out)["max_dets_dropped"] == 0 and "max_dets" not in err


# --- class 12: outputs never replace a file hbb2obb did not write -----------------------------

@pytest.mark.parametrize("flag, target", [("-o", "m.yaml"), ("--pairs", "p.csv"), ("--junit", "j.xml"),
                                          ("--plots", "figs/pr_curves.png")])
def test_a_file_hbb2obb_did_not_write_is_refused_unless_overwrite(data, flag, target):
    (data / target).parent.mkdir(exist_ok=True)
    (data / target).write_text("the user's own file\n")
    value = data / ("figs" if flag == "--plots" else target)
    before = {p: p.read_bytes() for p in data.rglob("*") if p.is_file()}
    code, out, err = run(data / "gt", data / "pred", "-nb", "-o", data / "new.json", flag, value)
    assert code == 2 and out == ""
    assert str(data / target) in err and "--overwrite" in err and "did not write" in err
    assert {p: p.read_bytes() for p in data.rglob("*") if p.is_file()} == before  # not even new.json
    code, _, err = run(data / "gt", data / "pred", "-nb", flag, value, "--overwrite")
    assert code == 0, err
    assert (data / target).read_bytes() != b"the user's own file\n"


def test_a_rerun_replaces_its_own_outputs_but_not_one_edited_since(data):
    outputs = ["-o", data / "m.json", "--pairs", data / "p.csv", "--plots", data / "figs", "--junit", data / "j.xml"]
    for _ in range(2):  # a Makefile or CI job run again: its own files are replaced without a word
        code, _, err = run(data / "gt", data / "pred", "-nb", *outputs)
        assert code == 0, err
    assert strict_json((data / "m.json").read_text())["total_gt"] == 3
    (data / "m.json").write_text('{"edited": true}\n')  # somebody's edit: theirs now
    code, _, err = run(data / "gt", data / "pred", "-nb", *outputs)
    assert code == 2 and str(data / "m.json") in err
    assert (data / "m.json").read_text() == '{"edited": true}\n'


def test_a_failed_gate_still_records_what_it_wrote(data):
    args = [data / "gt", data / "pred", "-nb", "-o", data / "m.yaml", "--require", "avg_iou>=2"]
    assert run(*args)[0] == 1
    code, _, err = run(*args)  # the second run may replace the first run's file: it is recorded
    assert code == 1, err
    assert "did not write" not in err


def test_a_record_that_cannot_be_written_is_one_clear_error(data):
    (data / "out" / MANIFEST_NAME).mkdir(parents=True)  # hostile: the record's name taken by a folder
    code, _, err = run(data / "gt", data / "pred", "-nb", "-o", data / "out" / "m.yaml")
    assert code == 2 and "Traceback" not in err
    assert str(data / "out" / MANIFEST_NAME) in err and "cannot record" in err
    assert "total_gt" in (data / "out" / "m.yaml").read_text()  # the output itself was written


def test_an_error_in_the_run_is_not_hidden_by_the_record(data):
    (data / "out" / MANIFEST_NAME).mkdir(parents=True)
    (data / "figs").write_text("a file where --plots wants a folder\n")
    code, _, err = run(data / "gt", data / "pred", "-nb", "-o", data / "out" / "m.yaml", "--plots", data / "figs",
                       "--overwrite")
    assert code == 2 and "--plots" in err and "cannot record" not in err
