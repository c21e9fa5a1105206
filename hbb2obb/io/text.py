"""What every text label format shares: decoding, line splitting, problems, the parsed file."""

from __future__ import annotations

import math
import re
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Optional

import numpy as np

from hbb2obb.boxes import Boxes
from hbb2obb.errors import InputError, LabelFormatError
from hbb2obb.io.reader_process import read_files
from hbb2obb.io.text_file import read_file_bytes


@dataclass(frozen=True)
class LabelProblem:
    """One broken line that was skipped: where it is and what is wrong with it."""

    path: Path
    line: int
    reason: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.reason}"


@dataclass(frozen=True)
class LabelFile:
    """A parsed label file.

    Attributes
    ----------
    path : Path
        Where the labels came from.
    boxes : Boxes
        The boxes of the well-formed lines, in file order, with their line numbers.
    problems : tuple of LabelProblem
        Lines that were skipped (only with ``strict=False``).
    normalized : bool or None
        Whether the file is normalized (every |coordinate| at most 2, :func:`looks_normalized`);
        ``None`` for a file with no boxes.
    """

    path: Path
    boxes: Boxes
    problems: tuple = ()
    normalized: Optional[bool] = None


_LINE_BREAK = re.compile(rb"\r\n|\r|\n")  # the only line ends of a label file (not \f, \v, NEL, U+2028)
# A label number as C and numpy write one, ASCII only: Python's float() also takes "1_00" and
# Arabic-Indic digits, which no label writer produces and no other reader takes.
# (Digits after the dot only after a literal dot: "[0-9]+\.?[0-9]*" backtracks quadratically on
# a long run of digits that then fails.)
_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_NON_FINITE = re.compile(r"[+-]?(?:inf|infinity|nan)", re.IGNORECASE)
_INTEGER = re.compile(r"[+-]?[0-9]+")
_INT64_LIMIT = 2**63  # class ids are stored as int64
MAX_COORDINATE = 1e12
"""Largest coordinate magnitude a label line may hold. Far beyond any frame (a trillion pixels),
far inside what the float64 geometry scores exactly (it fails past about 1e100)."""
_SHOWN_CHARACTERS = 40  # a token longer than this is cut in messages: a 20 MB token is not echoed whole


def shown(token: str) -> str:
    """A token as a message quotes it: ``repr``, cut to its first characters when long.

    Examples
    --------
    >>> shown("car"), shown("9" * 50)
    ("'car'", "'9999999999999999999999999999999999999999...' (50 characters)")
    """
    if len(token) <= _SHOWN_CHARACTERS:
        return repr(token)
    return f"{token[:_SHOWN_CHARACTERS]!r}"[:-1] + f"...' ({len(token)} characters)"


def split_lines(path: Path, sink: Optional["ProblemSink"] = None) -> Iterator[tuple[int, list[str]]]:
    """Yield ``(line_number, fields)`` for every non-blank line of a text file.

    Lines end at ``\\n``, ``\\r\\n`` or ``\\r`` only (form feed, vertical tab, NEL and U+2028 are
    not line breaks in a label file), so ``file:line`` is the line an editor shows. A UTF-8 byte
    order mark is accepted. A line that is not UTF-8 is reported to ``sink`` (raised or skipped
    by its rule) and not yielded; without a sink it raises :class:`InputError` at ``file:line``.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "f.txt"
    >>> _ = p.write_bytes(b"a b\\x0cc\\r\\n\\n d\\r")
    >>> list(split_lines(p))
    [(1, ['a', 'b', 'c']), (3, ['d'])]
    """
    data = read_file_bytes(path, "label file")
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    for number, raw in enumerate(_LINE_BREAK.split(data), start=1):
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            reason = f"not UTF-8 text ({exc.reason} at byte {exc.start} of the line)"
            if sink is None:
                raise InputError(f"{path}:{number}: {reason}") from None
            sink.report(number, reason)
            continue
        fields = line.split()
        if fields:
            yield number, fields


def parse_number(token: str) -> Optional[float]:
    """A finite float written as a label number, or ``None`` (``nan``, ``inf``, ``car``, ``1_00``).

    Examples
    --------
    >>> parse_number("-1.5e3"), parse_number("1_00"), parse_number("nan")
    (-1500.0, None, None)
    """
    if not _NUMBER.fullmatch(token):
        return None
    value = float(token)
    return value if math.isfinite(value) else None


