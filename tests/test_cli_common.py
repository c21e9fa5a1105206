"""What every command shares: the allocator setting applied where each command starts."""

import platform
import subprocess
import sys

import pytest

GLIBC = sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc"

# Report whether the settings were applied (twice: the second call must agree), and whether a
# 16 MB block then comes from the heap (glibc's default maps a block that large on its own).
PROBE = r"""
import ctypes
from hbb2obb.cli import common
applied = common.keep_freed_memory()
again = common.keep_freed_memory()
libc = ctypes.CDLL("libc.so.6")
libc.malloc.restype = ctypes.c_void_p
block = libc.malloc(16 << 20)
heap = [line.split()[0] for line in open("/proc/self/maps") if line.rstrip().endswith("[heap]")]
low, high = (int(part, 16) for part in heap[0].split("-"))
print(applied, again, low <= block < high)
"""


def _probe(env_extra=None):
    env = {"PATH": "/usr/bin:/bin"}
    env.update(env_extra or {})
    run = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, env=env, check=True)
    return run.stdout.split()


@pytest.mark.skipif(not GLIBC, reason="the setting is glibc's")
def test_freed_memory_is_kept_for_reuse():
    # applied, and a 16 MB allocation is served from the heap
    assert _probe() == ["True", "True", "True"]


@pytest.mark.skipif(not GLIBC, reason="the setting is glibc's")
@pytest.mark.parametrize("name, value", [("GLIBC_TUNABLES", "glibc.malloc.mmap_threshold=131072"),
                                         ("MALLOC_ARENA_MAX", "2")])
def test_the_users_malloc_settings_win(name, value):
    # nothing applied: a 16 MB allocation is mapped on its own, as glibc does by default
    assert _probe({name: value}) == ["False", "False", "False"]
