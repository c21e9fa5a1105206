"""Rotated AP against pycocotools' COCOeval (our IoU matrices in its IoU step) and against an
independent implementation of the DOTA devkit's VOC rule written here from its definition."""

from __future__ import annotations

import contextlib
import io

import numpy as np
import pytest
from shapely.geometry import Polygon

from hbb2obb.boxes import Boxes
from hbb2obb.detection import evaluate as evaluate_module
from hbb2obb.detection.accumulate import accumulate, summarize_detections
from hbb2obb.detection.evaluate import AREA_RANGES, DetectionParams, _batches, _turns, evaluate_detections
from hbb2obb.errors import UsageError
from hbb2obb.gates.require import parse_gate
from hbb2obb.geometry import iou_pairs, polygon_area

from conftest import rotated_rect

pycocotools = pytest.importorskip("pycocotools")
from pycocotools.coco import COCO  # noqa: E402
from pycocotools.cocoeval import COCOeval  # noqa: E402


def random_scene(seed: int, frames: int = 7, *, difficult_share: float = 0.15):
    """GT and detections over several frames: jittered copies, duplicates, extras, ties in score.

    Class 3 has detections and no ground truth, class 2 ground truth and no detections, frame 2
    has nothing, frame 4 has only detections; sizes span COCO's small, medium and large ranges.
    """
    rng = np.random.default_rng(seed)
    gt, gt_frame, gt_class, dt, dt_frame, dt_class = [], [], [], [], [], []
    for frame in range(frames):
        if frame == 2:
            continue
        n_gt = 0 if frame == 4 else 24 if frame == 5 else int(rng.integers(1, 9))  # frame 5: > 10 per class
        for _ in range(n_gt):
            cls = int(rng.choice([0, 1, 2], p=[0.5, 0.35, 0.15]))
            w, h = rng.uniform(8, 140), rng.uniform(8, 70)
            cx, cy, angle = rng.uniform(0, 400), rng.uniform(0, 400), rng.uniform(0, 180)
            gt.append(rotated_rect(cx, cy, w, h, angle))
            gt_frame.append(frame)
            gt_class.append(cls)
            if cls == 2:
                continue
            for _ in range(int(rng.integers(0, 3))):  # zero, one or two detections of it
                jitter = rng.normal(0, [0.08 * w, 0.08 * h])
                dt.append(rotated_rect(cx + jitter[0], cy + jitter[1], w * rng.uniform(0.8, 1.2),
                                       h * rng.uniform(0.8, 1.2), angle + rng.normal(0, 6)))
                dt_frame.append(frame)
                dt_class.append(cls if rng.random() > 0.1 else 1 - cls)
        for _ in range(int(rng.integers(0, 4))):  # spurious, class 3 among them
            dt.append(rotated_rect(*rng.uniform(0, 400, 2), rng.uniform(8, 100), rng.uniform(8, 60),
                                   rng.uniform(0, 180)))
            dt_frame.append(frame)
            dt_class.append(int(rng.choice([0, 1, 3])))
        if frame == 4:  # always some class-3 detection
            dt.append(rotated_rect(100, 100, 30, 20, 10))
            dt_frame.append(frame)
            dt_class.append(3)
    score = np.round(rng.uniform(0, 1, len(dt)), 1)  # one decimal: many ties
    difficult = rng.random(len(gt)) < difficult_share
    # rows in frame order (then creation order: the line order)
    gt_order = np.argsort(gt_frame, kind="stable")
    dt_order = np.argsort(dt_frame, kind="stable")
    gt_boxes = Boxes(np.array(gt)[gt_order], np.array(gt_class)[gt_order], difficult=difficult[gt_order])
    dt_boxes = Boxes(np.array(dt).reshape(-1, 4, 2)[dt_order], np.array(dt_class, dtype=np.int64)[dt_order],
                     score=score[dt_order])
    return gt_boxes, np.array(gt_frame)[gt_order], dt_boxes, np.array(dt_frame, dtype=np.int64)[dt_order], frames


def dense_iou(gt: Boxes, gt_frame, dt: Boxes, dt_frame) -> np.ndarray:
    """Our exact IoU of every same-frame (detection, ground truth) pair, 0 across frames."""
    out = np.zeros((len(dt), len(gt)))
    d, g = np.nonzero(dt_frame[:, None] == gt_frame[None, :])
    out[d, g] = iou_pairs(dt.corners[d], gt.corners[g])
    return out


