"""What every command shares: multi-value flags, error mapping, warnings, progress bars."""

from __future__ import annotations

import functools
import sys
import unicodedata
from typing import Callable

import click

from hbb2obb import __version__
from hbb2obb.cli.reference import reference_only_flag
from hbb2obb.errors import Hbb2ObbError

WARNINGS_PER_KIND = 20  # beyond this, a warning kind is summarized as a count


def one_line(text: str) -> str:
    """``text`` with the characters that would end its line or rewrite it on a terminal escaped
    (``\\n``, ``\\r``, ``\\x1b``, ``\\u2028``, ...): a file or frame name holding a newline must
    not split an error in two, nor start a line of its own that reads like a result. Tabs and
    every other character stay as they are."""
    if text.isprintable():  # the common case, checked at C speed
        return text
    return "".join(repr(c)[1:-1] if c != "\t" and unicodedata.category(c) in _LINE_BREAKING else c for c in text)


_LINE_BREAKING = ("Cc", "Zl", "Zp")  # control characters, line and paragraph separators


def fail(program: str, message: str, code: int = 2) -> None:
    """Print ``program: error: message`` on stderr, on one line, and exit with ``code``."""
    click.echo(f"{program}: error: {one_line(message)}", err=True)
    sys.exit(code)


def handles_errors(program: str) -> Callable:
    """Map the toolkit's exceptions to a one-line message and their exit status."""

    def decorate(function):
        @functools.wraps(function)
        def wrapper(*args, **kwargs):
            try:
                return function(*args, **kwargs)
            except Hbb2ObbError as exc:
                fail(program, str(exc), exc.exit_code)
            except KeyboardInterrupt:
                fail(program, "interrupted", 130)

        return wrapper

    return decorate


def echo_ascii(data) -> None:
    """Print ASCII ``data`` (bytes, or a list of bytes written one after the other) and a newline
    on stdout, as ``click.echo(data.decode())`` prints it.

    Written to stdout's byte stream when it has one: ``click.echo`` scans a ``str`` for colour
    codes and encodes it, which costs ten times more than the writing for a 20 MB metric dict.
    A stdout without a byte stream (a ``StringIO`` of a caller) gets the text.
    """
    pieces = [data] if isinstance(data, bytes) else data
    stream = sys.stdout
    binary = getattr(stream, "buffer", None)
    if binary is None:
        click.echo(b"".join(pieces).decode("ascii"))
        return
    stream.flush()
    binary.writelines(pieces)
    binary.write(b"\n")
    binary.flush()


def warn(program: str, warnings) -> None:
    """``(kind, message)`` warnings on stderr, at most ``WARNINGS_PER_KIND`` of a kind, then a count."""
    shown: dict[str, int] = {}
    if not warnings:
        return
    for kind, message in warnings:
        shown[kind] = shown.get(kind, 0) + 1
        if shown[kind] <= WARNINGS_PER_KIND:
            click.echo(f"{program}: warning: {one_line(message)}", err=True)
    for kind, count in shown.items():
        if count > WARNINGS_PER_KIND:
            click.echo(f"{program}: warning: ... and {count - WARNINGS_PER_KIND} more of this kind ({kind})", err=True)


class _NoBar:
    """What :func:`progress_bar` gives when no bar is shown: the calls of a tqdm bar, doing nothing."""

    def __enter__(self):
        return self

    def __exit__(self, *exc_info) -> None:
        return None

    def update(self, n: int = 1) -> None:
        return None

    def close(self) -> None:
        return None

    def clear(self) -> None:
        return None

    def set_postfix_str(self, text: str = "", refresh: bool = True) -> None:
        return None


def progress_bar(total: int, description: str, disable: bool, unit: str = "frame"):
    """A tqdm bar on stderr; off when asked or when stderr is not a terminal.

    Without a bar tqdm is not even imported: its import (metadata lookup, a lock from
    multiprocessing) costs more than a small evaluation.
    """
    if disable or not sys.stderr.isatty():
        return _NoBar()
    from tqdm import tqdm

    return tqdm(total=total, desc=description, unit=unit, file=sys.stderr, leave=False)


def _parses_as(value_type, token: str) -> bool:
    try:
        value_type(token)
    except ValueError:
        return False
    return True


class MultiValueCommand(click.Command):
    """A command whose listed options take several values after one flag, as argparse's
    ``nargs='+'`` does (``-e 0 3``), so scripts written for the reference tool keep working.

    Values are taken while they parse as the option's type (words: while they do not start
    with ``-``), so ``-e 0 3 GT PRED`` leaves the two folders as arguments. The command line is
    rewritten to ``-e 0 -e 3`` before click parses it, and the option is declared ``multiple``.
    A flag that only the reference tool's command of the same name has is explained instead of
    reported as unknown (:mod:`hbb2obb.cli.reference`).
    """

    multi_value_types: dict = {}

    def parse_args(self, ctx, args):
        own = [spelling for param in self.params if isinstance(param, click.Option)
               for spelling in param.opts + param.secondary_opts]
        foreign = reference_only_flag(self.name, args, own)
        if foreign is not None:
            fail(self.name, foreign)
        flags = {}
        for param in self.params:
            if isinstance(param, click.Option) and param.name in self.multi_value_types:
                for spelling in param.opts + param.secondary_opts:
                    flags[spelling] = self.multi_value_types[param.name]
        rewritten, i = [], 0
        while i < len(args):
            token = args[i]
            if token in flags:
                value_type, j = flags[token], i + 1
                while j < len(args) and args[j] != "--" and (
                    _parses_as(value_type, args[j]) if value_type is not str else not args[j].startswith("-")
                ):
                    rewritten += [token, args[j]]
                    j += 1
                if j == i + 1:
                    rewritten.append(token)  # let click report the missing value
                i = j
                continue
            rewritten.append(token)
            i += 1
        return super().parse_args(ctx, rewritten)


def multi_value_command(types: dict, **kwargs):
    """``@click.command`` whose options named in ``types`` accept several values per flag."""
    cls = type("Command", (MultiValueCommand,), {"multi_value_types": types})
    return click.command(cls=cls, context_settings={"help_option_names": ["-h", "--help"]}, **kwargs)


def version_option(program: str):
    """``--version``/``-V``, as the reference tool spells them: ``program 0.1.0`` on stdout."""
    return click.version_option(__version__, "--version", "-V", prog_name=program, message="%(prog)s %(version)s")
