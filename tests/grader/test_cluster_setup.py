"""Grading on a cluster without starting one: the Slurm job script dask-jobqueue writes from
grader/cluster/slurm.py, what a job sent to a worker holds (never the expected observations nor
the reference of the task being graded), and the worker's preflight. The real processes are in
test_cluster.py."""
import json
import logging

import pytest

from factory import REPO, filled_notebook
from grader.cluster import pool as cluster, worker as cluster_worker
from grader.cluster.slurm import slurm_cluster


def test_the_slurm_job_script_runs_one_single_threaded_worker_from_the_checkout(tmp_path):
    made = slurm_cluster(workers=0, memory="6GB", walltime="01:30:00", checkout="/shared/course",
                         data_mirror="/shared/data", queue="teaching", host="127.0.0.1")
    try:
        script = made.job_script()
    finally:
        made.close()
    lines = script.splitlines()
    assert "#SBATCH --mem=6G" in lines and "#SBATCH -t 01:30:00" in lines and "#SBATCH -p teaching" in lines
    assert "#SBATCH --cpus-per-task=1" in lines
    assert lines.index("cd /shared/course") < lines.index("source .venv/bin/activate") \
        < lines.index("export GPTCOURSE_DATA_MIRROR=/shared/data")
    worker = next(line for line in lines if "distributed.cli.dask_worker" in line)
    assert worker.startswith("/shared/course/.venv/bin/python -m distributed.cli.dask_worker tcp://127.0.0.1:")
    assert "--nthreads 1" in worker
    assert lines.index(worker) > lines.index("export GPTCOURSE_DATA_MIRROR=/shared/data")


def test_a_job_sent_to_a_worker_holds_what_the_host_needs_and_no_answer(monkeypatch):
    """The worker gets the setup, the earlier tasks' reference, the student's cell and the cases'
    inputs: the graded task's own reference and the expected observations stay here."""
    from grader.grading import engine
    from grader.paths import load_manifest

    manifest = load_manifest()
    settings = engine.Settings(out_dir="unused", device="cpu", seed=3)
    expectations = engine.Expectations(3, ["cpu"])
    cases, expected = expectations.for_task("2.5")
    student = next(c["source"] for c in filled_notebook("02_attention")["cells"]
                   if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "task_2_4")
    job = engine.worker_job("2.5", student, manifest, cases, settings)
    captured = []
    client = type("Client", (), {"submit": lambda self, fn, *args, **kw: captured.append((fn, args, kw))})()
    pool = _pool_without_a_cluster(sandbox_option="none", usable={"tcp://w1"}, client=client)
    pool._submit({"timeout": 9, "memory_mb": 100, "job": job})
    [(function, (request, sandbox_option), options)] = captured
    assert function is cluster_worker.run_job and sandbox_option == "none"
    assert options["workers"] == ["tcp://w1"] and options["allow_other_workers"] is False
    sent = json.dumps(request, default=repr)
    own_reference = manifest["02_attention"]["tasks"]["2.5"]["source"]
    assert "class CausalAttention" not in sent, "the graded task's reference went to the worker"
    assert set(request) == {"timeout", "memory_mb", "job"}
    assert set(request["job"]) == {"task", "names", "earlier_names", "setup_sources", "reference_sources",
                                   "student_source", "student_filename", "cases", "memory_limit_mb", "threads"}
    assert request["job"]["reference_sources"] == [manifest["02_attention"]["tasks"][t]["source"]
                                                   for t in ("2.1", "2.2", "2.3", "2.4")]
    # The cases travel as inputs only: a case holds no observation of the reference.
    assert all(set(case) <= {"task", "kind", "label", "args", "arrays", "dtype", "device"} for case in request["job"]["cases"])
    assert expected and own_reference.splitlines()[0] not in sent


def test_the_worker_fingerprint_changes_with_the_course_code(tmp_path, monkeypatch):
    before = cluster_worker.fingerprint()
    assert before == cluster_worker.fingerprint()
    import gptcourse

    copy = tmp_path / "gptcourse"
    import shutil

    shutil.copytree(REPO / "course" / "gptcourse", copy)
    (copy / "checking" / "judge.py").write_text((copy / "checking" / "judge.py").read_text() + "\n# changed\n")
    monkeypatch.setattr(gptcourse, "__file__", str(copy / "__init__.py"))
    assert cluster_worker.fingerprint() != before


