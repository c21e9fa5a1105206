"""One sweep per run folder at a time, and the run folder's scratch space.

Two sweeps writing one ``results.yaml`` lose each other's points, so a sweep takes
``<run folder>/.sweep.lock`` (a :class:`~hbb2obb.io.folder_lock.FolderLock`) before it writes
anything and keeps it until it has finished. While it holds the lock a sweep owns the folder's
scratch space (``.scratch``), so it may clean what a killed sweep left there.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from hbb2obb.io.folder_lock import FolderLock, LockedError, describe_holder

__all__ = ["LOCK_NAME", "SCRATCH_NAME", "LockedError", "RunLock", "describe_holder"]

LOCK_NAME = ".sweep.lock"
SCRATCH_NAME = ".scratch"


@dataclass
class RunLock(FolderLock):
    """The lock of one run folder; ``notes`` also says when a killed sweep's scratch space was removed.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> with RunLock(folder) as lock:
    ...     (folder / LOCK_NAME).is_file()
    True
    >>> (folder / LOCK_NAME).exists()
    False
    >>> folder.rmdir()
    """

    name: str = LOCK_NAME
    holder: str = "sweep"
    hint: str = "wait for it to finish, or use another --run_name"

    def acquired(self) -> None:
        scratch = Path(self.folder) / SCRATCH_NAME
        if scratch.exists():
            shutil.rmtree(scratch, ignore_errors=True)
            self.notes.append(f"{scratch}: removed the scratch space an interrupted sweep left")

    def releasing(self) -> None:
        shutil.rmtree(Path(self.folder) / SCRATCH_NAME, ignore_errors=True)
