"""YOLO-OBB labels: ``class x1 y1 x2 y2 x3 y3 x4 y4 [confidence]`` per line."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Optional, Sequence, Union

import numpy as np

from hbb2obb.boxes import Boxes
from hbb2obb.io.atomic import write_text_atomic
from hbb2obb.io.numeric_text import byte_groups, numeric_rows
from hbb2obb.io.text import (
    MAX_COORDINATE,
    NORMALIZED_LIMIT,
    LabelFile,
    ProblemSink,
    coordinate_reason,
    describe_bad_class_id,
    describe_bad_number,
    parse_class_id,
    parse_number,
    read_blobs,
    split_lines,
)

OBB_FIELDS = (9, 10)  # class + 8 coordinates, optionally a confidence


def _field_count_reason(count: int) -> str:
    return f"expected 9 fields (class x1 y1 x2 y2 x3 y3 x4 y4) or 10 (with confidence), found {count}"


def _row_reason(fields: list[str]) -> Optional[str]:
    """Why a row with the right field count is still broken, or ``None`` when it is fine."""
    if parse_class_id(fields[0]) is None:
        return describe_bad_class_id(fields[0])
    values = []
    for position, token in enumerate(fields[1:], start=2):
        value = parse_number(token)
        if value is None:
            what = "confidence" if position == 10 else f"field {position}"
            return describe_bad_number(token, what)
        values.append(value)
    return coordinate_reason(values[:8], 2)


def read_yolo_obb(path: str | Path, *, strict: bool) -> LabelFile:
    """Read a YOLO-OBB label file.

    Parameters
    ----------
    path : path-like
        The label file.
    strict : bool
        ``True`` for ground truth: the first broken line raises
        :class:`~hbb2obb.errors.LabelFormatError`. ``False`` for predictions: broken lines are
        skipped and listed in ``problems``.

    Returns
    -------
    LabelFile

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "f.txt"
    >>> _ = p.write_text("0 0 0 4 0 4 2 0 2\\n1 0 0 1 0 1 nan 0 1\\n")
    >>> f = read_yolo_obb(p, strict=False)
    >>> len(f.boxes), [str(q).split(":", 1)[1] for q in f.problems]
    (1, ["2: field 7 is not finite: 'nan'"])
    """
    path = Path(path)
    problems: tuple = ()
    class_id = None
    rows = _FastRows.parse(read_blobs([path]))
    if not rows.clean[0]:  # a line the bulk pass cannot take: screened by the rule, the good lines parsed again
        blob, class_id, problems = _screen(path, strict)
        rows = _FastRows.parse([blob])
        if not rows.clean[0]:  # never: the rule takes no line the bulk pass refuses; loud, not a silent loss
            raise AssertionError(f"{path}: screened lines refused by the bulk pass")
    boxes = rows.boxes(slice(0, 1))
    if class_id is not None:
        boxes = Boxes(corners=boxes.corners, class_id=class_id, score=boxes.score, line=boxes.line)
    some_scored = boxes.score is None and not np.isnan(rows.score).all()
    return LabelFile(path, boxes, problems, _as_flag(rows.normalized[0]), rows.score if some_scored else None)


def _screen(path: Path, strict: bool) -> tuple:
    """A file the bulk pass refused, line by line by the rule: its good lines as the bulk pass takes them.

    Returns the text (each good line rewritten with single spaces, each broken line blank, so
    lines keep their numbers), the good lines' class ids (``int()`` of the token: exact for every
    int64, where the float of the bulk pass rounds beyond 2**53; the text holds ``0`` in their
    place) and the problems. Broken lines are reported in the order the readers always used:
    unreadable bytes and wrong field counts first, then the other reasons, each in line order.
    """
    sink = ProblemSink(path, strict)
    lines: list[str] = []
    class_ids: list[int] = []
    broken: list[tuple[int, str]] = []
    for number, fields in split_lines(path, sink):
        if len(fields) not in OBB_FIELDS:
            sink.report(number, _field_count_reason(len(fields)))
            continue
        reason = _row_reason(fields)
        if reason is not None:
            broken.append((number, reason))
            continue
        lines += [""] * (number - 1 - len(lines))
        lines.append(" ".join(["0", *fields[1:]]))
        class_ids.append(parse_class_id(fields[0]))
    for number, reason in broken:
        sink.report(number, reason)
    return "\n".join(lines).encode("ascii"), np.array(class_ids, dtype=np.int64), tuple(sink.problems)


def read_obb_labels(path: str | Path, *, strict: bool, label_map: Optional[dict] = None) -> LabelFile:
    """Read an oriented-box label file in YOLO-OBB or DOTA format, telling them apart by content.

    A ``.dota`` suffix, or a first box line whose ninth field is a word rather than a number,
    means DOTA; anything else is read as YOLO-OBB.
    """
    from hbb2obb.io.dota import looks_like_dota, read_dota

    path = Path(path)
    if path.suffix.lower() == ".dota" or looks_like_dota(path):
        return read_dota(path, strict=strict, label_map=label_map)
    return read_yolo_obb(path, strict=strict)


_EXACT_INTEGER = 2.0**53  # class ids beyond this would not survive the float conversion
_PARSE_BYTES = 1 << 17  # label text per pass: big enough for numpy, small enough that its work arrays
# stay in cache and reuse freed pages instead of faulting fresh ones


def _first_rows(file: np.ndarray) -> np.ndarray:
    """The index of each file's first row, rows in file order (``file`` not empty)."""
    first = np.empty(file.size, dtype=bool)
    first[0] = True
    np.not_equal(file[1:], file[:-1], out=first[1:])
    return np.flatnonzero(first)


