"""Loading frames in batches: the same boxes, counts and first error as one frame at a time."""

import numpy as np
import pytest

from hbb2obb.errors import InputError, LabelFormatError
from hbb2obb.frames.loading import FrameHealth, load_frames
from hbb2obb.frames.pairing import plan_frames
from hbb2obb.io import ImageSizes

from conftest import rect

FRAMES = {
    "gt/a.txt": rect(0, 0, 10, 5) + "\n" + rect(50, 50, 20, 10, cls=1) + "\n",
    "pred/a.txt": rect(1, 0, 10, 5) + " 0.9\n0 1 2\n" + "0 0 0 10 5 10 0 0 5\n",  # broken line, bow-tie
    "gt/b.txt": "0 0.1 0.1 0.2 0.1 0.2 0.2 0.1 0.2\n",  # normalized
    "pred/b.txt": "0 0.1 0.1 0.2 0.1 0.2 0.2 0.1 0.2\n",
    "gt/c.txt": rect(0, 0, 5, 5, cls=2) + "\n" + rect(100, 100, 5, 5) + "\n",
    "gt/d.txt": "",
    "pred/d.txt": rect(3, 3, 4, 4) + "\n0 nan 0 1 0 1 1 0 1\n",
    "pred/e.txt": rect(0, 0, 1, 1) + "\n",
}


def one_by_one(specs, **kwargs):
    """Reference: every frame loaded on its own, then joined."""
    frames, health = [], FrameHealth()
    for spec in specs:
        loaded, frame_health = load_frames([spec], **kwargs)
        frames.append(loaded)
        health.add(frame_health)
    return frames, health


@pytest.mark.parametrize("kwargs", [
    dict(sizes=ImageSizes()),
    dict(sizes=ImageSizes(width=200, height=100)),
    dict(sizes=ImageSizes(width=200, height=100), excluded_classes=(1,), exclude_edge_cases=True, edge_tolerance=2.0),
    dict(sizes=ImageSizes(), excluded_classes=(0, 1, 2)),
], ids=["no-size", "size", "exclusions-and-edges", "everything-excluded"])
def test_a_batch_equals_frames_loaded_one_by_one(write_labels, kwargs):
    root = write_labels(FRAMES)
    specs = plan_frames(root / "gt", root / "pred", "empty").frames
    loaded, health = load_frames(specs, label_map=None, **kwargs)
    alone, alone_health = one_by_one(specs, label_map=None, **kwargs)
    assert loaded.names == ("a", "b", "c", "d")
    for index, frame in enumerate(alone):
        for side in ("gt", "pred"):
            mine = getattr(loaded, side)[getattr(loaded, f"{side}_frame") == index]
            theirs = getattr(frame, side)
            assert np.array_equal(mine.corners, theirs.corners) and np.array_equal(mine.class_id, theirs.class_id)
            assert mine.line.tolist() == theirs.line.tolist()
    for counter in ("skipped_pred_lines", "reordered_boxes", "degenerate_boxes", "total_edge_cases"):
        assert getattr(health, counter) == getattr(alone_health, counter), counter
    assert [str(p) for p in health.problems] == ["{}:2: expected 9 fields (class x1 y1 x2 y2 x3 y3 x4 y4) or 10 "
                                                 "(with confidence), found 3".format(root / "pred" / "a.txt"),
                                                 "{}:2: field 2 is not finite: 'nan'".format(root / "pred" / "d.txt")]
    assert health.skipped_pred_lines == 2 and health.reordered_boxes == 1
    assert health.normalized_sides == alone_health.normalized_sides


def test_normalized_frames_are_scaled_with_their_size(write_labels):
    root = write_labels(FRAMES)
    specs = plan_frames(root / "gt", root / "pred").frames
    loaded, _ = load_frames(specs, sizes=ImageSizes(width=200, height=100), label_map=None)
    b_gt = loaded.gt[loaded.gt_frame == 1]
    assert np.allclose(b_gt.corners[0], [[20, 10], [40, 10], [40, 20], [20, 20]])
    a_gt = loaded.gt[loaded.gt_frame == 0]
    assert a_gt.corners[1].tolist() == [[50, 50], [70, 50], [70, 60], [50, 60]]  # absolute: unchanged


def test_the_first_broken_ground_truth_in_frame_order_raises(write_labels):
    root = write_labels(
        {
            "gt/a.txt": rect(0, 0, 4, 4) + "\n",
            "gt/b.txt": "0 1 2\n",
            "gt/c.txt": "car 1 2 3 4 5 6 7 8\n",
            "pred/a.txt": "",
            "pred/b.txt": "",
            "pred/c.txt": "",
        }
    )
    specs = plan_frames(root / "gt", root / "pred").frames
    with pytest.raises(LabelFormatError, match=r"b.txt:1: expected 9 fields"):
        load_frames(specs, sizes=ImageSizes(), label_map=None)


@pytest.mark.parametrize("broken_frame, expected", [("a", LabelFormatError), ("c", InputError)])
def test_a_size_error_comes_in_frame_order(write_labels, broken_frame, expected):
    from PIL import Image

    files = {f"gt/{n}.txt": rect(10, 10, 4, 4) + "\n" for n in "abc"}
    files.update({f"pred/{n}.txt": "" for n in "abc"})
    files[f"gt/{broken_frame}.txt"] = "0 1 2\n"
    root = write_labels(files)
    (root / "img").mkdir()
    Image.new("RGB", (64, 48)).save(root / "img" / "a.png")  # frame b has no image
    specs = plan_frames(root / "gt", root / "pred").frames
    with pytest.raises(expected) as info:
        load_frames(specs, sizes=ImageSizes(root / "img"), label_map=None, exclude_edge_cases=True)
    assert ("a.txt:1" in str(info.value)) if broken_frame == "a" else ("b.txt: frame size unknown" in str(info.value))