def coco_overlap(gt: Boxes, gt_frame, dt: Boxes, dt_frame) -> np.ndarray:
    """:func:`dense_iou`, with COCOeval's crowd rule on difficult (iscrowd) columns: intersection
    over the detection's area (maskUtils.iou with iscrowd=1), measured here with shapely."""
    out = dense_iou(gt, gt_frame, dt, dt_frame)
    for g in np.flatnonzero(gt.difficult):
        crowd = Polygon(gt.corners[g])
        for d in np.flatnonzero(dt_frame == gt_frame[g]):
            det = Polygon(dt.corners[d])
            out[d, g] = crowd.intersection(det).area / det.area if det.area > 0 else 0.0
    return out


class RotatedCOCOeval(COCOeval):
    """COCOeval with its IoU step replaced by our rotated IoU, dt in COCOeval's own order."""

    matrix: np.ndarray

    def computeIoU(self, imgId, catId):
        gts, dts = self._gts[imgId, catId], self._dts[imgId, catId]
        if len(gts) == 0 and len(dts) == 0:
            return []
        order = np.argsort([-d["score"] for d in dts], kind="mergesort")
        dts = [dts[i] for i in order][: self.params.maxDets[-1]]
        if not gts or not dts:
            return []
        return self.matrix[np.ix_([d["id"] - 1 for d in dts], [g["id"] - 1 for g in gts])]


def coco_oracle(gt: Boxes, gt_frame, dt: Boxes, dt_frame, frames: int, max_dets: int) -> RotatedCOCOeval:
    categories = [{"id": int(k)} for k in np.union1d(gt.class_id, dt.class_id)]
    images = [{"id": f} for f in range(frames)]

    def annotations(boxes, frame, scored):
        out = []
        for row, (cls, fr, area) in enumerate(zip(boxes.class_id.tolist(), frame.tolist(),
                                                  polygon_area(boxes.corners).tolist())):
            entry = {"id": row + 1, "image_id": fr, "category_id": cls, "area": area, "bbox": [0, 0, 1, 1]}
            if scored:
                entry["score"] = float(boxes.score[row])
            else:
                entry["iscrowd"] = int(boxes.difficult[row])
            out.append(entry)
        return out

    with contextlib.redirect_stdout(io.StringIO()):
        coco_gt, coco_dt = COCO(), COCO()
        coco_gt.dataset = {"images": images, "categories": categories, "annotations": annotations(gt, gt_frame, False)}
        coco_dt.dataset = {"images": images, "categories": categories, "annotations": annotations(dt, dt_frame, True)}
        coco_gt.createIndex()
        coco_dt.createIndex()
        evaluator = RotatedCOCOeval(coco_gt, coco_dt, "bbox")
        evaluator.matrix = coco_overlap(gt, gt_frame, dt, dt_frame)
        evaluator.params.maxDets = [1, 10, max_dets]
        evaluator.evaluate()
        evaluator.accumulate()
        evaluator.summarize()
    return evaluator


def as_coco(values: np.ndarray) -> np.ndarray:
    return np.where(np.isnan(values), -1.0, values)


@pytest.mark.parametrize("seed, max_dets", [(0, 100), (1, 100), (2, 10), (3, 100), (4, 12)])
def test_agrees_with_cocoeval(seed, max_dets):
    gt, gt_frame, dt, dt_frame, frames = random_scene(seed)
    assert len(np.unique(dt.score)) < len(dt)  # the scene has ties in score
    params = DetectionParams(max_dets=max_dets)
    acc = accumulate(evaluate_detections(gt, gt_frame, dt, dt_frame, params=params), every_max_dets=True)
    oracle = coco_oracle(gt, gt_frame, dt, dt_frame, frames, max_dets)
    np.testing.assert_allclose(as_coco(acc.precision), oracle.eval["precision"], rtol=0, atol=1e-9)
    np.testing.assert_allclose(as_coco(acc.recall), oracle.eval["recall"], rtol=0, atol=1e-9)
    quick = accumulate(evaluate_detections(gt, gt_frame, dt, dt_frame, params=params))  # what the CLI runs
    np.testing.assert_array_equal(quick.precision[..., -1], acc.precision[..., -1])
    np.testing.assert_array_equal(quick.recall, acc.recall)
    overall, per_class = summarize_detections(acc)
    ours = [overall[k] for k in ("map50_95", "map50", "map75", "map_small", "map_medium", "map_large",
                                 "mar_1", "mar_10", f"mar_{max_dets}")]
    if max_dets == 100:  # COCOeval's summarize asks for maxDets 100 by value
        coco_stats = oracle.stats[:9]
    else:  # its definition on its own arrays: the mean of the defined entries at the last maxDets
        precision, recall = oracle.eval["precision"], oracle.eval["recall"]

        def mean(values):
            return np.mean(values[values > -1]) if (values > -1).any() else -1.0

        coco_stats = [mean(precision[:, :, :, 0, -1]), mean(precision[0, :, :, 0, -1]), mean(precision[5, :, :, 0, -1])]
        coco_stats += [mean(precision[:, :, :, a, -1]) for a in (1, 2, 3)]
        coco_stats += [mean(recall[:, :, 0, m]) for m in range(3)]
    np.testing.assert_allclose(as_coco(np.array(ours)), coco_stats, rtol=0, atol=1e-9)
    assert np.isnan(per_class[3]["ap50"])  # class 3: detections, no ground truth
    assert per_class[2]["ap50"] == 0.0  # class 2: ground truth, no detections