def _normalized_files(corners: np.ndarray, first: np.ndarray) -> np.ndarray:
    """:func:`~hbb2obb.io.text.looks_normalized` of each file's rows (from its ``first`` row on):
    every |coordinate| at most NORMALIZED_LIMIT."""
    flat = corners.reshape(-1)  # per file over all its coordinates
    return (np.minimum.reduceat(flat, 8 * first) >= -NORMALIZED_LIMIT) & \
        (np.maximum.reduceat(flat, 8 * first) <= NORMALIZED_LIMIT)


def _as_flag(code) -> Optional[bool]:
    return None if code < 0 else bool(code)


@dataclass(frozen=True)
class _FastRows:
    """The boxes of every file the bulk path could read entirely, file after file (private).

    A file is left out (``clean`` False), to be screened line by line and read again, when any
    of its lines is not a well-formed YOLO-OBB row: wrong field count, a class id not written as
    an integer, a value that is not a finite number, or any text the bulk tokenizer does not take.
    """

    corners: np.ndarray  # (r, 4, 2)
    class_id: np.ndarray  # (r,)
    score: np.ndarray  # (r,), NaN where the row has no confidence
    line: np.ndarray  # (r,)
    file: np.ndarray  # (r,), non-decreasing
    clean: np.ndarray  # (f,) bool
    normalized: np.ndarray  # (f,) int8: 1 normalized, 0 absolute, -1 no boxes
    has_score: np.ndarray  # (f,) bool: boxes, every one with a confidence

    @classmethod
    def parse(cls, blobs) -> "_FastRows":
        """Parse in groups of about ``_PARSE_BYTES`` of text: the work arrays stay small and warm."""
        sizes = map(len, blobs) if None not in blobs else (0 if blob is None else len(blob) for blob in blobs)
        groups = byte_groups(sizes, _PARSE_BYTES)
        parts = [cls._parse_group(blobs[a:b], a) for a, b in groups]
        if len(parts) == 1:
            return parts[0]
        if not parts:
            return cls._parse_group([], 0)
        return cls(*(np.concatenate([getattr(part, name) for part in parts]) for name in cls.__dataclass_fields__))

    @classmethod
    def _parse_group(cls, blobs, first_file: int) -> "_FastRows":
        rows = numeric_rows(blobs)
        n_files, fields = rows.clean.size, rows.row_fields
        # Usually every row has the same field count: the values are then the table itself.
        width = int(fields[0]) if fields.size and fields.min() == fields.max() and fields[0] in OBB_FIELDS else 0
        if width and rows.plain:
            # Short integers in rows of one valid width (pixel labels): finite, exact and in range,
            # with integer class ids, so every row is good and there is nothing to test.
            values = rows.values.reshape(-1, width)
            file, line, clean = rows.row_file, rows.row_line, rows.clean
            with_confidence = None  # every row alike: with one when width is 10
        else:
            values, with_confidence, file, line, clean = cls._checked(rows, width)
        corners = np.ascontiguousarray(values[:, 1:9])
        normalized = np.full(n_files, -1, dtype=np.int8)
        has_score = np.zeros(n_files, dtype=bool)
        if file.size:
            first = _first_rows(file)
            normalized[file[first]] = _normalized_files(corners, first)
            if with_confidence is None:
                has_score[file[first]] = width == 10
            else:
                has_score[file[first]] = np.logical_and.reduceat(with_confidence, first)
        if width == 9:
            score = np.full(len(file), np.nan)
        elif with_confidence is None:
            score = values[:, 9].copy()
        else:
            score = np.where(with_confidence, values[:, 9], np.nan) if len(file) else np.zeros(0)
        return cls(
            corners=corners.reshape(-1, 4, 2),
            class_id=values[:, 0].astype(np.int64),
            score=score,
            line=line,
            file=file + first_file,
            clean=clean,
            normalized=normalized,
            has_score=has_score,
        )

    @staticmethod
    def _checked(rows, width: int) -> tuple:
        """The well-formed rows' values (and theirs alone), confidence mask, files, lines, and the clean files.

        A file with any row that is not a well-formed YOLO-OBB row is left out whole, to be screened.
        Rows of plain short integers of one valid width need no test and are taken by the caller.
        """
        fields = rows.row_fields
        if width:  # one valid width, not plain short integers (those never come here): test the values
            values = rows.values.reshape(-1, width)
            finite = np.isfinite(values)
            finite = np.ones(len(values), dtype=bool) if finite.all() else finite.all(axis=1)  # all(): quicker
        else:
            last = max(rows.values.size - 1, 0)
            values = np.append(rows.values, 0.0)[np.minimum(rows.row_start[:, None] + np.arange(10), last)]
            finite = np.isfinite(values[:, :9]).all(axis=1) & ((fields != 10) | np.isfinite(values[:, 9]))
        with_confidence = fields == 10
        good = ((fields == 9) | with_confidence) & rows.first_is_integer & finite
        if not rows.plain:
            good &= np.abs(values[:, 0]) < _EXACT_INTEGER
        coordinates = values[:, 1:9]
        if (
            not rows.plain
            and coordinates.size
            and (coordinates.max() > MAX_COORDINATE or coordinates.min() < -MAX_COORDINATE)
        ):
            good &= (np.abs(coordinates) <= MAX_COORDINATE).all(axis=1)  # rare: the screen says why
        clean = rows.clean.copy()
        if not good.all():
            clean[rows.row_file[~good]] = False
            keep = clean[rows.row_file]
            return values[keep], with_confidence[keep], rows.row_file[keep], rows.row_line[keep], clean
        return values, with_confidence, rows.row_file, rows.row_line, clean

    def rows_of(self, files: Union[np.ndarray, slice]):
        """The rows of the files selected by a boolean mask (a mask) or a slice of files (a slice)."""
        if isinstance(files, slice):  # rows are in file order: a run of files is a run of rows
            return slice(*np.searchsorted(self.file, [files.start, files.stop]).tolist())
        return files[self.file]

    def boxes(self, files: Union[np.ndarray, slice]) -> Boxes:
        """The boxes of the files selected by a boolean mask or a slice of files, in file order."""
        rows = self.rows_of(files)
        # Scores survive when every file with boxes has them: a file with no boxes (an empty
        # frame of a detector's output) has no say, or one empty frame would drop every score.
        with_boxes = self.normalized[files] >= 0
        keep_score = bool(self.has_score[files].any()) and bool(self.has_score[files][with_boxes].all())
        return Boxes(corners=self.corners[rows], class_id=self.class_id[rows],
                     score=self.score[rows] if keep_score else None, line=self.line[rows])


