"""Never overwrite files a person cares about: a folder's record of what the toolkit wrote there.

``hbb2obb`` writes into label folders by default (``IMG_SOURCE/../labels_obb``), where ground
truth or somebody's edits may already be. :class:`OutputGuard` keeps, in each folder it writes
to, a small JSON file (``.hbb2obb-written.json``) with the SHA-256 of every file it wrote. A
later run may replace a file whose content still has the recorded digest (its own earlier
output); any other existing file is refused unless overwriting was asked for.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from pathlib import Path

from hbb2obb.errors import InputError, UsageError
from hbb2obb.io.atomic import write_text_atomic

MANIFEST_NAME = ".hbb2obb-written.json"
SAVE_EVERY_SECONDS = 2.0  # a kill loses at most this much of the record (those files need --overwrite)


def file_digest(path: Path) -> str:
    """SHA-256 of a file's bytes, as hex."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class OutputGuard:
    """Check the targets of a run before it writes, then record what it wrote.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "gt.txt").write_text("0 1 2 3 4 5 6 7 8\\n")
    >>> guard = OutputGuard()
    >>> [p.name for p in guard.foreign([folder / "gt.txt", folder / "new.txt"])]
    ['gt.txt']
    >>> _ = (folder / "new.txt").write_text("ours\\n"); guard.wrote(folder / "new.txt"); guard.save()
    >>> OutputGuard().foreign([folder / "new.txt"])
    []
    >>> import shutil; shutil.rmtree(folder)
    """

    def __init__(self):
        self._manifests: dict[Path, dict] = {}
        self._ours: dict[Path, dict] = {}  # per folder, what this run wrote: merged into the record on save
        self._dirty: set[Path] = set()
        self._saved_at = time.monotonic()

    def _manifest(self, folder: Path) -> dict:
        folder = Path(folder)
        if folder not in self._manifests:
            self._manifests[folder] = _read_record(folder)
        return self._manifests[folder]

    def foreign(self, targets) -> list[Path]:
        """The existing files among ``targets`` that the toolkit did not write (or that changed since)."""
        found = []
        for target in targets:
            target = Path(target)
            if not target.exists():
                continue
            recorded = self._manifest(target.parent).get(target.name)
            if not target.is_file() or recorded is None or recorded != file_digest(target):
                found.append(target)
        return found

    def refuse_foreign(self, targets, flag: str = "--overwrite") -> None:
        """Raise :class:`UsageError` when a target exists that the toolkit did not write."""
        found = self.foreign(targets)
        if found:
            folders = sorted({str(p.parent) for p in found})
            raise UsageError(f"{', '.join(folders)} already hold(s) {len(found)} file(s) this run would replace and "
                             f"that hbb2obb did not write (first: {found[0]}); pass {flag} to replace them, "
                             "or choose another output folder")

    def wrote(self, path: Path) -> None:
        """Record a file just written; the record goes to disk every few seconds and on :meth:`save`."""
        path = Path(path)
        digest = file_digest(path)
        self._manifest(path.parent)[path.name] = digest
        self._ours.setdefault(path.parent, {})[path.name] = digest
        self._dirty.add(path.parent)
        if time.monotonic() - self._saved_at > SAVE_EVERY_SECONDS:
            self.save()

    def __enter__(self) -> "OutputGuard":
        return self

    def __exit__(self, kind, *exc_info) -> None:
        """Leaving a ``with`` block saves the record, however the block ended (a failed gate, a broken write).

        When the block ended on an error, that error is the one reported: a record that cannot
        be written then is left as it is.
        """
        if kind is None or issubclass(kind, SystemExit):
            self.save()
            return
        try:
            self.save()
        except InputError:
            pass

    def save(self) -> None:
        """Write every changed folder's record atomically.

        The record is read again and this run's files merged into it, under a lock on the
        folder: another run writing into the same folder since this one read the record keeps
        its entries (written from the copy read at the start, the last run to save dropped
        the others' files, and their next run took them for a user's).
        """
        for folder in sorted(self._dirty):
            try:
                with _folder_locked(folder):
                    merged = {**_read_record(folder), **self._ours.get(folder, {})}
                    text = json.dumps({"written_by": "hbb2obb", "files": merged}, indent=0, sort_keys=True)
                    write_text_atomic(folder / MANIFEST_NAME, text + "\n")
                self._manifests[folder] = merged
            except OSError as exc:  # the outputs are written; only the record of them is not
                raise InputError(f"{folder / MANIFEST_NAME}: cannot record the files written to {folder} "
                                 f"({exc.strerror or exc}); a later run will need --overwrite to replace them"
                                 ) from None
        self._dirty.clear()
        self._saved_at = time.monotonic()


def _read_record(folder: Path) -> dict:
    """``{file name: digest}`` of a folder's record; empty when it has none or it cannot be read."""
    try:
        data = json.loads((Path(folder) / MANIFEST_NAME).read_text(encoding="utf-8"))
        files = data.get("files") if isinstance(data, dict) else None
    except (OSError, ValueError):
        files = None
    return dict(files) if isinstance(files, dict) else {}


@contextlib.contextmanager
def _folder_locked(folder: Path):
    """An exclusive ``flock`` on the folder itself while the block runs (no lock file is left in it);
    no lock where the platform or the filesystem has none."""
    try:
        import fcntl
    except ImportError:  # Windows
        yield
        return
    try:
        handle = os.open(folder, os.O_RDONLY)
    except OSError:
        yield
        return
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX)
        except OSError:
            pass  # a filesystem without flock: merged all the same, only not under a lock
        yield
    finally:
        os.close(handle)  # closing the descriptor drops the lock
