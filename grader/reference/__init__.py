"""The hidden reference package: every graded name of the course, correct.

The chapter modules (chNN_*.py) are generated from the masters' solution cells by
`make release` (grader/authoring/build.py); do not edit them by hand. tests/notebooks/test_generated.py fails
when they drift from the masters.
"""
import importlib

from gptcourse.checking.tasks import carried_tasks, get_task


def chapter_module(chapter):
    """'02_attention' -> the module grader.reference.ch02_attention."""
    return importlib.import_module(f"grader.reference.ch{chapter}")


def reference_object(task_id, name=None):
    """The reference function or class of a task (its first graded name by default)."""
    task = get_task(task_id)
    return getattr(chapter_module(task.chapter), name or task.names[0])


def reference_objects(task_id):
    """{graded name: reference object} for every graded name of the task."""
    return {name: reference_object(task_id, name) for name in get_task(task_id).names}


def reference_earlier(task_id):
    """{name: reference object} of the earlier tasks a task carries (see carried_tasks): their
    graded names and the helpers their cells define for later tasks."""
    return {name: reference_object(task.id, name) for task in carried_tasks(task_id) for name in task.carried_names}
