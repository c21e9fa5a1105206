#!/usr/bin/env python3
"""Our analysis.yaml against the reference tool's, key path by key path, on the Songdo sample.

usage: python tools/analysis_yaml_reference.py [--refvenv /work/refvenv] [--sample DIR]

Runs the reference tool 1.12.0's hbb2obb-analyze (in the reference's virtualenv, with its
heavy imports stubbed: this command needs none of them) and ours with the same flags and
``-o``, then checks that every key path of the reference's file exists in ours with the same
value: strings, booleans, None and counts exactly, floats to a relative 1e-9 (the two tools
compute IoU by different exact algorithms, so the last bits differ). Exit 0 when all agree.
Not a test: CI machines may lack the reference's virtualenv.
"""

from __future__ import annotations

import argparse
import math
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
FLAGS = ["labels_obb_gt", "labels_obb_sam_b", "-mp", "classes.yaml", "-hd", "labels_hbb", "-i", "images", "-nb"]
STUBS = "import sys, types\nfor name in ('torch', 'psutil', 'cv2', 'ultralytics'):\n" \
        "    sys.modules.setdefault(name, types.ModuleType(name))\n"
REFERENCE_ANALYZE = STUBS + (
    "import hbb2obb.cli as cli\n"
    "cli.check_for_updates_once = lambda *a, **k: None  # no network\n"
    "sys.argv = ['hbb2obb-analyze'] + sys.argv[1:]\n"
    "cli.main_hbb2obb_analyze()\n"
)


def key_paths(value, prefix=""):
    """Every leaf of a YAML document as ``(path, value)``; list items by index."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from key_paths(item, f"{prefix}.{key}" if prefix else str(key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from key_paths(item, f"{prefix}[{index}]")
    else:
        yield prefix, value


def lookup(document, path: str):
    node = document
    for part in path.replace("[", ".[").split("."):
        if part.startswith("["):
            node = node[int(part[1:-1])]
        else:
            node = node[part]
    return node


def same(ours, theirs) -> bool:
    if isinstance(theirs, float) and isinstance(ours, (int, float)) and not isinstance(ours, bool):
        return math.isclose(ours, theirs, rel_tol=1e-9, abs_tol=1e-12)
    return type(ours) is type(theirs) and ours == theirs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--refvenv", type=Path, default=Path("/work/refvenv"))
    parser.add_argument("--sample", type=Path, default=ROOT.parent / "shared" / "data" / "songdo-sample")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="analysis-yaml-"))
    try:
        theirs_dir, ours_dir = work / "reference", work / "ours"
        subprocess.run(
            [str(args.refvenv / "bin" / "python"), "-P", "-c", REFERENCE_ANALYZE, *FLAGS, "-o", str(theirs_dir)],
            cwd=args.sample,
            check=True,
            capture_output=True,
        )
        ours_cmd = shutil.which("hbb2obb-analyze", path=str(Path(sys.executable).parent)) or "hbb2obb-analyze"
        subprocess.run([ours_cmd, *FLAGS, "-o", str(ours_dir)], cwd=args.sample, check=True, capture_output=True)
        theirs = yaml.safe_load((theirs_dir / "analysis.yaml").read_text(encoding="utf-8"))
        ours = yaml.safe_load((ours_dir / "analysis.yaml").read_text(encoding="utf-8"))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    paths = list(key_paths(theirs))
    problems = []
    for path, value in paths:
        try:
            mine = lookup(ours, path)
        except (KeyError, IndexError, TypeError):
            problems.append(f"missing in ours: {path} (reference {value!r})")
            continue
        if not same(mine, value):
            problems.append(f"differs: {path}: ours {mine!r}, reference {value!r}")
    print(f"{len(paths)} key paths in the reference's analysis.yaml; {len(paths) - len(problems)} agree")
    for problem in problems:
        print("  " + problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