def test_a_worker_preflight_names_what_it_lacks(monkeypatch):
    import torch

    answer = cluster_worker.preflight("another fingerprint", "0.0.1", ["02_attention"], "none", "cpu")
    assert answer["isolation"] is None
    assert any("differs from the grading process's" in p for p in answer["problems"])
    assert any("the grading process 0.0.1" in p for p in answer["problems"])
    ok = cluster_worker.preflight(cluster_worker.fingerprint(), torch.__version__, ["02_attention"], "none", "cpu")
    assert ok == {"problems": [], "isolation": ok["isolation"], "cuda": False} and ok["isolation"]["sandbox"] == "none"


@pytest.mark.parametrize("status", ["cancelled"])
def test_a_lost_scheduler_is_one_message_naming_the_resume(status):
    pool = _pool_without_a_cluster(address="tcp://somewhere:8786")
    future = type("Future", (), {"status": status, "exception": lambda self: None})()
    with pytest.raises(cluster.ClusterLost, match="run the same command again"):
        pool._outcome(future, {})


def test_dask_logs_no_traceback_when_the_scheduler_goes():
    """Dask's configuration gives distributed.client a level of its own (warning): quieting only the
    parent logger let the client's reconnect errors through, tracebacks and all, after the one-line
    message that a lost scheduler gets."""
    import distributed  # noqa: F401 - importing it applies Dask's logging configuration

    cluster.quiet_dask_logs()
    for name in ("distributed", "distributed.client", "distributed.comm.core", "tornado.application"):
        assert not logging.getLogger(name).isEnabledFor(logging.ERROR), name


class _Completed:
    """distributed.as_completed without a cluster: _next is replaced, so it only collects."""

    def __init__(self, *args, **kwargs):
        pass

    def add(self, future):
        pass


class _CancelledFuture:
    """A finished job's future after the scheduler went: distributed's client cancels every future
    it holds when its connection drops, the finished ones too."""
    status = "finished"

    def result(self):
        from distributed.client import FutureCancelledError

        raise FutureCancelledError("grade-2.1", reason="scheduler-connection-lost",
                                   msg="Client lost the connection to the scheduler.")


def _pool_running_one_job(monkeypatch, client_status, future):
    """A ClusterPool (no cluster) whose one job, when submitted, is `future`, finished at once."""
    monkeypatch.setattr("distributed.as_completed", _Completed)
    client = type("Client", (), {"status": client_status, "loop": None})()
    pool = _pool_without_a_cluster(address="tcp://gone:8786", usable={"tcp://w1"}, refused={}, scrub=None,
                                   client=client)
    pool._submit = lambda request: future
    pool._next = lambda done: future
    return pool


def test_a_future_cancelled_by_a_lost_scheduler_stops_the_run_with_its_message(monkeypatch):
    """CI once saw a traceback (exit 1) instead of the one message (exit 2): the scheduler went
    away between the job's "finished" and the fetch of its result."""
    pool = _pool_running_one_job(monkeypatch, "connecting", _CancelledFuture())
    with pytest.raises(cluster.ClusterLost, match="at tcp://gone:8786 is gone .FutureCancelledError"):
        list(pool.run([("item", {"task": "2.1"})], 9, 100))


def test_an_error_of_ours_while_the_scheduler_is_there_keeps_its_traceback(monkeypatch):
    class BrokenFuture:
        @property
        def status(self):
            raise KeyError("a bug of ours")

    pool = _pool_running_one_job(monkeypatch, "running", BrokenFuture())
    with pytest.raises(KeyError, match="a bug of ours"):
        list(pool.run([("item", {"task": "2.1"})], 9, 100))


def _pool_without_a_cluster(**attributes):
    """A ClusterPool that never connected (its __init__ reaches for a scheduler), with the
    attributes a test needs."""
    pool = cluster.ClusterPool.__new__(cluster.ClusterPool)
    for name, value in attributes.items():
        setattr(pool, name, value)
    return pool
