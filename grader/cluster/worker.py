"""The Dask worker's side of grading on a cluster: what `python -m grader grade --cluster` sends
to each worker of a Dask distributed cluster, and nothing else.

A Dask worker runs jobs exactly as the grading machine does without a cluster: each job in a
worker host (gptcourse/checking/worker_host/) on this machine, in the same sandbox
(bubblewrap, or none) and with the same time and memory limits, through the same pool of hosts
(grader/grading/pool.py), one host per Dask worker process. It sends back the host's reply as it came:
the grading process checks it (pool.outcome_of) and judges it, as it does its own hosts'. A job
holds what the worker host needs (the setup cells, the reference code of the *earlier* tasks, the
student's cell, the cases' inputs), never the expected observations or the reference of the task
being graded, which stay in the grading process.

Start workers with one thread each (`dask worker ADDRESS --nthreads 1`): a worker process runs
one job at a time (a lock makes sure of it), so more jobs at once need more worker processes
(`--nworkers N`), each with its own host.

`preflight` runs on every worker before the first job (Client.run): the grading process uses only
the workers where it finds nothing missing.
"""
import hashlib
import importlib.util
import os
import threading

# What makes a job's result: the student package (probes, kinds, worker host, fixtures) and the
# grader's modules that run jobs on a worker (the leaderboard's train_on_worker among them). A
# worker whose copy differs is not used.
_FINGERPRINTED = ("gptcourse",)
_WORKER_MODULES = ("grader.cluster.worker", "grader.grading.pool", "grader.grading.sandbox",
                   "grader.outputs.leaderboard")

_LOCK = threading.Lock()
_POOLS = {}  # sandbox option -> the WorkerPool of this worker process


def fingerprint():
    """A sha256 over the code that runs a job here: every file of the gptcourse package (its
    modules and fixtures) and the grader's modules that run jobs (_WORKER_MODULES). Equal on two machines when they
    grade with the same code, whatever version string the packages carry."""
    import gptcourse

    digest = hashlib.sha256()
    package = os.path.dirname(os.path.abspath(gptcourse.__file__))
    files = [os.path.join(folder, name) for folder, _, names in os.walk(package) for name in names
             if name.endswith((".py", ".json"))]
    # Found, not imported: the leaderboard's module is read, never loaded, by a worker that grades.
    files += [os.path.abspath(importlib.util.find_spec(name).origin) for name in _WORKER_MODULES]
    for path in sorted(files, key=lambda p: os.path.relpath(p, os.path.dirname(package))):
        digest.update(os.path.relpath(path, os.path.dirname(package)).encode())
        with open(path, "rb") as f:
            digest.update(f.read())
    return digest.hexdigest()


def preflight(expected_fingerprint, torch_version, chapters, sandbox_option, device):
    """What this worker lacks to grade `chapters` as the grading process asks ([] when nothing),
    the isolation it would use, and whether it has a CUDA GPU (with --device auto the workers
    decide whether CUDA cases run): {"problems": [...], "isolation": {...} or None, "cuda": bool}.
    The checks of the grading machine itself (grader/grading/preflight.py), run here."""
    problems = []
    if fingerprint() != expected_fingerprint:
        problems.append("its course package (gptcourse) or grader differs from the grading process's: install "
                        "the same checkout on it (see docs/grading.md, 'Grading on a cluster')")
    import torch

    if torch.__version__ != torch_version:
        problems.append(f"it has torch {torch.__version__}, the grading process {torch_version}")
    from grader.grading import preflight as checks
    from grader.grading import sandbox

    problems += checks.machine_problems(None, device, sandbox_option)
    problems += checks.data_problems(chapters)
    isolation = None
    if not problems:
        isolation = sandbox.choose(sandbox_option).to_data()
    return {"problems": problems, "isolation": isolation, "cuda": torch.cuda.is_available()}


def run_job(request, sandbox_option):
    """Run one grading job in this worker's host; return the host's reply, unchecked, or
    {"worker_error": why, "worker": address} when this worker cannot run jobs (its hosts do not
    start, say): the grading process then stops using it and runs the job elsewhere."""
    try:
        with _LOCK:
            workers = _pool(sandbox_option)
            [(_, reply)] = list(workers.run([("job", request["job"])], request["timeout"], request["memory_mb"]))
        return reply
    except BaseException as exc:  # noqa: BLE001 - SystemExit too: the pool says so when hosts cannot start
        broken = _POOLS.pop(sandbox_option, None)
        if broken is not None:
            broken.close()
        return {"worker_error": f"{type(exc).__name__}: {exc}", "worker": _address()}


def _address():
    try:
        from distributed import get_worker

        return get_worker().address
    except (ImportError, ValueError):
        return "unknown"


def _pool(sandbox_option):
    """This worker process's pool of one host, started on its first job and kept for the next."""
    from grader.grading import pool, sandbox

    if sandbox_option not in _POOLS:
        _POOLS[sandbox_option] = pool.WorkerPool(sandbox.choose(sandbox_option), 1, raw=True)
    return _POOLS[sandbox_option]
