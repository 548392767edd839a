"""The self-check that runs in the check cell under every task: `check("2.5", CausalAttention)`.

It runs the task's probes on the student's code with the fixed inputs stored in the course's
fixtures, and compares with the reference outputs stored next to them (numbers only: the
reference code is not part of the course). Fast, offline, and the same on CPU and GPU.
"""
import functools
import os

import torch

from . import records
from .judge import judge
from .probes import run_probe
from .tasks import get_task

FIXTURE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")


class SelfCheckFailed(AssertionError):
    """Raised by check(): the message says what is wrong and, where it can, why."""


# Tasks whose hidden tests already passed in this kernel (nbgrader autograde runs them first
# in the check cell). The self-check would use the student's own earlier code, so it could
# fail where the grade, which uses the reference for earlier tasks, is full marks.
_GRADED_BY_HIDDEN_TESTS = set()


def defer_to_hidden_tests(task_id):
    _GRADED_BY_HIDDEN_TESTS.add(get_task(task_id).id)


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


def check(task_id, obj):
    """Check your implementation of a task; raises SelfCheckFailed with an explanation."""
    task = get_task(task_id)
    name = " / ".join(task.names)
    if obj is None or not callable(obj):
        raise SelfCheckFailed(f"Task {task.id}: expected the function or class {name}, got {obj!r}")
    if task.id in _GRADED_BY_HIDDEN_TESTS:
        print(f"Task {task.id}: graded by the hidden tests above; self-check skipped.")
        return
    entries = load_fixtures(task.chapter)[task.id]
    runs = 0
    for device in _devices():
        for entry in entries:
            case = records.Case.from_data(entry["case"]).on(device)
            got = run_probe(obj, case)
            variants = [(v["message"], v["observations"]) for v in entry["variants"]]
            problem = judge(task.id, case, got, entry["expected"], variants)
            if problem:
                raise SelfCheckFailed(
                    f"Task {task.id} ({name}) failed on {case.label} [{device}]:\n{problem}"
                ) from None
            runs += 1
    print(f"✔ Task {task.id} ({name}): all {runs} self-check cases passed. "
          f"The hidden tests try more shapes and settings.")
