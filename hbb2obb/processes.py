"""Child processes that end with the command that started them.

A worker of a process pool (``--jobs``) blocks on its task queue, whose writing end it also
holds (a fork copies every descriptor), so when the command is killed (``kill``, a CI timeout,
``kill -9``) nothing ever wakes it: it waits forever, or, with a task in hand, goes on writing.
On Linux the kernel can kill a process when its parent dies (``PR_SET_PDEATHSIG``); every pool
of the toolkit and every external converter command asks for that. Elsewhere the call does not
exist and nothing is asked.
"""

from __future__ import annotations

import ctypes
import os
import signal
from concurrent.futures import ProcessPoolExecutor


def _find_prctl():
    """The C ``prctl``, looked up once in the parent (before any fork: the child only calls it)."""
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


_PRCTL = _find_prctl()
_PR_SET_PDEATHSIG = 1


def die_with_parent(parent: int | None = None) -> None:
    """Have the kernel kill this process (SIGKILL) when its parent dies; where that cannot be
    asked for, do nothing. ``parent``: the parent's process id at the fork; a process whose
    parent died before the request exits at once."""
    if _PRCTL is None:
        return
    _PRCTL(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if parent is not None and os.getppid() != parent:
        os._exit(1)  # the parent is gone already: the kernel will not send the signal now


#: ``preexec_fn`` for :class:`subprocess.Popen`: the child dies with this process (``None``
#: where that cannot be asked for, so that no hook runs in the child for nothing).
DIE_WITH_PARENT = die_with_parent if _PRCTL is not None else None


def worker_pool(jobs: int) -> ProcessPoolExecutor:
    """A pool of ``jobs`` worker processes that die with this process.

    Examples
    --------
    >>> with worker_pool(2) as pool:
    ...     list(pool.map(abs, [-1, 2, -3]))
    [1, 2, 3]
    """
    return ProcessPoolExecutor(max_workers=jobs, initializer=die_with_parent, initargs=(os.getpid(),))
