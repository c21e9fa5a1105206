"""Which frames of a folder are converted, and the tally of their outcomes."""

from __future__ import annotations

from pathlib import Path

import pytest

from hbb2obb.converters.distribute import Frame
from hbb2obb.converters.folder_frames import image_paths, orphan_prompts, prompt_files, tally_outcomes
from hbb2obb.converters.frame_tasks import FrameOutcome
from hbb2obb.errors import InputError


def test_images_and_prompts_are_paired_by_name(tmp_path):
    images, hbb = tmp_path / "images", tmp_path / "hbb"
    images.mkdir()
    hbb.mkdir()
    for name in ("b.png", "a.JPG", "notes.txt"):
        (images / name).write_bytes(b"")
    for name in ("a.txt", "b.TXT", "c.txt", "d.json"):
        (hbb / name).write_text("0 1 1 2 2\n")
    (hbb / "sub.txt").mkdir()  # a folder named like a prompt is none
    frames = image_paths(images)
    assert [p.name for p in frames] == ["a.JPG", "b.png"]
    prompts = prompt_files(hbb)
    assert {stem: p.name for stem, p in prompts.items()} == {"a": "a.txt", "b": "b.TXT", "c": "c.txt"}
    assert [p.name for p in orphan_prompts(prompts, frames)] == ["c.txt"]
    (hbb / "a.TXT").write_text("0 1 1 2 2\n")
    with pytest.raises(InputError, match="two HBB files for frame 'a'"):
        prompt_files(hbb)
    (images / "a.png").write_bytes(b"")
    with pytest.raises(InputError, match=r"a.JPG and .*a.png: 2 images named 'a'"):
        image_paths(images)


def test_the_tally_adds_up_what_each_frame_did_in_order():
    outcomes = [
        FrameOutcome(boxes=3, fallbacks=1, reasons=["no usable mask"], reading="tight", broken_lines=1,
                     warnings=[["fallback", "one"]], lossy="precision lost"),
        FrameOutcome(error="x.jpg: cannot read image"),
        FrameOutcome(boxes=2, fallbacks=2, reasons=["no usable mask", "outside the frame"], reading="loose",
                     lossy="said again"),
    ]
    frames = [Frame(Path(f"{n}.jpg"), Path(f"{n}.txt"), {"obb": Path(f"out/{n}.txt")}) for n in ("a", "x", "c")]
    tally = tally_outcomes(frames, outcomes)
    assert (tally.converted, tally.boxes, tally.fallbacks, tally.broken_lines) == (2, 5, 3, 1)
    assert tally.reasons == {"no usable mask": 2, "outside the frame": 1}
    assert tally.readings == {"tight": 1, "loose": 1} and tally.frame_readings == ["a.jpg tight", "c.jpg loose"]
    assert tally.unreadable == [Path("x.jpg")] and tally.wholly_fallen_back == ["c.jpg"]
    assert tally.written == [Path("out/a.txt"), Path("out/c.txt")] and tally.hbb_files == [Path("a.txt"), Path("c.txt")]
    # the first precision loss only, the frames' own warnings, the unreadable frame where it came
    assert tally.warnings == [("precision", "precision lost"), ("fallback", "one"),
                              ("unreadable", "x.jpg: cannot read image")]
