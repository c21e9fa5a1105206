from hbb2obb.report.textable import render_table


def test_columns_align_right_by_default_after_the_first():
    text = render_table(["Name", "N"], [["a", 1], ["long name", 1234]])
    lines = text.splitlines()
    assert lines[0] == "Name          N"
    assert lines[2] == "long name  1234"
    assert len({len(row) for row in lines}) == 1


def test_empty_rows_render_the_header():
    assert render_table(["A", "B"], []) == "A  B"
