"""The hidden side of each chapter: its cases and its known mistakes.

A module `chNN_name.py` here (found by name from gptcourse.course) defines:

- public_cases(task_id) -> [Case]: fixed cases whose reference outputs ship with the course
  as the self-check's fixtures;
- hidden_cases(task_id, seed) -> [Case]: the cases the grader adds, drawn from the run's seed;
- variants(task_id) -> [(message, object)]: known wrong implementations, most specific first;
  when a student's observations equal one's, the feedback names the mistake;
- expectation_extras(case) -> dict: what the judge needs besides the reference's
  observations (e.g. internals/... for judging random outputs); {} when nothing;
- case_for_device(case, device) -> Case (optional): the case as it runs on a GPU, when it
  must differ from the CPU's (random numbers such as dropout masks differ between devices);
  its expected numbers are then the reference's on this changed case, on the CPU.

The functions below find the right module for a task; nothing in this package outside the
chapter modules knows a task.
"""
import importlib

from gptcourse.tasks import get_task


def chapter_module(chapter):
    """'02_attention' -> grader.chapters.ch02_attention."""
    return importlib.import_module(f"grader.chapters.ch{chapter}")


def _module_of(task_id):
    return chapter_module(get_task(task_id).chapter)


def public_cases(task_id):
    return _module_of(task_id).public_cases(get_task(task_id).id)


def hidden_cases(task_id, seed):
    """The public cases and the seeded hidden ones: the self-check never rejects what the
    grader accepts, since the grader tries the self-check's cases too."""
    task_id = get_task(task_id).id
    return public_cases(task_id) + _module_of(task_id).hidden_cases(task_id, seed)


def variants(task_id):
    return _module_of(task_id).variants(get_task(task_id).id)


def expectation_extras(case):
    extras = getattr(_module_of(case.task), "expectation_extras", None)
    return extras(case) if extras else {}


def case_for_device(case, device):
    """The case run on `device` (see the module docstring); the CPU's is always the case itself."""
    adapt = getattr(_module_of(case.task), "case_for_device", None)
    return adapt(case, device) if adapt and device != "cpu" else case.on(device)
