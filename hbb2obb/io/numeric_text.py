"""The bulk tokenizer of the label readers' fast path: many files of numbers parsed in a few numpy passes.

Clean files of numbers are tokenized in one numpy pass over their bytes and converted by one C
call (or by digit arithmetic), instead of line by line in Python. Only files made of the bytes
below qualify; a file with anything else (a byte order mark is stripped first) is screened line
by line by its reader, which gives the exact messages of the bad-input rule and hands the good
lines back to this tokenizer.
"""

from __future__ import annotations

import bisect
import itertools
import operator
import warnings
from dataclasses import dataclass
from typing import Optional

import numpy as np

_OTHER, _DIGIT, _DOT, _SIGN, _EXPONENT, _BLANK, _LF, _CR = range(8)  # token bytes: _DIGIT .. _EXPONENT
_BYTE_KIND = np.zeros(256, dtype=np.uint8)
_BYTE_KIND[list(b"0123456789")] = _DIGIT
_BYTE_KIND[ord(".")] = _DOT
_BYTE_KIND[list(b"+-")] = _SIGN
_BYTE_KIND[list(b"eE")] = _EXPONENT
_BYTE_KIND[list(b" \t")] = _BLANK
_BYTE_KIND[ord("\n")] = _LF
_BYTE_KIND[ord("\r")] = _CR
# The same table for bytes.translate, which classifies a text byte to byte; np.take would first
# widen every byte to a 64-bit index (eight times the text in memory, about 2.5x slower).
_KIND_TABLE = _BYTE_KIND.tobytes()
_BOM = b"\xef\xbb\xbf"
_MAX_DIGITS = 15  # an integer of up to 15 digits is exact in a float64, so m / 10**k rounds once
_POWERS_OF_TEN = 10.0 ** np.arange(_MAX_DIGITS + 1)




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
    blobs = blobs if isinstance(blobs, list) else list(blobs)
    clean = np.array([b is not None for b in blobs], dtype=bool) if None in blobs else np.ones(len(blobs), dtype=bool)
    # Plain text has no byte above '9', so a file with a byte order mark is never taken as it
    # is: the marks need stripping (a step per file) only when this first attempt declines.
    plain = _plain_integer_pass(blobs, clean)
    if plain is not None:
        return plain
    stripped = [None if b is None else (b[3:] if b.startswith(_BOM) else b) for b in blobs]
    if any(map(operator.is_not, stripped, blobs)):
        blobs = stripped
        plain = _plain_integer_pass(blobs, clean)
        if plain is not None:
            return plain
    while True:
        parsed = _numeric_pass(blobs, clean)
        if isinstance(parsed, NumericRows):
            return parsed
        clean &= ~parsed  # files that failed: leave them out and try the rest again


def byte_groups(sizes, limit: int) -> list[tuple[int, int]]:
    """Runs of consecutive texts of about ``limit`` bytes each, as ``(start, end)`` index pairs.

    A run ends at the first text that brings it to ``limit`` (or at the last text), found by
    bisection on the running total, not text by text. The bulk passes work a run at a time: the
    work arrays of each stay small enough to stay in the processor's cache.

    Examples
    --------
    >>> byte_groups([5, 5, 20, 1, 1], 10)
    [(0, 2), (2, 3), (3, 5)]
    """
    total = list(itertools.accumulate(sizes, initial=0))
    count = len(total) - 1
    groups, start = [], 0
    while start < count:
        end = min(bisect.bisect_left(total, total[start] + limit, lo=start + 1), count)
        groups.append((start, end))
        start = end
    return groups