@dataclass(frozen=True)
class LabelBatch:
    """Several oriented-box label files read at once: their boxes and problems, file by file.

    Attributes
    ----------
    paths : tuple of str or None
        The files, in the order given (``None``: no file, read as empty).
    rows : _FastRows
        Every box, with the index of its file.
    has_difficult : (f,) bool
        Files that carry a DOTA ``difficult`` column.
    problems : tuple of tuple of LabelProblem
        The skipped lines of each file (non-strict files only).
    crowd : (n,) bool or None
        COCO crowd regions among the rows (boxes read apart from a COCO file); ``None``: none.
    """

    paths: tuple
    rows: _FastRows
    difficult: np.ndarray
    has_difficult: np.ndarray
    problems: tuple
    crowd: Optional[np.ndarray] = None

    @property
    def counts(self) -> np.ndarray:
        """Boxes per file."""
        return np.bincount(self.rows.file, minlength=len(self.paths))

    @property
    def normalized(self) -> list:
        """Per file: whether it is normalized (every |coordinate| at most 2); ``None`` for a file with no boxes."""
        return [_as_flag(code) for code in self.rows.normalized.tolist()]

    def boxes(self, files: Union[np.ndarray, slice]) -> Boxes:
        """The boxes of the files selected by a boolean mask or a slice of files, in file order.

        ``score`` and ``difficult`` are kept only when every selected file has them, as
        :meth:`Boxes.concatenate` does. A slice needs no gather: the quicker way to take a run of files.
        """
        boxes = self.rows.boxes(files)
        difficult = self.has_difficult[files].size and self.has_difficult[files].all()
        if difficult or self.crowd is not None:
            rows = self.rows.rows_of(files)
            boxes = Boxes(corners=boxes.corners, class_id=boxes.class_id, score=boxes.score, line=boxes.line,
                          difficult=self.difficult[rows] if difficult else None,
                          crowd=None if self.crowd is None else self.crowd[rows])
        return boxes


