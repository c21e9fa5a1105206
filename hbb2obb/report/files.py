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
