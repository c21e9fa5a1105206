"""Grid points on a Dask cluster: ``hbb2obb-optimize --scheduler``, lost workers, retries, resume.

The tests that need ``dask.distributed`` skip without it; the ones that check the toolkit
works (and imports no Dask) without it always run. Every cluster is a ``LocalCluster`` on
127.0.0.1 that the test starts and stops.
"""

from __future__ import annotations

import dataclasses
import json
import os
import pickle
import re
import shlex
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from hbb2obb.cli.optimize import main
from hbb2obb.errors import InputError, UsageError
from hbb2obb.sweeps.benchmark import RunSpec, plan_run
from hbb2obb.sweeps.dask_executor import (
    DASK_INSTALL_HINT,
    DaskExecutor,
    PointFailed,
    SchedulerSpec,
    dask_client,
    failure_reason,
    failure_record,
    parse_scheduler,
    run_attempt,
    with_absolute_paths,
)
from hbb2obb.sweeps.runner import RESULTS_NAME, EvalSpec, SweepInputs, run_sweep, run_sweeps, serial_executor
from hbb2obb.synthetic.dataset import generate_dataset

FAKE = Path(__file__).resolve().parents[1] / "fake_obb_converter.py"
PYTHON = shlex.quote(sys.executable)
FACTORS = (0.0, 0.02, 0.04, 0.06)

# A converter wrapper that misbehaves on purpose, around the fake converter: it logs every call
# (scale factor, its parent process = the Dask worker, the output folder), kills its worker once
# (--kill_once MARKER) or at a scale factor every time (--kill_at), or fails the first N calls of
# each scale factor (--fail_first N); the remaining arguments go to fake_obb_converter.py.
TOOL = textwrap.dedent("""\
    import argparse, json, os, runpy, signal, sys
    parser = argparse.ArgumentParser()
    parser.add_argument("--log", required=True)
    parser.add_argument("--kill_once")
    parser.add_argument("--kill_at", type=float)
    parser.add_argument("--fail_first", type=int, default=0)
    args, rest = parser.parse_known_args()
    factor = float(rest[rest.index("--sf") + 1])
    with open(args.log) as handle:
        earlier = sum(json.loads(line)["sf"] == factor for line in handle)
    kill = args.kill_at == factor
    if args.kill_once:
        try:
            os.unlink(args.kill_once)
            kill = True
        except FileNotFoundError:
            pass
    with open(args.log, "a") as handle:
        record = {"sf": factor, "ppid": os.getppid(), "out_dir": rest[1], "kill": kill}
        handle.write(json.dumps(record) + "\\n")
    if kill:
        os.kill(os.getppid(), signal.SIGKILL)
        sys.exit(9)
    if earlier < args.fail_first:
        print(f"flaky: attempt {earlier + 1} failed", file=sys.stderr)
        sys.exit(4)
    sys.argv = ["fake_obb_converter.py"] + rest
    runpy.run_path(FAKE, run_name="__main__")
""").replace("FAKE", repr(str(FAKE)))


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def without_time(records):
    """The numbers of the records: their time, and what they were measured with, left out."""
    return [{k: v for k, v in r.items() if k not in ("execution_time", "measured_with")} for r in records]


def results(folder: Path) -> dict:
    return yaml.safe_load((folder / RESULTS_NAME).read_text())


@pytest.fixture
def data(tmp_path):
    return generate_dataset(tmp_path / "data", n_frames=3, boxes_per_frame=(6, 9), images=False, seed=3).root


@pytest.fixture
def tool(tmp_path):
    """``tool(options)``: a command template running TOOL with ``options``; its call log is ``tool.log``."""
    script, log = tmp_path / "tool.py", tmp_path / "tool.log"
    script.write_text(TOOL)
    log.write_text("")

    def template(options: str = "") -> str:
        return (f"{PYTHON} {shlex.quote(str(script))} --log {shlex.quote(str(log))} {options} "
                "{hbb_dir} {out_dir} --sf {scale_factor}")

    template.log = log
    template.calls = lambda: [json.loads(line) for line in log.read_text().splitlines()]
    return template


def command_plan(data, folder, template, factors=FACTORS):
    spec = RunSpec("tool", "command", template, axes={"scale_factors": factors})
    return plan_run(spec, SweepInputs(data / "images", data / "labels_obb_gt", data / "labels_hbb"), folder)


