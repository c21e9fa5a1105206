"""What a grid point's record must say to be trusted: what it was measured with, sound values.

Three checks keep a sweep from presenting a number it did not measure under the current
settings:

- :func:`fingerprint` is everything a record's numbers depend on besides its grid point: the
  converter and its options, the input folders (and a digest of their content), the scoring
  settings. Every record carries it as ``measured_with``; ``--resume`` keeps a record only
  when it equals the current one (:func:`setting_changes` says what differs).
- :func:`record_problem` finds a record whose values are not what this toolkit writes (a hand
  edit, ``avg_iou: high``), so readers skip it instead of failing on it or ranking it.
- :func:`output_problems` checks a converter's output folder before it is scored: one file per
  HBB file, each UTF-8 text. A converter that wrote nothing, or wrote some other encoding,
  fails its grid point instead of scoring IoU 0 or stopping the sweep.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Optional

LABEL_SUFFIX = ".txt"
#: Record keys that must hold a number (``None`` allowed: e.g. no match, no angle).
NUMERIC_KEYS = (
    "total_gt", "total_pred", "total_matches", "total_unmatched_gt", "total_unmatched_pred",
    "cross_class_matches", "total_edge_cases", "avg_iou", "std_iou", "sem_iou", "median_iou",
    "avg_angle_error", "std_angle_error", "median_angle_error", "p90_angle_error", "execution_time",
    "frames_scored", "missing_pred_files", "orphan_pred_files", "skipped_pred_lines", "fallbacks",
    "skipped_hbb_lines",
)
STATUSES = ("ok", "failed")


def _where(path) -> Optional[str]:
    return None if path is None else str(Path(path).resolve())


def _folder_digest(folder: Optional[str], contents: bool) -> Optional[str]:
    """SHA-256 over a folder's files: names and bytes (``contents``) or names and sizes."""
    if folder is None or not Path(folder).is_dir():
        return None
    digest = hashlib.sha256()
    for path in sorted(p for p in Path(folder).iterdir() if p.is_file()):
        digest.update(path.name.encode("utf-8", "surrogateescape") + b"\0")
        if contents:
            digest.update(path.read_bytes())
        else:
            digest.update(str(path.stat().st_size).encode())
        digest.update(b"\0")
    return digest.hexdigest()


def input_digest(inputs) -> dict:
    """Digests of what a sweep reads: the label folders by content, the images by name and size.

    Label folders are small text; images are large, and a changed image of the same name and
    size is a risk this accepts to keep the check fast.
    """
    return {"gt_dir": _folder_digest(_where(inputs.gt_dir), True),
            "hbb_dir": _folder_digest(_where(inputs.hbb_dir), True),
            "img_source": _folder_digest(_where(inputs.img_source), False)}


def fingerprint(plan, digest: Optional[dict] = None) -> dict:
    """What a record's numbers depend on besides its grid point; equal fingerprints, same numbers.

    ``digest`` is :func:`input_digest` of ``plan.inputs`` when already computed.
    """
    return {"converter": plan.converter, "converter_options": dict(plan.converter_options),
            "img_source": _where(plan.inputs.img_source), "gt_dir": _where(plan.inputs.gt_dir),
            "hbb_dir": _where(plan.inputs.hbb_dir), "evaluation": plan.evaluation.as_dict(),
            "input_digest": digest if digest is not None else input_digest(plan.inputs)}


def setting_changes(earlier, now: dict) -> list[str]:
    """What differs between two fingerprints, for people: ``evaluation.iou_threshold 0.1 -> 0.7``.

    Examples
    --------
    >>> setting_changes({"a": 1, "e": {"t": 0.1, "x": 2}}, {"a": 1, "e": {"t": 0.7, "x": 2}})
    ['e.t 0.1 -> 0.7']
    >>> setting_changes(None, {"a": 1})
    ['not recorded (written by an older version)']
    """
    if not isinstance(earlier, dict):
        return ["not recorded (written by an older version)"]
    changes = []
    for key in dict.fromkeys(list(now) + list(earlier)):
        old, new = earlier.get(key), now.get(key)
        if old == new:
            continue
        if key == "input_digest":
            changed = [name for name in (new or {}) if (old or {}).get(name) != new[name]] or ["inputs"]
            changes += [f"the files in {name}" for name in changed]
        elif isinstance(old, dict) and isinstance(new, dict):
            changes += [f"{key}.{change}" for change in setting_changes(old, new)]
        else:
            changes.append(f"{key} {_show(old)} -> {_show(new)}")
    return changes


