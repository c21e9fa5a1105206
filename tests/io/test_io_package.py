"""The ``hbb2obb.io`` package namespace: every public name still imports, each reader only when asked for."""

import importlib
import json
import subprocess
import sys

import pytest

import hbb2obb.io as io_package

READER_MODULES = ("hbb2obb.io.dota", "hbb2obb.io.yolo_hbb", "hbb2obb.io.yolo_obb", "hbb2obb.io.text",
                  "hbb2obb.io.images", "hbb2obb.io.labelmap")


@pytest.mark.parametrize("name", sorted(io_package._EXPORTS))
def test_every_public_name_is_the_defining_modules_object(name):
    namespace: dict = {}
    exec(f"from hbb2obb.io import {name}", namespace)  # the spelling callers use
    defining = importlib.import_module(io_package._EXPORTS[name])
    assert namespace[name] is getattr(defining, name)
    assert getattr(io_package, name) is namespace[name]


def test_all_and_dir_list_the_public_names():
    assert io_package.__all__ == sorted(io_package._EXPORTS)
    assert set(io_package._EXPORTS) <= set(dir(io_package))


@pytest.mark.parametrize("name", ["read_nothing", "", "_EXPORTS_"])
def test_an_unknown_name_is_an_attribute_error(name):
    with pytest.raises(AttributeError, match="has no attribute"):
        getattr(io_package, name)


def test_submodules_still_import_through_the_package():
    from hbb2obb.io import numeric_text

    assert numeric_text.__name__ == "hbb2obb.io.numeric_text"


@pytest.mark.parametrize("first_use, loaded", [
    ("", []),
    ("hbb2obb.io.ImageSizes", ["hbb2obb.io.images"]),
    ("hbb2obb.io.read_dota", ["hbb2obb.io.dota", "hbb2obb.io.text"]),
    ("hbb2obb.io.read_yolo_hbb", ["hbb2obb.io.text", "hbb2obb.io.yolo_hbb"]),
], ids=["nothing", "image-sizes", "dota", "yolo-hbb"])
def test_the_package_imports_a_reader_only_when_it_is_used(first_use, loaded):
    """In a fresh interpreter: ``import hbb2obb.io`` loads no reader; a name loads its module (and what it needs)."""
    code = (f"import json, sys, hbb2obb.io\n{first_use}\n"
            f"print(json.dumps(sorted(m for m in sys.modules if m in {READER_MODULES!r})))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    found = json.loads(proc.stdout)
    assert [m for m in found if m in loaded] == sorted(loaded)
    if first_use != "hbb2obb.io.read_dota":
        assert "hbb2obb.io.dota" not in found
    if first_use != "hbb2obb.io.read_yolo_hbb":
        assert "hbb2obb.io.yolo_hbb" not in found
    if not first_use:
        assert found == []