def fake_template(extra: str = "") -> str:
    return f"{PYTHON} {shlex.quote(str(FAKE))} {{hbb_dir}} {{out_dir}} --sf {{scale_factor}} {extra}"


# ------------------------------------------------------------------- without a cluster
@pytest.mark.parametrize("text, expected", [
    ("local", SchedulerSpec(None, os.cpu_count() or 1)),
    ("local:2", SchedulerSpec(None, 2)),
    (" local:16 ", SchedulerSpec(None, 16)),
    ("tcp://10.0.0.5:8786", SchedulerSpec("tcp://10.0.0.5:8786")),
    ("10.0.0.5:8786", SchedulerSpec("10.0.0.5:8786")),
    ("tls://scheduler.example.org:8786", SchedulerSpec("tls://scheduler.example.org:8786")),
])
def test_parse_scheduler(text, expected):
    spec = parse_scheduler(text)
    assert spec == expected
    assert spec.describe() == (f"local:{expected.n_workers}" if expected.address is None else expected.address)


@pytest.mark.parametrize("text", ["local:0", "local:two", "local:-1", "", "scheduler", "tcp://", "10.0.0.5"])
def test_parse_scheduler_rejects(text):
    with pytest.raises(UsageError, match="--scheduler"):
        parse_scheduler(text)


def test_nothing_imports_dask_without_scheduler(data):
    """A sweep without --scheduler, in a fresh interpreter, leaves dask out of sys.modules."""
    program = textwrap.dedent(f"""\
        import json, sys
        import hbb2obb.sweeps.runner, hbb2obb.sweeps.benchmark, hbb2obb.sweeps.dask_executor
        from hbb2obb.cli.optimize import main
        imported = sorted(m for m in sys.modules if m.split(".")[0] in ("dask", "distributed"))
        try:
            main([{str(data / 'images')!r}, {str(data / 'labels_obb_gt')!r}, "-sf", "0", "0.02", "--no_plot",
                  "-nb", "--jobs", "2", "--converter", "identity"], standalone_mode=False)
        finally:
            after = sorted(m for m in sys.modules if m.split(".")[0] in ("dask", "distributed"))
            print(json.dumps([imported, after]))
    """)
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == [[], []]
    assert len(results(data / "benchmark_results" / "identity")["all_results"]) == 2


def test_scheduler_without_dask_is_a_usage_error(data, monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)  # `import distributed` now fails as if absent
    result = invoke(data / "images", data / "labels_obb_gt", "--scheduler", "local:2", "--no_plot")
    assert result.exit_code == 2
    assert result.stderr.strip() == ("hbb2obb-optimize: error: --scheduler needs Dask, which is not installed: "
                                     f"{DASK_INSTALL_HINT}")
    assert not (data / "benchmark_results").exists()


@pytest.mark.parametrize("extra, message", [
    (["--scheduler", "local:2", "--jobs", "2"], "--jobs runs local processes"),
    (["--retries", "3"], "--retries applies to grid points run on a Dask cluster"),
    (["--scheduler", "local:2", "--retries", "-1"], "--retries must be 0 or more, got -1"),
    (["--scheduler", "local:none"], "local:N needs a whole number of workers"),
    (["--scheduler", "my-cluster"], "expected a scheduler address such as tcp://10.0.0.5:8786"),
])
def test_scheduler_usage_errors_stop_before_anything_runs(data, extra, message):
    result = invoke(data / "images", data / "labels_obb_gt", *extra, "--no_plot")
    assert result.exit_code == 2 and message in result.stderr, result.stderr
    assert not (data / "benchmark_results").exists()


def test_with_absolute_paths_keeps_links(tmp_path, monkeypatch):
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    (tmp_path / "real" / "classes.yaml").write_text("0: car\n")  # plan_run reads the label map
    monkeypatch.chdir(tmp_path)
    plan = plan_run(RunSpec("identity", "identity", evaluation={"map_path": "link/classes.yaml"}),
                    SweepInputs(None, Path("link"), Path("real")), Path("out"))
    moved = with_absolute_paths(plan)
    assert moved.inputs == SweepInputs(None, tmp_path / "link", tmp_path / "real")
    assert moved.evaluation.map_path == tmp_path / "link" / "classes.yaml"
    assert moved.folder == Path("out/identity") and moved.grid == plan.grid  # the client writes as told
    assert plan.scratch_root == tmp_path / "out" / "identity" / ".scratch"  # local points convert in the run folder,
    assert moved.scratch_root is None  # a worker in its own temp folder: it need not see the run folder


