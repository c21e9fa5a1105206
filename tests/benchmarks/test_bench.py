"""benchmarks/bench.py in a tiny mode: it runs end to end, both sides agree, a ratio is reported.

Speed itself is measured by the benchmark (make bench), never asserted here.
"""

import re
import subprocess
import sys

from conftest import ROOT

BENCH = ROOT / "benchmarks" / "bench.py"


def test_tiny_benchmark_reports_agreement_ratio_and_profile(tmp_path):
    run = subprocess.run(
        [sys.executable, str(BENCH), "--frames", "12", "--boxes", "5", "12", "--dense-frames", "2",
         "--dense-boxes", "150", "--repeat", "1", "--jobs", "1", "2", "--dense-baseline", "--keep", str(tmp_path),
         "--sets", "none", "--converter-frames", "3", "--detection-sets", "none",
         "--reader-detections", "400", "--reader-frames", "4"],
        capture_output=True, text=True, timeout=240,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    out = run.stdout
    assert re.search(r"Songdo-scale set: 12 frames, [\d,]+ ground-truth boxes", out)
    # the header says which install of ours it timed (make install's is editable)
    assert re.search(r"timing (the editable install of this checkout|a regular \(non-editable\) install)", out)
    assert re.search(r"metric dicts agree: yes \([\d,]+ values compared", out)
    assert float(re.search(r"ratio b/a: ([\d.]+)x", out).group(1)) > 0
    assert re.search(r"-j 2\s+[\d.]+ s\s+x[\d.]+\s+\d+ MB\s+yes", out)  # same output and warnings
    assert re.search(r"shapely reference, 1 frame .* agree: yes", out)
    # the converter on 1 and 2 cores (issue 38): both rows, the same files
    assert re.search(r"^  -j 1\s+[\d.]+ s\s+[\d.]+ s\s+[\d,]+\s+[\d.]+ s\s+x1\.00$", out, flags=re.M)
    assert re.search(r"^  -j 2\s+[\d.]+ s\s+[\d.]+ s\s+[\d,]+\s+[\d.]+ s\s+x[\d.]+$", out, flags=re.M)
    assert "same files in every run: yes" in out
    # every reader on the same boxes, against both YOLO-OBB layouts (issue 41)
    readers = dict(re.findall(r"^  (?:ground truth|detections  ) (YOLO-OBB normalized|YOLO-OBB|DOTA Task1|DOTA|COCO|"
                              r"LabelMe|VOC)\s+[\d,]+\s+([\d.]+)", out, flags=re.M))
    assert set(readers) == {"YOLO-OBB", "YOLO-OBB normalized", "DOTA", "DOTA Task1", "COCO", "LabelMe", "VOC"}
    assert re.search(r"DOTA ground truth \+ Task1 detections against the same as YOLO-OBB normalized: [\d.]+x", out)
    stages = re.findall(r"^\s+(parsing labels|IoU \(polygon clipping\)|statistics \(metric dict\)|"
                        r"candidate pairs \(AABB\)|JSON text)\s+([\d.]+) s", out, flags=re.M)
    assert len(stages) == 5
    # the generated data is deterministic: same seed, same files
    first = (tmp_path / "songdo" / "gt" / "songdo_00000.txt").read_text()
    assert len(list((tmp_path / "songdo" / "gt").glob("*.txt"))) == 12
    assert len(first.splitlines()) >= 5 and all(len(line.split()) == 9 for line in first.splitlines())


def test_baseline_on_a_subset_is_extrapolated_and_said_so(tmp_path):
    # Into a kept folder that already holds a larger run: it starts clean.
    (tmp_path / "songdo" / "gt").mkdir(parents=True)
    (tmp_path / "songdo" / "gt" / "songdo_00099.txt").write_text("0 1 1 2 1 2 2 1 2\n")
    run = subprocess.run(
        [sys.executable, str(BENCH), "--frames", "10", "--boxes", "4", "8", "--dense-frames", "1",
         "--dense-boxes", "50", "--repeat", "1", "--jobs", "1", "--baseline-frames", "5", "--no-profile",
         "--keep", str(tmp_path), "--sets", "none", "--converter-frames", "0", "--detection-sets", "none",
         "--reader-detections", "0"],
        capture_output=True, text=True, timeout=240,
    )
    assert not (tmp_path / "songdo" / "gt" / "songdo_00099.txt").exists()
    assert run.returncode == 0, run.stdout + run.stderr
    assert "on 5 frames, x2.00 (linear per frame)" in run.stdout
    assert "b extrapolated linearly per frame from the subset" in run.stdout
    assert "metric dicts agree: yes" in run.stdout and "on the subset" in run.stdout


def test_peers_table_has_start_up_floor_and_vectorized_shapely_agreeing(tmp_path):
    # The peers section without the reference tool (installing it is the full benchmark's job):
    # the 10-box start-up row and shapely 2's vectorized script on the first frames, agreeing.
    run = subprocess.run(
        [sys.executable, str(BENCH), "--frames", "6", "--boxes", "4", "8", "--dense-frames", "1",
         "--dense-boxes", "40", "--repeat", "1", "--start-up-rounds", "1", "--jobs", "1", "--no-profile",
         "--keep", str(tmp_path), "--sets", "tiny", "10k", "dense", "--no-reference",
         "--converter-frames", "0", "--detection-sets", "none",
         "--reader-detections", "0"],
        capture_output=True, text=True, timeout=240,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    out = run.stdout
    assert "(wall time, CPU time = user + system, peak RSS)" in out
    assert re.search(r"10 boxes \(start-up\)\n\s+hbb2obb \(ours\)\s+[\d.]+ s\s+[\d.]+ s\s+\d+ MB", out)
    assert re.search(r"python -c 'import numpy'\s+[\d.]+ s\s+[\d.]+ s\s+\d+ MB\s+ours take [\d.]+x this", out)
    assert re.search(r"the same, 1 BLAS thread\s+[\d.]+ s\s+[\d.]+ s\s+\d+ MB\s+ours take [\d.]+x this", out)
    rows = re.findall(
        r"shapely 2 vectorized\s+[\d.]+ s\s+[\d.]+ s\s+\d+ MB\s+ratio [\d.]+x; agree: yes \(([\d,]+) values", out
    )
    assert len(rows) == 2 and all(int(n.replace(",", "")) > 0 for n in rows)  # the 6 frames and the dense frame
    assert "reference 1.12.0" not in out


def test_profile_hooks_find_the_functions_they_time():
    # A stage whose function moved reads 0.000 s in every profile: each stage the rows report
    # must have at least one hook that finds its function where the core looks it up.
    sys.path.insert(0, str(BENCH.parent))
    try:
        import bench
    finally:
        sys.path.remove(str(BENCH.parent))
    import hbb2obb.api.evaluation as api
    import hbb2obb.cli.eval as cli
    import hbb2obb.detection.evaluate as detection
    import hbb2obb.frames.loading as frames
    import hbb2obb.geometry.iou as iou_module
    import hbb2obb.scoring.evaluate as core

    modules = {"api": api, "cli": cli, "core": core, "frames": frames, "detection": detection, "iou_module": iou_module}
    found = {label for module, attribute, label in bench.STAGES if getattr(modules[module], attribute, None)}
    for label in ("pairing files", "evaluate", "chunk", "load", "parsing", "pairs and IoU",
                  "candidate pairs within pairs and IoU", "matching", "orientation", "statistics", "JSON"):
        assert label in found, label
