"""Provenance records: how a set of labels or numbers was made, in a text file a person reads.

A record names the command that reproduces the output, the toolkit that ran (its version, a
SHA-256 over its own source, and the git commit when the source is a checkout), the versions of
the libraries it used, and digests of its inputs. The source digest is the identifier that
survives history: a commit can be squashed or rebased away, an uncommitted tree never had one,
but anyone holding a copy of the toolkit can recompute the digest of the bytes that ran.

Commands build their own sections (settings, inputs, outputs) as lists of lines and hand them to
:func:`write_record`, which puts the shared header and environment around them and writes the
file atomically. Records go beside label folders, never inside them: a ``labels/*.txt`` glob
must not read a record as a frame.
"""

from __future__ import annotations

import hashlib
import platform
import shlex
import subprocess
import sys
from datetime import datetime, timezone
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Iterable, Sequence

from hbb2obb.io.atomic import write_text_atomic

RULE = "-" * 78
DEPENDENCIES = ("numpy", "shapely", "opencv-python-headless", "pillow", "matplotlib", "PyYAML", "click")
PACKAGE_ROOT = Path(__file__).resolve().parents[1]
CONVERSION_RECORD = "PROVENANCE_obb.txt"  # the reference tool's name for a conversion's record
BENCHMARK_RECORD = "PROVENANCE.txt"  # the reference tool's name for a sweep's record


def sha256_file(path: str | Path, chunk: int = 1 << 20) -> str:
    """SHA-256 of one file, read in chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def sha256_of_files(paths: Iterable[str | Path], root: str | Path | None = None) -> str:
    """One SHA-256 over a set of files, their names included, with the count.

    Names are hashed with the contents, so a renamed or removed frame changes the digest as an
    edited box does. Names are taken relative to ``root`` when given, else the bare file name.

    Returns
    -------
    str
        ``"<hex>  (N files)"``, or ``"no files"`` for an empty set.
    """
    paths = [Path(p) for p in paths]
    if not paths:
        return "no files"
    base = Path(root) if root is not None else None
    keyed = sorted((p.relative_to(base).as_posix() if base else p.name, p) for p in paths)
    digest = hashlib.sha256()
    for name, path in keyed:
        digest.update(name.encode("utf-8"))
        digest.update(b"\0")
        digest.update(path.read_bytes())
    return f"{digest.hexdigest()}  ({len(keyed)} files)"


def source_digest(package_root: Path = PACKAGE_ROOT) -> str:
    """SHA-256 over the toolkit's own ``.py`` files, relative names included."""
    return sha256_of_files(package_root.rglob("*.py"), root=package_root)


def git_state(package_root: Path = PACKAGE_ROOT) -> dict:
    """The commit holding the package source, ``git describe``, and how many package paths differ.

    Only a checkout that tracks the package counts: an installed copy inside somebody else's
    repository is untracked there and reads as no checkout, which is true. ``dirty`` counts
    changed paths under the package only, so outputs a run writes into its repository do not
    mark its own record as untrustworthy.
    """
    none = {"commit": None, "describe": None, "dirty": None}

    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(
                ["git", "-C", str(package_root), *args], capture_output=True, text=True, timeout=10, check=False
            )
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout.strip() if done.returncode == 0 else None

    commit = git("rev-parse", "HEAD")
    if commit is None or not git("ls-files", "--", str(package_root)):
        return none
    status = git("status", "--porcelain", "--", str(package_root))
    dirty = None if status is None else sum(1 for line in status.splitlines() if line.strip())
    return {"commit": commit, "describe": git("describe", "--tags", "--always"), "dirty": dirty}


def package_version(name: str) -> str:
    """The installed version of a distribution, or ``"not installed"``."""
    try:
        return version(name)
    except PackageNotFoundError:
        return "not installed"


def header_lines(title: str) -> list[str]:
    """The title and the code state: when, which toolkit, which source."""
    from hbb2obb import __version__

    lines = [
        title,
        "=" * 78,
        "",
        f"Written        : {datetime.now(timezone.utc).strftime('%Y-%m-%d %H:%M:%S UTC')}",
        f"hbb2obb-toolkit: {__version__}",
        f"source sha256  : {source_digest()}",
    ]
    git = git_state()
    if git["commit"] is None:
        return [*lines, "git commit     : not a git checkout"]
    lines.append(f"git commit     : {git['commit']}")
    if git["describe"]:
        lines.append(f"git describe   : {git['describe']}")
    if git["dirty"]:
        lines.append(f"source state   : MODIFIED ({git['dirty']} package path(s) differ from that commit);")
        lines.append("                 only the source sha256 identifies the code that ran")
    elif git["dirty"] == 0:
        lines.append("source state   : matches that commit")
    return lines


def environment_lines() -> list[str]:
    """Python, platform and the versions of the libraries the toolkit computes with."""
    lines = [
        "",
        "Environment",
        RULE,
        f"python         : {sys.version.split()[0]}",
        f"platform       : {platform.platform()}",
    ]
    lines += [f"{name:<15}: {package_version(name)}" for name in DEPENDENCIES]
    return lines


def section(title: str, lines: Sequence[str]) -> list[str]:
    """A titled block of a record."""
    return ["", title, RULE, *lines]


def command_line(argv: Sequence[str] | None = None) -> str:
    """The command as typed, quoted for a POSIX shell (``sys.argv`` by default)."""
    argv = list(sys.argv if argv is None else argv)
    if argv:
        argv[0] = Path(argv[0]).name
    return shlex.join(argv)


def record_text(title: str, command: str, sections: Sequence[Sequence[str]]) -> str:
    """The whole record: header, the reproducing command, the command's sections, environment."""
    lines = header_lines(title)
    lines += section("Command", [command])
    for block in sections:
        lines += list(block)
    lines += environment_lines()
    return "\n".join(lines) + "\n"


def write_record(path: str | Path, title: str, command: str, sections: Sequence[Sequence[str]]) -> Path:
    """Write a record atomically and return its path.

    Parameters
    ----------
    path : path-like
        The record's file; its folder must exist. Callers check beforehand that it is theirs to
        write (the toolkit's own earlier record, or ``--overwrite``).
    title : str
        The first line, e.g. ``"hbb2obb conversion provenance"``.
    command : str
        The command that reproduces the output (see :func:`command_line`).
    sections : sequence of list of str
        The command's own blocks, each built with :func:`section`.
    """
    path = Path(path)
    write_text_atomic(path, record_text(title, command, sections))
    return path
