"""Grading on a Dask distributed cluster: `python -m grader grade PATH --out DIR --cluster ADDRESS`.

The grading process stays the trusted centre: it finds the submissions, computes every expected
observation and every verdict, and writes the grade folder, as without a cluster. Only the jobs
travel: `ClusterPool` has the worker pool's interface (grader/grading/pool.py: run, close, end_strays,
isolation, scrub) and sends each job to a worker of a running cluster (started by hand with
`dask scheduler` and `dask worker`, by dask-jobqueue on Slurm, PBS, SGE or LSF, or by the Dask
Kubernetes operator), where grader/cluster/worker.py runs it in the same worker host, sandbox
and limits as on one machine and sends the host's reply back unchecked. Here it is checked
(pool.outcome_of) and cleaned exactly as a local host's.

What can go wrong, and what it costs:
- a worker, or its machine, dies in the middle of a job, or loses its connection: the scheduler
  runs the job again on another worker (Dask's own rescheduling); the student loses nothing;
- a job kills its own worker host: the worker's pool reports it, and it is charged to its task
  exactly as on one machine ("the process running your code ended before reporting");
- a job whose worker died every time it ran it (Dask gives up after
  `distributed.scheduler.allowed-failures`, 3 by default): charged to its task, saying so;
- the scheduler goes away, or no usable worker is left for WORKER_WAIT seconds: the run stops
  with one message (exit status 2); every finished task is in results.jsonl already, so the same
  command run again resumes.

Before the first job every worker is checked as the grading machine is (grader/grading/preflight.py):
the same course package and grader code (cluster_worker.fingerprint), the same torch, the data
sets of the chapters being graded and tiktoken's files, bubblewrap when asked for. A worker that
fails is named in one line and not used; when none passes, nothing is graded (exit status 2).
Workers that join later (an autoscaling cluster) are checked when they appear.
"""
import logging
import sys
import time
import uuid
from concurrent.futures import CancelledError

from grader.cluster import worker as cluster_worker
from grader.grading import pool
from grader.grading.preflight import PreflightError, raise_if
from grader.grading.sandbox import Isolation

WORKER_WAIT = 120  # seconds to wait for a usable worker (at the start, or when all are gone)
IN_FLIGHT_PER_WORKER = 2  # jobs handed to the scheduler per usable worker: one running, one waiting
CHECK_EVERY = 10  # seconds between looks for new workers


class ClusterLost(PreflightError):
    """The scheduler went away, or no usable worker is left: the run stops here and resumes later."""


