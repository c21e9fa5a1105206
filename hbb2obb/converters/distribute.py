"""Spread ``hbb2obb``'s frames over processes or a Dask cluster, write their files, resume a stopped run.

The frames of a conversion are independent: each one is a task
(:func:`hbb2obb.converters.frame_tasks.convert_one`) handed to an *executor*, any callable
``executor(function, calls)`` that yields ``(index, result)`` as results arrive, in any order
(the sweep's: in this process, a process pool, or a Dask cluster; :mod:`hbb2obb.sweeps.executors`).
This process writes every file as its frame arrives, atomically, records it in the folder's
record of written files (:class:`hbb2obb.io.written.OutputGuard`) and in the run's record of
frames (:mod:`hbb2obb.converters.frame_record`), and returns each frame's outcome in the
frames' order, so the summary, the warnings and the provenance do not depend on which process
converted what or when: the files and the report are byte for byte those of one process.

:func:`plan_frames` reads the record an earlier run left, before anything is written:
files that run put in place are taken into the folder's record of written files (so they are
not refused as somebody else's), and with ``resume`` the frames it completed are skipped.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

from hbb2obb import __version__
from hbb2obb.converters.frame_record import (
    RECORD_NAME,
    FrameRecord,
    check_resumable,
    files_written_by,
    input_stamp,
    is_complete,
    read_record,
)
from hbb2obb.converters.frame_tasks import KINDS, FrameJob, FrameOutcome, convert_one
from hbb2obb.errors import InputError, UsageError
from hbb2obb.io.atomic import TEMP_SUFFIX, atomic_path
from hbb2obb.io.written import OutputGuard

# atomic_path's temporary names: ".<target name>.<8 random characters>.tmp<target suffix>"
_TEMPORARY = re.compile(r"^\.(?P<target>.+)\.[A-Za-z0-9_]{8}" + re.escape(TEMP_SUFFIX) + r"(\.[^.]*)?$")


@dataclass(frozen=True)
class Frame:
    """One frame to convert: its image, its prompt file and where each of its files goes (``{kind: path}``)."""

    image: Path
    hbb: Path
    targets: dict


def check_outputs_apart(frames: list) -> None:
    """Refuse two files of a run that are one file, and a file to write that is one of the inputs.

    Checked before anything is written, whatever ``--overwrite`` says: either would lose a file of
    the run (one output written over another; an HBB file or an image replaced while it is read).
    Folders are compared with links resolved, each folder once.

    Raises
    ------
    UsageError
        Naming the file, the two roles and the frame.
    """
    folders: dict = {}

    def where(path: Path) -> tuple:
        parent = str(path.parent)
        if parent not in folders:
            folders[parent] = os.path.realpath(parent)
        return folders[parent], path.name

    inputs = {}
    for frame in frames:
        inputs[where(frame.image)] = ("image", frame.image.stem)
        inputs[where(frame.hbb)] = ("HBB file", frame.image.stem)
    outputs = {}
    for frame in frames:
        for kind, target in frame.targets.items():
            key = where(target)
            if key in inputs:
                role, stem = inputs[key]
                raise UsageError(f"{target}: writing the {kind} file here would overwrite the {role} of frame {stem} "
                                 "being converted; give another folder")
            if key in outputs:
                raise UsageError(f"{target}: both the {outputs[key]} and the {kind} file of frame "
                                 f"{frame.image.stem}; give them different folders")
            outputs[key] = kind


@dataclass
class FramePlan:
    """The frames of a run, which of them an earlier run completed, and what to say about it."""

    frames: list
    job: FrameJob
    record_path: Path
    settings: dict
    done: dict = field(default_factory=dict)  # index -> the earlier run's record line
    stamps: list = field(default_factory=list)
    resumed: bool = False
    record_is_ours: bool = False

    @property
    def todo(self) -> list[int]:
        return [i for i in range(len(self.frames)) if i not in self.done]

    def targets_to_write(self, kinds=KINDS) -> list[Path]:
        """Every file the run will write, kind by kind in the order of ``kinds``: the files of the
        frames not complete yet, and the run's record unless an earlier run's record is there (it
        changes as it grows, so it is known by its content)."""
        todo = self.todo
        paths = [self.frames[i].targets[kind] for kind in kinds for i in todo if kind in self.frames[i].targets]
        return paths + ([] if self.record_is_ours else [self.record_path])


def plan_frames(frames: list, job: FrameJob, record_dir: Path, guard: OutputGuard, *, resume: bool = False,
                identity: Optional[dict] = None) -> FramePlan:
    """Read the record an earlier run left in ``record_dir``; nothing is written but ``guard``'s memory.

    ``identity`` adds to the settings a resumed run must match (input and output folders).
    Files the earlier run put in place are recorded in ``guard`` as written; with ``resume``
    the frames it completed with the same settings and unchanged inputs are marked done.

    Raises
    ------
    UsageError
        ``resume`` and the record was made with other settings.
    InputError
        An input file vanished since it was listed.
    """
    record_path = Path(record_dir) / RECORD_NAME
    settings = {"version": __version__, "job": job.describe(), **(identity or {})}
    try:
        stamps = [[input_stamp(f.image), input_stamp(f.hbb)] for f in frames]
    except OSError as exc:
        raise InputError(f"{exc.filename}: cannot read ({exc.strerror})") from None
    plan = FramePlan(frames, job, record_path, settings, stamps=stamps)
    previous = read_record(record_path)
    if previous is None:
        return plan
    plan.record_is_ours = True
    if resume:
        check_resumable(previous, settings, record_path)
        plan.resumed = True
    for index, frame in enumerate(frames):
        entry = previous.entries.get(frame.image.name)
        if entry is None:
            continue
        if resume and is_complete(entry, stamps[index], frame.targets):
            plan.done[index] = entry
        # Ours, whatever the settings: a later run may replace them without --overwrite.
        for path in files_written_by(entry, frame.targets):
            guard.wrote(path)
    return plan


def remove_temporaries(plan: FramePlan) -> int:
    """Delete the temporary files a killed run left beside the targets (only ours: named after a
    target of this run, in :func:`hbb2obb.io.atomic.atomic_path`'s pattern); how many."""
    names: dict[Path, set] = {}
    for frame in plan.frames:
        for path in frame.targets.values():
            names.setdefault(Path(path).parent, set()).add(Path(path).name)
    names.setdefault(plan.record_path.parent, set()).add(plan.record_path.name)
    removed = 0
    for folder, targets in names.items():
        if not folder.is_dir():
            continue
        for path in folder.glob(f".*{TEMP_SUFFIX}*"):
            match = _TEMPORARY.match(path.name)
            if match and match.group("target") in targets and path.is_file():
                path.unlink(missing_ok=True)
                removed += 1
    return removed


def run_frames(plan: FramePlan, executor: Callable, guard: OutputGuard, *, absolute: bool = False,
               on_frame: Optional[Callable[[int, FrameOutcome], None]] = None) -> list[FrameOutcome]:
    """Convert the frames not done yet through ``executor``; every frame's outcome, in the frames' order.

    ``absolute`` hands the workers absolute paths (cluster workers start in other folders);
    messages still name the files as given. ``on_frame(index, outcome)`` is called in this
    process as each frame is written (for a progress bar). A frame's files are written here,
    each atomically, after its line in the run's record.
    """
    outcomes: list[Optional[FrameOutcome]] = [None] * len(plan.frames)
    for index, entry in plan.done.items():
        outcomes[index] = FrameOutcome.from_dict(entry.get("outcome", {}))
    todo = plan.todo
    calls = []
    for index in todo:
        frame = plan.frames[index]
        image, hbb = (frame.image.absolute(), frame.hbb.absolute()) if absolute else (frame.image, frame.hbb)
        calls.append((image, hbb, plan.job, str(frame.image), str(frame.hbb)))
    kept = [plan.done[i] for i in sorted(plan.done)]
    guard.save()  # the files taken over from an earlier run's record, before that record is replaced
    with FrameRecord(plan.record_path, plan.settings, kept) as record:
        for position, result in executor(convert_one, calls):
            index = todo[position]
            frame = plan.frames[index]
            outcomes[index] = result.outcome
            if result.outcome.error is None:
                record.add(frame.image.name, plan.stamps[index], result.digests(), result.outcome.to_dict())
                for kind, data in result.files.items():
                    with atomic_path(frame.targets[kind], keep_suffix=False) as temporary:  # never a *.txt
                        temporary.write_bytes(data)
                    guard.wrote(frame.targets[kind])
            if on_frame is not None:
                on_frame(index, result.outcome)
    return outcomes
