"""``summary.tex`` and the per-metric rows of a benchmark, against the reference tool's tests."""

from __future__ import annotations

import pytest

from hbb2obb.sweeps.documents import benchmark_rows, latex_escape, render_benchmark_tex


def row(name, models, iou, sem, **extra):
    point = {"imgsz": 1280, "scale_factor": 0.05, "opening_kernel_percentage": 0.15, "avg_iou": iou,
             "std_iou": 0.07, "sem_iou": sem, "iou_fractions": {"0.90": 0.41}, "p90_angle_error": 5.5,
             "total_matches": 200, "total_gt": 201, "execution_time": 12.5}
    point.update(extra)
    return {**point, "name": name, "models": models, "converter": "SAM", "n_points": 45, "n_failed": 0,
            "sweep_seconds": 100.0, "axes": ["imgsz", "scale_factor", "opening_kernel_percentage"]}


def cells(tex: str) -> list:
    lines = tex.splitlines()
    start, end = lines.index(r"  \midrule"), lines.index(r"  \bottomrule")
    return [line.strip().removesuffix(r"\\").strip().split(" & ") for line in lines[start + 1:end]]


def test_the_table_bolds_exactly_the_runs_tied_with_the_leader():
    rows = [row("five", ["sam_l", "sam_b", "sam2_b", "sam2.1_b", "sam2.1_t"], 0.88728, 0.00150),
            row("sam_l", ["sam_l"], 0.88679, 0.00143),
            row("three", ["sam_l", "sam_b", "sam2.1_b"], 0.88578, 0.00147),  # exactly on the edge
            row("four", ["sam_l", "sam_b", "sam2_b", "sam2.1_b"], 0.88566, 0.00148)]
    body = cells(render_benchmark_tex(rows))
    assert [r[4].startswith(r"\textbf{") for r in body] == [True, True, True, False]
    assert body[0][0] == r"sam\_l + sam\_b + sam2\_b + sam2.1\_b + sam2.1\_t"
    assert body[0][4] == r"\textbf{0.88728} $\pm$ 0.00150" and body[3][4] == r"0.88566 $\pm$ 0.00148"


def test_the_table_reports_the_point_and_the_scores():
    rows = [row("sam_l", ["sam_l"], 0.88679, 0.00143, imgsz=1024, scale_factor=-0.01, opening_kernel_percentage=-0.1,
                p90_angle_error=3.5, execution_time=149.4, iou_fractions={"0.90": 0.615})]
    tex = render_benchmark_tex(rows)
    assert r"Models & Size & Scale & Kernel & Mean IoU & IoU$\geq$0.90 & Angle$_{90}$ [$^\circ$] & Time [s]" in tex
    assert cells(tex)[0] == ["sam\\_l", "1024", "$-$0.01", "$-$0.1", r"\textbf{0.88679} $\pm$ 0.00143",
                             r"61.5\%", "3.50", "149.4"]
    assert "1 run(s), 45 grid points per run, 201 ground-truth boxes" in tex
    assert r"\caption" not in tex and r"\begin{table}" not in tex  # the tabular only


def test_runs_of_this_toolkit_are_named_with_their_converter_and_other_axes():
    ours = row("tight", None, 0.9, 0.001, tightness="tight", scale_factor=0.0)
    ours.update(converter="image", axes=["scale_factor", "tightness"])
    del ours["imgsz"], ours["opening_kernel_percentage"]
    tex = render_benchmark_tex([ours])
    assert r"\begin{tabular}{lrrrrrrrl}" in tex and "  Run & Size & Scale & Kernel" in tex
    assert cells(tex)[0][:4] == ["tight (image)", "--", "0", "--"] and cells(tex)[0][-1] == "tightness=tight"


def test_no_finished_run_writes_an_empty_table():
    assert render_benchmark_tex([]) == ""


def test_latex_escape_leaves_no_markup_live():
    assert latex_escape("a_b&c%d$e#f{g}h~i^j\\k") == (
        r"a\_b\&c\%d\$e\#f\{g\}h\textasciitilde{}i\textasciicircum{}j\textbackslash{}k")


class _Run:
    def __init__(self, name, records):
        self.name, self.records, self.run_config = name, records, {}
        self.axes, self.sweep_seconds, self.models, self.converter = ["scale_factor"], 1.0, None, "identity"
        self.ok_records, self.failed = records, []
        self.best = max(records, key=lambda r: r["avg_iou"])


@pytest.mark.parametrize("metric, first, point", [
    ("avg_iou", "b", 0.04), ("iou_at_90", "a", 0.05), ("p90_angle_error", "a", 0.05)])
def test_each_metric_ranks_runs_at_their_own_best_point_on_it(metric, first, point):
    def rec(sf, iou, high, angle):
        return {"scale_factor": sf, "avg_iou": iou, "iou_fractions": {"0.90": high}, "p90_angle_error": angle}
    runs = [_Run("a", [rec(0.04, 0.90, 0.41, 6.0), rec(0.05, 0.87, 0.72, 3.0)]),
            _Run("b", [rec(0.04, 0.91, 0.44, 5.0), rec(0.05, 0.88, 0.55, 4.0)])]
    rows = benchmark_rows(runs, metric)
    assert rows[0]["name"] == first and rows[0]["scale_factor"] == point
