"""Every docstring example in the package runs and prints what it shows.

The examples are the first code a reader copies; one that no longer runs is a small lie. Each
module is its own case, so a failure names the module (doctest's report says which example and
what it printed instead). Examples that write files use the temp folder, which this suite points
at a private folder removed at its end (conftest.py).
"""

import doctest
import importlib
import pkgutil

import pytest

import hbb2obb

# a package's __main__ runs its command when imported: it holds no examples
MODULES = sorted(info.name for info in pkgutil.walk_packages(hbb2obb.__path__, prefix="hbb2obb.")
                 if not info.name.endswith(".__main__"))


def test_the_package_is_walked_whole():
    assert {"hbb2obb.boxes", "hbb2obb.geometry.iou", "hbb2obb.io.text_file", "hbb2obb.cli.eval"} <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run_as_written(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS, verbose=False, report=True)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples in {name} failed (report above)"
