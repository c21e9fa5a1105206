"""How well the ``image`` converter's per-box confidence ranks its boxes by their IoU.

    python tools/confidence_scores.py SET [SET ...] [--param NAME=VALUE ...] [--keep DIR]
    python tools/confidence_scores.py --samples dota-sample songdo-sample [--tuned-only | --held-out]
                                      [--prompts tight|corner|margin [--margin LOW HIGH]]

A SET is a folder with ``images/``, ``labels_hbb/`` and ``labels_obb_gt/`` (what ``python -m
hbb2obb.synthetic OUT`` writes). ``--samples`` takes the real samples under ``--data`` and
splits each into the frames used while tuning and the frame held out of all tuning
(``converter_scores.HELD_OUT``): ``--tuned-only`` converts only the former, ``--held-out`` only
the latter; ``--prompts KIND`` replaces their ``labels_hbb`` with prompts of one kind made from
their ground truth, as ``tools/converter_scores.py --prompts`` makes them.

Every frame is converted as ``hbb2obb IMAGES --hbb_dir labels_hbb --obb_dir OUT -nb
--confidence_dir C`` converts it (:func:`hbb2obb.converters.image.converter.convert_frame`, which writes
the OBB and the confidence files); the OBB files are matched to the ground truth by the scoring
core (:func:`hbb2obb.scoring.evaluate.evaluate_frames`, what ``hbb2obb-eval`` runs), and each
box gets the IoU of its match (0 when no ground-truth box matched it). Per set it prints:

- the boxes, the fallbacks (confidence 0 by rule) and their mean IoU, apart from the rest;
- over the converted boxes (not fallbacks): the Spearman rank correlation between confidence
  and IoU (``scipy.stats.spearmanr``), and, for the 10% and 20% lowest-confidence boxes, the
  share of them that are among the 10% / 20% lowest-IoU boxes (a random ranking gives 0.10 /
  0.20; ties in confidence are split evenly, so a constant score gives exactly that) and the
  mean IoU of those flagged against the rest.
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.stats import spearmanr

sys.path.insert(0, str(Path(__file__).resolve().parent))
from converter_scores import HELD_OUT, link_subset, parse_param, write_prompts  # noqa: E402

from hbb2obb.converters.image.converter import DEFAULT_PARAMETERS, convert_frame  # noqa: E402
from hbb2obb.io import find_image  # noqa: E402
from hbb2obb.scoring.evaluate import evaluate_frames  # noqa: E402
from hbb2obb.synthetic.prompts import PROMPT_KINDS  # noqa: E402

#: The shares of lowest-confidence boxes reported (what a user would check by hand).
SHARES = (0.1, 0.2)


@dataclass
class SetBoxes:
    """Per box of one converted set, in frame then file order."""

    name: str
    frame: np.ndarray
    line: np.ndarray
    iou: np.ndarray
    confidence: np.ndarray
    fallback: np.ndarray
    unmatched: int


def convert_set(folder: Path, out: Path, params: dict) -> tuple[np.ndarray, np.ndarray]:
    """Convert every frame of ``folder`` into ``out/obb`` and ``out/confidence``; the confidences
    and fallback flags of all boxes (frame order, then line order)."""
    (out / "obb").mkdir(parents=True)
    (out / "confidence").mkdir()
    confidence, fallback = [], []
    for hbb_path in sorted((folder / "labels_hbb").glob("*.txt")):
        image_path = find_image(folder / "images", hbb_path.stem)
        if image_path is None:
            raise SystemExit(f"{hbb_path}: no image named {hbb_path.stem}.* in {folder / 'images'}")
        frame = convert_frame(image_path, hbb_path, out / "obb" / hbb_path.name, params,
                              confidence_path=out / "confidence" / hbb_path.name)
        written = np.loadtxt(out / "confidence" / hbb_path.name, ndmin=1)
        confidence.append(written.reshape(-1))
        fallback.append(frame.conversion.fallback)
    if not confidence:
        return np.zeros(0), np.zeros(0, dtype=bool)
    return np.concatenate(confidence), np.concatenate(fallback)


def box_ious(gt_dir: Path, obb_dir: Path) -> tuple[list, np.ndarray, np.ndarray, np.ndarray]:
    """Per prediction (frame order, then line order): frame name, 1-based line, and IoU with the
    ground-truth box it matched (0 when none did); plus the count of the unmatched ones."""
    table = evaluate_frames(gt_dir, obb_dir).table
    iou = np.zeros(len(table.pred))
    rows = table.pred_index[table.matched]
    iou[rows] = table.iou[table.matched]
    names = np.asarray(table.frame_names, dtype=object)[table.pred_frame]
    return list(names), np.asarray(table.pred.line), iou, ~table.pred_matched


def score_set(name: str, folder: Path, params: dict, keep: Path | None = None) -> SetBoxes:
    """Convert one set and pair each box's confidence with its IoU."""
    with tempfile.TemporaryDirectory(prefix="confidence_scores_") as work:
        out = keep / name if keep else Path(work)
        confidence, fallback = convert_set(folder, out, params)
        frames, lines, iou, unmatched = box_ious(folder / "labels_obb_gt", out / "obb")
    order = np.lexsort((lines, np.asarray(frames, dtype=str)))  # frames sorted by name as converted
    if len(order) != len(confidence):
        raise SystemExit(f"{name}: {len(order)} boxes scored but {len(confidence)} confidences written")
    return SetBoxes(name, np.asarray(frames, dtype=object)[order], lines[order], iou[order], confidence, fallback,
                    int(unmatched.sum()))


