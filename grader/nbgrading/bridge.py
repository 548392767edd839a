"""The hidden tests as nbgrader runs them: inside the check cell, in the student's kernel.

    ### BEGIN HIDDEN TESTS
    from grader.nbgrading.bridge import run_hidden_tests
    run_hidden_tests("2.5", globals())
    ### END HIDDEN TESTS
    check("2.5", CausalAttention)

The hidden tests come first. It runs the same cases, probes and verdict as the course grader, with
the earlier tasks' graded names bound to the reference while the task is tested (so one mistake
costs points once), within the course grader's time limit per task (and in a kernel with its
memory cap, gptcourse/checking/kernel_memory.py), and raises AssertionError with the feedback
when the task fails. When they pass, the public self-check below them is skipped: it would use
the student's own earlier code. Environment
variables GPTCOURSE_GRADER_SEED and GPTCOURSE_GRADER_DEVICE fix the seed and device (the
agreement test between the two graders sets them), GPTCOURSE_GRADER_TIMEOUT the time limit.
"""
import contextlib
import os
import secrets
import signal
import sys
import threading
import traceback
from types import SimpleNamespace

from gptcourse.checking.memory import allocation_failed, kernel_cap_mb
from gptcourse.checking.probes import ProbeContext, observe
from gptcourse.checking.selfcheck import defer_to_hidden_tests
from gptcourse.checking.tasks import carried_tasks, get_task
from gptcourse.checking.worker_host.where import code_files, where_stopped
from grader.grading.engine import Expectations, Settings, devices_for
from grader.paths import TIMEOUT_ENV_VAR
from grader.reference import reference_object
from grader.grading.verdict import verdict

_SEED = int(os.environ.get("GPTCOURSE_GRADER_SEED", secrets.randbelow(2**31)))


def run_hidden_tests(task_id, namespace):
    task = get_task(task_id)
    missing = [name for name in task.names if name not in namespace]
    if missing:
        raise AssertionError(f"Task {task_id}: your notebook does not define {', '.join(missing)}")
    objects = {name: namespace[name] for name in task.names}
    devices = devices_for(os.environ.get("GPTCOURSE_GRADER_DEVICE", "auto"))
    try:
        cases, expected = Expectations(_SEED, devices).for_task(task_id)
        outcome = _run_cases(task_id, objects, cases, namespace)
    except (MemoryError, RuntimeError) as exc:
        # The student's code filled the kernel (say, a list its cell keeps) and the hidden tests'
        # own work could not allocate: the memory verdict, as for their code's own failure.
        if not allocation_failed(exc):
            raise
        cases, expected, outcome = [], [], {"killed": "memory", "limit": kernel_cap_mb()}
    # The kernel's memory cap (gptcourse/checking/kernel_memory.py) is the course grader's
    # --memory-mb: the memory verdict names it as that grader does.
    judged = verdict(task_id, cases, expected, outcome, SimpleNamespace(memory_mb=kernel_cap_mb()))
    if judged.status != "passed":
        raise AssertionError(failure_text(task_id, judged))
    defer_to_hidden_tests(task_id)
    print(f"Task {task_id}: hidden tests passed.")


def _run_cases(task_id, objects, cases, namespace):
    """The outcome of the task's cases, as a worker reports it: the observations, or a timeout."""
    # The course grader's time limit per task: a function that never returns fails the same way
    # under both graders (grader/nbgrading/execute.py sets it from its task_timeout).
    limit = float(os.environ.get(TIMEOUT_ENV_VAR) or Settings.timeout)
    try:
        with _time_limit(limit, code_files(objects.values())) as where:
            with _reference_bound(namespace, carried_tasks(task_id)) as earlier:
                observations = observe(objects, cases, ProbeContext(earlier=earlier))
        return {"result": {"observations": observations}}
    except _OutOfTime:
        return {"killed": "timeout", "limit": limit, **where}


def failure_text(task_id, judged):
    """What a failed check cell says: the task, its status and the verdict's message."""
    return f"Task {task_id} ({judged.status}): {judged.message}"


# ------------------------------------------------------------------------------------------
# The time limit in the kernel
# ------------------------------------------------------------------------------------------

class _OutOfTime(BaseException):
    """Raised in the student's code when the time is up (not an Exception: an `except
    Exception` in their code must not swallow it; a bare `except:` can, and is stopped again
    every second)."""


@contextlib.contextmanager
def _time_limit(seconds, code_files):
    """Raise _OutOfTime inside the block after `seconds`; the dict it yields then says where the
    code was ({"line": n, "step": ...}, see gptcourse/checking/worker_host/where.py). Only in the main thread
    of a process that has SIGALRM (a kernel's cells run there); elsewhere there is no limit and
    nbgrader's own cell timeout stops the cell."""
    where = {}
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        yield where
        return

    def stop(signum, frame):
        where.clear()
        where.update(where_stopped(frame, code_files))
        raise _OutOfTime()

    previous = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, seconds, 1.0)
    try:
        yield where
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def interrupted_line():
    """The line of its own cell that the last interrupted cell was on (None when unknown): read
    from the traceback IPython kept (sys.last_traceback) by grader/nbgrading/execute.py after it
    interrupted a task cell that ran past its time."""
    if getattr(sys, "last_type", None) is not KeyboardInterrupt:
        return None
    frames = traceback.extract_tb(sys.last_traceback)
    cells = [f.filename for f in frames if f.name == "<module>" and "site-packages" not in f.filename]
    if not cells:
        return None
    return [f.lineno for f in frames if f.filename == cells[0]][-1]


class _reference_bound:
    """Temporarily replace the earlier tasks' graded names in the notebook by the reference's."""

    def __init__(self, namespace, tasks):
        self.namespace = namespace
        self.names = {name: reference_object(t.id, name) for t in tasks for name in t.carried_names}
        self.saved = {}

    def __enter__(self):
        for name, obj in self.names.items():
            self.saved[name] = self.namespace.get(name, _MISSING)
            self.namespace[name] = obj
        return dict(self.names)

    def __exit__(self, *exc):
        for name, obj in self.saved.items():
            if obj is _MISSING:
                self.namespace.pop(name, None)
            else:
                self.namespace[name] = obj


_MISSING = object()
