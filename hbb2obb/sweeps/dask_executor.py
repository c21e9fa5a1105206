"""Grid points on a Dask cluster: the executor behind ``hbb2obb-optimize --scheduler``.

A sweep's grid points are independent, so :class:`DaskExecutor` submits each one as a Dask task
(``dask.distributed``): on a scheduler at an address (``tcp://10.0.0.5:8786``, one started by
``dask scheduler`` or by dask-jobqueue, Kubernetes, a cloud service) or on a
``LocalCluster`` of worker processes (``local:N``). The task is
:func:`hbb2obb.sweeps.runner.run_grid_point`: it converts into a temporary folder on the worker
(its own temp folder, not the run folder's scratch space) and scores there, so only the small
record dict travels back. Inputs are read by path, so every worker needs the same paths as the
client (a shared filesystem, or the same container image and volume).

The executor has the shape of the local ones, ``executor(function, calls) -> (index, result)``
as results arrive, so :func:`hbb2obb.sweeps.runner.run_sweeps` writes ``results.yaml`` on the client as
tasks complete and ``--resume`` works as for a local sweep. A grid point that fails is tried
again, a bounded number of times, before it is recorded as failed:

- a converter error (a record with ``status: failed``) is raised on the worker as
  :class:`PointFailed`, so Dask's ``retries=`` runs it again;
- a lost worker (killed, out of memory) makes the scheduler run the task elsewhere, up to its
  ``distributed.scheduler.allowed-failures`` (for ``local:N`` set to the retries too); past
  that the point is recorded as failed with Dask's reason.

Nothing here imports Dask until a cluster is asked for, so the toolkit runs without the
``dask`` extra installed.
"""

from __future__ import annotations

import contextlib
import importlib.util
import logging
import os
import re
import uuid
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Iterator, Optional

from hbb2obb.errors import Hbb2ObbError, InputError, UsageError
from hbb2obb.sweeps.runner import plain

DASK_INSTALL_HINT = "pip install 'hbb2obb-toolkit[dask]'"
DEFAULT_RETRIES = 2
CONNECT_TIMEOUT = 30.0  # seconds to reach a scheduler before giving up
_ADDRESS = re.compile(r"^([a-z][a-z0-9+.-]*://)?[^\s:/]+:\d+$|^[a-z][a-z0-9+.-]*://\S+$")


@dataclass(frozen=True)
class SchedulerSpec:
    """Where grid points run: a scheduler ``address``, or (address ``None``) a local cluster.

    Examples
    --------
    >>> parse_scheduler("local:2")
    SchedulerSpec(address=None, n_workers=2)
    >>> parse_scheduler("tcp://10.0.0.5:8786").address
    'tcp://10.0.0.5:8786'
    """

    address: Optional[str]
    n_workers: int = 0

    @property
    def is_local(self) -> bool:
        return self.address is None

    def describe(self) -> str:
        """The ``--scheduler`` spelling: ``local:2`` or the address."""
        return f"local:{self.n_workers}" if self.is_local else self.address


def parse_scheduler(text: str) -> SchedulerSpec:
    """``local`` (a worker per core), ``local:N``, or a scheduler address (``tcp://host:port``).

    Anything else is a :class:`UsageError`, raised before Dask is imported.
    """
    text = text.strip()
    if text == "local" or text.startswith("local:"):
        count = text.partition(":")[2]
        if not count:
            return SchedulerSpec(None, os.cpu_count() or 1)
        if count.isdigit() and int(count) >= 1:
            return SchedulerSpec(None, int(count))
        raise UsageError(f"--scheduler {text!r}: local:N needs a whole number of workers, at least 1")
    if _ADDRESS.match(text):
        return SchedulerSpec(text)
    raise UsageError(f"--scheduler {text!r}: expected a scheduler address such as tcp://10.0.0.5:8786, "
                     "or local[:N] for N local worker processes")


def require_distributed() -> None:
    """Raise :class:`UsageError` (with the install command) unless ``dask.distributed`` imports."""
    try:
        import distributed  # noqa: F401
    except ImportError:
        raise UsageError(f"--scheduler needs Dask, which is not installed: {DASK_INSTALL_HINT}") from None


def with_absolute_paths(plan):
    """``plan`` with its input paths absolute, so a worker started in another folder finds them,
    and its points converting in each worker's own temp folder (workers need not see the run folder).

    Symbolic links are kept as given (a mount point may differ between machines behind them).
    """
    def absolute(path):
        return None if path is None else Path(os.path.abspath(path))

    inputs = replace(plan.inputs, img_source=absolute(plan.inputs.img_source), gt_dir=absolute(plan.inputs.gt_dir),
                     hbb_dir=absolute(plan.inputs.hbb_dir))
    evaluation = replace(plan.evaluation, map_path=absolute(plan.evaluation.map_path))
    return replace(plan, inputs=inputs, evaluation=evaluation, scratch_in_run_folder=False)


