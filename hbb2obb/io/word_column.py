"""Rows of numbers with one word each (a DOTA class name, a Task1 image id), for the bulk tokenizer.

The bulk tokenizer (:mod:`hbb2obb.io.numeric_text`) takes files of numbers only. DOTA rows hold
a class name at field 9 and Task1 rows an image id at field 1, so before the bulk path every
such file was read line by line in Python, three times slower than the same boxes written as
YOLO-OBB. Here one pass over the text finds every token and line end; the token at the word's
field of each row is its word, and the others are converted as the tokenizer converts numbers.
A file that is not exactly that layout (a row without its word, a letter outside the words,
tabs, an exponent, bytes outside ASCII, a word too long) is left out, for its reader's careful
line-by-line path and its exact messages.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np

from hbb2obb.io.numeric_text import NumericRows, _convert, _decimals, _row_layout, _short_integers, byte_groups
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
        spaces, its word where ``column`` says and numbers elsewhere, written with digits, an
        optional leading ``-`` and an optional ``.`` (up to 15 digits, or as ``np.fromstring``
        reads them); any other file (tabs, exponents, a letter outside the word, a line
        without numbers) is left to its reader's careful path.

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


_NUMBER_BYTES = b"0123456789-."  # the bytes a number token may hold here (no exponent, no '+')


def _split(parts: list, clean: np.ndarray, column: int):
    """One attempt: the :class:`WordRows`, or the mask of files to leave out and try again without.

    One pass finds every token (the runs of bytes above the space) and every line end; the
    token at ``column`` of each row is its word, every other token a number. A census makes
    sure that the bytes no number holds (letters, tabs, ``\\r``, ``+``, ``e``...) are all inside
    the words: the count of such bytes in the whole text must equal their count in the words
    found, counted once per distinct word.
    """
    kept = np.flatnonzero(clean)
    texts = [parts[i] for i in kept.tolist()]
    if not texts:
        return _no_rows(clean)
    lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts)) + 1  # each file gets a "\n"
    file_start = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum(lengths, out=file_start[1:])
    data = b"\n".join([*texts, bytes(8)])  # zero bytes after the last "\n": the digit reads stay inside
    size = len(data) - 8
    raw = np.frombuffer(data, dtype=np.uint8, count=size)
    drop = np.zeros(clean.size, dtype=bool)

    def dropped(offsets: np.ndarray) -> np.ndarray:
        drop[kept[np.searchsorted(file_start, offsets, side="right") - 1]] = True
        if not drop.any():  # never (offsets always name a file), but an empty mask would retry for ever
            drop[kept] = True
        return drop

    if raw.max() >= 0x80:  # words are ASCII (the careful path decodes anything else)
        return dropped(np.flatnonzero(raw >= 0x80))
    mask = np.empty(size, dtype=bool)  # one scratch mask for the byte tests
    breaks = np.flatnonzero(np.equal(raw, ord("\n"), out=mask))
    token = np.zeros(size + 1, dtype=bool)
    np.greater(raw, ord(" "), out=token[1:])
    edges = np.flatnonzero(np.not_equal(token[1:], token[:-1], out=mask))  # alternately a start and an end
    starts, ends = edges[0::2], edges[1::2]
    row_start, row_fields, row_file, row_line = _row_layout(starts, breaks, file_start[:-1])
    if row_fields.size and row_fields.min() < 2:  # a word needs a number beside it
        return dropped(starts[row_start[row_fields < 2]])
    word_token = row_start if column == 0 else row_start + row_fields + column
    w_start, w_end = starts[word_token], ends[word_token]
    if (w_end - w_start > _LONGEST_WORD).any():
        return dropped(w_start[w_end - w_start > _LONGEST_WORD])
    word, vocabulary = _factorize(data, raw, w_start, w_end)
    # per word of every row: its bytes no number holds, its '-' and its '.' (counted once per distinct word)
    word_other, word_minus, word_dots = np.bincount(word, minlength=len(vocabulary)) @ _census(vocabulary)
    # The census, in a few comparisons of every byte with one value (the quickest numpy passes).
    token_bytes = np.count_nonzero(token)
    minus = np.count_nonzero(np.equal(raw, ord("-"), out=mask))
    dots = np.count_nonzero(np.equal(raw, ord("."), out=mask)) if data.find(b".", 0, size) >= 0 else 0
    # bytes in tokens below '0' or above '9', other than '-' and '.'
    text_other = (np.count_nonzero(np.greater(raw, ord("9"), out=mask))
                  + np.count_nonzero(np.less(raw, ord("0"), out=mask)) - (size - token_bytes) - minus - dots)
    separators = np.count_nonzero(np.less(raw, ord(" "), out=mask))  # "\n", tabs, "\r" and other controls
    if text_other != word_other or separators != breaks.size:  # a byte no number holds outside the words
        other = np.flatnonzero(np.frombuffer(data.translate(_OTHER_TABLE), dtype=np.uint8, count=size))
        if not starts.size:  # no token at all (a tab alone on its line): no word can hold them
            return dropped(other)
        at = np.maximum(np.searchsorted(starts, other, side="right") - 1, 0)
        inside = (other >= starts[at]) & (other < ends[at]) & np.isin(at, word_token)
        return dropped(other[~inside])
    is_word = np.zeros(starts.size, dtype=bool)
    is_word[word_token] = True
    n_start, n_end = starts[~is_word], ends[~is_word]
    first_number = row_start - np.arange(row_start.size)  # each row's first number among the numbers: one word a row
    values, first_is_integer, plain = _numbers(data, raw, (starts, is_word, n_start, n_end, w_start, w_end),
                                               (minus, word_minus), (dots, word_dots), first_number)
    if values is None:  # a number the digit passes and np.fromstring both decline: file by file (rare)
        if kept.size == 1:
            drop[kept] = True
            return drop
        for index, text in zip(kept.tolist(), texts):
            drop[index] = not isinstance(_split([text], np.ones(1, dtype=bool), column), WordRows)
        if not drop.any():
            drop[kept] = True
        return drop
    after = np.zeros(row_start.size, dtype=np.uint8)
    if column == -2:  # the last token, when it is one byte (a DOTA difficult flag): its byte
        last = row_start + row_fields - 1
        single = ends[last] - starts[last] == 1
        after[single] = raw[starts[last[single]]]
    rows = NumericRows(values, first_number, row_fields - 1, kept[row_file], row_line, first_is_integer, clean.copy(),
                       plain=plain)
    return WordRows(rows, word, after, vocabulary)


_OTHER_TABLE = bytes(0 if byte in _NUMBER_BYTES + b" \n" else 1 for byte in range(256))  # translate: 1 for any other


def _census(vocabulary: tuple) -> np.ndarray:
    """Per word: its bytes that no number holds, its ``-`` and its ``.``, as a ``(words, 3)`` array.

    Counted over all the words' bytes at once (a Task1 submission of 20,000 frames has as many
    image ids, and every group of rows meets most of them again).
    """
    text = np.frombuffer("".join(vocabulary).encode("ascii"), dtype=np.uint8)  # the words are ASCII here
    owner = np.repeat(np.arange(len(vocabulary)), np.fromiter(map(len, vocabulary), dtype=np.int64,
                                                                count=len(vocabulary)))
    census = np.zeros((len(vocabulary), 3), dtype=np.int64)
    for column, counted in enumerate((_OTHER_BYTE[text], text == ord("-"), text == ord("."))):
        census[:, column] = np.bincount(owner[counted], minlength=len(vocabulary))
    return census


_OTHER_BYTE = np.frombuffer(_OTHER_TABLE, dtype=bool)  # the same table as an array (a word holds no space or line end)


def _numbers(data: bytes, raw: np.ndarray, tokens: tuple, minus: tuple, dots: tuple, first: np.ndarray) -> tuple:
    """The number tokens converted: their values, whether each row's first number is an integer, plain.

    ``tokens`` are every token's start, whether it is a word, and the numbers' starts and ends
    and the words'; the census has made sure that the numbers hold only digits, ``-`` and
    ``.``. ``minus`` and ``dots`` count ``-`` and ``.`` in the text and in its words
    (``small-vehicle``); ``first`` is each row's first number (an index among the numbers).
    The values are ``None`` when some number is malformed (``1-2``, ``1.2.3``, ``-``).
    """
    starts, is_word, n_start, n_end, w_start, w_end = tokens

    def outside_words(at: np.ndarray) -> np.ndarray:
        return at[~is_word[np.searchsorted(starts, at, side="right") - 1]]

    minus_at = np.zeros(0, dtype=np.intp)
    if minus[0] > minus[1]:  # some '-' in the numbers
        minus_at = np.flatnonzero(raw == ord("-"))
        minus_at = outside_words(minus_at) if minus[1] else minus_at
    if dots[0] == dots[1]:  # integers
        values = _short_integers(data, n_start, n_end, minus_at)
        if values is not None:
            return values, np.ones(first.size, dtype=bool), True
    dot_at = np.flatnonzero(raw == ord(".")) if dots[0] else np.zeros(0, dtype=np.intp)
    dot_at = outside_words(dot_at) if dots[1] else dot_at
    if dot_at.size == n_start.size and (dot_at > n_start).all() and (dot_at < n_end).all():
        dot_token = np.arange(dot_at.size)  # one '.' in every number (a Task1 file): no search
    else:
        dot_token = np.searchsorted(n_start, dot_at, side="right") - 1  # the number of each '.'
    values = None
    signed = raw[n_start] == ord("-")
    if np.count_nonzero(signed) == minus_at.size:  # no '-' inside a number
        values = _decimals(raw, n_start, n_end, signed, dot_at, dot_token)
    if values is None:  # longer numbers: np.fromstring over the text with the words blanked
        blanked = raw.copy()
        size = w_end - w_start  # each word's bytes made spaces
        blanked[np.repeat(w_start - np.cumsum(size) + size, size) + np.arange(int(size.sum()))] = ord(" ")
        values = _convert(blanked.tobytes(), n_start.size)
        if values is None:
            return None, None, False
    has_dot = np.zeros(n_start.size, dtype=bool)
    has_dot[dot_token] = True
    return values, ~has_dot[first], False


_MIXING = (np.uint64(0x9E3779B97F4A7C15), np.uint64(0xC2B2AE3D27D4EB4F))  # odd constants that spread the bits


def _factorize(data: bytes, raw: np.ndarray, w_start: np.ndarray, w_end: np.ndarray) -> tuple:
    """Each word as an index into the sorted distinct words, and those words.

    Few distinct words among many rows (class names, image ids): a word of up to 16 bytes is
    its first 8 bytes, its last 8 and its length, read as integers in place, mixed into one
    key and factorized as integers; every word is then checked against one word of its key
    (the three integers; every byte for a longer word), so two different words that share a
    key (never seen, but possible) are caught, and factorized by their bytes instead.
    ``data`` is the text of ``raw`` followed by 8 zero bytes, so every 8-byte read is inside it.
    """
    if w_start.size == 0:
        return np.zeros(0, dtype=np.int64), ()
    size = w_end - w_start
    words = np.ndarray((len(data) - 7,), dtype="<u8", buffer=data, strides=(1,))  # the 8 bytes at each offset
    cut = (np.uint64(64) - np.minimum(size, 8).astype(np.uint64) * np.uint64(8))  # bits beyond the word: 0 to 56
    head = words[w_start]
    head <<= cut
    head >>= cut  # the word's first bytes (up to 8), the bytes after it cleared
    # the last 8 bytes of a longer word; a word of up to 8 bytes is its head
    tail = np.where(size > 8, words[np.maximum(w_end - 8, 0)], head)
    with np.errstate(over="ignore"):
        key = (head * _MIXING[0]) ^ (tail * _MIXING[1]) ^ size.astype(np.uint64)
    # A sort of the keys, not np.unique: its inverse and first index cost several sorts
    order = np.argsort(key)
    sorted_key = key[order]
    new = np.empty(order.size, dtype=bool)
    new[0] = True
    np.not_equal(sorted_key[1:], sorted_key[:-1], out=new[1:])
    inverse = np.empty(order.size, dtype=np.int64)
    inverse[order] = np.cumsum(new) - 1
    first = order[new]  # one row of each key
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
        return rank[inverse], tuple(w.decode("ascii") for w in names[order].tolist())
    spelled = _spelled(raw, w_start, w_end)
    names, inverse = np.unique(spelled.view(f"S{spelled.shape[1]}").ravel(), return_inverse=True)
    return inverse.astype(np.int64), tuple(w.decode("ascii") for w in names.tolist())


def _spelled(raw: np.ndarray, w_start: np.ndarray, w_end: np.ndarray) -> np.ndarray:
    """The bytes of each word, one row each, zeros after its end."""
    size = w_end - w_start
    longest = max(int(size.max()), 1) if size.size else 1
    beyond = np.arange(longest) >= size[:, None]
    spelled = raw[np.minimum(w_start[:, None] + np.arange(longest), raw.size - 1)]  # no copy of the text to pad it
    spelled[beyond] = 0
    return spelled


def _no_rows(clean: np.ndarray) -> WordRows:
    """No row: the split of no file."""
    none = np.zeros(0, dtype=np.int64)
    rows = NumericRows(np.zeros(0), none, none, none, none, np.zeros(0, dtype=bool), clean.copy(), plain=True)
    return WordRows(rows, none, np.zeros(0, dtype=np.uint8), ())