def _plain_integer_pass(blobs, clean: np.ndarray) -> Optional[NumericRows]:
    """The usual label text at a fraction of the general pass's cost, or ``None`` when it is not that.

    Plain text is made of integers of up to 8 digits with an optional ``-``, spaces and ``\\n``:
    pixel labels as most tools write them. It needs no byte table, no exponent or dot handling,
    and every integer converts exactly (see :func:`_short_integers`).
    """
    kept = np.flatnonzero(clean)
    parts = blobs if kept.size == len(blobs) else [blobs[i] for i in kept.tolist()]
    if not parts:
        return None
    data = b"\n".join([*parts, bytes(8)])  # each file ends with "\n"; zero bytes for the word reads
    if data.find(b".") >= 0:  # decimals (found at once where they are common): not plain text
        return None
    raw = np.frombuffer(data, dtype=np.uint8, count=len(data) - 8)
    # One scratch mask for every byte test: fresh arrays this size would each cost page faults.
    mask = np.empty(raw.size, dtype=bool)
    breaks = np.flatnonzero(np.equal(raw, ord("\n"), out=mask))
    spaces = np.count_nonzero(np.equal(raw, ord(" "), out=mask))
    minus_at = _rare_byte_positions(data, b"-", raw.size)
    if minus_at is None:  # many negative numbers: one pass over the bytes finds them
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
    lengths = np.fromiter(map(len, parts), dtype=np.int64, count=len(parts))  # no Python step per file
    lengths += 1
    np.cumsum(lengths[:-1], out=file_start[1:])
    row_start, row_fields, row_file, row_line = _row_layout(starts, breaks, file_start)
    return NumericRows(values, row_start, row_fields, kept[row_file], row_line, np.ones(row_start.size, dtype=bool),
                       clean.copy(), plain=True)


_RARE_LIMIT = 64  # positions of a byte found one by one, up to this many (then a numpy pass over all bytes)


def _rare_byte_positions(data: bytes, byte: bytes, end: int) -> Optional[np.ndarray]:
    """Offsets of ``byte`` in ``data[:end]``, or ``None`` when there are more than :data:`_RARE_LIMIT`.

    Each ``find`` skips to the next occurrence at memory speed, so a byte that is rare (the
    ``-`` of the few negative coordinates in pixel labels) costs next to nothing, where a
    comparison of every byte and the search of its mask cost about a tenth of the whole pass.
    """
    found = []
    at = data.find(byte, 0, end)
    while at >= 0:
        if len(found) == _RARE_LIMIT:
            return None
        found.append(at)
        at = data.find(byte, at + 1, end)
    return np.array(found, dtype=np.intp)


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
    kind = np.frombuffer(data.translate(_KIND_TABLE), dtype=np.uint8)
    # which kinds of byte occur (steps for absent ones are skipped): one OR of a bit per kind
    # (np.bincount would first widen every byte to a 64-bit integer)
    seen = int(np.bitwise_or.reduce(np.left_shift(np.uint8(1), kind))) if kind.size else 0
    present = [bool(seen >> k & 1) for k in range(_CR + 1)]
    if present[_OTHER]:
        other = np.flatnonzero(kind == _OTHER)
        drop = np.zeros(clean.size, dtype=bool)
        drop[kept[np.searchsorted(file_start, other, side="right") - 1]] = True
        return drop
    starts, ends = _token_bounds(kind)
    dots = np.flatnonzero(kind == _DOT) if present[_DOT] else np.zeros(0, dtype=np.int64)
    dot_token = np.searchsorted(starts, dots, side="right") - 1  # the token of each '.'
    values = None
    if not present[_EXPONENT]:
        signed = kind[starts] == _SIGN
        if not present[_SIGN] or np.count_nonzero(kind == _SIGN) == np.count_nonzero(signed):  # no sign inside
            values = _decimals(raw, starts, ends, signed, dots, dot_token)
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
        marked = dot_token
        if present[_EXPONENT]:
            exponents = np.searchsorted(starts, np.flatnonzero(kind == _EXPONENT), side="right") - 1
            marked = np.concatenate([dot_token, exponents])
        row_of_first = np.full(starts.size, -1)
        row_of_first[row_start] = np.arange(row_start.size)
        rows = row_of_first[marked]
        first_is_integer[rows[rows >= 0]] = False
    return NumericRows(values, row_start, row_fields, kept[row_file], row_line, first_is_integer, clean.copy())


