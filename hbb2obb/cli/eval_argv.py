"""A plain ``hbb2obb-eval`` command line, parsed without click.

Importing click and building the command's 37 parameters costs a 10-box evaluation about 40 of
its 530 million instructions (issue 18: a 10-box run within 1.3x of ``python -c 'import
numpy'``). Most command lines are plain: two folders and a few flags and values. This module
reads those into the keyword arguments click would pass to the command, and declines anything
else (returns ``None``), which then goes to click as before: ``--help``, ``--version``, an
unknown, repeated or ``--flag=value`` spelling, ``--``, a value starting with ``-``, a value
click's type would reject or a path click's ``Path`` type would refuse (it exists and is not
readable), ``--require``, ``--overlay`` and ``--overlay_size`` whenever they are given, and
shell completion. So every message, help text and exit status stays
click's. ``-e 0 3`` is read as :class:`~hbb2obb.cli.common.MultiValueCommand` reads it for click
(values while they parse as integers). ``tests/cli/test_eval_argv.py`` checks each parameter against the click declaration and
the parsed arguments against click's on a table of command lines.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional, Sequence

from hbb2obb.io.format_names import ALL_FORMATS
from hbb2obb.plotting import OVERLAY_SIZE
from hbb2obb.detection.evaluate import AP_RULES, DEFAULT_MAX_DETS
from hbb2obb.frames.pairing import MISSING_PRED_POLICIES

FLAG = "flag"  # takes no value: True when given
INTEGERS = "integers"  # one or more integers after the flag, repeatable: a tuple of them all (``-e 0 3``)

#: Parameter name: (spellings, type, default). The type is ``FLAG``, ``INTEGERS``, ``int``, ``float``,
#: ``Path``, or a tuple of the allowed words (click's ``Choice``), as declared in :mod:`hbb2obb.cli.eval_options`.
OPTIONS = {
    "excluded_classes": (("-e", "--excluded_classes"), INTEGERS, ()),
    "iou_threshold": (("-t", "--iou_threshold"), float, 0.1),
    "class_agnostic": (("-ca", "--class_agnostic"), FLAG, False),
    "exclude_edge_cases": (("-exc", "--exclude_edge_cases"), FLAG, False),
    "edge_tolerance": (("-et", "--edge_tolerance"), float, 1.0),
    "img_width": (("-iw", "--img_width"), float, None),
    "img_height": (("-ih", "--img_height"), float, None),
    "img_source": (("-i", "--img_source"), Path, None),
    "map_path": (("-mp", "--map_path"), Path, None),
    "one_to_one": (("--one_to_one",), FLAG, False),
    "missing_pred": (("--missing_pred",), MISSING_PRED_POLICIES, "skip"),
    "jobs": (("-j", "--jobs"), int, 1),
    "no_bar": (("-nb", "--no_bar"), FLAG, False),
    "gt_format": (("--gt_format",), ALL_FORMATS, None),
    "pred_format": (("--pred_format",), ALL_FORMATS, None),
    "pairs_path": (("--pairs",), Path, None),
    "output": (("-o", "--output"), Path, None),
    "as_json": (("--json",), FLAG, False),
    "spatial_threshold": (("--spatial_threshold",), float, 0.5),
    "expect": (("--expect",), Path, None),
    "expect_tolerance": (("--expect_tolerance",), float, None),
    "expect_ignore_extra": (("--expect_ignore_extra",), FLAG, False),
    "debug": (("-d", "--debug"), FLAG, False),
    "ap_rule": (("--ap_rule",), AP_RULES, "voc07"),
    "conf": (("--conf",), float, None),
    "max_dets": (("--max_dets",), int, DEFAULT_MAX_DETS),
    "plots": (("--plots",), Path, None),
    "no_detection": (("--no_detection",), FLAG, False),
}

#: Parameters left to click whenever they are given (several values after one flag, repeatable,
#: or a type with checks of its own), with the values click gives when they are not.
CLICK_ONLY = {"requirements": (), "overlay": None, "overlay_size": OVERLAY_SIZE}

#: The two arguments, in order (click ``Path`` values).
ARGUMENTS = ("gt_dir", "pred_dir")

_BY_SPELLING = {spelling: name for name, (spellings, _, _) in OPTIONS.items() for spelling in spellings}


def _path(text: str) -> Optional[Path]:
    """``text`` as click's ``Path(path_type=Path)`` converts it, or ``None`` where click would refuse it."""
    try:
        os.stat(text)
    except OSError:  # absent: click accepts it as it is
        return Path(text)
    except ValueError:  # a name no file can have (a NUL byte): what click does with it is click's
        return None
    return Path(text) if os.access(text, os.R_OK) else None


def _value(kind, text: str):
    """``text`` converted as the option's click type converts it, or ``None`` where click would fail."""
    if kind is Path:
        return _path(text)
    if isinstance(kind, tuple):
        return text if text in kind else None
    try:
        return kind(text)  # click's INT and FLOAT types call int() and float() themselves
    except ValueError:
        return None


def _integer(token: str) -> Optional[int]:
    try:
        return int(token)
    except ValueError:
        return None


def plain_arguments(argv: Sequence[str], environ=os.environ) -> Optional[dict]:
    """The keyword arguments click would give ``hbb2obb-eval``'s command for ``argv``, or ``None``.

    ``None`` means: let click parse this command line (see the module docstring for what that
    covers). ``environ`` is asked only whether a shell-completion request is pending.

    Examples
    --------
    >>> arguments = plain_arguments(["gt", "pred", "-nb", "--json", "-t", "0.5"], environ={})
    >>> arguments["gt_dir"], arguments["iou_threshold"], arguments["as_json"], arguments["jobs"]
    (PosixPath('gt'), 0.5, True, 1)
    >>> plain_arguments(["gt", "pred", "--help"], environ={}) is None
    True
    >>> plain_arguments(["-e", "0", "3", "gt", "pred"], environ={})["excluded_classes"]
    (0, 3)
    """
    if any(name.startswith("_") and name.endswith("_COMPLETE") for name in environ):
        return None  # click's shell completion answers instead of running
    given: dict = {}
    positional: list = []
    tokens = list(argv)
    at = 0
    while at < len(tokens):
        token = tokens[at]
        at += 1
        if not token.startswith("-"):
            positional.append(token)
            continue
        name = _BY_SPELLING.get(token)
        kind = OPTIONS[name][1] if name is not None else None
        if name is None or (name in given and kind is not INTEGERS):
            return None
        if kind is FLAG:
            given[name] = True
            continue
        if kind is INTEGERS:  # values while they parse as integers (``-1`` too), as MultiValueCommand takes them
            values = []
            while at < len(tokens) and tokens[at] != "--" and _integer(tokens[at]) is not None:
                values.append(_integer(tokens[at]))
                at += 1
            if not values:
                return None  # click says what is missing
            given[name] = given.get(name, ()) + tuple(values)
            continue
        text = tokens[at] if at < len(tokens) else None
        at += 1
        if text is None or text.startswith("-"):
            return None
        value = _value(kind, text)
        if value is None:
            return None
        given[name] = value
    if len(positional) != len(ARGUMENTS):
        return None
    arguments = {}
    for name, text in zip(ARGUMENTS, positional):
        arguments[name] = _path(text)
        if arguments[name] is None:
            return None
    for name, (_, _, default) in OPTIONS.items():
        arguments[name] = given.get(name, default)
    arguments.update(CLICK_ONLY)
    return arguments
