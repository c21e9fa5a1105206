"""Worker pools and external commands whose processes end with the command that started them."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from hbb2obb import processes
from hbb2obb.processes import worker_pool

# A parent that starts a pool of two workers, hands each a task that never ends, prints the
# workers' process ids and waits: what a command does when it is killed in the middle of --jobs.
PARENT = r"""
import os, sys, time
from hbb2obb.processes import worker_pool

pool = worker_pool(2)
futures = [pool.submit(time.sleep, 600) for _ in range(2)]
while len(pool._processes) < 2:
    time.sleep(0.01)
print(" ".join(str(pid) for pid in pool._processes), flush=True)
time.sleep(600)
"""


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(")")[-1].split()[0] != "Z"  # a zombie has ended
    except FileNotFoundError:
        return False


@pytest.mark.skipif(processes.DIE_WITH_PARENT is None or not os.path.isdir("/proc"),
                    reason="the kernel cannot kill a child with its parent here (Linux only)")
@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGKILL])
def test_the_workers_of_a_killed_command_end_with_it(how):
    parent = subprocess.Popen([sys.executable, "-c", PARENT], stdout=subprocess.PIPE, text=True)
    try:
        workers = [int(pid) for pid in parent.stdout.readline().split()]
        assert len(workers) == 2 and all(alive(pid) for pid in workers)
        parent.send_signal(how)
        parent.wait(timeout=10)
        deadline = time.monotonic() + 10
        while any(alive(pid) for pid in workers) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not any(alive(pid) for pid in workers)
    finally:
        parent.kill()
        parent.wait()


def test_a_pool_works_as_a_pool():
    with worker_pool(2) as pool:
        assert sorted(pool.map(abs, [-3, 1, -2])) == [1, 2, 3]
