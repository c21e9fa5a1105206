"""Console-script entry points that first check which ``hbb2obb`` package this environment holds.

The reference tool (the ``hbb2obb`` distribution, 1.12.0) and this toolkit (``hbb2obb-toolkit``)
share the import name ``hbb2obb``, and pip installs one over the other without a word:

* the reference installed after a regular install of ours replaces our ``hbb2obb/__init__.py``
  and our console scripts, while our subpackages (``hbb2obb/cli/`` among them) stay;
* the reference installed beside an *editable* install of ours shadows our source tree entirely
  (setuptools' editable finder comes after the regular path search), so ``import hbb2obb.cli.eval``
  fails before a line of ours runs.

A check inside ``hbb2obb`` cannot catch the second case, so the console scripts start here, in a
module of our distribution that no other package provides. When ``hbb2obb`` is not ours, the
command prints one line saying what happened and how to fix it, and exits 2. The first case is
caught by :mod:`hbb2obb.cli` itself, which the reference's own scripts import.

This module imports nothing heavy: it sits on the start-up path of every command.
"""

from __future__ import annotations

import gc
import os
import sys

#: Our distribution's name, and the marker our ``hbb2obb/__init__.py`` carries.
DISTRIBUTION = "hbb2obb-toolkit"
EXIT_USAGE = 2
README_SECTION = "README: 'Living beside the reference tool'"


def _program() -> str:
    return os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else "hbb2obb"


def _reinstall_hint() -> str:
    """The pip command that puts our package back, editable from its source tree when it was."""
    try:
        import json
        from importlib.metadata import PackageNotFoundError, distribution

        text = distribution(DISTRIBUTION).read_text("direct_url.json")
        info = json.loads(text) if text else {}
    except (ImportError, PackageNotFoundError, ValueError, OSError):
        info = {}
    url = info.get("url", "") if isinstance(info, dict) else ""
    if info.get("dir_info", {}).get("editable") and url.startswith("file://"):
        return f"pip install -e {url[len('file://'):]}"
    return f"pip install {DISTRIBUTION}"


def _reference_version() -> str:
    try:
        from importlib.metadata import version

        return version("hbb2obb")
    except Exception:  # noqa: BLE001 - a version string is only decoration in the message
        return "unknown version"


def installation_problem() -> str | None:
    """Why the ``hbb2obb`` package here is not this toolkit's, or ``None`` when it is.

    Imports ``hbb2obb`` (the package ``__init__`` only: ours is light, the reference's reads its
    version) and looks for the marker our ``__init__`` defines.
    """
    try:
        import hbb2obb
    except Exception as exc:  # noqa: BLE001 - whatever went wrong, say it in one line
        return f"the hbb2obb package cannot be imported ({type(exc).__name__}: {exc})"
    if getattr(hbb2obb, "__distribution__", None) == DISTRIBUTION:
        return None
    where = os.path.dirname(getattr(hbb2obb, "__file__", None) or "?")
    return (f"the 'hbb2obb' package here ({where}) is the reference tool's (hbb2obb {_reference_version()}), "
            f"installed over {DISTRIBUTION}: both use the import name 'hbb2obb' and cannot share one environment. "
            f"Fix: 'pip uninstall -y hbb2obb {DISTRIBUTION} && {_reinstall_hint()}', and keep the reference "
            f"in a virtual environment of its own ({README_SECTION})")


def exit_with(message: str) -> None:
    """Print ``program: error: message`` on stderr, one line, and exit with the usage status."""
    sys.stderr.write(f"{_program()}: error: {message}\n")
    sys.stderr.flush()
    raise SystemExit(EXIT_USAGE)


def ensure_ours() -> None:
    """Exit with the one-line explanation when ``hbb2obb`` is not this toolkit's package."""
    problem = installation_problem()
    if problem is not None:
        exit_with(problem)