def parse_class_id(token: str) -> Optional[int]:
    """An integer class id written as a decimal integer that fits an int64, or ``None``.

    Examples
    --------
    >>> parse_class_id("3"), parse_class_id("1.0"), parse_class_id(str(2**70))
    (3, None, None)
    """
    if len(token) > 20 or not _INTEGER.fullmatch(token):  # 20: a sign and 19 digits hold every int64
        return None
    value = int(token)
    return value if -_INT64_LIMIT <= value < _INT64_LIMIT else None


def describe_bad_number(token: str, what: str) -> str:
    if _NON_FINITE.fullmatch(token) or (_NUMBER.fullmatch(token) and not math.isfinite(float(token))):
        return f"{what} is not finite: {shown(token)}"
    return f"{what} is not a number: {shown(token)}"


def describe_bad_class_id(token: str) -> str:
    if _INTEGER.fullmatch(token):
        return f"class id is out of range (more than 63 bits): {shown(token)}"
    return f"class id is not an integer: {shown(token)}"


def coordinate_reason(values, first_field: int) -> Optional[str]:
    """Why parsed coordinates cannot be scored (a magnitude beyond :data:`MAX_COORDINATE`), or ``None``."""
    for position, value in enumerate(values, start=first_field):
        if abs(value) > MAX_COORDINATE:
            return f"field {position} is out of range: {value:g} (coordinates beyond +-{MAX_COORDINATE:g} are refused)"
    return None


class ProblemSink:
    """Collects broken lines, or raises on the first when the file must be clean."""

    def __init__(self, path: Path, strict: bool):
        self.path = path
        self.strict = strict
        self.problems: list[LabelProblem] = []

    def report(self, line: int, reason: str) -> None:
        if self.strict:
            raise LabelFormatError(self.path, line, reason)
        self.problems.append(LabelProblem(self.path, line, reason))


NORMALIZED_LIMIT = 2.0
"""A file is normalized when no coordinate in it is farther than this from 0 (the reference's rule:
a fitted OBB at the border legitimately reaches -0.005 or 1.008, and no real frame is 2 pixels)."""


def looks_normalized(corners: np.ndarray) -> Optional[bool]:
    """Whether every |coordinate| is at most :data:`NORMALIZED_LIMIT`; ``None`` when there are none.

    Examples
    --------
    >>> looks_normalized(np.array([-0.0004, 1.0004])), looks_normalized(np.array([0, 3.0])), looks_normalized(np.zeros(0))
    (True, False, None)
    """
    if corners.size == 0:
        return None
    return bool(max(corners.max(), -corners.min()) <= NORMALIZED_LIMIT)


def scale_to_pixels(label_file: LabelFile, width: float, height: float) -> LabelFile:
    """Scale a normalized file's corners to pixels; absolute files are returned unchanged.

    Orientation is not invariant under the non-uniform scaling between normalized and pixel
    coordinates of a non-square frame, so this must happen before any angle is measured.
    """
    if not label_file.normalized:
        return label_file
    corners = label_file.boxes.corners * np.array([width, height], dtype=np.float64)
    return LabelFile(label_file.path, label_file.boxes.with_corners(corners), label_file.problems, False)


# Bulk path: clean files of numbers are tokenized in one numpy pass over their bytes and
# converted by one C call, instead of line by line in Python. Only files made of the bytes
# below qualify; anything else (a BOM is stripped first) goes to the careful per-line readers,
# which produce the exact messages of the bad-input rule.
_OTHER, _DIGIT, _DOT, _SIGN, _EXPONENT, _BLANK, _LF, _CR = range(8)  # token bytes: _DIGIT .. _EXPONENT
_BYTE_KIND = np.zeros(256, dtype=np.uint8)
_BYTE_KIND[list(b"0123456789")] = _DIGIT
_BYTE_KIND[ord(".")] = _DOT
_BYTE_KIND[list(b"+-")] = _SIGN
_BYTE_KIND[list(b"eE")] = _EXPONENT
_BYTE_KIND[list(b" \t")] = _BLANK
_BYTE_KIND[ord("\n")] = _LF
_BYTE_KIND[ord("\r")] = _CR
_BOM = b"\xef\xbb\xbf"
_MAX_DIGITS = 15  # an integer of up to 15 digits is exact in a float64, so m / 10**k rounds once
_POWERS_OF_TEN = 10.0 ** np.arange(_MAX_DIGITS + 1)


def read_blobs(paths) -> list:
    """The bytes of each file, or ``None`` where it cannot be read (the careful reader reports why).

    Plain ``os.open``/``os.read`` (half the cost of ``open()`` for thousands of small files),
    a batch of files open at once with their reading announced to the kernel:
    :func:`hbb2obb.io.reader_process.read_files`, which the read-ahead helper process runs too.
    """
    return read_files(paths)


