"""One frame of ``hbb2obb``'s conversion as a task a worker runs: inputs by path, outputs as bytes.

:func:`convert_one` does for one frame what the command's loop did in its own process: convert
the prompts (:func:`hbb2obb.converters.image.converter.convert_frame`), format the label,
polygon and confidence files, draw the picture, and collect the frame's warnings and counts. It
writes nothing: the files travel back as bytes and the process that drives the run writes them
(:mod:`hbb2obb.converters.distribute`), so workers on a cluster need to read the inputs but
never write, and the bytes are the same whichever process made them.

:class:`FrameOutcome` is what a frame adds to the run's summary, as plain JSON-able values, so
the run's record of complete frames (:mod:`hbb2obb.converters.frame_record`) can replay it when
a resumed run skips the frame.
"""

from __future__ import annotations

import hashlib
import io
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Optional

from hbb2obb.converters.image.outputs import OutputSettings
from hbb2obb.errors import InputError

#: The files a frame may have, in the order they are written.
KINDS = ("obb", "confidence", "polygon", "picture")


@dataclass(frozen=True)
class FrameJob:
    """What every frame of a run is converted with: the converter's parameters and the outputs asked for.

    ``drawing`` holds the ``--save_img`` switches (``None``: no picture); ``fallback_warn_share``
    is the share of a frame's boxes falling back above which the frame is warned about.
    """

    params: dict
    settings: OutputSettings
    polygons: bool = False
    side_car: bool = False
    drawing: Optional[dict] = None
    label_map: dict = field(default_factory=dict)
    fallback_warn_share: float = 0.5

    @property
    def picture(self) -> bool:
        return self.drawing is not None

    @property
    def show_confidence(self) -> bool:
        return bool(self.drawing and self.drawing.get("show_confidence"))

    def kinds(self) -> tuple:
        """The files each converted frame gets, among :data:`KINDS`."""
        wanted = {"obb": True, "confidence": self.side_car, "polygon": self.polygons, "picture": self.picture}
        return tuple(kind for kind in KINDS if wanted[kind])

    def describe(self) -> dict:
        """The job as JSON-able values (what a resumed run must match)."""
        values = asdict(self)
        values["settings"] = asdict(self.settings)
        values["label_map"] = {str(k): v for k, v in sorted(self.label_map.items(), key=lambda kv: str(kv[0]))}
        return values


@dataclass
class FrameOutcome:
    """What one frame adds to the run's summary; plain values, so it can be kept in a JSON record.

    ``error`` is set (and nothing else) when the frame could not be read; ``warnings`` are
    ``[kind, message]`` pairs in the order the run reports them; ``lossy`` is the precision
    warning, said once per run by the first frame that has one.
    """

    boxes: int = 0
    fallbacks: int = 0
    reasons: list = field(default_factory=list)
    reading: Optional[str] = None
    warnings: list = field(default_factory=list)
    lossy: Optional[str] = None
    broken_lines: int = 0
    error: Optional[str] = None
    #: the warning that this frame's HBB lines carry a detector's confidence no output keeps
    #: (said once per run, as ``lossy``)
    unused_scores: Optional[str] = None

    @property
    def fell_back_entirely(self) -> bool:
        return bool(self.boxes) and self.fallbacks == self.boxes

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, values: dict) -> "FrameOutcome":
        names = cls.__dataclass_fields__
        return cls(**{k: v for k, v in values.items() if k in names})


@dataclass
class FrameResult:
    """One frame's files (``{kind: bytes}``) and its :class:`FrameOutcome`."""

    files: dict
    outcome: FrameOutcome

    def digests(self) -> dict:
        """SHA-256 of each file's bytes, as hex (what the run's record keeps)."""
        return {kind: hashlib.sha256(data).hexdigest() for kind, data in self.files.items()}


