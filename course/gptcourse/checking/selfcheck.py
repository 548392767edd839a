"""The self-check that runs in the check cell under every task: `check(task_id, your_code)`.

It runs the task's probes on the student's code with the fixed inputs stored in the course's
fixtures, and compares with the reference outputs stored next to them (numbers only: the
reference code is not part of the course). Fast, offline, and the same on CPU and GPU.
"""
import functools
import inspect
import os

import torch

from ..messages import SHOWN_WIDTH, say, wrap_at_words
from . import records
from .judge import judge, laid_out
from .memory import allocation_failed, kernel_cap_mb, memory_exhausted, memory_message, requested_bytes
from .probes import META, ProbeContext, device_pass_supported, run_probe
from .tasks import carried_tasks, get_task

FIXTURE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")


class SelfCheckFailed(AssertionError):
    """Raised by check(): the message says what is wrong and, where it can, why."""

    def _render_traceback_(self):
        """What IPython shows for this error: the message only, wrapped at word boundaries.

        The frames of check() and the probes would only hide the message; the line of the
        student's code that failed, if any, is part of the message already. Only what is shown
        is wrapped: str(error) stays as raised (the notebook file keeps it as the error's value,
        and a carry-over cell prints it in its one-line verdict).
        """
        return [wrap_at_words(f"{type(self).__name__}: {self}")]


# Tasks whose hidden tests already passed in this kernel (nbgrader autograde runs them first
# in the check cell). The self-check would use the student's own earlier code, so it could
# fail where the grade, which uses the reference for earlier tasks, is full marks.
_GRADED_BY_HIDDEN_TESTS = set()


def defer_to_hidden_tests(task_id):
    _GRADED_BY_HIDDEN_TESTS.add(get_task(task_id).id)


# Whether each task's latest check in this kernel passed (True) or failed (False), carry-over
# cells' checks included: a demo cell that builds on a task whose check failed says so in one
# line before it runs the code as it is (gptcourse.notebook).
_LATEST_OUTCOME = {}


def failed_checks():
    """The ids of the tasks whose latest check in this kernel failed."""
    return {task_id for task_id, passed in _LATEST_OUTCOME.items() if not passed}


@functools.lru_cache(maxsize=None)
def load_fixtures(chapter):
    path = os.path.join(FIXTURE_DIR, f"{chapter}.json")
    with open(path, encoding="utf-8") as f:
        return records.loads(f.read())


def _devices():
    """Always the CPU; also the GPU when there is one, since code must work on both."""
    devices = ["cpu"]
    if torch.cuda.is_available():
        devices.append("cuda")
    return devices


def check(task_id, *objects, earlier=None):
    """Check your implementation of a task; raises SelfCheckFailed with an explanation.

    objects: the task's graded names in the task's order (most tasks have one).
    earlier: the earlier graded names the task uses ({name: object}); by default they are
    taken from the notebook that calls check().
    """
    task = get_task(task_id)
    if earlier is None:
        earlier = _earlier_from(inspect.currentframe().f_back.f_globals, task.id)
    try:
        _check(task, objects, earlier)
    except SelfCheckFailed as failure:
        _LATEST_OUTCOME[task.id] = False
        raise SelfCheckFailed(_through_failed_tasks(task, objects, earlier) + str(failure)) from None
    except BaseException:  # an interruption, or an error of the check itself
        _LATEST_OUTCOME[task.id] = False
        raise
    _LATEST_OUTCOME[task.id] = True


def _through_failed_tasks(task, objects, earlier):
    """A line said first when the student's code calls earlier tasks' code whose own checks failed
    in this kernel: the failure may come from them (a generate calling a wrong softmax)."""
    called = _names_called(objects)
    failed = [t for t in carried_tasks(task.id) if _LATEST_OUTCOME.get(t.id) is False
              and any(name in earlier and name in called for name in t.carried_names)]
    if not failed:
        return ""
    names = ", ".join(name for t in failed for name in t.carried_names if name in earlier and name in called)
    which = f"Task {failed[0].id}" if len(failed) == 1 else "Tasks " + ", ".join(t.id for t in failed)
    return (f"Task {task.id}'s code calls your {names} ({which}), whose check failed above: fix that first, "
            f"what follows may come from it.\n")


