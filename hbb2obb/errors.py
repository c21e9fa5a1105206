"""Exception classes of the toolkit.

The core raises these; only the CLI turns them into a one-line message and an exit status.
Every class carries the exit status it maps to, so the mapping lives in one place.
"""

from __future__ import annotations

from pathlib import Path


class Hbb2ObbError(Exception):
    """Base class of every error the toolkit raises on purpose."""

    exit_code = 2


class UsageError(Hbb2ObbError):
    """The command line or the call was wrong before any file was read."""


class InputError(Hbb2ObbError):
    """An input the user gave cannot be used: a missing folder, an unreadable file."""


class ConfigError(InputError):
    """A configuration file (YAML) has an unknown key or a value of the wrong kind."""


class LabelFormatError(InputError):
    """A label line is broken: wrong field count, non-numeric value, non-integer class.

    Parameters
    ----------
    path : path-like
        The label file.
    line : int
        1-based line number in that file.
    reason : str
        What is wrong, in words a person can act on.
    """

    def __init__(self, path: str | Path, line: int, reason: str):
        self.path = Path(path)
        self.line = line
        self.reason = reason
        super().__init__(f"{self.path}:{line}: {reason}")

    def __reduce__(self):
        # a worker process (--jobs) sends it back pickled: the default would call __init__ with the message alone
        return type(self), (self.path, self.line, self.reason)