@dataclass(frozen=True)
class NumericRows:
    """Rows of whitespace-separated numbers from several files, tokenized and converted at once.

    Attributes
    ----------
    values : (t,) float64
        Every token of the clean files, in order, converted as ``float()`` does.
    row_start, row_fields : (r,) int64
        Index in ``values`` of each non-blank line's first token, and its number of tokens.
    row_file : (r,) int64
        The file each row comes from (index into the blobs given).
    row_line : (r,) int64
        1-based line number of each row in its file (``\\n``, ``\\r\\n`` and ``\\r`` end lines).
    first_is_integer : (r,) bool
        Whether the row's first token has no ``.``, ``e`` or ``E`` (an integer literal).
    clean : (f,) bool
        Files whose every token is a number; the rows of the others are left out.
    plain : bool
        Every value is an integer of at most 8 digits (the plain-integer text of pixel labels):
        finite, and of magnitude below ``1e8``, so readers can skip their range checks.
    """

    values: np.ndarray
    row_start: np.ndarray
    row_fields: np.ndarray
    row_file: np.ndarray
    row_line: np.ndarray
    first_is_integer: np.ndarray
    clean: np.ndarray
    plain: bool = False


def numeric_rows(blobs) -> NumericRows:
    """Tokenize and convert several files of numbers in one pass (the fast path of the readers).

    Parameters
    ----------
    blobs : sequence of bytes or None
        File contents; ``None`` (unreadable) counts as not clean.

    Returns
    -------
    NumericRows

    Examples
    --------
    >>> rows = numeric_rows([b"0 1.5 2\\r\\n\\n3 4e1 5\\n", b"x 1", b"7"])
    >>> rows.values.tolist(), rows.row_fields.tolist(), rows.row_line.tolist(), rows.clean.tolist()
    ([0.0, 1.5, 2.0, 3.0, 40.0, 5.0, 7.0], [3, 3, 1], [1, 3, 1], [True, False, True])
    """
    blobs = [None if b is None else (b[3:] if b.startswith(_BOM) else b) for b in blobs]
    clean = np.array([b is not None for b in blobs], dtype=bool)
    plain = _plain_integer_pass(blobs, clean)
    if plain is not None:
        return plain
    while True:
        parsed = _numeric_pass(blobs, clean)
        if isinstance(parsed, NumericRows):
            return parsed
        clean &= ~parsed  # files that failed: leave them out and try the rest again


def _plain_integer_pass(blobs, clean: np.ndarray) -> Optional[NumericRows]:
    """The usual label text at a fraction of the general pass's cost, or ``None`` when it is not that.

    Plain text is made of integers of up to 8 digits with an optional ``-``, spaces and ``\\n``:
    pixel labels as most tools write them. It needs no byte table, no exponent or dot handling,
    and every integer converts exactly (see :func:`_short_integers`).
    """
    kept = np.flatnonzero(clean)
    parts = [blobs[i] for i in kept.tolist()]
    if not parts:
        return None
    data = b"\n".join([*parts, bytes(8)])  # each file ends with "\n"; zero bytes for the word reads
    raw = np.frombuffer(data, dtype=np.uint8, count=len(data) - 8)
    # One scratch mask for every byte test: fresh arrays this size would each cost page faults.
    mask = np.empty(raw.size, dtype=bool)
    breaks = np.flatnonzero(np.equal(raw, ord("\n"), out=mask))
    spaces = np.count_nonzero(np.equal(raw, ord(" "), out=mask))
    minus_at = np.flatnonzero(np.equal(raw, ord("-"), out=mask))
    high = np.count_nonzero(np.greater_equal(raw, ord("0"), out=mask))
    if breaks.size + spaces + minus_at.size + high != raw.size or (raw.size and raw.max() > ord("9")):
        return None
    token = np.zeros(raw.size + 1, dtype=bool)
    np.greater(raw, ord(" "), out=token[1:])  # in plain text, the bytes above the space are digits and '-'
    # Every token ends before the "\n" that ends its file: its edges are alternately a start
    # and an end, and one search finds both.
    edges = np.flatnonzero(np.not_equal(token[1:], token[:-1], out=mask))
    starts, ends = edges[0::2], edges[1::2]
    values = _short_integers(data, starts, ends, minus_at)
    if values is None:
        return None
    file_start = np.zeros(len(parts), dtype=np.int64)
    np.cumsum([len(p) + 1 for p in parts[:-1]], out=file_start[1:])
    row_start, row_fields, row_file, row_line = _row_layout(starts, breaks, file_start)
    return NumericRows(values, row_start, row_fields, kept[row_file], row_line, np.ones(row_start.size, dtype=bool),
                       clean.copy(), plain=True)


