"""What every command shares that needs no click: error mapping, warnings, progress bars, the exit.

Kept apart from :mod:`hbb2obb.cli.common` (the click parts) so that a plain ``hbb2obb-eval`` run,
which :mod:`hbb2obb.cli.eval` parses without click, never imports click (about 40 million
instructions of start-up, issue 18). click is imported here only where its output is written:
an error, a warning, a report printed as text.
"""

from __future__ import annotations

import functools
import os
import sys
from typing import Callable

from hbb2obb.errors import Hbb2ObbError

WARNINGS_PER_KIND = 20  # beyond this, a warning kind is summarized as a count


def fail(program: str, message: str, code: int = 2) -> None:
    """Print ``program: error: message`` on stderr and exit with ``code``."""
    import click  # written as click writes it (the other commands' errors are click's too)

    click.echo(f"{program}: error: {message}", err=True)
    sys.exit(code)


# glibc's mallopt parameters (malloc.h) and the values set: 32 MB, 256 MB
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
_MMAP_THRESHOLD, _TRIM_THRESHOLD = 32 << 20, 256 << 20


@functools.cache  # once per process: the settings hold for its life
def keep_freed_memory() -> bool:
    """Let glibc keep freed memory for reuse instead of handing it back to the system at once.

    The core allocates and frees numpy temporaries of a few hundred kB to a few MB by the
    thousand. By default glibc maps each fresh and unmaps it when freed, so every one faults
    its pages in again: on the Songdo-scale benchmark this setting takes the page faults from
    57,000 to 39,000 and about 0.06 s off a 1.4 s run (more in a busy minute), for 7 MB more
    peak memory. Does nothing where the C library is not glibc, or when the user chose malloc
    settings (``GLIBC_TUNABLES``, ``MALLOC_*_``). Returns whether the settings were applied.
    """
    if not sys.platform.startswith("linux"):
        return False
    if "GLIBC_TUNABLES" in os.environ or any(name.startswith("MALLOC_") for name in os.environ):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6")
        return bool(libc.mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD) and libc.mallopt(_M_TRIM_THRESHOLD, _TRIM_THRESHOLD))
    except (OSError, AttributeError):  # musl or another C library: keep its defaults
        return False


def handles_errors(program: str) -> Callable:
    """Map the toolkit's exceptions to a one-line message and their exit status.

    The wrapper is where every command starts, so it also applies :func:`keep_freed_memory`.
    """

    def decorate(function):
        @functools.wraps(function)
        def wrapper(*args, **kwargs):
            keep_freed_memory()
            try:
                return function(*args, **kwargs)
            except Hbb2ObbError as exc:
                fail(program, str(exc), exc.exit_code)
            except KeyboardInterrupt:
                fail(program, "interrupted", 130)

        return wrapper

    return decorate


def without_teardown(command) -> Callable[[], None]:
    """A console-script entry point that runs a click ``command`` and then ends the process at once.

    A run over a large dataset leaves hundreds of thousands of Python objects behind (the
    metric dict's per-pair lists); freeing them one by one at interpreter exit costs 0.05-0.1 s
    of a 1.5 s evaluation, for nothing. Output is flushed first and the exit status is the
    command's; only what a normal exit would do after that (atexit hooks, freeing memory) is
    skipped, so use it for commands that leave no work to those hooks.
    """
    return ends_without_teardown(command.main)  # standalone mode: always ends in SystemExit


def ends_without_teardown(main: Callable[[], object]) -> Callable[[], None]:
    """A console-script entry point that calls ``main()`` and ends the process as :func:`without_teardown` does.

    ``main`` may return (status 0) or raise ``SystemExit``; any other exception propagates, as
    from a click command in standalone mode.
    """

    def run() -> None:
        try:
            main()
            status = 0
        except SystemExit as done:
            status = done.code
        if status is None:
            status = 0
        elif not isinstance(status, int):  # sys.exit("message"), as Python prints it
            import click

            click.echo(status, err=True)
            status = 1
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except (OSError, ValueError):  # a closed pipe: Python's own exit would report 120
            status = status or 120
        os._exit(status)

    return run


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
        import click

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
    import click  # written as click writes it (a run without warnings needs no click)

    for kind, message in warnings:
        shown[kind] = shown.get(kind, 0) + 1
        if shown[kind] <= WARNINGS_PER_KIND:
            click.echo(f"{program}: warning: {message}", err=True)
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