def test_agrees_with_cocoeval_without_difficult_boxes():
    gt, gt_frame, dt, dt_frame, frames = random_scene(11, frames=9, difficult_share=0.0)
    acc = accumulate(evaluate_detections(gt, gt_frame, dt, dt_frame), every_max_dets=True)
    oracle = coco_oracle(gt, gt_frame, dt, dt_frame, frames, 100)
    np.testing.assert_allclose(as_coco(acc.precision), oracle.eval["precision"], rtol=0, atol=1e-9)
    np.testing.assert_allclose(as_coco(acc.recall), oracle.eval["recall"], rtol=0, atol=1e-9)


def test_area_ranges_are_cocos():
    assert [r[0] for r in AREA_RANGES] == ["all", "small", "medium", "large"]
    assert [r[1:] for r in AREA_RANGES] == [tuple(r) for r in COCOeval(iouType="bbox").params.areaRng]


# --------------------------------------------------------------------------- the DOTA devkit rule


def shapely_iou(a, b) -> float:
    pa, pb = Polygon(a), Polygon(b)
    union = pa.union(pb).area
    return pa.intersection(pb).area / union if union > 0 else 0.0


def dota_voc_oracle(gt: Boxes, gt_frame, dt: Boxes, dt_frame, cls: int, eleven_point: bool) -> float:
    """dota_evaluation_task1's voc_eval for one class, from its definition, with shapely IoU.

    Detections by descending score (ties: frame order, then line order); each takes the highest-
    IoU box of its frame and class, taken or not; a hit when IoU > 0.5 and the box is neither
    difficult nor taken; on a difficult box neither hit nor miss; otherwise a miss.
    """
    gt_rows = [i for i in range(len(gt)) if gt.class_id[i] == cls]
    npos = sum(1 for i in gt_rows if not gt.difficult[i])
    rows = [i for i in range(len(dt)) if dt.class_id[i] == cls]
    rows.sort(key=lambda i: (-dt.score[i], dt_frame[i], i))
    taken = set()
    tp, fp = [], []
    for i in rows:
        best, best_iou = None, -np.inf
        for j in gt_rows:
            if gt_frame[j] != dt_frame[i]:
                continue
            value = shapely_iou(dt.corners[i], gt.corners[j])
            if value > best_iou:
                best, best_iou = j, value
        hit = miss = 0
        if best is not None and best_iou > 0.5:
            if not gt.difficult[best]:
                if best not in taken:
                    hit = 1
                    taken.add(best)
                else:
                    miss = 1
        else:
            miss = 1
        tp.append(hit)
        fp.append(miss)
    tp, fp = np.cumsum(tp, dtype=float), np.cumsum(fp, dtype=float)
    recall = tp / npos
    precision = tp / np.maximum(tp + fp, np.finfo(np.float64).eps)
    if eleven_point:
        total = 0.0
        for level in np.arange(0.0, 1.1, 0.1):  # the devkit's levels, 0.30000000000000004 and all
            above = precision[recall >= level] if recall.size else np.zeros(0)
            total += (above.max() if above.size else 0.0) / 11
        return total
    mrec = [0.0, *recall.tolist(), 1.0]
    mpre = [0.0, *precision.tolist(), 0.0]
    for i in range(len(mpre) - 2, -1, -1):
        mpre[i] = max(mpre[i], mpre[i + 1])
    return sum((mrec[i + 1] - mrec[i]) * mpre[i + 1] for i in range(len(mrec) - 1) if mrec[i + 1] != mrec[i])


