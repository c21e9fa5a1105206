"""The error decomposition against tidecv (axis-aligned boxes) and on planted rotated errors.

tidecv is the oracle, fed the same boxes as [x, y, w, h]. Where its own choices differ from the
COCO rule ours follow, the tests align the data or the setting, each said where it is done:

* recall levels: tidecv reads precision at ``x / 100``, COCOeval (and we) at
  ``np.linspace(0, 1, 101)``; they differ in the last bit at several levels, which changes an AP
  when a recall lands exactly there. The agreement test patches our levels to tidecv's;
  :func:`test_recall_levels_of_tidecv_differ_from_cocoeval` shows the difference is real.
* its detection cap is per frame (100), ours per frame and class: every frame here has fewer.
* a class without ground truth scores 0 in its mean, ours leaves it out: every class here keeps
  ground truth and a hit under every oracle.
* IoU ties pick the first box in tidecv, the last in COCOeval: random real coordinates have none.
"""

from __future__ import annotations

import numpy as np
import pytest

from hbb2obb.boxes import Boxes
from hbb2obb.detection import accumulate as accumulate_module
from hbb2obb.detection.accumulate import accumulate, class_ap, summarize_detections
from hbb2obb.detection.errors import ERROR_TYPES, TideParams, decompose_errors, turned_iou
from hbb2obb.detection.evaluate import DetectionParams, evaluate_detections
from hbb2obb.errors import UsageError

TIDE_LEVELS = np.array([x / 100 for x in range(101)])  # tidecv's ap.py, as it spells them


def _xywh_corners(xywh: np.ndarray) -> np.ndarray:
    x, y, w, h = xywh.T
    return np.stack([np.stack([x, y], 1), np.stack([x + w, y], 1), np.stack([x + w, y + h], 1),
                     np.stack([x, y + h], 1)], axis=1)


def _axis_aligned_set(seed: int, frames: int = 14, classes: int = 3):
    """GT boxes and detections with every kind of error: hits, shifts, relabels, duplicates, noise, drops."""
    rng = np.random.default_rng(seed)
    gt, det = [], []  # (frame, class, x, y, w, h) and (frame, class, score, x, y, w, h)
    for f in range(frames):
        n = int(rng.integers(0, 7)) if f else 5  # frame 0 always holds boxes; some frames none
        for _ in range(n):
            c = int(rng.integers(0, classes))
            box = np.array([rng.uniform(0, 900), rng.uniform(0, 900), rng.uniform(20, 90), rng.uniform(20, 90)])
            gt.append((f, c, *box))
            kind = rng.choice(["hit", "hit", "hit", "shift", "relabel", "dupe", "drop", "both"])
            jitter = box + rng.normal(0, 1.5, 4) * [1, 1, 0.5, 0.5]
            if kind in ("hit", "dupe"):
                det.append((f, c, rng.uniform(0.3, 1), *jitter))
            if kind == "dupe":
                det.append((f, c, rng.uniform(0, 1), *(box + rng.normal(0, 2, 4) * [1, 1, 0.5, 0.5])))
            if kind == "shift":
                det.append((f, c, rng.uniform(0, 1), *(box + [box[2] * rng.uniform(0.4, 0.8), 0, 0, 0])))
            if kind == "relabel":
                det.append((f, (c + 1) % classes, rng.uniform(0, 1), *jitter))
            if kind == "both":
                det.append((f, (c + 1) % classes, rng.uniform(0, 1), *(box + [box[2] * 0.6, box[3] * 0.3, 0, 0])))
        for _ in range(int(rng.integers(0, 3))):  # background: far from everything, sometimes
            det.append((f, int(rng.integers(0, classes)), rng.uniform(0, 1), *rng.uniform(0, 900, 2), 30, 30))
    for c in range(classes):  # every class keeps a sure hit, so no oracle leaves a class without boxes
        box = np.array([950.0 + 60 * c, 950.0, 40.0, 40.0])
        gt.append((0, c, *box))
        det.append((0, c, 0.999 - 0.001 * c, *box))
    gt = np.array(sorted(gt, key=lambda r: r[0]))
    det = np.array(sorted(det, key=lambda r: r[0]))
    return gt, det


def _ours(gt, det, tide=None):
    g = Boxes(_xywh_corners(gt[:, 2:6]), gt[:, 1].astype(int))
    p = Boxes(_xywh_corners(det[:, 3:7]), det[:, 1].astype(int), score=det[:, 2])
    tide = tide or TideParams(orientation=False)  # TIDE's own six types unless asked
    return decompose_errors(g, gt[:, 0].astype(int), p, det[:, 0].astype(int), tide=tide)


