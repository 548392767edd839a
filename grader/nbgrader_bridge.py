"""The hidden tests as nbgrader runs them: inside the check cell, in the student's kernel.

    ### BEGIN HIDDEN TESTS
    from grader.nbgrader_bridge import run_hidden_tests
    run_hidden_tests("2.5", globals())
    ### END HIDDEN TESTS
    check("2.5", CausalAttention)

The hidden tests come first. It runs the same cases, probes and verdict as the course grader, with the earlier tasks'
graded names bound to the reference while the task is tested (so one mistake costs points
once), and raises AssertionError with the feedback when the task fails. When they pass, the
public self-check below them is skipped: it would use the student's own earlier code. Environment
variables GPTCOURSE_GRADER_SEED and GPTCOURSE_GRADER_DEVICE fix the seed and device (the
agreement test between the two graders sets them).
"""
import os
import secrets

from gptcourse.checking.probes import ProbeContext, observe
from gptcourse.checking.selfcheck import defer_to_hidden_tests
from gptcourse.checking.tasks import carried_tasks, get_task
from grader.engine import Expectations, devices_for
from grader.reference import reference_object
from grader.verdict import verdict

_SEED = int(os.environ.get("GPTCOURSE_GRADER_SEED", secrets.randbelow(2**31)))


def run_hidden_tests(task_id, namespace):
    task = get_task(task_id)
    missing = [name for name in task.names if name not in namespace]
    if missing:
        raise AssertionError(f"Task {task_id}: your notebook does not define {', '.join(missing)}")
    objects = {name: namespace[name] for name in task.names}
    devices = devices_for(os.environ.get("GPTCOURSE_GRADER_DEVICE", "auto"))
    cases, expected = Expectations(_SEED, devices).for_task(task_id)
    with _reference_bound(namespace, carried_tasks(task_id)) as earlier:
        observations = observe(objects, cases, ProbeContext(earlier=earlier))
    judged = verdict(task_id, cases, expected, {"result": {"observations": observations}})
    if judged.status != "passed":
        raise AssertionError(f"Task {task_id} ({judged.status}): {judged.message}")
    defer_to_hidden_tests(task_id)
    print(f"Task {task_id}: hidden tests passed.")


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
