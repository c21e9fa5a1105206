"""The record of the files the toolkit wrote (``.hbb2obb-written.json``)."""

import json

from hbb2obb.io.written import MANIFEST_NAME, OutputGuard


def test_two_runs_writing_one_folder_at_once_keep_both_records(tmp_path):
    """Two runs check the folder before either has written (as two CI jobs started together do),
    then each writes its own file: the record keeps both, so neither file is later taken for a
    user's file (a rerun was refused: 'hbb2obb did not write' its own output)."""
    first, second = OutputGuard(), OutputGuard()
    assert first.foreign([tmp_path / "a.json"]) == [] and second.foreign([tmp_path / "b.json"]) == []
    (tmp_path / "a.json").write_text("a\n")
    first.wrote(tmp_path / "a.json")
    (tmp_path / "b.json").write_text("b\n")
    second.wrote(tmp_path / "b.json")
    first.save()
    second.save()
    recorded = json.loads((tmp_path / MANIFEST_NAME).read_text())["files"]
    assert sorted(recorded) == ["a.json", "b.json"]
    assert OutputGuard().foreign([tmp_path / "a.json", tmp_path / "b.json"]) == []


def test_a_file_replaced_by_a_later_run_keeps_the_later_digest(tmp_path):
    first, second = OutputGuard(), OutputGuard()
    target = tmp_path / "m.json"
    target.write_text("old\n")
    first.wrote(target)
    first.save()
    assert second.foreign([target]) == []
    target.write_text("new\n")
    second.wrote(target)
    second.save()
    assert OutputGuard().foreign([target]) == []
    target.write_text("edited by hand\n")
    assert OutputGuard().foreign([target]) == [target]
