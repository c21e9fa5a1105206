"""The page's frames: each image downscaled once (reused by later runs), and its full resolution for zooming in.

``DIR/frames/NAME.jpg`` has a long side of at most ``max_side``; where the original is larger,
``DIR/full/NAME.EXT`` is the original itself (a hard link where the file system allows it, else
a copy), or an upright PNG where a browser could not show it as it is (TIFF, 16-bit, an EXIF
turn). ``DIR/frames/manifest.json`` records the source (path, size, modification time) each
output was made from: a later run with the same ``max_side`` reuses it.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

from PIL import Image

from hbb2obb.errors import InputError
from hbb2obb.io.atomic import atomic_path, write_text_atomic
from hbb2obb.io.images import orientation
from hbb2obb.plotting.pixels import image_size_of, open_rgb, shrunk_size
from hbb2obb.processes import worker_pool

MANIFEST = "manifest.json"
JPEG_QUALITY = 85
#: what every browser shows as it is (TIFF is not among them)
BROWSER_FORMATS = {"JPEG": ".jpg", "PNG": ".png", "WEBP": ".webp", "GIF": ".gif", "BMP": ".bmp"}
_SAFE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]*$")


def file_stem(name: str) -> str:
    """A file name for frame ``name``: the name itself when plain, else a plain part and a digest.

    Examples
    --------
    >>> file_stem("frame_0001"), file_stem("a b/..")[:4]
    ('frame_0001', 'a_b_')
    """
    if _SAFE.match(name) and len(name) <= 120:
        return name
    plain = re.sub(r"[^A-Za-z0-9._-]", "_", name)[:60].lstrip(".")
    return f"{plain}_{hashlib.sha1(name.encode('utf-8', 'surrogatepass')).hexdigest()[:10]}"


@dataclass(frozen=True)
class FramePicture:
    """A frame's pictures in the page folder (paths relative to it) and its original size."""

    small: str
    full: Optional[str]
    width: int
    height: int


def _source_key(source: Path, max_side: int, full: bool) -> list:
    stat = source.stat()
    return [str(source.resolve()), stat.st_size, stat.st_mtime_ns, max_side, full]


def _link_or_copy(source: Path, target: Path) -> None:
    """``target`` as a hard link to ``source`` (no bytes copied), or a copy where links are not possible."""
    with atomic_path(target) as temporary:
        temporary.unlink()
        try:
            os.link(source, temporary)
        except OSError:  # another file system, or one without hard links
            shutil.copyfile(source, temporary)


def make_picture(source: str, small: str, full: Optional[str], max_side: int) -> tuple:
    """Write one frame's downscaled JPEG (and its full-resolution file); return the paths and sizes.

    ``full`` is the target without its suffix, or ``None`` for no full-resolution file. Runs in
    worker processes: arguments and result are plain values.
    """
    source_path = Path(source)
    original = image_size_of(source_path)
    size = shrunk_size(original, max_side)
    rgb, _ = open_rgb(source_path, size)
    with atomic_path(Path(small)) as temporary:
        rgb.save(temporary, format="JPEG", quality=JPEG_QUALITY)
    full_written = None
    if full is not None and size != tuple(original):
        with Image.open(source_path) as image:
            suffix = BROWSER_FORMATS.get(image.format)
            as_is = suffix is not None and image.mode in ("RGB", "RGBA", "L", "LA", "P", "1") \
                and orientation(image) == 1
        if as_is:
            full_written = full + suffix
            _link_or_copy(source_path, Path(full_written))
        else:
            full_written = full + ".png"
            with atomic_path(Path(full_written)) as temporary:
                open_rgb(source_path)[0].save(temporary, format="PNG")
    return small, full_written, original[0], original[1]


def _job(args):
    try:
        return make_picture(*args)
    except InputError as exc:
        return exc


def write_pictures(out_dir: Path, frames: dict, max_side: int, *, full: bool = True, jobs: int = 1,
                   progress: Optional[Callable[[int], None]] = None) -> tuple[dict, dict]:
    """Write (or reuse) the pictures of the frames ``{name: image path}`` into ``out_dir``.

    Returns
    -------
    pictures : dict
        ``{name: FramePicture}`` of the frames with a readable image.
    problems : dict
        ``{name: reason}`` of the frames whose image could not be read.
    """
    small_dir, full_dir = out_dir / "frames", out_dir / "full"
    small_dir.mkdir(parents=True, exist_ok=True)
    if full:
        full_dir.mkdir(exist_ok=True)
    try:
        recorded = json.loads((small_dir / MANIFEST).read_text(encoding="utf-8"))
        recorded = recorded if isinstance(recorded, dict) else {}
    except (OSError, ValueError):
        recorded = {}
    manifest, pictures, problems, work = {}, {}, {}, []
    for name, source in frames.items():
        stem = file_stem(name)
        try:
            key = _source_key(Path(source), max_side, full)
        except OSError as exc:
            problems[name] = f"{source}: cannot read image ({exc.strerror or exc})"
            continue
        entry = recorded.get(name)
        if isinstance(entry, dict) and entry.get("key") == key and (out_dir / entry["small"]).is_file() and (
                entry.get("full") is None or (out_dir / entry["full"]).is_file()):
            manifest[name] = entry
            pictures[name] = FramePicture(entry["small"], entry.get("full"), entry["width"], entry["height"])
            if progress:
                progress(1)
            continue
        work.append((name, key, (str(source), str(small_dir / f"{stem}.jpg"),
                                 str(full_dir / stem) if full else None, max_side)))
    if jobs > 1 and len(work) > 1:
        with worker_pool(jobs) as pool:
            done = pool.map(_job, [args for _, _, args in work], chunksize=4)
            _collect(work, done, out_dir, manifest, pictures, problems, progress)
    else:
        _collect(work, map(_job, [args for _, _, args in work]), out_dir, manifest, pictures, problems, progress)
    write_text_atomic(small_dir / MANIFEST, json.dumps(manifest, indent=0, sort_keys=True) + "\n")
    return pictures, problems


def _collect(work, done, out_dir: Path, manifest: dict, pictures: dict, problems: dict, progress) -> None:
    for (name, key, _), result in zip(work, done):
        if isinstance(result, InputError):
            problems[name] = str(result)
        else:
            small, full, width, height = result
            entry = {"key": key, "small": Path(small).relative_to(out_dir).as_posix(),
                     "full": None if full is None else Path(full).relative_to(out_dir).as_posix(),
                     "width": width, "height": height}
            manifest[name] = entry
            pictures[name] = FramePicture(entry["small"], entry["full"], width, height)
        if progress:
            progress(1)
