"""The course's contract, the part no code knows: what the checks hold each task to, and what
they leave to the student. This module holds what every chapter shares: the two types and the
rules for every task; each chapter's own part lives in its public chapter module.

For every task of the course table (gptcourse/checking/course.py) one `Contract`, in the task's
TaskSpec (`contract=`, in `gptcourse/checking/chapters/chNN_name.py`): `pinned`, the behaviour
its cases check (a student may rely on these being checked, and on nothing else being graded),
and `free`, what every reasonable choice passes. Both are written from what the chapter modules
really check (the public one it sits in, and `grader/chapters/chNN_name.py`); when a check
changes, its contract changes with it, in the same module. A chapter module may also hold
`REFERENCE_VALUES`: numbers of the book's runs that a test of the chapter asserts, each with the
test that does.

Everything else about a task is derived, never written there: its level, title and graded
names (the course table), its signatures and points (the master), where its pieces live (the
file conventions). `grader/authoring/contract.py` puts the two together: `python -m grader where <task>`
prints one task's section of docs/contract.md, which the build writes.
"""
from dataclasses import dataclass


@dataclass(frozen=True)
class Contract:
    pinned: tuple  # what the cases check, one short sentence each
    free: tuple = ()  # what they leave open: every choice named here passes


@dataclass(frozen=True)
class ReferenceValue:
    fact: str  # a number of the book's runs, in words
    test: str  # the test that asserts it: "tests/chapters/test_chNN.py::test_name"


# Rules that hold for every task: the page states them once, above the chapters.
COMMON_RULES = (
    "Numbers are compared with the reference's within a small tolerance (`tolerances` in "
    "gptcourse/checking/judge.py; a little more on a GPU); token ids, texts, counts and shapes exactly.",
    "A module is built with the case's arguments and then gets the case's weights copied in, parameter "
    "by parameter, by name: the names and shapes of its parameters are pinned, a parameter the task "
    "does not list fails, and how the parameters are initialised is free unless a task says otherwise.",
    "Cases come in float32 and float64, with batches of one and of several, and, for models, fewer "
    "tokens than the context length. A module's gradients (of its input and of every parameter) are "
    "checked with its output; a function's where its entry says so.",
    "Inputs must be left as they were given: a tensor, list, dict or DataFrame changed by the call fails.",
    "Modules and the functions that handle tensors run each case a second time on PyTorch's "
    "`meta` device, and on CUDA when the grader has a GPU: a tensor made inside the code on the CPU "
    "(a mask, positions, a batch never moved to `device`) fails on a machine without a GPU too.",
    "Random outputs are judged so that the order in which random numbers are drawn does not matter: "
    "every pattern of dropout that the right place for dropout can give is accepted, and samplers "
    "are judged by the distribution of many draws.",
    "A task is graded with the reference versions of the earlier tasks it builds on, so a mistake "
    "in an earlier task costs its points once.",
    "What a function prints, the names of helper functions and attributes the task does not list, "
    "and the style of the code are never graded.",
)


def small_number(value):
    """A small number as prose writes it, for a contract written from a constant: 2e-3 and 1e-6,
    not Python's 0.002 and 1e-06."""
    mantissa, exponent = f"{value:e}".split("e")
    return f"{float(mantissa):g}e{int(exponent)}"


def public_module_path(chapter):
    """Where a chapter's public module lives in the repository."""
    return f"course/gptcourse/checking/chapters/ch{chapter}.py"
