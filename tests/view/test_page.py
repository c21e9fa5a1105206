"""The review page's data: the scoring core's pairs per frame, the frame statistics, the files written."""

from __future__ import annotations

import numpy as np
import pytest

from hbb2obb.errors import UsageError
from hbb2obb.io import ImageSizes
from hbb2obb.io.label_sets import read_set
from hbb2obb.plotting.overlay import frame_boxes
from hbb2obb.scoring.evaluate import EvalSettings, evaluate_frames
from hbb2obb.view.images import write_pictures
from hbb2obb.view.model import best_gt_of_pred, from_label_sets, from_results
from hbb2obb.view.page import MARKER, check_output, write_page

from .conftest import GT, IOU_G0, IOU_G1, SET_A, read_script
from conftest import shifted_pair

EMPTY = EvalSettings(missing_pred="empty")


def scored(root, *sets, settings=EMPTY):
    sizes = ImageSizes(root / "images")
    results = [evaluate_frames(root / "gt", root / s, settings, sizes=sizes) for s in sets]
    return results, from_results(results, list(sets))


def test_frame_data_holds_the_tables_pairs(view_dataset, tmp_path):
    results, data = scored(view_dataset, "set_a", "set_b")
    out = tmp_path / "page"
    run = write_page(data, out, {})
    assert run.frames == 3 and run.boxes == 5 + 5 + 3
    name, (index, frame) = read_script(out / "data" / "frames" / "0.js")
    assert name == "hbb2obbFrame" and index == 0
    a, b = frame["sets"]
    # the ground truth in file order, its corners as read, its lines and files
    assert np.allclose(np.reshape(frame["gt"]["c"], (-1, 4, 2)), results[0].table.gt.corners[:3])
    assert frame["gt"]["l"] == [1, 2, 3] and frame["gt"]["f"].endswith("gt/a.txt")
    assert a["m"] == [0, 1, -1] and a["pg"] == [0, 1, -1]
    assert a["iou"][:2] == pytest.approx([IOU_G0, IOU_G1], abs=1e-4) and a["iou"][2] is None
    assert a["s"] == [0.9, 0.6, 0.3] and a["f"].endswith("set_a/a.txt")
    assert b["m"] == [0, 1, -1] and b["iou"][:2] == [1.0, 1.0] and b["s"] is None
    # frame "b": set B has no file, so no boxes and its ground truth is missed
    _, (_, frame_b) = read_script(out / "data" / "frames" / "1.js")
    assert frame_b["sets"][1]["k"] == [] and frame_b["sets"][1]["m"] == [-1] and frame_b["sets"][1]["f"] is None


def test_frame_statistics_agree_with_shapely_and_the_overlays(tmp_path):
    """Mean IoU per frame against shapely's IoU of each pair; unmatched counts against the overlays' split."""
    gt, _, shifted_set, _, iou_b, _ = shifted_pair(tmp_path, n_frames=4, per_frame=15, shift=(9.0, -6.0), every=2)
    with open(shifted_set / "f1.txt", "a") as handle:  # a prediction far from every box: chosen by nobody
        handle.write("0 5000 5000 5040 5000 5040 5020 5000 5020\n")
    results = [evaluate_frames(gt, shifted_set, EMPTY)]
    data = from_results(results, ["b"])
    out = tmp_path / "page"
    write_page(data, out, {})
    _, (index,) = read_script(out / "data" / "index.js")
    stats = index["stats"][0]
    table = results[0].table
    assert stats["upred"] == [0, 1, 0, 0]
    for i in range(len(table.frame_names)):
        ious = iou_b[15 * i:15 * (i + 1)]
        assert stats["mean"][i] == pytest.approx(ious[ious > 0.1].mean(), abs=1e-4)
        oracle = frame_boxes(table, i)
        assert stats["pairs"][i] == oracle.n_pairs == np.count_nonzero(ious > 0.1)
        assert stats["ugt"][i] == len(oracle.unmatched_gt) and stats["upred"][i] == len(oracle.unmatched_pred)
    worst = index["worst"]
    assert [w[3] for w in worst] == sorted(w[3] for w in worst)
    assert worst[0][3] == pytest.approx(iou_b[iou_b > 0.1].min(), abs=1e-4)


def test_index_lists_classes_confidences_and_names(view_dataset, tmp_path):
    _, data = scored(view_dataset, "set_a")
    data = data.__class__(**{**data.__dict__, "class_names": {0: "Car", 1: "Bus"}})
    write_page(data, tmp_path / "page", {})
    _, (index,) = read_script(tmp_path / "page" / "data" / "index.js")
    assert index["frames"]["name"] == ["a", "b", "c"]
    assert index["frames"]["cls"] == [[0, 1], [0], [1]]
    assert index["confRange"] == [0.3, 0.9] and index["classes"] == {"0": "Car", "1": "Bus"}
    assert index["stats"][0]["cmin"] == [0.3, 0.8, 0.7] and index["stats"][0]["cmax"] == [0.9, 0.8, 0.7]


