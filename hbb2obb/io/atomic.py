"""Write a file so that a reader, or a killed run, sees the old content or the new, never half.

The text goes to a temporary file in the target's own folder (a rename across file systems is
not atomic) and is renamed over the target with :func:`os.replace`. Anything that stops the
write, an error or Ctrl-C, removes the temporary file and leaves the target as it was.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

_UMASK = os.umask(0o022)  # read once: os.umask can only be read by setting it
os.umask(_UMASK)
TEMP_SUFFIX = ".tmp"


@contextlib.contextmanager
def atomic_path(path: str | Path, keep_suffix: bool = True):
    """Yield a temporary path beside ``path``; once the block ends without error, rename it onto ``path``.

    For writers that take a file name (a figure, a CSV writer). The temporary name keeps the
    target's suffix, so a writer that picks its format from the name picks the right one; a block
    that fails, or is interrupted, removes the temporary file and leaves the target as it was.
    ``keep_suffix=False`` (writers of text or bytes, whose format is not read from the name): the
    name ends in ``.tmp``, so a temporary file that a killed process (``SIGKILL``: nothing runs
    after it) leaves in a label folder is never listed as a label file (``*.txt``) by a later run.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> target = pathlib.Path(tempfile.mkdtemp()) / "m.txt"
    >>> with atomic_path(target) as temporary:
    ...     _ = temporary.write_text("done")
    >>> target.read_text(), sorted(p.name for p in target.parent.iterdir())
    ('done', ['m.txt'])
    >>> target.unlink(); target.parent.rmdir()
    """
    path = Path(path)
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=TEMP_SUFFIX + (path.suffix if keep_suffix else ""),
                                dir=path.parent)
    os.close(fd)
    temporary = Path(name)
    try:
        yield temporary
        os.chmod(temporary, 0o666 & ~_UMASK)  # mkstemp makes it private; outputs are ordinary files
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def write_text_atomic(path: str | Path, text: str, *, encoding: str = "utf-8", durable: bool = False) -> None:
    """Replace ``path`` with ``text`` in one step.

    Parameters
    ----------
    path : path-like
        The file to write; its folder must exist.
    text : str
    encoding : str
    durable : bool
        Also flush the bytes and the rename to disk (``fsync``), so that a power cut keeps the
        old file or the new one. Off for label files, one per frame, where it would cost a disk
        round trip each; a killed process leaves no half file either way.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> write_text_atomic(folder / "a.txt", "0 1 2 3 4\\n")
    >>> (folder / "a.txt").read_text(), sorted(p.name for p in folder.iterdir())
    ('0 1 2 3 4\\n', ['a.txt'])
    >>> (folder / "a.txt").unlink(); folder.rmdir()
    """
    path = Path(path)
    with atomic_path(path, keep_suffix=False) as temporary:
        with open(temporary, "w", encoding=encoding) as handle:
            handle.write(text)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
    if durable:
        _sync_folder(path.parent)


def _sync_folder(folder: Path) -> None:
    """Flush a folder's entries (the rename) to disk where the platform allows it."""
    try:
        handle = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(handle)
    except OSError:
        pass
    finally:
        os.close(handle)
