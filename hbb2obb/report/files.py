"""Output files written whole or not at all, and never over one of the run's own inputs.

A run killed while writing must not leave half a metric file where a CI job reads one: each
file is written under a temporary name in its folder and renamed over the target
(:func:`hbb2obb.io.atomic.atomic_path`). :func:`refuse_inputs` is the check every requested output passes before
the first file is written: an output that is one of the run's inputs (or lies inside an input
folder) would destroy what the user gave.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable, Optional

from hbb2obb.errors import UsageError
from hbb2obb.io.folder_lock import blocking_file


def _resolved(path: Path) -> Path:
    return Path(os.path.realpath(path))


Named = Iterable[tuple[str, Optional[Path]]]


def refuse_inputs(outputs: Named, inputs: Named) -> None:
    """A usage error when an output would replace one of the run's inputs.

    An output replaces an input when it is that file or folder, or when it is a file that
    already exists inside an input folder (a label file, a map, anything the user keeps there).
    A new file inside an input folder replaces nothing and passes.

    Parameters
    ----------
    outputs, inputs : iterable of (flag or role, path or None)
        ``None`` paths are not given and pass. Paths are compared after resolving links.

    Raises
    ------
    UsageError
        Naming the output's flag, the file and the input it would overwrite.

    Examples
    --------
    >>> refuse_inputs([("-o", Path("gt.json"))], [("ground truth", Path("gt.json"))])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    hbb2obb.errors.UsageError: -o gt.json: is the ground truth of this run: refusing to overwrite it ...
    """
    given = [(role, path, _resolved(path)) for role, path in inputs if path is not None]
    for flag, path in outputs:
        if path is None:
            continue
        target = _resolved(path)
        for role, shown, source in given:
            if target == source:
                raise UsageError(f"{flag} {path}: is the {role} of this run: refusing to overwrite it "
                                 "(give another name, or --overwrite)")
            if source in target.parents and os.path.lexists(path):
                raise UsageError(f"{flag} {path}: is a file of the {role} {shown}: refusing to overwrite it "
                                 "(give another name, or --overwrite)")


def refuse_unwritable(files: Named = (), folders: Named = ()) -> None:
    """A usage error when an output could never be written: a file target that is a folder, a
    folder target that is a file, or a file standing where one of their folders should be.

    Called before the first output is written: such a target fails only when its turn comes,
    after the outputs before it were written, and ``--overwrite`` cannot help it.

    Parameters
    ----------
    files, folders : iterable of (flag, path or None)
        Outputs that are files, and outputs that are folders (made when missing).

    Raises
    ------
    UsageError
        Naming the output's flag, its path and what stands in the way.

    Examples
    --------
    >>> import tempfile
    >>> root = Path(tempfile.mkdtemp())
    >>> _ = (root / "notes.txt").write_text("x")
    >>> refuse_unwritable(files=[("-o", root / "new" / "m.json")], folders=[("--plots", root / "figs")])
    >>> refuse_unwritable(files=[("-o", root / "notes.txt" / "m.json")])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    hbb2obb.errors.UsageError: -o .../notes.txt/m.json: .../notes.txt is a file, not a folder
    >>> import shutil; shutil.rmtree(root)
    """
    for flag, path in folders:  # first: the files inside a folder output would only blame its path
        if path is not None:
            _refuse_blocked(flag, Path(path), Path(path))
    for flag, path in files:
        if path is None:
            continue
        path = Path(path)
        if path.is_dir():
            raise UsageError(f"{flag} {path}: is a folder; give a file name")
        _refuse_blocked(flag, path, path.parent)


def _refuse_blocked(flag: str, path: Path, folder: Path) -> None:
    """A usage error when a file stands at ``folder`` or at one of its parents."""
    blocking = blocking_file(folder)
    if blocking is None:
        return
    if blocking == path:
        raise UsageError(f"{flag} {path}: exists and is not a folder")
    raise UsageError(f"{flag} {path}: {blocking} is a file, not a folder")


def refuse_shared(outputs: Named) -> None:
    """A usage error when two outputs of one run name the same file (after resolving links).

    The later one would replace the earlier, or append to it (``--summary``): a metric file
    that is no longer JSON, a pairs table that became JUnit XML, with exit status 0.

    Parameters
    ----------
    outputs : iterable of (flag, path or None)
        In the order given; ``None`` paths are not asked for and pass.

    Raises
    ------
    UsageError
        Naming the second output's flag and path, and the first one's flag.

    Examples
    --------
    >>> refuse_shared([("-o", Path("m.json")), ("--summary", Path("./m.json"))])
    Traceback (most recent call last):
    ...
    hbb2obb.errors.UsageError: --summary m.json: -o writes that file too; give each output its own name
    """
    seen: dict[Path, str] = {}
    for flag, path in outputs:
        if path is None:
            continue
        first = seen.setdefault(_resolved(path), flag)
        if first is not flag:
            raise UsageError(f"{flag} {path}: {first} writes that file too; give each output its own name")
