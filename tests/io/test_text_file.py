"""Named files read whole (read_text_file: one message per way a file cannot be read) and label files read in bulk."""

import pytest

from hbb2obb.errors import InputError
from hbb2obb.gates.golden import load_golden
from hbb2obb.io.coco import load_json
from hbb2obb.io.labelmap import load_label_map
from hbb2obb.io.text_file import read_text_file


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


@pytest.fixture
def label_files(tmp_path):
    contents = {
        "a.txt": b"0 1 2 3 4 5 6 7 8\n",
        "empty.txt": b"",
        "crlf bom.txt": b"\xef\xbb\xbf0 1 2 3 4 5 6 7 8\r\n",
        "big.txt": bytes(range(256)) * 700,  # 179,200 bytes: several reads of 64 KiB, the last one short
        "exact.txt": b"x" * (1 << 17),  # a multiple of the read size: the end is an empty read
        "caf\u00e9.txt": b"1 2\n",
    }
    for name, data in contents.items():
        (tmp_path / name).write_bytes(data)
    (tmp_path / "folder.txt").mkdir()
    paths = [str(tmp_path / name) for name in contents]
    return paths + [str(tmp_path / "folder.txt"), str(tmp_path / "gone.txt")]


def test_label_files_read_a_batch_at_a_time_and_within_the_descriptors_left(label_files, monkeypatch):
    import errno
    import os

    import hbb2obb.io.text as text

    files = label_files
    expected = [None if not os.path.isfile(p) else open(p, "rb").read() for p in files]
    monkeypatch.setattr(text, "_OPEN_AHEAD", 3)  # batches of 3: unreadable files inside and across them
    assert text.read_blobs(files * 2) == expected * 2
    if hasattr(os, "posix_fadvise"):  # every read taken for one that waited for the disk: the rest are announced
        announced, advise = [], os.posix_fadvise
        monkeypatch.setattr(os, "posix_fadvise", lambda fd, *args: announced.append(fd) or advise(fd, *args))
        monkeypatch.setattr(text, "_SLOW_READ", float("inf"))
        assert text.read_blobs(files * 2) == expected * 2 and announced == []  # no slow read: none
        monkeypatch.setattr(text, "_SLOW_READ", -1.0)
        assert text.read_blobs(files * 2) == expected * 2
        assert len(announced) == sum(blob is not None or os.path.isdir(p) for p, blob in zip(files, expected)) * 2 - 1
    open_now, most = set(), [0]
    real_open, real_close = os.open, os.close

    def scarce_open(path, flags, *args, **kwargs):  # only two descriptors left for the reader
        if len(open_now) == 2:
            raise OSError(errno.EMFILE, "Too many open files")
        handle = real_open(path, flags, *args, **kwargs)
        open_now.add(handle)
        most[0] = max(most[0], len(open_now))
        return handle

    def counted_close(handle):
        open_now.discard(handle)
        real_close(handle)

    monkeypatch.setattr(os, "open", scarce_open)
    monkeypatch.setattr(os, "close", counted_close)
    assert text.read_blobs(files) == expected  # a file refused for want of descriptors is retried
    assert most[0] == 2 and not open_now  # every descriptor closed
