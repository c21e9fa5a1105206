"""``hbb2obb -j N`` and ``--scheduler``: the files of one process, errors reported as one process
reports them, and ``--resume`` after a real kill of a running conversion."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from hbb2obb.cli.convert import _frame_failed, main
from hbb2obb.errors import Hbb2ObbError, UsageError

CONSOLE = Path(sys.executable).with_name("hbb2obb")
TIMED = re.compile(r" in [0-9.]+ s ")


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    from hbb2obb.synthetic.dataset import generate_dataset

    return generate_dataset(tmp_path_factory.mktemp("parallel"), n_frames=6, boxes_per_frame=(8, 14), seed=4,
                            width=640, height=360)


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def every_output(dataset, out: Path) -> list:
    """A conversion writing every kind of file: labels, side-car confidences, polygons, pictures, provenance."""
    return [dataset.images_dir, "--hbb_dir", dataset.hbb_dir, "--obb_dir", out / "labels_obb",
            "--confidence_dir", out / "confidence", "--save_polygon", "--polygon_dir", out / "polygons",
            "--save_img", "--viz_dir", out / "pictures", "--show_confidence", "--save_provenance", "-nb"]


def files(folder: Path) -> dict:
    """Every file under ``folder`` (hidden records apart) by relative path; the provenance record
    without its timestamp, working directory and the folder's own path."""
    found = {}
    for path in sorted(folder.rglob("*")):
        if not path.is_file() or path.name.startswith("."):
            continue
        data = path.read_bytes()
        if path.name == "PROVENANCE_obb.txt":
            lines = data.decode().replace(str(folder), "OUT").splitlines()
            data = "\n".join(line for line in lines if not line.startswith(("Written ", "Working directory"))).encode()
        found[str(path.relative_to(folder))] = data
    return found


def test_jobs_2_writes_the_files_of_one_process(dataset, tmp_path):
    one = run(*every_output(dataset, tmp_path / "one"), "-j", "1")
    two = run(*every_output(dataset, tmp_path / "two"), "-j", "2")
    assert one.exit_code == 0 and two.exit_code == 0, two.output
    serial, parallel = files(tmp_path / "one"), files(tmp_path / "two")
    kinds = {name.split("/")[0] for name in serial}
    assert kinds == {"labels_obb", "confidence", "polygons", "pictures", "PROVENANCE_obb.txt"}
    assert len(serial) == 4 * len(dataset.frame_names) + 1
    assert serial == parallel
    assert (TIMED.sub(" in T s ", one.stdout).replace("one", "X")
            == TIMED.sub(" in T s ", two.stdout).replace("two", "X"))
    assert one.stderr.replace("one", "X") == two.stderr.replace("two", "X")


def test_scheduler_local_2_writes_the_files_of_one_process(dataset, tmp_path):
    pytest.importorskip("distributed")
    one = run(*every_output(dataset, tmp_path / "one"))
    dask = run(*every_output(dataset, tmp_path / "dask"), "--scheduler", "local:2")
    assert one.exit_code == 0 and dask.exit_code == 0, dask.output
    assert files(tmp_path / "one") == files(tmp_path / "dask")
    assert "Dask scheduler tcp://127.0.0.1:" in dask.stderr and "2 worker(s)" in dask.stderr


def _broken_copy(dataset, root: Path) -> Path:
    import shutil

    shutil.copytree(dataset.images_dir, root / "images")
    (root / "images" / f"{dataset.frame_names[1]}.jpg").write_bytes(b"not an image")
    return root / "images"


@pytest.mark.parametrize("how", [["-j", "2"], ["--scheduler", "local:2"]])
def test_an_unreadable_frame_in_a_worker_is_reported_as_in_one_process(dataset, tmp_path, how):
    if how[0] == "--scheduler":
        pytest.importorskip("distributed")
    images = _broken_copy(dataset, tmp_path)
    common = [images, "--hbb_dir", dataset.hbb_dir, "-nb"]
    one = run(*common, "--obb_dir", tmp_path / "one")
    many = run(*common, "--obb_dir", tmp_path / "many", *how)
    assert one.exit_code == many.exit_code == 1
    assert f"{images / dataset.frame_names[1]}.jpg: cannot read image" in one.stderr
    messages = [line for line in many.stderr.splitlines() if not line.startswith("hbb2obb: Dask scheduler")]
    assert "\n".join(messages) + "\n" == one.stderr.replace("one", "many")
    assert TIMED.sub(" in T s ", one.stdout).replace("one", "X") == TIMED.sub(" in T s ", many.stdout).replace(
        "many", "X")