@pytest.mark.parametrize("broken, expected, where", [
    # bad bytes in a prediction are a skipped line (issue 13): the first error is then ground truth's
    ({"pred/a.txt": b"\xff\xfe", "gt/b.txt": b"0 1 2\n"}, LabelFormatError, "gt/b.txt:1: expected 9 fields"),
    ({"gt/a.txt": b"0 1 2\n", "pred/a.txt": b"\xff\xfe"}, LabelFormatError, "gt/a.txt:1: expected 9 fields"),
    ({"gt/b.txt": b"car 1 2 3 4 5 6 7 8\n", "pred/c.txt": b"\xff"}, LabelFormatError, "gt/b.txt:1: class id"),
], ids=["prediction-bad-bytes-skipped", "ground-truth-before-its-prediction", "earlier-ground-truth-first"])
def test_read_errors_come_in_frame_order_ground_truth_then_prediction(write_labels, broken, expected, where):
    files = {f"{side}/{n}.txt": (rect(10, 10, 4, 4) + "\n").encode() for n in "abc" for side in ("gt", "pred")}
    files.update(broken)
    root = write_labels(files, binary=True)
    specs = plan_frames(root / "gt", root / "pred").frames
    with pytest.raises(expected) as info:
        load_frames(specs, sizes=ImageSizes(), label_map=None)
    assert str(info.value).startswith(str(root / where.split(":")[0])) and where.split(":", 1)[1] in str(info.value)


NORMALIZED = "0 0.1 0.1 0.2 0.1 0.2 0.2 0.1 0.2\n"
ABSOLUTE = rect(10, 10, 4, 4) + "\n"


@pytest.mark.parametrize("gt, pred, size, expected", [
    (NORMALIZED, ABSOLUTE, None, {"ground truth", "mixed"}),
    (NORMALIZED, ABSOLUTE, (200, 100), {"ground truth"}),
    (ABSOLUTE, NORMALIZED, None, {"predictions", "mixed"}),
    (NORMALIZED, NORMALIZED, None, {"ground truth", "predictions"}),
    (NORMALIZED, "", None, {"ground truth"}),  # no boxes: neither normalized nor absolute
    (ABSOLUTE, ABSOLUTE, None, set()),
], ids=["gt-normalized", "with-size-not-mixed", "pred-normalized", "both", "empty-pred", "absolute"])
def test_normalized_sides_and_scaling(write_labels, gt, pred, size, expected):
    root = write_labels({"gt/a.txt": gt, "pred/a.txt": pred, "gt/b.txt": ABSOLUTE, "pred/b.txt": ABSOLUTE})
    specs = plan_frames(root / "gt", root / "pred").frames
    sizes = ImageSizes() if size is None else ImageSizes(width=size[0], height=size[1])
    loaded, health = load_frames(specs, sizes=sizes, label_map=None)
    assert health.normalized_sides == expected
    for side, text in (("gt", gt), ("pred", pred)):
        boxes = getattr(loaded, side)[getattr(loaded, f"{side}_frame") == 0]
        if text:
            written = np.array(text.split()[1:], dtype=np.float64).reshape(4, 2)
            factor = np.array(size, dtype=np.float64) if size is not None and text == NORMALIZED else 1.0
            assert np.array_equal(boxes.corners[0], written * factor)
    assert loaded.gt[loaded.gt_frame == 1].corners[0].tolist() == [[10, 10], [14, 10], [14, 14], [10, 14]]


def test_confidence_notes_are_those_of_frames_loaded_one_by_one(write_labels):
    # pred/a.txt: line 1 scored, line 2 broken, line 3 not (read apart); pred/b.txt: line 1 scored,
    # line 2 not; gt/c.txt carries a confidence. Batch and one-by-one name a.txt's line 3 first.
    files = dict(FRAMES, **{"gt/c.txt": rect(0, 0, 5, 5, cls=2) + " 0.5\n",
                            "pred/b.txt": rect(0, 0, 5, 5) + " 0.4\n" + rect(9, 9, 5, 5) + "\n"})
    root = write_labels(files)
    specs = plan_frames(root / "gt", root / "pred", "empty").frames
    _, health = load_frames(specs, sizes=ImageSizes(), label_map=None)
    _, alone = one_by_one(specs, sizes=ImageSizes(), label_map=None)
    assert health.first_unscored_pred == alone.first_unscored_pred == (str(root / "pred" / "a.txt"), 3)
    assert health.scored_pred_lines == alone.scored_pred_lines == 2
    assert health.first_scored_gt == alone.first_scored_gt == str(root / "gt" / "c.txt")
    assert health.scored_gt_files == alone.scored_gt_files == 1


def test_an_unscored_line_in_a_file_with_broken_lines_is_named_by_its_line(write_labels):
    # pred/a.txt: line 1 scored, line 2 broken, line 3 without a confidence. The file is read apart
    # (screened), and still says which of its lines lack one: line 3, not line 1 or the file alone.
    root = write_labels({"gt/a.txt": FRAMES["gt/a.txt"], "pred/a.txt": FRAMES["pred/a.txt"]})
    specs = plan_frames(root / "gt", root / "pred").frames
    _, health = load_frames(specs, sizes=ImageSizes(), label_map=None)
    assert health.first_unscored_pred == (str(root / "pred" / "a.txt"), 3)
    assert health.scored_pred_lines == 1
