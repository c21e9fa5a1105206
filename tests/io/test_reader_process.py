"""The helper process that reads label files ahead: the bytes read_blobs reads, and it never outlives its reader."""

import pytest

from hbb2obb.io.reader_process import ReaderGone, ReaderProcess
from hbb2obb.io.text import read_blobs


@pytest.fixture
def files(tmp_path):
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


def test_helper_reads_the_bytes_read_blobs_reads(files):
    helper = ReaderProcess()
    try:
        for group in (files, files[::-1], files[:1]):
            helper.submit(group)
            assert helper.collect() == read_blobs(group)
        assert read_blobs(files)[-2:] == [None, None]  # a folder and a missing file cannot be read
    finally:
        helper.close()
    assert helper._process.poll() is not None


def test_helper_that_died_is_reported_and_ended(files):
    helper = ReaderProcess()
    helper.submit(files)
    helper._process.kill()
    helper._process.wait()
    with pytest.raises(ReaderGone):
        helper.collect()
    with pytest.raises(ReaderGone):
        helper.submit(files)


def test_paths_the_pipe_cannot_carry_are_refused(files):
    helper = ReaderProcess()
    try:
        with pytest.raises(ReaderGone):
            helper.submit([files[0], "a\0b"])
        with pytest.raises(ReaderGone):
            helper.submit([])
        helper.submit(files[:2])  # still serving
        assert helper.collect() == read_blobs(files[:2])
    finally:
        helper.close()


def test_helper_stops_when_its_reader_goes_without_collecting(files):
    helper = ReaderProcess()
    helper.submit(files)  # a reply waiting in the pipe, never read
    helper.close()
    assert helper._process.returncode is not None  # ended and waited for: no zombie left


def test_files_read_a_batch_at_a_time_and_within_the_descriptors_left(files, monkeypatch):
    import errno
    import os

    import hbb2obb.io.reader_process as reader_process

    expected = [None if not os.path.isfile(p) else open(p, "rb").read() for p in files]
    monkeypatch.setattr(reader_process, "_OPEN_AHEAD", 3)  # batches of 3: unreadable files inside and across them
    assert reader_process.read_files(files * 2) == expected * 2
    if hasattr(os, "posix_fadvise"):  # every read taken for one that waited for the disk: the rest are announced
        announced, advise = [], os.posix_fadvise
        monkeypatch.setattr(os, "posix_fadvise", lambda fd, *args: announced.append(fd) or advise(fd, *args))
        monkeypatch.setattr(reader_process, "_SLOW_READ", float("inf"))
        assert reader_process.read_files(files * 2) == expected * 2 and announced == []  # no slow read: none
        monkeypatch.setattr(reader_process, "_SLOW_READ", -1.0)
        assert reader_process.read_files(files * 2) == expected * 2
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
    assert reader_process.read_files(files) == expected  # a file refused for want of descriptors is retried
    assert most[0] == 2 and not open_now  # every descriptor closed


@pytest.mark.parametrize("executable", ["", "/opt/app/bin/blender"])
def test_no_helper_is_started_but_a_python_interpreter(monkeypatch, executable):
    import sys

    monkeypatch.setattr(sys, "executable", executable)
    with pytest.raises(ReaderGone):
        ReaderProcess()