def test_other_errors_in_a_worker_end_the_run_as_in_one_process(dataset, tmp_path, monkeypatch):
    """The pool's workers are forked from this process, so they convert with the patched function."""
    from hbb2obb.converters.image import converter

    real = converter.convert_frame
    victim = dataset.frame_names[3]

    def failing(image_path, *args, **kwargs):
        if Path(image_path).stem == victim:
            raise UsageError(f"{image_path}: made to fail")
        if Path(image_path).stem == dataset.frame_names[4]:
            raise ZeroDivisionError("a bug")
        return real(image_path, *args, **kwargs)

    monkeypatch.setattr(converter, "convert_frame", failing)
    common = [dataset.images_dir, "--hbb_dir", dataset.hbb_dir, "-nb"]
    one = run(*common, "--obb_dir", tmp_path / "one")
    two = run(*common, "--obb_dir", tmp_path / "two", "-j", "2")
    # The first failing frame in frame order ends a serial run; in a pool either may come first.
    assert one.exit_code == 2 and one.stderr == f"hbb2obb: error: {dataset.images_dir / victim}.jpg: made to fail\n"
    assert (two.exit_code, two.stderr) == (one.exit_code, one.stderr) or isinstance(two.exception, ZeroDivisionError)


def test_a_worker_lost_on_the_cluster_names_its_frame():
    class KilledWorker(Exception):
        allowed_failures = 2

    with pytest.raises(Hbb2ObbError, match=r"^images/a\.jpg: worker lost: .* died 3 time\(s\).*--resume"):
        _frame_failed((Path("/abs/images/a.jpg"), Path("/abs/h/a.txt"), None, "images/a.jpg", "h/a.txt"),
                      KilledWorker())
    with pytest.raises(ValueError, match="as it was"):
        _frame_failed((None,) * 5, ValueError("as it was"))


@pytest.mark.parametrize("extra, message", [
    (["-j", "-1"], "--jobs must be 0 (all cores) or positive"),
    (["-j", "2", "--scheduler", "local:2"], "--jobs runs local processes; with --scheduler the cluster's workers "
                                            "run the frames"),
    (["--scheduler", "somewhere"], "expected a scheduler address"),
])
def test_usage_errors_exit_2_before_anything_is_written(dataset, tmp_path, extra, message):
    result = run(dataset.images_dir, "--hbb_dir", dataset.hbb_dir, "--obb_dir", tmp_path / "out", "-nb", *extra)
    assert result.exit_code == 2 and message in result.stderr and "Traceback" not in result.output
    assert not (tmp_path / "out").exists()


def test_resume_keeps_what_is_complete_and_refuses_other_settings(dataset, tmp_path):
    common = [dataset.images_dir, "--hbb_dir", dataset.hbb_dir, "--obb_dir", tmp_path / "out", "-nb"]
    fresh = run(*common, "--resume")
    assert fresh.exit_code == 0 and "Resuming: no record of an earlier run" in fresh.stdout
    again = run(*common, "--resume", "-j", "2")
    assert again.exit_code == 0, again.output
    assert f"Resuming: {len(dataset.frame_names)} of {len(dataset.frame_names)} frame(s) complete" in again.stdout
    assert TIMED.sub(" in T s ", again.stdout).splitlines()[1:] == TIMED.sub(" in T s ", fresh.stdout).splitlines()[1:]
    other = run(*common, "--resume", "--imgsz", "64")
    assert other.exit_code == 2 and "records a run with other settings (job differ)" in other.stderr
    assert run(*common, "--imgsz", "64").exit_code == 0  # without --resume: converted again, its own files replaced


# --------------------------------------------------------------------------- a real kill


@pytest.fixture(scope="module")
def larger(tmp_path_factory):
    """Enough frames for a run to be killed in the middle."""
    from hbb2obb.synthetic.dataset import generate_dataset

    return generate_dataset(tmp_path_factory.mktemp("kill"), n_frames=48, boxes_per_frame=(10, 20), seed=9,
                            width=640, height=360)


def _command(larger, jobs: str, *extra) -> list:
    return [str(CONSOLE), str(larger.images_dir), "--hbb_dir", str(larger.hbb_dir), "--obb_dir", "labels_obb",
            "--confidence_dir", "confidence", "--save_provenance", "-nb", "-j", jobs, *extra]


def _labels(folder: Path) -> list:
    return sorted(folder.glob("*.txt")) if folder.is_dir() else []


