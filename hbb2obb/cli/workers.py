"""Where a command's independent tasks run: ``--jobs`` local processes or a ``--scheduler`` Dask cluster.

Shared by ``hbb2obb-optimize`` (grid points) and ``hbb2obb`` (frames): the flags are checked
the same way and the executor is the sweep's (:mod:`hbb2obb.sweeps.executors`,
:mod:`hbb2obb.sweeps.dask_executor`).
"""

from __future__ import annotations

import contextlib
import logging
from typing import Callable, Optional

import click

from hbb2obb.errors import UsageError
from hbb2obb.sweeps.dask_executor import (
    DaskExecutor,
    dask_client,
    describe_cluster,
    parse_scheduler,
    require_distributed,
)
from hbb2obb.sweeps.executors import make_executor


def check_scheduler(ctx, scheduler: Optional[str], retries: Optional[int], tasks: str = "grid points"):
    """``--scheduler`` parsed (Dask must be installed) and the flags that go with it checked;
    ``None`` without it. ``retries`` is ``None`` for a command without ``--retries``; ``tasks``
    names what the workers run, for the messages."""
    def given(name):
        return ctx.get_parameter_source(name) == click.core.ParameterSource.COMMANDLINE

    if scheduler is None:
        if retries is not None and given("retries"):
            raise UsageError(f"--retries applies to {tasks} run on a Dask cluster: use it with --scheduler")
        return None
    if given("jobs"):
        raise UsageError(f"--jobs runs local processes; with --scheduler the cluster's workers run the {tasks} "
                         "(local:N for N local workers)")
    if retries is not None and retries < 0:
        raise UsageError(f"--retries must be 0 or more, got {retries}")
    spec = parse_scheduler(scheduler)
    require_distributed()
    return spec


@contextlib.contextmanager
def task_executor(program: str, jobs: int, scheduler, retries: int, failed: Optional[Callable] = None):
    """Local processes, or a Dask cluster (its dashboard address on stderr) for ``--scheduler``.

    ``failed(call, exception)`` decides what a task Dask gave up on yields (or raises); the
    default is a grid point's failed record.
    """
    if scheduler is None:
        yield make_executor(jobs)
        return
    logging.getLogger("distributed").setLevel(logging.CRITICAL)  # no tracebacks: failures are reported as ours
    with dask_client(scheduler, retries) as client:
        click.echo(f"{program}: {describe_cluster(client)}", err=True)
        yield DaskExecutor(client, retries, failed)
