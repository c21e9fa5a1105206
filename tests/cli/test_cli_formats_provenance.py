"""``hbb2obb-convert --save_provenance``: a record beside the output folder, never among label files."""

from __future__ import annotations

import hashlib

from click.testing import CliRunner

from hbb2obb.cli.formats import main
from hbb2obb.io.provenance import sha256_of_files
from hbb2obb.io.written import MANIFEST_NAME

TILTED = "0 1 1 5 2 4 4 0 3\n"


def _run(*args):
    return CliRunner().invoke(main, [str(a) for a in args] + ["-nb"])


def _sha(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_the_record_goes_beside_the_output_folder_and_names_inputs_and_outputs(write_labels):
    root = write_labels({"data/labels/a.txt": TILTED, "data/labels/b.txt": TILTED, "data/classes.yaml": "0: car\n"})
    result = _run(root / "data" / "labels", "--to", "dota", "coco", "-o", root / "data" / "labels_dota",
                  "-iw", 10, "-ih", 10, "--save_provenance")
    assert result.exit_code == 0, result.output
    record = root / "data" / "PROVENANCE_convert_labels_dota.txt"
    assert f"Wrote {record}" in result.output
    assert sorted(p.name for p in (root / "data" / "labels_dota").iterdir()) == [
        MANIFEST_NAME, "a.dota", "b.dota", "coco_annotations_obb.json"]  # nothing else among the labels
    text = record.read_text()
    assert text.startswith("hbb2obb-convert provenance\n")
    assert "source sha256  :" in text and "Environment" in text
    assert "source         : " in text and "(yolo, 2 frames, 2 OBB boxes)" in text
    # the label map found beside the labels (no -mp given) is named with its digest, and its classes listed
    assert f"label map      : {root / 'data' / 'classes.yaml'}  sha256 {_sha(root / 'data' / 'classes.yaml')}" in text
    assert "classes        : 0 car\n" in text
    assert "coco           : " in text and "(1 files)" in text and "dota           : " in text and "(2 files)" in text
    assert "difficult_from : not given" in text and "kind           : obb" in text


def test_the_output_digest_changes_with_the_written_files(write_labels):
    root = write_labels({"data/labels/a.txt": TILTED})
    args = (root / "data" / "labels", "--to", "dota", "-o", root / "data" / "out", "--save_provenance")
    assert _run(*args).exit_code == 0
    first = (root / "data" / "PROVENANCE_convert_out.txt").read_text()
    (root / "data" / "labels" / "a.txt").write_text("0 1 1 6 2 4 4 0 3\n")
    assert _run(*args).exit_code == 0  # its own record and outputs: replaced without --overwrite
    second = (root / "data" / "PROVENANCE_convert_out.txt").read_text()
    line = next(ln for ln in first.splitlines() if ln.startswith("dota "))
    assert line not in second.splitlines()


def test_a_file_of_the_records_name_that_it_did_not_write_is_refused_with_nothing_written(write_labels):
    root = write_labels({"data/labels/a.txt": TILTED, "data/PROVENANCE_convert_out.txt": "mine\n"})
    result = _run(root / "data" / "labels", "--to", "dota", "-o", root / "data" / "out", "--save_provenance")
    assert result.exit_code == 2 and "PROVENANCE_convert_out.txt" in result.output and "--overwrite" in result.output
    assert not (root / "data" / "out").exists()
    assert (root / "data" / "PROVENANCE_convert_out.txt").read_text() == "mine\n"
    forced = _run(root / "data" / "labels", "--to", "dota", "-o", root / "data" / "out", "--save_provenance",
                  "--overwrite")
    assert forced.exit_code == 0, forced.output
    assert (root / "data" / "PROVENANCE_convert_out.txt").read_text().startswith("hbb2obb-convert provenance")


def test_a_record_that_would_land_among_label_files_is_refused(write_labels):
    root = write_labels({"labels/a.txt": TILTED})
    result = _run(root / "labels", "--to", "dota", "-o", root / "labels" / "dota", "--save_provenance")
    assert result.exit_code == 2 and "holds label files" in result.output
    assert not (root / "labels" / "dota").exists()


def test_without_the_flag_no_record_is_written(write_labels):
    root = write_labels({"data/labels/a.txt": TILTED})
    assert _run(root / "data" / "labels", "--to", "dota", "-o", root / "data" / "out").exit_code == 0
    assert not list((root / "data").glob("PROVENANCE*"))


def test_the_record_names_the_side_inputs_with_their_digests(write_labels):
    root = write_labels({"data/labels/a.txt": TILTED, "data/labels_confidence/a.txt": "0.2\n",
                         "data/info.json": "{}"})
    result = _run(root / "data" / "labels", "--to", "dota", "coco", "-o", root / "data" / "out", "-iw", 10, "-ih", 10,
                  "--difficult_from", "confidence", "--confidence_dir", root / "data" / "labels_confidence",
                  "--coco_info", root / "data" / "info.json", "--save_provenance")
    assert result.exit_code == 0, result.output
    text = (root / "data" / "PROVENANCE_convert_out.txt").read_text()
    assert f"coco_info      : {root / 'data' / 'info.json'}  sha256 {_sha(root / 'data' / 'info.json')}" in text
    assert "difficult_below: 0.5" in text and "difficult_from : confidence" in text
    side_car = root / "data" / "labels_confidence"
    assert f"confidence_dir : {side_car}  sha256 {sha256_of_files([side_car / 'a.txt'])}" in text