def reference_command_called(entry_point: str) -> None:
    """A console script of the reference tool ran against our ``hbb2obb`` package: explain, exit 2.

    Its scripts call ``hbb2obb.cli.main_hbb2obb_<command>``; our :mod:`hbb2obb.cli` is a package
    of its own and has no such functions.
    """
    command = entry_point.replace("main_", "", 1).replace("_", "-")
    exit_with(f"'{command}' is a command of the reference tool (hbb2obb), but the 'hbb2obb' package in this "
              f"environment is {DISTRIBUTION}'s, installed over it. Run the reference from a virtual environment "
              f"of its own ({README_SECTION})")


# glibc's mallopt parameter numbers (malloc.h) and the values set: 32 MB, 256 MB
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
_MMAP_THRESHOLD, _TRIM_THRESHOLD = 32 << 20, 256 << 20


def keep_freed_memory() -> bool:
    """Let glibc keep freed memory for reuse instead of handing it back to the system at once.

    Scoring allocates and frees numpy temporaries of a few hundred kB to a few MB by the thousand.
    By default glibc maps each one fresh and unmaps it when freed, so every one faults its pages
    in again. Does nothing where the C library is not glibc, or when the user chose malloc settings
    (``GLIBC_TUNABLES``, ``MALLOC_*_``). Returns whether the settings were applied.
    """
    if not sys.platform.startswith("linux"):
        return False
    if "GLIBC_TUNABLES" in os.environ or any(name.startswith("MALLOC_") for name in os.environ):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6")
        return bool(libc.mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD)
                    and libc.mallopt(_M_TRIM_THRESHOLD, _TRIM_THRESHOLD))
    except (OSError, AttributeError):  # musl or another C library: keep its defaults
        return False


def end_at_once(main) -> None:
    """Run a click command in standalone mode, flush the output, and end the process at once.

    A large run leaves hundreds of thousands of Python objects behind (the metric dict's per-pair
    lists); freeing them one by one at interpreter exit is work for nothing. The exit status is
    the command's; only what Python does after that (atexit hooks, freeing memory) is skipped,
    so this serves only commands that leave nothing to atexit hooks (no worker pools).
    """
    try:
        main()
        status = 0
    except SystemExit as done:
        status = done.code
    if status is None:
        status = 0
    elif not isinstance(status, int):  # sys.exit("message"): printed as Python prints it
        sys.stderr.write(f"{status}\n")
        status = 1
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):  # a closed pipe: Python's own exit would report 120
        status = status or 120
    os._exit(status)


def _launch(module: str, attribute: str, *, ends_at_once: bool = False):
    """Start a command as a process of its own (the console scripts; tests call the commands directly).

    What a process does here and no library call should:

    * ``keep_freed_memory`` (glibc keeps freed blocks for reuse);
    * the cycle collector is off while the command is imported: importing numpy, click and ours
      creates some 100,000 objects and no garbage, yet the collector would walk them dozens of
      times; ``gc.freeze`` then moves them out of the way of the run's collections;
    * with ``ends_at_once``, :func:`end_at_once`.

    Each of these alone buys little; together they are worth keeping (docs/performance.md).
    """
    ensure_ours()
    keep_freed_memory()
    from importlib import import_module

    gc.disable()
    try:
        command = getattr(import_module(module), attribute)
    finally:
        gc.enable()
    gc.freeze()
    if ends_at_once:
        end_at_once(command)
    return command()


def convert() -> None:
    """``hbb2obb``: the built-in converter."""
    return _launch("hbb2obb.cli.convert", "main")


def evaluate() -> None:
    """``hbb2obb-eval``."""
    return _launch("hbb2obb.cli.eval", "main", ends_at_once=True)


def analyze() -> None:
    """``hbb2obb-analyze``."""
    return _launch("hbb2obb.cli.analyze", "main")


def optimize() -> None:
    """``hbb2obb-optimize``."""
    return _launch("hbb2obb.cli.optimize", "main")


def convert_formats() -> None:
    """``hbb2obb-convert``: annotations between label formats."""
    return _launch("hbb2obb.cli.formats", "main")


def view() -> None:
    """``hbb2obb-view``: a review page of frames, boxes and their errors."""
    return _launch("hbb2obb.cli.view", "main")
