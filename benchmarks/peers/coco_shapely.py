#!/usr/bin/env python3
"""pycocotools' ``COCOeval`` fed shapely polygon IoU, as a user adds rotated boxes to it.

The files are read with plain Python; difficult boxes become crowd regions (``iscrowd: 1``),
whose overlap COCOeval takes as intersection over the detection's area. ``computeIoU`` is
overridden with shapely 2: per frame and class, the detections sorted by score and cut at
``maxDets``, the intersection areas of every detection with every ground-truth polygon. A
self-intersecting (bow-tie) quadrilateral is taken as its convex hull. Prints COCOeval's
mAP50:95, mAP50 and mAP75, and AP50 and AP50:95 per class, as JSON.

Usage::

    python coco_shapely.py GT_DIR PRED_DIR
"""

import contextlib
import json
import os
import sys

import numpy as np
import shapely
from dota_files import class_names, read_ground_truth, read_task1  # beside this script
from pycocotools.coco import COCO
from pycocotools.cocoeval import COCOeval


def polygons(corners: list) -> np.ndarray:
    shapes = shapely.polygons(np.asarray(corners, dtype=np.float64).reshape(-1, 4, 2))
    valid = shapely.is_valid(shapes)
    return np.where(valid, shapes, shapely.convex_hull(shapes))


class RotatedCOCOeval(COCOeval):
    """COCOeval with polygon IoU: each annotation carries its polygon as ``"shape"``."""

    def computeIoU(self, imgId, catId):  # noqa: N802, N803 - COCOeval's names
        gt, dt = self._gts[imgId, catId], self._dts[imgId, catId]
        if not gt or not dt:
            return []
        order = np.argsort([-d["score"] for d in dt], kind="mergesort")
        dt = [dt[i] for i in order[: self.params.maxDets[-1]]]
        g = np.array([a["shape"] for a in gt])
        d = np.array([a["shape"] for a in dt])
        inter = shapely.area(shapely.intersection(d[:, None], g[None, :]))
        d_area, g_area = shapely.area(d)[:, None], shapely.area(g)[None, :]
        crowd = np.array([bool(a["iscrowd"]) for a in gt])[None, :]
        union = np.where(crowd, d_area, d_area + g_area - inter)
        return np.divide(inter, union, out=np.zeros_like(inter), where=union > 0)


def main() -> None:
    gt = read_ground_truth(sys.argv[1])
    dt = read_task1(sys.argv[2])
    names = class_names(gt, dt)
    index = {name: i + 1 for i, name in enumerate(names)}
    frames = {frame: i + 1 for i, frame in enumerate(sorted(gt))}
    images = [{"id": i} for i in frames.values()]
    categories = [{"id": i} for i in index.values()]
    gts, dts = [], []
    for frame, boxes in gt.items():
        shapes = polygons([b[1] for b in boxes]) if boxes else []
        for (name, corners, difficult), shape in zip(boxes, shapes):
            xs, ys = corners[0::2], corners[1::2]
            gts.append({"id": len(gts) + 1, "image_id": frames[frame], "category_id": index[name],
                        "bbox": [min(xs), min(ys), max(xs) - min(xs), max(ys) - min(ys)],
                        "area": shapely.area(shape), "iscrowd": int(difficult), "shape": shape})
    for frame, boxes in dt.items():
        if frame not in frames:
            continue
        shapes = polygons([b[2] for b in boxes])
        for (name, score, corners), shape in zip(boxes, shapes):
            xs, ys = corners[0::2], corners[1::2]
            dts.append({"id": len(dts) + 1, "image_id": frames[frame], "category_id": index[name], "score": score,
                        "bbox": [min(xs), min(ys), max(xs) - min(xs), max(ys) - min(ys)],
                        "area": shapely.area(shape), "shape": shape})
    with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink):
        coco_gt, coco_dt = COCO(), COCO()
        coco_gt.dataset = {"images": images, "categories": categories, "annotations": gts}
        coco_dt.dataset = {"images": images, "categories": categories, "annotations": dts}
        coco_gt.createIndex()
        coco_dt.createIndex()
        evaluator = RotatedCOCOeval(coco_gt, coco_dt, "bbox")
        evaluator.evaluate()
        evaluator.accumulate()
        evaluator.summarize()
    stats, precision = evaluator.stats, evaluator.eval["precision"][:, :, :, 0, -1]  # all areas, maxDets 100
    per_class = {}
    for k, name in enumerate(names):
        curve = precision[:, :, k]
        if (curve[0] > -1).any():  # a class without ground truth has no AP
            per_class[name] = {"ap50": float(np.mean(curve[0][curve[0] > -1])),
                               "ap50_95": float(np.mean(curve[curve > -1]))}
    print(json.dumps({"map50_95": float(stats[0]), "map50": float(stats[1]), "map75": float(stats[2]),
                      "classes": per_class}))


if __name__ == "__main__":
    main()