def read_obb_batch(paths: Sequence[Union[str, Path, None]], *, strict: Union[bool, Sequence[bool]],
                   label_map: Optional[dict] = None, order: Optional[Sequence[int]] = None,
                   blobs: Optional[Sequence[Optional[bytes]]] = None) -> LabelBatch:
    """Read many oriented-box label files at once, as :func:`read_obb_labels` reads each.

    Clean YOLO-OBB files (the usual case) are tokenized and converted together in one pass;
    any other file (DOTA, a broken line, unusual text) is read by :func:`read_obb_labels`, in
    the order given (or ``order``), so the first broken strict file raises exactly as reading
    the files one by one in that order would.

    Parameters
    ----------
    paths : sequence of path-like or None
        The files; ``None`` stands for a missing file and reads as no boxes.
    strict : bool or sequence of bool
        Per file (or for all): raise on a broken line (ground truth) or skip it (predictions).
    label_map : dict, optional
        Class names, for DOTA files.
    order : sequence of int, optional
        Every index of ``paths`` once: the order in which the files are read one by one, when
        it is not the order of ``paths``.
    blobs : sequence of bytes or None, optional
        The files' bytes, one per path, when the caller has read them already (``None`` where
        a file could not be read: :func:`read_obb_labels` then reports why). Ignored for a ``None``
        path (no boxes) and a ``.dota`` file (always read by :func:`read_obb_labels`).

    Returns
    -------
    LabelBatch

    Examples
    --------
    >>> import tempfile, pathlib
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (root / "a.txt").write_text("0 0 0 4 0 4 2 0 2\\n")
    >>> _ = (root / "b.txt").write_text("1 0 0 1 0 1 1 0 1\\n1 0 0 1 0 1 nan 0 1\\n")
    >>> batch = read_obb_batch([root / "a.txt", root / "b.txt", None], strict=[True, False, False])
    >>> batch.counts.tolist(), [len(p) for p in batch.problems], batch.normalized
    ([1, 1, 0], [0, 1, 0], [False, True, None])
    """
    paths = tuple(paths)
    if not set(map(type, paths)) <= {str, type(None)}:  # path strings (the planner's) need no conversion
        paths = tuple(None if p is None else os.fspath(p) for p in paths)
    strict = np.broadcast_to(np.asarray(strict, dtype=bool), (len(paths),))
    named = [*filter(None, paths)]
    joined = "\0".join([*named, ""])
    # every path a .txt (the planner's): no .dota among them, found by one count instead of lower() of them all
    if joined.count(".txt\0") < len(named) and ".dota\0" in joined.lower():  # a look at each path only when one is
        dota = [p is not None and p.lower().endswith(".dota") for p in paths]  # always read_obb_labels
    else:
        dota = [False] * len(paths)
    if blobs is None:
        found = iter(read_blobs([p for p, d in zip(paths, dota) if p is not None and not d]))
        blobs = [b"" if p is None else None if d else next(found) for p, d in zip(paths, dota)]
    elif len(blobs) != len(paths):
        raise ValueError(f"read_obb_batch: {len(blobs)} blobs for {len(paths)} paths")
    elif any(dota) or None in paths:
        blobs = [b"" if p is None else None if d else blob for p, d, blob in zip(paths, dota, blobs)]
    named_dota = _named_rows(blobs) if label_map else np.zeros(len(paths), dtype=bool)
    fast = _FastRows.parse([None if d else blob for d, blob in zip(named_dota.tolist(), blobs)] if named_dota.any()
                           else list(blobs))
    unclean = np.flatnonzero(~fast.clean)
    bulk = None
    if unclean.size and label_map:  # DOTA files: the clean ones in bulk too
        from hbb2obb.io.dota import read_dota_many

        bulk = read_dota_many([blobs[i] for i in unclean.tolist()], strict[unclean], label_map)
        bulk = replace(bulk, files=unclean[bulk.files], file=unclean[bulk.file])
        unclean = np.setdiff1d(unclean, bulk.files)
    if order is not None:
        rank = np.empty(len(paths), dtype=np.int64)
        rank[np.asarray(order, dtype=np.int64)] = np.arange(len(paths))
        unclean = unclean[np.argsort(rank[unclean], kind="stable")]
    apart = {i: read_obb_labels(Path(paths[i]), strict=bool(strict[i]), label_map=label_map)
             for i in unclean.tolist()}
    difficult = np.zeros(len(fast.file), dtype=bool)
    has_difficult = np.zeros(len(paths), dtype=bool)
    problems = [()] * len(paths)
    if apart or (bulk is not None and bulk.files.size):
        fast, difficult = _merge(fast, dict(sorted(apart.items())), bulk)
        for i, label_file in apart.items():
            has_difficult[i] = label_file.boxes.difficult is not None
            problems[i] = label_file.problems
        if bulk is not None:
            has_difficult[bulk.files] = True  # a DOTA file always has the column (0 where absent)
    return LabelBatch(paths, fast, difficult, has_difficult, tuple(problems))


