"""The ``command`` converter: any external program, run once per grid point from a template.

The template is split like a shell would split it (:func:`shlex.split`) and run without a shell,
so no quoting of a value can inject a command. ``{img_source}``, ``{hbb_dir}`` and ``{out_dir}``
are filled by the sweep; every other placeholder is a parameter, and so a grid axis. A token
that is exactly one placeholder whose value is a list becomes several arguments
(``--scale_factors {scale_factor}`` with ``[0.02, 0.05]`` gives ``--scale_factors 0.02 0.05``,
the reference tool's spelling of a short/long pair); inside a longer token a list is joined with
commas. Literal braces are written ``{{`` and ``}}``.
"""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import string
import subprocess
import time
from pathlib import Path
from typing import Callable, Optional

from hbb2obb.converters.base import ConversionReport, Converter, register
from hbb2obb.errors import UsageError
from hbb2obb.processes import DIE_WITH_PARENT

#: Placeholders the sweep fills itself; every other placeholder is a converter parameter.
PATH_PLACEHOLDERS = ("img_source", "hbb_dir", "out_dir")
STDERR_TAIL_LINES = 15
STDERR_TAIL_CHARS = 2000


def template_fields(template: str) -> list[str]:
    """The placeholder names of a command template, in order of first use.

    Raises :class:`UsageError` for an empty template, unbalanced quotes or braces, and
    placeholders that are not plain names (``{}``, ``{0}``, ``{a.b}``).

    Examples
    --------
    >>> template_fields("convert {hbb_dir} {out_dir} --imgsz {imgsz} --tag run_{imgsz}")
    ['hbb_dir', 'out_dir', 'imgsz']
    """
    try:
        tokens = shlex.split(template)
    except ValueError as exc:
        raise UsageError(f"--command {template!r}: {exc}") from None
    if not tokens:
        raise UsageError("--command is empty")
    names: list[str] = []
    for token in tokens:
        try:
            parsed = list(string.Formatter().parse(token))
        except ValueError as exc:
            raise UsageError(f"--command token {token!r}: {exc} (write literal braces as {{{{ and }}}})") from None
        for _, name, _, _ in parsed:
            if name is None:
                continue
            if not name.isidentifier():
                raise UsageError(f"--command placeholder {{{name}}} must be a parameter name like {{scale_factor}}")
            if name not in names:
                names.append(name)
    return names


def _text(value) -> str:
    if isinstance(value, (list, tuple)):
        return ",".join(_text(v) for v in value)
    return str(value)


def render_command(template: str, values: dict) -> list[str]:
    """The argument list of a template with every placeholder filled.

    Examples
    --------
    >>> render_command("tool --sf {scale_factor} --tag sf{scale_factor}", {"scale_factor": [0.02, 0.05]})
    ['tool', '--sf', '0.02', '0.05', '--tag', 'sf0.02,0.05']
    """
    missing = [name for name in template_fields(template) if values.get(name) is None]
    if missing:
        raise UsageError(f"--command placeholder(s) with no value: {', '.join('{' + m + '}' for m in missing)}")
    args: list[str] = []
    for token in shlex.split(template):
        parsed = list(string.Formatter().parse(token))
        whole = len(parsed) == 1 and parsed[0][0] == "" and parsed[0][1] is not None and not parsed[0][2]
        if whole and isinstance(values[parsed[0][1]], (list, tuple)):
            args.extend(_text(v) for v in values[parsed[0][1]])
            continue
        args.append(token.format(**{k: _text(v) if isinstance(v, (list, tuple)) else v for k, v in values.items()}))
    return args


def stderr_tail(text: str) -> str:
    """The last lines of a program's error output, short enough for a results file."""
    lines = text.strip().splitlines()[-STDERR_TAIL_LINES:]
    return "\n".join(lines)[-STDERR_TAIL_CHARS:]


@register
class CommandConverter(Converter):
    """An external converter run from a command template.

    Parameters
    ----------
    template : str
        The command line with placeholders, e.g.
        ``"hbb2obb {img_source} --hbb_dir {hbb_dir} --obb_dir {out_dir} --imgsz {imgsz}"``.
    timeout : float, optional
        Seconds a grid point may take; a slower one is stopped and recorded as failed.

    Examples
    --------
    >>> c = CommandConverter("echo {hbb_dir} {out_dir} --k {opening_kernel_percentage}")
    >>> c.parameters
    {'opening_kernel_percentage': None}
    """

    name = "command"
    needs_images = False

    def __init__(self, template: str, timeout: Optional[float] = None):
        fields = template_fields(template)
        program = shlex.split(template)[0]
        if "{" in program:
            raise UsageError(f"--command: the program itself cannot be a placeholder: {program!r}")
        if shutil.which(program) is None:
            raise UsageError(f"--command: program {program!r} not found (not on PATH, or not executable)")
        if timeout is not None and not timeout > 0:
            raise UsageError(f"--command_timeout must be positive, got {timeout}")
        self.template = template
        self.timeout = timeout
        self.parameters = {name: None for name in fields if name not in PATH_PLACEHOLDERS}
        self.needs_images = "img_source" in fields

    def check_parameters(self, params: dict) -> dict:
        """Every placeholder needs a value; a parameter the template never uses is an error."""
        full = super().check_parameters(params)
        missing = [name for name, value in full.items() if value is None]
        if missing:
            raise UsageError(
                f"--command placeholder(s) with no value: {', '.join('{' + m + '}' for m in missing)}; "
                f"give each a grid axis, e.g. --grid {missing[0]}=V1,V2")
        return full

    def convert(self, hbb_dir: Path, out_dir: Path, params: dict, *, img_source: Optional[Path] = None,
                progress: Optional[Callable[[int], None]] = None) -> ConversionReport:
        values = {**self.check_parameters(params), "hbb_dir": str(hbb_dir), "out_dir": str(out_dir),
                  "img_source": None if img_source is None else str(img_source)}
        args = render_command(self.template, values)
        Path(out_dir).mkdir(parents=True, exist_ok=True)
        start = time.perf_counter()
        # A session of its own, so a timeout stops the whole process group (a wrapper script and
        # whatever it started), not only the direct child.
        process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                                   start_new_session=True, preexec_fn=DIE_WITH_PARENT)
        try:
            _, stderr = process.communicate(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            _kill_group(process)
            _, stderr = process.communicate()
            seconds = time.perf_counter() - start
            tail = stderr_tail(stderr.decode("utf-8", "replace"))
            return ConversionReport(seconds=seconds, ok=False,
                                    error=f"timed out after {self.timeout:g} s" + (f"\n{tail}" if tail else ""))
        except BaseException:
            _kill_group(process)
            process.wait()
            raise
        seconds = time.perf_counter() - start
        files = len(list(Path(out_dir).glob("*.txt")))
        if progress:
            progress(files)
        if process.returncode != 0:
            tail = stderr_tail(stderr.decode("utf-8", "replace"))
            status = (f"killed by signal {-process.returncode}" if process.returncode < 0
                      else f"exit status {process.returncode}")
            return ConversionReport(files=files, seconds=seconds, ok=False,
                                    error=status + (f"\n{tail}" if tail else ""))
        return ConversionReport(files=files, seconds=seconds, details={"command": shlex.join(args)})


def _kill_group(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
