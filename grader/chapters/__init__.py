"""The grader's chapter modules: each chapter's cases (public and hidden) and known mistakes.

A module `chNN_name.py` here, the grader's chapter module (found by name from
gptcourse.checking.course), ends with SPECS: {task id: GraderSpec(...)}, everything the grader
knows about each task in one place (see GraderSpec). None of it ships with the course; what
students get of it is the observations of the reference (with the extras) and of the known
mistakes on the public cases: the self-check's fixtures. `grader_spec(task_id)` finds a task's GraderSpec; the functions
below answer from it, so nothing in this package outside the chapter modules knows a task.
"""
import importlib
from dataclasses import dataclass
from typing import Callable, Optional

from gptcourse.checking.tasks import get_task
from grader.chapters.casekit import hidden_rng, public_rng


@dataclass(frozen=True)
class GraderSpec:
    """What the grader knows about one task (its public counterpart is gptcourse's TaskSpec).

    public:     rng -> [Case]: fixed cases, drawn from `casekit.public_rng(task id)`; their
                reference outputs ship with the course as the self-check's fixtures;
    hidden:     rng -> [Case]: the cases the grader adds, drawn from the run's seed
                (`casekit.hidden_rng(task id, seed)`);
    mistakes:   () -> [(message, object)]: the known mistakes, most specific first;
                when a student's observations equal one's, the feedback names the mistake
                (the message completes "... wrong — it looks like ..."); the object replaces
                the task's first graded name, or a dict replaces several. Only observations
                the judge compares are matched: a random output that its kind judges itself
                (a sampler's counts) never is, so its known mistakes go into `extras`;
    extras:     case -> dict (optional): what the judge needs besides the reference's
                observations (internals/...: the alternatives a contract leaves open, a sampler's
                probabilities and its known wrong distributions, internals/mistakes, the
                outputs every pattern of dropout can give);
    for_device: (case, device) -> Case (optional): the case as it runs on a GPU, when it must
                differ from the CPU's (random numbers such as dropout masks differ between
                devices); its expected numbers are then the reference's on this changed case.
    """
    public: Callable
    hidden: Callable
    mistakes: Callable
    extras: Optional[Callable] = None
    for_device: Optional[Callable] = None


def chapter_module(chapter):
    """'02_attention' -> grader.chapters.ch02_attention."""
    return importlib.import_module(f"grader.chapters.ch{chapter}")


def grader_spec(task_id):
    """The GraderSpec of a task, from its chapter module's SPECS."""
    task = get_task(task_id)
    return chapter_module(task.chapter).SPECS[task.id]


def public_cases(task_id):
    return grader_spec(task_id).public(public_rng(get_task(task_id).id))


def hidden_cases(task_id, seed):
    """The public cases and the seeded hidden ones: the self-check never rejects what the
    grader accepts, since the grader tries the self-check's cases too."""
    task_id = get_task(task_id).id
    return public_cases(task_id) + grader_spec(task_id).hidden(hidden_rng(task_id, seed))


def mistakes(task_id):
    return grader_spec(task_id).mistakes()


def expectation_extras(case):
    extras = grader_spec(case.task).extras
    return extras(case) if extras else {}


def case_for_device(case, device):
    """The case run on `device` (see GraderSpec); the CPU's is always the case itself."""
    adapt = grader_spec(case.task).for_device
    return adapt(case, device) if adapt and device != "cpu" else case.on(device)