def _row_scores(label_file) -> np.ndarray:
    """A file's confidence per box, NaN where its line has none (the bulk rows' convention)."""
    if label_file.boxes.score is not None:
        return label_file.boxes.score
    if label_file.line_scores is not None:
        return label_file.line_scores
    return np.full(len(label_file.boxes), np.nan)


def _merge(fast: _FastRows, apart: dict, bulk=None) -> tuple:
    """The bulk rows with the files read apart (DOTA, screened YOLO-OBB, boxes given) put in their places.

    ``bulk`` (:class:`~hbb2obb.io.dota.DotaRows`, optional) holds DOTA files read in bulk.
    """
    parts = [(f, lf.boxes) for f, lf in apart.items()]
    nan = [_row_scores(lf) for lf in apart.values()]
    files = [fast.file] + [np.full(len(b), f, dtype=np.int64) for f, b in parts]
    corners = [fast.corners] + [b.corners for _, b in parts]
    class_id = [fast.class_id] + [b.class_id for _, b in parts]
    line = [fast.line] + [b.line for _, b in parts]
    difficult = [np.zeros(len(fast.file), dtype=bool)] + [
        np.zeros(len(b), dtype=bool) if b.difficult is None else b.difficult for _, b in parts]
    normalized, has_score = fast.normalized.copy(), fast.has_score.copy()
    for f, label_file in apart.items():
        normalized[f] = -1 if label_file.normalized is None else int(label_file.normalized)
        has_score[f] = len(label_file.boxes) > 0 and label_file.boxes.score is not None
    if bulk is not None:
        files.append(bulk.file)
        corners.append(bulk.corners)
        class_id.append(bulk.class_id)
        line.append(bulk.line)
        difficult.append(bulk.difficult)
        nan.append(bulk.score)
        counts = np.bincount(bulk.file, minlength=len(normalized))[bulk.files]
        normalized[bulk.files] = -1
        has_score[bulk.files] = bulk.scored & (counts > 0)
        if bulk.file.size:
            first = _first_rows(bulk.file)
            normalized[bulk.file[first]] = _normalized_files(bulk.corners, first)
    file = np.concatenate(files)
    # in file order already when only one kind of read has rows (all DOTA, say): no gather then
    order = slice(None) if (file[1:] >= file[:-1]).all() else np.argsort(file, kind="stable")
    merged = _FastRows(
        corners=np.concatenate(corners)[order],
        class_id=np.concatenate(class_id)[order],
        score=np.concatenate([fast.score] + nan)[order],
        line=np.concatenate(line)[order],
        file=file[order],
        clean=np.ones(len(fast.clean), dtype=bool),
        normalized=normalized,
        has_score=has_score,
    )
    return merged, np.concatenate(difficult)[order]


