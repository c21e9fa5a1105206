"""Living beside the reference tool: both installed in one environment, in either order.

The reference (``hbb2obb`` 1.12.0) and this toolkit share the import name ``hbb2obb``. These
tests install real wheels with pip into throw-away virtual environments: ours (regular and
editable) and a stand-in for the reference laid out as its wheel is (``hbb2obb/__init__.py``,
``__version__.py``, a ``cli.py`` module whose ``main_hbb2obb_*`` functions are the console-script
targets of all seven of its commands). After each install order every command in the
environment must either work or exit 2 with one line on stderr that says what happened; never a
traceback.
"""

from __future__ import annotations

import base64
import hashlib
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from hbb2obb import __version__

from conftest import ROOT

REFERENCE_COMMANDS = ("hbb2obb", "hbb2obb-eval", "hbb2obb-analyze", "hbb2obb-optimize", "hbb2obb-convert",
                      "hbb2obb-detect", "hbb2obb-view")
OUR_COMMANDS = ("hbb2obb", "hbb2obb-eval", "hbb2obb-analyze", "hbb2obb-optimize", "hbb2obb-view")
FAKE_REFERENCE_SAYS = "reference-tool-stand-in"

FAKE_CLI = f'''
import sys
from .__version__ import __version__

def _run(name):
    print("{FAKE_REFERENCE_SAYS}", name, __version__)
    return 0

''' + "\n".join(f"def main_{c.replace('-', '_')}():\n    return _run({c!r})\n" for c in REFERENCE_COMMANDS)


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def build_fake_reference_wheel(folder: Path) -> Path:
    """A wheel named and laid out as hbb2obb 1.12.0's, whose commands print who they are."""
    files = {
        "hbb2obb/__init__.py": b'from .__version__ import __version__\n\n__all__ = ["__version__", "cli"]\n',
        "hbb2obb/__version__.py": b'__version__ = "1.12.0"\n',
        "hbb2obb/cli.py": FAKE_CLI.encode(),
        "hbb2obb/analysis.py": b'"""The reference has an analysis module where we have a package."""\n',
        "hbb2obb-1.12.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: hbb2obb\nVersion: 1.12.0\n",
        "hbb2obb-1.12.0.dist-info/WHEEL": (
            b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        ),
        "hbb2obb-1.12.0.dist-info/top_level.txt": b"hbb2obb\n",
        "hbb2obb-1.12.0.dist-info/entry_points.txt": (
            "[console_scripts]\n"
            + "".join(f"{c} = hbb2obb.cli:main_{c.replace('-', '_')}\n" for c in REFERENCE_COMMANDS)
        ).encode(),
    }
    record = [_record_line(name, data) for name, data in files.items()] + ["hbb2obb-1.12.0.dist-info/RECORD,,"]
    files["hbb2obb-1.12.0.dist-info/RECORD"] = ("\n".join(record) + "\n").encode()
    wheel = folder / "hbb2obb-1.12.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return wheel


def copy_source(target: Path) -> Path:
    """What a build needs of this checkout, copied so the build leaves nothing in the work tree."""
    for name in ("hbb2obb", "hbb2obb_launch"):
        shutil.copytree(ROOT / name, target / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, target / name)
    return target


def run(args, **kwargs):
    return subprocess.run(args, capture_output=True, text=True, timeout=300, **kwargs)


@pytest.fixture(scope="module")
def wheels(tmp_path_factory):
    """Our wheel, our editable wheel (pointing at a copy of the source) and the stand-in's."""
    pytest.importorskip("setuptools.build_meta")
    base = tmp_path_factory.mktemp("clash")
    out = base / "wheels"
    out.mkdir()
    source = copy_source(base / "src")
    build = ("import sys, setuptools.build_meta as b; "
             "print(getattr(b, sys.argv[1])(sys.argv[2]))")
    found = {}
    for hook in ("build_wheel", "build_editable"):
        proc = run([sys.executable, "-c", build, hook, str(out)], cwd=source)
        assert proc.returncode == 0, proc.stderr[-2000:]
        found[hook] = out / proc.stdout.strip().splitlines()[-1]
    return {"ours": found["build_wheel"], "ours-editable": found["build_editable"],
            "reference": build_fake_reference_wheel(out), "base": base}


