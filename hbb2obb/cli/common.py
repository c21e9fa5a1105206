"""What every command shares: multi-value flags, error mapping, progress bars, warnings.

The parts that need no click live in :mod:`hbb2obb.cli.console` and are re-exported here.
"""

from __future__ import annotations

import click

from hbb2obb import __version__
from hbb2obb.cli.console import (WARNINGS_PER_KIND, echo_ascii, ends_without_teardown, fail,  # noqa: F401
                                 handles_errors, keep_freed_memory, progress_bar, warn, without_teardown)
from hbb2obb.cli.reference import reference_only_flag


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
