"""Shared fixtures: label folders written on the fly, and the real sample when it is present."""

from __future__ import annotations

import math
import os
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]

_RUN_TEMP: Path | None = None


def pytest_configure(config):
    """One private temp folder for the whole run, removed at its end: pytest's own ``tmp_path``
    folders and whatever the code under test, its subprocesses and Dask put in the system temp
    folder (they inherit ``TMPDIR``) go there, so a run leaves nothing behind in /tmp.
    """
    global _RUN_TEMP
    if config.option.basetemp is None:
        _RUN_TEMP = Path(tempfile.mkdtemp(prefix="hbb2obb-tests-"))
        config.option.basetemp = str(_RUN_TEMP / "pytest")
        os.environ["TMPDIR"] = str(_RUN_TEMP)
        tempfile.tempdir = None  # let the tempfile module read TMPDIR again


def pytest_unconfigure(config):
    if _RUN_TEMP is not None:
        shutil.rmtree(_RUN_TEMP, ignore_errors=True)
SHARED = ROOT.parent / "shared"
SAMPLE = SHARED / "data" / "songdo-sample"
DOTA_SAMPLE = SHARED / "data" / "dota-sample"
REFERENCE = SHARED / "reference"


@pytest.fixture
def sample_dir() -> Path:
    """The two-frame Songdo sample; tests using it skip where ../shared is absent."""
    if not (SAMPLE / "labels_obb_gt").is_dir():
        pytest.skip("real sample ../shared/data/songdo-sample not present")
    return SAMPLE


@pytest.fixture
def dota_sample_dir() -> Path:
    """The three-frame DOTA sample (tight HBBs); tests using it skip where ../shared is absent."""
    if not (DOTA_SAMPLE / "labels_obb_gt").is_dir():
        pytest.skip("real sample ../shared/data/dota-sample not present")
    return DOTA_SAMPLE


@pytest.fixture
def reference_dir() -> Path:
    if not REFERENCE.is_dir():
        pytest.skip("reference outputs ../shared/reference not present")
    return REFERENCE


@pytest.fixture
def write_labels(tmp_path):
    """``write_labels({"gt/a.txt": "0 0 0 ...", ...})`` writes files under tmp_path, returns tmp_path."""

    def write(files: dict, binary: bool = False) -> Path:
        for relative, content in files.items():
            path = tmp_path / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                path.write_bytes(content)
            else:
                path.write_text(content, encoding="utf-8")
        return tmp_path

    return write


def rect(x, y, w, h, cls=0):
    """A YOLO-OBB line for an axis-aligned rectangle with top-left (x, y)."""
    return f"{cls} {x} {y} {x + w} {y} {x + w} {y + h} {x} {y + h}"


def rotated_rect(cx, cy, w, h, angle_deg):
    """Corners of a w x h rectangle centred at (cx, cy), turned by angle_deg; p1->p2 runs along w."""
    a = math.radians(angle_deg)
    u = np.array([math.cos(a), math.sin(a)]) * w / 2
    v = np.array([-math.sin(a), math.cos(a)]) * h / 2
    c = np.array([cx, cy])
    return np.array([c - u - v, c + u - v, c + u + v, c - u + v])


def obb_line(cls, corners):
    """A YOLO-OBB line holding the corners at full float precision."""
    return f"{cls} " + " ".join(repr(float(v)) for v in np.asarray(corners).reshape(-1))


def shapely_iou(a, b):
    """IoU of two quadrilaterals by shapely: the oracle the tests compare against."""
    from shapely.geometry import Polygon

    pa, pb = Polygon(a), Polygon(b)
    inter = pa.intersection(pb).area
    return inter / (pa.area + pb.area - inter)


def shifted_pair(root, n_frames=3, per_frame=12, shift=(4.0, -2.0), every=3, seed=5):
    """Ground truth, a converted set A, and B = A with a known shift on every ``every``-th box.

    Returns the folders and, per ground-truth box in frame then file order, the IoU of A and of B
    computed independently with shapely.
    """
    rng = np.random.default_rng(seed)
    for sub in ("gt", "a", "b"):
        (root / sub).mkdir()
    iou_a, iou_b, shifted = [], [], []
    for f in range(n_frames):
        gt_lines, a_lines, b_lines = [], [], []
        for k in range(per_frame):
            gt = rotated_rect(100 + 150 * k, 200 + 300 * f, rng.uniform(60, 100), rng.uniform(25, 45),
                              rng.uniform(0, 180))
            a = rotated_rect(*(gt.mean(axis=0) + rng.normal(0, 1.5, 2)), np.linalg.norm(gt[1] - gt[0]) * 0.97,
                             np.linalg.norm(gt[2] - gt[1]) * 1.02,
                             math.degrees(math.atan2(*(gt[1] - gt[0])[::-1])) + rng.normal(0, 2))
            move = k % every == 0
            b = a + np.array(shift) if move else a.copy()
            gt_lines.append(obb_line(0, gt))
            a_lines.append(obb_line(0, a))
            b_lines.append(obb_line(0, b))
            iou_a.append(shapely_iou(gt, a))
            iou_b.append(shapely_iou(gt, b))
            shifted.append(move)
        for sub, lines in (("gt", gt_lines), ("a", a_lines), ("b", b_lines)):
            (root / sub / f"f{f}.txt").write_text("\n".join(lines) + "\n")
    return root / "gt", root / "a", root / "b", np.array(iou_a), np.array(iou_b), np.array(shifted)


def exact_convex_iou(a, b) -> float:
    """IoU of two convex quadrilaterals in exact rational arithmetic, rounded once at the end.

    The tie-breaker for the shapely oracle: GEOS, for one polygon inside another with collinear
    edges, can return a MULTIPOINT for the intersection (area 0) where the true overlap is the
    inner polygon. Each corner converts to a Fraction exactly, the inner polygon is clipped by
    each edge of the other (Sutherland-Hodgman), and the areas are shoelace sums; 0 when the
    union has no area.
    """
    from fractions import Fraction

    def ccw(points):
        points = [(Fraction(float(x)), Fraction(float(y))) for x, y in np.asarray(points, dtype=np.float64)]
        return points if _area2(points) >= 0 else points[::-1]

    def _side(p, q1, q2):
        return (q2[0] - q1[0]) * (p[1] - q1[1]) - (q2[1] - q1[1]) * (p[0] - q1[0])

    subject, clip = ccw(a), ccw(b)
    for q1, q2 in zip(clip, clip[1:] + clip[:1]):
        kept = []
        for p1, p2 in zip(subject, subject[1:] + subject[:1]):
            s1, s2 = _side(p1, q1, q2), _side(p2, q1, q2)
            if s1 >= 0:
                kept.append(p1)
            if (s1 > 0 > s2) or (s1 < 0 < s2):  # the edge crosses the clip line: add the crossing
                t = s1 / (s1 - s2)
                kept.append((p1[0] + t * (p2[0] - p1[0]), p1[1] + t * (p2[1] - p1[1])))
        subject = kept
        if not subject:
            break
    inter = abs(_area2(subject)) / 2 if len(subject) >= 3 else Fraction(0)
    union = abs(_area2(ccw(a))) / 2 + abs(_area2(ccw(b))) / 2 - inter
    return float(inter / union) if union > 0 else 0.0


def _area2(points):
    """Twice the signed area of a polygon (shoelace), exact for Fraction corners."""
    return sum(x1 * y2 - x2 * y1 for (x1, y1), (x2, y2) in zip(points, points[1:] + points[:1]))