_LETTER = re.compile(rb"[A-DF-Za-df-z_:]")  # not in a number (e, E are exponents)


def _named_rows(blobs) -> np.ndarray:
    """Per file, whether its first line holds a letter no number has (a DOTA class name or header).

    Such a file is never taken by the YOLO-OBB bulk pass: it goes straight to the DOTA readers.
    """
    named = np.zeros(len(blobs), dtype=bool)
    for index, blob in enumerate(blobs):
        if blob:
            end = blob.find(b"\n", 0, 512)
            named[index] = _LETTER.search(blob, 0, end if end >= 0 else 512) is not None
    return named


def format_obb_line(class_id: int, corners: np.ndarray, decimals: Optional[int] = None) -> str:
    """One YOLO-OBB line; integers stay integers unless ``decimals`` is given."""
    if decimals is None:
        coords = " ".join(f"{v:g}" if float(v).is_integer() else repr(float(v)) for v in corners.reshape(-1))
    else:
        coords = " ".join(f"{v:.{decimals}f}" for v in corners.reshape(-1))
    return f"{int(class_id)} {coords}"


def write_yolo_obb(path: str | Path, boxes: Boxes, decimals: Optional[int] = None) -> None:
    """Write boxes as a YOLO-OBB file (absolute coordinates as stored), one box per line."""
    text = "".join(
        format_obb_line(c, k, decimals) + "\n" for c, k in zip(boxes.class_id.tolist(), boxes.corners)
    )
    write_text_atomic(path, text)