def test_worker_side_attempt_and_failure_records():
    ok = {"scale_factor": 0.1, "status": "ok", "avg_iou": 0.5}
    failed = {"scale_factor": 0.1, "status": "failed", "error": "exit status 3"}
    assert run_attempt(dict, ok) == ok
    with pytest.raises(PointFailed) as caught:
        run_attempt(dict, failed)
    travelled = pickle.loads(pickle.dumps(caught.value))  # what the scheduler sends back to the client
    assert travelled.record == failed and str(travelled) == "exit status 3"
    call = ("identity", {}, {"scale_factor": (0.02, 0.05), "imgsz": 640}, None, EvalSpec())
    assert failure_record(call, "worker lost") == {"scale_factor": [0.02, 0.05], "imgsz": 640, "execution_time": 0.0,
                                                   "status": "failed", "error": "worker lost"}
    assert failure_reason(ModuleNotFoundError("No module named 'hbb2obb'")) == \
        "ModuleNotFoundError: No module named 'hbb2obb'"


def test_run_sweeps_hands_every_plan_to_one_executor(data, tmp_path):
    """A benchmark's runs reach the executor as one list, so a cluster gets all the points at once."""
    inputs = SweepInputs(None, data / "labels_obb_gt", data / "labels_hbb")
    plans = [plan_run(RunSpec(name, "identity", axes={"scale_factors": factors}), inputs, tmp_path)
             for name, factors in (("a", (0.0, 0.05)), ("b", (0.02, 0.04, 0.06)))]
    handed = []

    def recording(function, calls):
        handed.append([call[2]["scale_factor"] for call in calls])
        yield from reversed(list(serial_executor(function, calls)))  # arrivals out of grid order

    seen = []
    outcomes = run_sweeps(plans, recording, on_point=lambda plan, record, best: seen.append(plan.name))
    assert handed == [[0.0, 0.05, 0.02, 0.04, 0.06]] and seen == ["b", "b", "b", "a", "a"]
    for plan, outcome in zip(plans, outcomes):
        alone = run_sweep(dataclasses.replace(plan, folder=tmp_path / f"{plan.name}-alone"))
        assert without_time(results(plan.folder)["all_results"]) == without_time(alone.records)
        assert [r["scale_factor"] for r in outcome.records] == list(plan.grid.as_dict()["scale_factor"])


# ------------------------------------------------------------------------ on a cluster
@pytest.fixture(autouse=True)
def dask_scratch_in_tmp_path(tmp_path):
    """Clusters a test starts keep Dask's own scratch space (``dask-scratch-space``, lock files
    included) under its tmp_path, not in the system temp folder."""
    try:
        import dask
    except ImportError:
        yield
        return
    with dask.config.set({"temporary-directory": str(tmp_path)}):
        yield


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    """A LocalCluster of two single-thread worker processes on 127.0.0.1; a task whose worker
    dies is run again once (allowed-failures 1), as ``local:N --retries 1`` would set it."""
    pytest.importorskip("distributed")
    import dask
    from distributed import Client, LocalCluster

    settings = {"distributed.scheduler.allowed-failures": 1, "distributed.scheduler.worker-saturation": 1.0,
                "temporary-directory": str(tmp_path_factory.mktemp("dask"))}
    with dask.config.set(settings):
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                               dashboard_address="127.0.0.1:0", silence_logs=50)
    with cluster, Client(cluster, set_as_default=False) as connected:
        yield connected


@pytest.fixture
def cluster_client(client):
    client.wait_for_workers(2, timeout=60)  # a worker killed by an earlier test is back
    return client


def test_unreachable_scheduler_is_an_input_error():
    pytest.importorskip("distributed")
    with pytest.raises(InputError, match="tcp://127.0.0.1:9: no Dask scheduler answered"):
        with dask_client(SchedulerSpec("tcp://127.0.0.1:9"), timeout=1):
            pass


