"""Finding a set's format: each JSON file parsed once to sniff it, once to read it; changed files looked at again."""

import json

import numpy as np
import pytest
from click.testing import CliRunner

from hbb2obb.cli.eval import main as eval_main
from hbb2obb.io import coco
from hbb2obb.io.format_detection import detect_format, sniff_format
from hbb2obb.io.label_sets import read_set

MAP = {0: "car", 1: "bus"}


def _labelme(shapes):
    return json.dumps({"version": "5.5.0", "shapes": [
        {"label": MAP[c], "points": [[x, y], [x + 10, y], [x + 10, y + 6], [x, y + 6]], "shape_type": "polygon"}
        for c, x, y in shapes], "imageWidth": 200, "imageHeight": 100})


def _coco(frames):
    images = [{"id": i + 1, "file_name": f"{name}.jpg", "width": 200, "height": 100} for i, name in enumerate(frames)]
    annotations = [{"id": k + 1, "image_id": i + 1, "category_id": c + 1, "bbox": [x, y, 10, 6], "iscrowd": 0,
                    "segmentation": [[x, y, x + 10, y, x + 10, y + 6, x, y + 6]], "area": 60}
                   for k, (i, (c, x, y)) in enumerate((i, s) for i, name in enumerate(frames) for s in frames[name])]
    return json.dumps({"images": images, "annotations": annotations,
                       "categories": [{"id": c + 1, "name": n} for c, n in MAP.items()]})


@pytest.fixture
def parses(monkeypatch):
    """The path of every JSON parse, in order."""
    seen = []
    parsed = coco._parsed

    def counted(path, what):
        seen.append(str(path))
        return parsed(path, what)

    monkeypatch.setattr(coco, "_parsed", counted)
    return seen


FRAMES = {f"f{i}": [(i % 2, 5 + 3 * i, 7), (0, 40, 20 + i)] for i in range(6)}


def test_a_labelme_folder_is_parsed_once_to_find_its_format_and_once_to_read(tmp_path, parses):
    folder = tmp_path / "gt"
    folder.mkdir()
    for name, shapes in FRAMES.items():
        (folder / f"{name}.json").write_text(_labelme(shapes))
    label_set = read_set(folder, None, label_map=MAP)
    assert {f.stem: f.boxes.class_id.tolist() for f in label_set.frames} == {
        name: [c for c, _, _ in shapes] for name, shapes in FRAMES.items()}
    # (before, finding the format parsed each file four times; the last one sniffed is read from its sniff)
    assert sorted(set(parses)) == sorted(str(folder / f"{name}.json") for name in FRAMES)
    assert max(parses.count(path) for path in parses) == 2
    assert not coco._SNIFFED  # nothing kept once the set is read


def test_an_evaluation_of_labelme_against_coco_parses_each_file_at_most_twice(tmp_path, parses):
    gt, pred = tmp_path / "gt", tmp_path / "pred.json"
    gt.mkdir()
    for name, shapes in FRAMES.items():
        (gt / f"{name}.json").write_text(_labelme(shapes))
    pred.write_text(_coco(FRAMES))
    result = CliRunner().invoke(eval_main, [str(gt), str(pred), "-mp", str(_map(tmp_path)), "-nb", "--json"])
    assert result.exit_code == 0, result.output
    metrics = json.loads(result.stdout)
    assert metrics["total_matches"] == 12 and metrics["avg_iou"] == pytest.approx(1.0)
    counts = {path: parses.count(path) for path in parses}
    assert max(counts.values()) <= 2 and counts[str(pred)] == 1  # the COCO file: sniffed and read in one parse


def _map(root):
    path = root / "classes.yaml"
    path.write_text("".join(f"{c}: {n}\n" for c, n in MAP.items()))
    return path


def test_a_file_written_again_is_looked_at_again(tmp_path):
    path = tmp_path / "labels.json"
    path.write_text(_coco({"a": [(0, 1, 1)]}))
    assert sniff_format(path) == "coco"
    path.write_text(_labelme([(0, 1, 1)]))
    assert sniff_format(path) == "labelme" and detect_format(path) == "labelme"
    path.write_text("{not json")
    assert sniff_format(path) is None


def test_a_sniffed_document_is_handed_to_its_reader_once_and_only_for_an_unchanged_file(tmp_path, parses):
    path = tmp_path / "labels.json"
    path.write_text(_coco({"a": [(0, 1, 1)], "b": [(1, 2, 2)]}))
    first = coco.sniff_json(path)
    frames, _, _ = coco.read_coco(path, strict=True, label_map=MAP)  # takes the sniffed document
    again, _, _ = coco.read_coco(path, strict=True, label_map=MAP)  # parses again: it was given once
    assert parses == [str(path)] * 2 and first["images"][0]["file_name"] == "a.jpg"
    assert [np.array_equal(f.boxes.corners, g.boxes.corners) for f, g in zip(frames, again)] == [True, True]
    coco.sniff_json(path)
    path.write_text(_coco({"c": [(0, 3, 3)]}))  # changed before it is read: read afresh
    frames, _, _ = coco.read_coco(path, strict=True, label_map=MAP)
    assert [f.stem for f in frames] == ["c"]