def flag_weights(score: np.ndarray, count: int) -> np.ndarray:
    """Weights in [0, 1] summing to ``count``: 1 for the boxes whose ``score`` is among the
    ``count`` lowest, shared evenly among boxes tied at the cut (a constant score flags every box
    by ``count / n``).

    Examples
    --------
    >>> flag_weights(np.array([0.3, 0.1, 0.2, 0.9]), 2).tolist()
    [0.0, 1.0, 1.0, 0.0]
    >>> flag_weights(np.array([0.0, 0.0, 0.0, 0.5]), 1).round(3).tolist()
    [0.333, 0.333, 0.333, 0.0]
    """
    score = np.asarray(score, dtype=np.float64)
    weights = np.zeros(len(score))
    if count <= 0 or len(score) == 0:
        return weights
    cut = np.sort(score)[count - 1]
    below, tied = score < cut, score == cut
    weights[below] = 1.0
    weights[tied] = (count - below.sum()) / tied.sum()
    return weights


def ranking(confidence: np.ndarray, iou: np.ndarray) -> dict:
    """Spearman's rho and, per share in ``SHARES``, the flagged boxes' hit rate and mean IoUs."""
    n = len(confidence)
    out = {"boxes": n, "spearman": math.nan}
    if n >= 3 and np.ptp(confidence) > 0 and np.ptp(iou) > 0:
        out["spearman"] = float(spearmanr(confidence, iou).statistic)
    for share in SHARES:
        count = max(1, int(round(share * n))) if n else 0
        flagged = flag_weights(confidence, count)
        worst = flag_weights(iou, count)  # IoU ties are rare; shared the same way
        hit = float((flagged * worst).sum() / count) if count else math.nan
        rest = n - count
        out[share] = {"hit": hit,
                      "flagged_iou": float((flagged * iou).sum() / count) if count else math.nan,
                      "rest_iou": float(((1 - flagged) * iou).sum() / rest) if rest else math.nan}
    return out


def report_lines(boxes: SetBoxes) -> list[str]:
    """One table row (markdown) for a set."""
    kept = ~boxes.fallback
    rank = ranking(boxes.confidence[kept], boxes.iou[kept])
    fallback_iou = f"{boxes.iou[boxes.fallback].mean():.3f}" if boxes.fallback.any() else "-"
    cells = [boxes.name, str(len(boxes.iou)), f"{boxes.fallback.sum()} ({fallback_iou})",
             f"{boxes.iou[kept].mean():.3f}" if kept.any() else "-", f"{rank['spearman']:.2f}"]
    for share in SHARES:
        part = rank[share]
        cells.append(f"{part['hit']:.2f} ({part['flagged_iou']:.3f} vs {part['rest_iou']:.3f})")
    return ["| " + " | ".join(cells) + " |"]


