"""The provenance record: digests that change when their inputs change, and a readable file."""

import hashlib

from hbb2obb.io import provenance


def test_set_digest_changes_with_a_name_or_a_byte(tmp_path):
    (tmp_path / "a.txt").write_text("0 1 2\n")
    (tmp_path / "b.txt").write_text("3 4 5\n")
    first = provenance.sha256_of_files(tmp_path.glob("*.txt"))
    assert first.endswith("(2 files)")
    (tmp_path / "b.txt").rename(tmp_path / "c.txt")
    renamed = provenance.sha256_of_files(tmp_path.glob("*.txt"))
    (tmp_path / "c.txt").write_text("3 4 6\n")
    edited = provenance.sha256_of_files(tmp_path.glob("*.txt"))
    assert len({first, renamed, edited}) == 3
    assert provenance.sha256_of_files([]) == "no files"


def test_file_digest_is_hashlibs(tmp_path):
    path = tmp_path / "w.bin"
    path.write_bytes(bytes(range(256)) * 5000)
    assert provenance.sha256_file(path, chunk=1000) == hashlib.sha256(path.read_bytes()).hexdigest()


def test_record_has_header_command_sections_and_environment(tmp_path):
    out = provenance.write_record(
        tmp_path / "PROVENANCE_obb.txt",
        "hbb2obb conversion provenance",
        provenance.command_line(["/usr/bin/hbb2obb", "images dir", "-n"]),
        [provenance.section("Settings", ["normalize : yes"])],
    )
    text = out.read_text()
    assert text.startswith("hbb2obb conversion provenance\n")
    assert "hbb2obb 'images dir' -n" in text
    assert "Settings\n" + provenance.RULE + "\nnormalize : yes" in text
    digest = provenance.source_digest()
    assert f"source sha256  : {digest}" in text and digest.split()[0] != "no"
    assert "numpy          : " in text
    assert sorted(p.name for p in tmp_path.iterdir()) == ["PROVENANCE_obb.txt"]


def test_an_installed_copy_outside_a_checkout_reads_as_no_checkout(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "m.py").write_text("x = 1\n")
    assert provenance.git_state(tmp_path / "pkg")["commit"] is None
