"""The output-folder lock: a folder it created and nothing was written into is removed again;
any other folder is left as it was."""

from __future__ import annotations

import pytest

from hbb2obb.io.folder_lock import FolderLock, LockedError, OutputFolderError


def test_a_folder_the_lock_made_goes_when_empty_and_stays_when_written(tmp_path):
    made = tmp_path / "a" / "b"
    with FolderLock(made, ".x.lock"):
        assert (made / ".x.lock").is_file()
    assert not made.exists() and (tmp_path / "a").is_dir()  # only the folder itself, not its parents
    with FolderLock(made, ".x.lock"):
        (made / "out.txt").write_text("kept\n")
    assert sorted(p.name for p in made.iterdir()) == ["out.txt"]


def test_a_folder_that_was_there_is_kept_even_empty(tmp_path):
    with FolderLock(tmp_path, ".x.lock"):
        pass
    assert tmp_path.is_dir() and list(tmp_path.iterdir()) == []


def test_the_refusal_names_what_holds_it_and_what_to_do(tmp_path):
    with FolderLock(tmp_path, ".x.lock"):
        with pytest.raises(LockedError, match=r"in use by another conversion \(pid \d+ on .*\); give another "
                                              r"--obb_dir\. If that process is gone, delete .*\.x\.lock"):
            FolderLock(tmp_path, ".x.lock", "conversion", "give another --obb_dir").acquire()
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("below", ["", "sub/deeper"])
def test_a_file_where_the_folder_should_be_is_named_not_a_traceback(tmp_path, below):
    blocking = tmp_path / "out"
    blocking.write_text("somebody's file\n")
    with pytest.raises(OutputFolderError, match=rf"^{blocking}: a file, not a folder"):
        FolderLock(blocking / below if below else blocking).acquire()
    assert blocking.read_text() == "somebody's file\n"
    assert OutputFolderError.exit_code == 2
