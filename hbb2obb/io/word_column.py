"""Rows of numbers with one word each (a DOTA class name, a Task1 image id), for the bulk tokenizer.

The bulk tokenizer (:mod:`hbb2obb.io.numeric_text`) takes files of numbers only. DOTA rows hold
a class name at field 9 and Task1 rows an image id at field 1, so before this step every such
file was read line by line in Python, three times slower than the same boxes written as
YOLO-OBB. Here the word of every row is found by its position (the field it must be in), lifted
out and blanked, and the numbers left are tokenized in bulk as any other file's. A file that is
not exactly that layout (a row without its word, bytes outside ASCII, a word too long) is left
out, for its reader's careful line-by-line path and its exact messages.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np

from hbb2obb.io.numeric_text import NumericRows, numeric_rows_in_groups

_BOM = b"\xef\xbb\xbf"
_LONGEST_WORD = 64  # bytes; a longer word (never a class name or an image id) sends its file the careful way


@dataclass(frozen=True)
class WordRows:
    """The rows of several files, each split into its word and its numbers.

    Attributes
    ----------
    rows : NumericRows
        The numbers of each row (the word left out), for the files taken (``rows.clean``).
    word : (r,) int64
        Per row of ``rows``, its word as an index into ``vocabulary``.
    after : (r,) uint8
        With the word before the last field (``column=-2``): per row, the byte of its last field
        when that field is one byte long (a DOTA difficult flag), else 0.
    vocabulary : tuple of str
        The distinct words, in sorted byte order.
    """

    rows: NumericRows
    word: np.ndarray
    after: np.ndarray
    vocabulary: tuple


def word_rows(blobs, column: int, prepare: Optional[Callable[[bytes], Optional[bytes]]] = None) -> WordRows:
    """Split each row of each file into its word and its numbers.

    Parameters
    ----------
    blobs : sequence of bytes or None
        File contents; ``None`` is never taken.
    column : int
        Where every row's word is: ``0``, the first field, or ``-1`` / ``-2``, the last or the
        one before it (the numbers before it are counted by the caller, from the rows).
    prepare : callable, optional
        Called on each file's text (byte order mark stripped, line ends made ``\\n``): the text
        to split, with the same lines, or ``None`` to leave the file out (DOTA blanks its header
        lines here).

    Returns
    -------
    WordRows
        A file is taken (``rows.clean``) when each of its non-empty lines is fields separated by
        single spaces, its word where ``column`` says and numbers elsewhere, as the bulk
        tokenizer takes them; any other file (tabs, runs of spaces, a line without numbers) is
        left to its reader's careful path.

    Examples
    --------
    >>> split = word_rows([b"P1 0.5 1 2\\nP2 0.25 3 4\\n", b"P1 x 1\\n", b"0.5\\n"], column=0)
    >>> split.rows.clean.tolist(), split.rows.values.tolist(), [split.vocabulary[w] for w in split.word]
    ([True, False, False], [0.5, 1.0, 2.0, 0.25, 3.0, 4.0], ['P1', 'P2'])
    >>> split = word_rows([b"1 2 car 0\\n3 4 bus 1\\n"], column=-2)
    >>> split.rows.row_fields.tolist(), [split.vocabulary[w] for w in split.word], bytes(split.after)
    ([3, 3], ['car', 'bus'], b'01')
    """
    if column not in (0, -1, -2):
        raise ValueError(f"word_rows: column must be 0, -1 or -2, got {column}")
    parts, clean = [], np.ones(len(blobs), dtype=bool)
    for index, blob in enumerate(blobs):
        if blob is not None:
            if blob.startswith(_BOM):
                blob = blob[3:]
            if b"\r" in blob:  # the tokenizer's line ends (\r\n, \r) as \n: the same line numbers
                blob = blob.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
            if prepare is not None:
                blob = prepare(blob)
        if blob is None:
            clean[index] = False
            blob = b""
        parts.append(blob)
    while True:
        split = _split(parts, clean, column)
        if isinstance(split, WordRows):
            return split
        clean &= ~split  # files whose words and rows are not one to one: the careful way


def _split(parts: list, clean: np.ndarray, column: int):
    """One attempt: the :class:`WordRows`, or the mask of files to leave out and try again without."""
    lengths = np.fromiter(map(len, parts), dtype=np.int64, count=len(parts)) + 1  # each file gets a "\n"
    file_start = np.zeros(len(parts) + 1, dtype=np.int64)
    np.cumsum(lengths, out=file_start[1:])
    data = b"\n".join([*parts, b""])
    raw = np.frombuffer(data, dtype=np.uint8)
    keep = clean.copy()

    def drop(offsets: np.ndarray) -> None:
        keep[np.searchsorted(file_start, offsets, side="right") - 1] = False

    drop(np.flatnonzero(raw >= 0x80))  # words are ASCII (the careful path decodes anything else)
    blanks = np.flatnonzero(raw <= ord(" "))  # every separator: spaces, tabs, line ends
    breaks = blanks[raw[blanks] == ord("\n")]
    line_start = np.empty_like(breaks)
    line_start[:1] = 0
    line_start[1:] = breaks[:-1] + 1
    full = line_start < breaks  # the non-empty lines
    line_start, breaks, at_break = line_start[full], breaks[full], np.searchsorted(blanks, breaks[full])
    if column == 0:  # the first field: from the line's start to the first separator
        if line_start.size:
            drop(line_start[raw[line_start] <= ord(" ")])  # a line that starts blank
        w_start = line_start
        w_end = blanks[np.searchsorted(blanks, line_start)]
    else:  # counted from the line's end: the separators before it, each a single space
        if breaks.size:
            drop(breaks[raw[breaks - 1] <= ord(" ")])  # a line that ends blank
        before = blanks[np.maximum(at_break + column, 0)]
        w_start = before + 1
        w_end = breaks if column == -1 else blanks[at_break - 1]
        drop(breaks[(before < line_start) | (at_break + column < 0)])  # too few fields
    drop(w_start[(w_end <= w_start) | (w_end - w_start > _LONGEST_WORD)])  # runs of separators, long words
    # blank the words (their bytes, not the whole text, are visited)
    size = np.maximum(w_end - w_start, 0)
    blanked = raw.copy()
    total = int(size.sum())
    offsets = np.repeat(w_start - np.cumsum(size) + size, size) + np.arange(total)
    blanked[offsets] = ord(" ")
    text = blanked.tobytes()
    rows = numeric_rows_in_groups([text[a:b - 1] if ok else None for a, b, ok in
                         zip(file_start[:-1].tolist(), file_start[1:].tolist(), keep.tolist())])
    # the words of the files taken, in the tokenizer's row order (files in order, lines in order)
    word_file = np.searchsorted(file_start, w_start, side="right") - 1
    taken = rows.clean[word_file]
    word_file = word_file[taken]
    word_line = np.searchsorted(breaks_all := blanks[raw[blanks] == ord("\n")], w_start[taken]) \
        - np.searchsorted(breaks_all, file_start[word_file]) + 1
    if not (word_file.size == rows.row_file.size and (word_file == rows.row_file).all()
            and (word_line == rows.row_line).all()):
        return _out_of_step(word_file, word_line, rows, clean.size)
    w_start, w_end = w_start[taken], w_end[taken]
    word, vocabulary = _factorize(raw, w_start, w_end)
    after = np.zeros(w_start.size, dtype=np.uint8)
    if column == -2:  # the last token, when it is one byte (a DOTA difficult flag): its byte
        last = breaks[np.searchsorted(breaks, w_end)]
        single = last - w_end == 2
        after[single] = raw[w_end[single] + 1]
    return WordRows(rows, word, after, vocabulary)


_MULTIPLIER = np.uint64(0x100000001B3)  # FNV-1a's 64-bit prime: a well-mixing step for the word keys


def _factorize(raw: np.ndarray, w_start: np.ndarray, w_end: np.ndarray) -> tuple:
    """Each word as an index into the sorted distinct words, and those words.

    Few distinct words among many rows (class names, image ids): each word becomes a 64-bit key
    of its bytes, the keys are factorized as integers, and every word is then compared byte for
    byte with the first word of its key, so two different words that share a key (never seen,
    but possible) are caught and factorized by their bytes instead.
    """
    if w_start.size == 0:
        return np.zeros(0, dtype=np.int64), ()
    size = w_end - w_start
    longest = int(size.max())
    padded = np.concatenate([raw, np.zeros(longest, dtype=np.uint8)])
    spelled = padded[w_start[:, None] + np.arange(longest)]
    spelled[np.arange(longest) >= size[:, None]] = 0
    key = np.zeros(w_start.size, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for column in range(longest):
            key ^= spelled[:, column]
            key *= _MULTIPLIER
    distinct, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    if (spelled == spelled[first[inverse]]).all():
        words = spelled[first].view(f"S{longest}").ravel()
        order = np.argsort(words, kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size)
        return rank[inverse].astype(np.int64), tuple(w.decode("ascii") for w in words[order].tolist())
    words, inverse = np.unique(spelled.view(f"S{longest}").ravel(), return_inverse=True)
    return inverse.astype(np.int64), tuple(w.decode("ascii") for w in words.tolist())


def _out_of_step(word_file: np.ndarray, word_line: np.ndarray, rows: NumericRows, files: int) -> np.ndarray:
    """The files whose words and rows do not pair one to one (a line of a word alone, say)."""
    bad = np.zeros(files, dtype=bool)
    words = np.bincount(word_file, minlength=files)
    bad |= words != np.bincount(rows.row_file, minlength=files)
    same = ~bad[word_file]
    row_same = ~bad[rows.row_file]
    differ = word_line[same] != rows.row_line[row_same]
    bad[word_file[same][differ]] = True
    if not bad.any():  # never: one of the two comparisons above always finds the file
        raise AssertionError("word_rows: words and rows out of step, no file found")
    return bad