def test_best_gt_of_pred_against_brute_force():
    rng = np.random.default_rng(3)
    matched = rng.random(40) < 0.7
    pred_index = rng.integers(0, 10, 40)
    iou = np.where(matched, rng.random(40), np.nan)
    rows, ious = best_gt_of_pred(matched, pred_index, iou, 10)
    for p in range(10):
        choosers = [g for g in range(40) if matched[g] and pred_index[g] == p]
        if not choosers:
            assert rows[p] == -1 and np.isnan(ious[p])
        else:
            best = max(choosers, key=lambda g: iou[g])
            assert ious[p] == iou[best]


def test_label_sets_without_ground_truth(view_dataset, tmp_path):
    sets = [read_set(view_dataset / name, strict=False, sizes=ImageSizes(view_dataset / "images"))
            for name in ("set_a", "set_b")]
    data = from_label_sets(sets, ["A", "B"])
    assert data.frames == ("a", "b", "c") and data.gt is None
    write_page(data, tmp_path / "page", {})
    _, (_, frame) = read_script(tmp_path / "page" / "data" / "frames" / "0.js")
    assert "gt" not in frame and "m" not in frame["sets"][0]
    assert len(frame["sets"][0]["k"]) == len(SET_A["a"]) and frame["sets"][0]["l"] == [1, 2, 3]
    _, (index,) = read_script(tmp_path / "page" / "data" / "index.js")
    assert index["worst"] == [] and not index["hasGt"] and index["stats"][0]["n"] == [3, 1, 1]


def test_pictures_are_downscaled_once_and_reused(view_dataset, tmp_path):
    out = tmp_path / "page"
    images = {"a": view_dataset / "images" / "a.png", "b": view_dataset / "images" / "b.jpg"}
    pictures, problems = write_pictures(out, images, 256)
    assert problems == {}
    assert (pictures["a"].width, pictures["a"].height) == (800, 500)
    from PIL import Image

    with Image.open(out / pictures["a"].small) as small:
        assert small.size == (256, 160)
    assert pictures["a"].full == "full/a.png" and (out / "full" / "a.png").read_bytes() == images["a"].read_bytes()
    assert pictures["b"].full is None  # small enough already
    stamp = (out / pictures["a"].small).stat().st_mtime_ns
    again, _ = write_pictures(out, images, 256)
    assert again == pictures and (out / pictures["a"].small).stat().st_mtime_ns == stamp
    images["a"].touch()  # a changed source is made again
    import os

    os.utime(images["a"], ns=(stamp + 10**9, stamp + 10**9))
    write_pictures(out, images, 256)
    assert (out / pictures["a"].small).stat().st_mtime_ns != stamp


def test_unreadable_image_is_a_problem_not_a_failure(tmp_path):
    broken = tmp_path / "x.jpg"
    broken.write_bytes(b"not an image")
    pictures, problems = write_pictures(tmp_path / "page", {"x": broken}, 256)
    assert pictures == {} and "cannot read image" in problems["x"]


def test_a_folder_of_other_files_is_refused(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(UsageError, match="did not write"):
        check_output(tmp_path, overwrite=False)
    check_output(tmp_path, overwrite=True)
    check_output(tmp_path / "new", overwrite=False)


@pytest.mark.parametrize("below", ["", "page"])
def test_a_file_where_the_page_folder_or_its_parent_should_be_is_refused(tmp_path, below):
    """Before, a page folder below a file got as far as making its frames folder: a traceback."""
    blocking = tmp_path / "notes"
    blocking.write_text("mine")
    with pytest.raises(UsageError, match=f"{blocking} exists and is not a folder"):
        check_output(blocking / below if below else blocking, overwrite=True)
    assert blocking.read_text() == "mine"


def test_rewrite_of_a_smaller_run_removes_the_extra_frame_files(view_dataset, tmp_path):
    out = tmp_path / "page"
    _, data = scored(view_dataset, "set_a")
    write_page(data, out, {})
    assert (out / MARKER).is_file() and (out / "data" / "frames" / "2.js").is_file()
    check_output(out, overwrite=False)  # its own folder: written again without --overwrite
    (view_dataset / "gt" / "c.txt").unlink()
    _, data = scored(view_dataset, "set_a")
    write_page(data, out, {})
    assert sorted(p.name for p in (out / "data" / "frames").iterdir()) == ["0.js", "1.js"]


def test_boxes_are_put_into_image_pixels(view_dataset, tmp_path):
    """Normalized labels are scaled by the frame size the scoring knew; the page draws in the image's pixels."""
    (view_dataset / "norm").mkdir()
    (view_dataset / "norm" / "a.txt").write_text("0 0.125 0.2 0.375 0.2 0.375 0.4 0.125 0.4\n")
    _, data = scored(view_dataset, "norm")
    pictures, _ = write_pictures(tmp_path / "page", {"a": view_dataset / "images" / "a.png"}, 256)
    write_page(data, tmp_path / "page", pictures)
    _, (_, frame) = read_script(tmp_path / "page" / "data" / "frames" / "0.js")
    assert frame["sets"][0]["c"] == [100, 100, 300, 100, 300, 200, 100, 200]
    assert frame["sets"][0]["m"][0] == 0 and GT["a"][0].startswith("0 100 100")