def _tidecv(gt, det):
    tidecv = pytest.importorskip("tidecv")
    truth, preds = tidecv.Data("gt"), tidecv.Data("pred")
    # every frame is a label file, empty or not: registered, as COCO's image list registers it
    # (tidecv only visits the images its ground truth knows, and drops detections elsewhere)
    for f in range(int(max(gt[:, 0].max(), det[:, 0].max())) + 1):
        truth.add_image(f, f"frame {f}")
    for f, c, *box in gt.tolist():
        truth.add_ground_truth(int(f), int(c), box)
    for f, c, score, *box in det.tolist():
        preds.add_detection(int(f), int(c), score, box)
    tide = tidecv.TIDE()
    run = tide.evaluate(truth, preds, mode=tidecv.TIDE.BOX)
    names = {"Cls": "cls", "Loc": "loc", "Both": "both", "Dupe": "dupe", "Bkg": "bkg", "Miss": "miss"}
    counts = {names[e.short_name]: n for e, n in run.count_errors().items()}
    main = {names[e.short_name]: v for e, v in run.fix_main_errors().items()}
    special = {{"FalsePos": "fp", "FalseNeg": "fn"}[e.short_name]: v for e, v in run.fix_special_errors().items()}
    return run.ap, counts, {**main, **special}


@pytest.mark.parametrize("seed", range(6))
def test_agrees_with_tidecv_type_by_type(seed, monkeypatch):
    monkeypatch.setattr(accumulate_module, "RECALL_THRESHOLDS", TIDE_LEVELS)  # tidecv's levels (module doc)
    gt, det = _axis_aligned_set(seed)
    ours = _ours(gt, det)
    ap, counts, dap = _tidecv(gt, det)
    assert sum(counts.values()) > 10  # the set does plant errors
    assert ours.ap * 100 == pytest.approx(ap, abs=1e-6)
    for name in ("cls", "loc", "both", "dupe", "bkg", "miss"):
        assert ours.counts[name] == counts[name], name
        assert ours.dap[name] * 100 == pytest.approx(dap[name], abs=1e-6), name
    for name in ("fp", "fn"):
        assert ours.dap[name] * 100 == pytest.approx(dap[name], abs=1e-6), name


def test_orientation_is_taken_out_of_localization():
    """With the orientation type on, TIDE's loc errors split into loc and orient, nothing else moves."""
    gt, det = _axis_aligned_set(3)
    plain, split = _ours(gt, det), _ours(gt, det, TideParams())
    assert split.counts["loc"] + split.counts["orient"] == plain.counts["loc"]
    for name in ("cls", "both", "dupe", "bkg", "miss"):
        assert split.counts[name] == plain.counts[name]
    # a wide box on a tall one at the same centre: IoU 1/3, a loc error in TIDE, orient here
    gt = np.array([[0, 0, 100.0, 100.0, 20.0, 60.0]])
    det = np.array([[0, 0, 0.9, 90.0, 120.0, 40.0, 20.0], [0, 0, 0.8, 100.0, 100.0, 20.0, 60.0]])
    assert _ours(gt, det).counts["loc"] == 1
    assert _ours(gt, det, TideParams()).counts == {**dict.fromkeys(ERROR_TYPES, 0), "orient": 1}


def test_recall_levels_of_tidecv_differ_from_cocoeval(monkeypatch):
    differ = np.flatnonzero(TIDE_LEVELS != accumulate_module.RECALL_THRESHOLDS)
    assert differ.size  # e.g. 0.07: 7 / 100 and linspace's 7th level are one ulp apart
    level = int(differ[0])
    hits = np.array([True] * level + [False, True] + [False] * 5)  # recall lands exactly on level / 100
    coco = class_ap(hits, 100)
    monkeypatch.setattr(accumulate_module, "RECALL_THRESHOLDS", TIDE_LEVELS)
    assert class_ap(hits, 100) != coco


def test_ap_is_map50_on_rotated_boxes():
    rng = np.random.default_rng(5)
    n = 60
    centre, size = rng.uniform(0, 500, (n, 2)), rng.uniform(10, 60, (n, 2))
    angle = rng.uniform(0, np.pi, n)
    gt = _rotated(centre, size, angle)
    pred = _rotated(centre + rng.normal(0, 4, (n, 2)), size, angle + rng.normal(0, 0.3, n))
    frames = rng.integers(0, 6, n)
    g, p = Boxes(gt, rng.integers(0, 3, n)), Boxes(pred, rng.integers(0, 3, n), score=rng.random(n))
    order = np.argsort(frames, kind="stable")
    g, p, frames = g[order], p[order], frames[order]
    dec = decompose_errors(g, frames, p, frames)
    overall, per_class = summarize_detections(accumulate(evaluate_detections(g, frames, p, frames)))
    assert dec.ap == pytest.approx(overall["map50"], abs=1e-12)
    for k, c in enumerate(dec.classes.tolist()):
        assert dec.class_ap[k] == pytest.approx(per_class[c]["ap50"], abs=1e-12, nan_ok=True)


def _rotated(centre, size, angle) -> np.ndarray:
    local = np.array([[-0.5, -0.5], [0.5, -0.5], [0.5, 0.5], [-0.5, 0.5]])[None] * size[:, None, :]
    cos, sin = np.cos(angle)[:, None], np.sin(angle)[:, None]
    return np.stack([local[..., 0] * cos - local[..., 1] * sin, local[..., 0] * sin + local[..., 1] * cos],
                    axis=-1) + centre[:, None, :]


