"""What every command shares: a message on stderr stays one line whatever the names in it hold."""

import pytest
from click.testing import CliRunner

from hbb2obb.cli.common import one_line
from hbb2obb.cli.eval import main as eval_main

from conftest import rect


@pytest.mark.parametrize("text, shown", [
    ("gt/a\nb.txt:2: bad", "gt/a\\nb.txt:2: bad"),
    ("a\rAverage IoU: 0.99", "a\\rAverage IoU: 0.99"),
    ("a\x00b\x1bc\x85d\u2028e", "a\\x00b\\x1bc\\x85d\\u2028e"),
    ("tab\tand ünïcödé stay", "tab\tand ünïcödé stay"),
])
def test_one_line_escapes_what_would_break_or_rewrite_the_line(text, shown):
    assert one_line(text) == shown
    assert len(one_line(text).splitlines()) == 1


def test_broken_ground_truth_in_a_file_whose_name_holds_a_newline_is_one_line(write_labels):
    """Was: the error split over two lines, the second starting 'Average IoU: 0.99999.txt:2: ...'."""
    name = "x\nAverage IoU: 0.99999"
    root = write_labels({f"gt/{name}.txt": rect(10, 10, 20, 10) + "\n0 1 2\n",
                         f"pred/{name}.txt": rect(10, 10, 20, 10)})
    result = CliRunner().invoke(eval_main, [str(root / "gt"), str(root / "pred"), "-nb"])
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.splitlines() == [f"hbb2obb-eval: error: {root / 'gt'}/x\\nAverage IoU: 0.99999.txt:2: "
                                          "expected 9 fields (class x1 y1 x2 y2 x3 y3 x4 y4) or 10 (with "
                                          "confidence), found 3"]


def test_a_warning_naming_such_a_file_is_one_line(write_labels):
    name = "x\rAverage IoU: 0.99999"
    root = write_labels({f"gt/{name}.txt": rect(10, 10, 20, 10) + "\n",
                         f"pred/{name}.txt": rect(10, 10, 20, 10) + "\n0 1 2\n"})
    result = CliRunner().invoke(eval_main, [str(root / "gt"), str(root / "pred"), "-nb"])
    assert result.exit_code == 0, result.output
    (warning,) = result.stderr.splitlines()
    assert warning.startswith(f"hbb2obb-eval: warning: {root / 'pred'}/x\\rAverage IoU: 0.99999.txt:2: ")
