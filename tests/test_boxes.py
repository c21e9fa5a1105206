"""The central Boxes type."""

import numpy as np
import pytest

from hbb2obb.boxes import Boxes

SQUARE = [[0, 0], [2, 0], [2, 2], [0, 2]]


def test_arrays_are_typed_and_read_only():
    boxes = Boxes(corners=[SQUARE], class_id=[1], score=[0.5], line=[7])
    assert boxes.corners.dtype == np.float64 and boxes.class_id.dtype == np.int64
    with pytest.raises(ValueError):
        boxes.corners[0, 0, 0] = 5


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(corners=[[0, 0], [1, 1]], class_id=[0]), "shape"),
        (dict(corners=[SQUARE], class_id=[0, 1]), "class_id"),
        (dict(corners=[SQUARE], class_id=[0], score=[1, 2]), "score"),
        (dict(corners=[SQUARE], class_id=[0], line=[]), "line"),
    ],
)
def test_misaligned_arrays_are_rejected(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Boxes(**kwargs)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(class_id=[1.5]), r"class_id must hold whole numbers, got 1.5 \(box 0\)"),
        (dict(class_id=[0, float("nan")]), r"class_id must hold whole numbers, got nan \(box 1\)"),
        (dict(class_id=["car"]), r"class_id must hold numbers"),
        (dict(difficult=[2]), r"difficult must hold 0 or 1, got 2.0"),
        (dict(crowd=[0.5]), r"crowd must hold 0 or 1, got 0.5"),
        (dict(line=[3.2]), r"line must hold whole numbers"),
    ],
)
def test_ids_and_flags_a_cast_would_change_are_refused(kwargs, message):
    """``np.array([1.5], dtype=np.int64)`` is class 1 and ``np.array([2], dtype=bool)`` a flag set:
    a box given so from Python was silently another box."""
    columns = dict(class_id=[0], **{k: v for k, v in kwargs.items() if k != "class_id"})
    columns["class_id"] = kwargs.get("class_id", [0])
    n = len(columns["class_id"])
    with pytest.raises(ValueError, match=message):
        Boxes(corners=[SQUARE] * n, **columns)


def test_whole_numbers_of_any_type_and_true_false_flags_are_kept():
    boxes = Boxes(corners=[SQUARE] * 2, class_id=np.array([2.0, 7.0]), difficult=[1.0, 0], crowd=[True, False],
                  line=np.array([3, 4], dtype=np.int32))
    assert boxes.class_id.tolist() == [2, 7] and boxes.difficult.tolist() == [True, False]
    assert boxes.crowd.tolist() == [True, False] and boxes.line.tolist() == [3, 4]


def test_empty_and_mask_indexing():
    empty = Boxes.empty()
    assert len(empty) == 0 and empty.corners.shape == (0, 4, 2)
    boxes = Boxes(corners=[SQUARE, SQUARE], class_id=[0, 1], line=[3, 4])
    picked = boxes[boxes.class_id == 1]
    assert len(picked) == 1 and picked.line.tolist() == [4]
    assert len(boxes[np.zeros(2, bool)]) == 0
    assert boxes[1].class_id.tolist() == [1]


def test_concatenate_keeps_optional_columns_only_when_all_have_them():
    a = Boxes(corners=[SQUARE], class_id=[0], line=[1], score=[0.3])
    b = Boxes(corners=[SQUARE], class_id=[1], line=[9])
    joined = Boxes.concatenate([a, b])
    assert joined.line.tolist() == [1, 9] and joined.score is None
    assert len(Boxes.concatenate([])) == 0
    assert Boxes.concatenate([a]) is a  # one part: a set is immutable, nothing to copy


def test_from_xywh_round_trip():
    boxes = Boxes.from_xywh([[10, 20, 4, 2], [0, 0, 0, 0]], [0, 1])
    assert boxes.corners[0].min(axis=0).tolist() == [8, 19] and boxes.corners[0].max(axis=0).tolist() == [12, 21]
    assert np.all(boxes.corners[1] == 0)


def test_arrays_are_copied_from_callers_and_shared_between_sets():
    corners = np.array([[[0, 0], [4, 0], [4, 2], [0, 2]], [[1, 1], [2, 1], [2, 2], [1, 2]]], dtype=np.float64)
    class_id = np.array([3, 4])
    boxes = Boxes(corners, class_id, score=np.array([0.5, 0.25]))
    corners[0, 0, 0], class_id[0] = 99.0, 9  # the caller's arrays stay the caller's
    assert boxes.corners[0, 0, 0] == 0.0 and boxes.class_id[0] == 3
    moved = boxes.with_corners(boxes.corners + 1.0)
    assert moved.class_id is boxes.class_id and moved.score is boxes.score  # read-only: shared, not copied
    for made in (
        moved,
        boxes[boxes.class_id == 4],
        boxes[np.array([1, 0])],
        Boxes.concatenate([boxes, moved]),
        boxes[:1],
    ):
        for values in (made.corners, made.class_id, made.score):
            assert not values.flags.writeable
    view = boxes.corners[:1]  # a read-only view of a set's array is still copied (its base could be shared)
    assert Boxes(view, [3]).corners is not view
    assert Boxes.concatenate([boxes, moved]).corners.tolist() == boxes.corners.tolist() + moved.corners.tolist()
    assert boxes[np.array([1, 0])].class_id.tolist() == [4, 3] and boxes[1].score.tolist() == [0.25]
