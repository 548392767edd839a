"""One public module per chapter: how its tasks are probed and explained.

A chapter module `chNN_name.py` (found by name from gptcourse.checking.course, which holds the
chapter's task rows) defines:

- CHAPTER: its name in gptcourse.checking.course.COURSE;
- KEY_NAMES: observation key -> how feedback names it ("Attention weights");
- ERROR_HINTS: [(regular expression on "Type: message", hint, task ids or None for all)],
  tried before the generic hints of gptcourse.checking.judge;
- GRADING_DATA: the data sets grading the chapter reads (the grader's preflight fetches them first);
- REFERENCE_VALUES (optional): the book's numbers a test of the chapter asserts
  (gptcourse.checking.contract.ReferenceValue);
- SPECS, last in the module: {task id: TaskSpec(contract=Contract(pinned=..., free=...),
  probes={case kind: a kind from gptcourse.checking.kinds}, hints=(fn(key, got, expected, case) ->
  hint or "", ...))}: everything public about each task in one place. `task_spec(task_id)` finds
  a task's.

Modules shared by several chapters hold what those chapters have in common: attention.py
(the attention chapters' probes and hints) and toys.py (the small models the probes run,
which the hidden cases build too). A chapter module imports from these, never from another
chapter's module.
Nothing here is secret: the cases and known mistakes live in the grader's chapter modules
(grader/chapters/).
"""
from dataclasses import dataclass
from typing import Callable, Mapping, Optional, Tuple

from gptcourse.checking.contract import Contract, public_module_path


@dataclass(frozen=True)
class TaskSpec:
    """What the public side knows about one task.

    probes: {case kind: kind}: how each kind of case exercises the student's code (the hidden
            module's cases name their kind: "forward", "dropout", "raises", ...);
    hints:  property hints, tried in order when an observation is wrong and no known mistake
            matches: fn(key, got, expected, case) -> a sentence that explains it, or "";
    contract: what the task's cases pin down and what they leave free, in words
              (gptcourse.checking.contract): every task of the course has one; docs/contract.md
              and `python -m grader where` show it.
    """
    probes: Mapping[str, object]
    hints: Tuple[Callable, ...] = ()
    contract: Optional[Contract] = None


def task_spec(task_id):
    """The TaskSpec of a task, from its chapter module's SPECS."""
    from gptcourse.checking.tasks import chapter_module, get_task

    task = get_task(task_id)
    return chapter_module(task.chapter).SPECS[task.id]


def contract_of(task_id):
    """The task's Contract, from its TaskSpec; a KeyError that says where to add one when it has none."""
    from gptcourse.checking.tasks import get_task

    contract = task_spec(task_id).contract
    if contract is None:
        raise KeyError(f"task {task_id} has no contract: add contract=Contract(...) to its TaskSpec in "
                       f"{public_module_path(get_task(task_id).chapter)}")
    return contract


def reference_values(chapter):
    """The chapter's reference values: REFERENCE_VALUES of its public module, none when it has none."""
    from gptcourse.checking.tasks import chapter_module

    return getattr(chapter_module(chapter), "REFERENCE_VALUES", ())
