"""``PROVENANCE.txt`` of a sweep's output folder: what was measured, over which labels, by which code.

Written beside the run folders (never inside one) by an invocation that measured something: a
refresh only redraws, and a resume that found every run complete measured nothing, so neither
restamps a record with code that produced none of its numbers. The header, the environment and
the atomic write are :mod:`hbb2obb.io.provenance`'s; the sections here are the sweep's own.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional, Sequence

from hbb2obb.errors import UsageError
from hbb2obb.io.provenance import BENCHMARK_RECORD, section, sha256_of_files, write_record

TITLE = "hbb2obb-toolkit benchmark provenance"
#: First lines of the records this command may replace: its own, and the reference tool's.
KNOWN_TITLES = (TITLE, "HBB2OBB benchmark provenance")
IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".tif", ".tiff", ".webp")


def _first_line(path: Path) -> str:
    """The first line of a file a sweep may replace, to tell whose it is."""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.readline().strip()
    except OSError as exc:
        raise UsageError(f"{path}: cannot read it to check it is a sweep's ({exc.strerror})") from None


def check_record_is_ours(folder: Path) -> None:
    """Refuse (:class:`UsageError`) when ``folder/PROVENANCE.txt`` exists and is not a benchmark
    record (this toolkit's or the reference's): a sweep never overwrites a file it did not write."""
    path = Path(folder) / BENCHMARK_RECORD
    if path.exists() and _first_line(path) not in KNOWN_TITLES:
        raise UsageError(f"{path} exists and is not a record hbb2obb-optimize wrote; move it away "
                         "(a sweep does not overwrite a file it did not write)")


# What the files a sweep writes into a run folder begin with (its own and the reference's):
# anything else there is somebody's file, which a sweep must not replace.
RUN_FILE_OPENINGS = {"results.yaml": ("best_parameters:",), "run_config.yaml": ("run_name:",),
                     "summary.txt": ("Benchmark Run:",)}


def check_run_folder_is_ours(folder: Path) -> None:
    """Refuse (:class:`UsageError`) when a run folder holds a ``results.yaml``, ``run_config.yaml``
    or ``summary.txt`` that is not a sweep's (by its first line): a sweep never overwrites a file
    it did not write."""
    for name, openings in RUN_FILE_OPENINGS.items():
        path = Path(folder) / name
        if path.exists() and not _first_line(path).startswith(openings):
            raise UsageError(f"{path} exists and is not a file hbb2obb-optimize wrote; move it away or "
                             "choose another -o/-n (a sweep does not overwrite a file it did not write)")


def _label_digest(folder: Optional[Path]) -> str:
    if folder is None or not Path(folder).is_dir():
        return "folder not found"
    return sha256_of_files(sorted(Path(folder).glob("*.txt")))


def _image_count(folder: Optional[Path]) -> Optional[int]:
    if folder is None or not Path(folder).is_dir():
        return None
    return sum(1 for p in Path(folder).iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)


def write_benchmark_record(folder: Path, command: str, plans: Sequence, elapsed_seconds: float,
                           config_text: Optional[str] = None, config_copy: Optional[Path] = None,
                           kept: Sequence[str] = ()) -> Path:
    """Write ``folder/PROVENANCE.txt`` for the runs of ``plans`` this invocation measured.

    Parameters
    ----------
    folder : Path
        The output folder holding the run folders.
    command : str
        The command line that reproduces the sweep.
    plans : sequence of SweepPlan
        The runs measured (all share the inputs of one benchmark, or there is one).
    elapsed_seconds : float
        The invocation's wall time.
    config_text, config_copy : str, Path, optional
        The benchmark file, verbatim, and where its copy beside the results is.
    kept : sequence of str
        Runs of the benchmark left as they were (complete on disk under ``--resume``).
    """
    inputs = plans[0].inputs
    sweep = [f"Runs measured  : {len(plans)}",
             f"Total wall time: {elapsed_seconds / 3600:.2f} h ({elapsed_seconds:.0f} s)", ""]
    sweep += [f"  {plan.name:<30} {plan.converter:<10} {plan.grid.describe()}" for plan in plans]
    for plan in plans:
        if plan.converter_options.get("template"):
            sweep.append(f"  {plan.name} command: {plan.converter_options['template']}")
    sweep += ["", "No model checkpoint is loaded by this toolkit's converters, so none is hashed here;",
              "a command converter's own models are its business: record them in its template."]
    count = _image_count(inputs.img_source)
    source = [f"images         : {inputs.img_source if inputs.img_source is not None else 'not given'}"]
    source += [f"image count    : {count}"] if count is not None else []
    source += [f"HBB labels     : {inputs.hbb_dir}", f"HBB sha256     : {_label_digest(inputs.hbb_dir)}",
               f"GT labels      : {inputs.gt_dir}", f"GT sha256      : {_label_digest(inputs.gt_dir)}"]
    sections = []
    if config_copy is not None:
        sections.append(section("Configuration", [
            "A copy of the benchmark file is beside these results, so the folder re-runs from itself:",
            f"    hbb2obb-optimize -c {config_copy}",
            "Paths inside it resolve against the working directory; adjust them if the folder moved."]))
    sections += [section("Sweep", sweep), section("Inputs", source)]
    if config_text is not None:
        sections.append(section("Benchmark configuration, verbatim", config_text.rstrip("\n").splitlines()))
    if kept:
        sections.append(section("Notes", [
            f"Resumed benchmark: {len(plans)} run(s) were measured by this invocation; {len(kept)} were",
            "complete on disk and left as they were, so their numbers come from an earlier sweep, possibly",
            "by other code. The wall time above covers only the runs measured here.",
            f"  measured : {' '.join(plan.name for plan in plans)}",
            f"  kept     : {' '.join(kept)}"]))
    return write_record(Path(folder) / BENCHMARK_RECORD, TITLE, command, sections)
