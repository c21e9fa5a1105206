"""The benchmark's agreement step for the peers: which differences an exact IoU tie explains.

``hbb2obb-eval`` settles a pair whose IoU is exactly on an ``iou_fractions`` rung (9/10 at
0.90, for instance) on the rung, as docs/metrics.md defines it; a float-only peer (the
reference tool, shapely 2) may put it a hair below. Such a difference is not a disagreement
about the definition, but it must be shown and proved, never waved through:

1. the candidate pairs are ours' matched pairs whose IoU is within ``TIE_WINDOW`` of a rung
   (from ``hbb2obb-eval --pairs``: frame, GT line, prediction line);
2. each one's IoU is recomputed in exact rationals from the two lines as written in the label
   files, by the oracle's own arithmetic (``tests/oracles/shapely_reference.py``, which imports
   nothing of the package); a pair is a proven tie only when that is exactly the rung;
3. ours is then moved to the peer's side of the rung for each proven tie pair the peer's own
   per-pair list puts below it, and compared with the peer again: the difference is explained
   only when nothing at all differs after that. Anything else is a disagreement.
"""

from __future__ import annotations

import copy
import csv
import sys
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Callable, Optional

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from oracles import shapely_reference as oracle  # noqa: E402  (the test oracle, tests/oracles)

RUNGS = tuple(key for key, _ in oracle.FRACTION_THRESHOLDS)
TIE_WINDOW = oracle.TIE_WINDOW


@dataclass(frozen=True)
class TiePair:
    """A matched pair whose IoU was proved, in exact rationals, to be exactly a rung."""

    frame: str
    gt_line: int
    pred_line: int
    gt_class: str  # the class_stats key (JSON keys are text)
    rung: str
    exact: Fraction
    index: int  # position in its class's per-pair list

    def describe(self) -> str:
        return (f"{self.frame} GT line {self.gt_line} / prediction line {self.pred_line}: "
                f"IoU {self.exact} = rung {self.rung}")


@dataclass(frozen=True)
class Verdict:
    """The outcome of comparing a peer's dict with ours."""

    agree: bool
    text: str


def read_pairs(path: Path) -> list:
    """The rows of a ``--pairs`` CSV file as dicts of text."""
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def proven_ties(rows: list, gt_dir: Path, pred_dir: Path, ours: dict) -> list:
    """The matched pairs of ``rows`` whose IoU is exactly a rung, proved from the label files.

    A candidate (float IoU within ``TIE_WINDOW`` of a rung) whose exact IoU is not the rung is
    left out, so it explains nothing. A row is located in its class's per-pair list of ``ours``
    by its rank among the class's matched rows; a list that does not hold the row's IoU there
    means the table and the dict are not of the same run, and nothing is proved.
    """
    seen, ties = {}, []
    for row in rows:
        if row["pred_line"] in ("", "-1") or row["gt_line"] in ("", "-1") or row["iou"] == "":
            continue
        cls = row["gt_class"]
        index = seen.get(cls, 0)
        seen[cls] = index + 1
        iou = float(row["iou"])
        rung = next((key for key in RUNGS if abs(iou - float(key)) <= TIE_WINDOW), None)
        if rung is None:
            continue
        listed = ours.get("class_stats", {}).get(cls, {}).get("ious", [])
        if index >= len(listed) or listed[index] != iou:
            raise ValueError(f"pairs table and metric dict disagree at class {cls}, pair {index + 1}")
        gt_file, pred_file = Path(gt_dir) / f"{row['frame']}.txt", Path(pred_dir) / f"{row['frame']}.txt"
        if not (gt_file.is_file() and pred_file.is_file()):
            continue  # not a YOLO-OBB .txt pair: nothing to prove it from
        _, gt_texts = oracle.read_obb_line(gt_file, int(row["gt_line"]))
        _, pred_texts = oracle.read_obb_line(pred_file, int(row["pred_line"]))
        exact = oracle.exact_iou(gt_texts, pred_texts)
        if exact is not None and exact == Fraction(rung):
            ties.append(TiePair(row["frame"], int(row["gt_line"]), int(row["pred_line"]), cls, rung, exact, index))
    return ties


def _per_pair(entry: dict) -> Optional[list]:
    """A peer's per-pair IoU list of a class entry (ours and shapely's ``ious``, the reference's ``iou_values``)."""
    for key in ("ious", "iou_values"):
        if isinstance(entry.get(key), list):
            return entry[key]
    return None


def moved_to_peer_side(ours: dict, theirs: dict, ties: list) -> tuple[dict, list]:
    """``ours`` with each proven tie pair the peer puts below its rung counted below it too.

    Returns the changed copy and the tie pairs that were moved. A tie pair the peer lists at or
    above the rung changes nothing; where the peer has no per-pair list, nothing is moved.
    """
    moved_dict, moved = copy.deepcopy(ours), []
    for tie in ties:
        listed = _per_pair(theirs.get("class_stats", {}).get(tie.gt_class, {}))
        if listed is None or tie.index >= len(listed) or not listed[tie.index] < float(tie.rung):
            continue
        if not ours["class_stats"][tie.gt_class]["ious"][tie.index] >= float(tie.rung):
            continue  # ours has it below as well: nothing to move
        moved.append(tie)
        for scope, count_key in ((moved_dict, "total_matches"), (moved_dict["class_stats"][tie.gt_class], "matches")):
            n = scope[count_key]
            count = round(scope["iou_fractions"][tie.rung] * n)
            scope["iou_fractions"][tie.rung] = (count - 1) / n
    return moved_dict, moved


def peer_verdict(compare: Callable, ours: dict, theirs: dict, pairs: Callable[[], tuple]) -> Verdict:
    """Compare a peer's dict with ours, explaining differences by proven exact ties where they are.

    Parameters
    ----------
    compare : callable
        ``compare(ours, theirs) -> (values compared, largest difference, mismatches)``.
    ours, theirs : dict
        The metric dicts (``ours`` in the peer's key names, per-class ``ious`` kept).
    pairs : callable
        Called only when something differs: ``(rows of ours' --pairs table, gt_dir, pred_dir)``.
    """
    compared, worst, bad = compare(ours, theirs)
    if not bad:
        return Verdict(True, f"yes ({compared:,} values, max diff {worst:.0e})")
    failed = Verdict(False, f"NO ({bad[0]}{' ...' if len(bad) > 1 else ''})")
    if not all(".iou_fractions." in f".{line}" for line in bad):
        return failed  # only a rung's share can move by a tie on the rung
    rows, gt_dir, pred_dir = pairs()
    try:
        ties = proven_ties(rows, gt_dir, pred_dir, ours)
    except ValueError as problem:
        return Verdict(False, f"{failed.text[:-1]}; no tie proved: {problem})")
    moved_dict, moved = moved_to_peer_side(ours, theirs, ties)
    _, _, still = compare(moved_dict, theirs)
    if not moved or still:
        return failed
    listed = "; ".join(f"{tie.describe()} (the peer: {_per_pair(theirs['class_stats'][tie.gt_class])[tie.index]!r})"
                       for tie in moved)
    return Verdict(True, f"yes except: differs at {len(bad)} value(s) explained by {len(moved)} pair(s) whose IoU "
                         f"is exactly a rung: {listed}, proved with exact rationals ({compared:,} values)")
