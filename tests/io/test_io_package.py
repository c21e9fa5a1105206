"""The ``hbb2obb.io`` package namespace: every public name imports from the package, and so do submodules."""

import importlib

import pytest

import hbb2obb.io as io_package


@pytest.mark.parametrize("name", io_package.__all__)
def test_every_public_name_is_the_defining_modules_object(name):
    namespace: dict = {}
    exec(f"from hbb2obb.io import {name}", namespace)  # the spelling callers use
    value = namespace[name]
    defining = importlib.import_module(value.__module__)
    assert defining.__name__.startswith("hbb2obb.io.") and getattr(defining, name) is value


def test_submodules_still_import_through_the_package():
    from hbb2obb.io import numeric_text

    assert numeric_text.__name__ == "hbb2obb.io.numeric_text"
