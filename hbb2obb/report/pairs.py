"""The match table as a file (``--pairs FILE.csv`` or ``.parquet``), to continue in pandas.

One row per ground-truth box (matched or not), then one per prediction no ground-truth box
matched. Columns: ``frame``, ``gt_line`` and ``pred_line`` (1-based line, or position in a JSON
file; empty where there is no box), ``gt_class``, ``pred_class``, ``iou``, ``angle_error``
(degrees), ``giou``, ``diou``, ``ciou``, ``center_offset`` (px), and the ground-truth box's
``off_axis`` angle (degrees), ``short_side`` (px), ``edge`` and ``difficult`` flags. Measures of
a pair are empty where the row has no match.
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

from hbb2obb.errors import InputError, UsageError
from hbb2obb.io.atomic import atomic_path

COLUMNS = ("frame", "gt_line", "pred_line", "gt_class", "pred_class", "iou", "angle_error", "giou", "diou", "ciou",
           "center_offset", "off_axis", "short_side", "edge", "difficult")
SUFFIXES = (".csv", ".parquet")


def check_pairs_path(path: Path) -> None:
    """A usage error for a suffix other than ``.csv`` or ``.parquet``, or parquet without pyarrow."""
    suffix = Path(path).suffix.lower()
    if suffix not in SUFFIXES:
        raise UsageError(f"--pairs {path}: the file name must end in .csv or .parquet")
    if suffix == ".parquet":
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise UsageError(f"--pairs {path}: writing .parquet needs pyarrow (pip install pyarrow), "
                             "or use a .csv name") from None


def pair_columns(table, properties, overlap) -> dict:
    """The columns of the pairs file as arrays (float NaN / line -1 where absent).

    Parameters
    ----------
    table : MatchTable
    properties : GroundTruthProperties
        Of the same table's ground-truth rows (off-axis, short side, edge, difficult).
    overlap : RowOverlap
        Of the same table (GIoU, DIoU, CIoU, centre offset).
    """
    n_gt = len(table.gt)
    lone = np.flatnonzero(~table.pred_matched)
    matched = table.matched
    pred_row = np.where(matched, table.pred_index, -1)

    def line(boxes, rows):
        if boxes.line is None:
            return np.full(len(rows), -1, dtype=np.int64)
        values = np.full(len(rows), -1, dtype=np.int64)
        present = rows >= 0
        values[present] = boxes.line[rows[present]]
        return values

    def gt_then(values, fill, dtype):
        return np.concatenate([np.asarray(values, dtype=dtype), np.full(len(lone), fill, dtype=dtype)])

    pred_class = np.full(n_gt, -1, dtype=np.int64)
    pred_class[matched] = table.pred.class_id[table.pred_index[matched]]
    names = np.asarray(table.frame_names, dtype=object)
    return {
        "frame": np.concatenate([names[table.gt_frame], names[table.pred_frame[lone]]]) if len(names) else
        np.zeros(0, dtype=object),
        "gt_line": gt_then(line(table.gt, np.arange(n_gt)), -1, np.int64),
        "pred_line": np.concatenate([line(table.pred, pred_row), line(table.pred, lone)]),
        "gt_class": gt_then(table.gt.class_id, -1, np.int64),
        "pred_class": np.concatenate([pred_class, table.pred.class_id[lone]]),
        "iou": gt_then(table.iou, np.nan, np.float64),
        "angle_error": gt_then(table.angle_error, np.nan, np.float64),
        "giou": gt_then(overlap.giou, np.nan, np.float64),
        "diou": gt_then(overlap.diou, np.nan, np.float64),
        "ciou": gt_then(overlap.ciou, np.nan, np.float64),
        "center_offset": gt_then(overlap.center_offset, np.nan, np.float64),
        "off_axis": gt_then(properties.off_axis, np.nan, np.float64),
        "short_side": gt_then(properties.short_side, np.nan, np.float64),
        "edge": gt_then(properties.edge, False, bool),
        "difficult": gt_then(properties.difficult, False, bool),
        # not written: which rows are ground-truth boxes and which of those have a match, so a
        # class id of -1 is a class and not "no box" (-1 marks absence in the int columns)
        "is_gt": gt_then(np.ones(n_gt, dtype=bool), False, bool),
        "has_pred": np.concatenate([matched, np.ones(len(lone), dtype=bool)]),
    }


def write_pairs(path: Path, columns: dict) -> int:
    """Write the columns to ``.csv`` (empty cells where absent) or ``.parquet`` (nulls); returns the rows."""
    path = Path(path)
    rows = len(columns["frame"])
    absent = {name: (columns[name] < 0) if columns[name].dtype.kind == "i" else
              np.isnan(columns[name]) if columns[name].dtype.kind == "f" else np.zeros(rows, dtype=bool)
              for name in COLUMNS}
    if "is_gt" in columns:  # class ids may be -1: absent is where there is no box, not where the id is negative
        absent["gt_class"] = ~columns["is_gt"]
        absent["pred_class"] = ~columns["has_pred"]
        absent["edge"] = absent["difficult"] = ~columns["is_gt"]
    else:
        absent["edge"] = absent["difficult"] = absent["gt_line"]  # flags of the ground-truth box: none on lone rows
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(path) as temporary:
            _write_table(temporary, path.suffix.lower(), columns, absent, rows)
    except OSError as exc:
        raise InputError(f"{path}: cannot write ({exc.strerror or exc})") from None
    return rows


def _write_table(path: Path, suffix: str, columns: dict, absent: dict, rows: int) -> None:
    """Write the table to ``path`` as ``suffix`` (``.parquet`` or ``.csv``) says."""
    if suffix == ".parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        arrays = {name: pa.array(columns[name].tolist(), mask=absent[name]) for name in COLUMNS}
        pq.write_table(pa.table(arrays), path)
        return
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(COLUMNS)
        values = {name: columns[name].tolist() for name in COLUMNS}
        for row in range(rows):
            writer.writerow(["" if absent[name][row] else _cell(values[name][row]) for name in COLUMNS])


def _cell(value):
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, float):
        return repr(value)
    return value
