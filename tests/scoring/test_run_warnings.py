"""The warnings of an evaluation run (hbb2obb.scoring.run_warnings): what the user must hear."""

import pytest

from hbb2obb import evaluate_obb
from hbb2obb.io import ImageSizes
from hbb2obb.scoring.evaluate import Hbb2ObbWarning, evaluate_frames
from hbb2obb.scoring.run_warnings import run_warnings

from conftest import rect


def test_a_clean_run_has_no_warnings(write_labels):
    root = write_labels({"gt/a.txt": rect(0, 0, 10, 10) + "\n", "pred/a.txt": rect(0, 0, 10, 10) + "\n"})
    result = evaluate_frames(root / "gt", root / "pred")
    assert result.warnings == [] and run_warnings(result.plan, result.health, ImageSizes(), "skip", False) == []


def test_kinds_come_in_a_fixed_order(write_labels):
    # an orphan prediction file, a missing one and a broken line: files first, then lines
    root = write_labels({"gt/a.txt": rect(0, 0, 10, 10) + "\n", "gt/b.txt": rect(0, 0, 10, 10) + "\n",
                         "pred/a.txt": "0 1 2\n" + rect(0, 0, 10, 10) + "\n", "pred/c.txt": rect(0, 0, 10, 10) + "\n"})
    result = evaluate_frames(root / "gt", root / "pred")
    kinds = [kind for kind, _ in run_warnings(result.plan, result.health, ImageSizes(), "skip", False)]
    assert kinds == ["missing prediction file", "orphan prediction file", "broken prediction file"]
    assert kinds == [kind for kind, _ in result.warnings]


@pytest.mark.parametrize("lines, first", [
    # a value that is out of range or not finite is found by a later check than a short line:
    # the warning still names the file's first broken line
    (["0 1e300 0 1 0 1 1 0 1", "0 1 2", "RECT"], 1),
    (["RECT", "0 nan 0 1 0 1 1 0 1", "0 1 2", "0 1 2 3"], 2),
    (["RECT", "0 1 2", "0 inf 0 1 0 1 1 0 1"], 2),
])
def test_the_warning_names_the_first_broken_line_of_a_file(write_labels, lines, first):
    text = "\n".join(rect(0, 0, 10, 10) if line == "RECT" else line for line in lines) + "\n"
    root = write_labels({"gt/a.txt": rect(0, 0, 10, 10) + "\n", "pred/a.txt": text})
    broken = sum(line != "RECT" for line in lines)
    with pytest.warns(Hbb2ObbWarning, match=rf"a.txt:{first}: .*\({broken} broken lines in this file"):
        metrics = evaluate_obb(root / "gt", root / "pred")
    assert metrics["skipped_pred_lines"] == broken