def convert_one(image_path: Path, hbb_path: Path, job: FrameJob, shown_image: Optional[str] = None,
                shown_hbb: Optional[str] = None) -> FrameResult:
    """Convert one frame; its files as bytes and what it adds to the summary.

    ``shown_image`` and ``shown_hbb`` are the paths as the user gave them, for the messages:
    a worker may be handed absolute paths (a cluster's workers start in another folder) and
    must still name the files as a run in one process does. An unreadable image or prompt file
    is the frame's ``error``, not an exception; any other error is raised.
    """
    from hbb2obb.converters.image.converter import convert_frame
    from hbb2obb.converters.image.outputs import frame_texts, lossy_precision_warning

    def shown(text: str) -> str:
        for given, name in ((image_path, shown_image), (hbb_path, shown_hbb)):
            if name is not None and str(given) != name:
                text = text.replace(str(given), name)
        return text

    hbb_name = shown_hbb if shown_hbb is not None else str(hbb_path)
    try:
        result = convert_frame(image_path, hbb_path, None, job.params, keep_masks=job.picture or job.polygons)
    except InputError as exc:  # an unreadable image or prompt file: this frame only
        return FrameResult({}, FrameOutcome(error=shown(f"{exc}; frame skipped")))
    settings = job.settings
    texts = frame_texts(result, settings, polygons_wanted=job.polygons, confidences_wanted=job.show_confidence,
                        side_car=job.side_car)
    outcome = FrameOutcome()
    if settings.normalize:  # absolute coordinates are written at a precision that is never lossy
        outcome.lossy = lossy_precision_warning(settings.precision, result.image.size)
    detector_used = settings.confidence_source != "conversion" and (
        settings.save_confidence or job.side_car or job.show_confidence)
    label_file = result.label_file  # a 6th column on every line (score), or on some (line_scores)
    if not detector_used and (label_file.boxes.score is not None or label_file.line_scores is not None):
        outcome.unused_scores = (f"{hbb_name}: the HBB lines carry a 6th column, a detector's confidence, that no "
                                 "output keeps (AP needs it); add --confidence_source detector with --save_confidence "
                                 "or --confidence_dir DIR")
    warnings = [("bad-score", problem) for problem in texts.problems]
    if texts.missing_scores:
        warnings.append(("no-score", f"{texts.missing_scores} of {len(texts.confidences)} HBBs in {hbb_name} carry "
                                     "no usable detector confidence; the conversion's score is reported for those "
                                     "boxes"))
    warnings += [("bad-hbb", f"{problem}; line skipped") for problem in result.label_file.problems]
    outcome.broken_lines = len(result.label_file.problems)
    fallback = result.conversion.fallback
    for line, reason in zip(result.label_file.boxes.line.tolist(), result.conversion.reasons):
        if reason:
            warnings.append(("fallback", f"{hbb_name}:{line}: {reason}; the HBB was written as the OBB"))
            outcome.reasons.append(reason)
    outcome.reading = result.conversion.reading  # how the HBBs were read: tight, loose, with a margin
    outcome.boxes, outcome.fallbacks = len(fallback), int(fallback.sum())
    share = outcome.fallbacks / outcome.boxes if outcome.boxes else 0.0
    if outcome.fallbacks and share > job.fallback_warn_share:
        warnings.append(("fallback-share", f"{outcome.fallbacks} of {outcome.boxes} boxes in {Path(image_path).name} "
                                           f"fell back to their HBB ({share:.1%})"))
    outcome.warnings = [[kind, shown(message)] for kind, message in warnings]
    files = {"obb": texts.obb.encode("utf-8")}
    if job.side_car:
        files["confidence"] = texts.confidence.encode("utf-8")
    if job.polygons:
        files["polygon"] = texts.polygon.encode("utf-8")
    if job.picture:
        files["picture"] = _picture(result, job, texts.confidences)
    return FrameResult(files, outcome)


def _picture(result, job: FrameJob, confidences) -> bytes:
    """The ``--save_img`` picture of a converted frame, as JPEG bytes."""
    from hbb2obb.converters.image.draw import draw_conversion

    drawing = job.drawing
    picture = draw_conversion(result.image, result.xyxy, result.conversion, result.label_file.boxes.class_id,
                              label_map=job.label_map, show_hbb=drawing["show_hbb"],
                              show_masks=drawing["show_masks"], show_contours=drawing["show_segments"],
                              show_obb=drawing["show_obb"], show_labels=drawing["show_labels"],
                              show_confidence=job.show_confidence, confidences=confidences)
    buffer = io.BytesIO()
    picture.save(buffer, format="JPEG", quality=90)
    return buffer.getvalue()