def _box(centre, size, angle) -> np.ndarray:
    return _rotated(np.array([centre], float), np.array([size], float), np.array([angle]))[0]


def test_every_planted_rotated_error_is_found_as_its_type():
    """Rotated boxes far apart; each planted change makes one known error type."""
    rng = np.random.default_rng(11)
    kinds = ["hit", "turned", "shifted", "relabelled", "duplicated", "dropped", "both"] * 6
    gt_rows, det_rows, planted = [], [], []  # planted: (detection row or GT row, expected type)
    for i, kind in enumerate(kinds):
        frame = i // 7
        centre = np.array([200.0 * (i % 7) + 100, 100.0])
        size = np.array([rng.uniform(50, 70), rng.uniform(12, 18)])  # long and thin: turning matters
        angle = rng.uniform(0, np.pi)
        c = i % 3
        gt_rows.append((frame, c, _rotated(centre[None], size[None], np.array([angle]))[0]))
        hit = _rotated(centre[None] + rng.normal(0, 0.5, 2), size[None], np.array([angle + 0.01]))[0]
        if kind in ("hit", "duplicated"):
            det_rows.append((frame, c, rng.uniform(0.6, 0.95), hit))
        if kind == "duplicated":  # just below its hit, above others: it costs precision
            det_rows.append((frame, c, det_rows[-1][2] - 0.001, hit + rng.normal(0, 0.3, (4, 2))))
            planted.append(("det", len(det_rows) - 1, "dupe"))
        if kind == "turned":
            det_rows.append((frame, c, rng.uniform(0.6, 1.0), _box(centre, size, angle + 1.2)))
            planted.append(("det", len(det_rows) - 1, "orient"))
        if kind == "shifted":
            shift = size[0] * 0.5 * np.array([np.cos(angle), np.sin(angle)])
            det_rows.append((frame, c, rng.uniform(0.6, 1.0), _box(centre + shift, size, angle)))
            planted.append(("det", len(det_rows) - 1, "loc"))
        if kind == "relabelled":
            det_rows.append((frame, (c + 1) % 3, rng.uniform(0.6, 1.0), hit))
            planted.append(("det", len(det_rows) - 1, "cls"))
        if kind == "both":
            shift = size[0] * 0.5 * np.array([np.cos(angle), np.sin(angle)])
            det_rows.append((frame, (c + 1) % 3, rng.uniform(0.6, 1.0),
                             _rotated((centre + shift)[None], size[None], np.array([angle]))[0]))
            planted.append(("det", len(det_rows) - 1, "both"))
            planted.append(("gt", len(gt_rows) - 1, "miss"))  # no oracle of "both" recovers its box
        if kind == "dropped":
            planted.append(("gt", len(gt_rows) - 1, "miss"))
    for frame in range(6):  # invented: in empty space of each frame
        det_rows.append((frame, frame % 3, rng.uniform(0.95, 1.0), _box([700.0, 600.0], [30.0, 10.0], 0.3)))
        planted.append(("det", len(det_rows) - 1, "bkg"))
    det_rows.append((9, 0, 0.5, _rotated(np.array([[50.0, 50.0]]), np.array([[30.0, 10.0]]), np.array([0.3]))[0]))
    planted.append(("det", len(det_rows) - 1, "bkg"))  # a frame with no ground truth at all
    g = Boxes(np.array([r[2] for r in gt_rows]), np.array([r[1] for r in gt_rows]))
    p = Boxes(np.array([r[3] for r in det_rows]), np.array([r[1] for r in det_rows]),
              score=np.array([r[2] for r in det_rows]))
    dec = decompose_errors(g, np.array([r[0] for r in gt_rows]), p, np.array([r[0] for r in det_rows]))
    for side, row, expected in planted:
        if side == "gt":
            assert dec.gt_missed[row], (row, expected)
        else:
            assert ERROR_TYPES[dec.error[row]] == expected, (row, expected)
    expected_counts = {name: sum(1 for *_, e in planted if e == name) for name in ERROR_TYPES}
    assert dec.counts == expected_counts
    assert dec.gt_missed.sum() == kinds.count("dropped") + kinds.count("both")
    assert {name for name in ERROR_TYPES if not dec.dap[name] > 0} == set(), dec.dap  # each type costs AP


def test_turned_iou_keeps_a_box_at_its_heading():
    box = _rotated(np.array([[10.0, 10.0]]), np.array([[40.0, 10.0]]), np.array([0.7]))
    assert turned_iou(box, box)[0] == pytest.approx(1.0)


def test_thresholds_are_checked():
    with pytest.raises(UsageError):
        TideParams(fg=0.5, bg=0.6)
    with pytest.raises(UsageError):
        TideParams(fg=1.0)
    with pytest.raises(UsageError):
        DetectionParams(max_dets=5)