@pytest.fixture(scope="module")
def uninterrupted(larger, tmp_path_factory):
    """The files and report of a run in one process, never stopped."""
    whole = tmp_path_factory.mktemp("whole")
    reference = subprocess.run(_command(larger, "1"), cwd=whole, capture_output=True, text=True, timeout=300)
    assert reference.returncode == 0, reference.stderr
    return whole, reference, files(whole)


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_killed_run_resumes_to_the_files_of_an_uninterrupted_one(larger, uninterrupted, tmp_path, jobs):
    whole, reference, expected = uninterrupted
    killed = tmp_path / "killed"
    killed.mkdir()
    process = subprocess.Popen(_command(larger, jobs), cwd=killed, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 120
    while len(_labels(killed / "labels_obb")) < 3 and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    os.killpg(process.pid, signal.SIGKILL)  # the command and its workers, as a machine going down would
    process.wait(timeout=60)
    left = _labels(killed / "labels_obb")
    assert 3 <= len(left) < len(larger.frame_names), "the run was not stopped in the middle"
    for path in left:  # no half file: each one is whole, as the uninterrupted run wrote it
        assert path.read_bytes() == expected[f"labels_obb/{path.name}"]
    assert not (killed / "PROVENANCE_obb.txt").exists()

    resumed = subprocess.run(_command(larger, jobs, "--resume"), cwd=killed, capture_output=True, text=True,
                             timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    kept = int(re.search(r"Resuming: (\d+) of 48 frame\(s\) complete", resumed.stdout).group(1))
    assert len(left) - 1 <= kept <= len(left)  # at most the frame being written at the kill is done again
    assert files(killed) == expected
    report = TIMED.sub(" in T s ", resumed.stdout.replace(str(killed), "OUT")).splitlines()
    assert report[1:] == TIMED.sub(" in T s ", reference.stdout.replace(str(whole), "OUT")).splitlines()
    # the killed run's locks are taken over, each with a warning naming it; the rest is the reference's
    lines = resumed.stderr.splitlines(keepends=True)
    taken_over = [line for line in lines if "took over the lock of a conversion that is gone" in line]
    assert taken_over and all(f"(pid {process.pid} on " in line for line in taken_over)
    assert "".join(line for line in lines if line not in taken_over) == reference.stderr
    leftovers = [p.name for p in killed.rglob(".*") if ".tmp" in p.name or p.name.endswith(".lock")]
    assert leftovers == []


HOLD_OUTPUT = """\
import sys
from hbb2obb.io.folder_lock import CONVERSION_LOCK, FolderLock
with FolderLock(sys.argv[1], CONVERSION_LOCK, "conversion"):
    print("held", flush=True)
    sys.stdin.readline()
"""


def test_a_second_conversion_into_a_folder_in_use_is_refused_before_it_writes(dataset, tmp_path):
    """Two runs into one folder would leave frames of both under one record: the second is refused
    (exit 2, naming the holder), whichever of its output folders is in use; once the holder is
    gone, its lock is taken over with a warning."""
    out = tmp_path / "out"
    pictures = out / "pictures"
    holder = subprocess.Popen([sys.executable, "-c", HOLD_OUTPUT, str(pictures)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        refused = run(*every_output(dataset, out))
        assert refused.exit_code == 2 and "Traceback" not in refused.output
        assert f"{pictures} is in use by another conversion (pid {holder.pid} on " in refused.stderr
        assert "give another --obb_dir" in refused.stderr
        # nothing written, and the folders the refused run made for its locks are gone again
        assert sorted(str(p.relative_to(out)) for p in out.rglob("*")) == ["pictures",
                                                                         "pictures/.hbb2obb-convert.lock"]
    finally:
        holder.kill()  # no clean-up of its own: its lock file stays behind
        holder.communicate(timeout=30)
    assert (pictures / ".hbb2obb-convert.lock").is_file()
    taken = run(*every_output(dataset, out))
    assert taken.exit_code == 0, taken.output
    assert f"took over the lock of a conversion that is gone (pid {holder.pid} on" in taken.stderr
    assert not list(out.rglob(".hbb2obb-convert.lock"))
    assert len(list((out / "labels_obb").glob("*.txt"))) == len(dataset.frame_names)


def test_two_conversions_started_together_one_refused_one_complete(dataset, tmp_path):
    """Real processes: whichever starts first converts every frame, the other exits 2 and writes nothing."""
    args = [str(CONSOLE), str(dataset.images_dir), "--hbb_dir", str(dataset.hbb_dir), "--obb_dir",
            str(tmp_path / "obb"), "--save_provenance", "-nb"]
    runs = [subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for _ in range(2)]
    ended = [(p.wait(timeout=120), *p.communicate()) for p in runs]
    codes = sorted(code for code, _, _ in ended)
    if codes == [0, 0]:  # the first ended before the second looked: nothing to check about refusal
        pytest.skip("the two runs did not overlap on this machine")
    assert codes == [0, 2], ended
    refused = next(err for code, _, err in ended if code == 2)
    assert "is in use by another conversion" in refused and "Traceback" not in refused
    assert len(list((tmp_path / "obb").glob("*.txt"))) == len(dataset.frame_names)