def test_local_2_gives_the_numbers_of_jobs_1(data, tool):
    pytest.importorskip("distributed")
    args = [data / "images", data / "labels_obb_gt", "--command", fake_template("--fail_at 0.04"), "-sf", *FACTORS,
            "--no_plot", "-nb"]
    serial = invoke(*args, "-n", "serial", "--jobs", 1)
    dasked = invoke(*args, "-n", "dask", "--scheduler", "local:2")
    assert serial.exit_code == dasked.exit_code == 0, dasked.output
    assert re.search(r"^hbb2obb-optimize: Dask scheduler tcp://127\.0\.0\.1:\d+: 2 worker\(s\), 2 thread\(s\); "
                     r"dashboard http://127\.0\.0\.1:\d+/status", dasked.stderr, re.M), dasked.stderr
    a, b = results(data / "benchmark_results" / "serial"), results(data / "benchmark_results" / "dask")
    assert without_time(a["all_results"]) == without_time(b["all_results"])
    assert [r["status"] for r in b["all_results"]] == ["ok", "ok", "failed", "ok"]
    assert b["all_results"][2]["error"].startswith("exit status 3\n")
    assert a["best_parameters"]["scale_factor"] == b["best_parameters"]["scale_factor"]
    assert len(re.findall(r"^\[\d/4\] scale_factor=", dasked.stdout, re.M)) == 4
    config = yaml.safe_load((data / "benchmark_results" / "dask" / "run_config.yaml").read_text())
    assert (config["scheduler"], config["retries"]) == ("local:2", 2)
    assert config["gt_dir"] == str(data / "labels_obb_gt") and Path(config["gt_dir"]).is_absolute()


def test_a_killed_worker_is_replaced_and_the_sweep_completes(data, tmp_path, tool, cluster_client):
    workers = set(cluster_client.run(os.getpid).values())
    marker = tmp_path / "kill-once"
    marker.write_text("")
    plan = command_plan(data, tmp_path / "killed", tool(f"--kill_once {marker}"))
    outcome = run_sweep(plan, DaskExecutor(cluster_client, retries=1))
    assert not marker.exists()  # a worker was killed ...
    calls = tool.calls()
    killers = [c for c in calls if c["kill"]]
    assert len(killers) == 1 and killers[0]["ppid"] in workers
    assert sorted(c["sf"] for c in calls) == sorted(FACTORS + (killers[0]["sf"],))  # its point ran again
    cluster_client.wait_for_workers(2, timeout=60)
    assert killers[0]["ppid"] not in set(cluster_client.run(os.getpid).values())
    # each attempt converted into a temporary folder of its worker, removed when it finished
    folders = [Path(c["out_dir"]).parent for c in calls if not c["kill"]]
    assert all(f.name.startswith("hbb2obb-sweep-") for f in folders) and len(folders) == len(FACTORS)
    assert not any(f.exists() for f in folders)
    expected = run_sweep(command_plan(data, tmp_path / "serial", fake_template()))
    assert [r["status"] for r in outcome.records] == ["ok"] * len(FACTORS)
    assert without_time(outcome.records) == without_time(expected.records)


def test_a_point_whose_worker_always_dies_is_recorded_failed(data, tmp_path, tool, cluster_client):
    plan = command_plan(data, tmp_path / "doomed", tool("--kill_at 0.02"))
    outcome = run_sweep(plan, DaskExecutor(cluster_client, retries=1))
    statuses = {r["scale_factor"]: r["status"] for r in outcome.records}
    assert statuses == {0.0: "ok", 0.02: "failed", 0.04: "ok", 0.06: "ok"}
    error = outcome.records[1]["error"]
    assert error.startswith("worker lost: the worker running this point died 2 time(s)"), error
    assert [c["sf"] for c in tool.calls()].count(0.02) == 2  # allowed-failures 1: tried twice
    assert results(plan.folder)["all_results"] == outcome.records