def _names_called(objects):
    """The global names the code of `objects` refers to (functions, a class's methods, and the
    functions nested in them)."""
    pending = []
    for obj in objects:
        members = list(vars(obj).values()) if isinstance(obj, type) else [obj]
        pending += [getattr(getattr(m, "__func__", m), "__code__", None) for m in members]
    names = set()
    while pending:
        code = pending.pop()
        if code is None:
            continue
        names.update(code.co_names)
        pending += [c for c in code.co_consts if hasattr(c, "co_code")]
    return names


def _check(task, objects, earlier):
    name = " / ".join(task.names)
    if len(objects) != len(task.names) or any(obj is None or not callable(obj) for obj in objects):
        shown = ", ".join(repr(obj) for obj in objects) or "nothing"
        raise SelfCheckFailed(f"Task {task.id}: expected the function or class {name}, got {shown}")
    if task.id in _GRADED_BY_HIDDEN_TESTS:
        say(f"Task {task.id}: graded by the hidden tests above; self-check skipped.")
        return
    names = dict(zip(task.names, objects))
    context = ProbeContext(earlier=earlier)
    entries = load_fixtures(task.chapter)[task.id]
    runs = 0
    try:
        for device in _devices():
            for entry in entries:
                case = records.Case.from_data(entry["case"]).on(device)
                mistakes = [(m["message"], m["observations"]) for m in entry["mistakes"]]
                runs += _check_case(task, name, names, case, entry["expected"], mistakes, context)
                if device == "cpu" and device_pass_supported(case):
                    # Once more on the meta device: catches tensors created on the CPU in forward.
                    runs += _check_case(task, name, names, case.on(META), {}, [], context)
    except KeyboardInterrupt as stop:
        # The stop button, or nbgrader's Validate stopping a cell that ran past its time limit:
        # say where the student's code was, rather than the probes' traceback.
        raise SelfCheckFailed(_interrupted_message(task, name, stop, objects)) from None
    except (MemoryError, RuntimeError) as exc:
        # Out of memory outside the student's call (the check's own tensors, once their code
        # has filled the kernel): the course's message rather than the probes' traceback.
        if not allocation_failed(exc):
            raise
        raise SelfCheckFailed(f"Task {task.id} ({name}): {memory_message(kernel_cap_mb(), {})[0]}") from None
    say(_passed_message(task, name, runs))


def _passed_message(task, name, runs):
    """'✔ Task <id> (<names>): all <n> self-check cases passed.' and a line about the hidden tests; the
    count on a line of its own when the task's names make the first line too long to show."""
    passed = f"all {runs} self-check cases passed." if runs > 1 else "its self-check case passed."
    first = f"✔ Task {task.id} ({name}): {passed}"
    if len(first) > SHOWN_WIDTH:
        first = f"✔ Task {task.id} ({name}):\n{passed}"
    return f"{first}\nThe hidden tests try more shapes and settings."


def _check_case(task, name, names, case, expected, mistakes, context):
    got = run_probe(names, case, context)
    if "error" in got and memory_exhausted(got["error"]):
        # The course grader's words for it (under nbgrader the kernel has the grader's memory cap,
        # gptcourse/checking/kernel_memory.py), not the MemoryError's own.
        problem, _ = memory_message(kernel_cap_mb(), got["error"], requested_bytes(got["error"]))
    else:
        problem = judge(task.id, case, got, expected, mistakes)
    if problem:
        raise SelfCheckFailed(laid_out(f"Task {task.id} ({name}) failed", problem, case.label, case.device)) from None
    return 1


def _interrupted_message(task, name, stop, objects):
    """'Task N (...): the self-check was interrupted at line 5 of your solution cell, while ...'."""
    from .worker_host.where import code_files, where_stopped

    innermost = stop.__traceback__
    while innermost.tb_next is not None:
        innermost = innermost.tb_next
    where = where_stopped(innermost.tb_frame, code_files(objects))
    at = f" at line {where['line']} of your solution cell" if "line" in where else ""
    if "step" in where:
        at += f"{',' if at else ''} while {where['step']}"
    return f"Task {task.id} ({name}): the self-check was interrupted{at}: an infinite loop, or far too much work?"


def _earlier_from(namespace, task_id):
    """The earlier graded names a task uses, as the calling notebook defines them."""
    wanted = [n for t in carried_tasks(task_id) for n in t.carried_names]
    return {n: namespace[n] for n in wanted if n in namespace}
