"""Executors: call a function on a list of argument tuples, yield ``(index, result)`` as results arrive.

The sweep (:func:`hbb2obb.sweeps.runner.run_sweeps`) takes any of them, in any order of results:
:func:`serial_executor` in this process, :class:`ProcessExecutor` over local processes, and
:class:`hbb2obb.sweeps.dask_executor.DaskExecutor` on a cluster.
"""

from __future__ import annotations

from concurrent.futures import as_completed
from typing import Callable, Iterator

from hbb2obb.processes import worker_pool
from hbb2obb.scoring.evaluate import resolve_jobs

Executor = Callable[[Callable, list], Iterator[tuple]]


def serial_executor(function: Callable, calls: list) -> Iterator[tuple]:
    """Call ``function(*args)`` for each argument tuple in turn; yield ``(index, result)``."""
    for index, args in enumerate(calls):
        yield index, function(*args)


class ProcessExecutor:
    """Spread calls over ``jobs`` processes; yield ``(index, result)`` as each one finishes.

    Stopping the iteration early (an error, Ctrl-C) cancels the calls not yet started.
    """

    def __init__(self, jobs: int):
        self.jobs = jobs

    def __call__(self, function: Callable, calls: list) -> Iterator[tuple]:
        if not calls:
            return
        with worker_pool(min(self.jobs, len(calls))) as pool:
            futures = {pool.submit(function, *args): index for index, args in enumerate(calls)}
            try:
                for future in as_completed(futures):
                    # Dropped once yielded: a result (a frame's picture) is not kept until the last one is in.
                    yield futures.pop(future), future.result()
            finally:
                for future in futures:
                    future.cancel()


def make_executor(jobs: int) -> Executor:
    """Serial for one job, a process pool otherwise (``0``: every core)."""
    jobs = resolve_jobs(jobs)
    return serial_executor if jobs == 1 else ProcessExecutor(jobs)
