"""read_text_file: one message per way a named file cannot be read."""

import pytest

from hbb2obb.errors import InputError
from hbb2obb.io.coco import load_json
from hbb2obb.io.labelmap import load_label_map
from hbb2obb.io.text_file import read_text_file
from hbb2obb.gates.golden import load_golden


def _missing(root):
    return root / "absent.yaml"


def _folder(root):
    (root / "folder.yaml").mkdir()
    return root / "folder.yaml"


def _latin1(root):
    path = root / "latin1.yaml"
    path.write_bytes("car: 0\nvoiture: 1 # \u00e9t\u00e9\n".encode("latin-1"))  # the first é is byte 20
    return path


def _under_a_file(root):
    (root / "plain.txt").write_text("x\n")
    return root / "plain.txt" / "inside.yaml"


def _dangling_link(root):
    link = root / "link.yaml"
    link.symlink_to(root / "gone.yaml")
    return link


@pytest.mark.parametrize("make, message", [
    (_missing, r"absent\.yaml: map file not found$"),
    (_folder, r"folder\.yaml: map file is a folder, not a file$"),
    (_latin1, r"latin1\.yaml: map file is not UTF-8 text \(invalid continuation byte at byte 20\)$"),
    (_under_a_file, r"inside\.yaml: cannot read map file \(Not a directory\)$"),
    (_dangling_link, r"link\.yaml: map file not found$"),
])
def test_each_failure_is_one_line_naming_the_file(tmp_path, make, message):
    path = make(tmp_path)
    with pytest.raises(InputError, match=message) as caught:
        read_text_file(path, "map file")
    assert "\n" not in str(caught.value)
    assert str(caught.value).startswith(str(path))


@pytest.mark.parametrize("data, text", [
    (b"", ""),
    (b"\xef\xbb\xbfa: 1\r\n", "a: 1\r\n"),  # the byte order mark goes; line ends stay as written
    ("\u00e9\n".encode(), "\u00e9\n"),
])
def test_text_comes_back_decoded(tmp_path, data, text):
    path = tmp_path / "f.txt"
    path.write_bytes(data)
    assert read_text_file(path, "file") == text
    assert read_text_file(str(path), "file") == text


@pytest.mark.parametrize("load, what", [
    (load_label_map, "label map"),
    (load_golden, "golden file"),
    (load_json, "JSON file"),
])
def test_every_named_file_reader_says_which_file_it_wanted(tmp_path, load, what):
    from pathlib import Path

    for make in (_missing, _folder, _latin1):
        root = tmp_path / f"{load.__name__}-{make.__name__}"
        root.mkdir()
        with pytest.raises(InputError, match=what):
            load(Path(make(root)))
