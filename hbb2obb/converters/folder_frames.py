"""Which frames of a folder ``hbb2obb`` converts, and what their outcomes add up to.

The images of IMG_SOURCE (:func:`image_paths`) are paired by name with the HBB files of the
HBB folder (:func:`prompt_files`); an HBB file without an image is an orphan
(:func:`orphan_prompts`). Two images or two HBB files of one name are refused: one OBB file is
written per name, so one frame would get the other's boxes. After the run,
:func:`tally_outcomes` adds the frames' outcomes up, in the frames' order, into what the
summary and the provenance record say.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from hbb2obb.errors import InputError
from hbb2obb.io.images import IMAGE_SUFFIXES


def image_paths(source: Path) -> list[Path]:
    """The frames to convert: ``source`` itself, or the images in the folder, sorted by name.

    Raises
    ------
    InputError
        ``source`` does not exist, is a folder without any image, or holds two images of one
        name (``a.jpg`` and ``a.png``).
    """
    if source.is_file():
        return [source]
    if not source.is_dir():
        raise InputError(f"{source}: no such image or folder")
    frames = sorted(p for p in source.iterdir() if p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES)
    if not frames:
        # Converting nothing and exiting 0 would look like success to a script.
        raise InputError(f"{source}: no images found in this folder (looked for {', '.join(IMAGE_SUFFIXES)})")
    by_stem: dict[str, list[Path]] = {}
    for frame in frames:
        by_stem.setdefault(frame.stem, []).append(frame)
    shared = [paths for paths in by_stem.values() if len(paths) > 1]
    if shared:  # one HBB file and one OBB file per name: the second frame would be given the first's boxes
        paths, stem = shared[0], shared[0][0].stem
        more = f" ({len(shared)} names are shared)" if len(shared) > 1 else ""
        raise InputError(f"{' and '.join(str(p) for p in paths)}: {len(paths)} images named {stem!r}, and one HBB "
                         f"file {stem}.txt for all (OBB files are named after the frame): keep one of them{more}")
    return frames


def prompt_files(hbb_dir: Path) -> dict[str, Path]:
    """The HBB files of ``hbb_dir`` by frame name: ``NAME.txt``, the suffix in any case (``.TXT``
    too, as the evaluation reads label folders); two files of one name are an :class:`InputError`."""
    found: dict[str, Path] = {}
    for path in sorted(hbb_dir.iterdir()):
        if path.suffix.lower() != ".txt" or not path.is_file():
            continue
        if path.stem in found:
            raise InputError(f"{found[path.stem]} and {path}: two HBB files for frame {path.stem!r}; keep one of them")
        found[path.stem] = path
    return found


def orphan_prompts(prompts: dict[str, Path], frames: list) -> list[Path]:
    """The HBB files (:func:`prompt_files`) that no frame in ``frames`` is named after."""
    stems = {p.stem for p in frames}
    return sorted(path for stem, path in prompts.items() if stem not in stems)


@dataclass
class OutcomeTally:
    """What the frames of a run did, added up in the frames' order.

    ``warnings`` are ``(kind, message)`` pairs: an unreadable frame, the frames' own warnings,
    the first precision loss, and the first detector confidence that no output keeps.
    ``readings`` counts the frames per reading of their prompts; ``frame_readings`` gives each
    frame's, ``"NAME.jpg tight"``.
    """

    converted: int = 0
    boxes: int = 0
    fallbacks: int = 0
    broken_lines: int = 0
    reasons: dict = field(default_factory=dict)
    readings: dict = field(default_factory=dict)
    frame_readings: list = field(default_factory=list)
    unreadable: list = field(default_factory=list)
    wholly_fallen_back: list = field(default_factory=list)
    written: list = field(default_factory=list)
    hbb_files: list = field(default_factory=list)
    converted_frames: list = field(default_factory=list)
    warnings: list = field(default_factory=list)


def tally_outcomes(frames: list, outcomes: list) -> OutcomeTally:
    """Add up the outcomes (:class:`~hbb2obb.converters.frame_tasks.FrameOutcome`) of ``frames``
    (:class:`~hbb2obb.converters.distribute.Frame`), frame by frame."""
    tally = OutcomeTally()
    said = set()  # the warnings said once per run, by the first frame that has them
    for frame, outcome in zip(frames, outcomes):
        if outcome.error is not None:
            tally.unreadable.append(frame.image)
            tally.warnings.append(("unreadable", outcome.error))
            continue
        for kind, message in (("precision", outcome.lossy), ("unused-score", outcome.unused_scores)):
            if message and kind not in said:
                tally.warnings.append((kind, message))
                said.add(kind)
        tally.warnings += [tuple(warning) for warning in outcome.warnings]
        tally.broken_lines += outcome.broken_lines  # warned one by one, counted on the Skipped: line
        for reason in outcome.reasons:
            tally.reasons[reason] = tally.reasons.get(reason, 0) + 1
        tally.readings[outcome.reading] = tally.readings.get(outcome.reading, 0) + 1
        tally.frame_readings.append(f"{frame.image.name} {outcome.reading}")
        tally.written.append(frame.targets["obb"])
        tally.hbb_files.append(frame.hbb)
        tally.converted_frames.append(frame.image)
        tally.converted += 1
        tally.boxes += outcome.boxes
        tally.fallbacks += outcome.fallbacks
        if outcome.fell_back_entirely:
            tally.wholly_fallen_back.append(frame.image.name)
    return tally
