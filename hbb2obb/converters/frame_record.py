"""The record of a conversion's frames, so a run stopped part-way can be resumed.

``hbb2obb`` keeps, in the OBB folder, ``.hbb2obb-frames.jsonl``: a first line with the run's
settings, then one JSON line per converted frame with the size and modification time of its
image and prompt file, the SHA-256 of each file it gets (labels, confidences, polygons,
picture) and what it adds to the summary (boxes, fallbacks, warnings).

A frame's line is appended *before* its files are renamed into place, so every file the run
put in place is named in the record with its digest, even when the run is killed the next
instant. A frame is complete when its line is there, its inputs are unchanged and each of its
files exists with the recorded digest; a resumed run (``--resume``) skips complete frames and
replays their lines, so its summary and provenance are those of an uninterrupted run.

Each line is one ``write`` of the whole line to a file opened for appending, so a kill leaves
at most a torn last line, which is read as absent (its frame is converted again).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from hbb2obb.errors import UsageError
from hbb2obb.io.atomic import write_text_atomic
from hbb2obb.io.written import file_digest

RECORD_NAME = ".hbb2obb-frames.jsonl"


def input_stamp(path: Path) -> list:
    """``[size, mtime_ns]`` of an input file: what tells a resumed run that the input is unchanged."""
    stat = os.stat(path)
    return [stat.st_size, stat.st_mtime_ns]


def _plain(values):
    """``values`` as they read back from JSON (tuples as lists, keys as strings)."""
    return json.loads(json.dumps(values, sort_keys=True))


@dataclass
class PreviousRun:
    """What a record on disk holds: the settings of its run and the last line of each frame."""

    settings: Optional[dict]
    entries: dict


def read_record(path: Path) -> Optional[PreviousRun]:
    """The record at ``path``, or ``None`` when there is none (or it is not one of ours).

    Lines that do not read as a frame's (a torn last line) are left out.
    """
    try:
        lines = Path(path).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    header = _parse(lines[0]) if lines else None
    if not isinstance(header, dict) or header.get("written_by") != "hbb2obb" or "settings" not in header:
        return None
    entries = {}
    for line in lines[1:]:
        entry = _parse(line)
        if isinstance(entry, dict) and isinstance(entry.get("frame"), str) and isinstance(entry.get("files"), dict):
            entries[entry["frame"]] = entry
    return PreviousRun(header["settings"], entries)


def _parse(line: str):
    try:
        return json.loads(line)
    except ValueError:
        return None


def is_complete(entry: Optional[dict], inputs: list, targets: dict) -> bool:
    """Whether a frame's record ``entry`` says it is done: same inputs, every file in ``targets``
    (``{kind: path}``) present with the recorded digest."""
    if not entry or entry.get("inputs") != _plain(inputs) or set(entry["files"]) != set(targets):
        return False
    try:
        return all(Path(path).is_file() and file_digest(path) == entry["files"][kind]
                   for kind, path in targets.items())
    except OSError:
        return False


def files_written_by(entry: dict, targets: dict) -> list[Path]:
    """The files among ``targets`` whose bytes are still those ``entry`` recorded (the run wrote them)."""
    found = []
    for kind, path in targets.items():
        recorded = entry.get("files", {}).get(kind)
        try:
            if recorded and Path(path).is_file() and file_digest(path) == recorded:
                found.append(Path(path))
        except OSError:
            continue
    return found


def check_resumable(previous: Optional[PreviousRun], settings: dict, path: Path) -> None:
    """Raise :class:`UsageError` when the record at ``path`` was made with other settings."""
    if previous is None or previous.settings == _plain(settings):
        return
    old, new = previous.settings or {}, _plain(settings)
    differing = sorted(key for key in set(old) | set(new) if old.get(key) != new.get(key))
    raise UsageError(f"--resume: {path} records a run with other settings ({', '.join(differing) or 'format'} "
                     "differ); run without --resume to convert every frame again, or give the same settings")


class FrameRecord:
    """The record being written: started with the run's settings (and the frames kept from an
    earlier run), then one line per frame as its files are about to be put in place."""

    def __init__(self, path: Path, settings: dict, kept: list):
        self.path = Path(path)
        lines = [{"written_by": "hbb2obb", "settings": _plain(settings)}] + list(kept)
        write_text_atomic(self.path, "".join(json.dumps(line, sort_keys=True) + "\n" for line in lines))
        self._handle = os.open(self.path, os.O_WRONLY | os.O_APPEND)

    def add(self, frame: str, inputs: list, digests: dict, outcome: dict) -> None:
        """Record a frame whose files (``{kind: sha256}``) are about to be written."""
        line = json.dumps({"frame": frame, "inputs": _plain(inputs), "files": digests, "outcome": outcome},
                          sort_keys=True) + "\n"
        os.write(self._handle, line.encode("utf-8"))  # one call: a kill leaves the line whole or torn, never mixed

    def close(self) -> None:
        if self._handle is not None:
            os.close(self._handle)
            self._handle = None

    def __enter__(self):
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()