def _row_layout(starts: np.ndarray, breaks: np.ndarray, file_start: np.ndarray) -> tuple:
    """Where the non-blank lines are: first token, token count, file and 1-based line number of each.

    ``breaks`` are the offsets of the line ends; every file's text, ``file_start`` on, ends with one.
    """
    tokens_before = np.searchsorted(starts, breaks)  # tokens before each line end
    line_fields = np.empty_like(tokens_before)  # np.diff(tokens_before, prepend=0), without its concatenation
    line_fields[:1] = tokens_before[:1]
    np.subtract(tokens_before[1:], tokens_before[:-1], out=line_fields[1:])
    rows = np.flatnonzero(line_fields)  # the lines that hold tokens
    row_fields = line_fields[rows]
    file_first_line = np.searchsorted(breaks, file_start)
    # each line's file: its file's index repeated over the file's lines (no search per row)
    file_lines = np.empty_like(file_first_line)
    np.subtract(file_first_line[1:], file_first_line[:-1], out=file_lines[:-1])
    file_lines[-1:] = breaks.size - file_first_line[-1:]
    row_file = np.repeat(np.arange(file_start.size), file_lines)[rows]
    return tokens_before[rows] - row_fields, row_fields, row_file, rows - file_first_line[row_file] + 1


def _token_bounds(kind: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Start and end (exclusive) offsets of every token."""
    token = np.zeros(kind.size + 2, dtype=bool)
    np.less_equal(kind - np.uint8(_DIGIT), _EXPONENT - _DIGIT, out=token[1:-1])
    edges = np.flatnonzero(token[1:] != token[:-1])  # alternately a start and an end
    return edges[0::2], edges[1::2]


def _decimals(raw: np.ndarray, starts: np.ndarray, ends: np.ndarray, signed: np.ndarray, dots: np.ndarray,
              dot_token: np.ndarray) -> Optional[np.ndarray]:
    """Tokens of the form ``[sign] digits [. digits]`` converted by digit arithmetic, or ``None``.

    The usual label file holds integers or short decimals: their digits, up to 15 of them, form
    an exact integer ``m``, and ``m / 10**k`` is a single correctly rounded division, the value
    ``float()`` gives. Several times faster than ``np.fromstring``, which takes the rest
    (exponents, longer numbers, anything malformed). ``dots`` are the offsets of the ``.``
    bytes and ``dot_token`` the token of each (the caller's, which also finds the decimal rows).
    The caller makes sure that no token holds an exponent or a sign after its first byte;
    ``signed`` marks the tokens that start with one.
    """
    if starts.size == 0:
        return np.zeros(0)
    begin = starts + signed
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
    # One pass per character position, over every token up to the length most tokens reach;
    # the positions beyond it over the few longer tokens only (a Task1 score among coordinates).
    longer = np.cumsum(np.bincount(length)[:0:-1])[::-1]  # longer[c]: the tokens with a character c
    common = next((c for c in range(longer.size) if 4 * longer[c] < starts.size), longer.size)
    mantissa = _digit_passes(padded, begin, length, range(common), np.zeros(starts.size, dtype=exact), dots.size > 0)
    if common < longer.size:
        long = np.flatnonzero(length > common)
        mantissa[long] = _digit_passes(padded, begin[long], length[long], range(common, longer.size),
                                       mantissa[long], dots.size > 0)
    fraction = np.zeros(starts.size, dtype=np.int64)
    fraction[dot_token] = ends[dot_token] - dots - 1
    values = mantissa.astype(np.float64)
    if dots.size:
        values /= _POWERS_OF_TEN[fraction]
    negative = raw[starts] == ord("-")
    values[negative] = -values[negative]  # after the division, so "-0" gives -0.0 as float() does
    return values


def _digit_passes(padded: np.ndarray, begin: np.ndarray, length: np.ndarray, columns: range, mantissa: np.ndarray,
                  dotted: bool) -> np.ndarray:
    """``mantissa`` carried through the characters ``columns`` of each token: times 10 plus each digit."""
    for column in columns:
        code = padded[begin + column]
        take = column < length
        if dotted:
            take &= code != ord(".")
        mantissa = np.where(take, mantissa * 10 + (code.astype(mantissa.dtype) - ord("0")), mantissa)
    return mantissa


def _count_tokens(data: bytes) -> int:
    return _token_bounds(np.frombuffer(data.translate(_KIND_TABLE), dtype=np.uint8))[0].size


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
