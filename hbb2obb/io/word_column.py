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

from hbb2obb.io.numeric_text import NumericRows, byte_groups, numeric_rows
from hbb2obb.io.text import MAX_COORDINATE

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
    pieces, piece_file, piece_line = _pieces(parts)
    piece_clean = clean[piece_file]
    found = []
    for start, end in byte_groups(map(len, pieces), _GROUP_BYTES):
        group = piece_clean[start:end]
        while True:
            split = _split(pieces[start:end], group, column)
            if isinstance(split, WordRows):
                break
            group &= ~split  # pieces whose words and rows are not one to one: the careful way
        piece_clean[start:end] = split.rows.clean
        found.append((start, split))
    file_clean = clean.copy()
    file_clean[piece_file[~piece_clean]] = False
    if (piece_clean != file_clean[piece_file]).any():  # a file taken in part: none of it, then (rare)
        return word_rows([blob if ok else None for blob, ok in zip(blobs, file_clean.tolist())], column, prepare)
    return _joined(found, piece_file, piece_line, file_clean)



def table(rows: NumericRows, good: np.ndarray, width: int, coordinates: slice) -> tuple[np.ndarray, np.ndarray]:
    """The rows of the files ``good`` still takes, as a table of ``width`` numbers a row.

    A file with a row of another width, a value that is not finite, or a coordinate (the columns
    ``coordinates``) beyond :data:`~hbb2obb.io.text.MAX_COORDINATE` is taken out of ``good`` (in
    place), for its reader's careful path and its message.

    Returns
    -------
    keep : (r,) bool
        The rows kept, over ``rows.row_*``.
    values : (k, width) float64
        Their numbers.
    """
    good[rows.row_file[rows.row_fields != width]] = False
    keep = good[rows.row_file]
    if keep.all() and rows.values.size == width * keep.size:  # the usual: every row taken, a table
        values = rows.values.reshape(-1, width)
    else:
        values = rows.values[rows.row_start[keep][:, None] + np.arange(width)] if keep.any() else np.zeros((0, width))
    if not rows.plain and values.size:
        bad = ~(np.isfinite(values).all(axis=1) & (np.abs(values[:, coordinates]) <= MAX_COORDINATE).all(axis=1))
        if bad.any():
            kept_file = rows.row_file[keep]
            good[kept_file[bad]] = False
            values = values[good[kept_file]]
            keep = good[rows.row_file]
    return keep, values

_PIECE_BYTES = 1 << 16  # a long file is split at line ends into pieces of about this much text
_GROUP_BYTES = 1 << 18  # text split in one pass


def _pieces(parts: list) -> tuple:
    """The files cut at line ends into pieces of about :data:`_PIECE_BYTES`: pieces, their file, lines before them."""
    pieces, piece_file, piece_line = [], [], []
    for index, text in enumerate(parts):
        if len(text) <= _PIECE_BYTES:
            pieces.append(text)
            piece_file.append(index)
            piece_line.append(0)
            continue
        start, lines = 0, 0
        while start < len(text):
            end = text.find(b"\n", start + _PIECE_BYTES)
            end = len(text) if end < 0 else end + 1
            pieces.append(text[start:end])
            piece_file.append(index)
            piece_line.append(lines)
            lines += text.count(b"\n", start, end)
            start = end
    return pieces, np.array(piece_file, dtype=np.int64), np.array(piece_line, dtype=np.int64)