# Multiply-shift steps that combine the digit bytes of a word: pairs, then fours (then eights).
_SWAR_STEPS = {
    4: (np.uint32(0x0F0F0F0F), ((10 << 8 | 1, 8, 0x00FF00FF), (100 << 16 | 1, 16, None))),
    8: (np.uint64(0x0F0F0F0F0F0F0F0F), ((10 << 8 | 1, 8, 0x00FF00FF00FF00FF), (100 << 16 | 1, 16, 0x0000FFFF0000FFFF),
                                        (10000 << 32 | 1, 32, None))),
}


def _short_integers(text: bytes, starts: np.ndarray, ends: np.ndarray, minus_at: np.ndarray) -> Optional[np.ndarray]:
    """Tokens of the form ``[-] digits`` with 1 to 8 digits as floats, or ``None`` if any is not.

    Each token's bytes are read as one little-endian word (4 bytes when no token has more than
    4 digits, else 8) and its digits combined in a few multiply-shift steps (SWAR), all tokens at
    once. Such integers are exact in a float64, so the values are those ``float()`` gives.
    ``text`` holds the tokens and ends with 8 zero bytes, so every word read is inside it.
    """
    begin = starts
    if minus_at.size:  # few: where they are is cheaper than a test of every token
        signed = np.searchsorted(starts, minus_at)
        if (starts[np.minimum(signed, starts.size - 1)] != minus_at).any():
            return None  # a '-' inside a token
        begin = starts.copy()
        begin[signed] += 1
    shift = begin - ends  # minus the digit count
    if shift.size == 0:
        return np.zeros(0)
    longest, shortest = -int(shift.min()), -int(shift.max())
    if shortest < 1 or longest > 8:
        return None
    width = 4 if longest <= 4 else 8
    word = np.dtype(f"<u{width}")
    # the word at every offset: an overlapping view, no copy (np.take reads unaligned words well)
    words = np.take(np.ndarray((len(text) - 8,), dtype=word, buffer=text, strides=(1,)), begin)
    shift += width
    shift <<= 3
    words <<= shift.astype(word)  # the token's digits to the top, zero bytes below, the rest out
    digit_bits, steps = _SWAR_STEPS[width]
    words &= digit_bits
    for multiplier, bits, mask in steps:
        words *= word.type(multiplier)  # wraps: only the bits kept by the next mask matter
        words >>= word.type(bits)
        if mask is not None:
            words &= word.type(mask)
    values = words.astype(np.float64)
    if minus_at.size:
        values[signed] = -values[signed]  # after the conversion, so "-0" gives -0.0 as float() does
    return values


def _numeric_pass(blobs, clean: np.ndarray):
    """One attempt over the clean files: a :class:`NumericRows`, or the mask of files to drop."""
    kept = np.flatnonzero(clean)
    parts = [blobs[i] for i in kept.tolist()]
    lengths = np.array([len(p) + 1 for p in parts], dtype=np.int64)  # each file ends with an added "\n"
    file_start = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
    data = b"\n".join(parts) + b"\n" if parts else b""
    raw = np.frombuffer(data, dtype=np.uint8)
    kind = np.take(_BYTE_KIND, raw)
    present = np.bincount(kind, minlength=_CR + 1)  # how many bytes of each kind: skips absent ones
    if present[_OTHER]:
        other = np.flatnonzero(kind == _OTHER)
        drop = np.zeros(clean.size, dtype=bool)
        drop[kept[np.searchsorted(file_start, other, side="right") - 1]] = True
        return drop
    starts, ends = _token_bounds(kind)
    values = _decimals(raw, kind, present, starts, ends)
    if values is None:
        values = _convert(data, starts.size)
    if values is None:  # some token is not a number: find its files one by one (rare)
        drop = np.zeros(clean.size, dtype=bool)
        for index, part in zip(kept.tolist(), parts):
            drop[index] = _convert(part, _count_tokens(part)) is None
        if not drop.any():
            drop[kept] = True
        return drop
    if present[_CR]:
        following = np.append(raw[1:], np.uint8(0))
        breaks = np.flatnonzero((kind == _LF) | ((kind == _CR) & (following != ord("\n"))))
    else:
        breaks = np.flatnonzero(kind == _LF)
    row_start, row_fields, row_file, row_line = _row_layout(starts, breaks, file_start)
    first_is_integer = np.ones(row_start.size, dtype=bool)
    if present[_DOT] or present[_EXPONENT]:  # tokens holding a '.', 'e' or 'E' are not integers
        marks = np.flatnonzero((kind == _DOT) | (kind == _EXPONENT))
        row_of_first = np.full(starts.size, -1)
        row_of_first[row_start] = np.arange(row_start.size)
        rows = row_of_first[np.searchsorted(starts, marks, side="right") - 1]
        first_is_integer[rows[rows >= 0]] = False
    return NumericRows(values, row_start, row_fields, kept[row_file], row_line, first_is_integer, clean.copy())