@pytest.mark.parametrize("seed", [0, 5, 6])
@pytest.mark.parametrize("rule", ["voc07", "voc"])
def test_dota_rule_agrees_with_an_independent_implementation(seed, rule):
    gt, gt_frame, dt, dt_frame, _ = random_scene(seed, difficult_share=0.3)
    assert gt.difficult.any()
    acc = accumulate(evaluate_detections(gt, gt_frame, dt, dt_frame, params=DetectionParams(ap_rule=rule)))
    for k, cls in enumerate(acc.classes.tolist()):
        npos = int(((gt.class_id == cls) & ~gt.difficult).sum())
        if npos == 0:
            assert np.isnan(acc.dota_ap[k])
            continue
        expected = dota_voc_oracle(gt, gt_frame, dt, dt_frame, cls, rule == "voc07")
        assert acc.dota_ap[k] == pytest.approx(expected, abs=1e-9), cls
    overall, _ = summarize_detections(acc)
    assert overall["dota_map50"] == pytest.approx(np.nanmean(acc.dota_ap), abs=1e-12)


def test_a_detection_on_a_difficult_box_is_neither_hit_nor_miss():
    box = rotated_rect(50, 50, 40, 20, 30)
    gt = Boxes([box, rotated_rect(150, 50, 40, 20, 0)], [0, 0], difficult=[True, False])
    dt = Boxes([box, rotated_rect(150, 50, 40, 20, 0), rotated_rect(300, 300, 10, 10, 0)], [0, 0, 0],
               score=[0.9, 0.8, 0.7])
    ev = evaluate_detections(gt, [0, 0], dt, [0, 0, 0])
    assert ev.dota_tp.tolist() == [False, True, False]
    assert ev.dota_fp.tolist() == [False, False, True]
    acc = accumulate(ev)
    # one counted box, found by the first counted detection: all-point AP 1 at rank 1 ... 11-point 1
    assert acc.dota_ap[0] == pytest.approx(1.0)


@pytest.mark.parametrize("difficult_first", [True, False])
def test_a_detection_between_two_boxes_at_the_same_iou_takes_the_first(difficult_first):
    # the devkit's argmax over a frame's boxes in file order: the first of equal overlaps
    left, right = rotated_rect(20, 50, 40, 20, 0), rotated_rect(40, 50, 40, 20, 0)
    between = rotated_rect(30, 50, 40, 20, 0)  # IoU 0.6 with both, exactly
    assert iou_pairs([between, between], [left, right]).tolist() == [0.6, 0.6]
    boxes = [left, right] if difficult_first else [right, left]
    gt = Boxes(boxes, [0, 0], difficult=[True, False] if difficult_first else [False, True])
    ev = evaluate_detections(gt, [0, 0], Boxes([between], [0], score=[0.9]), [0])
    # on the difficult first box: neither a hit nor a miss; on the counted first box: a hit
    assert (ev.dota_tp.tolist(), ev.dota_fp.tolist()) == (([False], [False]) if difficult_first else ([True], [False]))


def test_no_detections_and_no_boxes():
    empty = Boxes(np.zeros((0, 4, 2)), np.zeros(0, dtype=np.int64), score=np.zeros(0))
    acc = accumulate(evaluate_detections(Boxes.empty(), [], empty, []))
    overall, per_class = summarize_detections(acc)
    assert np.isnan(overall["map50"]) and np.isnan(overall["dota_map50"]) and per_class == {}
    gt = Boxes([rotated_rect(50, 50, 40, 20, 30)], [1])
    overall, per_class = summarize_detections(accumulate(evaluate_detections(gt, [0], empty, [])))
    assert overall["map50"] == 0.0 and overall["dota_map50"] == 0.0 and overall["mar_100"] == 0.0


def test_detection_keys_can_be_gated():
    for text in ("map50>=0.7", "dota_map50>0.5", "mar_100>=0.2", "mar_300>=0.2", "conf_threshold<0.9", "f1>=0.5"):
        assert parse_gate(text).key == text.split(">")[0].split("<")[0]
    passed, value = parse_gate("map50>=0").check({"map50": float("nan")})  # no GT: AP undefined
    assert not passed and np.isnan(value)  # a gate never passes on nothing
    with pytest.raises(UsageError, match="unknown metric 'map42'"):  # checked against the run's own dict
        parse_gate("map42>=0.1").check({"map50": 0.5})


