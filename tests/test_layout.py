"""The package reads as the pipeline: stage subpackages only, and no import circles."""

from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import ROOT

PACKAGE = ROOT / "hbb2obb"
# Beside the stages, the things the stages share: the Boxes type, the exceptions that map to exit
# statuses, and the worker processes of every --jobs (they die with the command); and for type
# checkers, the PEP 561 marker and the stub of the lazy root's names.
ROOT_FILES = {"__init__.py", "boxes.py", "errors.py", "processes.py", "py.typed", "__init__.pyi"}
STAGES = {
    "io",
    "geometry",
    "frames",
    "scoring",
    "detection",
    "gates",
    "analysis",
    "sweeps",
    "converters",
    "plotting",
    "report",
    "synthetic",
    "view",
    "api",
    "cli",
}

# Imports each module first, in a state where no hbb2obb module is loaded yet: a circle between
# two modules fails when either is imported first, whichever way the rest of the suite ran.
IMPORT_EACH_ALONE = r"""
import importlib, sys
failures = []
for name in sys.argv[1:]:
    for loaded in [m for m in sys.modules if m == "hbb2obb" or m.startswith(("hbb2obb.", "hbb2obb_launch"))]:
        del sys.modules[loaded]
    try:
        importlib.import_module(name)
    except Exception as exc:
        failures.append(f"{name}: {type(exc).__name__}: {exc}")
print("\n".join(failures))
"""


def module_names() -> list[str]:
    names = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__main__":
            continue  # running it is its whole purpose
        names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def test_the_root_holds_only_stage_subpackages_and_the_shared_files():
    entries = {p.name for p in PACKAGE.iterdir() if p.name != "__pycache__"}
    files = {name for name in entries if (PACKAGE / name).is_file()}
    folders = entries - files
    assert files == ROOT_FILES
    assert folders == STAGES
    assert all((PACKAGE / folder / "__init__.py").is_file() for folder in folders)


def test_every_module_imports_on_its_own():
    names = module_names()
    assert len(names) > 60
    proc = subprocess.run([sys.executable, "-c", IMPORT_EACH_ALONE, *names], capture_output=True, text=True,
                          cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == ""


def test_no_module_imports_itself_through_others():
    """No import cycle between modules of any kind: grimp sees imports inside functions and under
    ``TYPE_CHECKING`` too, which a cycle test by importing each module alone cannot."""
    grimp = pytest.importorskip("grimp", reason="grimp comes with import-linter (the [test] extra)")
    graph = grimp.build_graph("hbb2obb")
    cycles = []
    for module in sorted(graph.modules):
        for imported in graph.find_modules_directly_imported_by(module):
            back = None if module == imported else graph.find_shortest_chain(importer=imported, imported=module)
            if back is not None:
                cycles.append(" -> ".join(back + (imported,)))
    assert cycles == []
