"""The run-folder lock: one sweep at a time, a dead holder's lock taken over, scratch cleaned."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys

import pytest

from hbb2obb.sweeps.lock import LOCK_NAME, SCRATCH_NAME, LockedError, RunLock

HOLD = """\
import sys, time
from hbb2obb.sweeps.lock import RunLock
with RunLock(sys.argv[1]):
    print("held", flush=True)
    sys.stdin.readline()
"""


def test_a_live_holder_is_refused_by_name_and_its_lock_is_free_once_it_ends(tmp_path):
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(tmp_path)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(LockedError, match=rf"in use by another sweep \(pid {holder.pid} on "
                                              rf"{socket.gethostname()} since .*delete .*{LOCK_NAME}"):
            RunLock(tmp_path).acquire()
        assert LockedError.exit_code == 2
    finally:
        holder.communicate("\n", timeout=30)
    assert not (tmp_path / LOCK_NAME).exists()
    with RunLock(tmp_path) as lock:
        assert lock.notes == [] and json.loads((tmp_path / LOCK_NAME).read_text())["pid"] == os.getpid()


def test_a_killed_holders_lock_is_taken_over_and_its_scratch_removed(tmp_path):
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(tmp_path)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "held"
    (tmp_path / SCRATCH_NAME / "hbb2obb-sweep-1").mkdir(parents=True)
    holder.kill()  # SIGKILL: no clean-up of its own
    holder.wait()
    holder.stdout.close()
    holder.stdin.close()
    assert (tmp_path / LOCK_NAME).is_file()
    with RunLock(tmp_path) as lock:
        assert any(f"took over the lock of a sweep that is gone (pid {holder.pid} on" in n for n in lock.notes)
        assert not (tmp_path / SCRATCH_NAME).exists()
    assert sorted(tmp_path.iterdir()) == []


def test_a_live_pid_on_this_host_is_respected_even_without_flock(tmp_path):
    """A lock file naming a running process of this host (here: this test's parent) refuses,
    as on a filesystem where flock does nothing; a pid that is gone is taken over."""
    (tmp_path / LOCK_NAME).write_text(json.dumps({"pid": os.getppid(), "host": socket.gethostname(),
                                                  "started": "then"}))
    with pytest.raises(LockedError, match=f"pid {os.getppid()}"):
        RunLock(tmp_path).acquire()
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    (tmp_path / LOCK_NAME).write_text(json.dumps({"pid": int(gone.stdout), "host": socket.gethostname()}))
    with RunLock(tmp_path) as lock:
        assert len(lock.notes) == 1
