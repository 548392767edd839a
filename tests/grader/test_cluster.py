"""Grading on a Dask cluster (`grade --cluster`), with real processes: a `dask scheduler` and
`dask worker`s started here on free ports of 127.0.0.1 (grader/cluster/local.py), and stopped by
process group whatever happens.

The grades must be those of the local pool, whatever the cluster goes through: a worker killed
in the middle of the batch (its job runs again elsewhere), a worker with other course code (not
used), the scheduler killed (the run stops with one message, exit 2, and the same command resumes).
A job that ends its own worker host is charged to its task on the cluster as on one machine.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

from factory import CORPUS, REPO, filled_notebook, run_grader, write_notebook
from grader.cluster.local import LocalCluster

pytestmark = pytest.mark.slow  # clusters and grade runs: about a minute and a half

CH2 = "02_attention"
SEED = "5"
OPTIONS = ("--seed", SEED, "--device", "cpu", "--timeout", "10", "--memory-mb", "1024")
SLOW_START = "import time\ntime.sleep(1.5)\n"  # a job that lasts, so that one is in flight when a worker dies


def class_of_students(folder):
    """Six chapter-02 notebooks: right, wrong, a crash of the child, one that kills its worker host,
    and two whose cells take a while (jobs still running when the test pulls the plug)."""
    students = {
        "ada": {},
        "ben": {"2.1": (CORPUS / "2.1" / "wrong_softmax_dim0.py").read_text()},
        "cy": {"2.3": "import os\nos._exit(3)\n"},
        # The child kills its parent, the worker host: charged to the task, here and on a cluster.
        "dee": {"2.2": "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\n"},
        "eve": {task: SLOW_START + reference for task, reference in _reference(("2.1", "2.4", "2.5")).items()},
        "fay": {task: SLOW_START + reference for task, reference in _reference(("2.2", "2.3")).items()},
    }
    for name, cells in students.items():
        write_notebook(filled_notebook(CH2, cells), folder / name / f"{CH2}.ipynb")
    return folder


def _reference(task_ids):
    manifest = json.loads((REPO / "grader" / "reference" / "manifest.json").read_text())
    return {task_id: manifest[CH2]["tasks"][task_id]["source"] for task_id in task_ids}


def without_timings(records):
    return [{key: value for key, value in record.items() if key != "duration_s"} for record in records]


def results_without_timings(out):
    lines = (out / "results.jsonl").read_text().splitlines()
    return without_timings([json.loads(line) for line in lines])


def grade_command(submissions, out, address):
    return [sys.executable, "-m", "grader", "grade", str(submissions), "--out", str(out), "--quiet", *OPTIONS,
            "--cluster", address]


@pytest.fixture(scope="module")
def submissions(tmp_path_factory):
    return class_of_students(tmp_path_factory.mktemp("class"))


@pytest.fixture(scope="module")
def local(submissions, tmp_path_factory):
    """The grades of the local pool: what every cluster run must reproduce."""
    out = tmp_path_factory.mktemp("local")
    return run_grader([submissions], out, "--jobs", "2", *OPTIONS), out


def other_course_code(tmp_path):
    """A copy of the course package with one line more: a worker that imports it has other code."""
    copy = tmp_path / "other_course"
    shutil.copytree(REPO / "course" / "gptcourse", copy / "gptcourse")
    with open(copy / "gptcourse" / "checking" / "judge.py", "a") as f:
        f.write("\n# a different judge\n")
    return copy


def test_a_job_that_ends_its_worker_host_is_charged_to_its_task_locally(local):
    records, _ = local
    by_key = {(r["submission"], r["task"]): r for r in records}
    assert by_key[("dee", "2.2")]["status"] == "error" and by_key[("dee", "2.2")]["points"] == 0
    assert "ended before reporting" in by_key[("dee", "2.2")]["feedback"]
    assert by_key[("cy", "2.3")]["status"] == "error"
    assert all(by_key[("eve", t)]["status"] == "passed" for t in ("2.1", "2.4", "2.5"))


def test_a_killed_worker_costs_nobody_and_a_worker_with_other_code_is_not_used(local, submissions, tmp_path):
    """Three workers, one of them with another copy of the course package: it is named and not
    used. One of the two others is killed (SIGKILL) while it runs a job: the job runs again on
    the last worker, and grades.json and results.jsonl equal the local pool's, timings aside."""
    records, local_out = local
    out = tmp_path / "out"
    odd = {"PYTHONPATH": os.pathsep.join([str(other_course_code(tmp_path)), str(REPO)])}
    with LocalCluster(workers=3, worker_env={"worker-3": odd}) as cluster:
        run = subprocess.Popen(grade_command(submissions, out, cluster.address), cwd=REPO,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            victim = _worker_with_a_job(cluster, ("worker-1", "worker-2"))
            cluster.kill_worker(victim)
            stdout, stderr = run.communicate(timeout=300)
        finally:
            _stop(run)
    assert run.returncode == 0, stderr
    assert "warning: Dask worker" in stderr and "is not used: its course package (gptcourse) or grader differs" in stderr
    assert stderr.count("is not used") == 1, stderr
    assert without_timings(json.loads((out / "grades.json").read_text())) == without_timings(records)
    assert results_without_timings(out) == results_without_timings(local_out)
    assert json.loads((out / "run.json").read_text())["isolation"]["detail"].startswith("on 2 worker(s) of the Dask cluster")


def test_a_lost_scheduler_stops_the_run_and_the_same_command_resumes(local, submissions, tmp_path):
    records, _ = local
    out = tmp_path / "out"
    with LocalCluster(workers=2) as cluster:
        command = grade_command(submissions, out, cluster.address)
        run = subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            _wait_for(lambda: len(_lines(out / "results.jsonl")) >= 3, "the first records")
            cluster.kill_scheduler()
            stdout, stderr = run.communicate(timeout=120)
        finally:
            _stop(run)
        assert run.returncode == 2, (stdout, stderr)
        assert "the Dask scheduler at" in stderr and "is gone" in stderr and "run the same command again" in stderr
        assert "Traceback" not in stderr, stderr
        kept = {(r["submission"], r["task"]): r["duration_s"] for r in map(json.loads, _lines(out / "results.jsonl"))}
        assert 3 <= len(kept) < len(records)
        # The same command, with the scheduler back at its address.
        cluster.stop()
        with LocalCluster(workers=2) as again:
            again_command = grade_command(submissions, out, again.address)
            result = subprocess.run(again_command, cwd=REPO, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    final = json.loads((out / "grades.json").read_text())
    assert without_timings(final) == without_timings(records)
    # What the first run finished was kept, not graded again.
    assert all(r["duration_s"] == kept[(r["submission"], r["task"])] for r in final if (r["submission"], r["task"]) in kept)


def test_no_usable_worker_stops_before_grading(submissions, tmp_path):
    out = tmp_path / "out"
    odd = {"PYTHONPATH": os.pathsep.join([str(other_course_code(tmp_path)), str(REPO)])}
    with LocalCluster(workers=1, worker_env={"worker-1": odd}) as cluster:
        result = subprocess.run(grade_command(submissions, out, cluster.address), cwd=REPO, capture_output=True,
                                text=True, timeout=300)
    assert result.returncode == 2, result.stderr
    assert "no worker of the Dask cluster at" in result.stderr and "can grade" in result.stderr
    assert not (out / "grades.json").exists() and not _lines(out / "results.jsonl")


def test_an_unreachable_scheduler_is_one_message_and_exit_2(submissions, tmp_path):
    from grader.cluster.local import free_port

    result = subprocess.run(grade_command(submissions, tmp_path / "out", f"tcp://127.0.0.1:{free_port()}"),
                            cwd=REPO, capture_output=True, text=True, timeout=300,
                            env=dict(os.environ, DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT="3s"))
    assert result.returncode == 2, result.stderr
    assert "the Dask scheduler cannot be reached" in result.stderr and "Traceback" not in result.stderr


# ------------------------------------------------------------------------------------------

def _worker_with_a_job(cluster, names, timeout=120):
    """The name of one of `names` that is running a job now (the scheduler's view)."""
    from distributed import Client

    deadline = time.monotonic() + timeout
    with Client(cluster.address, set_as_default=False) as client:
        while time.monotonic() < deadline:
            info = client.scheduler_info(n_workers=-1)["workers"]
            processing = client.processing()
            for address, tasks in processing.items():
                name = info.get(address, {}).get("name")
                if name in names and any(str(task).startswith("grade-") for task in tasks):
                    return name
            time.sleep(0.05)
    raise AssertionError("no worker ever ran a grading job")


def _lines(path):
    return path.read_text().splitlines() if path.exists() else []


def _wait_for(condition, what, timeout=180):
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {timeout} s for {what}")
        time.sleep(0.05)


def _stop(process):
    if process.poll() is None:
        process.send_signal(signal.SIGKILL)
        process.wait(30)


def test_the_by_hand_commands_of_docs_grading_md_grade_as_written(local, submissions, tmp_path, mirror_dir):
    """docs/grading.md, "On a few machines by hand": the scheduler, a worker with two processes
    and the grade command, as written there (this machine's free port for 8786, the test's
    folders for submissions/ and grades)."""
    from grader.cluster.local import free_port

    text = (REPO / "docs" / "grading.md").read_text()
    block = text.split("### On a few machines by hand", 1)[1].split("```bash\n", 1)[1].split("```", 1)[0]
    commands = [line for line in block.splitlines() if line and not line.startswith("#")]
    assert len(commands) == 3, commands
    port = str(free_port())
    substituted = [line.replace("8786", port).replace("SCHEDULER", "127.0.0.1").replace("/data/gptcourse", str(mirror_dir))
                   .replace("submissions/", str(submissions)).replace("--out grades", f"--out {tmp_path / 'grades'}")
                   for line in commands]
    started = [subprocess.Popen(["bash", "-c", line], cwd=REPO, start_new_session=True,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for line in substituted[:2]]
    try:
        result = subprocess.run(["bash", "-c", substituted[2] + " --quiet " + " ".join(OPTIONS)], cwd=REPO,
                                capture_output=True, text=True, timeout=300)
    finally:
        for process in started:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(30)
    assert result.returncode == 0, result.stderr
    records, _ = local
    assert without_timings(json.loads((tmp_path / "grades" / "grades.json").read_text())) == without_timings(records)
