"""One file the user named, read whole: a label file, a label map, a golden file, a COCO, LabelMe or VOC file.

Every such file fails the same few ways, and the user should read the same words for each: one
:class:`~hbb2obb.errors.InputError` line that names the file, says which file it was meant to be,
and why it cannot be read. (Label files read in bulk, by :func:`hbb2obb.io.text.read_blobs`,
come back as ``None`` when unreadable, and the careful reader that says why uses this module.)
"""

from __future__ import annotations

import codecs
from pathlib import Path

from hbb2obb.errors import InputError


def read_file_bytes(path, what: str) -> bytes:
    """The bytes of ``path``, or :class:`InputError` saying why they cannot be read.

    Parameters
    ----------
    path : str or Path
        The file.
    what : str
        What the file is to the user, for the message: ``"label file"``, ``"label map"``.

    Returns
    -------
    bytes

    Raises
    ------
    InputError
        ``<path>: <what> not found``, ``<path>: <what> is a folder, not a file`` or
        ``<path>: cannot read <what> (<system's reason>)``.

    Examples
    --------
    >>> read_file_bytes("no/such/labels.txt", "label file")
    Traceback (most recent call last):
    ...
    hbb2obb.errors.InputError: no/such/labels.txt: label file not found
    """
    path = Path(path)
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise InputError(f"{path}: {what} not found") from None
    except IsADirectoryError:
        raise InputError(f"{path}: {what} is a folder, not a file") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read {what} ({exc.strerror or exc})") from None


# UTF-32 first: its little-endian mark begins with UTF-16's
_BYTE_ORDER_MARKS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
                     (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"), (codecs.BOM_UTF8, "utf-8"))


def read_text_file(path, what: str) -> str:
    """The text of ``path``, or :class:`InputError`: UTF-8, or UTF-16/32 when a byte order mark says so.

    Text without a byte order mark must be UTF-8 (Latin-1 is refused, not guessed); the mark
    itself is dropped.

    Parameters
    ----------
    path : str or Path
        The file.
    what : str
        What the file is to the user, for the message: ``"label map"``, ``"golden file"``.

    Returns
    -------
    str

    Raises
    ------
    InputError
        What :func:`read_file_bytes` raises, or ``<path>: <what> is not UTF-8 text (<reason>
        at byte <n>)``.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "map.yaml"
    >>> _ = path.write_bytes(b"0: car\\n1: caf\\xe9\\n")  # Latin-1, not UTF-8
    >>> read_text_file(path, "label map")
    Traceback (most recent call last):
    ...
    hbb2obb.errors.InputError: .../map.yaml: label map is not UTF-8 text (invalid continuation byte at byte 13)
    """
    data = read_file_bytes(path, what)
    encoding = next((name for mark, name in _BYTE_ORDER_MARKS if data.startswith(mark)), "utf-8")
    try:
        return data.decode(encoding).removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        if encoding != "utf-8":
            raise InputError(f"{Path(path)}: {what} is not {encoding.upper()} text as its byte order mark says "
                             f"({exc.reason} at byte {exc.start})") from None
        raise InputError(f"{Path(path)}: {what} is not UTF-8 text ({exc.reason} at byte {exc.start})") from None


HEAD_BYTES = 65536  # how much of a file format sniffing looks at: what tells formats apart comes early


def file_head(path, size: int = HEAD_BYTES) -> bytes:
    """The first ``size`` bytes of a file (``b""`` when it cannot be read): what a format's ``sniff`` looks at."""
    try:
        with open(path, "rb") as handle:
            return handle.read(size)
    except OSError:
        return b""
