"""The public API as a user's type checker and a user's code see it: names, hints, py.typed, mypy."""

from __future__ import annotations

import ast
import inspect
import subprocess
import sys

import pytest

import hbb2obb

from conftest import ROOT

PUBLIC_MODULES = ["hbb2obb/__init__.pyi", "hbb2obb/api", "hbb2obb/boxes.py", "hbb2obb/errors.py"]


def test_the_stub_declares_every_lazy_name_and_only_those():
    stub = ast.parse((ROOT / "hbb2obb" / "__init__.pyi").read_text())
    declared = {alias.asname for node in stub.body if isinstance(node, ast.ImportFrom) for alias in node.names}
    assert declared == set(hbb2obb._EXPORTS)
    assert set(hbb2obb.__all__) == set(hbb2obb._EXPORTS) | {"__version__"}
    assert (ROOT / "hbb2obb" / "py.typed").is_file()


@pytest.mark.parametrize("name", sorted(hbb2obb._EXPORTS))
def test_every_public_function_is_typed(name):
    value = getattr(hbb2obb, name)
    if inspect.isclass(value) or not callable(value):
        return
    signature = inspect.signature(value)  # hints as written: some name types imported for checkers only
    parameters = [p for p in signature.parameters.values() if p.kind is not p.VAR_KEYWORD]
    missing = [p.name for p in parameters if p.annotation is p.empty] + (
        ["return"] if signature.return_annotation is signature.empty else [])
    if name in ("calculate_obb_iou", "orientation_error", "evaluate_obb"):  # the reference tool's, kept as they are
        return
    assert missing == [], name


USE = '''
import hbb2obb
from hbb2obb import Boxes, EvalSettings, Evaluation, evaluate, read_labels

gt = read_labels("gt")
run: Evaluation = evaluate(gt, {"a": Boxes([[[0, 0], [1, 0], [1, 1], [0, 1]]], class_id=[0])},
                           EvalSettings(iou_threshold=0.5))
value: float = run.metrics["avg_iou"]
hbb2obb.convert("frame.png", [[0, 0, 4, 2]]).corners.shape
'''


def test_mypy_is_clean_on_the_public_api_and_catches_a_misuse(tmp_path):
    pytest.importorskip("mypy", reason="mypy comes with the [test] extra")
    (tmp_path / "use.py").write_text(USE)
    (tmp_path / "misuse.py").write_text("import hbb2obb\nhbb2obb.evaluate(1, 2, iou=3).metrix\n")
    command = [sys.executable, "-m", "mypy", "--no-incremental", "--follow-imports=silent",
               "--ignore-missing-imports", "--cache-dir", str(tmp_path / "cache")]
    clean = subprocess.run(command + PUBLIC_MODULES + [str(tmp_path / "use.py")], cwd=ROOT, capture_output=True,
                           text=True, timeout=300)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    misuse = subprocess.run(command + [str(tmp_path / "misuse.py")], cwd=ROOT, capture_output=True, text=True,
                            timeout=300)
    assert misuse.returncode == 1 and '"Evaluation" has no attribute "metrix"' in misuse.stdout


def test_importing_the_eval_command_loads_no_other_part_of_the_api():
    code = ("import sys, hbb2obb.cli.eval; print(sorted(m for m in sys.modules if m.startswith('hbb2obb.api') "
            "or m.startswith('hbb2obb.analysis') or m in ('pandas', 'hbb2obb.gates.junit', 'hbb2obb.gates.summary')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['hbb2obb.api', 'hbb2obb.api.evaluation', 'hbb2obb.api.inputs']"


def test_every_public_name_stays_what_it_is_after_the_subpackages_are_imported():
    """A subpackage named like a public function would replace it on the package once imported
    (``hbb2obb.sweep`` became the ``sweep/`` package after the first sweep ran)."""
    import importlib
    import pkgutil

    import hbb2obb

    exported = {name: getattr(hbb2obb, name) for name in hbb2obb.__all__}
    for module in pkgutil.iter_modules(hbb2obb.__path__):
        importlib.import_module(f"hbb2obb.{module.name}")
    assert {name for name in exported if getattr(hbb2obb, name) is not exported[name]} == set()
