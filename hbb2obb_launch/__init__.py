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


def _launch(module: str, attribute: str):
    ensure_ours()
    from importlib import import_module

    return getattr(import_module(module), attribute)()


def convert() -> None:
    """``hbb2obb``: the built-in converter."""
    return _launch("hbb2obb.cli.convert", "main")


def evaluate() -> None:
    """``hbb2obb-eval``."""
    return _launch("hbb2obb.cli.eval", "main")


def analyze() -> None:
    """``hbb2obb-analyze``."""
    return _launch("hbb2obb.cli.analyze", "main")


def optimize() -> None:
    """``hbb2obb-optimize``."""
    return _launch("hbb2obb.cli.optimize", "main")


def convert_formats() -> None:
    """``hbb2obb-convert``: annotations between label formats."""
    return _launch("hbb2obb.cli.formats", "main")
