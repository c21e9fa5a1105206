"""eval and analyze on ground truth and predictions in COCO, LabelMe, VOC and DOTA; the --pairs table."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest
from click.testing import CliRunner

from hbb2obb.cli.analyze import main as analyze_main
from hbb2obb.cli.eval import main as eval_main
from hbb2obb.io.images import ImageSizes
from hbb2obb.io.label_sets import read_set, write_set

from conftest import rect, shapely_iou


def _invoke(command, args):
    result = CliRunner().invoke(command, [str(a) for a in args])
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def songdo_copies(sample_dir, tmp_path):
    """The Songdo ground truth written as COCO, LabelMe and DOTA (.dota) by our writers."""
    label_map = {0: "Car", 1: "Bus", 2: "Truck", 3: "Motorcycle"}
    sizes = ImageSizes(sample_dir / "images")
    gt = read_set(sample_dir / "labels_obb_gt", "yolo", label_map=label_map, sizes=sizes)
    out = {}
    for fmt in ("coco", "labelme", "dota"):
        written = write_set(gt, tmp_path / fmt, fmt, kind="obb", names=label_map)
        out[fmt] = written[0] if fmt == "coco" else tmp_path / fmt
    return out


def _eval_json(gt, pred, sample_dir, *extra):
    code, out, err = _invoke(eval_main, [gt, pred, "-mp", sample_dir / "classes.yaml", "-i", sample_dir / "images",
                                         "-nb", "--json", *extra])
    assert code == 0, err
    return json.loads(out)


def test_a_coco_labelme_or_dota_copy_of_the_ground_truth_scores_the_same(sample_dir, songdo_copies):
    pred = sample_dir / "labels_obb_sam_b"
    original = _eval_json(sample_dir / "labels_obb_gt", pred, sample_dir)
    assert original["total_gt"] == 122 and original["total_matches"] > 100
    for fmt, path in songdo_copies.items():
        assert _eval_json(path, pred, sample_dir) == original, fmt
        assert _eval_json(path, pred, sample_dir, "--gt_format", fmt) == original, fmt
    # the report people read, too
    args = ["-mp", sample_dir / "classes.yaml", "-i", sample_dir / "images", "-nb"]
    text = _invoke(eval_main, [sample_dir / "labels_obb_gt", pred, *args])[1]
    assert _invoke(eval_main, [songdo_copies["coco"], pred, *args])[1] == text
    analysis = _invoke(analyze_main, [sample_dir / "labels_obb_gt", pred, *args])[1]
    assert (
        _invoke(analyze_main, [songdo_copies["labelme"], pred, *args, "-hd", sample_dir / "labels_hbb"])[1] == analysis
    )


def test_predictions_as_coco_score_as_their_yolo_files(sample_dir, tmp_path):
    label_map = {0: "Car", 1: "Bus", 2: "Truck", 3: "Motorcycle"}
    preds = read_set(sample_dir / "labels_obb_sam_b", "yolo", label_map=label_map)
    sizes = ImageSizes(sample_dir / "images")
    preds = read_set(sample_dir / "labels_obb_sam_b", "yolo", label_map=label_map, sizes=sizes)
    path = write_set(preds, tmp_path, "coco", kind="obb", names=label_map)[0]
    assert all((f.boxes.corners == np.rint(f.boxes.corners)).all() for f in preds.frames)  # integer: exact copy
    assert _eval_json(sample_dir / "labels_obb_gt", path, sample_dir) == \
        _eval_json(sample_dir / "labels_obb_gt", sample_dir / "labels_obb_sam_b", sample_dir)


def _coco(annotations):
    return json.dumps({"images": [{"id": 1, "file_name": "a.jpg", "width": 100, "height": 100}],
                       "annotations": annotations, "categories": [{"id": 1, "name": "car"}]})


def test_broken_coco_predictions_are_skipped_and_counted_broken_ground_truth_stops(write_labels):
    good = {"id": 1, "image_id": 1, "category_id": 1, "bbox": [10, 10, 20, 10]}
    broken = {"id": 2, "image_id": 1, "category_id": 1, "bbox": [10, 10, "x", 10]}
    root = write_labels({"gt/a.txt": rect(10, 10, 20, 10) + "\n" + rect(50, 50, 10, 10) + "\n",
                         "pred.json": _coco([good, broken]), "gt.json": _coco([good, broken])})
    code, out, err = _invoke(eval_main, [root / "gt", root / "pred.json", "--json", "-nb"])
    assert code == 0, err
    metrics = json.loads(out)
    assert metrics["total_pred"] == 1 and metrics["total_matches"] == 1
    assert f"{root / 'pred.json'}:annotations[1].bbox: expected [x, y, width, height]" in err
    code, out, err = _invoke(eval_main, [root / "gt.json", root / "pred.json", "-nb"])
    assert code == 2 and out == ""
    assert err.strip() == (f"hbb2obb-eval: error: {root / 'gt.json'}:annotations[1].bbox: expected [x, y, width, "
                           "height] (or an 8-number segmentation): bbox value 3 is not a number: 'x'")


def test_a_folder_of_txt_stays_on_the_batch_reader_and_a_wrong_format_is_an_error(write_labels):
    root = write_labels({"gt/a.txt": rect(10, 10, 20, 10) + "\n", "pred/a.txt": rect(10, 10, 20, 10) + "\n"})
    code, _, err = _invoke(eval_main, [root / "gt", root / "pred", "--pred_format", "coco", "-nb"])
    assert code == 2 and "no COCO .json file found" in err
    code, out, _ = _invoke(eval_main, [root / "gt", root / "pred", "--gt_format", "yolo", "--json", "-nb"])
    assert code == 0 and json.loads(out)["avg_iou"] == 1.0


def test_pairs_csv_has_a_row_per_gt_box_and_per_unmatched_prediction(write_labels):
    from conftest import obb_line, rotated_rect

    turned = rotated_rect(25, 15, 20, 10, 10)
    root = write_labels({"gt/a.txt": rect(15, 10, 20, 10) + "\n" + rect(60, 60, 10, 10) + "\n",
                         "pred/a.txt": obb_line(0, turned) + "\n" + rect(200, 200, 5, 5, cls=1) + "\n"})
    code, _, err = _invoke(eval_main, [root / "gt", root / "pred", "--pairs", root / "out" / "pairs.csv", "-nb",
                                       "-iw", 300, "-ih", 300])
    assert code == 0, err
    with (root / "out" / "pairs.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert [(r["frame"], r["gt_line"], r["pred_line"], r["gt_class"], r["pred_class"]) for r in rows] == [
        ("a", "1", "1", "0", "0"), ("a", "2", "", "0", ""), ("a", "", "2", "", "1")]
    gt_box = np.array([[15, 10], [35, 10], [35, 20], [15, 20]], dtype=float)
    assert float(rows[0]["iou"]) == pytest.approx(shapely_iou(gt_box, turned), abs=1e-9)
    assert float(rows[0]["angle_error"]) == pytest.approx(10.0, abs=1e-6)
    assert float(rows[0]["center_offset"]) == pytest.approx(0.0, abs=1e-9)
    assert float(rows[0]["short_side"]) == pytest.approx(10.0) and rows[0]["edge"] == "0"
    assert rows[1]["iou"] == "" and rows[2]["edge"] == ""
    code, _, err = _invoke(eval_main, [root / "gt", root / "pred", "--pairs", root / "pairs.txt", "-nb"])
    assert code == 2 and "must end in .csv or .parquet" in err


def test_pairs_parquet_reads_back_the_csv_values(write_labels):
    pq = pytest.importorskip("pyarrow.parquet")
    root = write_labels({"gt/a.txt": rect(15, 10, 20, 10) + "\n" + rect(60, 60, 10, 10) + "\n",
                         "pred/a.txt": rect(16, 10, 20, 10) + "\n"})
    for name in ("p.csv", "p.parquet"):
        code, _, err = _invoke(analyze_main, [root / "gt", root / "pred", "--pairs", root / name, "-nb"])
        assert code == 0, err
    table = pq.read_table(root / "p.parquet").to_pydict()
    with (root / "p.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert table["gt_line"] == [1, 2] and table["pred_line"] == [1, None]
    assert table["iou"][0] == float(rows[0]["iou"]) == pytest.approx(19 * 10 / (21 * 10))
    assert table["iou"][1] is None


def test_the_python_api_takes_the_formats_too(sample_dir, songdo_copies):
    from hbb2obb.scoring.metric_dict import evaluate_obb

    pred = sample_dir / "labels_obb_sam_b"
    original = evaluate_obb(sample_dir / "labels_obb_gt", pred, map_path=sample_dir / "classes.yaml")
    copy = evaluate_obb(songdo_copies["labelme"], pred, map_path=sample_dir / "classes.yaml", gt_format="labelme")
    assert copy == original


def test_the_sizes_a_coco_file_records_stand_in_for_images(sample_dir, songdo_copies, tmp_path):
    """Normalized predictions against COCO ground truth: scaled by the COCO frame sizes, as by -i."""
    code, _, err = _invoke(__import__("hbb2obb.cli.formats", fromlist=["main"]).main,
                           [sample_dir / "labels_obb_sam_b", "--to", "yolo", "--normalize", "-o", tmp_path / "norm",
                            "-i", sample_dir / "images", "-nb"])
    assert code == 0, err
    with_images = _eval_json(sample_dir / "labels_obb_gt", tmp_path / "norm", sample_dir, "-exc")
    code, out, err = _invoke(eval_main, [songdo_copies["coco"], tmp_path / "norm", "-mp", sample_dir / "classes.yaml",
                                         "-nb", "--json", "-exc"])
    assert code == 0, err
    assert json.loads(out) == with_images and "normalized" not in err
    assert with_images["total_edge_cases"] >= 0 and with_images["total_matches"] > 100


def test_a_named_format_with_no_files_of_it_is_an_input_error(write_labels):
    root = write_labels({"gt/a.txt": rect(10, 10, 20, 10) + "\n", "pred/a.txt": rect(10, 10, 20, 10) + "\n"})
    code, out, err = _invoke(eval_main, [root / "gt", root / "pred", "--pred_format", "voc", "-nb"])
    assert code == 2 and out == "" and f"{root / 'pred'}: no voc label files (.xml)" in err


def test_an_empty_prediction_folder_is_paired_as_before(write_labels):
    # paired as before (each frame warned), then refused: a run that scored nothing is an input error (issue 34)
    root = write_labels({"gt/a.txt": rect(10, 10, 20, 10) + "\n"})
    (root / "pred").mkdir()
    code, out, err = _invoke(eval_main, [root / "gt", root / "pred", "--json", "-nb"])
    assert code == 2 and out == "" and "no prediction file for a.txt: frame skipped" in err
    assert "no ground-truth frame has a prediction file (1 frame(s) without one): nothing was scored" in err


def _broken_predictions(folder, fmt):
    """Predictions of frame ``a`` in ``fmt``: two good boxes and three broken ones, by the one coordinate rule."""
    if fmt == "labelme":
        good = [{"label": "car", "points": [[10, 10], [50, 30]], "shape_type": "rectangle"},
                {"label": "car", "points": [[60, 10], [90, 30]], "shape_type": "rectangle"}]
        broken = [{"label": "car", "points": [[0, 0], [2e12, 5]], "shape_type": "rectangle"},
                  {"label": "car", "points": [[0, 0], [4, 5], [6, 7]], "shape_type": "polygon"},
                  {"label": "car", "points": [[5, 5], [9, 9]], "shape_type": "circle"}]
        (folder / "a.json").write_text(json.dumps({"shapes": good + broken, "imageWidth": 100, "imageHeight": 40}))
    elif fmt == "voc":
        boxes = [(10, 10, 50, 30), (60, 10, 90, 30), (0, 0, "2e12", 5), (0, 0, "1e400", 5), (0, 0, "nan", 5)]
        objects = "".join(f"<object><name>car</name><bndbox><xmin>{x0}</xmin><ymin>{y0}</ymin><xmax>{x1}</xmax>"
                          f"<ymax>{y1}</ymax></bndbox></object>\n" for x0, y0, x1, y1 in boxes)
        (folder / "a.xml").write_text("<annotation>\n<filename>a.jpg</filename><size><width>100</width>"
                                      f"<height>40</height></size>\n{objects}</annotation>\n")
    else:
        annotations = [{"id": i, "image_id": 1, "category_id": 1, "bbox": bbox}
                       for i, bbox in enumerate([[10, 10, 40, 20], [60, 10, 30, 20]], start=1)]
        annotations += [{"id": 3, "image_id": 1, "category_id": 1, "bbox": [0, 0, 2e12, 5]},
                        {"id": 4, "image_id": 1, "category_id": 1, "bbox": [0, 0, 4, 5],
                         "segmentation": [[0, 0, 4, 0, 4, 5]]},
                        {"id": 5, "image_id": 1, "category_id": 1, "bbox": [0, 0, 4, 5],
                         "segmentation": [[0, 0, 4, 0, 4, 5, 0, 5], [1, 1, 2, 1, 2, 2, 1, 2]]}]
        (folder / "p.json").write_text(json.dumps({
            "images": [{"id": 1, "file_name": "a.jpg", "width": 100, "height": 40}],
            "annotations": annotations, "categories": [{"id": 1, "name": "car"}]}))


@pytest.mark.parametrize("fmt", ["coco", "labelme", "voc"])
def test_skipped_prediction_boxes_are_counted_exactly_in_every_format(tmp_path, fmt):
    # class 4 of the "no silent wrong answer" rule, end to end: three broken boxes -> skipped_pred_lines == 3
    (tmp_path / "gt").mkdir()
    (tmp_path / "pred").mkdir()
    (tmp_path / "gt" / "a.txt").write_text("0 10 10 50 10 50 30 10 30\n0 60 10 90 10 90 30 60 30\n")
    (tmp_path / "map.yaml").write_text("0: car\n")
    _broken_predictions(tmp_path / "pred", fmt)
    pred = tmp_path / "pred" / "p.json" if fmt == "coco" else tmp_path / "pred"
    result = CliRunner().invoke(eval_main, [str(tmp_path / "gt"), str(pred), "-mp", str(tmp_path / "map.yaml"),
                                       "--pred_format", fmt, "-nb", "--json"])
    assert result.exit_code == 0, result.output
    metrics = json.loads(result.stdout)
    assert metrics["skipped_pred_lines"] == 3
    assert metrics["total_matches"] == 2 and metrics["total_pred"] == 2 and metrics["avg_iou"] == 1.0
