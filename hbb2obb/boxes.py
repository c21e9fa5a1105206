"""The central type: a frozen set of oriented boxes as aligned numpy arrays.

Every layer (label readers, geometry, matching, analysis, converters) takes and returns
:class:`Boxes`, so a box keeps its class, score and source line wherever it goes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Optional

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import ArrayLike


def _readonly(array: np.ndarray) -> np.ndarray:
    array.setflags(write=False)
    return array


def _owned(value, dtype, ndim: int) -> bool:
    """Whether ``value`` is an array a :class:`Boxes` can keep as it is, without a copy.

    That is one no code can change: read-only and owning its memory (not a view), as the
    arrays :class:`Boxes` stores are (nothing else in the package makes arrays read-only).
    A join (:meth:`Boxes.concatenate`), a selection or :meth:`Boxes.with_corners` then keeps
    the arrays it made or was given by another set, instead of copying each one again: at
    Songdo scale the run-wide join alone copied 35 MB of corners twice.
    """
    return (isinstance(value, np.ndarray) and value.base is None and not value.flags.writeable
            and value.dtype == dtype and value.ndim == ndim and value.flags.c_contiguous)


def _check_whole(values: np.ndarray, name: str, flags: bool) -> None:
    """Refuse ids that are not whole numbers (``flags``: not 0 or 1), which a cast would change silently."""
    try:
        numbers = values.astype(np.float64).reshape(-1)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must hold numbers, got {values.reshape(-1)[:1].tolist()}") from None
    bad = ~np.isfinite(numbers) | (numbers != np.round(numbers))
    if flags:
        bad |= (numbers != 0) & (numbers != 1)
    if bad.any():
        kind = "0 or 1" if flags else "whole numbers"
        raise ValueError(f"{name} must hold {kind}, got {float(numbers[bad][0])!r} (box {int(np.flatnonzero(bad)[0])})")


@dataclass(frozen=True, eq=False)
class Boxes:
    """Oriented boxes as four corners each, with aligned per-box attributes.

    Parameters
    ----------
    corners : array_like, shape (n, 4, 2)
        Corner coordinates ``(x, y)`` in the order they were given (after any bow-tie
        repair). Stored as float64.
    class_id : array_like, shape (n,)
        Integer class ids. Stored as int64.
    score : array_like, shape (n,), optional
        Confidence per box; ``None`` when the source had no confidence column.
    line : array_like, shape (n,), optional
        1-based line number of each box in its source file; ``None`` for boxes made in memory.
    difficult : array_like, shape (n,), optional
        DOTA ``difficult`` flag; ``None`` when the source does not carry it.
    crowd : array_like, shape (n,), optional
        COCO ``iscrowd`` flag: a region of many objects, never a miss, that detections may fall
        on without being false alarms, whatever rule scores difficult boxes. ``None``: no crowd
        regions (every format but COCO).

    Examples
    --------
    >>> b = Boxes(corners=[[[0, 0], [4, 0], [4, 2], [0, 2]]], class_id=[3])
    >>> len(b), b.corners.dtype.name, int(b.class_id[0])
    (1, 'float64', 3)
    >>> len(b[b.class_id == 0])
    0
    """

    corners: np.ndarray
    class_id: np.ndarray
    score: Optional[np.ndarray] = None
    line: Optional[np.ndarray] = None
    difficult: Optional[np.ndarray] = field(default=None)
    crowd: Optional[np.ndarray] = field(default=None)

    if TYPE_CHECKING:  # what the constructor takes, for type checkers: any array-like (stored as arrays)
        def __init__(self, corners: ArrayLike, class_id: ArrayLike, score: Optional[ArrayLike] = None,
                     line: Optional[ArrayLike] = None, difficult: Optional[ArrayLike] = None,
                     crowd: Optional[ArrayLike] = None) -> None: ...

    def __post_init__(self) -> None:
        corners = self.corners if _owned(self.corners, np.float64, 3) else np.array(self.corners, dtype=np.float64)
        if corners.size == 0:
            corners = corners.reshape(0, 4, 2)
        if corners.ndim != 3 or corners.shape[1:] != (4, 2):
            raise ValueError(f"corners must have shape (n, 4, 2), got {corners.shape}")
        n = corners.shape[0]
        object.__setattr__(self, "corners", _readonly(corners))
        object.__setattr__(self, "class_id", _readonly(self._aligned(self.class_id, np.int64, n, "class_id")))
        for name, dtype in (("score", np.float64), ("line", np.int64), ("difficult", np.bool_),
                            ("crowd", np.bool_)):
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, _readonly(self._aligned(value, dtype, n, name)))

    @staticmethod
    def _aligned(values, dtype, n: int, name: str) -> np.ndarray:
        if _owned(values, dtype, 1):
            array = values
        else:
            given = np.asarray(values)
            flags = dtype == np.bool_
            if dtype != np.float64 and given.dtype.kind not in ("b" if flags else "iub"):
                _check_whole(given, name, flags)  # a cast would make 1.5 class 1, and 2 or 0.5 a flag
            array = np.array(values, dtype=dtype)
            if array.ndim != 1:  # reshaping a 1-d array would make a view, which a later set would copy
                array = array.reshape(-1)
        if array.shape != (n,):
            raise ValueError(f"{name} must have shape ({n},), got {array.shape}")
        return array

    def __len__(self) -> int:
        return self.corners.shape[0]

    def __getitem__(self, index) -> "Boxes":
        """Select boxes by boolean mask, integer array or slice; always returns :class:`Boxes`."""
        if isinstance(index, (int, np.integer)):
            index = [index]

        def pick(values):  # a mask or an index array gives a fresh array: read-only, it is kept as it is
            return None if values is None else _readonly(values[index])

        return Boxes(corners=pick(self.corners), class_id=pick(self.class_id), score=pick(self.score),
                     line=pick(self.line), difficult=pick(self.difficult), crowd=pick(self.crowd))

    @classmethod
    def empty(cls) -> "Boxes":
        """A set of no boxes."""
        return cls(corners=np.zeros((0, 4, 2)), class_id=np.zeros(0, dtype=np.int64))

    @classmethod
    def from_xywh(cls, xywh, class_id, **kwargs) -> "Boxes":
        """Axis-aligned boxes from centre, width and height, as the YOLO-HBB format gives them.

        Corners run from the top-left corner clockwise in image coordinates (y down).

        Examples
        --------
        >>> Boxes.from_xywh([[10, 20, 4, 2]], [0]).corners[0].tolist()
        [[8.0, 19.0], [12.0, 19.0], [12.0, 21.0], [8.0, 21.0]]
        """
        xywh = np.asarray(xywh, dtype=np.float64).reshape(-1, 4)
        xc, yc, w, h = xywh.T
        x1, x2, y1, y2 = xc - w / 2, xc + w / 2, yc - h / 2, yc + h / 2
        corners = np.stack(
            [np.stack([x1, y1], -1), np.stack([x2, y1], -1), np.stack([x2, y2], -1), np.stack([x1, y2], -1)],
            axis=1,
        )
        return cls(corners=corners, class_id=class_id, **kwargs)

    def with_corners(self, corners) -> "Boxes":
        """The same boxes (classes, lines, flags) at new corner positions."""
        return Boxes(
            corners=corners, class_id=self.class_id, score=self.score, line=self.line, difficult=self.difficult,
            crowd=self.crowd,
        )

    @staticmethod
    def concatenate(parts: "list[Boxes]") -> "Boxes":
        """Join several sets; an optional attribute survives only when every part has it.

        ``crowd`` is the exception: a part without it has no crowd regions, so the join keeps the
        flags of the parts that have them, ``False`` elsewhere.
        """
        if not parts:
            return Boxes.empty()
        if len(parts) == 1:  # a set is immutable: the one part is the join (a run of one chunk copies nothing)
            return parts[0]

        def joined(name):  # a fresh array: read-only, the new set keeps it without a copy
            values = [getattr(p, name) for p in parts]
            return None if any(v is None for v in values) else _readonly(np.concatenate(values))

        return Boxes(corners=joined("corners"), class_id=joined("class_id"), score=joined("score"),
                     line=joined("line"), difficult=joined("difficult"), crowd=crowd_of(parts))


def crowd_of(parts: "list[Boxes]") -> Optional[np.ndarray]:
    """The crowd flags of joined sets: ``None`` when no part has any, else ``False`` where a part has none."""
    if all(p.crowd is None for p in parts):
        return None
    return _readonly(np.concatenate([np.zeros(len(p), dtype=bool) if p.crowd is None else p.crowd for p in parts]))