def make_env(folder: Path) -> Path:
    """A virtual environment without pip of its own, seeing this test run's packages after its own.

    Our commands need click, numpy and the rest; a ``.pth`` line appends the running
    interpreter's site-packages after the new environment's own, so whatever gets installed into
    the new environment wins, as it would in a real one.
    """
    proc = run([sys.executable, "-m", "venv", "--without-pip", str(folder)])
    assert proc.returncode == 0, proc.stderr
    purelib = run([str(folder / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"])
    site = Path(purelib.stdout.strip())
    ours = [p for p in sys.path if p.endswith("site-packages")]
    (site / "zz_parent_site.pth").write_text("\n".join(ours) + "\n")
    return folder


def pip_install(env: Path, wheel: Path) -> None:
    proc = run([sys.executable, "-m", "pip", "--python", str(env / "bin" / "python"), "install", "--quiet",
                "--no-deps", "--no-index", "--force-reinstall", str(wheel)])
    assert proc.returncode == 0, proc.stderr[-2000:]


def commands_in(env: Path) -> dict[str, subprocess.CompletedProcess]:
    """``--version`` of every hbb2obb* command the environment has, run outside this checkout."""
    environment = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    results = {}
    for script in sorted((env / "bin").glob("hbb2obb*")):
        results[script.name] = run([str(script), "--version"], cwd=env, env=environment)
    return results


def assert_works_or_explains(results: dict) -> None:
    for name, proc in results.items():
        assert "Traceback" not in proc.stderr, (name, proc.stderr)
        if proc.returncode == 0:
            continue
        assert proc.returncode == 2, (name, proc.returncode, proc.stderr)
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"{name}: error: "), (name, proc.stderr)
        assert "hbb2obb-toolkit" in lines[0] and "Living beside the reference tool" in lines[0], lines[0]


ORDERS = {
    "ours, then the reference": ("ours", "reference"),
    "the reference, then ours": ("reference", "ours"),
    "ours editable, then the reference": ("ours-editable", "reference"),
    "the reference, then ours editable": ("reference", "ours-editable"),
}


@pytest.mark.parametrize("order", list(ORDERS))
def test_every_command_works_or_says_why(wheels, order, tmp_path):
    env = make_env(tmp_path / "env")
    for what in ORDERS[order]:
        pip_install(env, wheels[what])
    results = commands_in(env)
    assert set(results) >= set(REFERENCE_COMMANDS)
    assert_works_or_explains(results)

    ours_last = ORDERS[order][-1].startswith("ours")
    for name in OUR_COMMANDS:
        proc = results[name]
        if order == "the reference, then ours":
            # Our files and scripts were written last over a package directory that merges both.
            assert proc.returncode == 0 and proc.stdout.strip() == f"{name} {__version__}", proc
        elif order == "ours editable, then the reference":
            # The reference's package shadows our tree and its scripts replaced ours: it runs whole.
            assert proc.returncode == 0 and FAKE_REFERENCE_SAYS in proc.stdout, proc
        else:
            assert proc.returncode == 2, (name, proc.stdout, proc.stderr)
            assert "is the reference tool's (hbb2obb 1.12.0)" in proc.stderr, proc.stderr
    for name in ("hbb2obb-detect",):  # the reference's only command we have no command of that name for
        proc = results[name]
        if order == "the reference, then ours":
            assert proc.returncode == 2 and "is a command of the reference tool" in proc.stderr, proc.stderr
        elif ours_last or order == "ours editable, then the reference":
            assert proc.returncode == 0 and FAKE_REFERENCE_SAYS in proc.stdout, proc
        else:
            assert proc.returncode == 2 and "is the reference tool's" in proc.stderr, proc.stderr


def test_the_fix_the_message_gives_works(wheels, tmp_path):
    """After a clash, the printed remedy (uninstall both, reinstall ours) gives working commands."""
    env = make_env(tmp_path / "env")
    pip_install(env, wheels["ours"])
    pip_install(env, wheels["reference"])
    message = commands_in(env)["hbb2obb-eval"].stderr
    assert "pip uninstall -y hbb2obb hbb2obb-toolkit && pip install hbb2obb-toolkit" in message
    proc = run([sys.executable, "-m", "pip", "--python", str(env / "bin" / "python"), "uninstall", "-y", "--quiet",
                "hbb2obb", "hbb2obb-toolkit"])
    assert proc.returncode == 0, proc.stderr
    pip_install(env, wheels["ours"])
    results = commands_in(env)
    assert {name: results[name].stdout.strip() for name in OUR_COMMANDS} == {
        n: f"{n} {__version__}" for n in OUR_COMMANDS
    }
