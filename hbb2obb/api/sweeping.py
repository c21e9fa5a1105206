"""The steps of a sweep that :func:`~hbb2obb.sweep` and ``hbb2obb-optimize`` share.

Before it writes, a sweep checks that the output folder's record is a sweep's
(:func:`~hbb2obb.sweeps.benchmark_record.check_record_is_ours`) and takes the lock of every run
folder (:class:`~hbb2obb.sweeps.lock.RunLock`: a second sweep of the same folder is refused);
then it writes each run's ``run_config.yaml`` and measures the grid points, rewriting
``results.yaml`` after each. The command adds its log, bars, summaries and plots
around these steps; a benchmark file is several runs through the same steps at once.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Callable, Optional

from hbb2obb.sweeps.executors import Executor
from hbb2obb.sweeps.lock import RunLock
from hbb2obb.sweeps.runner import (
    RESULTS_NAME,
    RUN_CONFIG_NAME,
    SweepOutcome,
    SweepPlan,
    check_resumable,
    is_complete,
    measured_records,
    read_yaml,
    run_config_document,
    run_sweeps,
    write_yaml_atomic,
)

__all__ = ["PendingRun", "locked", "measure", "prepare"]


@dataclass
class PendingRun:
    """A run with points to measure: its plan, its earlier ``results.yaml`` and how many of its
    points that holds already."""

    plan: SweepPlan
    previous: Optional[dict]
    reused: int


@contextlib.contextmanager
def locked(plans: Sequence[SweepPlan]) -> Iterator[list[str]]:
    """Hold the lock of every run folder of ``plans`` while the block runs.

    Yields the notes a person should hear (a dead sweep's lock taken over, its scratch space
    removed). A folder another live sweep holds raises
    :class:`~hbb2obb.sweeps.lock.LockedError` (an :class:`~hbb2obb.InputError`) naming the
    lock file and its holder, before anything is written.
    """
    with contextlib.ExitStack() as stack:
        notes: list[str] = []
        for plan in plans:
            notes += stack.enter_context(RunLock(plan.folder)).notes
        yield notes


def prepare(plans: Sequence[SweepPlan], *, resume: bool, command_line: str, jobs: int,
            extra_config: Optional[dict] = None,
            on_plan: Optional[Callable[[SweepPlan, Optional[int]], None]] = None) -> list[PendingRun]:
    """The runs of ``plans`` with points to measure, each with its ``run_config.yaml`` written.

    With ``resume`` a run keeps the points its ``results.yaml`` holds (refused when they were
    measured with other settings: :func:`~hbb2obb.sweeps.runner.check_resumable`), and a run
    holding them all is left out. ``on_plan(plan, reused)`` follows each plan, ``reused``
    ``None`` for a complete one. Call it while holding the runs' locks (:func:`locked`).
    """
    pending = []
    for plan in plans:
        results = plan.folder / RESULTS_NAME
        previous = None
        if resume and results.is_file():
            previous = read_yaml(results)
            check_resumable(plan, previous)
            if is_complete(plan, previous):
                if on_plan is not None:
                    on_plan(plan, None)
                continue
        reused = len(measured_records(plan, previous))
        plan.folder.mkdir(parents=True, exist_ok=True)
        config = run_config_document(plan, command_line, jobs)
        config.update(extra_config or {})
        write_yaml_atomic(plan.folder / RUN_CONFIG_NAME, config)
        if on_plan is not None:
            on_plan(plan, reused)
        pending.append(PendingRun(plan, previous, reused))
    return pending


def measure(pending: Sequence[PendingRun], executor: Executor,
            on_point: Optional[Callable[[SweepPlan, dict, Optional[dict]], None]] = None) -> list[SweepOutcome]:
    """Measure the missing points of every pending run through one executor
    (:func:`~hbb2obb.sweeps.runner.run_sweeps`); the outcomes in the order of ``pending``."""
    return run_sweeps([run.plan for run in pending], executor, [run.previous for run in pending], on_point)