HEADER = ("| set | boxes | fallbacks (their IoU) | converted IoU | Spearman | lowest 10%: share in worst 10% "
          "(flagged IoU vs rest) | lowest 20%: share in worst 20% (flagged vs rest) |\n"
          "| --- | --- | --- | --- | --- | --- | --- |")


def sample_parts(data: Path, names: list[str], tuned_only: bool, held_out: bool, work: Path,
                 prompts: str | None = None, margin: tuple = (0.0, 0.10)) -> list:
    """``(name, folder)`` per real sample part, as folders of symbolic links; with ``prompts``, its
    ``labels_hbb`` are prompts of that kind made from the part's ground truth (as
    ``converter_scores.py --prompts`` makes them)."""
    parts = []
    for name in names:
        sample = data / name
        if not (sample / "labels_obb_gt").is_dir():
            raise SystemExit(f"{sample}: no sample there (labels_obb_gt missing)")
        stems = sorted(p.stem for p in (sample / "labels_hbb").glob("*.txt"))
        held = HELD_OUT.get(name)
        wanted = [("tuned", [s for s in stems if s != held]), ("held out", [s for s in stems if s == held])]
        if tuned_only:
            wanted = wanted[:1]
        elif held_out:
            wanted = wanted[1:]
        for label, part_stems in wanted:
            if not part_stems:
                continue
            folder = work / f"{name}-{label.replace(' ', '-')}"
            for sub in ("images", "labels_obb_gt") if prompts else ("images", "labels_hbb", "labels_obb_gt"):
                link_subset(sample / sub, folder / sub, part_stems)
            if prompts:
                write_prompts(folder / "labels_obb_gt", folder / "labels_hbb", prompts, margin)
            kind = f", {prompts} prompts" if prompts else ""
            parts.append((f"{name} {label}{kind} ({', '.join(part_stems)})", folder))
    return parts


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sets", nargs="*", type=Path, help="Folders with images/, labels_hbb/, labels_obb_gt/.")
    parser.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[1].parent / "shared" / "data")
    parser.add_argument("--samples", nargs="*", default=[], help="Real samples under --data (e.g. dota-sample).")
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--tuned-only", action="store_true", help="Only the samples' frames used while tuning.")
    which.add_argument("--held-out", action="store_true", help="Only the samples' held-out frames.")
    parser.add_argument("--param", type=parse_param, action="append", default=[],
                        help="A converter parameter NAME=VALUE (default: the converter's defaults).")
    parser.add_argument("--keep", type=Path, help="Keep the OBB and confidence files under this folder.")
    parser.add_argument("--prompts", choices=PROMPT_KINDS,
                        help="--samples: prompts of this kind made from the ground truth instead of labels_hbb.")
    parser.add_argument("--margin", type=float, nargs=2, default=(0.0, 0.10), metavar=("LOW", "HIGH"),
                        help="--prompts margin: the range each side grows by, as a share of the box's size.")
    args = parser.parse_args(argv)
    if not args.sets and not args.samples:
        parser.error("give at least one SET folder or --samples")
    params = {**DEFAULT_PARAMETERS, **dict(args.param)}
    with tempfile.TemporaryDirectory(prefix="confidence_samples_") as work:
        parts = [(folder.name, folder) for folder in args.sets]
        parts += sample_parts(args.data, args.samples, args.tuned_only, args.held_out, Path(work), args.prompts,
                              tuple(args.margin))
        print(HEADER)
        for name, folder in parts:
            if not (folder / "labels_obb_gt").is_dir():
                print(f"{folder}: no labels_obb_gt there", file=sys.stderr)
                return 2
            boxes = score_set(name, folder, params, args.keep)
            if boxes.unmatched:
                print(f"{name}: {boxes.unmatched} box(es) matched no ground-truth box (IoU 0)", file=sys.stderr)
            print("\n".join(report_lines(boxes)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
