"""One writer per output folder at a time: a lock file holding who writes there.

Two runs writing into one folder lose each other's work (two sweeps: each other's points in
``results.yaml``; two conversions: a folder of frames from both, under one record), so a
command takes a lock file in its output folder before it reads what an earlier run left there
and keeps it until it has finished. The file holds the holder's pid, host and start time, for
the message the second run gets. The lock itself is an exclusive ``flock`` on the file, which
the kernel drops when its process dies in any way (``kill -9`` included), so a lock left by a
dead process never blocks; the pid is checked too (on the same host), for filesystems where
``flock`` does nothing.

A folder the lock had to create is removed again on release when nothing was written into it,
so a run refused before its first file leaves no empty folder behind.
"""

from __future__ import annotations

import datetime
import errno
import json
import os
import socket
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from hbb2obb.errors import InputError

#: The lock file of a folder that ``hbb2obb`` or ``hbb2obb-convert`` writes labels into (one name:
#: the two commands exclude each other too).
CONVERSION_LOCK = ".hbb2obb-convert.lock"


class LockedError(InputError):
    """Another live process holds the folder's lock (exit status 2): the folder is an output
    that cannot be used now, an input error as the Python API raises it."""


class OutputFolderError(InputError):
    """The output folder cannot be made or written (a file of its name, no permission; exit status 2)."""


def blocking_file(folder) -> Optional[Path]:
    """The file that stands where ``folder`` or one of its parents should be, or ``None``.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (root / "notes").write_text("x")
    >>> blocking_file(root / "notes" / "out") == root / "notes", blocking_file(root / "out")
    (True, None)
    >>> import shutil; shutil.rmtree(root)
    """
    return next((p for p in (Path(folder), *Path(folder).parents) if p.exists() and not p.is_dir()), None)


def _process_start(pid: int) -> Optional[int]:
    """When ``pid`` started, in clock ticks since boot (Linux); ``None`` when unknown."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) is in parentheses and may hold spaces: split after it.
    fields = stat.rpartition(")")[2].split()
    try:
        return int(fields[19])  # field 22 of the whole line
    except (IndexError, ValueError):
        return None


def _alive(pid: int, start: Optional[int]) -> bool:
    """Whether process ``pid`` runs on this host and is the one that started at ``start``."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # somebody else's process: it exists
        pass
    now = _process_start(pid)
    return start is None or now is None or now == start  # a reused pid started later


def describe_holder(holder: dict) -> str:
    """``pid 123 on host-a since 2026-12-01 20:31:52`` from a lock file's content."""
    return (f"pid {holder.get('pid', '?')} on {holder.get('host', '?')} "
            f"since {holder.get('started', '?')}")


def _read_holder(handle) -> dict:
    handle.seek(0)
    try:
        holder = json.loads(handle.read() or "{}")
    except ValueError:
        return {}
    return holder if isinstance(holder, dict) else {}


@dataclass
class FolderLock:
    """The lock of one output folder; use as a context manager, or :meth:`acquire` / :meth:`release`.

    ``name`` is the lock file's name in ``folder``; ``holder`` says what holds such a lock
    (``"sweep"``, ``"conversion"``) and ``hint`` what else the refused person may do, both for
    the refusal's message. ``notes`` collects what a person should hear (a dead holder's lock
    taken over); the CLI prints them as warnings.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp()) / "out"
    >>> with FolderLock(folder, ".demo.lock") as lock:
    ...     (folder / ".demo.lock").is_file()
    True
    >>> folder.exists()  # created by the lock, nothing written into it: removed again
    False
    >>> folder.parent.rmdir()
    """

    folder: Path
    name: str = ".hbb2obb.lock"
    holder: str = "run"
    hint: str = "wait for it to finish"
    notes: list = field(default_factory=list)
    _handle: Optional[object] = None
    _created: bool = False

    @property
    def path(self) -> Path:
        return Path(self.folder) / self.name

    def acquire(self):
        """Take the lock, or raise :class:`LockedError` naming the live holder."""
        import fcntl

        while True:
            try:
                if not Path(self.folder).is_dir():
                    Path(self.folder).mkdir(parents=True, exist_ok=True)
                    self._created = True
                handle = open(self.path, "a+", encoding="utf-8")
            except FileNotFoundError:
                continue  # the run that created the folder removed it again just now: make it anew
            except OSError as exc:  # a file where the folder should be, no permission, a full disk
                blocking = blocking_file(self.folder)
                if blocking is not None:
                    raise OutputFolderError(f"{blocking}: a file, not a folder: give a folder to write into") from None
                raise OutputFolderError(f"{self.folder}: cannot write here ({exc.strerror or exc})") from None
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                holder = _read_holder(handle)
                handle.close()
                if exc.errno in (errno.EAGAIN, errno.EACCES):
                    raise LockedError(self._refusal(holder)) from None
                raise
            try:
                same_file = os.fstat(handle.fileno()).st_ino == os.stat(self.path).st_ino
            except FileNotFoundError:
                same_file = False
            if same_file:
                break
            handle.close()  # the holder removed the file between our open and our flock: try again
        holder = _read_holder(handle)
        if holder and holder.get("host") == socket.gethostname() and holder.get("pid") != os.getpid() \
                and isinstance(holder.get("pid"), int) and _alive(holder["pid"], holder.get("pid_start")):
            handle.close()  # a live process that flock did not stop (a filesystem without flock)
            raise LockedError(self._refusal(holder))
        if holder:
            self.notes.append(f"{self.folder}: took over the lock of a {self.holder} that is gone "
                              f"({describe_holder(holder)})")
        handle.seek(0)
        handle.truncate()
        handle.write(json.dumps({"pid": os.getpid(), "host": socket.gethostname(),
                                 "started": datetime.datetime.now().isoformat(timespec="seconds"),
                                 "pid_start": _process_start(os.getpid())}) + "\n")
        handle.flush()
        self._handle = handle
        self.acquired()
        return self

    def acquired(self) -> None:
        """What a kind of lock does once it holds the folder (nothing here)."""

    def _refusal(self, holder: dict) -> str:
        return (f"{self.folder} is in use by another {self.holder} ({describe_holder(holder)}); {self.hint}. "
                f"If that process is gone, delete {self.path}")

    def releasing(self) -> None:
        """What a kind of lock does before it lets the folder go (nothing here)."""

    def release(self) -> None:
        """Remove the lock file, then drop the lock (no-op when not held); a folder the lock
        created and nothing was written into is removed."""
        if self._handle is None:
            return
        self.releasing()
        try:
            self.path.unlink()  # while still locked, so nobody can take a file that is going away
        except FileNotFoundError:
            pass
        self._handle.close()
        self._handle = None
        if self._created:
            try:
                Path(self.folder).rmdir()  # only when empty
            except OSError:
                pass

    def __enter__(self):
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()