def _joined(found: list, piece_file: np.ndarray, piece_line: np.ndarray, clean: np.ndarray) -> WordRows:
    """The groups' rows as one :class:`WordRows` over the files (pieces back in their files, lines renumbered)."""
    vocabulary = sorted({word for _, split in found for word in split.vocabulary})
    index = {word: i for i, word in enumerate(vocabulary)}
    values, row_start, words = [], [], []
    shift = 0
    for _, split in found:
        values.append(split.rows.values)
        row_start.append(split.rows.row_start + shift)
        shift += split.rows.values.size
        recoded = np.array([index[word] for word in split.vocabulary], dtype=np.int64)
        words.append(recoded[split.word] if split.word.size else split.word)
    pieces = np.concatenate([split.rows.row_file + first for first, split in found]) if found else np.zeros(0, np.int64)
    rows = NumericRows(
        values=np.concatenate(values) if found else np.zeros(0),
        row_start=np.concatenate(row_start) if found else np.zeros(0, dtype=np.int64),
        row_fields=np.concatenate([split.rows.row_fields for _, split in found]) if found else np.zeros(0, np.int64),
        row_file=piece_file[pieces],
        row_line=np.concatenate([split.rows.row_line for _, split in found]) + piece_line[pieces] if found
        else np.zeros(0, dtype=np.int64),
        first_is_integer=np.concatenate([split.rows.first_is_integer for _, split in found]) if found
        else np.zeros(0, dtype=bool),
        clean=clean,
        plain=all(split.rows.plain for _, split in found),
    )
    after = np.concatenate([split.after for _, split in found]) if found else np.zeros(0, dtype=np.uint8)
    return WordRows(rows, np.concatenate(words) if found else np.zeros(0, dtype=np.int64), after, tuple(vocabulary))


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
    at_all = np.flatnonzero(raw[blanks] == ord("\n"))  # each line end, as its place among the separators
    breaks_all = blanks[at_all]
    line_start = np.empty_like(breaks_all)
    line_start[:1] = 0
    line_start[1:] = breaks_all[:-1] + 1
    line_index = np.flatnonzero(line_start < breaks_all)  # the non-empty lines
    line_start, breaks, at_break = line_start[line_index], breaks_all[line_index], at_all[line_index]
    if column == 0:  # the first field: from the line's start to the first separator after it
        if line_start.size:
            drop(line_start[raw[line_start] <= ord(" ")])  # a line that starts blank
        w_start = line_start
        w_end = blanks[np.where(line_index > 0, at_all[np.maximum(line_index - 1, 0)] + 1, 0)]
    else:  # counted from the line's end: the separators before it, each a single space
        if breaks.size:
            drop(breaks[raw[breaks - 1] <= ord(" ")])  # a line that ends blank
        before = blanks[np.maximum(at_break + column, 0)]
        w_start = before + 1
        w_end = breaks if column == -1 else blanks[at_break - 1]
        drop(breaks[(before < line_start) | (at_break + column < 0)])  # too few fields
    drop(w_start[(w_end <= w_start) | (w_end - w_start > _LONGEST_WORD)])  # runs of separators, long words
    # take the words out (their bytes, not the whole text, are visited): the numbers that stay
    # keep their lines, and the tokenizer has as little text to pass over as a YOLO-OBB file's
    size = np.maximum(w_end - w_start, 0)
    word_file = np.searchsorted(file_start, w_start, side="right") - 1
    total = int(size.sum())
    offsets = np.repeat(w_start - np.cumsum(size) + size, size) + np.arange(total)
    stays = np.ones(raw.size, dtype=bool)
    stays[offsets] = False
    text = raw[stays].tobytes()
    removed = np.zeros(len(parts) + 1, dtype=np.int64)
    np.cumsum(np.bincount(word_file, weights=size, minlength=len(parts)).astype(np.int64), out=removed[1:])
    bounds = (file_start - removed).tolist()
    rows = numeric_rows([text[a:b - 1] if ok else None for a, b, ok in zip(bounds[:-1], bounds[1:],
                                                                                     keep.tolist())])
    # the words of the files taken, in the tokenizer's row order (files in order, lines in order)
    taken = rows.clean[word_file]
    word_file = word_file[taken]
    file_first_line = np.searchsorted(breaks_all, file_start[:-1])
    word_line = line_index[taken] - file_first_line[word_file] + 1
    if not (word_file.size == rows.row_file.size and (word_file == rows.row_file).all()
            and (word_line == rows.row_line).all()):
        return _out_of_step(word_file, word_line, rows, clean.size)
    w_start, w_end = w_start[taken], w_end[taken]
    word, vocabulary = _factorize(raw, w_start, w_end)
    after = np.zeros(w_start.size, dtype=np.uint8)
    if column == -2:  # the last token, when it is one byte (a DOTA difficult flag): its byte
        single = breaks[taken] - w_end == 2
        after[single] = raw[w_end[single] + 1]
    return WordRows(rows, word, after, vocabulary)


_MIXING = (np.uint64(0x9E3779B97F4A7C15), np.uint64(0xC2B2AE3D27D4EB4F))  # odd constants that spread the bits


def _factorize(raw: np.ndarray, w_start: np.ndarray, w_end: np.ndarray) -> tuple:
    """Each word as an index into the sorted distinct words, and those words.

    Few distinct words among many rows (class names, image ids): a word of up to 16 bytes is
    its first 8 bytes, its last 8 and its length, read as integers in place, mixed into one
    key and factorized as integers; every word is then checked against the first word of its
    key (the three integers; every byte for a longer word), so two different words that share a
    key (never seen, but possible) are caught, and factorized by their bytes instead.
    """
    if w_start.size == 0:
        return np.zeros(0, dtype=np.int64), ()
    size = w_end - w_start
    padded = np.concatenate([np.zeros(8, dtype=np.uint8), raw, np.zeros(8, dtype=np.uint8)])
    words = np.ndarray((padded.size - 7,), dtype="<u8", buffer=padded, strides=(1,))  # the 8 bytes at each offset
    short = np.minimum(size, 8).astype(np.uint64) * np.uint64(8)
    head = words[w_start + 8]
    tail = words[w_end]  # the 8 bytes that end the word (offsets shifted by the padding)
    with np.errstate(over="ignore"):
        partial = short < 64
        head[partial] &= (np.uint64(1) << short[partial]) - np.uint64(1)
        tail[partial] >>= np.uint64(64) - short[partial]
        key = (head * _MIXING[0]) ^ (tail * _MIXING[1]) ^ size.astype(np.uint64)
    _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    same = (head == head[first[inverse]]) & (tail == tail[first[inverse]]) & (size == size[first[inverse]])
    long = np.flatnonzero(size > 16)
    if long.size and same.all():  # their middle bytes too
        same[long] = (_spelled(raw, w_start[long], w_end[long]) ==
                      _spelled(raw, w_start[first[inverse[long]]], w_end[first[inverse[long]]])).all(axis=1)
    if same.all():
        spelled = _spelled(raw, w_start[first], w_end[first])
        names = spelled.view(f"S{spelled.shape[1]}").ravel()
        order = np.argsort(names, kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size)
        return rank[inverse].astype(np.int64), tuple(w.decode("ascii") for w in names[order].tolist())
    spelled = _spelled(raw, w_start, w_end)
    names, inverse = np.unique(spelled.view(f"S{spelled.shape[1]}").ravel(), return_inverse=True)
    return inverse.astype(np.int64), tuple(w.decode("ascii") for w in names.tolist())


def _spelled(raw: np.ndarray, w_start: np.ndarray, w_end: np.ndarray) -> np.ndarray:
    """The bytes of each word, one row each, zeros after its end."""
    size = w_end - w_start
    longest = max(int(size.max()), 1) if size.size else 1
    padded = np.concatenate([raw, np.zeros(longest, dtype=np.uint8)])
    spelled = padded[w_start[:, None] + np.arange(longest)]
    spelled[np.arange(longest) >= size[:, None]] = 0
    return spelled


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