@pytest.mark.parametrize("retries, statuses, attempts", [
    (2, ["ok", "ok", "failed", "ok"], [2, 2, 3, 2]),     # a flaky first attempt is retried; 0.04 always fails
    (0, ["failed"] * 4, [1, 1, 1, 1]),                  # no retries: the first failure is the record
])
def test_converter_errors_are_retried_a_bounded_number_of_times(data, tmp_path, tool, cluster_client, retries,
                                                                statuses, attempts):
    plan = command_plan(data, tmp_path / "flaky", tool("--fail_first 1 --fail_at 0.04"))
    outcome = run_sweep(plan, DaskExecutor(cluster_client, retries=retries))
    assert [r["status"] for r in outcome.records] == statuses
    counted = [c["sf"] for c in tool.calls()]
    assert [counted.count(f) for f in FACTORS] == attempts
    if retries:
        serial = run_sweep(command_plan(data, tmp_path / "serial", fake_template("--fail_at 0.04")))
        assert without_time(outcome.records) == without_time(serial.records)
    else:
        assert {r["error"] for r in outcome.records} == {"exit status 4\nflaky: attempt 1 failed"}


def test_benchmark_on_a_scheduler_address_runs_every_run_together(data, tmp_path, cluster_client):
    address = cluster_client.scheduler.address
    config = tmp_path / "bench.yaml"
    body = textwrap.dedent(f"""\
        img_source: {data / 'images'}
        gt_dir: {data / 'labels_obb_gt'}
        defaults:
          scale_factors: [-0.02, 0.0, 0.02]
        runs:
          - name: baseline
            converter: identity
          - name: tool
            command: {fake_template('--imgsz {imgsz}')}
            imgsz: [960, 1920]
        """)
    config.write_text(body + f"output_folder: {tmp_path / 'dask'}\n")
    dasked = invoke("-c", config, "--scheduler", address, "--no_plot", "-nb")
    assert dasked.exit_code == 0, dasked.output
    assert f"Dask scheduler {address}: 2 worker(s), 2 thread(s); dashboard {cluster_client.dashboard_link}\n" \
        in dasked.stderr
    lines = re.findall(r"^(baseline|tool): \[(\d)/(\d)\] ", dasked.stdout, re.M)
    assert sorted((run, total) for run, _, total in lines) == [("baseline", "3")] * 3 + [("tool", "6")] * 6
    config.write_text(body + f"output_folder: {tmp_path / 'serial'}\n")
    assert invoke("-c", config, "--no_plot", "-nb").exit_code == 0
    for run in ("baseline", "tool"):
        a, b = results(tmp_path / "serial" / run), results(tmp_path / "dask" / run)
        assert without_time(a["all_results"]) == without_time(b["all_results"]) and len(b["all_results"]) in (3, 6)
    summary = (tmp_path / "dask" / "summary.md").read_text()
    assert "2 run(s), a grid that varies by run, 9 conversions of the whole image set in total." in summary


def test_resume_after_the_client_is_interrupted(data, tool, cluster_client):
    """Ctrl-C once the first point is on disk; --resume on the cluster measures only the rest."""
    address = cluster_client.scheduler.address
    exe = Path(sys.executable).with_name("hbb2obb-optimize")
    factors = ("0", "0.01", "0.02", "0.03", "0.04", "0.05")
    args = [str(exe), str(data / "images"), str(data / "labels_obb_gt"), "-n", "slow", "--no_plot", "-nb",
            "--command", fake_template("--sleep 0.4"), "-sf", *factors, "--scheduler", address]
    path = data / "benchmark_results" / "slow" / RESULTS_NAME
    # Ctrl-C as a terminal delivers it: a suite started in the background (`make test &`)
    # inherits SIGINT ignored, and Python then leaves it ignored in the child.
    process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not (path.is_file() and results(path.parent)["all_results"]):
            time.sleep(0.05)
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=60)
    finally:
        process.kill()
    first = results(path.parent)["all_results"]
    assert process.returncode == 130 and "hbb2obb-optimize: error: interrupted" in stderr, stderr
    assert 1 <= len(first) < len(factors)
    resumed = invoke(*args[1:], "--resume")
    assert resumed.exit_code == 0, resumed.output
    assert f"{len(first)} already measured" in resumed.stdout
    assert len(re.findall(r"^\[\d/6\] scale_factor=", resumed.stdout, re.M)) == len(factors) - len(first)
    final = results(path.parent)["all_results"]
    assert [r["scale_factor"] for r in final] == [float(f) for f in factors]
    assert [r for r in final if r["scale_factor"] in {x["scale_factor"] for x in first}] == first