@contextlib.contextmanager
def dask_client(spec: SchedulerSpec, retries: int = DEFAULT_RETRIES, timeout: float = CONNECT_TIMEOUT):
    """A connected ``distributed.Client``, closed (with its local cluster) on exit.

    A local cluster has ``spec.n_workers`` worker processes of one thread each on 127.0.0.1,
    its dashboard on a free port, one task at a time per worker, and a lost worker's task run
    again up to ``retries`` times. An address that does not answer within ``timeout`` seconds is
    an :class:`InputError`.
    """
    require_distributed()
    import dask
    from distributed import Client, LocalCluster

    if spec.is_local:
        # One grid point per worker at a time: a dead worker then takes no queued point with it.
        settings = {"distributed.scheduler.allowed-failures": retries, "distributed.scheduler.worker-saturation": 1.0}
        with dask.config.set(settings):
            cluster = LocalCluster(n_workers=spec.n_workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                                   dashboard_address="127.0.0.1:0", silence_logs=logging.CRITICAL)
        with cluster, Client(cluster, set_as_default=False) as client:
            yield client
        return
    try:
        client = Client(spec.address, timeout=timeout, set_as_default=False)
    except (OSError, TimeoutError) as exc:
        raise InputError(f"--scheduler {spec.address}: no Dask scheduler answered ({exc})") from None
    except (MemoryError, ValueError, TypeError, EOFError) as exc:
        # something else answers there (a web server, a proxy): Dask reads its reply as a message
        # length and fails in odd ways, e.g. allocating exabytes
        raise InputError(f"--scheduler {spec.address}: what answers there is no Dask scheduler "
                         f"({type(exc).__name__})") from None
    with client:
        yield client


def describe_cluster(client) -> str:
    """One line for people: where the scheduler is, its workers, and the dashboard address."""
    workers = client.scheduler_info().get("workers") or {}
    threads = sum(int(w.get("nthreads", 0)) for w in workers.values())
    line = f"Dask scheduler {client.scheduler.address}: {len(workers)} worker(s), {threads} thread(s); dashboard "
    try:
        link = client.dashboard_link
    except (KeyError, TypeError):  # a scheduler without an HTTP server
        link = None
    if link is None:
        return line + "not served by this scheduler"
    if getattr(client, "cluster", None) is not None and importlib.util.find_spec("bokeh") is None:
        return line + f"{link} (it needs bokeh>=3.1: {DASK_INSTALL_HINT})"  # our own cluster, in this environment
    return line + link


class PointFailed(Exception):
    """A grid point whose record says ``status: failed``, raised on the worker so Dask retries it.

    The record of the last attempt travels back inside the exception.
    """

    def __init__(self, record: dict):
        super().__init__(record)
        self.record = record

    def __str__(self) -> str:
        return str(self.record.get("error", "failed"))


def run_attempt(function: Callable, *args):
    """One try of ``function(*args)`` on a worker; a failed record is raised as :class:`PointFailed`."""
    result = function(*args)
    if isinstance(result, dict) and result.get("status") == "failed":
        raise PointFailed(result)
    return result


def failure_record(call: tuple, reason: str) -> dict:
    """The record of a grid point whose task Dask gave up on, in :func:`run_grid_point`'s layout.

    ``call`` is the point's argument tuple ``(converter, options, params, inputs, evaluation)``.
    """
    return {**{name: plain(value) for name, value in call[2].items()}, "execution_time": 0.0, "status": "failed",
            "error": reason}


def failure_reason(exc: BaseException) -> str:
    """Why Dask gave up on a task, in words: a lost worker, or the exception the task raised."""
    if type(exc).__name__ == "KilledWorker":
        attempts = getattr(exc, "allowed_failures", 0) + 1
        worker = getattr(getattr(exc, "last_worker", None), "address", "?")
        return (f"worker lost: the worker running this point died {attempts} time(s) (last {worker}); "
                "see the worker logs")
    return f"{type(exc).__name__}: {exc}"


def point_failed(call: tuple, exc: BaseException) -> dict:
    """A grid point's record once Dask gave up on its task: the last failed record, or one saying why."""
    return exc.record if isinstance(exc, PointFailed) else failure_record(call, failure_reason(exc))


class DaskExecutor:
    """Submit every call as a Dask task on ``client``; yield ``(index, result)`` as tasks finish.

    ``calls`` are :func:`hbb2obb.sweeps.runner.run_grid_point` argument tuples. A task is tried up to
    ``retries`` more times when its point fails; then the failed record (or one saying why Dask
    gave up, e.g. a lost worker) is yielded, so the sweep completes. Other tasks (a converter's
    frames) pass ``failed(call, exception)``: what to yield, or raise, for a task Dask gave up on.
    Stopping the iteration early (an error, Ctrl-C) cancels the tasks not yet finished.

    Examples
    --------
    >>> with dask_client(parse_scheduler("local:2")) as client:          # doctest: +SKIP
    ...     outcome = run_sweep(plan, DaskExecutor(client, retries=2))
    """

    def __init__(self, client, retries: int = DEFAULT_RETRIES, failed: Optional[Callable] = None):
        if retries < 0:
            raise UsageError(f"--retries must be 0 or more, got {retries}")
        self.client = client
        self.retries = retries
        self.failed = failed or point_failed

    def __call__(self, function: Callable, calls: list) -> Iterator[tuple]:
        if not calls:
            return
        from distributed import as_completed

        name = getattr(function, "__name__", "task")
        futures = {}
        for index, args in enumerate(calls):
            future = self.client.submit(run_attempt, function, *args, retries=self.retries, pure=False,
                                        key=f"{name}-{uuid.uuid4().hex}")
            futures[future] = index
        try:
            for future in as_completed(futures, loop=self.client.loop):
                index = futures.pop(future)  # released once yielded: the cluster frees the result
                yield index, self._result(future, calls[index])
        finally:
            pending = [f for f in futures if not f.done()]
            if pending:
                with contextlib.suppress(OSError):  # best effort: the scheduler may be the thing that is gone
                    self.client.cancel(pending)

    def _result(self, future, call: tuple):
        if future.status == "finished":
            return future.result()
        if future.status == "error":
            return self.failed(call, future.exception())
        raise Hbb2ObbError(f"a grid point's Dask task was {future.status} (the scheduler restarted or the "
                           "connection was lost); the points finished so far are on disk: --resume measures the rest")