@pytest.mark.parametrize("huge", [False, True])
def test_ranks_are_positions_within_groups_in_score_order(huge):
    from hbb2obb.detection.evaluate import _ranks

    rng = np.random.default_rng(8)
    group = rng.integers(0, 9, 300) + (2**61 if huge else 0)  # huge ids: the key would overflow, the stable sort ranks
    order = np.argsort(-rng.integers(0, 20, 300), kind="stable")  # scores with ties
    expected = np.empty(300, dtype=np.int64)
    seen: dict = {}
    for row in order.tolist():
        expected[row] = seen.get(group[row], 0)
        seen[group[row]] = expected[row] + 1
    np.testing.assert_array_equal(_ranks(order, group), expected)
    assert _ranks(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)).shape == (0,)


def rows_of_overlapping_boxes(lengths, seed: int = 3):
    """One frame per row length: boxes 40 wide, 12 apart (neighbours overlap at IoU above 0.5), one
    class, and one or two jittered detections of each with tied scores, so every detection of a
    row contests its neighbours' boxes: the row is one chain of contested detections and boxes."""
    rng = np.random.default_rng(seed)
    gt, gt_frame, dt, dt_frame = [], [], [], []
    for frame, length in enumerate(lengths):
        for k in range(length):
            gt.append(rotated_rect(30 + 12 * k, 50, 40, 20, 0))
            gt_frame.append(frame)
            for _ in range(int(rng.integers(1, 3))):
                dt.append(rotated_rect(30 + 12 * k + rng.normal(0, 4), 50 + rng.normal(0, 1), 40, 20, rng.normal(0, 2)))
                dt_frame.append(frame)
    score = np.round(rng.uniform(0, 1, len(dt)), 1)
    gt_boxes = Boxes(np.array(gt), np.zeros(len(gt), dtype=np.int64), difficult=rng.random(len(gt)) < 0.1)
    dt_boxes = Boxes(np.array(dt), np.zeros(len(dt), dtype=np.int64), score=score)
    return gt_boxes, np.array(gt_frame), dt_boxes, np.array(dt_frame, dtype=np.int64), len(lengths)


def test_chains_of_contested_detections_agree_with_cocoeval():
    # each row is one chain of detections contesting their neighbours' boxes (2 to 90 boxes)
    gt, gt_frame, dt, dt_frame, frames = rows_of_overlapping_boxes([2, 3, 4, 6, 5, 90])
    acc = accumulate(evaluate_detections(gt, gt_frame, dt, dt_frame), every_max_dets=True)
    oracle = coco_oracle(gt, gt_frame, dt, dt_frame, frames, 100)
    np.testing.assert_allclose(as_coco(acc.precision), oracle.eval["precision"], rtol=0, atol=1e-9)
    np.testing.assert_allclose(as_coco(acc.recall), oracle.eval["recall"], rtol=0, atol=1e-9)



def one_frame(boxes: Boxes, frame: np.ndarray, step: float) -> Boxes:
    """The boxes of every frame moved ``step`` pixels further down per frame index, for one frame."""
    shift = np.stack([np.zeros(len(boxes)), step * frame], axis=1)[:, None, :]
    return Boxes(boxes.corners + shift, boxes.class_id, difficult=boxes.difficult, score=boxes.score)


@pytest.mark.parametrize("rounds, batch", [(None, None), (1, None), (None, 3)])
def test_clusters_in_one_frame_agree_with_cocoeval(monkeypatch, rounds, batch):
    # every chain in one frame, clusters matched side by side; with a single round of label
    # spreading no cluster settles, and the matching falls back to one detection a step; with
    # batches of 3 pairs every step is cut into many batches
    if rounds is not None:
        monkeypatch.setattr(evaluate_module, "_CLUSTER_ROUNDS", rounds)
    if batch is not None:
        monkeypatch.setattr(evaluate_module, "_BATCH_PAIRS", batch)
    by_rank, turns = [], evaluate_module._turns

    def spied(box, det, rank):
        result = turns(box, det, rank)
        by_rank.append(np.array_equal(result, rank))
        return result

    monkeypatch.setattr(evaluate_module, "_turns", spied)
    gt, gt_frame, dt, dt_frame, _ = rows_of_overlapping_boxes([2, 3, 4, 6, 5, 30, 1, 2], seed=5)
    gt, dt = one_frame(gt, gt_frame, 60.0), one_frame(dt, dt_frame, 60.0)
    gt_frame, dt_frame = np.zeros(len(gt), dtype=np.int64), np.zeros(len(dt), dtype=np.int64)
    acc = accumulate(evaluate_detections(gt, gt_frame, dt, dt_frame), every_max_dets=True)
    oracle = coco_oracle(gt, gt_frame, dt, dt_frame, 1, 100)
    np.testing.assert_allclose(as_coco(acc.precision), oracle.eval["precision"], rtol=0, atol=1e-9)
    np.testing.assert_allclose(as_coco(acc.recall), oracle.eval["recall"], rtol=0, atol=1e-9)
    assert by_rank == [rounds == 1]  # the clusters' turns, or the fallback's plain ranks