class ClusterPool:
    """The worker pool's interface over the workers of a Dask cluster."""

    def __init__(self, address, sandbox_option, chapters, device):
        self.address = address
        self.sandbox_option = sandbox_option
        self.chapters = list(chapters)
        self.device = device
        self.scrub = None  # set by the engine, as for a local pool
        self.client = _connect(address)
        self.usable, self.refused, self.isolations, self.with_cuda = set(), {}, {}, set()
        self._expected = _expectations_of_workers()
        self._check_new_workers(wait=WORKER_WAIT)
        if not self.usable:
            self.close()
            raise_if([f"no worker of the Dask cluster at {address} can grade: "
                      + "; ".join(f"{worker}: {', '.join(problems)}" for worker, problems in self.refused.items())
                      if self.refused else f"the Dask cluster at {address} has no worker (waited {WORKER_WAIT} s)"])
        self.isolation = self._isolation()
        self.devices = self._devices()

    def _devices(self):
        """The run's device matrix, decided by the workers (this machine may have no GPU): with
        --device cuda the workers without CUDA were refused; with auto, CUDA cases run when every
        usable worker has a GPU, and from then on a worker that joins needs one too."""
        if self.device == "cpu":
            return ["cpu"]
        if self.device == "auto":
            self.device = "cuda" if self.usable <= self.with_cuda else "cpu"
            if self.device == "cpu" and self.with_cuda & self.usable:
                print("note: only some workers of the Dask cluster have a CUDA GPU: the CUDA cases are not run "
                      "(with --device cuda only the workers with a GPU are used)", file=sys.stderr)
        return ["cpu", "cuda"] if self.device == "cuda" else ["cpu"]

    # -- the pool's interface -------------------------------------------------------------------

    def run(self, items, timeout, memory_mb):
        """items: (item, job) pairs. Yields (item, outcome) as the cluster finishes them."""
        try:
            yield from self._run_jobs(items, timeout, memory_mb)
        except ClusterLost:
            raise
        except Exception as exc:  # noqa: BLE001 - see _lost_or_raise
            self._lost_or_raise(exc)

    def _run_jobs(self, items, timeout, memory_mb):
        from distributed import as_completed

        waiting = list(reversed(items))  # popped from the end: in the order given
        request = {"timeout": timeout, "memory_mb": memory_mb}
        running = {}  # future -> (item, job)
        done = as_completed([], loop=self.client.loop, with_results=False)
        last_check = time.monotonic()
        while waiting or running:
            while waiting and len(running) < IN_FLIGHT_PER_WORKER * max(1, len(self.usable)):
                item, job = waiting.pop()
                future = self._submit(dict(request, job=job))
                running[future] = (item, job)
                done.add(future)
            future = self._next(done)
            if future is not None:
                item, job = running.pop(future)
                outcome = self._outcome(future, job)
                if outcome is None:  # the worker, not the job, failed: run it again elsewhere
                    waiting.append((item, job))
                else:
                    yield item, outcome
            if time.monotonic() - last_check > CHECK_EVERY:
                last_check = time.monotonic()
                self._check_new_workers()
                self._wait_for_a_worker()

    def checked_workers(self):
        """The usable workers in the cluster now, after the preflight of any that joined since the
        last look; waits for one as a run does (ClusterLost after WORKER_WAIT s without). For a
        caller that submits to the workers itself (the class challenge's leaderboard)."""
        self._check_new_workers()
        self._wait_for_a_worker()
        return sorted(self._alive_usable())

    def close(self):
        try:
            self.client.close(timeout=10)
        except Exception:  # noqa: BLE001 - a scheduler that is gone cannot be told goodbye
            pass

    def end_strays(self):
        """Each worker's pool ends what its hosts leave behind, on its own machine."""
        return 0

    # -- jobs -------------------------------------------------------------------------------------

    def _submit(self, request):
        return self.client.submit(cluster_worker.run_job, request, self.sandbox_option,
                                  key=f"grade-{request['job']['task']}-{uuid.uuid4().hex}", pure=False,
                                  workers=sorted(self.usable), allow_other_workers=False)

    def _next(self, done):
        """The next finished future (None after a short wait); ClusterLost when the scheduler is gone."""
        try:
            batch = done.next_batch(block=False)
        except Exception as exc:  # noqa: BLE001 - the client's errors on a lost scheduler vary
            raise self._lost(exc) from None
        if batch:
            for future in batch[1:]:  # one at a time: the others come next
                done.add(future)
            return batch[0]
        if not self._connected():
            raise self._lost(None)
        time.sleep(0.005)
        return None

    def _outcome(self, future, job):
        """The outcome of a finished job, checked here as a local host's reply is; None when the
        worker could not run it (that worker is then no longer used)."""
        if future.status == "finished":
            reply = future.result()
            if isinstance(reply, dict) and "worker_error" in reply:
                worker = str(reply.get("worker"))
                self.usable.discard(worker)
                self.refused[worker] = [str(reply["worker_error"])[:500]]
                print(f"warning: Dask worker {worker} could not run a grading job and is no longer used: "
                      f"{str(reply['worker_error'])[:500]}", file=sys.stderr)
                self._wait_for_a_worker()
                return None
            scrub = (lambda message: self.scrub(message, job)) if self.scrub else None
            outcome = pool.outcome_of(reply, scrub)
            seconds = reply.get("seconds") if isinstance(reply, dict) else None
            if isinstance(seconds, (int, float)) and not isinstance(seconds, bool) and 0 <= seconds < 10**6:
                outcome["seconds"] = seconds
            return outcome
        error = future.exception() if future.status == "error" else None
        if type(error).__name__ == "KilledWorker":
            # Dask ran it on a worker that died, every time: the job's own doing (it ended its worker).
            return {"died": "the worker process running it ended each time it was run"}
        raise self._lost(error)

    # -- workers ------------------------------------------------------------------------------------

    def _check_new_workers(self, wait=0):
        """Run the preflight on workers not seen before; keep those with nothing missing."""
        deadline = time.monotonic() + wait
        while True:
            workers = set(self._scheduler_workers())
            new = sorted(workers - self.usable - set(self.refused))
            if new:
                try:
                    answers = self.client.run(cluster_worker.preflight, *self._expected, self.chapters,
                                              self.sandbox_option, self.device, workers=new)
                except Exception as exc:  # noqa: BLE001 - see _lost_or_raise
                    self._lost_or_raise(exc)
                for worker, answer in answers.items():
                    problems = answer.get("problems") if isinstance(answer, dict) else ["no answer"]
                    if problems:
                        self.refused[worker] = problems
                        print(f"warning: Dask worker {worker} is not used: {'; '.join(problems)}", file=sys.stderr)
                    else:
                        self.usable.add(worker)
                        self.isolations[worker] = answer.get("isolation")
                        if answer.get("cuda"):
                            self.with_cuda.add(worker)
            # Stop waiting once there is a usable worker, or once workers came and all were refused.
            if self.usable or self.refused or time.monotonic() >= deadline:
                return
            time.sleep(1)

    def _scheduler_workers(self):
        try:
            return self.client.scheduler_info(n_workers=-1)["workers"].keys()
        except Exception as exc:  # noqa: BLE001
            raise self._lost(exc) from None

    def _alive_usable(self):
        return self.usable & set(self._scheduler_workers())

    def _wait_for_a_worker(self):
        """Stop the run when no usable worker has been left for WORKER_WAIT seconds."""
        deadline = time.monotonic() + WORKER_WAIT
        while not self._alive_usable():
            self._check_new_workers()
            if self._alive_usable():
                return
            if time.monotonic() > deadline:
                raise ClusterLost(f"no usable worker has been left in the Dask cluster at {self.address} for "
                                  f"{WORKER_WAIT} s: start workers and run the same command again; it resumes "
                                  f"where this run stopped")
            time.sleep(1)

    def _lost_or_raise(self, error):
        """An error from the Dask client: ClusterLost when it comes from a lost scheduler, else the
        error itself (a fault of ours, with its traceback). When the connection drops, the client
        cancels every future it holds, finished ones included ("Client lost the connection to the
        scheduler"), so any call (a result, a run on the workers) can raise between two checks."""
        if isinstance(error, CancelledError) or not self._connected():
            raise self._lost(error) from None
        raise error

    def _connected(self):
        return self.client.status in ("running", "newly-created")

    def _lost(self, error):
        why = f" ({type(error).__name__}: {error})" if error else ""
        return ClusterLost(f"the Dask scheduler at {self.address} is gone{why}: every task graded so far is "
                           f"kept in results.jsonl; run the same command again (with a scheduler) and it resumes")

    def _isolation(self):
        """The run's isolation for run.json: the workers', which all chose the same level or say so."""
        levels = {(i or {}).get("sandbox") for i in self.isolations.values()}
        sandbox = levels.pop() if len(levels) == 1 else "mixed"
        detail = (f"on {len(self.usable)} worker(s) of the Dask cluster at {self.address}: "
                  + "; ".join(sorted({(i or {}).get("detail", "") for i in self.isolations.values()})))
        return Isolation(sandbox, all((i or {}).get("reaper") for i in self.isolations.values()), detail)


def quiet_dask_logs():
    """Dask logs a lost connection with tracebacks; the grader says what happened in one message.
    Dask's own configuration gives some loggers a level of their own (distributed.client: warning),
    so quieting the parent "distributed" is not enough: every one of them is set."""
    loggers = logging.root.manager.loggerDict
    for name in ["distributed", "tornado"] + [n for n in loggers if n.startswith(("distributed.", "tornado."))]:
        logging.getLogger(name).setLevel(logging.CRITICAL)


def _connect(address):
    from distributed import Client

    quiet_dask_logs()

    try:
        return Client(address, set_as_default=False)  # waits distributed.comm.timeouts.connect (30 s)
    except Exception as exc:  # noqa: BLE001 - OSError, TimeoutError, ...: the cluster cannot be reached
        raise_if([f"--cluster {address}: the Dask scheduler cannot be reached ({type(exc).__name__}: {exc}); "
                  f"start it (docs/grading.md, 'Grading on a cluster') or grade without --cluster"])


def _expectations_of_workers():
    """What every worker must match: (course code fingerprint, torch version)."""
    import torch

    return cluster_worker.fingerprint(), torch.__version__