def _show(value) -> str:
    return str(value) if _is_number(value) else repr(value)


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def record_problem(record) -> Optional[str]:
    """Why a results record cannot be used (``None`` when it can): not a mapping, an unknown
    status, a metric that is not a number, an ``ok`` record without ``avg_iou``.

    Examples
    --------
    >>> record_problem({"scale_factor": 0.0, "avg_iou": "high"})
    "avg_iou is 'high', not a number"
    >>> record_problem({"scale_factor": 0.0, "avg_iou": 0.8, "iou_fractions": {"0.90": 0.5}}) is None
    True
    """
    if not isinstance(record, dict):
        return f"not a mapping ({type(record).__name__})"
    status = record.get("status", "ok")
    if status not in STATUSES:
        return f"status is {status!r}, not one of {', '.join(STATUSES)}"
    for key in NUMERIC_KEYS:
        if key in record and record[key] is not None and not _is_number(record[key]):
            return f"{key} is {record[key]!r}, not a number"
    fractions = record.get("iou_fractions")
    if fractions is not None and (not isinstance(fractions, dict)
                                  or not all(_is_number(v) for v in fractions.values())):
        return f"iou_fractions is {fractions!r}, not a mapping of numbers"
    if status == "ok" and not _is_number(record.get("avg_iou")):
        return "an ok record without avg_iou"
    return None


def output_problems(hbb_dir: Path, out_dir: Path) -> dict:
    """What is wrong with a converter's output before scoring it: HBB files it wrote no file
    for, and files that are not UTF-8 text. Empty when all is well.

    Returns a dict with ``missing_output_files`` (count) and ``first_missing`` (a name), and
    ``unreadable_output_files`` and ``first_unreadable`` (``name: reason``) when some exist.
    """
    hbb_names = sorted(p.name for p in Path(hbb_dir).glob(f"*{LABEL_SUFFIX}"))
    out_dir = Path(out_dir)
    problems: dict = {}
    missing = [name for name in hbb_names if not (out_dir / name).is_file()]
    if missing:
        problems.update(missing_output_files=len(missing), first_missing=missing[0])
    unreadable = []
    for path in sorted(out_dir.glob(f"*{LABEL_SUFFIX}")) if out_dir.is_dir() else []:
        try:
            path.read_bytes().decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            unreadable.append(f"{path.name}: not UTF-8 text ({exc.reason} at byte {exc.start})")
        except OSError as exc:
            unreadable.append(f"{path.name}: cannot read ({exc.strerror})")
    if unreadable:
        problems.update(unreadable_output_files=len(unreadable), first_unreadable=unreadable[0])
    return problems


def describe_output_problems(problems: dict, total: int) -> str:
    """One line for a failed record: ``output incomplete: no file for 3 of 3 HBB files (first a.txt)``."""
    parts = []
    if problems.get("missing_output_files"):
        parts.append(f"no output file for {problems['missing_output_files']} of {total} HBB file(s) "
                     f"(first: {problems['first_missing']})")
    if problems.get("unreadable_output_files"):
        parts.append(f"{problems['unreadable_output_files']} output file(s) unreadable "
                     f"(first: {problems['first_unreadable']})")
    if problems.get("skipped_pred_lines"):
        parts.append(f"{problems['skipped_pred_lines']} output line(s) unreadable and skipped "
                     f"(first: {problems['first_skipped_line']})")
    return "converter output unusable: " + "; ".join(parts)