def _row_layout(starts: np.ndarray, breaks: np.ndarray, file_start: np.ndarray) -> tuple:
    """Where the non-blank lines are: first token, token count, file and 1-based line number of each.

    ``breaks`` are the offsets of the line ends; every file's text, ``file_start`` on, ends with one.
    """
    tokens_before = np.searchsorted(starts, breaks)  # tokens before each line end
    line_fields = np.diff(tokens_before, prepend=0)
    rows = np.flatnonzero(line_fields)  # the lines that hold tokens
    row_fields = line_fields[rows]
    file_first_line = np.searchsorted(breaks, file_start)
    row_file = np.searchsorted(file_first_line, rows, side="right") - 1
    return tokens_before[rows] - row_fields, row_fields, row_file, rows - file_first_line[row_file] + 1


def _token_bounds(kind: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Start and end (exclusive) offsets of every token."""
    token = np.zeros(kind.size + 2, dtype=bool)
    np.less_equal(kind - np.uint8(_DIGIT), _EXPONENT - _DIGIT, out=token[1:-1])
    edges = np.flatnonzero(token[1:] != token[:-1])  # alternately a start and an end
    return edges[0::2], edges[1::2]


def _decimals(raw: np.ndarray, kind: np.ndarray, present: np.ndarray, starts: np.ndarray,
              ends: np.ndarray) -> Optional[np.ndarray]:
    """Tokens of the form ``[sign] digits [. digits]`` converted by digit arithmetic, or ``None``.

    The usual label file holds integers or short decimals: their digits, up to 15 of them, form
    an exact integer ``m``, and ``m / 10**k`` is a single correctly rounded division, the value
    ``float()`` gives. Several times faster than ``np.fromstring``, which takes the rest
    (exponents, longer numbers, anything malformed).
    """
    if starts.size == 0:
        return np.zeros(0)
    if present[_EXPONENT]:
        return None
    signed = kind[starts] == _SIGN
    if present[_SIGN] != np.count_nonzero(signed):
        return None  # a sign inside a token
    begin = starts + signed
    dots = np.flatnonzero(kind == _DOT) if present[_DOT] else np.zeros(0, dtype=np.int64)
    dot_token = np.searchsorted(starts, dots, side="right") - 1
    if dots.size and (np.diff(dot_token) == 0).any():
        return None  # two dots in one token
    has_dot = np.zeros(starts.size, dtype=bool)
    has_dot[dot_token] = True
    length = ends - begin
    digits = length - has_dot
    if digits.min() < 1 or digits.max() > _MAX_DIGITS:
        return None
    padded = np.concatenate([raw, np.zeros(_MAX_DIGITS + 2, dtype=np.uint8)])
    exact = np.int32 if digits.max() <= 9 else np.int64  # narrow integers: half the memory traffic
    length = length.astype(exact)
    mantissa = np.zeros(starts.size, dtype=exact)
    for column in range(int(length.max())):  # a few passes: one per character position
        code = padded[begin + column]
        take = column < length
        if dots.size:
            take &= code != ord(".")
        mantissa = np.where(take, mantissa * 10 + (code.astype(exact) - ord("0")), mantissa)
    fraction = np.zeros(starts.size, dtype=np.int64)
    fraction[dot_token] = ends[dot_token] - dots - 1
    values = mantissa.astype(np.float64)
    if dots.size:
        values /= _POWERS_OF_TEN[fraction]
    negative = raw[starts] == ord("-")
    values[negative] = -values[negative]  # after the division, so "-0" gives -0.0 as float() does
    return values


def _count_tokens(data: bytes) -> int:
    return _token_bounds(np.take(_BYTE_KIND, np.frombuffer(data, dtype=np.uint8)))[0].size


def _convert(data: bytes, expected: int) -> Optional[np.ndarray]:
    """Every whitespace-separated token as a float, or ``None`` unless there are exactly ``expected``.

    ``np.fromstring`` rounds as ``float()`` does; it also reads ``1-2`` as two numbers, which the
    count then rejects.
    """
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # numpy < 2 warns instead of raising
            values = np.fromstring(data, dtype=np.float64, sep=" ")
    except ValueError:
        return None
    return values if values.size == expected else None
