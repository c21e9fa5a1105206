"""``--junit`` and ``--summary`` of hbb2obb-eval and hbb2obb-analyze: read back as CI systems read them."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from hbb2obb.cli.analyze import main as analyze_main
from hbb2obb.cli.eval import main as eval_main

from conftest import rect

junitparser = pytest.importorskip("junitparser", reason="junitparser comes with the [test] extra")
markdown = pytest.importorskip("markdown", reason="markdown comes with the [test] extra")


@pytest.fixture
def labels(tmp_path):
    """Two classes: class 0 predicted exactly, class 1 shifted by 3 px along a 10 px side (IoU 7/13)."""
    for side in ("gt", "pred"):
        (tmp_path / side).mkdir()
    gt = [rect(30 * k, 0, 10, 6, cls=k % 2) for k in range(6)]
    pred = [rect(30 * k + 3 * (k % 2), 0, 10, 6, cls=k % 2) for k in range(6)]
    (tmp_path / "gt" / "a.txt").write_text("\n".join(gt) + "\n")
    (tmp_path / "pred" / "a.txt").write_text("\n".join(pred) + "\n")
    (tmp_path / "names.yaml").write_text("0: Car\n1: Bus\n")
    return tmp_path


def run(main, *args):
    return CliRunner().invoke(main, [str(a) for a in args] + ["-nb"])


def test_junit_holds_one_case_per_gate_with_the_failure_measured(labels):
    out = labels / "gates.xml"
    result = run(eval_main, labels / "gt", labels / "pred", "-mp", labels / "names.yaml",
                 "--require", "Car:avg_iou>=0.99", "--require", "Bus:avg_iou>=0.6", "--junit", out)
    assert result.exit_code == 1, result.output
    xml = junitparser.JUnitXml.fromfile(str(out))
    suites = list(xml) if isinstance(xml, junitparser.JUnitXml) else [xml]
    assert len(suites) == 1
    suite = suites[0]
    suite.update_statistics()
    assert (suite.tests, suite.failures, suite.errors, suite.skipped) == (2, 1, 0, 0)
    cases = {case.name: case for case in suite}
    assert cases["Car:avg_iou>=0.99"].is_passed
    failed = cases["Bus:avg_iou>=0.6"]
    assert not failed.is_passed and failed.classname == "hbb2obb-eval.require"
    (failure,) = failed.result
    assert failure.message == f"avg_iou = {7 / 13:.6g}, bound >= 0.6 (Bus)"
    assert "class: Bus" in failure.text and "bound: >= 0.6" in failure.text


def test_expect_fields_are_cases_and_ignored_extras_are_skipped(labels):
    golden = labels / "golden.yaml"
    assert run(eval_main, labels / "gt", labels / "pred", "-o", golden).exit_code == 0
    text = golden.read_text().replace("total_gt: 6", "total_gt: 7")
    golden.write_text("\n".join(line for line in text.splitlines() if not line.startswith("median_iou:")) + "\n")
    result = run(eval_main, labels / "gt", labels / "pred", "--expect", golden, "--expect_ignore_extra",
                 "--junit", labels / "j.xml")
    assert result.exit_code == 1
    suite = next(iter(junitparser.JUnitXml.fromfile(str(labels / "j.xml"))))
    suite.update_statistics()
    cases = {case.name: case for case in suite}
    assert suite.failures == 1 and suite.skipped == 1 and not cases["total_gt"].is_passed
    assert cases["median_iou"].is_skipped and cases["avg_iou"].is_passed
    assert "measured 6, golden 7" in cases["total_gt"].result[0].message


def test_summary_appends_a_readable_section(labels):
    summary = labels / "summary.md"
    summary.write_text("# Earlier step\n")
    result = run(eval_main, labels / "gt", labels / "pred", "-mp", labels / "names.yaml",
                 "--require", "avg_iou>=0.5", "--summary", summary, "--plots", labels / "plots")
    assert result.exit_code == 0, result.output
    text = summary.read_text()
    assert text.startswith("# Earlier step\n\n### hbb2obb-eval: gates passed\n")
    html = markdown.markdown(text, extensions=["tables"])
    assert "<td>Bus</td>" in html and "<td>Car</td>" in html  # the per-class table renders as a table
    assert "<code>avg_iou&gt;=0.5</code>" in html and "Skipped input: none." in html
    assert '<a href="' + (labels / "plots" / "confusion_matrix.png").as_posix() + '">' in html
    assert run(analyze_main, labels / "gt", labels / "pred", "--summary", summary).exit_code == 0
    assert summary.read_text().count("### hbb2obb-") == 2  # appended after the first run's section


def test_reports_count_skipped_input(labels):
    with open(labels / "pred" / "a.txt", "a") as handle:
        handle.write("0 1 2 three 4 5 6 7 8\n")
    (labels / "gt" / "b.txt").write_text(rect(0, 0, 10, 6) + "\n")
    result = run(eval_main, labels / "gt", labels / "pred", "--summary", labels / "s.md")
    assert result.exit_code == 0
    text = (labels / "s.md").read_text()
    assert "1 frames without a prediction file, 1 broken prediction lines skipped" in text
    assert "1 × missing prediction file" in text and "1 × broken prediction file" in text


def test_nothing_is_written_unless_asked_and_inputs_are_refused(labels):
    before = sorted(p.name for p in labels.rglob("*"))
    assert run(eval_main, labels / "gt", labels / "pred", "--require", "avg_iou>=0.5").exit_code == 0
    assert sorted(p.name for p in labels.rglob("*")) == before
    for main in (eval_main, analyze_main):
        for flag in ("--junit", "--summary"):
            result = run(main, labels / "gt", labels / "pred", flag, labels / "gt" / "a.txt")
            assert result.exit_code == 2 and "refusing to overwrite" in result.output, result.output
            result = run(main, labels / "gt", labels / "pred", flag, labels / "nowhere" / "x")
            assert result.exit_code == 2 and "does not exist" in result.output
    assert (labels / "gt" / "a.txt").read_text().startswith("0 ")


def test_a_usage_error_leaves_no_report(labels):
    result = run(eval_main, labels / "gt", labels / "pred", "--require", "avg_iuo>=0.5", "--junit", labels / "j.xml",
                 "--summary", labels / "s.md")
    assert result.exit_code == 2
    assert not (labels / "j.xml").exists() and not (labels / "s.md").exists()