@pytest.mark.parametrize("seed", range(4))
def test_turns_are_ranks_within_connected_clusters(seed):
    csgraph = pytest.importorskip("scipy.sparse.csgraph")
    from scipy.sparse import coo_matrix

    rng = np.random.default_rng(seed)
    n_det, n_box, n_pair = 300, 200, 420
    det, box = rng.integers(0, n_det, n_pair), rng.integers(0, n_box, n_pair)
    det = np.concatenate([det, np.arange(n_det)])  # every detection in some pair
    box = np.concatenate([box, rng.integers(0, n_box, n_det)])
    rank = rng.permutation(n_det)
    graph = coo_matrix((np.ones(det.size), (det, n_det + box)), shape=(n_det + n_box,) * 2)
    label = csgraph.connected_components(graph, directed=False)[1][:n_det]
    expected = np.array([np.sum((label == label[d]) & (rank < rank[d])) for d in range(n_det)])
    np.testing.assert_array_equal(_turns(box, det, rank), expected)


@pytest.mark.parametrize("limit", [1, 3, 50])
def test_batches_cut_steps_at_detections(monkeypatch, limit):
    monkeypatch.setattr(evaluate_module, "_BATCH_PAIRS", limit)
    rng = np.random.default_rng(limit)
    step = np.sort(rng.integers(0, 5, 300))
    det = np.concatenate([np.sort(rng.integers(0, 40, (step == k).sum())) + 100 * k for k in range(5)])
    bounds = _batches(step, det)
    assert bounds[0] == 0 and bounds[-1] == step.size and (np.diff(bounds) > 0).all()
    runs = np.flatnonzero(np.concatenate([[True], (step[1:] != step[:-1]) | (det[1:] != det[:-1])]))
    assert set(np.flatnonzero(np.concatenate([[True], step[1:] != step[:-1]]))) <= set(bounds.tolist())
    assert set(bounds[:-1].tolist()) <= set(runs.tolist())  # never inside one detection's pairs
    for start, stop in zip(bounds[:-1], bounds[1:]):
        assert len(set(step[start:stop])) == 1
        last = runs[runs < stop].max()  # the batch's last detection may carry it past the limit
        assert last - start < limit or last == start


def test_per_class_ap_of_many_classes_agrees_with_cocoeval():
    # 40 classes, some with ground truth only, some with detections only; each class's AP50 and
    # AP50:95 against the means of COCOeval's precision for that category
    gt, gt_frame, dt, dt_frame, frames = random_scene(11, frames=9)
    rng = np.random.default_rng(11)
    relabel = rng.permutation(40)
    gt = Boxes(gt.corners, relabel[(gt.class_id * 7 + np.arange(len(gt))) % 40], difficult=gt.difficult)
    dt_class = np.where(rng.random(len(dt)) < 0.8, gt.class_id[rng.integers(0, len(gt), len(dt))], relabel[dt.class_id])
    dt = Boxes(dt.corners, dt_class, score=dt.score)
    acc = accumulate(evaluate_detections(gt, gt_frame, dt, dt_frame))
    _, per_class = summarize_detections(acc)
    oracle = coco_oracle(gt, gt_frame, dt, dt_frame, frames, 100)
    precision = oracle.eval["precision"]  # (T, R, K, A, M), categories in sorted id order
    categories = sorted(per_class)
    assert categories == sorted(int(k) for k in np.union1d(gt.class_id, dt.class_id)) and len(categories) >= 30

    def mean(values):
        return np.mean(values[values > -1]) if (values > -1).any() else np.nan

    for k, class_id in enumerate(categories):
        np.testing.assert_allclose(per_class[class_id]["ap50"], mean(precision[0, :, k, 0, -1]), rtol=0, atol=1e-9)
        np.testing.assert_allclose(per_class[class_id]["ap50_95"], mean(precision[:, :, k, 0, -1]), rtol=0, atol=1e-9)
